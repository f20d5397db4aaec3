//! The vector-sum simulation, batched (`crate::simulate::batched`): the same law of the
//! analyzer state as n per-client calls, with the users grouped by data row and the random
//! bits drawn a few at a time.
//!
//! Per message the client draws its coordinate J, rounds x_J to a level L and sends
//! Y = L or, with probability gamma (the blanket coin B, independent of J and L), a uniform
//! level U. The batched sampler draws the same J (Floyd's sampling for t >= 2, from 16-bit
//! bounded uniforms), takes B from bit-sliced coins (64 per generator word), and rounds x_J
//! only when B = 0 (when B = 1, Y = U does not depend on L, so skipping the rounding does not
//! change the law of (J, Y)), with an 8-bit first comparison. Users holding the same row are
//! exchangeable, so processing them row by row leaves the law of the multiset of messages,
//! hence of the state, unchanged.

use super::*;
use crate::analyzer::{AggregateError, CoordinateMessage, CoordinateSums};
use crate::encode::randomized_round_pool;
use crate::rng::SimulationRng;
use crate::sample::{BitPool, Coins};
use crate::simulate::batched::{run_grouped_repetitions, Segments, Sink, StepWork};
use crate::simulate::SimulationError;

impl VectorSum {
    /// One simulated repetition, batched: `counts[r]` users hold row r of `rows`. The state
    /// has the law of the per-client path ([`VectorSum::simulate_rows`]) on those users (see
    /// the module documentation; tested by chi-square). With `shuffle`, the messages are
    /// permuted by the ideal shuffler before they are absorbed (same state). Reproducible for
    /// (seed, repetition), independent of the thread count.
    pub fn simulate_batched(
        &self,
        rows: &UnitVectors,
        counts: &[u64],
        seed: u64,
        repetition: u32,
        shuffle: bool,
    ) -> Result<CoordinateSums, SimulationError> {
        let mut states = self.simulate_batched_repetitions(
            rows,
            counts,
            seed,
            repetition..repetition.saturating_add(1),
            shuffle,
        )?;
        Ok(states.pop().unwrap_or_else(|| self.aggregator()))
    }

    /// Repetitions `reps` of [`VectorSum::simulate_batched`], in order: each state is
    /// bit-identical to the one `simulate_batched` returns for that repetition, but the
    /// repetitions' streams over a block of users run interleaved, a batch of users each in
    /// turn, so the data rows a batch reads are fetched from memory once for all of them
    /// (`crate::simulate::batched::run_grouped_repetitions`).
    pub fn simulate_batched_repetitions(
        &self,
        rows: &UnitVectors,
        counts: &[u64],
        seed: u64,
        reps: std::ops::Range<u32>,
        shuffle: bool,
    ) -> Result<Vec<CoordinateSums>, SimulationError> {
        if rows.dimension() != self.d || counts.len() != rows.len() {
            return Err(AggregateError::ShapeMismatch {
                left: u64::from(self.d) * rows.len() as u64,
                right: u64::from(rows.dimension()) * counts.len() as u64,
            }
            .into());
        }
        // (j, y) packed as j 2^s + y with 2^s > k, when d 2^s <= 2^32 (the paper's d = 100,
        // k = 3: s = 2); else the shuffler's buffer holds the pairs.
        let shift = 32 - self.k.get().leading_zeros();
        if u64::from(self.d) << shift <= 1u64 << 32 {
            let codec = Narrow { shift };
            let work = VectorBlocks {
                p: self,
                rows,
                codec,
            };
            run_grouped_repetitions(counts, seed, reps, shuffle, &work, || self.aggregator())
        } else {
            let work = VectorBlocks {
                p: self,
                rows,
                codec: Wide,
            };
            run_grouped_repetitions(counts, seed, reps, shuffle, &work, || self.aggregator())
        }
    }
}

/// How the ideal shuffler's buffer holds a message (j, y).
trait Codec: Sync {
    type Packed: Copy + Send + Sync + Default;
    fn pack(&self, m: CoordinateMessage) -> Self::Packed;
    fn unpack(&self, p: Self::Packed) -> CoordinateMessage;
}

/// The pair itself (8 bytes).
struct Wide;

impl Codec for Wide {
    type Packed = CoordinateMessage;
    #[inline]
    fn pack(&self, m: CoordinateMessage) -> CoordinateMessage {
        m
    }
    #[inline]
    fn unpack(&self, p: CoordinateMessage) -> CoordinateMessage {
        p
    }
}

/// j 2^shift + y in 4 bytes, for y < 2^shift and j 2^shift < 2^32 (checked by the caller
/// for every coordinate j < d and level y <= k).
struct Narrow {
    shift: u32,
}

impl Codec for Narrow {
    type Packed = u32;
    #[inline]
    fn pack(&self, (j, y): CoordinateMessage) -> u32 {
        (j << self.shift) | y
    }
    #[inline]
    fn unpack(&self, p: u32) -> CoordinateMessage {
        (p >> self.shift, p & ((1 << self.shift) - 1))
    }
}

/// Messages per batch of the vector-sum sampler.
const BATCH: usize = 256;

/// Users per block (one stream per block and repetition): 2^11, so that the paper's n = 50000
/// is 25 blocks and two threads each read about half of the data rows. With one block per
/// repetition, both threads read the same rows (30 MB of ecg-windows) and the run did not
/// speed up at all on a second thread (measured: docs/performance.md, fifth round).
const BLOCK_USERS: u64 = 1 << 11;

struct VectorBlocks<'a, C> {
    p: &'a VectorSum,
    rows: &'a UnitVectors,
    codec: C,
}

/// One (repetition, block) stream of the vector-sum sampler.
struct VectorStream<'g> {
    pool: BitPool<SimulationRng>,
    coins: Coins,
    segments: Segments<'g>,
    /// The current segment: its row and the users of it not yet drawn.
    row: usize,
    left: u64,
    coords: Vec<u32>,
    /// (coordinate, position of its value in the row-major data) of the batch's messages.
    at: Vec<(u32, usize)>,
    xs: Vec<f64>,
}

impl<C: Codec> StepWork for VectorBlocks<'_, C> {
    type Message = CoordinateMessage;
    type Packed = C::Packed;
    type Stream<'g> = VectorStream<'g>;

    #[inline]
    fn pack(&self, m: CoordinateMessage) -> C::Packed {
        self.codec.pack(m)
    }

    #[inline]
    fn unpack(&self, p: C::Packed) -> CoordinateMessage {
        self.codec.unpack(p)
    }

    fn per_user(&self) -> u32 {
        self.p.t
    }

    fn block_users(&self) -> u64 {
        BLOCK_USERS
    }

    fn start<'g>(&self, pool: BitPool<SimulationRng>, segments: Segments<'g>) -> VectorStream<'g> {
        let cap = BATCH + self.p.t as usize;
        VectorStream {
            pool,
            coins: Coins::new(self.p.grr.blanket_coin()),
            segments,
            row: 0,
            left: 0,
            coords: vec![0; self.p.t as usize],
            at: Vec::with_capacity(cap),
            xs: Vec::with_capacity(cap),
        }
    }

    /// One batch of ceil(BATCH / t) users (fewer at the end of the block), in three passes:
    /// every coordinate (with the position of its value in the row-major data), then every
    /// data value (a tight loop of independent loads, so the cache misses of the random
    /// coordinates overlap), then the coins and roundings. Which bits each draw uses never
    /// depends on the data, so the laws are unchanged.
    fn step<S: Sink<CoordinateMessage>>(
        &self,
        s: &mut VectorStream<'_>,
        sink: &mut S,
    ) -> Result<bool, AggregateError> {
        let (d, t, k) = (self.p.d, self.p.t, self.p.k);
        let levels = k.get() + 1;
        let users = BATCH.div_ceil(t as usize) as u64;
        let mut done = 0u64;
        s.at.clear();
        while done < users {
            if s.left == 0 {
                match s.segments.next() {
                    Some((r, c)) => (s.row, s.left) = (r, c),
                    None => break,
                }
            }
            let take = (users - done).min(s.left);
            let base = s.row * d as usize;
            if t == 1 {
                for _ in 0..take {
                    let j = s.pool.uniform(d);
                    s.at.push((j, base + j as usize));
                }
            } else {
                for _ in 0..take {
                    if t == d {
                        s.coords.iter_mut().zip(0..).for_each(|(o, j)| *o = j);
                    } else {
                        // Floyd's sampling ([`crate::encode::sample_coordinates`]).
                        for (filled, j) in (d - t..d).enumerate() {
                            let v = s.pool.uniform(j + 1);
                            s.coords[filled] = if s.coords[..filled].contains(&v) {
                                j
                            } else {
                                v
                            };
                        }
                    }
                    s.at.extend(s.coords.iter().map(|&j| (j, base + j as usize)));
                }
            }
            s.left -= take;
            done += take;
        }
        if done == 0 {
            return Ok(false);
        }
        let values = self.rows.values();
        s.xs.clear();
        // Every position is r d + j with r a row and j < d: the fallback never fires.
        s.xs.extend(
            s.at.iter()
                .map(|&(_, i)| values.get(i).map_or(0.0, |v| v.get())),
        );
        for (&(j, _), &v) in s.at.iter().zip(s.xs.iter()) {
            let y = if s.coins.next(&mut s.pool) {
                s.pool.uniform(levels)
            } else {
                randomized_round_pool(v, k, &mut s.pool)
            };
            sink.push((j, y))?;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::Aggregator;
    use crate::params::UnitValue;
    use crate::sample::stats::{chi_square, chi_square_critical};
    use std::collections::BTreeMap;

    #[test]
    fn batched_simulation_has_the_per_client_law() {
        // Issue 15: the batched state and the per-client state (n calls of the client's
        // randomizer) have the same law. Small instances (d = 3, k = 2, 3 users, t = 1 and
        // t = 2): two-sample chi-square over the joint outcome (counts, sums) per coordinate,
        // cells with fewer than 10 observations pooled, fixed seeds, significance about 1e-6.
        let rows = UnitVectors::new(3, [[0.0, 0.25, 1.0], [0.6, 0.5, 0.1]]).unwrap();
        let counts = [2u64, 1];
        for (t, gamma) in [(1u64, 0.3), (2, 0.15), (3, 0.5)] {
            let p = VectorSum::new(3, t, Precision::new(2).unwrap(), Gamma::new(gamma).unwrap())
                .unwrap();
            let draws = 40_000u32;
            let key = |s: &CoordinateSums| (s.counts().to_vec(), s.sums().to_vec());
            let (mut batched, mut client) = (BTreeMap::new(), BTreeMap::new());
            let mut rng = crate::rng::simulation_rng(t);
            let mut scratch = Vec::new();
            for r in 0..draws {
                let b = p.simulate_batched(&rows, &counts, 5, r, false).unwrap();
                assert_eq!(b.reports(), 3 * t);
                *batched.entry(key(&b)).or_insert(0u64) += 1;
                let mut c = p.aggregator();
                for (row, &n) in counts.iter().enumerate() {
                    for _ in 0..n {
                        let x: &[UnitValue] = rows.row(row);
                        p.randomize_row_simulated(x, &mut rng, &mut scratch, |m| {
                            c.absorb(m).unwrap()
                        });
                    }
                }
                *client.entry(key(&c)).or_insert(0u64) += 1;
            }
            let cells: std::collections::BTreeSet<_> =
                batched.keys().chain(client.keys()).cloned().collect();
            let (mut obs_a, mut obs_b) = (Vec::new(), Vec::new());
            let mut rest = (0u64, 0u64);
            for k in &cells {
                let a = batched.get(k).copied().unwrap_or(0);
                let b = client.get(k).copied().unwrap_or(0);
                if a + b >= 10 {
                    obs_a.push(a);
                    obs_b.push(b);
                } else {
                    rest = (rest.0 + a, rest.1 + b);
                }
            }
            obs_a.push(rest.0);
            obs_b.push(rest.1);
            // Equal sample sizes: sum (a - b)^2 / (a + b), df = cells - 1.
            let expected: Vec<f64> = obs_a
                .iter()
                .zip(&obs_b)
                .map(|(&a, &b)| (a + b) as f64 / 2.0)
                .collect();
            let stat = chi_square(&obs_a, &expected) + chi_square(&obs_b, &expected);
            let df = obs_a.len() - 1;
            assert!(df >= 10, "t = {t}: only {df} cells");
            assert!(
                stat < chi_square_critical(df),
                "t = {t}: two-sample chi-square {stat} ({df} df)"
            );
        }
    }

    #[test]
    fn batched_simulation_is_reproducible_unbiased_and_shuffle_free() {
        // n = 2e5 users over 50 rows (several blocks): same state shuffled or not, on 1 or
        // all threads; each coordinate's mean estimate within 5 sd of the truth, with the sd
        // bounded by the square root of the worst-case MSE summed over coordinates.
        let d = 6u64;
        let flat: Vec<f64> = (0..50 * d)
            .map(|i| ((i * 37) % 101) as f64 / 100.0)
            .collect();
        let rows = UnitVectors::from_flat(d, &flat).unwrap();
        let counts: Vec<u64> = (0..50).map(|r| 2000 + 80 * r).collect();
        let n: u64 = counts.iter().sum();
        for t in [1u64, 2] {
            let p =
                VectorSum::new(d, t, Precision::new(3).unwrap(), Gamma::new(0.2).unwrap()).unwrap();
            let a = p.simulate_batched(&rows, &counts, 9, 1, false).unwrap();
            assert_eq!(a.reports(), n * t);
            assert_eq!(p.simulate_batched(&rows, &counts, 9, 1, true).unwrap(), a);
            let one = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            assert_eq!(
                one.install(|| p.simulate_batched(&rows, &counts, 9, 1, false))
                    .unwrap(),
                a
            );
            let e = p.estimate(&a).unwrap();
            let mut truth = vec![0.0; d as usize];
            for (r, &c) in counts.iter().enumerate() {
                for (tj, x) in truth.iter_mut().zip(rows.row(r)) {
                    *tj += c as f64 * x.get() / n as f64;
                }
            }
            let sd = p.worst_case_mean_mse(n).sqrt();
            for (j, (m, tj)) in e.mean.iter().zip(&truth).enumerate() {
                assert!((m - tj).abs() < 5.0 * sd, "t = {t}, j = {j}: {m} vs {tj}");
            }
        }
        let p = VectorSum::new(d, 1, Precision::new(3).unwrap(), Gamma::new(0.2).unwrap()).unwrap();
        assert!(p
            .simulate_batched(&rows, &counts[..49], 9, 1, false)
            .is_err());
    }

    #[test]
    fn repetitions_interleaved_equal_each_repetition_alone() {
        // The interleaved multi-repetition run gives, for every repetition, the state of
        // `simulate_batched` alone (same streams, same draws): many blocks of users, t = 1 and 3,
        // with and without the shuffler, on 1 and 2 threads (1, 2 or 4 work items per block).
        let d = 5u64;
        let flat: Vec<f64> = (0..40 * d).map(|i| ((i * 53) % 97) as f64 / 96.0).collect();
        let rows = UnitVectors::from_flat(d, &flat).unwrap();
        let counts: Vec<u64> = (0..40).map(|r| 5000 + 300 * r).collect();
        for t in [1u64, 3] {
            let p =
                VectorSum::new(d, t, Precision::new(4).unwrap(), Gamma::new(0.1).unwrap()).unwrap();
            for shuffle in [false, true] {
                let alone: Vec<_> = (3..8)
                    .map(|r| p.simulate_batched(&rows, &counts, 11, r, shuffle).unwrap())
                    .collect();
                for threads in [1, 2] {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    let together = pool
                        .install(|| {
                            p.simulate_batched_repetitions(&rows, &counts, 11, 3..8, shuffle)
                        })
                        .unwrap();
                    assert_eq!(together, alone, "t = {t}, shuffle = {shuffle}");
                }
                assert_ne!(alone[0], alone[1]);
            }
            assert!(p
                .simulate_batched_repetitions(&rows, &counts, 11, 4..4, true)
                .unwrap()
                .is_empty());
        }
        // One block of users (n <= BLOCK_USERS: each worker writes, shuffles and absorbs a
        // group of repetitions in buffers it reuses) and 10 blocks, with messages packed into 4
        // bytes (k = 4) and as pairs (d 2^26 > 2^32 for k = 2^26 - 1); 1, 2 and 3 threads
        // (groups of 7, 4 and 3 repetitions). Shuffled, every state equals the unshuffled
        // one, which takes the other path (states folded straight from the streams).
        let d = 100u64;
        let flat: Vec<f64> = (0..30 * d).map(|i| ((i * 53) % 97) as f64 / 96.0).collect();
        let rows = UnitVectors::from_flat(d, &flat).unwrap();
        let one: Vec<u64> = (0..30).map(|r| 10 + 3 * r).collect();
        let ten: Vec<u64> = (0..30).map(|r| 100 + 37 * r).collect();
        assert!(one.iter().sum::<u64>() <= BLOCK_USERS);
        assert_eq!(ten.iter().sum::<u64>().div_ceil(BLOCK_USERS), 10);
        for (t, k, counts) in [
            (1u64, 4u64, &one),
            (2, (1 << 26) - 1, &one),
            (1, 4, &ten),
            (2, (1 << 26) - 1, &ten),
        ] {
            let p =
                VectorSum::new(d, t, Precision::new(k).unwrap(), Gamma::new(0.1).unwrap()).unwrap();
            let plain: Vec<_> = (2..9)
                .map(|r| p.simulate_batched(&rows, counts, 13, r, false).unwrap())
                .collect();
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                for shuffle in [false, true] {
                    let together = pool
                        .install(|| {
                            p.simulate_batched_repetitions(&rows, counts, 13, 2..9, shuffle)
                        })
                        .unwrap();
                    assert_eq!(together, plain, "t = {t}, k = {k}, {threads} threads");
                }
                let alone = pool
                    .install(|| p.simulate_batched(&rows, counts, 13, 5, true))
                    .unwrap();
                assert_eq!(alone, plain[3]);
            }
            assert_ne!(plain[0], plain[1]);
        }
    }

    #[test]
    fn messages_pack_into_four_bytes_and_back() {
        for k in [1u32, 3, 4, 255, (1 << 26) - 1] {
            let shift = 32 - k.leading_zeros();
            let c = Narrow { shift };
            let d_max = ((1u64 << 32) >> shift) as u32;
            for j in [0, 1, d_max / 2, d_max - 1] {
                for y in [0, 1, k / 2, k] {
                    assert_eq!(
                        c.unpack(c.pack((j, y))),
                        (j, y),
                        "k = {k}, j = {j}, y = {y}"
                    );
                }
            }
        }
    }
}
