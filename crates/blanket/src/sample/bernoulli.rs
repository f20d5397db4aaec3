//! Exact Bernoulli samplers: Bernoulli(p) for an `f64` p (lazy binary expansion), Bernoulli(a/b)
//! for integers a <= b, and Bernoulli(exp(-gamma)) for a rational gamma >= 0 (Canonne, Kamath,
//! Steinke 2020, Algorithm 1).

use super::bits::BitSource;
use super::uniform::uniform_u128;
use crate::params::{Gamma, ParamError, Rational};
use rand_core::CryptoRng;

/// An exact Bernoulli(p) sampler for a probability p given as an `f64`.
///
/// p = mant * 2^exp exactly (mant < 2^53). Word j of p's binary expansion (bits 64j+1 to
/// 64j+64 after the point) is `floor(mant * 2^(exp + 64(j+1))) mod 2^64`; the sampler draws
/// the words of a uniform U lazily and returns U < p. The first word is cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bernoulli {
    mant: u64,
    exp: i64,
    first: u64,
    always: bool,
}

impl Bernoulli {
    /// Builds the sampler; p must lie in [0, 1].
    pub fn new(p: f64) -> Result<Self, ParamError> {
        if !(0.0..=1.0).contains(&p) {
            return Err(ParamError::OutOfRange {
                field: "probability",
                allowed: "a number in [0, 1]",
                value: p.to_string(),
            });
        }
        Ok(Self::expand(p))
    }

    /// The sampler for a gamma (already validated to lie in (0, 1)).
    pub fn from_gamma(gamma: Gamma) -> Self {
        Self::expand(gamma.get())
    }

    /// Expands p, which the caller guarantees to lie in [0, 1] (NaN is treated as 0).
    #[inline]
    pub(crate) fn expand(p: f64) -> Self {
        debug_assert!((0.0..=1.0).contains(&p));
        if p >= 1.0 {
            // first = 2^64 - 1: U's first word is below it except when equal, and the tail
            // then answers true.
            return Self {
                mant: 0,
                exp: 0,
                first: u64::MAX,
                always: true,
            };
        }
        let (mant, exp) = if p > 0.0 { decompose(p) } else { (0, 0) };
        Self {
            mant,
            exp,
            first: word(mant, exp, 0),
            always: false,
        }
    }

    /// The probability p this sampler realizes exactly.
    pub fn p(&self) -> f64 {
        if self.always {
            return 1.0;
        }
        // mant * 2^exp; split the scaling so that subnormal results stay exact.
        let half = self.exp / 2;
        self.mant as f64 * 2f64.powi(half as i32) * 2f64.powi((self.exp - half) as i32)
    }

    /// Draws one sample: true with probability exactly p.
    ///
    /// U's bits are drawn 32 at a time while they can still decide: the high half of U's first
    /// 64-bit word is compared with the high half of p's, and only on a tie (probability 2^-32)
    /// is the low half drawn, then (on a second tie, 2^-64 in all) the following words. This is
    /// the same comparison of U with p as on whole 64-bit words, on half the generator output.
    #[inline]
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> bool {
        let hi = rng.next_u32();
        let first_hi = (self.first >> 32) as u32;
        if hi != first_hi {
            return hi < first_hi;
        }
        self.sample_low(rng)
    }

    /// The high halves tied (probability 2^-32): compare the low half of the first word.
    #[cold]
    fn sample_low<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> bool {
        let lo = rng.next_u32();
        let first_lo = self.first as u32;
        if lo != first_lo {
            return lo < first_lo;
        }
        self.sample_tail(rng)
    }

    /// 64 independent Bernoulli(p) draws at once, as the bits of the result (bit l is lane
    /// l's outcome), for batched simulations.
    ///
    /// Bit-sliced lazy comparison: lane l has its own uniform U_l, whose i-th binary digit is
    /// bit l of the i-th 64-bit word drawn. The digits of U_l are compared with p's expansion
    /// from the most significant: where p's digit is 1, a lane whose digit is 0 is decided
    /// true (U_l < p); where p's digit is 0, a lane whose digit is 1 is decided false; equal
    /// digits leave the lane undecided. Once p's remaining digits are all 0 the undecided
    /// lanes have U_l >= p (false). This is the comparison of [`Bernoulli::sample`], for 64
    /// lanes at once: each lane is true with probability exactly p, and lanes are independent
    /// (disjoint bits). A lane is still undecided after i digits with probability 2^-i,
    /// whatever p, so a call draws sum_i (1 - (1 - 2^-i)^64), about 7.3 words on average:
    /// 0.11 of a 64-bit word per coin, against one 32-bit word per [`Bernoulli::sample`].
    pub fn sample_lanes<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> u64 {
        if self.always {
            return u64::MAX;
        }
        let mut undecided = u64::MAX;
        let mut result = 0u64;
        let mut j = 0i64;
        loop {
            let w = if j == 0 {
                self.first
            } else {
                word(self.mant, self.exp, j)
            };
            // Every word of p after word j is zero.
            let last = self.exp + 64 * (j + 2) >= 64;
            for b in (0..64).rev() {
                if last && (w & (u64::MAX >> (63 - b))) == 0 {
                    // p's digits from here on are all 0: U_l >= p for the undecided lanes.
                    return result;
                }
                let u = rng.next_u64();
                if (w >> b) & 1 == 1 {
                    result |= undecided & !u;
                    undecided &= u;
                } else {
                    undecided &= !u;
                }
                if undecided == 0 {
                    return result;
                }
            }
            j += 1;
        }
    }

    /// [`Bernoulli::sample`] drawing U's first 8 bits from a [`BitSource`] (a quarter of a
    /// 32-bit word per coin): on a tie with p's first 8 bits (probability 2^-8) the other 56
    /// bits of U's first word are drawn from the source, and on a second tie the following
    /// words from the generator. The same comparison of a uniform U with p, so true with
    /// probability exactly p. What clients (`Grr`, on [`crate::rng::SecureRng`]) and batched
    /// simulations (on a [`super::BitPool`]) run.
    #[inline]
    pub fn sample_pool<L: BitSource + ?Sized>(&self, pool: &mut L) -> bool {
        let u = pool.bits(8);
        let first = self.first >> 56;
        if u != first {
            return u < first;
        }
        self.sample_pool_tie(pool)
    }

    /// The rest of [`Bernoulli::sample_pool`] once U's first 8 bits equal p's.
    #[cold]
    pub(crate) fn sample_pool_tie<L: BitSource + ?Sized>(&self, pool: &mut L) -> bool {
        let u = (pool.bits(28) << 28) | pool.bits(28);
        let rest = self.first & ((1u64 << 56) - 1);
        if u != rest {
            return u < rest;
        }
        self.sample_tail(pool)
    }

    /// The rare case (probability 2^-64 per call) where the first word of U equals p's.
    #[cold]
    fn sample_tail<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> bool {
        if self.always {
            return true;
        }
        let mut j = 1;
        loop {
            if self.exp + 64 * (j + 1) >= 64 {
                // Every remaining word of p is zero: U >= p.
                return false;
            }
            let w = word(self.mant, self.exp, j);
            let u = rng.next_u64();
            if u != w {
                return u < w;
            }
            j += 1;
        }
    }
}

/// p = mant * 2^exp with mant < 2^53, for finite p > 0.
fn decompose(p: f64) -> (u64, i64) {
    let bits = p.to_bits();
    let raw_exp = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    if raw_exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), raw_exp - 1075)
    }
}

/// Word j of the binary expansion of mant * 2^exp (< 1).
#[inline]
fn word(mant: u64, exp: i64, j: i64) -> u64 {
    let s = exp + 64 * (j + 1);
    if s >= 64 || s <= -64 {
        0
    } else if s >= 0 {
        mant << s
    } else {
        mant >> -s
    }
}

/// Bernoulli(num/den) exactly, for integers 0 <= num <= den and den > 0 (debug-asserted, like
/// the uniform bounds): true iff a uniform integer in {0, ..., den - 1} is below num; num >= den
/// always gives true. Cost: one [`uniform_u128`] draw (one 64-bit word, rarely two, when
/// den < 2^64).
#[inline]
pub fn bernoulli_ratio<R: CryptoRng + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    debug_assert!(den > 0);
    if num >= den {
        return true;
    }
    if num == 0 {
        return false;
    }
    uniform_u128(rng, den) < num
}

/// Bernoulli(exp(-gamma)) exactly for a rational gamma >= 0 (Canonne, Kamath, Steinke, "The
/// Discrete Gaussian for Differential Privacy", NeurIPS 2020, arXiv 2004.00010, Algorithm 1).
///
/// Only integer arithmetic and exact Bernoulli(a/b) draws are used. For gamma in [0, 1]: K = 1;
/// while Bernoulli(gamma/K) succeeds, K += 1; return K odd. Pr(K > k) = gamma^k / k!, so
/// Pr[K odd] = sum_j (-1)^j gamma^j / j! = exp(-gamma), and the expected number of
/// Bernoulli(gamma/k) draws (one uniform integer each) is exp(gamma) <= e. For gamma > 1:
/// floor(gamma) independent Bernoulli(exp(-1)) draws, stopping at the first failure, then
/// Bernoulli(exp(-(gamma - floor(gamma)))). The loop stops early with probability 1 - 1/e per
/// step, so the expected cost is at most (1/(1 - 1/e) + 1) e, about 7 uniform draws, however large
/// gamma is.
pub fn bernoulli_exp_neg<R: CryptoRng + ?Sized>(rng: &mut R, gamma: &Rational) -> bool {
    bernoulli_exp_neg_frac(rng, u128::from(gamma.num()), u128::from(gamma.den()))
}

/// [`bernoulli_exp_neg`] for gamma = num/den with 128-bit parts (den > 0).
pub(crate) fn bernoulli_exp_neg_frac<R: CryptoRng + ?Sized>(
    rng: &mut R,
    num: u128,
    den: u128,
) -> bool {
    debug_assert!(den > 0);
    let whole = num / den;
    let mut i = 0u128;
    while i < whole {
        if !bernoulli_exp_neg_unit(rng, 1, 1) {
            return false;
        }
        i += 1;
    }
    bernoulli_exp_neg_unit(rng, num % den, den)
}

/// Bernoulli(exp(-num/den)) for num <= den (CKS Algorithm 1, the gamma in [0, 1] branch).
fn bernoulli_exp_neg_unit<R: CryptoRng + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    debug_assert!(num <= den);
    let mut k: u128 = 1;
    loop {
        // Bernoulli(num / (den k)); if den k overflows, draw it as Bernoulli(num/den) AND
        // Bernoulli(1/k), an exact product of independent coins.
        let success = match den.checked_mul(k) {
            Some(dk) => bernoulli_ratio(rng, num, dk),
            None => bernoulli_ratio(rng, num, den) && bernoulli_ratio(rng, 1, k),
        };
        if !success {
            return k % 2 == 1;
        }
        k += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::simulation_rng;
    use crate::sample::stats::{chi_square, chi_square_critical};
    use rand_core::RngCore;

    #[test]
    fn bernoulli_expansion_is_exact() {
        for p in [
            0.0,
            0.5,
            0.25,
            0.1,
            1.0 / 3.0,
            0.999_999,
            1e-300,
            5e-324,
            0.75,
        ] {
            let b = Bernoulli::new(p).unwrap();
            assert_eq!(b.p(), p, "p = {p}");
        }
        assert_eq!(Bernoulli::new(0.5).unwrap().first, 1u64 << 63);
        assert_eq!(Bernoulli::new(1.0).unwrap().p(), 1.0);
        assert!(Bernoulli::new(1.0000001).is_err());
        assert!(Bernoulli::new(-0.0).is_ok());
        assert!(Bernoulli::new(f64::NAN).is_err());
    }

    #[test]
    fn bernoulli_extremes() {
        let mut rng = simulation_rng(1);
        let never = Bernoulli::new(0.0).unwrap();
        let always = Bernoulli::new(1.0).unwrap();
        for _ in 0..10_000 {
            assert!(!never.sample(&mut rng));
            assert!(always.sample(&mut rng));
        }
    }

    #[test]
    fn bernoulli_frequency_within_five_sigma() {
        // Fixed seed; tolerance 5 standard deviations of a binomial proportion.
        let mut rng = simulation_rng(7);
        for p in [0.1, 1.0 / 3.0, 0.7310585786300049, 1e-3] {
            let b = Bernoulli::new(p).unwrap();
            let trials = 2_000_000u64;
            let hits = (0..trials).filter(|_| b.sample(&mut rng)).count() as f64;
            let sd = (trials as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (hits - trials as f64 * p).abs() < 5.0 * sd,
                "p = {p}: {hits}"
            );
        }
    }

    #[test]
    fn bernoulli_tail_words_are_used() {
        // p = 2^-70 lives entirely in the second word: the first word of U must be 0 (rare),
        // so a sampler that ignored the tail would never fire; check the deterministic path
        // with a generator that returns zeros.
        struct Zeros;
        impl rand_core::RngCore for Zeros {
            fn next_u32(&mut self) -> u32 {
                0
            }
            fn next_u64(&mut self) -> u64 {
                0
            }
            fn fill_bytes(&mut self, d: &mut [u8]) {
                d.fill(0)
            }
        }
        impl CryptoRng for Zeros {}
        let b = Bernoulli::new(2f64.powi(-70)).unwrap();
        assert_eq!(b.first, 0);
        assert_eq!(word(b.mant, b.exp, 1), 1u64 << 58);
        assert!(b.sample(&mut Zeros), "U = 0 < p must give true");
        let z = Bernoulli::new(0.0).unwrap();
        assert!(!z.sample(&mut Zeros), "U = 0 is not < 0");
    }

    /// Replays scripted 32-bit words (and their pairs as 64-bit words, high half first).
    struct Script(Vec<u32>, usize);
    impl rand_core::RngCore for Script {
        fn next_u32(&mut self) -> u32 {
            self.1 += 1;
            self.0[self.1 - 1]
        }
        fn next_u64(&mut self) -> u64 {
            let hi = u64::from(self.next_u32());
            (hi << 32) | u64::from(self.next_u32())
        }
        fn fill_bytes(&mut self, _: &mut [u8]) {
            unreachable!()
        }
    }
    impl CryptoRng for Script {}

    #[test]
    fn bernoulli_32_bit_first_draw_is_the_64_bit_comparison() {
        // The sample is U < p for U = 0.w1 w2 w3 ... (32-bit words, high first): exactly the
        // comparison on whole 64-bit words. Checked against that reference on words that
        // differ from p's in the high half, tie in the high half only, tie in the whole first
        // word, and for p whose expansion spans several words.
        use rand_core::RngCore;
        let mut gen = simulation_rng(99);
        let reference = |b: &Bernoulli, words: &[u32]| -> bool {
            // U < p on 64-bit words, the tail read as in sample_tail.
            let u0 = (u64::from(words[0]) << 32) | u64::from(words[1]);
            if u0 != b.first {
                return u0 < b.first;
            }
            let mut s = Script(words[2..].to_vec(), 0);
            b.sample_tail(&mut s)
        };
        for p in [
            0.1,
            1.0 / 3.0,
            0.5,
            1e-3,
            0.999,
            2f64.powi(-70),
            1.0,
            0.0,
            5e-324,
        ] {
            let b = Bernoulli::new(p).unwrap();
            let (fh, fl) = ((b.first >> 32) as u32, b.first as u32);
            for case in 0..4000 {
                let mut w: Vec<u32> = (0..8).map(|_| gen.next_u32()).collect();
                match case % 4 {
                    1 => w[0] = fh,
                    2 => (w[0], w[1]) = (fh, fl),
                    3 => (w[0], w[1]) = (fh, fl.wrapping_add(case as u32 % 3).wrapping_sub(1)),
                    _ => {}
                }
                let got = b.sample(&mut Script(w.clone(), 0));
                assert_eq!(got, reference(&b, &w), "p = {p}, words {w:?}");
            }
        }
        // A non-tie decides on one 32-bit word.
        let b = Bernoulli::new(0.25).unwrap();
        let mut s = Script(vec![0x3fff_ffff, 7, 7], 0);
        assert!(b.sample(&mut s));
        assert_eq!(s.1, 1);
    }

    #[test]
    fn bernoulli_chi_square_over_outcomes() {
        // Chi-square (1 df) of the outcome counts against (1 - p, p), 1e-6 level, fixed seed,
        // for p with bits in both halves of the first word and beyond it.
        let mut rng = simulation_rng(77);
        for p in [0.3, 0.5 + 2f64.powi(-40), 2f64.powi(-33) * 3.0 + 0.125] {
            let b = Bernoulli::new(p).unwrap();
            let trials = 1_000_000u64;
            let hits = (0..trials).filter(|_| b.sample(&mut rng)).count() as u64;
            let stat = crate::sample::stats::chi_square(
                &[trials - hits, hits],
                &[trials as f64 * (1.0 - p), trials as f64 * p],
            );
            assert!(
                stat < crate::sample::stats::chi_square_critical(1),
                "p = {p}: {stat}"
            );
        }
    }

    /// Replays 64-bit words, logging them (for the batched samplers' replay tests).
    struct Words {
        rng: crate::rng::SimulationRng,
        script: Vec<u64>,
        log: Vec<u64>,
    }
    impl rand_core::RngCore for Words {
        fn next_u32(&mut self) -> u32 {
            self.next_u64() as u32
        }
        fn next_u64(&mut self) -> u64 {
            let w = if self.script.is_empty() {
                self.rng.next_u64()
            } else {
                self.script.remove(0)
            };
            self.log.push(w);
            w
        }
        fn fill_bytes(&mut self, d: &mut [u8]) {
            d.iter_mut().for_each(|b| *b = self.next_u64() as u8)
        }
    }
    impl CryptoRng for Words {}

    fn words(seed: u64, script: Vec<u64>) -> Words {
        Words {
            rng: simulation_rng(seed),
            script,
            log: Vec::new(),
        }
    }

    /// Digit i (0-based, after the binary point) of p's expansion.
    fn digit(b: &Bernoulli, i: usize) -> u64 {
        (word(b.mant, b.exp, (i / 64) as i64) >> (63 - i % 64)) & 1
    }

    #[test]
    fn lanes_are_the_lazy_comparison_lane_by_lane() {
        // Lane l's U has digit i = bit l of the i-th word drawn; its outcome must be the
        // exact comparison U_l < p on those digits, and a lane still tied when the sampler
        // stops must have only zero digits of p left (U_l >= p).
        for p in [
            0.3,
            1e-3,
            0.5,
            0.75,
            2f64.powi(-70),
            0.5 + 2f64.powi(-60),
            2f64.powi(-7) * 3.0 + 2f64.powi(-100),
            5e-324,
            0.0,
        ] {
            let b = Bernoulli::new(p).unwrap();
            let mut rng = words(3, Vec::new());
            for _ in 0..300 {
                rng.log.clear();
                let r = b.sample_lanes(&mut rng);
                for l in 0..64 {
                    let mut want = None;
                    for (i, w) in rng.log.iter().enumerate() {
                        let (u, pd) = ((w >> l) & 1, digit(&b, i));
                        if u != pd {
                            want = Some(u < pd);
                            break;
                        }
                    }
                    let want = want.unwrap_or_else(|| {
                        let drawn = rng.log.len();
                        assert!(
                            (drawn..drawn + 64 * 20).all(|i| digit(&b, i) == 0),
                            "p = {p}: lane {l} undecided with digits of p left"
                        );
                        false
                    });
                    assert_eq!((r >> l) & 1 == 1, want, "p = {p}, lane {l}");
                }
            }
        }
        let mut rng = simulation_rng(1);
        assert_eq!(
            Bernoulli::new(1.0).unwrap().sample_lanes(&mut rng),
            u64::MAX
        );
    }

    #[test]
    fn lanes_chi_square_and_independence() {
        // Joint outcomes of lanes 0 and 37 over 200000 calls against (1 - p, p)^2, and the
        // total over all lanes within 5 sd, fixed seed, significance ~1e-6.
        let mut rng = simulation_rng(12);
        for p in [0.3, 0.0019783785511743304] {
            let b = Bernoulli::new(p).unwrap();
            let calls = 200_000u64;
            let mut joint = [0u64; 4];
            let mut total = 0u64;
            for _ in 0..calls {
                let r = b.sample_lanes(&mut rng);
                joint[((r & 1) * 2 + ((r >> 37) & 1)) as usize] += 1;
                total += u64::from(r.count_ones());
            }
            let q = 1.0 - p;
            let c = calls as f64;
            let expected = [c * q * q, c * q * p, c * p * q, c * p * p];
            let stat = chi_square(&joint, &expected);
            assert!(stat < chi_square_critical(3), "p = {p}: {joint:?} {stat}");
            let n = c * 64.0;
            let sd = (n * p * q).sqrt();
            assert!((total as f64 - n * p).abs() < 5.0 * sd, "p = {p}: {total}");
        }
    }

    #[test]
    fn pooled_sample_is_the_comparison_of_the_pool_bits() {
        // The pool's first word A is U's first word: 8 bits, then (on a tie) 2 x 28 more.
        // So the outcome is A < first whenever A != first, and the tail decides A == first.
        use super::super::bits::BitPool;
        let b = Bernoulli::new(0.3).unwrap();
        let top = b.first & (0xffu64 << 56);
        let mut gen = simulation_rng(6);
        for i in 0..4000 {
            let a = match i % 4 {
                0 => gen.next_u64(),
                1 => top | (gen.next_u64() >> 8), // tie on the first 8 bits
                2 => b.first.wrapping_add(1),
                _ => b.first - 1,
            };
            let mut pool = BitPool::new(words(1, vec![a]));
            assert_eq!(b.sample_pool(&mut pool), a < b.first, "{a:#x}");
            // One word when the first 8 bits decide, else exactly that word too.
            assert_eq!(pool.rng().log.len(), 1);
        }
        // A == first: the next word is compared with p's second word (0.3 has none: U >= p;
        // 0.3 * 2^-20 has bits there).
        let mut pool = BitPool::new(words(1, vec![b.first, 0]));
        assert!(!b.sample_pool(&mut pool));
        let b = Bernoulli::new(0.3 * 2f64.powi(-20)).unwrap();
        let w1 = word(b.mant, b.exp, 1);
        assert!(w1 > 1);
        for (second, want) in [(w1 - 1, true), (w1 + 1, false)] {
            let mut pool = BitPool::new(words(1, vec![b.first, second]));
            assert_eq!(b.sample_pool(&mut pool), want);
        }
        // Frequencies: chi-square (1 df) for p with bits beyond the first byte.
        let mut pool = BitPool::new(simulation_rng(2));
        for p in [0.3, 0.00390625 + 2f64.powi(-40), 0.5] {
            let b = Bernoulli::new(p).unwrap();
            let trials = 1_000_000u64;
            let hits = (0..trials).filter(|_| b.sample_pool(&mut pool)).count() as u64;
            let stat = chi_square(
                &[trials - hits, hits],
                &[trials as f64 * (1.0 - p), trials as f64 * p],
            );
            assert!(stat < chi_square_critical(1), "p = {p}: {stat}");
        }
    }

    #[test]
    fn bernoulli_ratio_frequency_within_five_sigma() {
        let mut rng = simulation_rng(21);
        for (a, b) in [
            (1u128, 3u128),
            (2, 7),
            (5, 5),
            (0, 9),
            (1u128 << 70, 3u128 << 70),
        ] {
            let p = a as f64 / b as f64;
            let trials = 400_000u64;
            let hits = (0..trials)
                .filter(|_| bernoulli_ratio(&mut rng, a, b))
                .count() as f64;
            let sd = (trials as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (hits - trials as f64 * p).abs() <= 5.0 * sd,
                "{a}/{b}: {hits}"
            );
        }
    }

    #[test]
    fn bernoulli_exp_neg_frequency_within_five_sigma() {
        // Fixed seed; frequency of true vs exp(-gamma), tolerance 5 binomial standard
        // deviations (gamma = 0 must always succeed, gamma = 50 (p ~ 2e-22) never in 10^6).
        let mut rng = simulation_rng(13);
        let trials = 1_000_000u64;
        for (num, den) in [
            (0u64, 1u64),
            (1, 2),
            (1, 1),
            (7, 3),
            (5, 1),
            (50, 1),
            (1, 1000),
        ] {
            let gamma = Rational::new(num, den).unwrap();
            let p = (-gamma.to_f64()).exp();
            let hits = (0..trials)
                .filter(|_| bernoulli_exp_neg(&mut rng, &gamma))
                .count() as f64;
            let sd = (trials as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (hits - trials as f64 * p).abs() <= 5.0 * sd,
                "gamma = {gamma}: {hits} vs {}",
                trials as f64 * p
            );
        }
        // A huge gamma stops at the first failed exp(-1) draw and (almost surely) says false.
        let huge = Rational::integer(u64::MAX);
        assert!((0..1000).all(|_| !bernoulli_exp_neg(&mut rng, &huge)));
        // 128-bit parts whose den * k overflows take the product-of-coins path.
        let (n, d) = (u128::MAX / 2, u128::MAX);
        let p = (-0.5f64).exp();
        let hits = (0..trials)
            .filter(|_| bernoulli_exp_neg_frac(&mut rng, n, d))
            .count() as f64;
        let sd = (trials as f64 * p * (1.0 - p)).sqrt();
        assert!((hits - trials as f64 * p).abs() <= 5.0 * sd, "{hits}");
    }
}
