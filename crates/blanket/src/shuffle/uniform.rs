//! The ideal shuffler: a uniformly random permutation over a CSPRNG, as assumed by the shuffle
//! model. [`Shuffler::shuffle`] is Fisher-Yates / Durstenfeld with exact bounded integers (drawn
//! from 32-bit words while the bound fits in 32 bits: Lemire's multiply-shift with exact
//! rejection, [`uniform_u32`]); [`UniformShuffler::shuffle_parallel`] is MergeShuffle (Bacher,
//! Bodini, Hollender, Lumbroso, "MergeShuffle: a very fast, parallel random permutation
//! algorithm", GASCom 2016, arXiv 1508.03167), which is also exactly uniform and runs its
//! halves on separate threads.

use super::{Shuffler, ShufflerTrust};
use crate::rng::Chacha;
use crate::sample::{uniform_u32, uniform_usize};
use rand_core::{CryptoRng, SeedableRng};

/// Uniform random permutation of the messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct UniformShuffler;

/// MergeShuffle's blocks of at most this many messages are shuffled by Fisher-Yates directly
/// (their random accesses stay in cache: 1 MiB of 4-byte messages); larger slices are split in
/// halves.
const BLOCK: usize = 1 << 18;

/// [`UniformShuffler::shuffle_parallel`] runs Fisher-Yates up to this many messages: below it
/// the whole array stays in cache and Fisher-Yates (3.4 ms for 10^6 4-byte messages) beats the
/// merge passes (3.8 ms on 2 cores); above it MergeShuffle wins (4 * 10^6: 23 ms against
/// 43 ms; 1.6 * 10^7: 114 ms against 227 ms; docs/performance.md).
const PARALLEL_MIN: usize = 1 << 21;

impl Shuffler for UniformShuffler {
    fn trust(&self) -> ShufflerTrust {
        ShufflerTrust::IdealUniform
    }

    fn shuffle<T, R: CryptoRng + ?Sized>(&self, messages: &mut [T], rng: &mut R) {
        fisher_yates(messages, rng);
    }
}

impl UniformShuffler {
    /// A uniformly random permutation of `messages`: Fisher-Yates up to 2^21 messages,
    /// above that computed on all threads by MergeShuffle:
    /// halves are permuted recursively (in parallel, each with its own ChaCha12 generator
    /// seeded by 256 bits drawn from `rng`), blocks of at most 2^16 by Fisher-Yates, then each
    /// pair of halves is merged by [`merge`]. The recursion depends only on the length, so the
    /// result for a given `rng` state does not depend on the thread count. Not the same
    /// permutation as [`Shuffler::shuffle`] for the same `rng`, but the same (uniform)
    /// distribution.
    pub fn shuffle_parallel<T: Send, R: CryptoRng + ?Sized>(
        &self,
        messages: &mut [T],
        rng: &mut R,
    ) {
        if messages.len() <= PARALLEL_MIN {
            fisher_yates(messages, rng);
        } else {
            merge_shuffle(messages, rng, BLOCK);
        }
    }
}

/// Fisher-Yates: for i from the end, swap element i with a uniform j in {0, ..., i}.
fn fisher_yates<T, R: CryptoRng + ?Sized>(v: &mut [T], rng: &mut R) {
    let small = v.len().min(u32::MAX as usize);
    // Bounds above 2^32 - 1 (never in practice: 2^28 messages at most) need 64-bit draws.
    for i in (small..v.len()).rev() {
        let j = uniform_usize(rng, i + 1);
        v.swap(i, j);
    }
    for i in (1..small).rev() {
        // i + 1 <= 2^32 - 1: one 32-bit word decides all but a (2^32 mod (i+1)) / 2^32 fraction.
        let j = uniform_u32(rng, (i + 1) as u32) as usize;
        v.swap(i, j);
    }
}

/// A uniform index in {0, ..., i}.
#[inline]
fn index_up_to<R: CryptoRng + ?Sized>(rng: &mut R, i: usize) -> usize {
    if i < u32::MAX as usize {
        uniform_u32(rng, (i + 1) as u32) as usize
    } else {
        uniform_usize(rng, i + 1)
    }
}

/// MergeShuffle with Fisher-Yates below `block` messages.
fn merge_shuffle<T: Send, R: CryptoRng + ?Sized>(v: &mut [T], rng: &mut R, block: usize) {
    if v.len() <= block.max(1) {
        fisher_yates(v, rng);
        return;
    }
    let mut seeds = [[0u8; 32]; 2];
    rng.fill_bytes(&mut seeds[0]);
    rng.fill_bytes(&mut seeds[1]);
    let mid = v.len() / 2;
    let (a, b) = v.split_at_mut(mid);
    rayon::join(
        || merge_shuffle(a, &mut Chacha::from_seed(seeds[0]), block),
        || merge_shuffle(b, &mut Chacha::from_seed(seeds[1]), block),
    );
    merge(v, mid, rng);
}

/// MergeShuffle's merge (Bacher et al., Algorithm 1): if `v[..mid]` and `v[mid..]` are each
/// uniformly random permutations of their elements, the result is a uniformly random
/// permutation of all of `v`. Position u is filled from the first half (fair coin 0) or the
/// second (coin 1, swapping in the next element w of the second half) until a coin asks for an
/// empty half; the remaining positions are then placed by Fisher-Yates insertion (position u
/// swaps with a uniform index in {0, ..., u}). Coins are the bits of 64-bit words.
fn merge<T, R: CryptoRng + ?Sized>(v: &mut [T], mid: usize, rng: &mut R) {
    let n = v.len();
    let (mut u, mut w) = (0usize, mid);
    let (mut bits, mut left) = (0u64, 0u32);
    loop {
        if left == 0 {
            bits = rng.next_u64();
            left = 64;
        }
        let coin = (bits & 1) as usize;
        bits >>= 1;
        left -= 1;
        // The coin asks for an empty half: stop (one rarely taken branch, not one per coin).
        if (coin == 1) & (w == n) | (coin == 0) & (u == w) {
            break;
        }
        // Coin 1 swaps in the second half's next element; coin 0 keeps v[u] (a self-swap).
        // Branch-free: a coin per element would mispredict half the time.
        v.swap(u, u + coin * (w - u));
        w += coin;
        u += 1;
    }
    while u < n {
        let j = index_up_to(rng, u);
        v.swap(j, u);
        u += 1;
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

    /// Chi-square of the permutations of 0..len produced by `shuffle` against uniform.
    fn permutations_uniform(len: u8, trials: u64, mut shuffle: impl FnMut(&mut [u8])) {
        let mut counts = std::collections::HashMap::new();
        for _ in 0..trials {
            let mut v: Vec<u8> = (0..len).collect();
            shuffle(&mut v);
            *counts.entry(v).or_insert(0u64) += 1;
        }
        let cells: usize = (1..=len as usize).product();
        assert_eq!(counts.len(), cells);
        let observed: Vec<u64> = counts.values().copied().collect();
        let expected = vec![trials as f64 / cells as f64; cells];
        let stat = chi_square(&observed, &expected);
        assert!(stat < chi_square_critical(cells - 1), "{len}: {stat}");
    }

    #[test]
    fn merge_shuffle_permutations_of_four_and_five_equally_likely() {
        // Blocks of 1 and 2 force every level of merging (splits 2+2, 2+3, 1+1, 1+2), so the
        // merge and its Fisher-Yates tail decide the distribution. Fixed seeds; 1e-6 level.
        for block in [1usize, 2] {
            let mut rng = simulation_rng(40 + block as u64);
            permutations_uniform(4, 96_000, |v| merge_shuffle(v, &mut rng, block));
            permutations_uniform(5, 240_000, |v| merge_shuffle(v, &mut rng, block));
        }
        // The merge alone, from two halves each uniformly shuffled: uniform over all 120.
        let mut rng = simulation_rng(47);
        permutations_uniform(5, 240_000, |v| {
            fisher_yates(&mut v[..2], &mut rng);
            fisher_yates(&mut v[2..], &mut rng);
            merge(v, 2, &mut rng);
        });
        // Fisher-Yates itself (32-bit bounds) over all 120 permutations of five.
        permutations_uniform(5, 240_000, |v| UniformShuffler.shuffle(v, &mut rng));
    }

    #[test]
    fn parallel_shuffle_is_a_permutation_independent_of_threads() {
        let n = 3 * 1024 + 17;
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut v: Vec<u32> = (0..n as u32).collect();
            let mut rng = simulation_rng(5);
            pool.install(|| merge_shuffle(&mut v, &mut rng, 1024));
            v
        };
        let one = run(1);
        assert_eq!(one, run(2));
        assert_ne!(one, (0..n as u32).collect::<Vec<_>>());
        let mut s = one.clone();
        s.sort_unstable();
        assert_eq!(s, (0..n as u32).collect::<Vec<_>>());
        // Where the first and the last element land, over 64 positions with blocks of 4 (four
        // levels of merging): uniform (chi-square, 63 df each).
        let mut first = [0u64; 64];
        let mut last = [0u64; 64];
        let mut rng = simulation_rng(6);
        let trials = 32_000u64;
        for _ in 0..trials {
            let mut v: Vec<u8> = (0..64).collect();
            merge_shuffle(&mut v, &mut rng, 4);
            first[v.iter().position(|&x| x == 0).unwrap()] += 1;
            last[v.iter().position(|&x| x == 63).unwrap()] += 1;
        }
        let e = [trials as f64 / 64.0; 64];
        assert!(
            chi_square(&first, &e) < chi_square_critical(63),
            "{first:?}"
        );
        assert!(chi_square(&last, &e) < chi_square_critical(63), "{last:?}");
        let mut empty: [u8; 0] = [];
        UniformShuffler.shuffle_parallel(&mut empty, &mut rng);
        merge_shuffle(&mut empty, &mut rng, 1);
        // Above 2^21 messages the public entry point takes the MergeShuffle path.
        let mut big: Vec<u32> = (0..(PARALLEL_MIN + 3) as u32).collect();
        UniformShuffler.shuffle_parallel(&mut big, &mut rng);
        big.sort_unstable();
        assert!(big.iter().enumerate().all(|(i, &x)| x as usize == i));
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
