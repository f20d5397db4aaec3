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
//! paper writes k ([`DomainConvention::Paper`](crate::protocol::DomainConvention::Paper), reproduction only, not certified).

mod analyzer;
mod batched;
mod calibration;
mod data;
mod guarantee;
mod paper;
mod prediction;
mod randomizer;

pub use calibration::{VectorCalibration, VectorCalibrationError, VectorSumShape, T_PATIENCE};
pub use data::UnitVectors;
use guarantee::delta_split;
pub use guarantee::{compose_epsilon, coordinate_users_lower_bound, per_message_epsilon};
pub use paper::{paper_gamma, paper_gamma_raw, paper_k, paper_mse_bound, PaperGammaError};
pub use prediction::{message_variance, worst_message_variance};

use crate::params::{Gamma, ParamError, Precision};
use crate::randomizer::Grr;
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
}
