//! Summation of vectors in [0, 1]^d in the single-message shuffle model (Scott, Cormode,
//! Maple, "Applying the Shuffle Model of Differential Privacy to Vector Aggregation", BICOD
//! 2021, Algorithms 2 and 3; spec 02).
//!
//! Each user samples t of the d coordinates without replacement, rounds each sampled value
//! to {0, ..., k} (unbiased randomized rounding) and randomizes it with the privacy-blanket
//! GRR over the k + 1 levels; every message carries its coordinate in the clear (the
//! coordinate is chosen independently of the data). The analyzer debiases per coordinate.
//!
//! # Privacy, and how it maps onto one shuffled GRR instance
//!
//! * **t = 1 (exact reduction).** The randomizer's output law is
//!   `(1 - gamma) Law(J, xbar_J) + gamma Uniform({0..d-1} x {0..k})`, with J uniform: exactly
//!   GRR over the M = d (k + 1) pairs applied to the randomly pre-processed input
//!   (J, xbar_J). Coupling the pre-processing of two neighbouring datasets (same J's, same
//!   rounding coins for the other users) and using joint convexity of the hockey-stick
//!   divergence, the protocol is at least as private as n users running shuffled GRR over
//!   M = d (k + 1) values with the same gamma. So the requirement is
//!   `{m: d (k + 1), n, eps, delta}`. Under Theorem 3.1 (Balle et al. 2019) with the paper's
//!   m = k this is *exactly* Theorem 4.1's t = 1, eps < 1 formula:
//!   gamma = max(14 d k log(2/delta) / ((n-1) eps^2), 27 d k / ((n-1) eps)).
//! * **t >= 2 (conditioning on the sampled coordinates).** Given every user's coordinate set
//!   (data-independent), the view is a product of independent per-coordinate shuffled GRR
//!   instances over k + 1 values; the target user is in exactly t of them. The number of
//!   other users in one of its coordinates is Bin(n - 1, t/d); by the multiplicative
//!   Chernoff bound it is at least floor(mu - sqrt(2 mu log(4t/delta))), mu = (n-1) t/d,
//!   except with probability delta/(4t). So with delta split as delta/4 (tail, union over
//!   the t coordinates) + t * delta/(4t) (per instance) + delta/2 (advanced composition
//!   slack), the requirement is `{m: k + 1, n: that count + 1, eps', delta/(4t)}` where eps'
//!   is the largest per-instance epsilon whose t-fold composition (the better of basic and
//!   advanced composition, Dwork, Rothblum, Vadhan 2010) is at most eps, less a relative 2e-6
//!   (so that accountants reporting epsilon to 1e-6 resolution compose below eps). This does not
//!   reproduce the paper's t >= 2 constants (its proof counts more blanket than one view
//!   holds); the paper's formula is available as [`paper_gamma`] for reproduction only.
//!
//! Domain size: blanket accounts for the k + 1 message values each coordinate takes; the
//! paper writes k ([`DomainConvention::Paper`], reproduction only, not certified).

use super::DomainConvention;
use crate::accounting::{round_up, AccountingError, Guarantee, LocalRandomizer, ShuffleAccountant};
use crate::analyzer::{AggregateError, Aggregator, CoordinateMessage, CoordinateSums};
use crate::calibrate::{
    calibrate_near, Calibratable, Calibration, CalibrationError, Requirement, Target, VERIFY_RADIUS,
};
use crate::encode::{randomized_round, sample_coordinates};
use crate::params::{
    Delta, DomainSize, Epsilon, Gamma, NumUsers, ParamError, Precision, UnitValue,
};
use crate::randomizer::Grr;
use crate::rng::simulation_stream;
use crate::sample::uniform_u32;
use crate::shuffle::{Shuffler, UniformShuffler};
use rand_core::CryptoRng;
use rayon::prelude::*;
use serde::Serialize;
use thiserror::Error;

/// Largest supported dimension d (2^26): per-coordinate analyzer state stays under 2 GiB.
pub const MAX_DIMENSION: u32 = 1 << 26;

/// Bad vector input or parameters.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum VectorSumError {
    /// A parameter is out of range.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A vector has the wrong number of coordinates.
    #[error("vector {row}: expected d = {expected} coordinates, found {found}")]
    WrongLength {
        /// 0-based index of the vector.
        row: usize,
        /// The dimension d.
        expected: usize,
        /// Coordinates found.
        found: usize,
    },
    /// A coordinate is NaN or outside [0, 1].
    #[error("vector {row}, coordinate {column}: value must be a number in [0, 1], got {value}")]
    BadValue {
        /// 0-based index of the vector.
        row: usize,
        /// 0-based coordinate.
        column: usize,
        /// The rejected value.
        value: f64,
    },
}

/// Validates the dimension d (1 <= d <= 2^26).
pub fn check_dimension(d: u64) -> Result<u32, ParamError> {
    if (1..=u64::from(MAX_DIMENSION)).contains(&d) {
        Ok(d as u32)
    } else {
        Err(ParamError::OutOfRange {
            field: "d",
            allowed: "an integer from 1 to 67108864 (2^26)",
            value: d.to_string(),
        })
    }
}

/// Validates the number of sampled coordinates t (1 <= t <= d).
pub fn check_coordinates(t: u64, d: u32) -> Result<u32, ParamError> {
    if t >= 1 && t <= u64::from(d) {
        Ok(t as u32)
    } else {
        Err(ParamError::OutOfRange {
            field: "t",
            allowed: "an integer from 1 to d (the number of coordinates each user reports)",
            value: format!("{t} (d = {d})"),
        })
    }
}

/// n vectors in [0, 1]^d, validated once and stored row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitVectors {
    d: u32,
    values: Vec<UnitValue>,
}

impl UnitVectors {
    /// Validates the rows: each must have d coordinates in [0, 1] (NaN rejected); the error
    /// names the row and coordinate (0-based).
    pub fn new<I, V>(d: u64, rows: I) -> Result<Self, VectorSumError>
    where
        I: IntoIterator<Item = V>,
        V: AsRef<[f64]>,
    {
        let d = check_dimension(d)?;
        let mut values = Vec::new();
        for (row, v) in rows.into_iter().enumerate() {
            let v = v.as_ref();
            if v.len() != d as usize {
                return Err(VectorSumError::WrongLength {
                    row,
                    expected: d as usize,
                    found: v.len(),
                });
            }
            for (column, &x) in v.iter().enumerate() {
                values.push(UnitValue::new(x).map_err(|_| VectorSumError::BadValue {
                    row,
                    column,
                    value: x,
                })?);
            }
        }
        Ok(Self { d, values })
    }

    /// Validates a row-major flat buffer of n * d values.
    pub fn from_flat(d: u64, flat: &[f64]) -> Result<Self, VectorSumError> {
        let dd = check_dimension(d)? as usize;
        if !flat.len().is_multiple_of(dd) {
            return Err(VectorSumError::WrongLength {
                row: flat.len() / dd,
                expected: dd,
                found: flat.len() % dd,
            });
        }
        Self::new(d, flat.chunks(dd))
    }

    /// The dimension d.
    pub fn dimension(&self) -> u32 {
        self.d
    }

    /// Number of vectors n.
    pub fn len(&self) -> usize {
        self.values.len() / self.d as usize
    }

    /// Whether there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Vector i.
    #[inline]
    pub fn row(&self, i: usize) -> &[UnitValue] {
        let d = self.d as usize;
        &self.values[i * d..(i + 1) * d]
    }

    /// Iterates over the vectors.
    pub fn rows(&self) -> impl Iterator<Item = &[UnitValue]> {
        self.values.chunks(self.d as usize)
    }

    /// The exact mean vector (the ground truth of the mean estimate).
    pub fn mean(&self) -> Vec<f64> {
        let mut acc = vec![0.0; self.d as usize];
        for r in self.rows() {
            for (a, x) in acc.iter_mut().zip(r) {
                *a += x.get();
            }
        }
        let n = self.len().max(1) as f64;
        acc.iter().map(|a| a / n).collect()
    }

    /// The exact sum vector.
    pub fn sum(&self) -> Vec<f64> {
        let n = self.len() as f64;
        self.mean().into_iter().map(|m| m * n).collect()
    }

    /// Population variance of each coordinate, S_j^2.
    pub fn variance(&self) -> Vec<f64> {
        let mean = self.mean();
        let mut acc = vec![0.0; self.d as usize];
        for r in self.rows() {
            for ((a, x), m) in acc.iter_mut().zip(r).zip(&mean) {
                *a += (x.get() - m).powi(2);
            }
        }
        let n = self.len().max(1) as f64;
        acc.iter().map(|a| a / n).collect()
    }
}

/// Exact variance of y / k for one message of a coordinate holding s (spec 01/02, derived):
/// with f = frac(k s),
/// (1 - gamma) f (1 - f) / k^2 + gamma (k + 2) / (12 k) + gamma (1 - gamma) (s - 1/2)^2.
pub fn message_variance(s: f64, k: Precision, gamma: Gamma) -> f64 {
    let kf = f64::from(k.get());
    let g = gamma.get();
    let sk = s * kf;
    let f = sk - sk.floor();
    (1.0 - g) * f * (1.0 - f) / (kf * kf)
        + g * (kf + 2.0) / (12.0 * kf)
        + g * (1.0 - g) * (s - 0.5).powi(2)
}

/// The largest [`message_variance`] over s in [0, 1], exactly (per rounding cell the variance
/// is a concave quadratic in the fractional part; see `ScalarSum::worst_message_variance`).
pub fn worst_message_variance(k: Precision, gamma: Gamma) -> f64 {
    super::ScalarSum::new(k, gamma).worst_message_variance()
}

/// Advanced composition (Dwork, Rothblum, Vadhan 2010, as Theorem 4.2 of Scott et al.):
/// t mechanisms, each (eps1, delta1)-DP, compose to
/// (sqrt(2 t log(1/delta_hat)) eps1 + t eps1 (e^eps1 - 1), t delta1 + delta_hat); basic
/// composition gives (t eps1, t delta1). Returns the smaller epsilon, rounded up.
pub fn compose_epsilon(eps1: f64, t: u32, delta_hat: f64) -> f64 {
    let tf = f64::from(t);
    if t <= 1 {
        return eps1;
    }
    let basic = tf * eps1;
    let advanced = (2.0 * tf * (1.0 / delta_hat).ln()).sqrt() * eps1 + tf * eps1 * eps1.exp_m1();
    round_up(basic.min(advanced), 8)
}

/// The largest per-instance epsilon whose t-fold composition ([`compose_epsilon`]) is at most
/// `eps` (bisection, returning the certified lower end).
pub fn per_message_epsilon(eps: f64, t: u32, delta_hat: f64) -> f64 {
    if t <= 1 {
        return eps;
    }
    let (mut lo, mut hi) = (0.0f64, eps);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if compose_epsilon(mid, t, delta_hat) <= eps {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-15 * hi {
            break;
        }
    }
    lo
}

/// For t >= 2: a number of users (the target included) that each of the target's t sampled
/// coordinates has except with probability `tail`: 1 + floor(mu - sqrt(2 mu log(1/tail)))
/// with mu = (n - 1) t / d (multiplicative Chernoff lower tail,
/// Pr[X <= (1 - eta) mu] <= exp(-eta^2 mu / 2)), rounded down. `None` if it is below 2.
pub fn coordinate_users_lower_bound(n: NumUsers, d: u32, t: u32, tail: f64) -> Option<NumUsers> {
    let mu = (n.get() - 1) as f64 * f64::from(t) / f64::from(d);
    let x = mu - (2.0 * mu * (1.0 / tail).ln()).sqrt();
    // Every step above is within a few ulps; shave a relative 1e-12 before flooring.
    let others = (x * (1.0 - 1e-12)).floor();
    if others.is_nan() || others < 1.0 {
        return None;
    }
    NumUsers::new(others as u64 + 1).ok()
}

/// The vector-sum protocol's shape for calibration at a fixed t.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorSumShape {
    /// Dimension d.
    pub d: u32,
    /// Coordinates each user reports, 1 <= t <= d.
    pub t: u32,
    /// A fixed precision k, or `None` to choose k minimizing the predicted error.
    pub k: Option<Precision>,
    /// Which domain size the accountant is told.
    pub convention: DomainConvention,
}

impl VectorSumShape {
    /// Validates d and t.
    pub fn new(
        d: u64,
        t: u64,
        k: Option<Precision>,
        convention: DomainConvention,
    ) -> Result<Self, ParamError> {
        let d = check_dimension(d)?;
        let t = check_coordinates(t, d)?;
        Ok(Self {
            d,
            t,
            k,
            convention,
        })
    }

    /// Message values per coordinate the accountant is told (k + 1, or k for the paper).
    fn levels(&self, k: Precision) -> Result<u64, ParamError> {
        match self.convention {
            DomainConvention::TrueDomain => Ok(u64::from(k.get()) + 1),
            DomainConvention::Paper if k.get() >= 2 || self.t == 1 => Ok(u64::from(k.get())),
            DomainConvention::Paper => Err(ParamError::OutOfRange {
                field: "k",
                allowed: "at least 2 with the paper's m = k convention (m = 1 is no domain)",
                value: k.get().to_string(),
            }),
        }
    }

    fn pairs(&self, levels: u64) -> Result<DomainSize, ParamError> {
        DomainSize::new(u64::from(self.d) * levels).map_err(|_| ParamError::OutOfRange {
            field: "d",
            allowed: "such that d * (k + 1) message pairs stay within 2^26 (lower d or k)",
            value: self.d.to_string(),
        })
    }
}

/// The delta split for t >= 2: (per-instance delta, composition slack, Chernoff tail).
fn delta_split(delta: f64, t: u32) -> (f64, f64, f64) {
    (
        delta / (4.0 * f64::from(t)),
        delta / 2.0,
        delta / (4.0 * f64::from(t)),
    )
}

impl Calibratable for VectorSumShape {
    type Choice = Precision;

    fn choices(&self, target: &Target) -> Vec<Precision> {
        if let Some(k) = self.k {
            return vec![k];
        }
        // Section 4.5's asymptotic optimum k* = (n eps^2 / (28 d log(2/delta)))^(1/3) (t = 1,
        // eps < 1); scan from the smallest k to well past it, the calibrator stops early.
        let e = target.eps.get().min(1.0);
        let k_star = (target.n.get() as f64 * f64::from(self.t) * e * e
            / (28.0 * f64::from(self.d) * (2.0 / target.delta.get()).ln()))
        .cbrt();
        let k_max = (4.0 * k_star + 64.0).min(f64::from(DomainSize::MAX - 2)) as u64;
        let first = match self.convention {
            DomainConvention::Paper if self.t >= 2 => 2,
            _ => 1,
        };
        (first..=k_max)
            .filter_map(|k| Precision::new(k).ok())
            .collect()
    }

    fn requirement(&self, k: Precision, target: &Target) -> Result<Requirement, ParamError> {
        let levels = self.levels(k)?;
        if self.t == 1 {
            return Ok(Requirement {
                m: self.pairs(levels)?,
                n: target.n,
                eps: target.eps,
                delta: target.delta,
            });
        }
        let (d1, dh, tail) = delta_split(target.delta.get(), self.t);
        let n1 = coordinate_users_lower_bound(target.n, self.d, self.t, tail).ok_or(
            ParamError::OutOfRange {
                field: "n",
                allowed: "large enough that each coordinate is reported by at least 2 users with probability 1 - delta/4 (raise n or lower d, or use t = 1)",
                value: target.n.get().to_string(),
            },
        )?;
        Ok(Requirement {
            m: DomainSize::new(levels)?,
            n: n1,
            // A relative margin of 2e-6 so that an accountant reporting epsilon to 1e-6
            // relative resolution (upper end) still composes to at most the target.
            eps: Epsilon::new(per_message_epsilon(target.eps.get(), self.t, dh) * (1.0 - 2e-6))?,
            delta: Delta::new(d1)?,
        })
    }

    fn instance(&self, k: Precision, gamma: Gamma, target: &Target) -> (LocalRandomizer, NumUsers) {
        if self.t == 1 {
            let m = u64::from(self.d) * (u64::from(k.get()) + 1);
            return (
                LocalRandomizer::Grr {
                    m: m.min(u64::from(u32::MAX)) as u32,
                    gamma: gamma.get(),
                },
                target.n,
            );
        }
        let (_, _, tail) = delta_split(target.delta.get(), self.t);
        let n1 = coordinate_users_lower_bound(target.n, self.d, self.t, tail).unwrap_or(target.n);
        (
            LocalRandomizer::Grr {
                m: k.levels().get(),
                gamma: gamma.get(),
            },
            n1,
        )
    }

    fn predicted_mse(&self, k: Precision, gamma: Gamma, n: NumUsers) -> f64 {
        VectorSum {
            d: self.d,
            t: self.t,
            k,
            grr: Grr::new(k.levels(), gamma),
        }
        .worst_case_mean_mse(n.get())
    }
}

/// How many consecutive worse t end the search over t.
pub const T_PATIENCE: usize = 3;

/// How many t candidates are calibrated at once (in parallel); fixed, so that the result does
/// not depend on the number of threads.
const T_CHUNK: usize = 2;

/// Candidate t for calibration: 1 to 8, then steps of about 25% up to d (the predicted error
/// changes slowly in t, and each t is a full calibration over k).
fn t_candidates(d: u32) -> Vec<u32> {
    let mut ts: Vec<u32> = (1..=d.min(8)).collect();
    let mut t = 8u32;
    while t < d {
        t = (t + t.div_ceil(4)).min(d);
        ts.push(t);
    }
    ts
}

/// The vector-sum protocol with fixed parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorSum {
    d: u32,
    t: u32,
    k: Precision,
    grr: Grr,
}

/// The analyzer's estimates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VectorSumEstimate {
    /// Estimated mean vector: m_hat[j] = DeBias(z_j) / n_j; **0.5** (the midpoint of [0, 1],
    /// the minimax guess) for a coordinate that received no report, listed in `unreported`.
    pub mean: Vec<f64>,
    /// Estimated sum vector: s_hat[j] = (d / t) DeBias(z_j), unbiased for sum_i x_i[j]
    /// (0 for an unreported coordinate, which is what the formula gives).
    pub sum: Vec<f64>,
    /// Reports per coordinate, n_j.
    pub reports: Vec<u64>,
    /// Coordinates with no report (their mean estimate is the fallback 0.5).
    pub unreported: Vec<u32>,
}

/// How a calibrated vector-sum protocol was certified.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VectorCalibration {
    /// Coordinates per user.
    pub t: u32,
    /// Precision.
    pub k: Precision,
    /// Blanket probability (rounded up).
    pub gamma: Gamma,
    /// The requirement on one shuffled GRR instance that was calibrated.
    pub requirement: Requirement,
    /// The generic calibration of that instance.
    pub instance: Calibration<Precision>,
    /// The guarantee of the whole protocol users really run (after composition for t >= 2),
    /// `None` if the accountant certifies none (e.g. the paper's m = k convention).
    pub certified: Option<Guarantee>,
    /// Predicted worst-case MSE of the mean vector (summed over coordinates).
    pub predicted_mse: f64,
}

/// Calibration of the vector-sum protocol failed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum VectorCalibrationError {
    /// A parameter is out of range.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// No t and k reach the target.
    #[error("{}", infeasible_message(.reason, *.min_n, *.max_d, *.d))]
    Infeasible {
        /// The calibrator's reason (for t = 1, or the fixed t).
        reason: CalibrationError,
        /// Smallest n that would work at this d, eps, delta.
        min_n: Option<u64>,
        /// Largest d that would work at this n, eps, delta.
        max_d: Option<u32>,
        /// The dimension asked for.
        d: u32,
    },
}

fn infeasible_message(
    reason: &CalibrationError,
    min_n: Option<u64>,
    max_d: Option<u32>,
    d: u32,
) -> String {
    let reason = match reason {
        CalibrationError::Infeasible { reason, .. } => reason.to_string(),
        other => other.to_string(),
    };
    let mut s =
        format!("no blanket probability gamma < 1 certifies the target for d = {d} ({reason})");
    match min_n {
        Some(n) => s.push_str(&format!("; the smallest n that works is {n}")),
        None => s.push_str("; no n up to 2^48 works"),
    }
    match max_d {
        Some(m) => s.push_str(&format!(", or keep n and lower d to at most {m}")),
        None => s.push_str(", and no d >= 1 works at this n"),
    }
    s
}

/// The paper's closed-form gamma was >= 1 (or the paper's theorem does not apply).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PaperGammaError {
    /// A parameter is out of range.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The theorem covers eps < 6 only.
    #[error("Theorem 4.1 of Scott et al. covers eps < 6, got eps = {0}")]
    EpsilonTooLarge(f64),
    /// gamma >= 1: no guarantee.
    #[error("Theorem 4.1 gives gamma = {gamma:.4} >= 1 (no guarantee); the smallest n that works is {min_n}, or keep n and lower d to at most {max_d}")]
    TooSmall {
        /// The formula's gamma.
        gamma: f64,
        /// Smallest n with gamma < 1.
        min_n: u64,
        /// Largest d with gamma < 1 (0 if none).
        max_d: u64,
    },
}

/// Theorem 4.1 and Section 4.5 of Scott et al. 2021 (spec 02; constants checked against the
/// authors' code), with `levels` the domain factor (the paper's k, or blanket's safe k + 1),
/// L = log(1/delta) log(2t/delta):
/// * t >= 2: eps < 1: 56 d k L / ((n-1) eps^2); 1 <= eps < 6: 2016 d k L / ((n-1) eps^2);
/// * t = 1: eps < 1: max(14 d k log(2/delta) / ((n-1) eps^2), 27 d k / ((n-1) eps));
///   1 <= eps < 6: max(80 d k log(2/delta) / ((n-1) eps^2), 36 d k / (11 (n-1) eps)).
///
/// Returns the raw value (possibly >= 1), rounded up. For reproduction: blanket certifies
/// guarantees through [`VectorSum::certify`], not through this formula.
pub fn paper_gamma_raw(
    n: u64,
    d: u32,
    levels: u32,
    t: u32,
    eps: f64,
    delta: f64,
) -> Result<f64, PaperGammaError> {
    if eps.is_nan() || eps >= 6.0 {
        return Err(PaperGammaError::EpsilonTooLarge(eps));
    }
    let e = Epsilon::new(eps)?.get();
    let dl = Delta::new(delta)?.get();
    let n1 = (NumUsers::new(n)?.get() - 1) as f64;
    let dk = f64::from(d) * f64::from(levels);
    let g = if t >= 2 {
        let l = (1.0 / dl).ln() * (2.0 * f64::from(t) / dl).ln();
        let c = if e < 1.0 { 56.0 } else { 2016.0 };
        c * dk * l / (n1 * e * e)
    } else if e < 1.0 {
        (14.0 * dk * (2.0 / dl).ln() / (n1 * e * e)).max(27.0 * dk / (n1 * e))
    } else {
        (80.0 * dk * (2.0 / dl).ln() / (n1 * e * e)).max(36.0 * dk / (11.0 * n1 * e))
    };
    Ok(round_up(g, 8))
}

/// [`paper_gamma_raw`] checked to be < 1; otherwise an error naming the smallest n and the
/// largest d that would give gamma < 1 (gamma is proportional to d and to 1/(n - 1)).
pub fn paper_gamma(
    n: u64,
    d: u32,
    levels: u32,
    t: u32,
    eps: f64,
    delta: f64,
) -> Result<Gamma, PaperGammaError> {
    let g = paper_gamma_raw(n, d, levels, t, eps, delta)?;
    if g < 1.0 {
        return Ok(Gamma::new(g)?);
    }
    // gamma = C / (n - 1): smallest n with C / (n - 1) < 1 is floor(C) + 2.
    let c = g * (n - 1) as f64;
    let min_n = c.floor() as u64 + 2;
    // gamma = C' d: largest d with C' d < 1.
    let per_d = g / f64::from(d);
    let max_d = ((1.0 / per_d).ceil() as u64).saturating_sub(1);
    Err(PaperGammaError::TooSmall {
        gamma: g,
        min_n,
        max_d,
    })
}

/// The paper's accuracy bounds on the normalized MSE (the squared error of the mean vector
/// summed over coordinates), spec 02:
/// * Theorem 4.6 (any t): eps < 1: 2 t d^(8/3) (14 L)^(2/3) / ((1-gamma)^2 n^(5/3) eps^(4/3));
///   1 <= eps < 6: 8 t d^(8/3) (63 L)^(2/3) / (...);
/// * Section 4.5 (t = 1), D = (1 - gamma)^2 n^(5/3): eps < 1:
///   max(98^(1/3) d^(8/3) log^(2/3)(2/delta) / (D eps^(4/3)), 18 d^(8/3) / (D (4 eps)^(2/3)));
///   1 <= eps < 6: max(2 d^(8/3) (20 log(2/delta))^(2/3) / (D eps^(4/3)),
///   2 9^(2/3) d^(8/3) / (D (11 eps)^(2/3))) -- with the authors' code's precedence slip
///   20 * log(2/delta)^(2/3) corrected to (20 log(2/delta))^(2/3).
pub fn paper_mse_bound(n: u64, d: u32, t: u32, eps: f64, delta: f64, gamma: f64) -> f64 {
    let (n, d, tf) = (n as f64, f64::from(d), f64::from(t));
    let denom = (1.0 - gamma).powi(2) * n.powf(5.0 / 3.0);
    let d83 = d.powf(8.0 / 3.0);
    let lg = (2.0 / delta).ln();
    if t >= 2 {
        let l = (1.0 / delta).ln() * (2.0 * tf / delta).ln();
        let (c, a) = if eps < 1.0 { (2.0, 14.0) } else { (8.0, 63.0) };
        c * tf * d83 * (a * l).powf(2.0 / 3.0) / (denom * eps.powf(4.0 / 3.0))
    } else if eps < 1.0 {
        (98f64.cbrt() * d83 * lg.powf(2.0 / 3.0) / (denom * eps.powf(4.0 / 3.0)))
            .max(18.0 * d83 / (denom * (4.0 * eps).powf(2.0 / 3.0)))
    } else {
        (2.0 * d83 * (20.0 * lg).powf(2.0 / 3.0) / (denom * eps.powf(4.0 / 3.0)))
            .max(2.0 * 9f64.powf(2.0 / 3.0) * d83 / (denom * (11.0 * eps).powf(2.0 / 3.0)))
    }
}

/// Section 4.5's asymptotically optimal k for t = 1 (spec 02), at least 1.
pub fn paper_k(n: u64, d: u32, eps: f64, delta: f64) -> f64 {
    let (n, d) = (n as f64, f64::from(d));
    let lg = (2.0 / delta).ln();
    let k = if eps < 1.0 {
        (n * eps * eps / (28.0 * d * lg))
            .cbrt()
            .min((n * eps / (54.0 * d)).cbrt())
    } else {
        (n * eps * eps / (160.0 * d * lg))
            .cbrt()
            .min((11.0 * n * eps / (72.0 * d)).cbrt())
    };
    k.max(1.0)
}

impl VectorSum {
    /// The protocol for dimension d, t coordinates per user, precision k, blanket
    /// probability gamma (GRR over k + 1 levels per coordinate).
    pub fn new(d: u64, t: u64, k: Precision, gamma: Gamma) -> Result<Self, ParamError> {
        let d = check_dimension(d)?;
        let t = check_coordinates(t, d)?;
        Ok(Self {
            d,
            t,
            k,
            grr: Grr::new(k.levels(), gamma),
        })
    }

    /// Calibrates gamma (and k, and t, unless fixed) for the target with a certified
    /// guarantee, minimizing the predicted worst-case error: for each t (1 to 8, then steps of
    /// about 25% up to d, stopping at the first infeasible t or after [`T_PATIENCE`] worse
    /// ones) the generic calibrator picks k and gamma.
    pub fn calibrate(
        d: u64,
        t: Option<u64>,
        k: Option<Precision>,
        convention: DomainConvention,
        target: &Target,
        accountant: &dyn ShuffleAccountant,
    ) -> Result<(Self, VectorCalibration), VectorCalibrationError> {
        let d = check_dimension(d)?;
        let ts: Vec<u32> = match t {
            Some(t) => vec![check_coordinates(t, d)?],
            None => t_candidates(d),
        };
        // The t are calibrated in chunks of `T_CHUNK` in parallel (one at a time until one is
        // feasible), and the results taken in order with the stopping rule above (a chunk may
        // compute a t past the stop, which is discarded, so the result does not depend on the
        // number of threads). Each t's
        // search over k starts at the optimum of the previous chunk's last feasible t (it
        // moves little with t) and verifies one k either side; the winning t is then searched
        // again with the full verification radius (which can only improve it) and alone
        // certified with `certify_target`. The smallest feasible n is computed only for the
        // error that may be reported.
        let mut best: Option<(u32, (Calibration<Precision>, usize))> = None;
        let mut first_err = None;
        let mut worse = 0;
        let mut hint = None;
        let mut next = 0;
        'chunks: while next < ts.len() {
            // one t at a time until a feasible t gives the others a starting point
            let size = if hint.is_some() { T_CHUNK } else { 1 };
            let chunk = &ts[next..(next + size).min(ts.len())];
            next += chunk.len();
            let want_min_n = best.is_none() && first_err.is_none();
            let results: Vec<_> = chunk
                .par_iter()
                .enumerate()
                .map(|(j, &t)| {
                    let shape = VectorSumShape {
                        d,
                        t,
                        k,
                        convention,
                    };
                    calibrate_near(&shape, target, accountant, hint, 1, want_min_n && j == 0)
                })
                .collect();
            for (&t, result) in chunk.iter().zip(results) {
                let cal = match result {
                    Ok((c, idx)) => {
                        hint = Some(idx);
                        (c, idx)
                    }
                    Err(e) => {
                        if best.is_some() {
                            break 'chunks;
                        }
                        first_err.get_or_insert(e);
                        continue;
                    }
                };
                match &best {
                    Some((_, (b, _))) if b.predicted_mse <= cal.0.predicted_mse => {
                        worse += 1;
                        if worse >= T_PATIENCE {
                            break 'chunks;
                        }
                    }
                    _ => {
                        best = Some((t, cal));
                        worse = 0;
                    }
                }
            }
        }
        if let Some((t, (cal, idx))) = best {
            let shape = VectorSumShape {
                d,
                t,
                k,
                convention,
            };
            let cal =
                match calibrate_near(&shape, target, accountant, Some(idx), VERIFY_RADIUS, false) {
                    Ok((c, _)) if c.predicted_mse < cal.predicted_mse => c,
                    _ => cal,
                };
            let requirement = shape.requirement(cal.choice, target)?;
            let p = Self {
                d,
                t,
                k: cal.choice,
                grr: Grr::new(cal.choice.levels(), cal.gamma),
            };
            let vc = VectorCalibration {
                t,
                k: cal.choice,
                gamma: cal.gamma,
                requirement,
                instance: cal,
                certified: p.certify_target(target.n, target.delta, Some(target.eps), accountant),
                predicted_mse: cal.predicted_mse,
            };
            return Ok((p, vc));
        }
        let reason = first_err.unwrap_or(CalibrationError::Infeasible {
            reason: AccountingError::NotApplicable {
                method: accountant.method(),
                reason: "no t was offered".into(),
            },
            min_n: None,
        });
        let t1 = ts.first().copied().unwrap_or(1);
        let feasible = |dd: u32, n: NumUsers| {
            let shape = VectorSumShape {
                d: dd,
                t: t1.min(dd),
                k,
                convention,
            };
            calibrate_near(&shape, &Target { n, ..*target }, accountant, None, 1, false).is_ok()
        };
        let min_n = match &reason {
            CalibrationError::Infeasible { min_n, .. } => *min_n,
            _ => None,
        };
        // Largest d: feasibility is monotone (smaller d, fewer pairs or more users per
        // coordinate); bisection over [1, d).
        let max_d = if feasible(1, target.n) {
            let (mut lo, mut hi) = (1u32, d);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if feasible(mid, target.n) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            Some(lo)
        } else {
            None
        };
        Err(VectorCalibrationError::Infeasible {
            reason,
            min_n,
            max_d,
            d,
        })
    }

    /// The guarantee of this protocol (the randomizer users really run: GRR over k + 1
    /// levels) for n users at `delta`, certified by `accountant` through the reductions in the
    /// module documentation; `None` if the accountant certifies none.
    pub fn certify(
        &self,
        n: NumUsers,
        delta: Delta,
        accountant: &dyn ShuffleAccountant,
    ) -> Option<Guarantee> {
        self.certify_target(n, delta, None, accountant)
    }

    /// Like [`VectorSum::certify`]; when `target_eps` is given and the accountant's curve
    /// certifies it exactly (delta(target) <= delta), the guarantee states the target itself
    /// rather than the upper end of the accountant's epsilon search (which can exceed it by
    /// the search's resolution). The method named is the one that certified.
    pub fn certify_target(
        &self,
        n: NumUsers,
        delta: Delta,
        target_eps: Option<Epsilon>,
        accountant: &dyn ShuffleAccountant,
    ) -> Option<Guarantee> {
        let g = self.grr.gamma().get();
        // One shuffled GRR instance: its certified guarantee, tightened to `want` if the
        // curve certifies `want` exactly.
        let instance = |r: LocalRandomizer, users: NumUsers, d: Delta, want: Option<f64>| {
            let mut out = accountant.guarantee(&r, users, d).ok()?;
            if let Some(w) = want.filter(|&w| out.epsilon > w) {
                if let Some(method) = accountant.certify_at(&r, users, w, d.get()) {
                    out = Guarantee {
                        epsilon: w,
                        delta: d.get(),
                        method,
                    };
                }
            }
            Some(out)
        };
        if self.t == 1 {
            let m = u64::from(self.d) * (u64::from(self.k.get()) + 1);
            let m = u32::try_from(m).ok()?;
            let r = LocalRandomizer::Grr { m, gamma: g };
            return instance(r, n, delta, target_eps.map(Epsilon::get));
        }
        let (d1, dh, tail) = delta_split(delta.get(), self.t);
        let n1 = coordinate_users_lower_bound(n, self.d, self.t, tail)?;
        let r = LocalRandomizer::Grr {
            m: self.k.levels().get(),
            gamma: g,
        };
        let want = target_eps.map(|e| per_message_epsilon(e.get(), self.t, dh) * (1.0 - 2e-6));
        let one = instance(r, n1, Delta::new(d1).ok()?, want)?;
        Some(Guarantee {
            epsilon: compose_epsilon(one.epsilon, self.t, dh),
            delta: delta.get(),
            method: one.method,
        })
    }

    /// Dimension d.
    pub fn d(&self) -> u32 {
        self.d
    }

    /// Coordinates per user t.
    pub fn t(&self) -> u32 {
        self.t
    }

    /// Precision k.
    pub fn k(&self) -> Precision {
        self.k
    }

    /// Blanket probability gamma.
    pub fn gamma(&self) -> Gamma {
        self.grr.gamma()
    }

    /// The per-coordinate randomizer (GRR over the k + 1 levels).
    pub fn randomizer(&self) -> &Grr {
        &self.grr
    }

    /// Client side: validates x (length d, every coordinate in [0, 1]) and returns its t
    /// messages.
    pub fn randomize<R: CryptoRng + ?Sized>(
        &self,
        x: &[f64],
        rng: &mut R,
    ) -> Result<Vec<CoordinateMessage>, VectorSumError> {
        let row = UnitVectors::new(u64::from(self.d), [x])?;
        let mut out = Vec::with_capacity(self.t as usize);
        let mut scratch = Vec::new();
        self.randomize_row(row.row(0), rng, &mut scratch, |m| out.push(m));
        Ok(out)
    }

    /// Client side for a validated row of length d (see [`UnitVectors`]): emits the t
    /// messages. Allocation-free for t = 1; for t >= 2 `scratch` is resized to t once and
    /// reused across calls.
    #[inline]
    pub fn randomize_row<R: CryptoRng + ?Sized, F: FnMut(CoordinateMessage)>(
        &self,
        x: &[UnitValue],
        rng: &mut R,
        scratch: &mut Vec<u32>,
        mut emit: F,
    ) {
        debug_assert_eq!(x.len(), self.d as usize);
        if self.t == 1 {
            let j = uniform_u32(rng, self.d);
            if let Some(&v) = x.get(j as usize) {
                emit((j, self.scalar(v, rng)));
            }
            return;
        }
        scratch.resize(self.t as usize, 0);
        if sample_coordinates(self.d, scratch, rng).is_some() {
            for &j in scratch.iter() {
                if let Some(&v) = x.get(j as usize) {
                    emit((j, self.scalar(v, rng)));
                }
            }
        }
    }

    #[inline]
    fn scalar<R: CryptoRng + ?Sized>(&self, v: UnitValue, rng: &mut R) -> u32 {
        let level = randomized_round(v, self.k, rng);
        self.grr.randomize_in_domain(level, rng)
    }

    /// An empty analyzer state.
    pub fn aggregator(&self) -> CoordinateSums {
        CoordinateSums::new(self.d, self.k.get())
    }

    /// The debiased estimates (Algorithm 3): per coordinate j with n_j reports and
    /// z_j = (1/k) sum of their values, DeBias(z_j) = (z_j - gamma n_j / 2) / (1 - gamma).
    pub fn estimate(&self, state: &CoordinateSums) -> Result<VectorSumEstimate, AggregateError> {
        if state.max() != self.k.get() || state.dimension() != self.d {
            return Err(AggregateError::ShapeMismatch {
                left: u64::from(self.d) * (u64::from(self.k.get()) + 1),
                right: u64::from(state.dimension()) * (u64::from(state.max()) + 1),
            });
        }
        let g = self.grr.gamma().get();
        let kf = f64::from(self.k.get());
        let scale = f64::from(self.d) / f64::from(self.t);
        let mut est = VectorSumEstimate {
            mean: Vec::with_capacity(self.d as usize),
            sum: Vec::with_capacity(self.d as usize),
            reports: state.counts().to_vec(),
            unreported: Vec::new(),
        };
        for (j, (&c, &s)) in state.counts().iter().zip(state.sums()).enumerate() {
            let z = s as f64 / kf;
            let debiased = (z - g * c as f64 / 2.0) / (1.0 - g);
            est.sum.push(scale * debiased);
            if c == 0 {
                est.mean.push(0.5);
                est.unreported.push(j as u32);
            } else {
                est.mean.push(debiased / c as f64);
            }
        }
        Ok(est)
    }

    /// One simulated run on `data` (reproducible: users are cut into chunks of
    /// [`crate::simulate::CHUNK`], each with its own ChaCha20 stream derived from (seed,
    /// repetition, chunk), so the result does not depend on the number of threads). With
    /// `shuffle`, the messages are collected and permuted by the uniform shuffler first
    /// (the analyzer is order-free, so the estimate is the same either way).
    pub fn simulate(
        &self,
        data: &UnitVectors,
        seed: u64,
        repetition: u32,
        shuffle: bool,
    ) -> Result<CoordinateSums, AggregateError> {
        if data.dimension() != self.d {
            return Err(AggregateError::ShapeMismatch {
                left: u64::from(self.d),
                right: u64::from(data.dimension()),
            });
        }
        const CHUNK: usize = crate::simulate::CHUNK;
        let users = data.len();
        let chunks = users.div_ceil(CHUNK);
        let stream = |c: usize| (u64::from(repetition) << 32) | c as u64;
        let merge = |a: Result<CoordinateSums, AggregateError>,
                     b: Result<CoordinateSums, AggregateError>| {
            let mut a = a?;
            a.merge(b?)?;
            Ok(a)
        };
        if !shuffle {
            return (0..chunks)
                .into_par_iter()
                .map(|c| {
                    let mut rng = simulation_stream(seed, stream(c));
                    let mut state = self.aggregator();
                    let mut scratch = Vec::new();
                    let mut res = Ok(());
                    for i in c * CHUNK..((c + 1) * CHUNK).min(users) {
                        self.randomize_row(data.row(i), &mut rng, &mut scratch, |m| {
                            if res.is_ok() {
                                res = state.absorb(m);
                            }
                        });
                    }
                    res.map(|()| state)
                })
                .reduce(|| Ok(self.aggregator()), merge);
        }
        let t = self.t as usize;
        let mut messages = vec![(0u32, 0u32); users * t];
        messages
            .par_chunks_mut(CHUNK * t)
            .enumerate()
            .for_each(|(c, out)| {
                let mut rng = simulation_stream(seed, stream(c));
                let mut scratch = Vec::new();
                for (u, slots) in out.chunks_mut(t).enumerate() {
                    let mut idx = 0;
                    self.randomize_row(data.row(c * CHUNK + u), &mut rng, &mut scratch, |m| {
                        if let Some(s) = slots.get_mut(idx) {
                            *s = m;
                        }
                        idx += 1;
                    });
                }
            });
        let mut shuffle_rng = simulation_stream(seed, u64::MAX - u64::from(repetition));
        UniformShuffler.shuffle(&mut messages, &mut shuffle_rng);
        messages
            .par_chunks(CHUNK)
            .map(|part| {
                let mut state = self.aggregator();
                state.absorb_all(part)?;
                Ok(state)
            })
            .reduce(|| Ok(self.aggregator()), merge)
    }

    /// Expected number of reports per coordinate, c = n t / d.
    fn reports_per_coordinate(&self, n: u64) -> f64 {
        n as f64 * f64::from(self.t) / f64::from(self.d)
    }

    /// Exact predicted error of the mean estimate for this data (spec 02, derived), summed
    /// over coordinates: with c = n t / d expected reports per coordinate,
    /// sum_j [ mean_i Var_ij / ((1 - gamma)^2 c) + (1 - c/n) S_j^2 / c ],
    /// where Var_ij is [`message_variance`] of x_i[j] and S_j^2 the population variance of
    /// coordinate j (the second term is the sampling error of reporting t of d coordinates).
    /// It uses E[n_j] = c in place of E[1/n_j] (relative error about d/(n t)).
    pub fn exact_mean_mse(&self, data: &UnitVectors) -> f64 {
        let n = data.len() as u64;
        let c = self.reports_per_coordinate(n);
        let g = self.grr.gamma();
        let mut var = vec![0.0; self.d as usize];
        for r in data.rows() {
            for (a, x) in var.iter_mut().zip(r) {
                *a += message_variance(x.get(), self.k, g);
            }
        }
        let s2 = data.variance();
        let one_g = (1.0 - g.get()).powi(2);
        var.iter()
            .zip(&s2)
            .map(|(v, s)| v / n as f64 / (one_g * c) + (1.0 - c / n as f64) * s / c)
            .sum()
    }

    /// Worst case over data of n users of the predicted mean-vector error: every term of
    /// [`VectorSum::exact_mean_mse`] at its maximum (message variance at its worst value,
    /// S_j^2 = 1/4).
    pub fn worst_case_mean_mse(&self, n: u64) -> f64 {
        let c = self.reports_per_coordinate(n);
        let g = self.grr.gamma();
        let v = worst_message_variance(self.k, g);
        f64::from(self.d) * (v / ((1.0 - g.get()).powi(2) * c) + (1.0 - c / n as f64) / (4.0 * c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::BlanketTheorem31;
    use crate::rng::simulation_rng;

    fn target(n: u64, eps: f64, delta: f64) -> Target {
        Target {
            eps: Epsilon::new(eps).unwrap(),
            delta: Delta::new(delta).unwrap(),
            n: NumUsers::new(n).unwrap(),
        }
    }

    #[test]
    fn paper_gamma_reference_and_hand_values() {
        // Spec reference: n = 50000, d = 100, k = 3 (paper m = k), eps = 0.95, delta = 0.5,
        // t = 1: 27 * 300 / (49999 * 0.95) = 8100 / 47499.05 = 0.170529726...
        let g = paper_gamma_raw(50_000, 100, 3, 1, 0.95, 0.5).unwrap();
        assert!((g - 0.1705297).abs() < 5e-8, "{g}");
        assert!(g >= 8100.0 / 47_499.05);
        // Safe domain k + 1 = 4: 10800 / 47499.05 = 0.22737296...
        let g = paper_gamma_raw(50_000, 100, 4, 1, 0.95, 0.5).unwrap();
        assert!((g - 0.227_372_97).abs() < 1e-8, "{g}");
        // t = 1, eps < 1, log branch: n = 1e6 + 1, d = 10, k = 4, eps = 0.5, delta = 1e-6:
        // 14 * 40 * ln(2e6) / (1e6 * 0.25) = 560 * 14.508657738524219 / 250000 = 0.032499393...
        let g = paper_gamma_raw(1_000_001, 10, 4, 1, 0.5, 1e-6).unwrap();
        let hand = 560.0 * 14.508_657_738_524_219 / 250_000.0;
        assert!(g >= hand && (g - hand) / hand < 1e-14, "{g} vs {hand}");
        // t = 1, 1 <= eps < 6: n = 1e6 + 1, d = 10, k = 4, eps = 2, delta = 1e-6:
        // 80 * 40 * 14.5086577 / (1e6 * 4) = 0.011606926...; 36*40/(11e6*2) = 6.5e-5.
        let g = paper_gamma_raw(1_000_001, 10, 4, 1, 2.0, 1e-6).unwrap();
        let hand = 3200.0 * 14.508_657_738_524_219 / 4e6;
        assert!(g >= hand && (g - hand) / hand < 1e-14, "{g} vs {hand}");
        // The 36/11 branch: tiny log term with delta near 1: d = 10, k = 4, n = 1001, eps = 5,
        // delta = 0.99: 80*40*ln(2/0.99)/(1000*25) = 0.0900..., 36*40/(11*1000*5) = 0.02618.
        let g = paper_gamma_raw(1001, 10, 4, 1, 5.0, 0.99).unwrap();
        let hand = 3200.0 * (2.0f64 / 0.99).ln() / 25_000.0;
        assert!((g - hand).abs() / hand < 1e-14, "{g} vs {hand}");
        // (For delta < 1 and eps < 6 the log branch always wins here: 80 ln 2 / eps^2 > 36 /
        // (11 eps) needs eps < 16.9.)
        // t = 2, eps < 1: 56 * d k * ln(1/delta) ln(2t/delta) / ((n-1) eps^2)
        // n = 50000, d = 100, k = 3, eps = 0.95, delta = 0.5:
        // L = ln 2 * ln 8 = 0.69314718 * 2.07944154 = 1.44136; 56*300*L/45124.0975 = 0.5366...
        let g = paper_gamma_raw(50_000, 100, 3, 2, 0.95, 0.5).unwrap();
        let l = 2f64.ln() * 8f64.ln();
        let hand = 56.0 * 300.0 * l / (49_999.0 * 0.9025);
        assert!(
            (g - hand).abs() / hand < 1e-14 && (hand - 0.536_65).abs() < 1e-4,
            "{g}"
        );
        // t = 2, 1 <= eps < 6: constant 2016 = 56 * 36.
        let g = paper_gamma_raw(10_000_001, 100, 3, 2, 2.0, 0.5).unwrap();
        let hand = 2016.0 * 300.0 * l / (1e7 * 4.0);
        assert!((g - hand).abs() / hand < 1e-14, "{g}");
        assert!(matches!(
            paper_gamma_raw(1000, 10, 3, 1, 6.0, 0.5),
            Err(PaperGammaError::EpsilonTooLarge(_))
        ));
    }

    #[test]
    fn paper_gamma_at_least_one_names_the_fix() {
        // d = 100, k = 3, t = 1, eps = 0.95, delta = 0.5, n = 5000: gamma = 8100/(4999*0.95)
        // = 1.7056 >= 1. Smallest n: 8100/0.95 = 8526.3 < n - 1, so n = 8528; largest d: 58.
        let e = paper_gamma(5000, 100, 3, 1, 0.95, 0.5).unwrap_err();
        match e {
            PaperGammaError::TooSmall { min_n, max_d, .. } => {
                assert_eq!(min_n, 8528);
                assert_eq!(max_d, 58);
                assert!(paper_gamma(8528, 100, 3, 1, 0.95, 0.5).is_ok());
                assert!(paper_gamma(8527, 100, 3, 1, 0.95, 0.5).is_err());
                assert!(paper_gamma(5000, 58, 3, 1, 0.95, 0.5).is_ok());
                assert!(paper_gamma(5000, 59, 3, 1, 0.95, 0.5).is_err());
            }
            other => panic!("{other}"),
        }
        let msg = paper_gamma(5000, 100, 3, 1, 0.95, 0.5)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("smallest n that works is 8528") && msg.contains("at most 58"));
    }

    #[test]
    fn generic_calibration_reproduces_theorem_41_for_t1() {
        // With the paper's m = k convention and Theorem 3.1, the t = 1 requirement
        // {m: d k, n} gives exactly the paper's gamma (0.1705297 at the defaults).
        let tg = target(50_000, 0.95, 0.5);
        let k3 = Some(Precision::new(3).unwrap());
        let (_, paper) = VectorSum::calibrate(
            100,
            Some(1),
            k3,
            DomainConvention::Paper,
            &tg,
            &BlanketTheorem31,
        )
        .unwrap();
        let closed = paper_gamma_raw(50_000, 100, 3, 1, 0.95, 0.5).unwrap();
        assert!(
            (paper.gamma.get() - closed).abs() / closed < 1e-13,
            "{} vs {closed}",
            paper.gamma
        );
        assert_eq!(paper.requirement.m.get(), 300);
        // The paper's gamma does not certify the real 4 values per coordinate.
        assert!(paper.certified.is_none_or(|g| g.epsilon > 0.95));
        // The safe default: m = d (k + 1) = 400, gamma 4/3 larger, certified at <= 0.95.
        let (p, safe) = VectorSum::calibrate(
            100,
            Some(1),
            k3,
            DomainConvention::TrueDomain,
            &tg,
            &BlanketTheorem31,
        )
        .unwrap();
        assert_eq!(safe.requirement.m.get(), 400);
        assert!((safe.gamma.get() / paper.gamma.get() - 4.0 / 3.0).abs() < 1e-12);
        let cert = safe.certified.unwrap();
        assert!(
            cert.epsilon <= 0.95 && cert.epsilon > 0.95 - 1e-9,
            "{cert:?}"
        );
        assert_eq!(p.gamma(), safe.gamma);
    }

    #[test]
    fn t2_requirement_by_hand() {
        // n = 1e6 + 1, d = 10, t = 2, eps = 0.5, delta = 1e-6, k = 3:
        // per-instance delta = 1e-6 / 8, Chernoff tail 1e-6/8: mu = 1e6 * 2 / 10 = 2e5,
        // others >= floor(2e5 - sqrt(4e5 * ln(8e6))) = floor(2e5 - 2521.50...) = 197478.
        let tg = target(1_000_001, 0.5, 1e-6);
        let shape = VectorSumShape::new(10, 2, None, DomainConvention::TrueDomain).unwrap();
        let req = shape.requirement(Precision::new(3).unwrap(), &tg).unwrap();
        let hand_others = (2e5 - (4e5 * (8e6f64).ln()).sqrt()).floor() as u64;
        assert_eq!(hand_others, 197_478);
        assert_eq!(req.n.get(), hand_others + 1);
        assert_eq!(req.m.get(), 4);
        assert!((req.delta.get() - 1.25e-7).abs() < 1e-20);
        // eps': basic composition 0.25; advanced with delta_hat = 5e-7:
        // sqrt(4 ln 2e6) eps1 + 2 eps1 (e^eps1 - 1) = 0.5 -> eps1 ~ 0.0649 < 0.25: basic wins.
        assert!(
            (req.eps.get() - 0.25 * (1.0 - 2e-6)).abs() < 1e-12,
            "{}",
            req.eps
        );
        assert!(compose_epsilon(req.eps.get(), 2, 5e-7) <= 0.5);
        // Theorem 3.1 gamma for that instance, by hand:
        // max(14*4*ln(1.6e7)/(197478*0.0625), 27*4/(197478*0.25)) = 0.07526376 (n - 1 = 197478)
        let g = BlanketTheorem31::gamma(req.m, req.n, req.eps, req.delta);
        let hand = 56.0 * (1.6e7f64).ln() / (197_478.0 * 0.0625);
        assert!((hand - 0.075_263_76).abs() < 1e-7);
        let hand = hand / (1.0 - 2e-6f64).powi(2); // the 2e-6 safety margin on eps'
        assert!(g >= hand && (g - hand) / hand < 1e-13, "{g} vs {hand}");
        assert_eq!(
            t_candidates(30),
            (1..=8).chain([10, 13, 17, 22, 28, 30]).collect::<Vec<_>>()
        );
        // For large t advanced composition takes over.
        let e1 = per_message_epsilon(1.0, 100, 1e-6);
        let adv = (200.0 * (1e6f64).ln()).sqrt() * e1 + 100.0 * e1 * e1.exp_m1();
        assert!(e1 > 0.01 && (adv - 1.0).abs() < 1e-9, "{e1} {adv}");
    }

    #[test]
    fn calibrated_t2_is_certified_by_composition() {
        let tg = target(1_000_001, 0.5, 1e-6);
        let (p, cal) = VectorSum::calibrate(
            10,
            Some(2),
            None,
            DomainConvention::TrueDomain,
            &tg,
            &BlanketTheorem31,
        )
        .unwrap();
        assert_eq!(p.t(), 2);
        let cert = cal.certified.unwrap();
        assert!(cert.epsilon <= 0.5 && cert.delta == 1e-6, "{cert:?}");
    }

    #[test]
    fn calibration_picks_t1_and_small_k_at_the_paper_defaults() {
        let tg = target(50_000, 0.95, 0.5);
        let (p, cal) = VectorSum::calibrate(
            100,
            None,
            None,
            DomainConvention::TrueDomain,
            &tg,
            &BlanketTheorem31,
        )
        .unwrap();
        assert_eq!(p.t(), 1);
        assert!((1..=4).contains(&p.k().get()), "k = {}", p.k());
        // Brute force over k with the same accountant at t = 1.
        for k in 1..40u64 {
            let shape = VectorSumShape::new(100, 1, None, DomainConvention::TrueDomain).unwrap();
            let k = Precision::new(k).unwrap();
            let req = shape.requirement(k, &tg).unwrap();
            if let Ok(g) = BlanketTheorem31.min_gamma(req.m, req.n, req.eps, req.delta) {
                let mse = shape.predicted_mse(k, Gamma::new(g).unwrap(), tg.n);
                assert!(mse >= cal.predicted_mse * (1.0 - 1e-12), "k = {k}");
            }
        }
    }

    #[test]
    fn infeasible_calibration_names_n_and_d() {
        let tg = target(2000, 0.5, 1e-6);
        let e = VectorSum::calibrate(
            100,
            None,
            None,
            DomainConvention::TrueDomain,
            &tg,
            &BlanketTheorem31,
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("smallest n that works is"), "{msg}");
        match e {
            VectorCalibrationError::Infeasible { min_n, max_d, .. } => {
                let n = min_n.unwrap();
                assert!(VectorSum::calibrate(
                    100,
                    Some(1),
                    None,
                    DomainConvention::TrueDomain,
                    &target(n, 0.5, 1e-6),
                    &BlanketTheorem31
                )
                .is_ok());
                if let Some(d) = max_d {
                    assert!(VectorSum::calibrate(
                        u64::from(d),
                        Some(1),
                        None,
                        DomainConvention::TrueDomain,
                        &tg,
                        &BlanketTheorem31
                    )
                    .is_ok());
                }
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn bad_parameters_and_inputs_are_typed_errors() {
        let k = Precision::new(3).unwrap();
        let g = Gamma::new(0.2).unwrap();
        let e = VectorSum::new(0, 1, k, g).unwrap_err().to_string();
        assert!(e.starts_with("d must be an integer from 1"), "{e}");
        let e = VectorSum::new(5, 6, k, g).unwrap_err().to_string();
        assert!(e.starts_with("t must be an integer from 1 to d"), "{e}");
        assert!(VectorSum::new(5, 0, k, g).is_err());
        let p = VectorSum::new(3, 1, k, g).unwrap();
        let mut rng = simulation_rng(0);
        let e = p.randomize(&[0.1, 0.2], &mut rng).unwrap_err();
        assert!(
            e.to_string()
                .contains("expected d = 3 coordinates, found 2"),
            "{e}"
        );
        let e = p.randomize(&[0.1, f64::NAN, 0.3], &mut rng).unwrap_err();
        assert!(e.to_string().contains("coordinate 1: value must be"), "{e}");
        let e = p.randomize(&[0.1, 0.2, 1.5], &mut rng).unwrap_err();
        assert!(e.to_string().contains("got 1.5"), "{e}");
        assert!(UnitVectors::from_flat(3, &[0.1; 7]).is_err());
    }

    #[test]
    fn randomizer_sends_t_distinct_coordinates() {
        let p = VectorSum::new(6, 3, Precision::new(4).unwrap(), Gamma::new(0.3).unwrap()).unwrap();
        let mut rng = simulation_rng(9);
        for _ in 0..1000 {
            let msgs = p
                .randomize(&[0.0, 0.2, 0.4, 0.6, 0.8, 1.0], &mut rng)
                .unwrap();
            assert_eq!(msgs.len(), 3);
            let mut cs: Vec<u32> = msgs.iter().map(|m| m.0).collect();
            cs.sort_unstable();
            cs.dedup();
            assert_eq!(cs.len(), 3);
            assert!(msgs.iter().all(|&(j, y)| j < 6 && y <= 4));
        }
    }

    /// Fixed data: 4000 users, d = 8, values from a deterministic pattern.
    fn pattern(n: usize, d: usize) -> UnitVectors {
        let rows: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..d)
                    .map(|j| ((i * 37 + j * 11) % 101) as f64 / 100.0 * (j + 1) as f64 / d as f64)
                    .collect()
            })
            .collect();
        UnitVectors::new(d as u64, rows).unwrap()
    }

    #[test]
    fn mean_unbiased_and_mse_matches_exact_prediction() {
        // 300 repetitions; per-coordinate bias of the sum within 4 standard errors; observed
        // mean-vector MSE within 15% of the exact prediction (300 reps of a sum of 8
        // roughly chi-square terms: relative sd about sqrt(2/(8*300)) = 3%, so 15% is ~5 sd
        // plus the E[1/n_j] approximation, ~d/(nt) = 0.2-0.4%).
        for t in [1u64, 3] {
            let data = pattern(4000, 8);
            let p = VectorSum::new(8, t, Precision::new(3).unwrap(), Gamma::new(0.25).unwrap())
                .unwrap();
            let truth_mean = data.mean();
            let truth_sum = data.sum();
            let pred = p.exact_mean_mse(&data);
            let reps = 300;
            let mut mse = 0.0;
            let mut bias = [0.0; 8];
            let mut sq = [0.0; 8];
            for r in 0..reps {
                let st = p.simulate(&data, 1000 + r as u64, 0, r % 2 == 0).unwrap();
                assert_eq!(st.reports(), 4000 * t);
                let e = p.estimate(&st).unwrap();
                mse += e
                    .mean
                    .iter()
                    .zip(&truth_mean)
                    .map(|(a, b)| (a - b).powi(2))
                    .sum::<f64>();
                for j in 0..8 {
                    bias[j] += e.sum[j] - truth_sum[j];
                    sq[j] += (e.sum[j] - truth_sum[j]).powi(2);
                }
            }
            mse /= reps as f64;
            assert!(
                (mse / pred - 1.0).abs() < 0.15,
                "t={t}: mse {mse} vs {pred}"
            );
            for j in 0..8 {
                let b = bias[j] / reps as f64;
                let se = (sq[j] / reps as f64 / reps as f64).sqrt();
                assert!(b.abs() < 4.0 * se, "t={t}, j={j}: bias {b}, se {se}");
            }
            assert!(p.worst_case_mean_mse(4000) >= pred);
        }
    }

    #[test]
    fn simulation_independent_of_threads_and_shuffling() {
        let data = pattern(150_000, 4);
        let p = VectorSum::new(4, 2, Precision::new(3).unwrap(), Gamma::new(0.1).unwrap()).unwrap();
        let a = p.simulate(&data, 3, 1, false).unwrap();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = one.install(|| p.simulate(&data, 3, 1, false)).unwrap();
        assert_eq!(a, b);
        assert_eq!(p.simulate(&data, 3, 1, true).unwrap(), a);
    }

    #[test]
    fn unreported_coordinates_get_the_midpoint() {
        let p = VectorSum::new(3, 1, Precision::new(2).unwrap(), Gamma::new(0.5).unwrap()).unwrap();
        let mut st = p.aggregator();
        st.absorb((0, 2)).unwrap();
        st.absorb((2, 0)).unwrap();
        let e = p.estimate(&st).unwrap();
        assert_eq!(e.unreported, vec![1]);
        assert_eq!(e.mean[1], 0.5);
        assert_eq!(e.sum[1], 0.0);
        // Coordinate 0: z = 1, DeBias = (1 - 0.25) / 0.5 = 1.5; mean 1.5; sum 3 * 1.5.
        assert!((e.mean[0] - 1.5).abs() < 1e-15 && (e.sum[0] - 4.5).abs() < 1e-12);
        assert!(e.mean.iter().all(|m| m.is_finite()));
        assert!(p.estimate(&CoordinateSums::new(4, 2)).is_err());
    }

    #[test]
    fn paper_bounds_by_hand() {
        // Section 4.5, t = 1, eps < 1, at the defaults with gamma = 0.1705297:
        // D = (1-g)^2 n^(5/3); max(98^(1/3) d^(8/3) ln(4)^(2/3) / (D eps^(4/3)),
        //                          18 d^(8/3) / (D (4 eps)^(2/3)))
        let g = 0.170_529_7;
        let b = paper_mse_bound(50_000, 100, 1, 0.95, 0.5, g);
        let dd = (1.0 - g) * (1.0 - g) * 50_000f64.powf(5.0 / 3.0);
        let d83 = 100f64.powf(8.0 / 3.0);
        let a1 = 98f64.powf(1.0 / 3.0) * d83 * 4f64.ln().powf(2.0 / 3.0)
            / (dd * 0.95f64.powf(4.0 / 3.0));
        let a2 = 18.0 * d83 / (dd * 3.8f64.powf(2.0 / 3.0));
        assert!((b - a1.max(a2)).abs() < 1e-15 && a2 > a1, "{b}");
        assert!((b - 0.0341).abs() < 1e-3, "{b}");
        // The corrected eps >= 1 bound uses (20 log(2/delta))^(2/3), not 20 log^(2/3).
        let b = paper_mse_bound(50_000, 100, 1, 2.0, 0.01, 0.1);
        let dd = 0.81 * 50_000f64.powf(5.0 / 3.0);
        let lg = 200f64.ln();
        let c1 = 2.0 * d83 * (20.0 * lg).powf(2.0 / 3.0) / (dd * 2f64.powf(4.0 / 3.0));
        let c2 = 2.0 * 9f64.powf(2.0 / 3.0) * d83 / (dd * 22f64.powf(2.0 / 3.0));
        assert!((b - c1.max(c2)).abs() < 1e-12 * b);
        // Theorem 4.6, t = 2, eps < 1.
        let b = paper_mse_bound(50_000, 100, 2, 0.5, 0.5, 0.3);
        let l = 2f64.ln() * 8f64.ln();
        let dd = 0.49 * 50_000f64.powf(5.0 / 3.0);
        let hand = 4.0 * d83 * (14.0 * l).powf(2.0 / 3.0) / (dd * 0.5f64.powf(4.0 / 3.0));
        assert!((b - hand).abs() < 1e-12 * b);
        assert!((paper_k(50_000, 100, 0.95, 0.5) - 2.09).abs() < 0.05);
    }
}
