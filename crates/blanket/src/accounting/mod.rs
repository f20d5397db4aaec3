//! Accounting: maps a shuffled randomizer's parameters to a certified (epsilon, delta)
//! guarantee, and back.
//!
//! Every accountant implements [`ShuffleAccountant`]. It is given a [`LocalRandomizer`]
//! *description* (not a bare eps0), so a bound that holds only for k-ary randomized response
//! cannot be applied to a generic eps0-LDP randomizer. Numbers it returns are upper bounds,
//! with floating-point error rounded toward the safe side (see [`round_up`]).

// `!(x < y)` is deliberate throughout: it is true for NaN, so NaN inputs take the safe branch.
// The Stirling table keeps its 20 computed digits.
#![allow(clippy::neg_cmp_op_on_partial_ord, clippy::excessive_precision)]

pub mod alternating;
pub mod alternating_bad;
pub mod alternating_clones;
pub mod best;
pub mod binomial;
pub mod blanket_closed;
pub mod clones;
pub mod composition;
pub mod erlingsson;
pub mod fmt21_closed;
pub mod grr_exact;
mod liveness;
pub mod variation_ratio;

pub use alternating::AlternatingAccountant;
pub use alternating_bad::{AlternatingBadCells, BadCells};
pub use alternating_clones::AlternatingClones;
pub use best::Best;
pub use blanket_closed::BlanketTheorem31;
pub use clones::{Fmt21Numerical, StrongerClones};
pub use erlingsson::ErlingssonClosed;
pub use fmt21_closed::Fmt21Closed;
pub use grr_exact::GrrExact;
pub use variation_ratio::VariationRatio;

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
    /// (gamma = k / (e^eps0 + k - 1)). The `f64` gamma is rounded *down* (less blanket), so
    /// the GRR an accountant certifies is never more private than k-RR at eps0: its local
    /// privacy log(1 + k (1 - gamma) / gamma) is at least eps0.
    ///
    /// For eps0 so large that gamma is below the smallest normal `f64` (about eps0 > 690;
    /// gamma would round to a subnormal, zero or, after rounding down, a negative number),
    /// no representable gamma is safe, and the randomizer is described as
    /// [`LocalRandomizer::Generic`] with the same eps0 (k-RR is eps0-LDP, so every generic
    /// bound still applies; only the k-RR-specific ones are lost, and those refuse
    /// eps0 > [`MAX_EPS0`] anyway).
    pub fn krr(k: DomainSize, eps0: f64) -> Self {
        let kf = f64::from(k.get());
        let local = |g: f64| grr_local_epsilon(k.get(), g);
        // gamma = k e^-eps0 / (1 + (k - 1) e^-eps0): no overflow of e^eps0.
        let mut gamma = if eps0 > 1.0 {
            let t = (-eps0).exp();
            kf * t / (1.0 + (kf - 1.0) * t)
        } else {
            crate::randomizer::grr::gamma_for_local_epsilon(k, eps0)
        };
        // A few ulps absorb the rounding of exp, the division and ln_1p; the loop makes sure.
        for _ in 0..4 {
            gamma = gamma.next_down();
        }
        for _ in 0..64 {
            if !(gamma >= f64::MIN_POSITIVE) || local(gamma) >= eps0 {
                break;
            }
            gamma = gamma.next_down();
        }
        if !(gamma >= f64::MIN_POSITIVE && local(gamma) >= eps0) {
            return LocalRandomizer::Generic { eps0 };
        }
        LocalRandomizer::Grr { m: k.get(), gamma }
    }

    /// The local privacy eps0 of this randomizer (rounded up for GRR; finite for every
    /// gamma > 0, see [`grr_local_epsilon`]).
    pub fn eps0(&self) -> f64 {
        match *self {
            LocalRandomizer::Generic { eps0 } => eps0,
            LocalRandomizer::Grr { m, gamma } => round_up(grr_local_epsilon(m, gamma), 2),
        }
    }
}

/// Local privacy of GRR(m, gamma): log(1 + m (1 - gamma) / gamma) (Balle, Bell, Gascon,
/// Nissim 2019, Section 3). When m (1 - gamma) / gamma overflows (gamma below about
/// m 1e-308), it is computed as ln m + ln1p(-gamma) - ln gamma, so it stays finite (at most
/// about 763) for every gamma > 0 (the 1 inside the log is then below one ulp). Not rounded.
pub fn grr_local_epsilon(m: u32, gamma: f64) -> f64 {
    let mf = f64::from(m);
    let ratio = mf * (1.0 - gamma) / gamma;
    if ratio.is_finite() {
        ratio.ln_1p()
    } else {
        mf.ln() + (-gamma).ln_1p() - gamma.ln()
    }
}

/// Largest local eps0 the numerical accountants accept. Their formulas use e^eps0 and
/// e^(eps + eps0) with eps < eps0; both stay finite (below e^709) up to this value. Above
/// it, a method answers `NotApplicable` (the shuffled randomizer is then only claimed
/// eps0-DP, which holds without amplification).
pub const MAX_EPS0: f64 = 350.0;

/// Which bound certified a guarantee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Balle, Bell, Gascon, Nissim 2019, Theorem 3.1 (closed form for GRR).
    BlanketClosed,
    /// Feldman, McMillan, Talwar 2021, the paper's closed form (generic eps0-LDP).
    Fmt21Closed,
    /// Feldman, McMillan, Talwar 2021, the clone reduction computed exactly.
    Fmt21Numerical,
    /// Feldman, McMillan, Talwar 2023, stronger clones (k-RR only), computed exactly.
    ClonesKrr,
    /// Wang et al. 2024, variation-ratio bound for k-RR, computed exactly.
    VariationRatio,
    /// Exact blanket divergence of the shuffled GRR (derived in docs/accounting.md).
    GrrExact,
    /// Erlingsson et al. 2019 closed form.
    ErlingssonClosed,
    /// The smallest of the applicable bounds above (an accountant, not a theorem).
    Best,
    /// The joint clone reduction for the alternating shuffler A^2_pi (docs/alternating.md);
    /// not a uniform-shuffle method, so not in [`Method::ALL`].
    AlternatingClones,
}

impl Method {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Method::BlanketClosed => "blanket-closed",
            Method::Fmt21Closed => "fmt21-closed",
            Method::Fmt21Numerical => "fmt21-numerical",
            Method::ClonesKrr => "clones-krr",
            Method::VariationRatio => "variation-ratio",
            Method::GrrExact => "grr-exact",
            Method::ErlingssonClosed => "erlingsson-closed",
            Method::Best => "best",
            Method::AlternatingClones => "alternating-clones",
        }
    }

    /// The source of the bound, for reports.
    pub fn citation(self) -> &'static str {
        match self {
            Method::BlanketClosed => {
                "Balle, Bell, Gascon, Nissim, The Privacy Blanket of the Shuffle Model, CRYPTO 2019, Theorem 3.1"
            }
            Method::Fmt21Closed => {
                "Feldman, McMillan, Talwar, Hiding Among the Clones, FOCS 2021, Theorem 3.1 (closed form)"
            }
            Method::Fmt21Numerical => {
                "Feldman, McMillan, Talwar, Hiding Among the Clones, FOCS 2021, Theorem 3.2 (clone reduction, computed exactly)"
            }
            Method::ClonesKrr => {
                "Feldman, McMillan, Talwar, Stronger Privacy Amplification by Shuffling for Renyi and Approximate DP, SODA 2023, Theorem 3.1 with erratum (k-RR)"
            }
            Method::VariationRatio => {
                "Wang et al., Privacy Amplification via Shuffling: Unified, Simplified, and Tightened, VLDB 2024 (variation-ratio reduction, k-RR parameters)"
            }
            Method::GrrExact => {
                "blanket: exact blanket divergence of shuffled GRR with blanket users revealed (docs/accounting.md)"
            }
            Method::ErlingssonClosed => {
                "Erlingsson, Feldman, Mironov, Raghunathan, Talwar, Thakurta, Amplification by Shuffling, SODA 2019, Theorem 7.1"
            }
            Method::Best => "the smallest certified bound among the applicable methods",
            Method::AlternatingClones => {
                "blanket: joint clone reduction (Feldman, McMillan, Talwar, FOCS 2021 Thm 3.2 / SODA 2023 Thm 3.1) for the alternating shuffler A^2_pi of Balle, Bell, Gascon, CCS 2023 (docs/alternating.md)"
            }
        }
    }

    /// Every method, in the order reports list them.
    pub const ALL: [Method; 7] = [
        Method::BlanketClosed,
        Method::ErlingssonClosed,
        Method::Fmt21Closed,
        Method::Fmt21Numerical,
        Method::ClonesKrr,
        Method::VariationRatio,
        Method::GrrExact,
    ];

    /// The method named `name` (as on the command line).
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL
            .into_iter()
            .chain([Method::Best])
            .find(|m| m.name() == name)
    }

    /// The accountant implementing this method.
    pub fn accountant(self) -> Box<dyn ShuffleAccountant> {
        match self {
            Method::BlanketClosed => Box::new(BlanketTheorem31),
            Method::Fmt21Closed => Box::new(Fmt21Closed),
            Method::Fmt21Numerical => Box::new(Fmt21Numerical),
            Method::ClonesKrr => Box::new(StrongerClones),
            Method::VariationRatio => Box::new(VariationRatio),
            Method::GrrExact => Box::new(GrrExact),
            Method::ErlingssonClosed => Box::new(ErlingssonClosed),
            Method::Best => Box::new(Best::default()),
            // Valid for a uniform shuffle of the same n too (its view is a post-processing of
            // the A^2_pi view), though meant for A^2_pi.
            Method::AlternatingClones => Box::new(AlternatingClones),
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

impl AccountingError {
    /// No gamma < 1 of GRR over m values reaches (eps, delta) with n users under `method`.
    pub fn unreachable(
        method: Method,
        m: DomainSize,
        n: NumUsers,
        eps: Epsilon,
        delta: Delta,
    ) -> Self {
        AccountingError::Unreachable {
            method,
            eps: eps.get(),
            delta: delta.get(),
            n: n.get(),
            m: m.get(),
        }
    }
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

    /// The certified guarantee at `delta`, naming the method that certified it (for a
    /// combined accountant, the winning method).
    fn guarantee(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        delta: Delta,
    ) -> Result<Guarantee, AccountingError> {
        Ok(Guarantee {
            epsilon: self.epsilon(randomizer, n, delta)?,
            delta: delta.get(),
            method: self.method(),
        })
    }

    /// Whether this accountant certifies exactly (eps, delta), and with which method: through
    /// its delta(eps) curve (delta(eps) <= delta), or, for a closed form that gives no curve,
    /// through epsilon(delta) <= eps ((eps', delta)-DP with eps' <= eps is (eps, delta)-DP).
    /// Used to state a calibrated target exactly instead of the epsilon bisection's upper
    /// end, which can exceed it by the 1e-6 resolution; [`ShuffleAccountant::min_gamma`]
    /// returns a gamma this check accepts.
    fn certify_at(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        eps: f64,
        delta: f64,
    ) -> Option<Method> {
        let by_curve = self.delta(randomizer, n, eps).is_ok_and(|d| d <= delta);
        let by_epsilon = || {
            Delta::new(delta)
                .ok()
                .and_then(|d| self.epsilon(randomizer, n, d).ok())
                .is_some_and(|e| e <= eps)
        };
        (by_curve || by_epsilon()).then(|| self.method())
    }

    /// Certified delta at `eps` (an upper bound on the privacy curve), for methods that give
    /// the whole curve. Closed forms, which give eps at a delta, return `NotApplicable`.
    fn delta(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        eps: f64,
    ) -> Result<f64, AccountingError> {
        let _ = (randomizer, n, eps);
        Err(AccountingError::NotApplicable {
            method: self.method(),
            reason: "this closed form gives eps at a given delta, not delta(eps)".into(),
        })
    }

    /// The smallest blanket probability gamma of GRR over m values whose shuffled guarantee
    /// is at most `eps` at `delta`. The returned gamma is certified by the very check the
    /// calibrator states its guarantee with: `epsilon(delta)` at it is <= `eps`, or
    /// `certify_at(eps, delta)` holds (curve accountants, see the [`CurveAccountant`]
    /// impl). Default: bisection on gamma (epsilon is non-increasing in gamma), relative
    /// resolution 1e-9, returning the certified (upper) end (see [`smallest_certified_gamma`]).
    fn min_gamma(
        &self,
        m: DomainSize,
        n: NumUsers,
        eps: Epsilon,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        smallest_certified_gamma(|gamma| {
            self.epsilon(&LocalRandomizer::Grr { m: m.get(), gamma }, n, delta)
                .is_ok_and(|e| e <= eps.get())
        })
        .ok_or_else(|| AccountingError::unreachable(self.method(), m, n, eps, delta))
    }
}

/// The privacy curve of one shuffled randomizer at one n: both directions are certified
/// upper bounds.
pub trait PrivacyCurve {
    /// Certified epsilon at `delta`.
    fn epsilon(&self, delta: f64) -> f64;

    /// Certified delta at `eps` (>= 0).
    fn delta(&self, eps: f64) -> f64;

    /// Whether the curve certifies (eps, delta).
    fn certifies(&self, eps: f64, delta: f64) -> bool {
        self.delta(eps) <= delta
    }
}

/// A numerical accountant whose answer for a randomizer and n is a [`PrivacyCurve`]. Every
/// such accountant is a [`ShuffleAccountant`] through its curve; `min_gamma` bisects gamma on
/// delta(target eps), one curve evaluation per step, unless the accountant has a faster way.
pub trait CurveAccountant: Sync {
    /// The curve type.
    type Curve: PrivacyCurve;

    /// The method this accountant implements.
    fn curve_method(&self) -> Method;

    /// The curve for `randomizer` shuffled among n users, or why the method gives none.
    fn curve(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
    ) -> Result<Self::Curve, AccountingError>;

    /// A specialised smallest-gamma search, if the accountant has one.
    fn fast_min_gamma(
        &self,
        m: DomainSize,
        n: NumUsers,
        eps: Epsilon,
        delta: Delta,
    ) -> Option<Result<f64, AccountingError>> {
        let _ = (m, n, eps, delta);
        None
    }
}

impl<T: CurveAccountant> ShuffleAccountant for T {
    fn method(&self) -> Method {
        self.curve_method()
    }

    fn epsilon(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        Ok(self.curve(randomizer, n)?.epsilon(delta.get()))
    }

    fn certify_at(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        eps: f64,
        delta: f64,
    ) -> Option<Method> {
        let curve = self.curve(randomizer, n).ok()?;
        (eps >= 0.0 && curve.certifies(eps, delta)).then_some(self.curve_method())
    }

    fn delta(
        &self,
        randomizer: &LocalRandomizer,
        n: NumUsers,
        eps: f64,
    ) -> Result<f64, AccountingError> {
        if !(eps >= 0.0) {
            return Err(AccountingError::NotApplicable {
                method: self.curve_method(),
                reason: format!("eps must be >= 0, got {eps}"),
            });
        }
        Ok(self.curve(randomizer, n)?.delta(eps))
    }

    /// The smallest gamma that `certify_at` certifies at (eps, delta): the criterion the
    /// calibrator checks the chosen gamma with. A specialised search ([`fast_min_gamma`])
    /// may accept a gamma by a bound of its own (e.g. grr-exact's block bound with B-points
    /// carried over from a nearby gamma: certified too, but a different upper bound than
    /// `certify_at` computes); its answer is then raised until `certify_at` holds (see
    /// [`raise_until_certified`]), so a calibrated gamma is certified at exactly the target.
    ///
    /// [`fast_min_gamma`]: CurveAccountant::fast_min_gamma
    fn min_gamma(
        &self,
        m: DomainSize,
        n: NumUsers,
        eps: Epsilon,
        delta: Delta,
    ) -> Result<f64, AccountingError> {
        let Some(fast) = self.fast_min_gamma(m, n, eps, delta) else {
            return min_gamma_by_delta(self, m, n, eps, delta);
        };
        let certified = certifies_grr_at(self, m, n, eps, delta);
        raise_until_certified(fast?, certified)
            .ok_or_else(|| AccountingError::unreachable(self.curve_method(), m, n, eps, delta))
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

/// The local eps0 a method should use for a randomizer, validated (finite, > 0).
pub(crate) fn checked_eps0(method: Method, r: &LocalRandomizer) -> Result<f64, AccountingError> {
    let bad = |reason: String| AccountingError::NotApplicable { method, reason };
    match *r {
        LocalRandomizer::Generic { eps0 } => {
            if !(eps0.is_finite() && eps0 > 0.0) {
                Err(bad(format!("eps0 must be a finite number > 0, got {eps0}")))
            } else if eps0 > MAX_EPS0 {
                Err(bad(too_large(eps0)))
            } else {
                Ok(eps0)
            }
        }
        LocalRandomizer::Grr { m, gamma } => {
            if m < 2 {
                return Err(bad(format!("GRR needs m >= 2 values, got {m}")));
            }
            if !(gamma > 0.0 && gamma < 1.0) {
                return Err(bad(format!("gamma must be in (0, 1), got {gamma}")));
            }
            let eps0 = r.eps0();
            if !(eps0 <= MAX_EPS0) {
                return Err(bad(too_large(eps0)));
            }
            Ok(eps0)
        }
    }
}

fn too_large(eps0: f64) -> String {
    format!(
        "eps0 = {eps0} exceeds {MAX_EPS0}: e^eps0 overflows the computation; no amplification is claimed (the shuffled randomizer is eps0-DP)"
    )
}

/// The k of a k-RR randomizer, or `NotApplicable` for a generic one (bounds that hold only
/// for k-ary randomized response must never be applied to a generic eps0-LDP randomizer).
pub(crate) fn krr_k(method: Method, r: &LocalRandomizer) -> Result<u32, AccountingError> {
    grr_params(method, r).map(|(m, _)| m)
}

/// (m, gamma) of a GRR randomizer, or `NotApplicable` for a generic one.
pub(crate) fn grr_params(
    method: Method,
    r: &LocalRandomizer,
) -> Result<(u32, f64), AccountingError> {
    match *r {
        LocalRandomizer::Grr { m, gamma } => Ok((m, gamma)),
        LocalRandomizer::Generic { .. } => Err(AccountingError::NotApplicable {
            method,
            reason: "this bound holds only for k-ary randomized response (GRR), not for a generic eps0-LDP randomizer".into(),
        }),
    }
}

/// Smallest gamma of GRR over m values that `acct.certify_at(GRR(m, gamma), n, eps, delta)`
/// certifies (for a curve accountant: delta(eps) <= delta): one check per bisection step
/// (see [`smallest_certified_gamma`]). The predicate is the calibrator's own certifying
/// check, so the gamma returned is certified at exactly (eps, delta).
pub(crate) fn min_gamma_by_delta(
    acct: &(impl ShuffleAccountant + ?Sized),
    m: DomainSize,
    n: NumUsers,
    eps: Epsilon,
    delta: Delta,
) -> Result<f64, AccountingError> {
    smallest_certified_gamma(certifies_grr_at(acct, m, n, eps, delta))
        .ok_or_else(|| AccountingError::unreachable(acct.method(), m, n, eps, delta))
}

/// Whether `acct` certifies GRR over m values with blanket probability gamma at the target
/// (eps, delta) with n users: the one criterion every gamma search of the accountants uses,
/// so a searched gamma is certified by the same check that reports it.
pub(crate) fn certifies_grr_at<'a>(
    acct: &'a (impl ShuffleAccountant + ?Sized),
    m: DomainSize,
    n: NumUsers,
    eps: Epsilon,
    delta: Delta,
) -> impl Fn(f64) -> bool + 'a {
    move |gamma| {
        acct.certify_at(
            &LocalRandomizer::Grr { m: m.get(), gamma },
            n,
            eps.get(),
            delta.get(),
        )
        .is_some()
    }
}

/// Relative step (in the odds (1 - gamma) / gamma) of the first raise in
/// [`raise_until_certified`]; each further step is 4 times larger.
const RAISE_STEP: f64 = 1e-7;

/// The smallest gamma >= `gamma0` (to relative resolution 1e-9) with `certified(gamma)`,
/// starting from a gamma that a specialised search accepted by a bound of its own: `gamma0`
/// itself if `certified` holds there; otherwise the odds u = (1 - gamma) / gamma are lowered
/// by relative steps 1e-7, 4e-7, 1.6e-6, ... (gamma = 1 / (1 + u)) up to gamma = 1 - ulp until
/// `certified` holds, then the last rejected and the accepted gamma are bisected. Only a
/// gamma at which `certified` was checked true is returned (`None` if it fails up to
/// 1 - ulp). Larger gamma is more blanket, so raising gamma only adds privacy.
pub(crate) fn raise_until_certified(gamma0: f64, certified: impl Fn(f64) -> bool) -> Option<f64> {
    if !(gamma0 > 0.0 && gamma0 < 1.0) {
        return None;
    }
    if certified(gamma0) {
        return Some(gamma0);
    }
    let top = 1.0f64.next_down();
    let u0 = (1.0 - gamma0) / gamma0;
    let mut lo = gamma0;
    let mut step = RAISE_STEP;
    let mut hi = loop {
        let g = if step < 1.0 {
            (1.0 / (1.0 + u0 * (1.0 - step))).clamp(lo.next_up(), top)
        } else {
            top
        };
        if certified(g) {
            break g;
        }
        if g >= top {
            return None;
        }
        lo = g;
        step *= 4.0;
    };
    for _ in 0..64 {
        if !(hi - lo > 1e-9 * hi) {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if !(mid > lo && mid < hi) {
            break;
        }
        if certified(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The smallest gamma in (0, 1) with `certified(gamma)`, for a predicate that is monotone
/// (false below some gamma*, true above): bisection, geometric while the bracket spans more
/// than a factor 4, to relative resolution 1e-9, returning the upper end, at which the
/// predicate was checked true. `None` if it is false just below 1.
pub(crate) fn smallest_certified_gamma(certified: impl Fn(f64) -> bool) -> Option<f64> {
    let mut hi = 1.0f64.next_down();
    if !certified(hi) {
        return None;
    }
    let mut lo = 0.0f64;
    while hi - lo > 1e-9 * hi && hi > f64::MIN_POSITIVE {
        let mid = if lo > 0.0 && hi / lo > 4.0 {
            lo.sqrt() * hi.sqrt()
        } else if lo == 0.0 && hi > 1e-6 {
            hi / 16.0
        } else {
            0.5 * (lo + hi)
        };
        if certified(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod krr_tests {
    use super::*;

    #[test]
    fn krr_is_never_more_private_than_asked() {
        for k in [2u64, 3, 10, 100, 1000] {
            for eps0 in [0.01, 0.5, 1.0, 2.0, 4.0, 8.0, 12.0] {
                let r = LocalRandomizer::krr(DomainSize::new(k).unwrap(), eps0);
                let LocalRandomizer::Grr { m, gamma } = r else {
                    panic!("krr builds GRR")
                };
                let local = (f64::from(m) * (1.0 - gamma) / gamma).ln_1p();
                assert!(local >= eps0, "k = {k}, eps0 = {eps0}: {local}");
                assert!(
                    local - eps0 < 1e-12 * eps0.max(1.0),
                    "k = {k}, eps0 = {eps0}: {local}"
                );
            }
        }
    }

    /// Issue 8, item 10: e^710 overflows; gamma used to become 0 and then, rounded down,
    /// negative. It must be a normal positive number with local privacy >= eps0, or the
    /// randomizer must fall back to the generic description.
    #[test]
    fn krr_at_overflowing_eps0_is_safe() {
        for k in [2u64, 100, 1 << 26] {
            for eps0 in [46.0, 100.0, 690.0, 700.0, 709.0, 710.0, 745.0, 1000.0, 1e4] {
                match LocalRandomizer::krr(DomainSize::new(k).unwrap(), eps0) {
                    LocalRandomizer::Grr { m, gamma } => {
                        assert!(
                            (f64::MIN_POSITIVE..1.0).contains(&gamma),
                            "{k} {eps0}: {gamma}"
                        );
                        assert!(grr_local_epsilon(m, gamma) >= eps0, "{k} {eps0}: {gamma}");
                    }
                    LocalRandomizer::Generic { eps0: e } => {
                        assert_eq!(e, eps0);
                        assert!(eps0 > 690.0, "{k} {eps0}: fell back too early");
                    }
                }
            }
        }
        // eps0 of a GRR with a tiny gamma is finite, and accountants refuse it with a typed
        // error instead of computing with e^eps0 = inf.
        let r = LocalRandomizer::Grr {
            m: 1 << 20,
            gamma: 1e-310,
        };
        assert!(r.eps0().is_finite());
        let n = NumUsers::new(1000).unwrap();
        let d = Delta::new(1e-6).unwrap();
        for method in [Method::GrrExact, Method::ClonesKrr, Method::Fmt21Numerical] {
            assert!(matches!(
                method.accountant().epsilon(&r, n, d),
                Err(AccountingError::NotApplicable { .. })
            ));
        }
    }
}

#[cfg(test)]
mod min_gamma_tests {
    use super::*;

    #[test]
    fn raise_until_certified_returns_only_checked_gammas() {
        // Accepted at the start: unchanged.
        assert_eq!(raise_until_certified(0.25, |g| g >= 0.2), Some(0.25));
        // Rejected at the start: the smallest accepted gamma to relative 1e-9, never below it.
        for (g0, t) in [(0.25, 0.3), (0.1, 0.1 * (1.0 + 1e-8)), (0.99, 0.999_999)] {
            let g = raise_until_certified(g0, |g| g >= t).unwrap();
            assert!(g >= t && g - t <= 2e-9 * t, "{g0} {t}: {g}");
        }
        // Never accepted below 1, or a gamma outside (0, 1): none.
        assert_eq!(raise_until_certified(0.5, |_| false), None);
        for bad in [0.0, 1.0, -0.5, f64::NAN] {
            assert_eq!(raise_until_certified(bad, |_| true), None);
        }
    }

    /// The calibrator states the target exactly only if `certify_at` accepts the gamma that
    /// `min_gamma` returns. grr-exact's own search used to accept with B-points carried over
    /// from a nearby gamma, a bound `certify_at` did not reproduce: vector sum d = 100, k = 4
    /// (m = 500), n = 1e5, and histogram m = 2^20, n = 2000, both at (1, 1e-6), were rejected.
    #[test]
    fn min_gamma_is_certified_at_the_target_by_certify_at() {
        let cases = [
            (500u64, 100_000u64, 1.0, 1e-6),
            (1 << 20, 2000, 1.0, 1e-6),
            (2, 2000, 0.5, 1e-8),
            (16, 1_000_000, 3.0, 1e-6),
        ];
        for (m, n, eps, delta) in cases {
            let md = DomainSize::new(m).unwrap();
            let nu = NumUsers::new(n).unwrap();
            let (e, d) = (Epsilon::new(eps).unwrap(), Delta::new(delta).unwrap());
            for method in best::CERTIFIED.into_iter().chain([Method::Best]) {
                let acct = method.accountant();
                let Ok(gamma) = acct.min_gamma(md, nu, e, d) else {
                    continue;
                };
                let r = LocalRandomizer::Grr { m: m as u32, gamma };
                assert!(
                    acct.certify_at(&r, nu, eps, delta).is_some(),
                    "{method}: m = {m}, n = {n}, ({eps}, {delta}): gamma = {gamma}"
                );
            }
        }
    }
}
