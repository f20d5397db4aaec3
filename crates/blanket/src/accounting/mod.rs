//! Accounting: maps a shuffled randomizer's parameters to a certified (epsilon, delta)
//! guarantee, and back.
//!
//! Every accountant implements [`ShuffleAccountant`]. It is given a [`LocalRandomizer`]
//! *description* (not a bare eps0), so a bound that holds only for k-ary randomized response
//! cannot be applied to a generic eps0-LDP randomizer. Numbers it returns are upper bounds,
//! with floating-point error rounded toward the safe side (see [`round_up`]).

pub mod binomial;
pub mod blanket_closed;
pub mod clones;

pub use blanket_closed::BlanketTheorem31;

use crate::params::{Delta, DomainSize, Epsilon, NumUsers};
use serde::Serialize;
use thiserror::Error;

/// The local randomizer each of the n users runs, as an accountant needs to know it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LocalRandomizer {
    /// Any eps0-LDP randomizer: only generic amplification bounds apply.
    Generic {
        /// Local privacy parameter.
        eps0: f64,
    },
    /// Generalized (m-ary) randomized response R^PH_{gamma,m}: Pr[y] = (1 - gamma) 1[y = x] +
    /// gamma / m. Its local privacy is eps0 = log(1 + m (1 - gamma) / gamma).
    Grr {
        /// Number of message values.
        m: u32,
        /// Blanket probability.
        gamma: f64,
    },
}

impl LocalRandomizer {
    /// k-ary randomized response with local privacy eps0, as GRR over k values
    /// (gamma = k / (e^eps0 + k - 1)).
    pub fn krr(k: DomainSize, eps0: f64) -> Self {
        LocalRandomizer::Grr {
            m: k.get(),
            gamma: crate::randomizer::grr::gamma_for_local_epsilon(k, eps0),
        }
    }

    /// The local privacy eps0 of this randomizer (rounded up for GRR).
    pub fn eps0(&self) -> f64 {
        match *self {
            LocalRandomizer::Generic { eps0 } => eps0,
            LocalRandomizer::Grr { m, gamma } => {
                let ratio = f64::from(m) * (1.0 - gamma) / gamma;
                round_up(ratio.ln_1p(), 2)
            }
        }
    }
}

/// Which bound certified a guarantee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Balle, Bell, Gascon, Nissim 2019, Theorem 3.1 (closed form for GRR).
    BlanketClosed,
}

impl Method {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Method::BlanketClosed => "blanket-closed",
        }
    }

    /// The source of the bound, for reports.
    pub fn citation(self) -> &'static str {
        match self {
            Method::BlanketClosed => {
                "Balle, Bell, Gascon, Nissim, The Privacy Blanket of the Shuffle Model, CRYPTO 2019, Theorem 3.1"
            }
        }
    }
}

impl core::fmt::Display for Method {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an accountant gave no guarantee.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum AccountingError {
    /// The method's conditions do not hold for these parameters.
    #[error("{method} does not apply: {reason}")]
    NotApplicable {
        /// The method asked.
        method: Method,
        /// Which condition failed, in words.
        reason: String,
    },
    /// No gamma in (0, 1) meets the target under this method.
    #[error("{method}: no gamma < 1 reaches eps = {eps} at delta = {delta} with n = {n} users and m = {m} message values")]
    Unreachable {
        /// The method asked.
        method: Method,
        /// Target epsilon.
        eps: f64,
        /// Target delta.
        delta: f64,
        /// Users.
        n: u64,
        /// Message values.
        m: u32,
    },
}

/// A certified privacy statement about a shuffled protocol.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Guarantee {
    /// Certified epsilon (an upper bound on the true one).
    pub epsilon: f64,
    /// The delta at which epsilon is certified.
    pub delta: f64,
    /// The bound that certified it.
    pub method: Method,
}

/// An amplification-by-shuffling accountant: n users each run `randomizer` once, a uniform
/// shuffler permutes the n messages; the analyzer's view is (epsilon, delta)-DP under
/// substitution of one user's input.
pub trait ShuffleAccountant: Sync {
    /// The method this accountant implements.
    fn method(&self) -> Method;

    /// Certified epsilon at `delta`, or why the method gives none.
    fn epsilon(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        delta: Delta,
    ) -> Result<f64, AccountingError>;

    /// The smallest blanket probability gamma of GRR over m values whose shuffled guarantee
    /// is at most `eps` at `delta`. The returned gamma is certified: `epsilon` at it is
    /// <= `eps`. Default: bisection on gamma (epsilon is non-increasing in gamma), relative
    /// resolution 1e-9, returning the certified (upper) end.
    fn min_gamma(
        &self,
        m: DomainSize,
        n: NumUsers,
        eps: Epsilon,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        let ok = |gamma: f64| {
            self.epsilon(&LocalRandomizer::Grr { m: m.get(), gamma }, n, delta)
                .is_ok_and(|e| e <= eps.get())
        };
        let unreachable = || AccountingError::Unreachable {
            method: self.method(),
            eps: eps.get(),
            delta: delta.get(),
            n: n.get(),
            m: m.get(),
        };
        let mut hi = 1.0f64.next_down();
        if !ok(hi) {
            return Err(unreachable());
        }
        let mut lo = 0.0f64;
        while hi - lo > 1e-9 * hi && hi > f64::MIN_POSITIVE {
            let mid = 0.5 * (lo + hi);
            if ok(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Ok(hi)
    }
}

/// `x` raised by `ulps` units in the last place: the safe side of a computed upper bound
/// whose rounding error is at most `ulps` ulps.
pub fn round_up(x: f64, ulps: u32) -> f64 {
    let mut y = x;
    for _ in 0..ulps {
        y = y.next_up();
    }
    y
}
