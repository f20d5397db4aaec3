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
        let eps = accountant
            .epsilon(
                &LocalRandomizer::Grr {
                    m: req.m.get(),
                    gamma: gamma.get(),
                },
                req.n,
                req.delta,
            )
            .map_err(|reason| CalibrationError::Infeasible {
                reason,
                min_n: None,
            })?;
        let guarantee = Guarantee {
            epsilon: eps,
            delta: req.delta.get(),
            method: accountant.method(),
        };
        let (instance, inst_n) = protocol.instance(choice, gamma, target);
        let req_instance = LocalRandomizer::Grr {
            m: req.m.get(),
            gamma: gamma.get(),
        };
        let certified = if instance == req_instance && inst_n == req.n {
            Some(guarantee)
        } else {
            accountant
                .epsilon(&instance, inst_n, req.delta)
                .ok()
                .map(|epsilon| Guarantee {
                    epsilon,
                    ..guarantee
                })
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
