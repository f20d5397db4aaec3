//! Generic calibration: from a target (eps, delta) and n, find the protocol parameters that
//! minimize the predicted error subject to a *certified* guarantee.
//!
//! A protocol describes itself through [`Calibratable`]: its discrete choices (such as the
//! precision k), the privacy requirement each choice puts on one shuffled GRR instance (its
//! privacy map), and its error model. One search routine serves every protocol; there is no
//! switch over protocol names here, and a better accountant plugs in without touching the
//! protocols.

use crate::accounting::{AccountingError, Guarantee, LocalRandomizer, ShuffleAccountant};
use crate::params::{Delta, DomainSize, Epsilon, Gamma, NumUsers, ParamError};
use serde::Serialize;
use thiserror::Error;

/// What the user asks for: a guarantee (eps, delta) for n users.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Target {
    /// Target epsilon.
    pub eps: Epsilon,
    /// Target delta.
    pub delta: Delta,
    /// Number of users.
    pub n: NumUsers,
}

/// The privacy requirement a protocol choice puts on one uniformly shuffled GRR instance:
/// `n` users running GRR over `m` values must be (eps, delta)-DP.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Requirement {
    /// Message values of the GRR instance the accountant sees.
    pub m: DomainSize,
    /// Users in the instance.
    pub n: NumUsers,
    /// Required epsilon of the instance.
    pub eps: Epsilon,
    /// Required delta of the instance.
    pub delta: Delta,
}

/// A protocol, seen by the calibrator.
pub trait Calibratable {
    /// A discrete parameter choice (e.g. the precision k), `()` if none.
    type Choice: Copy + core::fmt::Debug;

    /// Candidate choices, in an order along which the predicted error is unimodal (the
    /// search stops after [`PATIENCE`] consecutive choices that are worse than the best, or at
    /// the first infeasible one once a feasible one was found).
    fn choices(&self, target: &Target) -> Vec<Self::Choice>;

    /// The requirement on one shuffled GRR instance that certifies `target` for this choice.
    fn requirement(&self, choice: Self::Choice, target: &Target)
        -> Result<Requirement, ParamError>;

    /// The GRR instance each user really runs for this choice at blanket probability gamma,
    /// certified at the end (may differ from the requirement's domain, e.g. for the paper's
    /// m = k convention).
    fn instance(
        &self,
        choice: Self::Choice,
        gamma: Gamma,
        target: &Target,
    ) -> (LocalRandomizer, NumUsers);

    /// Predicted (worst-case over datasets) mean squared error at this choice and gamma.
    fn predicted_mse(&self, choice: Self::Choice, gamma: Gamma, n: NumUsers) -> f64;
}

/// How many consecutive worse choices end the search.
pub const PATIENCE: usize = 8;

/// Calibration failed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CalibrationError {
    /// A parameter derived from the target is out of range.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// No choice reaches the target; `min_n` is the smallest n that would (if any up to 2^48).
    #[error("{}", infeasible_message(.reason, *.min_n))]
    Infeasible {
        /// The accountant's reason for the first choice.
        reason: AccountingError,
        /// Smallest number of users for which calibration succeeds at this (eps, delta).
        min_n: Option<u64>,
    },
}

fn infeasible_message(reason: &AccountingError, min_n: Option<u64>) -> String {
    match min_n {
        Some(n) => format!(
            "no blanket probability gamma < 1 certifies the target ({reason}); the smallest n that works at this eps and delta is {n}"
        ),
        None => format!(
            "no blanket probability gamma < 1 certifies the target ({reason}); no n up to 2^48 works at this eps and delta"
        ),
    }
}

/// The calibrated parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Calibration<C> {
    /// The chosen discrete parameter.
    pub choice: C,
    /// The blanket probability (rounded up, certified).
    pub gamma: Gamma,
    /// Local privacy eps0 of the randomizer users run.
    pub eps0: f64,
    /// The guarantee of the requirement instance, as certified by the accountant.
    pub guarantee: Guarantee,
    /// The guarantee certified for the randomizer users really run. Equal to `guarantee`
    /// unless the protocol calibrates on a different instance (the paper's m = k
    /// convention); `None` where the accountant cannot certify the real randomizer.
    pub certified: Option<Guarantee>,
    /// Predicted worst-case MSE at these parameters.
    pub predicted_mse: f64,
}

/// Finds the choice and the smallest certified gamma minimizing the predicted error.
pub fn calibrate<P: Calibratable>(
    protocol: &P,
    target: &Target,
    accountant: &dyn ShuffleAccountant,
) -> Result<Calibration<P::Choice>, CalibrationError> {
    let mut best: Option<Calibration<P::Choice>> = None;
    let mut first_err: Option<AccountingError> = None;
    let mut worse_in_a_row = 0;
    for choice in protocol.choices(target) {
        let req = protocol.requirement(choice, target)?;
        let gamma = match accountant.min_gamma(req.m, req.n, req.eps, req.delta) {
            Ok(g) => g,
            Err(e) => {
                if best.is_some() {
                    break; // errors grow past here: larger choices need more blanket
                }
                first_err.get_or_insert(e);
                continue;
            }
        };
        let gamma = Gamma::new(gamma)?;
        let req_grr = LocalRandomizer::Grr {
            m: req.m.get(),
            gamma: gamma.get(),
        };
        let mut guarantee = accountant
            .guarantee(&req_grr, req.n, req.delta)
            .map_err(|reason| CalibrationError::Infeasible {
                reason,
                min_n: None,
            })?;
        if guarantee.epsilon > req.eps.get() {
            // The bisection's upper end can exceed the target by its resolution; the target
            // itself is certified when delta(target eps) <= target delta.
            if let Some(method) =
                accountant.certify_at(&req_grr, req.n, req.eps.get(), req.delta.get())
            {
                guarantee = Guarantee {
                    epsilon: req.eps.get(),
                    delta: req.delta.get(),
                    method,
                };
            }
        }
        let (instance, inst_n) = protocol.instance(choice, gamma, target);
        let req_instance = LocalRandomizer::Grr {
            m: req.m.get(),
            gamma: gamma.get(),
        };
        let certified = if instance == req_instance && inst_n == req.n {
            Some(guarantee)
        } else {
            accountant.guarantee(&instance, inst_n, req.delta).ok()
        };
        let mse = protocol.predicted_mse(choice, gamma, target.n);
        let cand = Calibration {
            choice,
            gamma,
            eps0: instance.eps0(),
            guarantee,
            certified,
            predicted_mse: mse,
        };
        match &best {
            Some(b) if b.predicted_mse <= mse => {
                worse_in_a_row += 1;
                if worse_in_a_row >= PATIENCE {
                    break;
                }
            }
            _ => {
                best = Some(cand);
                worse_in_a_row = 0;
            }
        }
    }
    match best {
        Some(b) => Ok(b),
        None => {
            let reason = first_err.unwrap_or(AccountingError::NotApplicable {
                method: accountant.method(),
                reason: "the protocol offered no parameter choice".into(),
            });
            let min_n = smallest_feasible_n(protocol, target, accountant);
            Err(CalibrationError::Infeasible { reason, min_n })
        }
    }
}

/// Whether some choice is feasible at `target`.
fn feasible<P: Calibratable>(p: &P, target: &Target, acct: &dyn ShuffleAccountant) -> bool {
    p.choices(target).into_iter().any(|c| {
        p.requirement(c, target)
            .is_ok_and(|r| acct.min_gamma(r.m, r.n, r.eps, r.delta).is_ok())
    })
}

/// The smallest n for which calibration at the target's (eps, delta) succeeds: doubling,
/// then bisection (feasibility is monotone in n: more users, more blanket).
pub fn smallest_feasible_n<P: Calibratable>(
    p: &P,
    target: &Target,
    acct: &dyn ShuffleAccountant,
) -> Option<u64> {
    let at = |n: u64| -> Option<Target> {
        Some(Target {
            n: NumUsers::new(n).ok()?,
            ..*target
        })
    };
    let mut hi = target.n.get().max(2);
    loop {
        if feasible(p, &at(hi)?, acct) {
            break;
        }
        if hi >= NumUsers::MAX {
            return None;
        }
        hi = (hi * 2).min(NumUsers::MAX);
    }
    let mut lo = 1u64; // infeasible by convention (n >= 2)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if mid >= 2 && feasible(p, &at(mid)?, acct) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// One method's calibration of a protocol, for side-by-side reports.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison<C> {
    /// The accountant asked.
    pub method: crate::accounting::Method,
    /// Its calibration (gamma, certified guarantee, predicted error), or why it failed.
    pub calibration: Result<Calibration<C>, String>,
    /// Compute time in seconds.
    pub seconds: f64,
}

/// Calibrates `protocol` at `target` with each method in turn: gamma, the certifying method
/// and the predicted error of each (e.g. `blanket-closed`, the paper's form, against `best`).
pub fn compare<P: Calibratable>(
    protocol: &P,
    target: &Target,
    methods: &[crate::accounting::Method],
) -> Vec<Comparison<P::Choice>> {
    methods
        .iter()
        .map(|&method| {
            let t = std::time::Instant::now();
            let calibration = calibrate(protocol, target, method.accountant().as_ref())
                .map_err(|e| e.to_string());
            Comparison {
                method,
                calibration,
                seconds: t.elapsed().as_secs_f64(),
            }
        })
        .collect()
}

/// Inverse query "what eps0 may each user use?": the largest local eps0 (relative resolution
/// 1e-9, lower end, so certified) of k-RR over `k` values (or a generic eps0-LDP randomizer
/// when `k` is `None`) for which `accountant` certifies (eps, delta) with n users.
pub fn max_eps0(
    k: Option<DomainSize>,
    target: &Target,
    accountant: &dyn ShuffleAccountant,
) -> Result<f64, AccountingError> {
    let ok = |eps0: f64| {
        let r = match k {
            Some(k) => LocalRandomizer::krr(k, eps0),
            None => LocalRandomizer::Generic { eps0 },
        };
        accountant
            .epsilon(&r, target.n, target.delta)
            .is_ok_and(|e| e <= target.eps.get())
    };
    let mut lo = 0.0f64;
    let mut hi = 1.0f64;
    while ok(hi) {
        lo = hi;
        hi *= 2.0;
        if hi > 64.0 {
            return Ok(lo);
        }
    }
    if lo == 0.0 {
        // the largest certified eps0 is below 1: find a positive lower end
        let mut x = 0.5;
        while x > 1e-12 && !ok(x) {
            x *= 0.5;
        }
        if x <= 1e-12 {
            return Err(AccountingError::NotApplicable {
                method: accountant.method(),
                reason: "no eps0 >= 1e-12 meets the target".into(),
            });
        }
        lo = x;
        hi = 2.0 * x;
    }
    while hi - lo > 1e-9 * lo {
        let mid = 0.5 * (lo + hi);
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// Inverse query "what error will I get?": the predicted error of the calibrated protocol
/// at the target's n.
pub fn error_at_n<P: Calibratable>(
    protocol: &P,
    target: &Target,
    accountant: &dyn ShuffleAccountant,
) -> Result<f64, CalibrationError> {
    calibrate(protocol, target, accountant).map(|c| c.predicted_mse)
}

/// Inverse query "how many users do I need?": the smallest n (doubling, then bisection) for
/// which the calibrated protocol's `metric(predicted_mse, n)` is at most `max_error`. The
/// metric must be non-increasing in n (e.g. the MSE of frequencies, mse / n^2, or of a mean).
pub fn n_for_error<P: Calibratable>(
    protocol: &P,
    target: &Target,
    accountant: &dyn ShuffleAccountant,
    metric: impl Fn(f64, u64) -> f64,
    max_error: f64,
) -> Option<u64> {
    let good = |n: u64| -> bool {
        let Ok(nu) = NumUsers::new(n) else {
            return false;
        };
        let t = Target { n: nu, ..*target };
        calibrate(protocol, &t, accountant).is_ok_and(|c| metric(c.predicted_mse, n) <= max_error)
    };
    let mut hi = 2u64;
    while !good(hi) {
        if hi >= NumUsers::MAX {
            return None;
        }
        hi = (hi * 2).min(NumUsers::MAX);
    }
    let mut lo = hi / 2;
    if lo < 2 {
        return Some(hi);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if good(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod inverse_tests {
    use super::*;
    use crate::accounting::{Best, BlanketTheorem31, Method};
    use crate::protocol::histogram::HistogramShape;

    fn target(eps: f64, delta: f64, n: u64) -> Target {
        Target {
            eps: Epsilon::new(eps).unwrap(),
            delta: Delta::new(delta).unwrap(),
            n: NumUsers::new(n).unwrap(),
        }
    }

    #[test]
    fn best_beats_the_paper_and_names_its_method() {
        let shape = HistogramShape {
            m: DomainSize::new(20).unwrap(),
        };
        let t = target(1.0, 1e-6, 20_000);
        let rows = compare(&shape, &t, &[Method::BlanketClosed, Method::Best]);
        let paper = rows[0].calibration.as_ref().unwrap();
        let best = rows[1].calibration.as_ref().unwrap();
        assert!(best.gamma.get() < paper.gamma.get());
        assert!(best.predicted_mse < paper.predicted_mse);
        assert!(best.guarantee.epsilon <= 1.0, "{best:?}");
        assert_ne!(best.guarantee.method, Method::Best);
    }

    #[test]
    fn inverse_queries() {
        let t = target(0.5, 1e-6, 50_000);
        let k = DomainSize::new(10).unwrap();
        let e0 = max_eps0(Some(k), &t, &Best::default()).unwrap();
        let eps = Best::default()
            .epsilon(&LocalRandomizer::krr(k, e0), t.n, t.delta)
            .unwrap();
        assert!(eps <= 0.5 && e0 > 1.0, "{e0} {eps}");
        let shape = HistogramShape { m: k };
        let err = error_at_n(&shape, &t, &BlanketTheorem31).unwrap();
        assert!(err > 0.0);
        // frequency MSE mse / n^2 <= 1e-7
        let n = n_for_error(
            &shape,
            &t,
            &BlanketTheorem31,
            |m, n| m / (n as f64).powi(2),
            1e-7,
        )
        .unwrap();
        let at = error_at_n(&shape, &target(0.5, 1e-6, n), &BlanketTheorem31).unwrap();
        assert!(at / (n as f64).powi(2) <= 1e-7);
    }
}
