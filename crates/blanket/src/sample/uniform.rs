//! Exact uniform integers below a bound, without modulo bias (Lemire, "Fast random integer
//! generation in an interval", ACM TOMACS 2019: multiply-shift with rejection of the biased low
//! region; plain masking rejection for 128-bit bounds).

use rand_core::CryptoRng;

/// A uniform integer in {0, ..., bound - 1}, without modulo bias. `bound` must be > 0.
#[inline]
pub fn uniform_u32<R: CryptoRng + ?Sized>(rng: &mut R, bound: u32) -> u32 {
    debug_assert!(bound > 0);
    let mut m = u64::from(rng.next_u32()) * u64::from(bound);
    let mut low = m as u32;
    if low < bound {
        // Reject the 2^32 mod bound lowest products: they would be over-represented.
        let threshold = bound.wrapping_neg() % bound;
        while low < threshold {
            m = u64::from(rng.next_u32()) * u64::from(bound);
            low = m as u32;
        }
    }
    (m >> 32) as u32
}

/// A uniform integer in {0, ..., bound - 1} for 64-bit bounds, without modulo bias.
#[inline]
pub fn uniform_u64<R: CryptoRng + ?Sized>(rng: &mut R, bound: u64) -> u64 {
    debug_assert!(bound > 0);
    let mut m = u128::from(rng.next_u64()) * u128::from(bound);
    let mut low = m as u64;
    if low < bound {
        let threshold = bound.wrapping_neg() % bound;
        while low < threshold {
            m = u128::from(rng.next_u64()) * u128::from(bound);
            low = m as u64;
        }
    }
    (m >> 64) as u64
}

/// Uniform index below `bound` for `usize` collections.
#[inline]
pub fn uniform_usize<R: CryptoRng + ?Sized>(rng: &mut R, bound: usize) -> usize {
    uniform_u64(rng, bound as u64) as usize
}

/// A uniform integer in {0, ..., bound - 1} for 128-bit bounds, without bias; `bound` must be
/// positive. Bounds below 2^64 use [`uniform_u64`]; larger ones draw 128 bits, mask them to the bit
/// length of `bound - 1` and reject values >= `bound` (each try succeeds with probability > 1/2,
/// so the expected cost is below four 64-bit words).
#[inline]
pub fn uniform_u128<R: CryptoRng + ?Sized>(rng: &mut R, bound: u128) -> u128 {
    debug_assert!(bound > 0);
    if let Ok(b) = u64::try_from(bound) {
        return u128::from(uniform_u64(rng, b));
    }
    let mask = u128::MAX >> (bound - 1).leading_zeros();
    loop {
        let x = ((u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())) & mask;
        if x < bound {
            return x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::stats::*;
    use super::*;
    use crate::rng::simulation_rng;

    #[test]
    fn uniform_u32_chi_square() {
        let mut rng = simulation_rng(11);
        for bound in [1u32, 2, 3, 7, 10, 1000] {
            let mut counts = vec![0u64; bound as usize];
            let draws = 200_000u64;
            for _ in 0..draws {
                let v = uniform_u32(&mut rng, bound);
                assert!(v < bound);
                counts[v as usize] += 1;
            }
            if bound > 1 {
                let e = vec![draws as f64 / bound as f64; bound as usize];
                let stat = chi_square(&counts, &e);
                assert!(
                    stat < chi_square_critical(bound as usize - 1),
                    "bound {bound}: {stat}"
                );
            }
        }
    }

    #[test]
    fn uniform_large_bounds_reject_bias() {
        // With bound = 3 * 2^30 plain `x % bound` would favour the lowest 2^30 values with
        // probability 1/2 instead of 1/3. Lemire's rejection must not.
        let mut rng = simulation_rng(3);
        let bound = 3u32 << 30;
        let draws = 300_000;
        let low = (0..draws)
            .filter(|_| uniform_u32(&mut rng, bound) < (1 << 30))
            .count() as f64;
        let p = 1.0 / 3.0;
        let sd = (draws as f64 * p * (1.0 - p)).sqrt();
        assert!((low - draws as f64 * p).abs() < 5.0 * sd, "{low}");
        let b64 = 3u64 << 62;
        let low64 = (0..draws)
            .filter(|_| uniform_u64(&mut rng, b64) < (1 << 62))
            .count() as f64;
        assert!((low64 - draws as f64 * p).abs() < 5.0 * sd, "{low64}");
    }

    #[test]
    fn uniform_u128_thirds_above_two_to_the_64() {
        // bound = 3 * 2^64: each third [k 2^64, (k + 1) 2^64) has probability exactly 1/3;
        // chi-square over the thirds at significance ~1e-6.
        let mut rng = simulation_rng(5);
        let bound = 3u128 << 64;
        let draws = 300_000u64;
        let mut counts = [0u64; 3];
        for _ in 0..draws {
            let v = uniform_u128(&mut rng, bound);
            assert!(v < bound);
            counts[(v >> 64) as usize] += 1;
        }
        let e = [draws as f64 / 3.0; 3];
        let stat = chi_square(&counts, &e);
        assert!(stat < chi_square_critical(2), "{counts:?}: {stat}");
        for b in [1u128, 2, 7, u128::MAX] {
            for _ in 0..1000 {
                assert!(uniform_u128(&mut rng, b) < b);
            }
        }
    }
}
