//! Exact samplers over an injected CSPRNG.
//!
//! * [`Bernoulli`] samples Bernoulli(p) *exactly* for every `f64` p in [0, 1]: it compares a
//!   uniform real U (drawn 64 bits at a time, lazily) against the finite binary expansion of
//!   p, so Pr[true] = p with no rounding. An `f64` is a dyadic rational, so the only residual
//!   bias is the rounding of a real-valued probability to the `f64` the caller passes;
//!   calibration rounds gamma *up* before sampling and certifies the guarantee for the `f64`
//!   actually used, so that rounding never weakens privacy.
//! * [`uniform_u32`] / [`uniform_u64`] / [`uniform_u128`] draw uniform integers below a bound
//!   without modulo bias (Lemire, "Fast random integer generation in an interval", ACM TOMACS
//!   2019: multiply-shift with rejection of the biased low region).
//! * [`bernoulli_ratio`] (Bernoulli(a/b) for integers), [`bernoulli_exp_neg`]
//!   (Bernoulli(exp(-gamma)) for a rational gamma), [`DiscreteLaplace`] (rational scale t/s) and
//!   [`DiscreteGaussian`] (rational sigma^2) follow Canonne, Kamath, Steinke, "The Discrete
//!   Gaussian for Differential Privacy", NeurIPS 2020 (arXiv 2004.00010), Algorithms 1, 2 and 3:
//!   integer arithmetic and exact uniform integers only, no floating point. Parameters are
//!   [`crate::params::Rational`]s, validated by the samplers' constructors so that sampling never
//!   overflows. See `docs/samplers.md`.
//! * [`Polya`] samples Polya(1/k, a) (negative binomial) for a rational a exactly, as a thinned
//!   compound Poisson (the distributed noise of `protocol::ikos_sum`).
//! * [`BitPool`] and [`Coins`]: random bits a few at a time and Bernoulli coins 64 at a time
//!   (bit-sliced), for batched simulations (same distributions, fewer generator words).

mod bernoulli;
mod bits;
mod discrete_gaussian;
mod discrete_laplace;
mod polya;
mod uniform;

pub use bernoulli::{bernoulli_exp_neg, bernoulli_ratio, Bernoulli};
pub(crate) use bits::{sealed, Leftover};
pub use bits::{uniform_bits, BitPool, BitSource, Coins};
pub use discrete_gaussian::{discrete_gaussian, DiscreteGaussian};
pub use discrete_laplace::{discrete_laplace, DiscreteLaplace};
pub use polya::Polya;
pub use uniform::{uniform_u128, uniform_u32, uniform_u64, uniform_usize};

#[cfg(test)]
pub(crate) mod stats {
    //! Small statistical helpers for the crate's fixed-seed tests.

    /// Pearson chi-square statistic of observed counts against expected counts.
    pub fn chi_square(observed: &[u64], expected: &[f64]) -> f64 {
        observed
            .iter()
            .zip(expected)
            .map(|(&o, &e)| (o as f64 - e).powi(2) / e)
            .sum()
    }

    /// A conservative upper critical value of chi-square with `df` degrees of freedom at
    /// significance about 1e-6 (Wilson-Hilferty with z = 4.9).
    pub fn chi_square_critical(df: usize) -> f64 {
        let k = df as f64;
        let z = 4.9;
        k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
    }

    /// Chi-square, mean and variance of integer samples `ys` against `pmf` on [-half, half].
    pub fn check_against_pmf(ys: &[i64], pmf: &[f64], half: i64, what: &str) {
        let n = ys.len() as f64;
        let mean: f64 = pmf.iter().zip(-half..).map(|(p, y)| p * y as f64).sum();
        let var: f64 = pmf
            .iter()
            .zip(-half..)
            .map(|(p, y)| p * (y as f64 - mean).powi(2))
            .sum();
        let m4: f64 = pmf
            .iter()
            .zip(-half..)
            .map(|(p, y)| p * (y as f64 - mean).powi(4))
            .sum();
        // Bins: every value with expected count >= 5, tails pooled.
        let lo = (0..pmf.len()).find(|&i| pmf[i] * n >= 5.0).unwrap();
        let hi = (0..pmf.len()).rev().find(|&i| pmf[i] * n >= 5.0).unwrap();
        let mut observed = vec![0u64; hi - lo + 1];
        let mut sum = 0.0;
        let mut sum2 = 0.0;
        for &y in ys {
            let i = (y + half).clamp(0, pmf.len() as i64 - 1) as usize;
            observed[i.clamp(lo, hi) - lo] += 1;
            sum += y as f64;
            sum2 += (y as f64) * (y as f64);
        }
        let mut expected: Vec<f64> = (lo..=hi).map(|i| pmf[i] * n).collect();
        expected[0] += pmf[..lo].iter().sum::<f64>() * n;
        let last = expected.len() - 1;
        expected[last] += pmf[hi + 1..].iter().sum::<f64>() * n;
        if observed.len() > 1 {
            let stat = chi_square(&observed, &expected);
            let crit = chi_square_critical(observed.len() - 1);
            assert!(stat < crit, "{what}: chi-square {stat} >= {crit}");
        } else {
            assert_eq!(observed[0], ys.len() as u64, "{what}");
        }
        let m = sum / n;
        assert!(
            (m - mean).abs() <= 5.0 * (var / n).sqrt(),
            "{what}: mean {m} vs {mean}"
        );
        let v = sum2 / n - m * m;
        let se = ((m4 - var * var) / n).sqrt();
        assert!(
            (v - var).abs() <= 5.0 * se,
            "{what}: variance {v} vs {var} (se {se})"
        );
    }
}
