//! A relay run's release on the privacy-budget ledger (docs/service.md, "Budget"): the ledger
//! a task's releases are charged to (its own, or the task it `continues`), what one release
//! costs, the budget left (rounded down), and the settlement of a delivered run: charged once
//! through the analyzer's path ([`crate::store::Store::charge_ledger`]) or refused, and read
//! back after a restart.

use super::api::{self, LedgerJson, ReleaseJson, TaskSpec};
use super::run::{RunHandle, RunState};
use super::{api_out_of_range, release, store, RelayService};
use crate::problem::Rejection;
use crate::wire::hex_encode;

/// The budget a task's releases are charged to: its own (with a protocol), or the one of
/// the task it continues (looked up by `spec_of`).
pub(super) fn ledger_of(
    task: [u8; 16],
    spec: &TaskSpec,
    spec_of: impl Fn(&[u8; 16]) -> Option<TaskSpec>,
) -> Result<Option<Ledger>, Rejection> {
    if spec.protocol.is_none() {
        return Ok(None);
    }
    let (holder, holder_spec) = match &spec.continues {
        None => (task, spec.clone()),
        Some(c) => {
            let id = crate::wire::hex_decode(c)
                .and_then(|b| <[u8; 16]>::try_from(b).ok())
                .ok_or_else(|| {
                    api_out_of_range("continues", "a relay task id (32 hex digits)", c)
                })?;
            let s = spec_of(&id).ok_or_else(|| {
                api_out_of_range("continues", "the id of an existing relay task", c)
            })?;
            (id, s)
        }
    };
    match (holder_spec.budget_eps, holder_spec.budget_delta) {
        (Some(total_eps), Some(total_delta)) => Ok(Some(Ledger {
            task: holder,
            total_eps,
            total_delta,
        })),
        _ => Err(api_out_of_range(
            "continues",
            "the id of a relay task holding a budget",
            hex_encode(&holder),
        )),
    }
}

/// What one release of `plan` is charged: its certified epsilon, and its certified delta
/// plus the probability 2^-sigma that the shuffle is not private (rounded up). Without a
/// certified guarantee, more than any budget.
pub(super) fn charge_of(
    plan: &blanket_protocol::release::HistogramRelease,
    spec: &TaskSpec,
) -> (f64, f64) {
    match &plan.cal.certified {
        Some(g) => (g.epsilon, api::one_release_delta(g.delta, spec.sigma)),
        None => (f64::INFINITY, 1.0),
    }
}

pub(super) fn settled_of(s: store::Settlement) -> Option<Settled> {
    match s {
        store::Settlement::Released(b) => serde_json::from_str(&b).ok().map(Settled::Released),
        store::Settlement::Refused(p) => serde_json::from_str(&p).ok().map(Settled::Refused),
    }
}

/// a - b rounded down (never below 0): the budget left is never overstated.
pub(super) fn sub_down(a: f64, b: f64) -> f64 {
    let nb = -b;
    let s = a + nb;
    let bb = s - a;
    let err = (a - (s - bb)) + (nb - bb);
    let s = if err < 0.0 { s.next_down() } else { s };
    s.max(0.0)
}

/// The budget a run's release is charged to: the ledger of task `task` (the run itself, or
/// the task it continues), with its totals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ledger {
    /// The task holding the budget.
    pub task: [u8; 16],
    /// Total epsilon.
    pub total_eps: f64,
    /// Total delta.
    pub total_delta: f64,
}

/// A run's release as settled on the ledger.
#[derive(Debug, Clone)]
pub(super) enum Settled {
    Released(ReleaseJson),
    Refused(crate::Problem),
}

impl RelayService {
    /// The budget JSON of ledger `l`: spent (composed), total, and left (rounded down).
    pub(super) async fn budget_json(&self, l: Ledger) -> Result<LedgerJson, Rejection> {
        let spent = self.store.ledger_spent(l.task).await?;
        let (spent_eps, spent_delta) = crate::release::composed(&spent);
        Ok(LedgerJson {
            task: hex_encode(&l.task),
            releases: spent.len() as u64,
            spent_eps,
            spent_delta,
            total_eps: l.total_eps,
            total_delta: l.total_delta,
            remaining_eps: sub_down(l.total_eps, spent_eps),
            remaining_delta: sub_down(l.total_delta, spent_delta),
        })
    }

    /// Settles a delivered run's release on its ledger, once: read back if it was settled
    /// (before a restart), else charged (`Store::charge_ledger`, the analyzer's path) or
    /// refused (`budget-exhausted`, recorded). A storage error leaves it unsettled, retried
    /// by the next status request.
    pub(super) async fn settle(&self, h: &RunHandle, st: &mut RunState) {
        if st.settled.is_some() {
            return;
        }
        let (Some(plan), Some(ledger), Some(Ok(out))) = (&h.plan, h.ledger, &st.result) else {
            return;
        };
        match self.store.relay_settlement(h.task).await {
            Ok(Some(s)) => {
                st.settled = settled_of(s);
                return;
            }
            Ok(None) => {}
            Err(_) => return,
        }
        let rel = release::release_json(plan, &h.spec, &h.params, out);
        let (eps, delta) = charge_of(plan, &h.spec);
        let mut done = None;
        let r = self
            .store
            .charge_ledger(
                ledger.task,
                crate::store::Spender::RelayRun(h.task),
                rel.reports,
                eps,
                delta,
                crate::http::now_unix(),
                |spent, rid| {
                    let mut r = rel.clone();
                    r.release_id = Some(rid);
                    r.budget = Some(crate::release::charge_within(
                        ledger.total_eps,
                        ledger.total_delta,
                        spent,
                        eps,
                        delta,
                    )?);
                    let body =
                        serde_json::to_string(&r).map_err(|e| Rejection::Storage(e.to_string()))?;
                    done = Some(r);
                    Ok(body)
                },
            )
            .await;
        match r {
            Ok(_) => st.settled = done.map(Settled::Released),
            Err(e @ Rejection::BudgetExhausted(_)) => {
                let p = e.problem();
                let Ok(json) = serde_json::to_string(&p) else {
                    return;
                };
                if self
                    .store
                    .refuse_relay_release(h.task, ledger.task, &json)
                    .await
                    .is_ok()
                {
                    // Another settlement may have won the race: read back what is stored.
                    if let Ok(Some(s)) = self.store.relay_settlement(h.task).await {
                        st.settled = settled_of(s);
                    }
                }
            }
            Err(Rejection::Duplicate(_)) => {
                if let Ok(Some(s)) = self.store.relay_settlement(h.task).await {
                    st.settled = settled_of(s);
                }
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sub_down;

    #[test]
    fn budget_left_rounds_down() {
        assert_eq!(sub_down(3.0, 1.0), 2.0);
        assert_eq!(sub_down(1.0, 2.0), 0.0);
        // 1 - 2^-60 rounds to 1 in f64: moved down.
        assert_eq!(sub_down(1.0, 2f64.powi(-60)), 1.0f64.next_down());
        // 0.3 - 0.1 = 0.19999999999999998 (below the exact 0.2 of these doubles? kept only if
        // not above the exact difference).
        let r = sub_down(0.3, 0.1);
        assert!(r <= 0.3 - 0.1 && r >= (0.3f64 - 0.1).next_down());
    }
}
