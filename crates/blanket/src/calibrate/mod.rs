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
use rayon::prelude::*;
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

    /// Candidate choices, in an order along which the predicted error is unimodal, with the
    /// infeasible choices (if any) forming a suffix; see [`calibrate`] for how the list is
    /// searched (unimodality only affects which certified candidate is found).
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

    /// Predicted (worst-case over datasets) mean squared error at this choice and gamma, on
    /// the protocol's own scale (e.g. a count, a sum, or a mean vector).
    fn predicted_mse(&self, choice: Self::Choice, gamma: Gamma, n: NumUsers) -> f64;

    /// `predicted_mse` on the *normalized* scale a user states an error target on: the MSE of
    /// the estimated frequencies (histogram), of the estimated mean (scalar sum) or of the
    /// estimated mean vector (vector sum). Each protocol says how its own scale maps there
    /// (a count or a sum error divided by n^2; a mean-vector error as it is), so that the
    /// inverse queries never rescale twice. Must be non-increasing in n for
    /// [`n_for_error`].
    fn normalized_mse(&self, predicted_mse: f64, n: NumUsers) -> f64;

    /// The local (LDP) guarantee of what one user sends at this choice and gamma: per message
    /// and per user (a user sending t messages composes them). This is the randomizer users
    /// really run, which may differ from [`Calibratable::instance`] (an accounting reduction).
    fn local_privacy(&self, choice: Self::Choice, gamma: Gamma) -> LocalPrivacy;
}

/// The local differential privacy of what one user sends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LocalPrivacy {
    /// eps0 of one message (rounded up).
    pub per_message: f64,
    /// eps0 of everything one user sends (its messages composed; rounded up): the user-level
    /// local guarantee.
    pub per_user: f64,
}

impl LocalPrivacy {
    /// A user sending `messages` messages, each `per_message`-LDP, with the t messages of one
    /// user attaining the composed bound (basic composition of pure eps0-LDP, Dwork and Roth
    /// 2014, Theorem 3.16; tight for vector sum: inputs 0^d and 1^d): per user
    /// `messages * per_message`, rounded up one ulp (the product's rounding error is at most
    /// half an ulp).
    pub fn of_messages(per_message: f64, messages: u32) -> Self {
        let per_user = if messages <= 1 {
            per_message
        } else {
            (f64::from(messages) * per_message).next_up()
        };
        Self {
            per_message,
            per_user,
        }
    }
}

/// How many consecutive worse choices end the linear scan (used for choice lists of at most
/// [`LINEAR_SCAN_MAX`] entries, and as the fallback when the search finds no feasible choice).
pub const PATIENCE: usize = 8;

/// Choice lists up to this length are scanned linearly (in order, stopping after [`PATIENCE`]
/// consecutive worse choices or at the first infeasible one after a feasible one); longer
/// lists are searched (see [`calibrate`]).
pub const LINEAR_SCAN_MAX: usize = 12;

/// The search's result is accepted only once every choice within this many positions of it
/// has been evaluated and none is better.
pub const VERIFY_RADIUS: usize = 2;

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
    /// Local privacy eps0 of one message of the randomizer users run (rounded up).
    pub eps0: f64,
    /// Local privacy of everything one user sends (its messages composed; equal to `eps0`
    /// for single-message protocols): the user-level local DP guarantee, rounded up.
    pub eps0_user: f64,
    /// The guarantee of the requirement instance, as certified by the accountant.
    pub guarantee: Guarantee,
    /// The guarantee certified for the randomizer users really run. Equal to `guarantee`
    /// unless the protocol calibrates on a different instance (the paper's m = k
    /// convention); `None` where the accountant cannot certify the real randomizer.
    pub certified: Option<Guarantee>,
    /// Predicted worst-case MSE at these parameters, on the protocol's own scale.
    pub predicted_mse: f64,
    /// `predicted_mse` on the normalized scale ([`Calibratable::normalized_mse`]).
    pub normalized_mse: f64,
}

/// Finds the choice and the smallest certified gamma minimizing the predicted error.
///
/// Every candidate's gamma is the accountant's certified `min_gamma` for the choice's
/// requirement; the winner alone is then certified (its guarantee, the exact target where the
/// accountant's curve reaches it, and the guarantee of the randomizer users really run), so
/// the search strategy only decides *which* certified candidate is returned, never what is
/// certified.
///
/// Lists of at most [`LINEAR_SCAN_MAX`] choices are scanned linearly. Longer lists are
/// searched assuming the predicted error is **unimodal** along the list (infeasible choices,
/// where no gamma < 1 works, count as +infinity and form a suffix): a binary search for the
/// first index whose error is at most the next one's (both evaluated together, in parallel),
/// then every choice within [`VERIFY_RADIUS`] of the best one seen is evaluated, moving to any
/// better one until the best is surrounded by evaluated, no-better choices (a guard against
/// tiny non-monotonicities from the accountant's finite resolution). Unimodality is an
/// optimality heuristic only: if it fails, the result may be a local optimum, but it is
/// certified all the same. Ties go to the earlier choice. Evaluations are memoized and the
/// set of evaluated choices does not depend on the number of rayon threads, so neither does
/// the result. If the search finds no feasible choice, the linear scan runs instead (and
/// reports the same error as before).
pub fn calibrate<P: Calibratable>(
    protocol: &P,
    target: &Target,
    accountant: &dyn ShuffleAccountant,
) -> Result<Calibration<P::Choice>, CalibrationError> {
    calibrate_near(protocol, target, accountant, None, VERIFY_RADIUS, true).map(|(c, _)| c)
}

/// [`calibrate`], starting the search at choice index `hint` (a galloping search from there,
/// for a protocol family whose optimum moves little between neighbouring members), verifying
/// `radius` choices either side of the optimum (instead of [`VERIFY_RADIUS`]), and returning
/// the chosen index too. With `min_n` false, an infeasibility error carries `min_n: None`
/// instead of the (costly) smallest feasible n.
pub(crate) fn calibrate_near<P: Calibratable>(
    protocol: &P,
    target: &Target,
    accountant: &dyn ShuffleAccountant,
    hint: Option<usize>,
    radius: usize,
    min_n: bool,
) -> Result<(Calibration<P::Choice>, usize), CalibrationError> {
    let choices = protocol.choices(target);
    let found = if choices.len() > LINEAR_SCAN_MAX {
        Search::new(protocol, target, accountant, &choices).run(hint, radius)
    } else {
        None
    };
    let (idx, gamma, mse) = match found {
        Some(f) => f,
        None => match linear_scan(protocol, target, accountant, &choices)? {
            Ok(f) => f,
            Err(first_err) => {
                let reason = first_err.unwrap_or(AccountingError::NotApplicable {
                    method: accountant.method(),
                    reason: "the protocol offered no parameter choice".into(),
                });
                let min_n = if min_n {
                    smallest_feasible_n(protocol, target, accountant)
                } else {
                    None
                };
                return Err(CalibrationError::Infeasible { reason, min_n });
            }
        },
    };
    let cal = certify_choice(protocol, target, accountant, choices[idx], gamma, mse)?;
    Ok((cal, idx))
}

/// The found choice: (index, certified gamma, predicted error).
type Found = (usize, Gamma, f64);

/// The linear scan: the best (index, gamma, mse), or the first accountant error if no choice
/// is feasible.
fn linear_scan<P: Calibratable>(
    protocol: &P,
    target: &Target,
    accountant: &dyn ShuffleAccountant,
    choices: &[P::Choice],
) -> Result<Result<Found, Option<AccountingError>>, CalibrationError> {
    let mut best: Option<Found> = None;
    let mut first_err: Option<AccountingError> = None;
    let mut worse_in_a_row = 0;
    for (i, &choice) in choices.iter().enumerate() {
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
        let mse = protocol.predicted_mse(choice, gamma, target.n);
        match &best {
            Some(b) if b.2 <= mse => {
                worse_in_a_row += 1;
                if worse_in_a_row >= PATIENCE {
                    break;
                }
            }
            _ => {
                best = Some((i, gamma, mse));
                worse_in_a_row = 0;
            }
        }
    }
    Ok(best.ok_or(first_err))
}

/// The accountant's guarantee for `randomizer`, stated at the target eps when the curve
/// certifies it there: the epsilon bisection's upper end can exceed the target by its
/// resolution, while delta(target eps) <= target delta certifies the target itself.
fn guarantee_at_target(
    accountant: &dyn ShuffleAccountant,
    randomizer: &LocalRandomizer,
    n: NumUsers,
    eps: Epsilon,
    delta: Delta,
) -> Result<Guarantee, AccountingError> {
    let mut guarantee = accountant.guarantee(randomizer, n, delta)?;
    if guarantee.epsilon > eps.get() {
        if let Some(method) = accountant.certify_at(randomizer, n, eps.get(), delta.get()) {
            guarantee = Guarantee {
                epsilon: eps.get(),
                delta: delta.get(),
                method,
            };
        }
    }
    Ok(guarantee)
}

/// Certifies the chosen candidate: the requirement instance's guarantee (the exact target
/// where the accountant's curve certifies it) and the guarantee of the randomizer users run.
fn certify_choice<P: Calibratable>(
    protocol: &P,
    target: &Target,
    accountant: &dyn ShuffleAccountant,
    choice: P::Choice,
    gamma: Gamma,
    mse: f64,
) -> Result<Calibration<P::Choice>, CalibrationError> {
    let req = protocol.requirement(choice, target)?;
    let req_grr = LocalRandomizer::Grr {
        m: req.m.get(),
        gamma: gamma.get(),
    };
    let guarantee =
        guarantee_at_target(accountant, &req_grr, req.n, req.eps, req.delta).map_err(|reason| {
            CalibrationError::Infeasible {
                reason,
                min_n: None,
            }
        })?;
    let (instance, inst_n) = protocol.instance(choice, gamma, target);
    let certified = if instance == req_grr && inst_n == req.n {
        Some(guarantee)
    } else {
        guarantee_at_target(accountant, &instance, inst_n, req.eps, req.delta).ok()
    };
    let local = protocol.local_privacy(choice, gamma);
    Ok(Calibration {
        choice,
        gamma,
        eps0: local.per_message,
        eps0_user: local.per_user,
        guarantee,
        certified,
        predicted_mse: mse,
        normalized_mse: protocol.normalized_mse(mse, target.n),
    })
}

/// One evaluated choice.
#[derive(Debug, Clone, Copy)]
enum Point {
    /// Certified smallest gamma and the predicted error there.
    Feasible(Gamma, f64),
    /// No gamma < 1 works (or the choice is out of range).
    Infeasible,
}

impl Point {
    /// The search key: the predicted error, +infinity where infeasible (or NaN).
    fn key(self) -> f64 {
        match self {
            Point::Feasible(_, mse) if !mse.is_nan() => mse,
            _ => f64::INFINITY,
        }
    }
}

/// The memoized search over a long choice list.
struct Search<'a, P: Calibratable> {
    protocol: &'a P,
    target: &'a Target,
    accountant: &'a dyn ShuffleAccountant,
    choices: &'a [P::Choice],
    memo: Vec<Option<Point>>,
}

impl<'a, P: Calibratable> Search<'a, P> {
    fn new(
        protocol: &'a P,
        target: &'a Target,
        accountant: &'a dyn ShuffleAccountant,
        choices: &'a [P::Choice],
    ) -> Self {
        Self {
            protocol,
            target,
            accountant,
            choices,
            memo: vec![None; choices.len()],
        }
    }

    /// Evaluates the listed indices not yet evaluated (out-of-range ones are skipped); the
    /// accountant calls run in parallel.
    fn ensure(&mut self, idxs: &[usize]) {
        let mut todo: Vec<(usize, Requirement)> = Vec::new();
        for &i in idxs {
            if i >= self.memo.len() || self.memo[i].is_some() || todo.iter().any(|t| t.0 == i) {
                continue;
            }
            match self.protocol.requirement(self.choices[i], self.target) {
                Ok(r) => todo.push((i, r)),
                Err(_) => self.memo[i] = Some(Point::Infeasible),
            }
        }
        let acct = self.accountant;
        let gammas: Vec<Option<f64>> = todo
            .par_iter()
            .map(|(_, r)| acct.min_gamma(r.m, r.n, r.eps, r.delta).ok())
            .collect();
        for ((i, _), g) in todo.into_iter().zip(gammas) {
            let point = match g.map(Gamma::new) {
                Some(Ok(gamma)) => Point::Feasible(
                    gamma,
                    self.protocol
                        .predicted_mse(self.choices[i], gamma, self.target.n),
                ),
                _ => Point::Infeasible,
            };
            self.memo[i] = Some(point);
        }
    }

    fn key(&self, i: usize) -> f64 {
        self.memo[i].map_or(f64::INFINITY, Point::key)
    }

    /// Whether the error at i is at most the next one's (true at the last index); evaluates
    /// both. Under unimodality this is false before the optimum and true from it on.
    fn rising(&mut self, i: usize) -> bool {
        if i + 1 >= self.memo.len() {
            self.ensure(&[i]);
            return true;
        }
        self.ensure(&[i, i + 1]);
        self.key(i) <= self.key(i + 1)
    }

    /// The best evaluated feasible choice (ties to the earlier one).
    fn best(&self) -> Option<Found> {
        let mut best: Option<Found> = None;
        for (i, p) in self.memo.iter().enumerate() {
            if let Some(Point::Feasible(g, mse)) = *p {
                let key = Point::Feasible(g, mse).key();
                if best.is_none_or(|b| key < Point::Feasible(b.1, b.2).key()) {
                    best = Some((i, g, mse));
                }
            }
        }
        best
    }

    /// The search; `None` if it found no feasible choice.
    fn run(mut self, hint: Option<usize>, radius: usize) -> Option<Found> {
        let len = self.memo.len();
        // Find the first index where the error stops falling, in [lo, hi].
        let (mut lo, mut hi) = (0, len - 1);
        if let Some(h) = hint {
            let h = h.min(len - 1);
            if self.rising(h) {
                // gallop left
                hi = h;
                let mut step = 1;
                while hi > 0 {
                    let p = hi.saturating_sub(step);
                    if self.rising(p) {
                        hi = p;
                        step *= 2;
                    } else {
                        lo = p + 1;
                        break;
                    }
                }
            } else {
                // gallop right
                lo = h + 1;
                let mut step = 1;
                loop {
                    let p = (lo + step - 1).min(len - 1);
                    if self.rising(p) {
                        hi = p;
                        break;
                    }
                    lo = p + 1;
                    step *= 2;
                }
            }
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.rising(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        // Verify the neighbourhood of the best choice seen, moving to any better one.
        loop {
            let (b, _, _) = self.best()?;
            let window: Vec<usize> = (b.saturating_sub(radius)..=b + radius)
                .filter(|&i| i < len && self.memo[i].is_none())
                .collect();
            if window.is_empty() {
                return self.best();
            }
            self.ensure(&window);
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

mod inverse;
pub use inverse::{error_at_n, max_eps0, n_for_error};

#[cfg(test)]
mod search_tests;
