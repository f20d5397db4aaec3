//! Encoders: turn a user's value into the integer(s) a randomizer takes.

use crate::params::{Precision, UnitValue};
use crate::sample::{uniform_u32, Bernoulli, BitSource};
use rand_core::CryptoRng;

/// Unbiased randomized rounding of x in [0, 1] to {0, ..., k}:
/// `floor(x k) + Bernoulli(x k - floor(x k))`, so E[result] = x k
/// (Balle et al. 2019, Section 4; Scott et al. 2021, Algorithm 2).
///
/// `x k` is computed in `f64`; its rounding (at most half an ulp of `x k`) is the only bias,
/// below 1e-16 relative, and it touches accuracy only: privacy comes from the randomizer.
#[inline]
pub fn randomized_round<R: CryptoRng + ?Sized>(x: UnitValue, k: Precision, rng: &mut R) -> u32 {
    let (base, frac) = split_level(x.get(), k);
    if frac == 0.0 {
        return base;
    }
    // frac is in (0, 1): a valid probability.
    base + u32::from(Bernoulli::expand(frac).sample(rng))
}

/// [`randomized_round`] with the rounding coin's first 8 bits from a [`BitSource`]
/// ([`Bernoulli::sample_pool`]): the same law, floor(x k) + Bernoulli(x k - floor(x k)), for
/// clients (the scalar and vector sums on [`crate::rng::SecureRng`]) and batched simulations.
/// `x` is the value of a [`UnitValue`] (in [0, 1]). The first 8 binary digits of the fraction
/// are floor(frac 2^8) (exact: scaling by a power of two, then truncation), compared with 8
/// pool bits; only on a tie (probability 2^-8) is the fraction expanded for the rest of the
/// comparison. A fraction of 0 is never above U, so it needs no branch (8 bits are drawn).
#[inline]
pub(crate) fn randomized_round_pool<L: BitSource + ?Sized>(
    x: f64,
    k: Precision,
    pool: &mut L,
) -> u32 {
    let (base, frac) = split_level(x, k);
    let top = (frac * 256.0) as u64;
    let u = pool.bits(8);
    if u != top {
        return base + u32::from(u < top);
    }
    base + u32::from(Bernoulli::expand(frac).sample_pool_tie(pool))
}

/// (floor(x k), x k - floor(x k)) for x in [0, 1]. x k lies in [0, 2^26), so the truncating
/// conversion is the floor, and the difference is exact (Sterbenz: base <= x k < 2 base when
/// base >= 1; x k itself when base = 0). Avoids a call to libm's `floor`.
#[inline]
pub(crate) fn split_level(x: f64, k: Precision) -> (u32, f64) {
    let xk = x * f64::from(k.get());
    let base = xk as u32;
    (base, xk - f64::from(base))
}

/// Samples `out.len()` distinct coordinates uniformly from {0, ..., d - 1} (sampling without
/// replacement, Scott et al. 2021, Algorithm 2) into `out`, without allocating: Floyd's
/// algorithm (Bentley and Floyd, "A sample of brilliance", CACM 1987), one exact
/// [`uniform_u32`] draw per coordinate. Every t-subset is equally likely; the order within
/// `out` is not uniform, which no protocol here uses. For t = 1 it is a single
/// `uniform_u32(d)`. The membership test is a scan of the coordinates drawn so far
/// (O(t^2) per user), cheap for the small t that minimize the error; t = d takes every
/// coordinate in order.
///
/// Returns `None` (and leaves `out` untouched) unless 1 <= t <= d, where t = `out.len()`.
#[inline]
pub fn sample_coordinates<R: CryptoRng + ?Sized>(
    d: u32,
    out: &mut [u32],
    rng: &mut R,
) -> Option<()> {
    let t = u32::try_from(out.len()).ok()?;
    if t == 0 || t > d {
        return None;
    }
    if t == 1 {
        out[0] = uniform_u32(rng, d);
        return Some(());
    }
    if t == d {
        for (i, o) in out.iter_mut().enumerate() {
            *o = i as u32;
        }
        return Some(());
    }
    for (filled, j) in (d - t..d).enumerate() {
        let r = uniform_u32(rng, j + 1);
        out[filled] = if out[..filled].contains(&r) { j } else { r };
    }
    Some(())
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
    use crate::sample::BitPool;

    #[test]
    fn pooled_rounding_has_the_same_law() {
        // Level floor(x k) + 1 with probability frac = x k - floor(x k): chi-square (1 df,
        // ~1e-6) of the two levels' counts, for fractions with digits beyond the first 8 and
        // one that ties with U's first 8 bits whenever they are 10000000 (frac = 1/2 + 2^-20).
        use crate::sample::stats::{chi_square, chi_square_critical};
        let mut pool = BitPool::new(simulation_rng(15));
        let k = Precision::new(4).unwrap();
        for x in [0.3, 0.9, 0.01, (2.5 + 2f64.powi(-20)) / 4.0] {
            let xk = x * 4.0;
            let (base, frac) = (xk.floor() as u32, xk - xk.floor());
            let draws = 400_000u64;
            let mut up = 0u64;
            for _ in 0..draws {
                let r = randomized_round_pool(x, k, &mut pool);
                assert!(r == base || r == base + 1, "x = {x}: {r}");
                up += u64::from(r == base + 1);
            }
            let d = draws as f64;
            let stat = chi_square(&[draws - up, up], &[d * (1.0 - frac), d * frac]);
            assert!(stat < chi_square_critical(1), "x = {x}: {stat}");
        }
        // Exact levels never move.
        for _ in 0..10_000 {
            assert_eq!(randomized_round_pool(0.0, k, &mut pool), 0);
            assert_eq!(randomized_round_pool(1.0, k, &mut pool), 4);
            assert_eq!(randomized_round_pool(0.5, k, &mut pool), 2);
        }
    }

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

    #[test]
    fn coordinate_sampling_is_uniform_over_subsets() {
        // d = 5, t = 2: 10 subsets, each with probability 1/10; chi-square at ~1e-6.
        use crate::sample::stats::{chi_square, chi_square_critical};
        let mut rng = simulation_rng(21);
        let mut counts = [0u64; 25];
        let mut out = [0u32; 2];
        let draws = 200_000u64;
        for _ in 0..draws {
            sample_coordinates(5, &mut out, &mut rng).unwrap();
            assert_ne!(out[0], out[1]);
            assert!(out.iter().all(|&c| c < 5));
            let (a, b) = (out[0].min(out[1]), out[0].max(out[1]));
            counts[(a * 5 + b) as usize] += 1;
        }
        let observed: Vec<u64> = (0..5u32)
            .flat_map(|a| (a + 1..5).map(move |b| (a * 5 + b) as usize))
            .map(|i| counts[i])
            .collect();
        assert_eq!(observed.iter().sum::<u64>(), draws);
        let expected = vec![draws as f64 / 10.0; 10];
        let stat = chi_square(&observed, &expected);
        assert!(stat < chi_square_critical(9), "chi2 = {stat}");
        // t = 1: one uniform coordinate; t = d: all of them.
        let mut one = [0u32; 1];
        let mut hits = [0u64; 7];
        for _ in 0..70_000 {
            sample_coordinates(7, &mut one, &mut rng).unwrap();
            hits[one[0] as usize] += 1;
        }
        let stat = chi_square(&hits, &[10_000.0; 7]);
        assert!(stat < chi_square_critical(6), "chi2 = {stat}");
        let mut all = [9u32; 4];
        sample_coordinates(4, &mut all, &mut rng).unwrap();
        assert_eq!(all, [0, 1, 2, 3]);
    }

    #[test]
    fn coordinate_sampling_rejects_bad_t() {
        let mut rng = simulation_rng(0);
        assert!(sample_coordinates(3, &mut [0u32; 4], &mut rng).is_none());
        assert!(sample_coordinates(3, &mut [], &mut rng).is_none());
        assert!(sample_coordinates(0, &mut [0u32; 1], &mut rng).is_none());
    }
}
