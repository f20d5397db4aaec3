//! The privacy-blanket randomizer R^PH_{gamma,m}: generalized randomized response.
//!
//! With probability 1 - gamma the user reports its value x; with probability gamma it reports a
//! uniform value of {0, ..., m-1} (a blanket message), independent of x. So
//! Pr[R(x) = y] = (1 - gamma) 1[y = x] + gamma / m (Balle, Bell, Gascon, Nissim, "The Privacy
//! Blanket of the Shuffle Model", CRYPTO 2019, Section 3; Scott et al. 2021, Algorithm 1).

use crate::params::{DomainSize, Gamma};
use crate::rng::{SecureRng, SimulationRng};
use crate::sample::{uniform_bits, Bernoulli, BitSource};
use serde::Serialize;
use thiserror::Error;

/// An input outside the randomizer's domain.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GrrError {
    /// The input value is not in {0, ..., m-1}.
    #[error("category must be an integer from 0 to {max}, got {value}")]
    InputOutOfDomain {
        /// The rejected input.
        value: u64,
        /// The largest allowed input, m - 1.
        max: u32,
    },
}

/// Generalized randomized response over m values with blanket probability gamma.
#[derive(Debug, Clone, PartialEq)]
pub struct Grr {
    m: DomainSize,
    gamma: Gamma,
    blanket: Bernoulli,
}

/// The randomizer's public description, for reports and accountants.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GrrParams {
    /// Number of message values m.
    pub m: u32,
    /// Blanket probability gamma.
    pub gamma: f64,
    /// Local privacy eps0 = log(1 + m (1 - gamma) / gamma), rounded up.
    pub eps0: f64,
}

impl Grr {
    /// The randomizer R^PH_{gamma,m}. The blanket coin is sampled exactly for the `f64` gamma.
    pub fn new(m: DomainSize, gamma: Gamma) -> Self {
        Self {
            m,
            gamma,
            blanket: Bernoulli::from_gamma(gamma),
        }
    }

    /// Number of message values m.
    pub fn m(&self) -> DomainSize {
        self.m
    }

    /// Blanket probability gamma.
    pub fn gamma(&self) -> Gamma {
        self.gamma
    }

    /// The blanket coin, Bernoulli(gamma) exactly (for batched simulations).
    pub(crate) fn blanket_coin(&self) -> Bernoulli {
        self.blanket
    }

    /// Public description with the local epsilon.
    pub fn params(&self) -> GrrParams {
        GrrParams {
            m: self.m.get(),
            gamma: self.gamma.get(),
            eps0: local_epsilon(self.m, self.gamma),
        }
    }

    /// Client side: randomizes `x`, which must be below m, with the OS-seeded generator.
    #[inline]
    pub fn randomize(&self, x: u32, rng: &mut SecureRng) -> Result<u32, GrrError> {
        self.randomize_with(x, rng)
    }

    /// [`Grr::randomize`] for simulations and audits (a seeded generator).
    #[inline]
    pub fn randomize_simulated(&self, x: u32, rng: &mut SimulationRng) -> Result<u32, GrrError> {
        self.randomize_with(x, rng)
    }

    /// Randomizes `x`, which must be below m, with any of the crate's CSPRNGs (the one code
    /// path behind [`Grr::randomize`] and [`Grr::randomize_simulated`]).
    #[inline]
    pub(crate) fn randomize_with<R: BitSource + ?Sized>(
        &self,
        x: u32,
        rng: &mut R,
    ) -> Result<u32, GrrError> {
        if x >= self.m.get() {
            return Err(GrrError::InputOutOfDomain {
                value: u64::from(x),
                max: self.m.get() - 1,
            });
        }
        Ok(self.randomize_in_domain(x, rng))
    }

    /// Randomizes an `x` the caller has already checked to be below m (see [`Grr::randomize`]).
    ///
    /// The blanket coin compares 8 fresh bits of the generator with gamma's first 8 binary
    /// digits and draws more only on a tie ([`Bernoulli::sample_pool`]: exact, probability
    /// 2^-8 of a tie); the blanket value is Lemire's exact bounded uniform on 16 bits (32 when
    /// m > 2^10) ([`uniform_bits`]). A client call on gamma about 1e-3 thus consumes 8 bits
    /// of ChaCha output in 255 of 256 cases (it consumed a 32-bit word before).
    #[inline]
    pub(crate) fn randomize_in_domain<R: BitSource + ?Sized>(&self, x: u32, rng: &mut R) -> u32 {
        debug_assert!(x < self.m.get());
        if self.blanket.sample_pool(rng) {
            uniform_bits(rng, self.m.get())
        } else {
            x
        }
    }

    /// Pr[R(x) = y] (Balle et al. 2019, blanket decomposition).
    pub fn probability(&self, x: u32, y: u32) -> f64 {
        let g = self.gamma.get();
        let base = g / f64::from(self.m.get());
        if x == y {
            1.0 - g + base
        } else {
            base
        }
    }
}

/// Local privacy of R^PH_{gamma,m}: eps0 = log(1 + m (1 - gamma) / gamma) (the ratio of the
/// largest to the smallest output probability), rounded up to the next `f64` so that the
/// reported value is never below the true one.
pub fn local_epsilon(m: DomainSize, gamma: Gamma) -> f64 {
    let g = gamma.get();
    let ratio = f64::from(m.get()) * (1.0 - g) / g;
    // ln_1p is accurate to < 1 ulp; two next_up steps cover it and the ratio's rounding.
    ratio.ln_1p().next_up().next_up()
}

/// The gamma of R^PH_{gamma,m} whose local privacy is exactly eps0:
/// gamma = m / (e^eps0 + m - 1) (Balle's RRMechanism.get_gamma).
pub fn gamma_for_local_epsilon(m: DomainSize, eps0: f64) -> f64 {
    let m = f64::from(m.get());
    m / (eps0.exp() + m - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::simulation_rng;
    use crate::sample::stats::{chi_square, chi_square_critical};

    #[test]
    fn output_distribution_matches_blanket_decomposition() {
        // Chi-square goodness of fit, fixed seed, significance ~1e-6.
        let mut rng = simulation_rng(42);
        let m = DomainSize::new(10).unwrap();
        let grr = Grr::new(m, Gamma::new(0.35).unwrap());
        for x in [0u32, 3, 9] {
            let draws = 500_000u64;
            let mut counts = vec![0u64; 10];
            for _ in 0..draws {
                counts[grr.randomize_simulated(x, &mut rng).unwrap() as usize] += 1;
            }
            let expected: Vec<f64> = (0..10)
                .map(|y| draws as f64 * grr.probability(x, y))
                .collect();
            let stat = chi_square(&counts, &expected);
            assert!(stat < chi_square_critical(9), "x = {x}: chi2 = {stat}");
        }
    }

    #[test]
    fn client_draws_the_pooled_exact_comparison() {
        // Replay: a client call on a seeded generator gives what the tested lazy comparison
        // (`Bernoulli::sample_pool`, 8 bits first) and `BitPool::uniform` give on the same
        // stream, call after call (the kept bits carried over between calls alike); for gamma
        // whose first 8 digits are 0 (the calibrated case), for gamma whose first 8 digits tie
        // often (1/2 + 2^-9: U's first byte 10000000 leaves the coin to the following bits,
        // 1/256 of the calls) and for gamma = 2^-8 (a tie must answer false), with m on the
        // 16- and 32-bit paths of the bounded uniform.
        use crate::sample::BitPool;
        for (gamma, m) in [
            (9.9e-4, 16u64),
            (0.5 + 2f64.powi(-9), 3),
            (2f64.powi(-8), 2),
            (0.35, 5000),
        ] {
            let grr = Grr::new(DomainSize::new(m).unwrap(), Gamma::new(gamma).unwrap());
            let coin = Bernoulli::new(gamma).unwrap();
            let mut rng = simulation_rng(5);
            let mut pool = BitPool::new(simulation_rng(5));
            for i in 0..200_000u32 {
                let x = i % m as u32;
                let expected = if coin.sample_pool(&mut pool) {
                    pool.uniform(m as u32)
                } else {
                    x
                };
                assert_eq!(grr.randomize_simulated(x, &mut rng).unwrap(), expected);
            }
        }
    }

    #[test]
    fn output_law_when_the_first_byte_ties() {
        // Chi-square (fixed seed, significance ~1e-6) of the client's output where the 8-bit
        // first comparison ties in 1/256 of the calls: gamma = 1/2 + 2^-9 (m = 3) and gamma =
        // 2^-8 (m = 2, where answering a tie with true would double the flips: 5e6 draws
        // expect 9766 flips, sd 99).
        let mut rng = simulation_rng(77);
        for (gamma, m, draws) in [
            (0.5 + 2f64.powi(-9), 3u32, 2_000_000u64),
            (2f64.powi(-8), 2, 5_000_000),
        ] {
            let grr = Grr::new(
                DomainSize::new(u64::from(m)).unwrap(),
                Gamma::new(gamma).unwrap(),
            );
            let mut counts = vec![0u64; m as usize];
            for _ in 0..draws {
                counts[grr.randomize_simulated(0, &mut rng).unwrap() as usize] += 1;
            }
            let expected: Vec<f64> = (0..m)
                .map(|y| draws as f64 * grr.probability(0, y))
                .collect();
            let stat = chi_square(&counts, &expected);
            assert!(
                stat < chi_square_critical(m as usize - 1),
                "gamma = {gamma}: {stat}"
            );
        }
    }

    #[test]
    fn local_epsilon_matches_formula_and_inverse() {
        let m = DomainSize::new(4).unwrap();
        let g = Gamma::new(0.2).unwrap();
        let e = local_epsilon(m, g);
        let exact = (1.0f64 + 4.0 * 0.8 / 0.2).ln(); // log 17
        assert!(e >= exact && e - exact < 1e-14, "{e} vs {exact}");
        let back = gamma_for_local_epsilon(m, exact);
        assert!((back - 0.2).abs() < 1e-15);
        // Ratio of max to min output probability is e^eps0.
        let grr = Grr::new(m, g);
        let ratio = grr.probability(0, 0) / grr.probability(0, 1);
        assert!((ratio.ln() - exact).abs() < 1e-12);
    }

    #[test]
    fn rejects_out_of_domain_input() {
        let mut rng = simulation_rng(0);
        let grr = Grr::new(DomainSize::new(5).unwrap(), Gamma::new(0.5).unwrap());
        let e = grr.randomize_simulated(5, &mut rng).unwrap_err();
        assert_eq!(
            e.to_string(),
            "category must be an integer from 0 to 4, got 5"
        );
    }
}
