//! Reproducible, parallel end-to-end simulation: every user randomizes, the ideal shuffler
//! permutes the messages (optionally), the analyzer absorbs them.
//!
//! Users are cut into fixed chunks of [`CHUNK`], each with its own ChaCha12 stream derived from
//! (seed, repetition, chunk), so results do not depend on the number of threads. Without the
//! shuffler, each worker streams chunk after chunk through one reusable buffer of at most
//! `CHUNK * messages_per_user` messages into its own analyzer state, and the states are merged
//! at the end (analyzer states are commutative monoids): memory is independent of n (a few
//! analyzer states and buffers per thread). The ideal shuffler needs every message in memory
//! to permute them, so it is limited to [`MAX_SHUFFLED_MESSAGES`]; since the analyzer is
//! order-free, the estimate with and without it is bit-identical.
//!
//! [`batched`] runs the same simulations with users grouped by input and decisions drawn in
//! bulk by exact samplers: the same law of the analyzer state, less work per user (what the
//! CLI's `simulate histogram` and `simulate vector-sum` run).

use crate::analyzer::{AggregateError, Aggregator};
use crate::rng::{simulation_stream, SimulationRng};
use crate::shuffle::UniformShuffler;
use rayon::prelude::*;
use thiserror::Error;

pub mod batched;

/// Users per chunk (and per RNG stream).
pub const CHUNK: usize = 1 << 16;

/// The most messages the ideal shuffler permutes in one simulated repetition: 2^28, i.e.
/// 1 GiB of 4-byte messages (2 GiB for vector-sum's (coordinate, value) pairs). The uniform
/// permutation needs all of them in memory at once.
pub const MAX_SHUFFLED_MESSAGES: u64 = 1 << 28;

/// The most users in one simulated repetition: 2^35 (about 3.4e10), a bound on running time
/// (memory does not grow with n): the histogram simulation streams about 2e8 users per second
/// on 2 cores (measured at n = 1e9: 5 s), so 2^35 users take minutes per repetition, while
/// n = 1e12 would take over an hour per repetition (hours for the multi-message vector sum).
/// It also keeps every chunk's random stream id (repetition << 32 | chunk) unique, which
/// needs fewer than 2^32 chunks of [`CHUNK`] users (or of the at least 8 users of a
/// [`batched::StepWork`] block).
pub const MAX_USERS: u64 = 1 << 35;

/// A simulation that cannot run, or a message the analyzer rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SimulationError {
    /// The analyzer rejected a message or state.
    #[error(transparent)]
    Aggregate(#[from] AggregateError),
    /// Too many messages for the in-memory ideal shuffler.
    #[error("the ideal shuffler keeps all {messages} messages in memory to permute them; at most {limit} (2^28) are allowed per repetition. Simulate without the shuffler (--no-shuffle): the analyzer is order-free, so the estimate is bit-identical")]
    ShuffleTooLarge {
        /// Messages of the repetition (users times messages per user).
        messages: u64,
        /// [`MAX_SHUFFLED_MESSAGES`].
        limit: u64,
    },
    /// Too many users for one repetition.
    #[error("n = {users} users per repetition is above the simulation limit of {limit} (2^35, about 3.4e10): at about 2e8 simulated users per second (2 cores) one repetition of n = 1e12 would take over an hour. Simulate fewer users (the predicted MSE gives the error at any n)")]
    TooManyUsers {
        /// Users asked for.
        users: u64,
        /// [`MAX_USERS`].
        limit: u64,
    },
}

/// Checks that a repetition of `users` users sending `per_user` messages each can run
/// ([`MAX_USERS`], and [`MAX_SHUFFLED_MESSAGES`] with the shuffler); [`run`] checks it, and
/// callers that do O(n) preparatory work (e.g. counting which data row each user holds)
/// check first.
pub fn check_run(users: u64, per_user: u32, shuffle: bool) -> Result<(), SimulationError> {
    if users > MAX_USERS {
        return Err(SimulationError::TooManyUsers {
            users,
            limit: MAX_USERS,
        });
    }
    let messages = users * u64::from(per_user);
    if shuffle && messages > MAX_SHUFFLED_MESSAGES {
        return Err(SimulationError::ShuffleTooLarge {
            messages,
            limit: MAX_SHUFFLED_MESSAGES,
        });
    }
    Ok(())
}

/// The stream id of chunk `c` of repetition `repetition`.
fn stream(repetition: u32, c: u64) -> u64 {
    (u64::from(repetition) << 32) | c
}

/// Simulates one repetition of a protocol whose users each send exactly `per_user` messages:
/// `randomize(i, rng, buffer)` pushes user i's messages onto `buffer`. With `shuffle`, all
/// messages are collected and permuted by the uniform shuffler before they are absorbed
/// (at most [`MAX_SHUFFLED_MESSAGES`]); without, chunks are streamed through one bounded
/// buffer per worker (memory independent of n). Both give the same analyzer state for the
/// same seed. Returns the merged analyzer state.
pub fn run<A, F, N>(
    users: u64,
    per_user: u32,
    seed: u64,
    repetition: u32,
    shuffle: bool,
    randomize: F,
    new_state: N,
) -> Result<A, SimulationError>
where
    A: Aggregator,
    A::Message: Default + Send + Sync,
    F: Fn(usize, &mut SimulationRng, &mut Vec<A::Message>) + Sync,
    N: Fn() -> A + Sync,
{
    check_run(users, per_user, shuffle)?;
    let messages = users * u64::from(per_user);
    let n = users as usize; // <= 2^35: fits (blanket targets 64-bit platforms)
    let chunks = users.div_ceil(CHUNK as u64);
    // Chunk c's messages, in user order, into `buf` (cleared first).
    let fill = |c: u64, buf: &mut Vec<A::Message>| {
        buf.clear();
        let mut rng = simulation_stream(seed, stream(repetition, c));
        let first = c as usize * CHUNK;
        for i in first..(first + CHUNK).min(n) {
            randomize(i, &mut rng, buf);
        }
    };
    let merge = |mut a: A, b: A| -> Result<A, AggregateError> {
        a.merge(b)?;
        Ok(a)
    };
    let state = if !shuffle {
        (0..chunks)
            .into_par_iter()
            .try_fold(
                || (new_state(), Vec::with_capacity(CHUNK * per_user as usize)),
                |(mut state, mut buf), c| {
                    fill(c, &mut buf);
                    state.absorb_all(&buf)?;
                    Ok::<_, AggregateError>((state, buf))
                },
            )
            .map(|r| r.map(|(state, _)| state))
            .try_reduce_with(merge)
    } else {
        let mut all = vec![A::Message::default(); messages as usize];
        let per_chunk = CHUNK * per_user as usize;
        all.par_chunks_mut(per_chunk.max(1))
            .enumerate()
            .for_each(|(c, out)| {
                let mut buf = Vec::with_capacity(per_chunk);
                fill(c as u64, &mut buf);
                debug_assert_eq!(buf.len(), out.len(), "every user sends per_user messages");
                for (slot, m) in out.iter_mut().zip(buf) {
                    *slot = m;
                }
            });
        let mut shuffle_rng = simulation_stream(seed, u64::MAX - u64::from(repetition));
        UniformShuffler.shuffle_parallel(&mut all, &mut shuffle_rng);
        all.par_chunks(CHUNK)
            .try_fold(&new_state, |mut state, part| {
                state.absorb_all(part)?;
                Ok::<_, AggregateError>(state)
            })
            .try_reduce_with(merge)
    };
    Ok(state.unwrap_or_else(|| Ok(new_state()))?)
}

/// [`run`] for a single-message protocol: user `i` sends `randomize(i, rng)`.
pub fn run_single_message<A, F, N>(
    users: usize,
    seed: u64,
    repetition: u32,
    shuffle: bool,
    randomize: F,
    new_state: N,
) -> Result<A, SimulationError>
where
    A: Aggregator<Message = u32>,
    F: Fn(usize, &mut SimulationRng) -> u32 + Sync,
    N: Fn() -> A + Sync,
{
    run(
        users as u64,
        1,
        seed,
        repetition,
        shuffle,
        |i, rng, buf| buf.push(randomize(i, rng)),
        new_state,
    )
}

/// n users formed from `rows` distinct data rows without materializing n values: the first n
/// rows when n <= rows, else n draws with replacement where user i's row is a fixed function
/// of (seed, i) (a SplitMix64 hash of the pair, reduced by Lemire's multiply-shift with
/// rejection). This is data generation for simulations, not privacy randomness: its only
/// requirement is reproducibility, and memory independent of n.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resample {
    rows: u64,
    users: u64,
    seed: u64,
}

impl Resample {
    /// `users` users over `rows` rows (`rows` >= 1) with the given seed.
    pub fn new(rows: usize, users: u64, seed: u64) -> Self {
        Self {
            rows: rows.max(1) as u64,
            users,
            seed,
        }
    }

    /// Number of users n.
    pub fn users(&self) -> u64 {
        self.users
    }

    /// Whether users are drawn with replacement (n exceeds the rows).
    pub fn with_replacement(&self) -> bool {
        self.users > self.rows
    }

    /// The row user `i` holds.
    #[inline]
    pub fn row(&self, i: u64) -> usize {
        if !self.with_replacement() {
            return i as usize;
        }
        let mut ctr = 0u64;
        loop {
            let x = splitmix64(self.seed ^ splitmix64(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ctr));
            // Lemire: x * rows / 2^64, rejecting the biased low part (exact for uniform x).
            let m = u128::from(x) * u128::from(self.rows);
            let low = m as u64;
            if low >= self.rows.wrapping_neg() % self.rows {
                return (m >> 64) as usize;
            }
            ctr += 1;
        }
    }
}

/// SplitMix64's finalizer (Steele, Lea, Flood 2014): a bijective 64-bit mix.
#[inline]
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::Counts;
    use crate::params::{DomainSize, Gamma};
    use crate::protocol::Histogram;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn independent_of_thread_count_and_of_shuffling() {
        let h = Histogram::new(DomainSize::new(8).unwrap(), Gamma::new(0.3).unwrap());
        let run = |shuffle| {
            run_single_message(
                200_000,
                5,
                0,
                shuffle,
                |i, rng| h.randomize_simulated((i % 8) as u32, rng).unwrap_or(0),
                || Counts::new(8),
            )
            .unwrap()
        };
        let a = run(false);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = one.install(|| run(false));
        assert_eq!(a, b);
        // The shuffle permutes messages; the multiset (hence the counts) is unchanged.
        assert_eq!(run(true), a);
        assert_eq!(a.reports(), 200_000);
    }

    /// Issue 8 item 11: the streamed (chunked) path gives bit-identical results to the
    /// materialized path (all messages in one buffer, shuffled) for the same seed, and its
    /// memory does not grow with n: every chunk buffer holds at most CHUNK * per_user
    /// messages and the number of analyzer states is bounded by the threads, not by the
    /// number of chunks.
    #[test]
    fn chunked_path_is_bit_identical_and_bounded() {
        let h = Histogram::new(DomainSize::new(1000).unwrap(), Gamma::new(0.4).unwrap());
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        for users in [CHUNK as u64 * 3 + 17, CHUNK as u64 * 40] {
            let max_buffer = AtomicUsize::new(0);
            let states = AtomicUsize::new(0);
            let go = |shuffle: bool| {
                run(
                    users,
                    2,
                    9,
                    3,
                    shuffle,
                    |i, rng, buf| {
                        buf.push(h.randomize_simulated((i % 1000) as u32, rng).unwrap());
                        buf.push(h.randomize_simulated((i % 7) as u32, rng).unwrap());
                        max_buffer.fetch_max(buf.len(), Ordering::Relaxed);
                    },
                    || {
                        states.fetch_add(1, Ordering::Relaxed);
                        Counts::new(1000)
                    },
                )
                .unwrap()
            };
            let materialized = go(true);
            states.store(0, Ordering::Relaxed);
            let streamed = one.install(|| go(false));
            assert_eq!(streamed, materialized, "n = {users}");
            assert_eq!(streamed.reports(), 2 * users);
            assert!(max_buffer.load(Ordering::Relaxed) <= 2 * CHUNK);
            // One worker: its fold states (rayon splits a range a bounded number of times
            // per thread), however many chunks (4 or 40).
            let s = states.load(Ordering::Relaxed);
            assert!(s <= 4, "{s} analyzer states for n = {users}");
            assert_eq!(go(false), materialized);
        }
    }

    #[test]
    fn infeasible_runs_are_typed_errors() {
        let h = Histogram::new(DomainSize::new(4).unwrap(), Gamma::new(0.4).unwrap());
        let r = |users: u64, shuffle: bool| {
            run(
                users,
                1,
                1,
                0,
                shuffle,
                |_, rng, buf| buf.push(h.randomize_simulated(0, rng).unwrap()),
                || Counts::new(4),
            )
        };
        let e = r(MAX_SHUFFLED_MESSAGES + 1, true).unwrap_err();
        assert!(matches!(e, SimulationError::ShuffleTooLarge { .. }));
        assert!(e.to_string().contains("--no-shuffle"), "{e}");
        let e = r(1_000_000_000_000, false).unwrap_err();
        assert!(matches!(e, SimulationError::TooManyUsers { .. }));
        assert!(e.to_string().contains("2^35"), "{e}");
    }

    #[test]
    fn resample_is_reproducible_and_covers_the_rows() {
        let r = Resample::new(10, 100_000, 4);
        assert!(r.with_replacement());
        let mut seen = [0u32; 10];
        for i in 0..100_000 {
            let row = r.row(i);
            assert_eq!(row, r.row(i));
            seen[row] += 1;
        }
        // Each row about 10000 times (sd about 95).
        assert!(
            seen.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{seen:?}"
        );
        let first = Resample::new(10, 7, 4);
        assert!(!first.with_replacement());
        assert_eq!(
            (0..7).map(|i| first.row(i)).collect::<Vec<_>>(),
            (0..7).collect::<Vec<_>>()
        );
    }
}
