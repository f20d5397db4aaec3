//! The ideal shuffler: a uniformly random permutation (Fisher-Yates / Durstenfeld over a
//! CSPRNG, with unbiased bounded integers), as assumed by the shuffle model.

use super::{Shuffler, ShufflerTrust};
use crate::sample::uniform_usize;
use rand_core::CryptoRng;

/// Uniform random permutation of the messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct UniformShuffler;

impl Shuffler for UniformShuffler {
    fn trust(&self) -> ShufflerTrust {
        ShufflerTrust::IdealUniform
    }

    fn shuffle<T, R: CryptoRng + ?Sized>(&self, messages: &mut [T], rng: &mut R) {
        for i in (1..messages.len()).rev() {
            let j = uniform_usize(rng, i + 1);
            messages.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::simulation_rng;
    use crate::sample::stats::{chi_square, chi_square_critical};

    #[test]
    fn all_permutations_of_four_equally_likely() {
        let mut rng = simulation_rng(9);
        let mut counts = std::collections::HashMap::new();
        let trials = 240_000u64;
        for _ in 0..trials {
            let mut v = [0u8, 1, 2, 3];
            UniformShuffler.shuffle(&mut v, &mut rng);
            *counts.entry(v).or_insert(0u64) += 1;
        }
        assert_eq!(counts.len(), 24);
        let observed: Vec<u64> = counts.values().copied().collect();
        let expected = vec![trials as f64 / 24.0; 24];
        assert!(chi_square(&observed, &expected) < chi_square_critical(23));
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut rng = simulation_rng(2);
        let mut v: Vec<u32> = (0..1000).collect();
        UniformShuffler.shuffle(&mut v, &mut rng);
        let mut s = v.clone();
        s.sort_unstable();
        assert_eq!(s, (0..1000).collect::<Vec<_>>());
        let mut empty: [u8; 0] = [];
        UniformShuffler.shuffle(&mut empty, &mut rng);
    }
}
