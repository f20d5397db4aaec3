//! `calibrate ikos-sum`: the [`IkosCalibration`] of the multi-message (IKOS split-and-mix) DP
//! sum (docs/multi-message.md). No gamma: eps fixes the noise, sigma fixes
//! delta = (1 + e^eps) 2^-sigma.

use blanket::protocol::ikos::MAX_SIGMA;
use blanket::protocol::IkosSumReport;
use serde::Serialize;

pub use blanket::protocol::ikos_sum::{default_sigma, DEFAULT_DELTA, DEFAULT_SIGMA};

/// delta = (1 + e^eps) 2^-sigma (docs/multi-message.md: the split-and-mix statistical
/// distance 2^-sigma, times 1 + e^eps for the DP conversion), rounded up, as the core reports
/// it ([`blanket::protocol::ikos_sum::ikos_delta`]).
pub fn delta_of(eps: f64, sigma: u32) -> f64 {
    blanket::protocol::ikos_sum::ikos_delta(eps, sigma)
}

/// The smallest sigma in 1..=[`MAX_SIGMA`] with (1 + e^eps) 2^-sigma <= `delta`, or `None`
/// if none reaches it ([`blanket::protocol::ikos_sum::sigma_needed`] says which would).
pub fn smallest_sigma(eps: f64, delta: f64) -> Option<u32> {
    let s = blanket::protocol::ikos_sum::sigma_needed(eps, delta);
    (s <= u64::from(MAX_SIGMA)).then_some(s as u32)
}

/// What `calibrate ikos-sum` prints (JSON keys are a contract).
#[derive(Serialize, Debug, Clone)]
pub struct IkosCalibration {
    /// Protocol name.
    pub protocol: &'static str,
    /// Clients n.
    pub n: u64,
    /// Target epsilon.
    pub eps: f64,
    /// Precision p = ceil(sqrt(n)).
    pub p: u32,
    /// Modulus q.
    pub q: u128,
    /// Shares (messages) per client m.
    pub m: u32,
    /// alpha = A / 2^40 (the Polya / discrete Laplace parameter, exactly).
    pub alpha: f64,
    /// Security parameter sigma.
    pub sigma: u32,
    /// Realized epsilon p ln(1/alpha) (<= eps).
    pub eps_realized: f64,
    /// delta = (1 + e^eps) 2^-sigma.
    pub delta: f64,
    /// The honest, present clients the guarantee covers: n' = n - floor(dropout n) -
    /// floor(malicious n) (as `protocol run`); n when every client is assumed present.
    pub honest_present_users: u64,
    /// Noise bound T (Pr[|noise| > T] <= 2^-sigma).
    pub noise_bound: u64,
    /// Predicted MSE of the estimated sum (upper bound, all clients present).
    pub predicted_mse: f64,
    /// What `predicted_mse` measures.
    pub predicted_mse_meaning: &'static str,
    /// Bytes each client sends (m shares of ceil(log2 q / 8) bytes).
    pub bytes_per_user: u64,
    /// What the guarantee assumes.
    pub assumes: &'static str,
    /// Why the generic gamma calibrator does not apply.
    pub calibration: &'static str,
}

/// Bytes of one element of Z_q on the wire (ceil(log2 q / 8), at least 1).
pub fn element_bytes(q: u128) -> u64 {
    let bits = 128 - (q - 1).leading_zeros();
    u64::from(bits.div_ceil(8).max(1))
}

const WHY_NOT_GENERIC: &str = "no gamma to calibrate: the noise is fixed by eps (alpha = e^(-eps/p) rounded up), m by sigma (m_required), delta = (1 + e^eps) 2^-sigma";

impl IkosCalibration {
    /// From the core's report.
    pub fn of(r: &IkosSumReport) -> Self {
        Self {
            protocol: "ikos-sum",
            n: r.users,
            eps: r.epsilon,
            p: r.precision,
            q: r.modulus,
            m: r.shares,
            alpha: r.alpha,
            sigma: r.sigma,
            eps_realized: r.epsilon_realized,
            delta: r.delta,
            honest_present_users: r.honest,
            noise_bound: r.noise_bound,
            predicted_mse: r.predicted_mse,
            predicted_mse_meaning: "upper bound on the expected squared error of the estimated sum for any data of n users (rounding <= n/4 plus the discrete Laplace variance, over p^2)",
            bytes_per_user: u64::from(r.shares) * element_bytes(r.modulus),
            assumes: r.assumes,
            calibration: WHY_NOT_GENERIC,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_bytes_rounds_bits_up_to_bytes() {
        assert_eq!(element_bytes(2), 1);
        assert_eq!(element_bytes(256), 1);
        assert_eq!(element_bytes(257), 2);
        assert_eq!(element_bytes(1 << 64), 8);
        assert_eq!(element_bytes((1 << 64) + 1), 9);
    }

    #[test]
    fn smallest_sigma_is_the_first_that_reaches_delta() {
        let s = smallest_sigma(1.0, 1e-6).expect("some sigma reaches 1e-6");
        assert!(delta_of(1.0, s) <= 1e-6);
        assert!(delta_of(1.0, s - 1) > 1e-6);
        assert_eq!(smallest_sigma(1.0, 1e-300), None);
    }
}
