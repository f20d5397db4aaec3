//! The discrete Gaussian distribution, sampled exactly (Canonne, Kamath, Steinke, "The Discrete
//! Gaussian for Differential Privacy", NeurIPS 2020, arXiv 2004.00010, Algorithm 3).

use super::bernoulli::bernoulli_exp_neg_frac;
use super::discrete_laplace::sample_bounded;
use crate::params::{ParamError, Rational};
use rand_core::CryptoRng;

/// An exact sampler of the discrete Gaussian N_Z(0, sigma^2) with rational sigma^2 = num/den:
/// Pr[Y = y] = exp(-y^2 / (2 sigma^2)) / sum_z exp(-z^2 / (2 sigma^2)) for every integer y.
///
/// CKS Algorithm 3: t = floor(sigma) + 1 (computed exactly as isqrt(floor(num/den)) + 1); draw
/// Y from the discrete Laplace with scale t ([`super::DiscreteLaplace`], Algorithm 2) and
/// accept it with probability exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)), a Bernoulli(exp(-gamma))
/// for the rational gamma = (|Y| den t - num)^2 / (2 num den t^2) ([`super::bernoulli_exp_neg`],
/// Algorithm 1), else restart. Only integer arithmetic (`u128`) is used.
///
/// Cost: a round accepts with probability
/// exp(-sigma^2/(2 t^2)) sum_y exp(-y^2/(2 sigma^2)) / sum_y exp(-|y|/t), which tends to
/// sqrt(pi/2) e^(-1/2) ~ 0.76 for large sigma, so about 1.3 discrete Laplace samples (plus one
/// Bernoulli(exp(-gamma)), at most ~7 uniform draws) per output.
///
/// Parameter range and truncation: the 128-bit arithmetic requires den t^2 <= 2^54 (roughly
/// num, den <= 2^52 in lowest terms; sigma^2 = 1e12 and sigma^2 = 1e-12 both fit), checked by
/// [`DiscreteGaussian::new`]. Under it, |Y| den t < 2^64 for every |Y| <= L = floor((2^64 - 1) /
/// (den t)) >= ~1000 sigma, and proposals with |Y| > L are rejected, so the output follows the
/// discrete Gaussian conditioned on |Y| <= L exactly; the removed mass is below exp(-490000).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscreteGaussian {
    sigma2: Rational,
    /// floor(sigma) + 1, the Laplace scale.
    t: u64,
    /// den t.
    dt: u64,
    /// The truncation bound L on |Y|.
    limit: u64,
    /// 2 num den t^2, the denominator of gamma.
    gamma_den: u128,
}

impl DiscreteGaussian {
    /// Largest supported den * (floor(sigma) + 1)^2 (2^54).
    pub const MAX_DEN_T2: u128 = 1 << 54;

    /// Validates sigma^2 = num/den: num >= 1 and den (floor(sqrt(num/den)) + 1)^2 <= 2^54.
    pub fn new(sigma2: Rational) -> Result<Self, ParamError> {
        let (num, den) = (sigma2.num(), sigma2.den());
        if num == 0 {
            return Err(ParamError::OutOfRange {
                field: "sigma2",
                allowed: "a rational num/den > 0",
                value: sigma2.to_string(),
            });
        }
        let t = (num / den).isqrt() + 1; // <= 2^32
        let den_t2 = u128::from(den) * u128::from(t) * u128::from(t); // < 2^128
        if den_t2 > Self::MAX_DEN_T2 {
            return Err(ParamError::OutOfRange {
                field: "sigma2",
                allowed:
                    "a rational num/den (lowest terms) with den * (floor(sqrt(num/den)) + 1)^2 \
                          <= 2^54, so that exact sampling fits 128-bit integers",
                value: sigma2.to_string(),
            });
        }
        let dt = den * t; // <= den t^2 <= 2^54
        let limit = (u64::MAX / dt).min(i64::MAX as u64);
        // num < den t^2 <= 2^54, so 2 num den t^2 < 2^109.
        let gamma_den = 2 * u128::from(num) * den_t2;
        Ok(Self {
            sigma2,
            t,
            dt,
            limit,
            gamma_den,
        })
    }

    /// sigma^2.
    pub fn sigma2(&self) -> Rational {
        self.sigma2
    }

    /// The truncation bound L: every output has |Y| <= L (L >= ~1000 sigma).
    pub fn bound(&self) -> u64 {
        self.limit
    }

    /// Draws one sample.
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        let num = u128::from(self.sigma2.num());
        loop {
            let y = sample_bounded(rng, self.t, 1, self.limit);
            // |Y| den t <= L den t < 2^64, and num < 2^54: the difference and its square fit.
            let diff = (u128::from(y.unsigned_abs()) * u128::from(self.dt)).abs_diff(num);
            if bernoulli_exp_neg_frac(rng, diff * diff, self.gamma_den) {
                return y;
            }
        }
    }
}

/// One discrete Gaussian sample with variance parameter sigma^2: [`DiscreteGaussian::new`] then
/// [`DiscreteGaussian::sample`].
pub fn discrete_gaussian<R: CryptoRng + ?Sized>(
    rng: &mut R,
    sigma2: &Rational,
) -> Result<i64, ParamError> {
    Ok(DiscreteGaussian::new(*sigma2)?.sample(rng))
}

#[cfg(test)]
mod tests {
    use super::super::stats::check_against_pmf;
    use super::*;
    use crate::rng::simulation_rng;

    /// Exact pmf of N_Z(0, sigma2) on [-half, half], normalized by summing (outside: negligible).
    fn gaussian_pmf(sigma2: f64, half: i64) -> Vec<f64> {
        let w: Vec<f64> = (-half..=half)
            .map(|y| (-((y * y) as f64) / (2.0 * sigma2)).exp())
            .collect();
        let z: f64 = w.iter().sum();
        w.into_iter().map(|x| x / z).collect()
    }

    #[test]
    fn discrete_gaussian_sample_matches_pmf() {
        // Fixed seed; 200k draws per sigma^2. Chi-square over the values with expected count
        // >= 5 (tails pooled into two bins) at significance ~1e-6; mean within 5 standard
        // errors of 0; sample variance within 5 standard errors (from the exact 4th moment) of
        // the exact variance (slightly below sigma^2 for small sigma), computed by summing the
        // pmf over [-40 sigma - 10, 40 sigma + 10].
        let mut rng = simulation_rng(19);
        let draws = 200_000usize;
        for (num, den) in [(1u64, 2u64), (1, 1), (4, 1), (100, 3), (10_000, 1)] {
            let sigma2 = Rational::new(num, den).unwrap();
            let g = DiscreteGaussian::new(sigma2).unwrap();
            let s2 = sigma2.to_f64();
            let half = (40.0 * s2.sqrt()).ceil() as i64 + 10;
            let pmf = gaussian_pmf(s2, half);
            let ys: Vec<i64> = (0..draws).map(|_| g.sample(&mut rng)).collect();
            check_against_pmf(&ys, &pmf, half, &format!("Gaussian {sigma2}"));
        }
    }

    #[test]
    fn discrete_gaussian_sample_variance_below_sigma2_for_small_sigma() {
        // The exact variance of N_Z(0, sigma^2) is below sigma^2 (visibly in f64 only for small
        // sigma: 0.49898 for 1/2, 1 - ~1e-7 for 1); the pmf check above pins the samples to it.
        for (s2, lo) in [(0.5, 0.4985), (1.0, 0.99999)] {
            let pmf = gaussian_pmf(s2, 30);
            let var: f64 = pmf
                .iter()
                .zip(-30i64..)
                .map(|(p, y)| p * (y * y) as f64)
                .sum();
            assert!(var < s2 && var > lo, "sigma^2 = {s2}: {var}");
        }
    }

    #[test]
    fn discrete_gaussian_sample_huge_and_tiny_sigma2() {
        // sigma^2 = 1e12: 20k draws; mean within 5 standard errors, sample variance within 5
        // standard errors (sqrt(2/n) relative) of 1e12 (the discrete correction is ~1e-12
        // relative there).
        let mut rng = simulation_rng(23);
        let sigma2 = Rational::integer(1_000_000_000_000);
        let g = DiscreteGaussian::new(sigma2).unwrap();
        assert!(g.bound() >= 1000 * 1_000_000);
        let n = 20_000usize;
        let ys: Vec<f64> = (0..n).map(|_| g.sample(&mut rng) as f64).collect();
        let mean = ys.iter().sum::<f64>() / n as f64;
        let var = ys.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() <= 5.0 * (1e12 / n as f64).sqrt(), "{mean}");
        assert!(
            (var / 1e12 - 1.0).abs() <= 5.0 * (2.0 / n as f64).sqrt(),
            "{var}"
        );
        // sigma^2 = 1e-12: Pr[Y != 0] ~ 2 exp(-5e11); all zeros.
        let tiny = DiscreteGaussian::new(Rational::new(1, 1_000_000_000_000).unwrap()).unwrap();
        assert!((0..1000).all(|_| tiny.sample(&mut rng) == 0));
        // The free function agrees with the struct on the same stream.
        let s = Rational::new(100, 3).unwrap();
        let mut a = simulation_rng(5);
        let mut b = simulation_rng(5);
        let g = DiscreteGaussian::new(s).unwrap();
        for _ in 0..100 {
            assert_eq!(discrete_gaussian(&mut a, &s).unwrap(), g.sample(&mut b));
        }
    }

    #[test]
    fn discrete_gaussian_sample_rejects_invalid_parameters() {
        let mut rng = simulation_rng(1);
        let e = discrete_gaussian(&mut rng, &Rational::integer(0)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "sigma2 must be a rational num/den > 0, got 0/1"
        );
        // Consecutive integers are coprime: den (floor(sigma) + 1)^2 = (2^64 - 2) 4 > 2^54.
        let fine = Rational::new(u64::MAX, u64::MAX - 1).unwrap();
        let e = DiscreteGaussian::new(fine).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("sigma2 must be a rational num/den (lowest terms)"));
        // sigma^2 = 2^54 - 1: t = 2^27, den t^2 = 2^54 is the largest accepted.
        assert!(DiscreteGaussian::new(Rational::integer((1 << 54) - 1)).is_ok());
        assert!(DiscreteGaussian::new(Rational::integer(1 << 54)).is_err());
        assert_eq!(
            Rational::new(3, 0).unwrap_err().to_string(),
            "den must be an integer >= 1, got 0"
        );
    }
}
