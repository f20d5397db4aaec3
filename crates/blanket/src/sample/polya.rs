//! The Polya (negative binomial) distribution Polya(1/k, a) for an integer k >= 1 and a
//! rational a in (0, 1), sampled *exactly* with integer arithmetic and exact Bernoulli(num/den)
//! draws only (no floating point, no precision cut-off). See `docs/samplers.md`.
//!
//! Pmf: Pr[K = j] = Gamma(j + r) / (j! Gamma(r)) (1 - a)^r a^j, r = 1/k. The sum of k
//! independent draws is Geometric(a) (Pr[j] = (1 - a) a^j); the difference of two independent
//! Geometric(a) is the discrete Laplace Pr[y] = (1 - a)/(1 + a) a^|y|.
//!
//! Method (compound Poisson with Poisson thinning). The probability generating function is
//! ((1 - a)/(1 - a z))^r = exp(sum_{j >= 1} (r a^j / j) (z^j - 1)), so K = sum_j j N_j with
//! independent N_j ~ Poisson(r a^j / j): the points of a Poisson process on {1, 2, ...} with
//! intensity r a^j / j, summed. That intensity is dominated by r a^j, of total mass
//! Lambda = r a / (1 - a) (rational). So: draw M ~ Poisson(Lambda); give each of the M points
//! a position j >= 1 with Pr[j] = (1 - a) a^(j-1) (1 + the number of Bernoulli(a) successes
//! before the first failure); keep a point at j with probability 1/j (Bernoulli(1/j)). By the
//! thinning (marking) theorem the kept points form a Poisson process with intensity
//! r a^j / j, so the sum of their positions is exactly Polya(r, a).
//!
//! Large k (Lambda = num / (k (den - num)) with k (den - num) >= 2^64, e.g. k = n = 10^8
//! clients): Lambda's denominator would not fit the 64-bit piece arithmetic below, so M is drawn
//! by thinning instead: M0 ~ Poisson(Lambda0), Lambda0 = num / (k0 (den - num)) with
//! k0 = floor(2^62 / (den - num)) < k, and each of the M0 points is kept with probability
//! k0 / k (Bernoulli(k0/k), exact). The kept count is Poisson(Lambda0 k0 / k) = Poisson(Lambda)
//! exactly (thinning theorem), and it is drawn *before* the positions, so the expected work per
//! sample stays O(1 + Lambda0). No approximation: the law sampled is still exactly Polya(1/k, a).
//!
//! Poisson(Lambda) with rational Lambda: Lambda is split into c = ceil(2 Lambda) equal
//! rational pieces g/h <= 1/2 (Poisson is additive). For each piece: X = the number of
//! successes of Bernoulli(gamma / 1), Bernoulli(gamma / 2), ... before the first failure
//! (Pr[X >= x] = gamma^x / x!, the loop of Canonne, Kamath, Steinke 2020 Algorithm 1), so
//! Pr[X = x] = gamma^x / x! (1 - gamma / (x + 1)); accept X with probability
//! (1 - gamma)(x + 1) / (x + 1 - gamma) = (h - g)(x + 1) / ((x + 1) h - g) <= 1, else retry.
//! The accepted law is proportional to gamma^x / x!: Poisson(gamma). Acceptance probability
//! (1 - gamma) e^gamma >= e^(1/2)/2 ~ 0.82.

use super::bernoulli::bernoulli_ratio;
use crate::params::ParamError;
use rand_core::CryptoRng;

/// Largest denominator of a (2^62).
const MAX_DEN: u64 = 1 << 62;

/// An exact sampler of Polya(1/k, a), a = num/den (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Polya {
    k: u64,
    num: u64,
    den: u64,
    /// k0 <= k: Poisson points are drawn for Polya(1/k0, a) and each kept with probability
    /// k0 / k (k0 = k: no thinning).
    k0: u64,
    /// Number of Poisson pieces c.
    pieces: u64,
    /// Each piece has mean g/h <= 1/2, h < 2^64.
    g: u128,
    h: u128,
}

impl Polya {
    /// Polya(1/k, num/den). Requires k >= 1, 0 < num < den and den <= 2^62 (so that every
    /// product in the sampler fits in 128 bits); any k >= 1 is supported (module docs: large
    /// k thins the Poisson points by k0/k).
    pub fn new(k: u64, num: u64, den: u64) -> Result<Self, ParamError> {
        Self::with_cap(k, num, den, MAX_DEN)
    }

    /// [`Polya::new`] thinning whenever k (den - num) > `cap` (cap = 2^62 in production; a
    /// small cap lets the tests check the thinned path on cheap parameters). Requires
    /// den - num <= cap <= 2^62.
    fn with_cap(k: u64, num: u64, den: u64, cap: u64) -> Result<Self, ParamError> {
        debug_assert!(cap <= MAX_DEN);
        if k == 0 {
            return Err(ParamError::OutOfRange {
                field: "k",
                allowed: "an integer >= 1 (r = 1/k)",
                value: k.to_string(),
            });
        }
        if num == 0 || num >= den || den > MAX_DEN || den - num > cap {
            return Err(ParamError::OutOfRange {
                field: "a",
                allowed: "a rational num/den in (0, 1) with den <= 2^62",
                value: format!("{num}/{den}"),
            });
        }
        // Lambda = num / (k (den - num)); with k0 <= k, Lambda0 = num / (k0 (den - num)).
        let gap = u128::from(den - num);
        let k0 = if u128::from(k) * gap <= u128::from(cap) {
            k
        } else {
            // k0 (den - num) <= cap < k (den - num), so k0 < k; k0 >= 1 as den - num <= cap.
            (u128::from(cap) / gap) as u64
        };
        let lam_den = u128::from(k0) * gap;
        let lam_num = u128::from(num);
        // lam_den <= 2^62 and lam_num < 2^62: c <= 2^63 / lam_den + 1 and
        // h = c lam_den <= 2 num + lam_den < 2^64.
        let pieces = (2 * lam_num).div_ceil(lam_den).max(1);
        let h = pieces * lam_den;
        debug_assert!(h < 1u128 << 64);
        Ok(Self {
            k,
            num,
            den,
            k0,
            pieces: pieces as u64,
            g: lam_num,
            h,
        })
    }

    /// r = 1/k: the k of the shape parameter.
    pub fn k(&self) -> u64 {
        self.k
    }

    /// a = (num, den).
    pub fn a(&self) -> (u64, u64) {
        (self.num, self.den)
    }

    /// Draws one sample, exactly Polya(1/k, a) (outputs are `u64`: a value >= 2^64, of
    /// probability below a^(2^64), saturates).
    pub fn sample<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> u64 {
        let mut total = 0u64;
        for _ in 0..self.pieces {
            let points = poisson_small(rng, self.g, self.h);
            for _ in 0..points {
                // Thinning by k0/k (module docs); always kept when k0 = k.
                if self.k0 != self.k
                    && !bernoulli_ratio(rng, u128::from(self.k0), u128::from(self.k))
                {
                    continue;
                }
                // Position j >= 1 with Pr[j] = (1 - a) a^(j - 1).
                let mut j = 1u64;
                while bernoulli_ratio(rng, u128::from(self.num), u128::from(self.den)) {
                    j = j.saturating_add(1);
                }
                if bernoulli_ratio(rng, 1, u128::from(j)) {
                    total = total.saturating_add(j);
                }
            }
        }
        total
    }

    /// Polya(1/k, a) - Polya(1/k, a), two independent draws: the per-client share of a
    /// discrete Laplace with parameter a when k clients each add one.
    pub fn sample_difference<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> i64 {
        let plus = self.sample(rng).min(i64::MAX as u64) as i64;
        let minus = self.sample(rng).min(i64::MAX as u64) as i64;
        plus - minus
    }
}

/// Poisson(g/h) exactly for 0 < g/h <= 1/2 (h < 2^64): the module docs' rejection from the
/// Pr[X >= x] = gamma^x / x! loop.
fn poisson_small<R: CryptoRng + ?Sized>(rng: &mut R, g: u128, h: u128) -> u64 {
    debug_assert!(g > 0 && 2 * g <= h && h < 1 << 64);
    loop {
        let mut x = 0u64;
        // Bernoulli(gamma / (x + 1)); (x + 1) h < 2^128.
        while bernoulli_ratio(rng, g, h * (u128::from(x) + 1)) {
            x += 1;
        }
        let x1 = u128::from(x) + 1;
        if bernoulli_ratio(rng, (h - g) * x1, x1 * h - g) {
            return x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::stats::*;
    use super::*;
    use crate::rng::simulation_rng;

    /// Pmf of Polya(r, a) on [-half, half] (zero below 0), from the rational ratio
    /// P(j + 1) / P(j) = a (j + r) / (j + 1).
    fn polya_pmf(r: f64, a: f64, half: i64) -> Vec<f64> {
        let mut pmf = vec![0.0; (2 * half + 1) as usize];
        let mut p = (1.0 - a).powf(r);
        for j in 0..=half {
            pmf[(j + half) as usize] = p;
            p *= a * (j as f64 + r) / (j as f64 + 1.0);
        }
        pmf
    }

    /// Fixed seed, 200k draws per parameter; chi-square over the values with expected count
    /// at least 5 (tails pooled) at significance ~1e-6, mean and variance within 5 standard
    /// errors (`stats::check_against_pmf`).
    #[test]
    fn polya_matches_pmf() {
        let mut rng = simulation_rng(41);
        for (k, num, den) in [
            (1u64, 1u64, 2u64),
            (1, 9, 10),
            (3, 1, 2),
            (10, 9, 10),
            (100, 99, 100),
            (7, 1, 1000),
        ] {
            check_polya(&Polya::new(k, num, den).unwrap(), &mut rng, "");
        }
    }

    /// 200k draws of `polya` against the exact pmf of Polya(1/k, a) (`check_against_pmf`).
    fn check_polya(polya: &Polya, rng: &mut crate::rng::SimulationRng, what: &str) {
        let (num, den) = polya.a();
        let k = polya.k();
        let a = num as f64 / den as f64;
        let r = 1.0 / k as f64;
        let half = ((60.0 / -a.ln()).ceil() as i64).max(20);
        let pmf = polya_pmf(r, a, half);
        let ys: Vec<i64> = (0..200_000).map(|_| polya.sample(rng) as i64).collect();
        check_against_pmf(&ys, &pmf, half, &format!("{what}Polya(1/{k}, {num}/{den})"));
    }

    /// The thinned path (k (den - num) above the cap) samples the same law: small caps force
    /// thinning on parameters whose pmf is cheap to check (k0 = 1, 2, 3 against k up to 50),
    /// same statistics as `polya_matches_pmf`.
    #[test]
    fn thinned_polya_matches_pmf() {
        let mut rng = simulation_rng(47);
        for (k, num, den, cap) in [
            (3u64, 1u64, 2u64, 1u64),
            (10, 9, 10, 2),
            (50, 99, 100, 3),
            (7, 2, 3, 1),
            (4, 1, 1000, 999),
        ] {
            let polya = Polya::with_cap(k, num, den, cap).unwrap();
            assert!(polya.k0 < k, "({k}, {num}/{den}, cap {cap}) not thinned");
            check_polya(&polya, &mut rng, "thinned ");
        }
    }

    /// Regression (`calibrate ikos-histogram --n 1e8 --domain 100 --eps 1` was refused): the
    /// IKOS noise for k = n clients and alpha = A / 2^40 far from 1 has k (den - num) >= 2^64.
    /// It is now accepted (thinned), and over many draws the number of nonzero samples matches
    /// Pr[K > 0] = 1 - (1 - a)^r within 5 binomial sd.
    #[test]
    fn large_k_is_supported() {
        let den = 1u64 << 40;
        let num = 666_887_512_958u64; // e^(-1/2) rounded up, as ikos_sum computes it
        for k in [100_000_000u64, 1_000_000_000_000, u64::MAX] {
            let polya = Polya::new(k, num, den).unwrap();
            assert!(polya.k0 < k && polya.pieces == 1, "{polya:?}");
        }
        let mut rng = simulation_rng(53);
        // k = 10^5: Pr[K > 0] ~ 9.3e-6, about 19 nonzero draws in 2e6.
        let k = 100_000u64;
        let polya = Polya::with_cap(k, num, den, 1 << 50).unwrap();
        assert!(polya.k0 < k);
        let trials = 2_000_000u64;
        let nonzero = (0..trials).filter(|_| polya.sample(&mut rng) > 0).count() as f64;
        let a = num as f64 / den as f64;
        let p = -((1.0 - a).ln() / k as f64).exp_m1();
        let sd = (trials as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (nonzero - trials as f64 * p).abs() <= 5.0 * sd,
            "{nonzero} vs {}",
            trials as f64 * p
        );
    }

    /// Poisson pieces: Pr[0] = e^-gamma for gamma = 1/2 and 1/3, 5 binomial sd.
    #[test]
    fn poisson_small_zero_frequency() {
        let mut rng = simulation_rng(43);
        for (g, h) in [(1u128, 2u128), (1, 3), (1, 1000)] {
            let trials = 300_000u64;
            let zeros = (0..trials)
                .filter(|_| poisson_small(&mut rng, g, h) == 0)
                .count() as f64;
            let p = (-(g as f64) / h as f64).exp();
            let sd = (trials as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (zeros - trials as f64 * p).abs() <= 5.0 * sd,
                "{g}/{h}: {zeros}"
            );
        }
    }

    #[test]
    fn polya_rejects_bad_parameters() {
        assert!(Polya::new(0, 1, 2).unwrap_err().to_string().contains('k'));
        let e = Polya::new(3, 2, 2).unwrap_err().to_string();
        assert!(e.starts_with("a must be"), "{e}");
        assert!(Polya::new(3, 0, 2).is_err());
        let e = Polya::new(u64::MAX, 1, u64::MAX).unwrap_err().to_string();
        assert!(e.contains("den <= 2^62"), "{e}");
        assert!(Polya::new(u64::MAX, 1, 1 << 62).is_ok());
    }
}
