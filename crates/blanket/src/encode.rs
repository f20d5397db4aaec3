//! Encoders: turn a user's value into the integer(s) a randomizer takes.

use crate::params::{Precision, UnitValue};
use crate::sample::Bernoulli;
use rand_core::CryptoRng;

/// Unbiased randomized rounding of x in [0, 1] to {0, ..., k}:
/// `floor(x k) + Bernoulli(x k - floor(x k))`, so E[result] = x k
/// (Balle et al. 2019, Section 4; Scott et al. 2021, Algorithm 2).
///
/// `x k` is computed in `f64`; its rounding (at most half an ulp of `x k`) is the only bias,
/// below 1e-16 relative, and it touches accuracy only: privacy comes from the randomizer.
#[inline]
pub fn randomized_round<R: CryptoRng + ?Sized>(x: UnitValue, k: Precision, rng: &mut R) -> u32 {
    let xk = x.get() * f64::from(k.get());
    let floor = xk.floor();
    let frac = xk - floor; // exact: floor and xk share an exponent range (Sterbenz)
    let base = floor as u32;
    if frac == 0.0 {
        return base;
    }
    // frac is in (0, 1): a valid probability.
    base + u32::from(Bernoulli::expand(frac).sample(rng))
}

/// One-hot encoding of `category` in a domain of `m` values: a vector with a single 1.
/// Returns `None` if `category >= m`.
pub fn one_hot(category: u32, m: u32) -> Option<Vec<u8>> {
    if category >= m {
        return None;
    }
    let mut v = vec![0u8; m as usize];
    v[category as usize] = 1;
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::simulation_rng;

    #[test]
    fn rounding_is_unbiased_and_in_range() {
        let mut rng = simulation_rng(5);
        let k = Precision::new(7).unwrap();
        for x in [0.0, 1.0, 0.3, 0.5, 0.99, 1.0 / 7.0] {
            let xv = UnitValue::new(x).unwrap();
            let reps = 400_000;
            let mut sum = 0u64;
            for _ in 0..reps {
                let r = randomized_round(xv, k, &mut rng);
                assert!(r <= 7);
                sum += u64::from(r);
            }
            let mean = sum as f64 / reps as f64;
            // Var <= 1/4 per draw; 5 sigma of the mean.
            let tol = 5.0 * (0.25f64 / reps as f64).sqrt();
            assert!((mean - 7.0 * x).abs() < tol, "x = {x}: {mean}");
        }
    }

    #[test]
    fn endpoints_are_deterministic() {
        let mut rng = simulation_rng(1);
        let k = Precision::new(3).unwrap();
        assert_eq!(
            randomized_round(UnitValue::new(0.0).unwrap(), k, &mut rng),
            0
        );
        assert_eq!(
            randomized_round(UnitValue::new(1.0).unwrap(), k, &mut rng),
            3
        );
    }

    #[test]
    fn one_hot_encodes() {
        assert_eq!(one_hot(2, 4), Some(vec![0, 0, 1, 0]));
        assert_eq!(one_hot(4, 4), None);
    }
}
