//! Random bits a few at a time, for batched simulations: a [`BitPool`] serves w-bit pieces of
//! 64-bit generator words (every bit used at most once), and [`Coins`] serves exact
//! Bernoulli(p) coins made 64 at a time by [`Bernoulli::sample_lanes`].
//!
//! Exactness: each piece is a fresh run of independent uniform bits, and which bits a draw
//! uses never depends on their values, so every sampler built on them (Lemire's rejection in
//! [`BitPool::uniform`], the lazy comparison of [`Bernoulli::sample_pool`]) has the same
//! distribution as on whole generator words.

use super::Bernoulli;
use rand_core::{CryptoRng, RngCore};

/// A CSPRNG that also serves fresh uniform bits a few at a time: [`BitSource::bits`] takes
/// `w` bits of a word of the generator that no other draw has used (the leftover bits of a
/// word stay for the next piece; too few for a piece, they are discarded, never reused), while
/// the [`rand_core::RngCore`] methods keep drawing whole words from the generator. Which bits
/// a draw uses never depends on their values, so the pieces are independent uniform bits and
/// every lazy comparison or rejection sampler built on them has the law it has on whole words.
///
/// Implemented (sealed) by [`crate::rng::SecureRng`], [`crate::rng::SimulationRng`] and
/// [`BitPool`]: exact samplers that need only a few bits per decision (a blanket coin
/// Bernoulli(gamma) with gamma about 1e-3 is decided by 8 bits with probability 255/256)
/// draw those instead of a 32-bit word, a quarter of the generator output.
pub trait BitSource: CryptoRng + sealed::Sealed {
    /// `w` fresh uniform bits as an integer below 2^w; `w` must be in 1..=32.
    fn bits(&mut self, w: u32) -> u64;
}

pub(crate) mod sealed {
    /// Only the crate's generators are bit sources.
    pub trait Sealed {}
}

/// The unused bits of the last 64-bit word a [`BitSource`] drew (high bits first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Leftover {
    word: u64,
    left: u32,
}

impl Leftover {
    /// `w` (1..=32) fresh bits: from the leftover word, or from a new word of `rng` when fewer
    /// than `w` are left (the rest of the old word is discarded).
    #[inline(always)]
    pub(crate) fn bits<R: RngCore + ?Sized>(&mut self, rng: &mut R, w: u32) -> u64 {
        debug_assert!((1..=32).contains(&w));
        if self.left < w {
            self.word = rng.next_u64();
            self.left = 64;
        }
        let v = self.word >> (64 - w);
        self.word <<= w;
        self.left -= w;
        v
    }
}

/// A uniform integer below `bound` (> 0) from a [`BitSource`], without bias: Lemire's
/// multiply-shift with rejection of the 2^w mod bound biased low products ("Fast random
/// integer generation in an interval", ACM TOMACS 2019), on w = 16 bits when bound <= 2^10 (a
/// rejection probability below 2^-6) and on w = 32 bits otherwise. Always inlined: it is one
/// multiplication and a rarely taken branch per call, and the vector-sum client calls it once
/// per user (measured: left out of line, it was 5% of `blanket bench`).
#[inline(always)]
pub fn uniform_bits<L: BitSource + ?Sized>(src: &mut L, bound: u32) -> u32 {
    debug_assert!(bound > 0);
    let w = if bound <= 1 << 10 { 16 } else { 32 };
    let b = u64::from(bound);
    let mask = (1u64 << w) - 1;
    let mut m = src.bits(w) * b;
    if m & mask < b {
        // 2^w mod bound.
        let threshold = (1u64 << w) % b;
        while m & mask < threshold {
            m = src.bits(w) * b;
        }
    }
    (m >> w) as u32
}

/// w-bit pieces (1 <= w <= 32) of the words of an owned CSPRNG; leftover bits too few for
/// a piece are discarded (never reused). Its [`RngCore`] methods draw whole words of the
/// generator.
#[derive(Debug)]
pub struct BitPool<R> {
    rng: R,
    spare: Leftover,
}

impl<R: CryptoRng> BitPool<R> {
    /// A pool over `rng`, empty.
    pub fn new(rng: R) -> Self {
        Self {
            rng,
            spare: Leftover::default(),
        }
    }

    /// The generator itself (for draws of whole words).
    pub fn rng(&mut self) -> &mut R {
        &mut self.rng
    }

    /// `w` fresh uniform bits as an integer below 2^w; `w` must be in 1..=32.
    #[inline]
    pub fn bits(&mut self, w: u32) -> u64 {
        self.spare.bits(&mut self.rng, w)
    }

    /// A uniform integer below `bound` (> 0), without bias ([`uniform_bits`]).
    #[inline]
    pub fn uniform(&mut self, bound: u32) -> u32 {
        uniform_bits(self, bound)
    }
}

impl<R: CryptoRng> RngCore for BitPool<R> {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.rng.next_u32()
    }
    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }
    #[inline]
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.rng.fill_bytes(dst)
    }
}

impl<R: CryptoRng> CryptoRng for BitPool<R> {}

impl<R: CryptoRng> sealed::Sealed for BitPool<R> {}

impl<R: CryptoRng> BitSource for BitPool<R> {
    #[inline]
    fn bits(&mut self, w: u32) -> u64 {
        self.spare.bits(&mut self.rng, w)
    }
}

/// A stream of independent exact Bernoulli(p) coins, made 64 at a time.
#[derive(Debug, Clone)]
pub struct Coins {
    coin: Bernoulli,
    lanes: u64,
    left: u32,
}

impl Coins {
    /// Coins with the probability of `coin`.
    pub fn new(coin: Bernoulli) -> Self {
        Self {
            coin,
            lanes: 0,
            left: 0,
        }
    }

    /// The next coin.
    #[inline]
    pub fn next<R: CryptoRng>(&mut self, pool: &mut BitPool<R>) -> bool {
        if self.left == 0 {
            self.lanes = self.coin.sample_lanes(pool.rng());
            self.left = 64;
        }
        let c = self.lanes & 1 == 1;
        self.lanes >>= 1;
        self.left -= 1;
        c
    }

    /// How many of the next `k` coins are true: a Binomial(k, p) draw, exact.
    pub fn count<R: CryptoRng>(&mut self, mut k: u64, pool: &mut BitPool<R>) -> u64 {
        let mut hits = 0u64;
        while k > 0 {
            if self.left == 0 {
                if k >= 64 {
                    // Whole words straight from the sampler.
                    hits += u64::from(self.coin.sample_lanes(pool.rng()).count_ones());
                    k -= 64;
                    continue;
                }
                self.lanes = self.coin.sample_lanes(pool.rng());
                self.left = 64;
            }
            let take = k.min(u64::from(self.left)) as u32;
            let mask = if take == 64 {
                u64::MAX
            } else {
                (1u64 << take) - 1
            };
            hits += u64::from((self.lanes & mask).count_ones());
            self.lanes = self.lanes.checked_shr(take).unwrap_or(0);
            self.left -= take;
            k -= u64::from(take);
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::simulation_rng;
    use crate::sample::stats::{chi_square, chi_square_critical};
    use rand_core::RngCore;

    #[test]
    fn pool_uniform_chi_square() {
        // Fixed seed, significance ~1e-6, bounds on both the 16- and the 32-bit path.
        let mut pool = BitPool::new(simulation_rng(4));
        for bound in [1u32, 2, 3, 7, 100, 1000, 1025, 3 << 20] {
            let cells = bound.min(64) as usize;
            let draws = 300_000u64;
            let mut counts = vec![0u64; cells];
            for _ in 0..draws {
                let v = pool.uniform(bound);
                assert!(v < bound);
                // Equal-probability cells: v mod 64 is not uniform for bound > 64 unless
                // bound is a multiple of 64, so use v * cells / bound for the big ones.
                counts[(u64::from(v) * cells as u64 / u64::from(bound)) as usize] += 1;
            }
            if cells > 1 {
                let expected: Vec<f64> = (0..cells as u64)
                    .map(|c| {
                        // Values v with floor(v cells / bound) = c.
                        let lo = (c * u64::from(bound)).div_ceil(cells as u64);
                        let hi = ((c + 1) * u64::from(bound)).div_ceil(cells as u64);
                        draws as f64 * (hi - lo) as f64 / f64::from(bound)
                    })
                    .collect();
                let stat = chi_square(&counts, &expected);
                assert!(
                    stat < chi_square_critical(cells - 1),
                    "bound {bound}: {stat}"
                );
            }
        }
    }

    #[test]
    fn pool_never_reuses_bits() {
        // 64 one-bit pieces of a word are the word's bits, high first; then a new word.
        let mut a = simulation_rng(9);
        let mut pool = BitPool::new(simulation_rng(9));
        for _ in 0..3 {
            let w = a.next_u64();
            let mut got = 0u64;
            for _ in 0..64 {
                got = (got << 1) | pool.bits(1);
            }
            assert_eq!(got, w);
        }
        // 3 pieces of 20 bits use 60 bits; the 4 left over are discarded.
        let w = a.next_u64();
        let pieces: Vec<u64> = (0..3).map(|_| pool.bits(20)).collect();
        assert_eq!(
            pieces,
            vec![w >> 44, (w >> 24) & 0xfffff, (w >> 4) & 0xfffff]
        );
        assert_eq!(pool.bits(20), a.next_u64() >> 44);
    }

    #[test]
    fn coin_counts_are_binomial() {
        // count(k) is Binomial(k, p): chi-square of 20000 draws of count(10) against the
        // binomial pmf (p = 0.3), with coins carried over between calls; and count(1000)
        // has the binomial mean within 5 standard errors for a small p.
        let mut pool = BitPool::new(simulation_rng(8));
        let mut coins = Coins::new(Bernoulli::new(0.3).unwrap());
        let draws = 20_000u64;
        let mut hist = [0u64; 11];
        for _ in 0..draws {
            hist[coins.count(10, &mut pool) as usize] += 1;
        }
        let pmf: Vec<f64> = (0..=10u32)
            .map(|i| {
                let c = (0..i).fold(1.0, |a, j| a * f64::from(10 - j) / f64::from(j + 1));
                c * 0.3f64.powi(i as i32) * 0.7f64.powi(10 - i as i32)
            })
            .collect();
        // Pool the cells with expected count below 5 (i >= 8) into one.
        let mut obs: Vec<u64> = hist[..8].to_vec();
        obs.push(hist[8..].iter().sum());
        let mut exp: Vec<f64> = pmf[..8].iter().map(|p| p * draws as f64).collect();
        exp.push(pmf[8..].iter().sum::<f64>() * draws as f64);
        let stat = chi_square(&obs, &exp);
        assert!(stat < chi_square_critical(8), "{hist:?}: {stat}");
        let p = 1.3e-3;
        let mut coins = Coins::new(Bernoulli::new(p).unwrap());
        let (reps, k) = (2000u64, 1000u64);
        let total: u64 = (0..reps).map(|_| coins.count(k, &mut pool)).sum();
        let n = (reps * k) as f64;
        let sd = (n * p * (1.0 - p)).sqrt();
        assert!((total as f64 - n * p).abs() < 5.0 * sd, "{total}");
        let ones = (0..100_000).filter(|_| coins.next(&mut pool)).count() as f64;
        let sd = (1e5 * p * (1.0 - p)).sqrt();
        assert!((ones - 1e5 * p).abs() < 5.0 * sd, "{ones}");
    }
}
