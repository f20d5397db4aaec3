//! The discrete Laplace distribution, sampled exactly (Canonne, Kamath, Steinke, "The Discrete
//! Gaussian for Differential Privacy", NeurIPS 2020, arXiv 2004.00010, Algorithm 2).

use super::bernoulli::bernoulli_exp_neg_frac;
use super::uniform::uniform_u64;
use crate::params::{ParamError, Rational};
use rand_core::CryptoRng;

/// An exact sampler of the discrete Laplace distribution with scale b = t/s:
/// Pr[Y = y] = (e^(1/b) - 1)/(e^(1/b) + 1) * e^(-|y|/b) for every integer y.
///
/// CKS Algorithm 2, with integer arithmetic only: draw U uniform in {0, ..., t - 1} and accept it
/// with probability exp(-U/t) (else restart); draw V, the number of successes of
/// Bernoulli(exp(-1)) before the first failure; X = U + t V is then geometric,
/// Pr[X = x] proportional to exp(-x/t); Y = floor(X/s) is geometric with ratio exp(-s/t); a fair
/// sign bit B makes it two-sided, restarting on (B = 1, Y = 0) so that 0 is not counted twice.
///
/// Cost: a round accepts U with probability (1 - 1/e)/(t (1 - e^(-1/t))) >= 1 - 1/e and then
/// survives the sign step with probability >= 1/2 (close to 1 when the scale is large). A round
/// costs one uniform integer, about e - 1 draws for exp(-U/t), and about e/(1 - 1/e) ~ 4.3 draws
/// for V (each exact Bernoulli(a/b) draw is one uniform integer, usually one 64-bit word).
///
/// The output is an `i64`, so the sampler realizes the distribution conditioned on
/// |Y| <= 2^63 - 1: rounds whose Y would not fit are rejected (exactly, as soon as X passes the
/// bound). The scale is limited to t/s <= 2^48, so the removed mass is below exp(-2^15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscreteLaplace {
    t: u64,
    s: u64,
}

impl DiscreteLaplace {
    /// Largest supported scale t/s (2^48).
    pub const MAX_SCALE: u64 = 1 << 48;

    /// Validates the scale t/s: 0 < t/s <= 2^48.
    pub fn new(scale: Rational) -> Result<Self, ParamError> {
        let (t, s) = (scale.num(), scale.den());
        if t == 0 || u128::from(t) > u128::from(s) * u128::from(Self::MAX_SCALE) {
            return Err(ParamError::OutOfRange {
                field: "scale",
                allowed: "a rational t/s with 0 < t/s <= 2^48",
                value: scale.to_string(),
            });
        }
        Ok(Self { t, s })
    }

    /// The scale t/s.
    pub fn scale(&self) -> Rational {
        Rational::new(self.t, self.s).expect("s >= 1")
    }

    /// Draws one sample.
    #[inline]
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        sample_bounded(rng, self.t, self.s, i64::MAX as u64)
    }
}

/// One discrete Laplace(t/s) sample: [`DiscreteLaplace::new`] then [`DiscreteLaplace::sample`].
pub fn discrete_laplace<R: CryptoRng + ?Sized>(
    rng: &mut R,
    scale: &Rational,
) -> Result<i64, ParamError> {
    Ok(DiscreteLaplace::new(*scale)?.sample(rng))
}

/// CKS Algorithm 2 for scale t/s (t, s >= 1), conditioned on |Y| <= `limit` (<= 2^63 - 1):
/// rounds whose |Y| would exceed `limit` restart, which yields exactly the conditional law.
pub(crate) fn sample_bounded<R: CryptoRng + ?Sized>(
    rng: &mut R,
    t: u64,
    s: u64,
    limit: u64,
) -> i64 {
    debug_assert!(t > 0 && s > 0 && limit <= i64::MAX as u64);
    let (t128, s128) = (u128::from(t), u128::from(s));
    // |Y| = floor(X/s) <= limit iff X <= x_max; (limit + 1) s <= 2^127 fits.
    let x_max = (u128::from(limit) + 1) * s128 - 1;
    'round: loop {
        let u = uniform_u64(rng, t);
        if !bernoulli_exp_neg_frac(rng, u128::from(u), t128) {
            continue;
        }
        let mut x = u128::from(u);
        loop {
            if x > x_max {
                continue 'round;
            }
            if !bernoulli_exp_neg_frac(rng, 1, 1) {
                break;
            }
            x += t128; // <= x_max + t < 2^128
        }
        let y = (x / s128) as u64; // <= limit <= 2^63 - 1
        let negative = rng.next_u32() & 1 == 1;
        if negative && y == 0 {
            continue;
        }
        return if negative { -(y as i64) } else { y as i64 };
    }
}

#[cfg(test)]
mod tests {
    use super::super::stats::*;
    use super::*;
    use crate::rng::simulation_rng;

    /// Exact pmf of the discrete Laplace with scale b on [-half, half] (outside: negligible).
    fn laplace_pmf(b: f64, half: i64) -> Vec<f64> {
        let w: Vec<f64> = (-half..=half)
            .map(|y| (-(y.abs() as f64) / b).exp())
            .collect();
        let z: f64 = w.iter().sum();
        w.into_iter().map(|x| x / z).collect()
    }

    #[test]
    fn discrete_laplace_sample_matches_pmf() {
        // Fixed seed; 200k draws per scale. Chi-square over the values with expected count >= 5
        // (tails pooled into two bins) at significance ~1e-6; mean within 5 standard errors of
        // 0; sample variance within 5 standard errors (from the exact 4th moment) of the exact
        // variance, all moments computed by summing the pmf.
        let mut rng = simulation_rng(17);
        let draws = 200_000usize;
        for (t, s) in [(1u64, 1u64), (1, 3), (3, 2), (10, 1), (100, 7)] {
            let scale = Rational::new(t, s).unwrap();
            let lap = DiscreteLaplace::new(scale).unwrap();
            let b = scale.to_f64();
            let half = (60.0 * b).ceil() as i64 + 10;
            let pmf = laplace_pmf(b, half);
            let ys: Vec<i64> = (0..draws).map(|_| lap.sample(&mut rng)).collect();
            check_against_pmf(&ys, &pmf, half, &format!("Laplace {scale}"));
        }
        assert_eq!(
            discrete_laplace(&mut rng, &Rational::integer(0))
                .unwrap_err()
                .to_string(),
            "scale must be a rational t/s with 0 < t/s <= 2^48, got 0/1"
        );
        assert!(DiscreteLaplace::new(Rational::integer((1 << 48) + 1)).is_err());
        let widest = DiscreteLaplace::new(Rational::integer(1 << 48)).unwrap();
        assert_eq!(widest.scale(), Rational::integer(1 << 48));
        for _ in 0..1000 {
            widest.sample(&mut rng);
        }
    }

    #[test]
    fn discrete_laplace_sample_bound_conditions_exactly() {
        // limit = 0 conditions on Y = 0: the only value left.
        let mut rng = simulation_rng(2);
        for _ in 0..1000 {
            assert_eq!(sample_bounded(&mut rng, 5, 1, 0), 0);
        }
        // limit = 1 with scale 1: Pr[Y = 0] = 1/(1 + 2/e) exactly (pmf proportional to
        // 1, e^-1, e^-1); within 5 binomial standard deviations.
        let trials = 300_000u64;
        let zeros = (0..trials)
            .filter(|_| {
                let y = sample_bounded(&mut rng, 1, 1, 1);
                assert!(y.abs() <= 1);
                y == 0
            })
            .count() as f64;
        let p = 1.0 / (1.0 + 2.0 / std::f64::consts::E);
        let sd = (trials as f64 * p * (1.0 - p)).sqrt();
        assert!((zeros - trials as f64 * p).abs() <= 5.0 * sd, "{zeros}");
    }
}
