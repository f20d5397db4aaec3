//! Releases: the estimate of every batch not yet released, with its certified guarantee, its
//! predicted error, and the task's privacy budget across releases.
//!
//! Guarantee of one release. Each user is in exactly one batch, and a batch of n_b reports is
//! the shuffled output of n_b users running the task's randomizer (n_b / t or n_b / m users
//! for a multi-message task, [`crate::multi`]), certified (eps_b, delta_b) by the core's
//! accountant or the IKOS bound ([`crate::task::certify_batch`]). The release is a function
//! of the batches' multisets, which are independent given the users' data, so by parallel
//! composition (McSherry, "Privacy Integrated Queries", SIGMOD 2009, Theorem 4) it is
//! (max_b eps_b, delta)-DP.
//!
//! Budget across releases: basic composition (Dwork and Roth 2014, Theorem 3.16): releases
//! (eps_i, delta_i) compose to (sum eps_i, sum delta_i), summed here rounding each addition up,
//! so the spent budget is never understated. A release whose guarantee would take either sum
//! past the task's budget is refused and nothing is released.

use crate::aggregate::State;
use crate::problem::Rejection;
use crate::store::StoredBatch;
use crate::task::{certify_batch, predicted_mse, Certified, TaskConfig};
use serde::{Deserialize, Serialize};

/// A computed release, before the budget check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Release {
    /// Release number (set when recorded).
    pub release_id: i64,
    /// The task.
    pub task_id: String,
    /// Reports in the estimate.
    pub reports: u64,
    /// Batches in the estimate.
    pub batches: u64,
    /// Smallest batch (the guarantee's worst case).
    pub smallest_batch: u64,
    /// The protocol's estimate.
    pub estimate: serde_json::Value,
    /// The certified guarantee of this release.
    pub guarantee: Certified,
    /// Predicted worst-case MSE at `reports`, on the protocol's scale.
    pub predicted_mse: f64,
    /// Square root of `predicted_mse`.
    pub predicted_rmse: f64,
    /// The budget after this release.
    pub budget: Budget,
}

/// A task's privacy budget.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Epsilon spent (basic composition, rounded up).
    pub spent_eps: f64,
    /// Delta spent.
    pub spent_delta: f64,
    /// Total epsilon.
    pub total_eps: f64,
    /// Total delta.
    pub total_delta: f64,
}

/// a + b rounded up: the floating-point sum, moved up one ulp only when it fell below the
/// exact sum (the rounding error is computed exactly by TwoSum; Knuth, TAOCP vol. 2,
/// Section 4.2.2, Theorem B).
pub fn add_up(a: f64, b: f64) -> f64 {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    if err > 0.0 {
        s.next_up()
    } else {
        s
    }
}

/// (sum eps, sum delta) over `spent`, each addition rounded up (basic composition).
pub fn composed(spent: &[(f64, f64)]) -> (f64, f64) {
    spent.iter().fold((0.0, 0.0), |(e, d), &(ei, di)| {
        (add_up(e, ei), add_up(d, di))
    })
}

/// The budget left check: `Ok` with the budget after a release of (eps, delta), or
/// `BudgetExhausted`.
pub fn charge(
    config: &TaskConfig,
    spent: &[(f64, f64)],
    eps: f64,
    delta: f64,
) -> Result<Budget, Rejection> {
    let r = &config.request;
    charge_within(r.budget_eps, r.budget_delta, spent, eps, delta)
}

/// The budget left check against a total of (`total_eps`, `total_delta`), shared by the
/// analyzer's releases ([`charge`]) and the relay's: `Ok` with the budget after a release of
/// (eps, delta) on top of `spent`, or `BudgetExhausted`.
pub fn charge_within(
    total_eps: f64,
    total_delta: f64,
    spent: &[(f64, f64)],
    eps: f64,
    delta: f64,
) -> Result<Budget, Rejection> {
    let (se, sd) = composed(spent);
    let (ne, nd) = composed(&[(se, sd), (eps, delta)]);
    if ne > total_eps || nd > total_delta {
        return Err(Rejection::BudgetExhausted(format!(
            "this release would spend (eps {eps}, delta {delta}) on top of (eps {se}, delta {sd}) \
             already spent, past the task's budget (eps {total_eps}, delta {total_delta}); nothing \
             was released"
        )));
    }
    Ok(Budget {
        spent_eps: ne,
        spent_delta: nd,
        total_eps,
        total_delta,
    })
}

/// The release of `batches` (CPU-bound: the accountant runs once per distinct batch size).
/// The budget is filled in by [`charge`] when it is recorded.
pub fn compute(config: &TaskConfig, batches: &[StoredBatch]) -> Result<Release, Rejection> {
    if batches.is_empty() {
        return Err(Rejection::NothingToRelease(format!(
            "task {} has no unreleased batch (the shuffler forwards a batch once it holds \
             min_batch = {} users, {} reports)",
            config.id,
            config.request.min_batch,
            config.min_batch_reports()
        )));
    }
    let mut state = State::empty(config)?;
    for b in batches {
        state.merge(State::from_json(&b.state)?)?;
    }
    let mut sizes: Vec<u64> = batches.iter().map(|b| b.reports).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut worst: Option<Certified> = None;
    for &n in &sizes {
        let g = certify_batch(config, n)?;
        if worst.as_ref().is_none_or(|w| g.epsilon > w.epsilon) {
            worst = Some(g);
        }
    }
    let guarantee = worst.ok_or_else(|| Rejection::Storage("no batch sizes".into()))?;
    let reports = state.reports();
    let mse = predicted_mse(config, reports.max(2))?;
    Ok(Release {
        release_id: 0,
        task_id: config.id.clone(),
        reports,
        batches: batches.len() as u64,
        smallest_batch: sizes[0],
        estimate: state.estimate(config)?,
        guarantee,
        predicted_mse: mse,
        predicted_rmse: mse.sqrt(),
        budget: Budget {
            spent_eps: 0.0,
            spent_delta: 0.0,
            total_eps: config.request.budget_eps,
            total_delta: config.request.budget_delta,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::absorb_batch;
    use crate::task::{accounted, calibrate_task, Protocol, TaskRequest};
    use crate::wire::TaskId;

    fn config() -> TaskConfig {
        calibrate_task(
            TaskId([5; 16]),
            TaskRequest {
                protocol: Protocol::Histogram { domain: 3 },
                eps: 1.0,
                delta: 1e-6,
                expected_users: 4000,
                min_batch: 1000,
                deadline_unix: 1 << 40,
                budget_eps: 2.5,
                budget_delta: 1e-5,
            },
        )
        .unwrap()
    }

    #[test]
    fn sums_round_up_only_when_inexact() {
        assert_eq!(add_up(0.0, 1.0), 1.0);
        assert_eq!(add_up(1.0, 1.0), 2.0);
        // 0.1 + 0.2 rounds to nearest 0.30000000000000004, above the exact sum: kept.
        assert_eq!(add_up(0.1, 0.2), 0.1 + 0.2);
        // 1 + 2^-60 rounds down to 1: moved up.
        assert_eq!(add_up(1.0, 2f64.powi(-60)), 1.0f64.next_up());
        assert_eq!(composed(&[(1.0, 1e-6)]), (1.0, 1e-6));
    }

    #[test]
    fn budget_allows_two_releases_then_refuses() {
        let c = config();
        let b1 = charge(&c, &[], 1.0, 1e-6).unwrap();
        assert!(b1.spent_eps >= 1.0);
        let b2 = charge(&c, &[(1.0, 1e-6)], 1.0, 1e-6).unwrap();
        assert!(b2.spent_eps >= 2.0 && b2.spent_eps < 2.0 + 1e-12);
        assert!(matches!(
            charge(&c, &[(1.0, 1e-6), (1.0, 1e-6)], 1.0, 1e-6),
            Err(Rejection::BudgetExhausted(_))
        ));
    }

    #[test]
    fn guarantee_is_the_smallest_batch_s() {
        let c = config();
        let batch = |n: usize| {
            let msgs: Vec<Option<u32>> = (0..n).map(|i| Some((i % 3) as u32)).collect();
            let o = absorb_batch(&c, &msgs, &vec![true; n]).unwrap();
            StoredBatch {
                batch_id: vec![n as u8],
                reports: n as u64,
                state: o.state.to_json(),
            }
        };
        let r = compute(&c, &[batch(3000), batch(1000)]).unwrap();
        assert_eq!(r.reports, 4000);
        assert_eq!(r.smallest_batch, 1000);
        let at_min = accounted(&c, 1000).unwrap();
        assert_eq!(r.guarantee.epsilon, at_min.epsilon);
        assert!(r.guarantee.epsilon <= 1.0);
        assert_eq!(r.estimate["reports"], 4000);
        assert!(matches!(
            compute(&c, &[]),
            Err(Rejection::NothingToRelease(_))
        ));
    }
}
