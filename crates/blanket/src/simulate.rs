//! Reproducible, parallel end-to-end simulation of a single-message protocol: every user
//! randomizes, the ideal shuffler permutes the messages, the analyzer absorbs them.
//!
//! Users are cut into fixed chunks, each with its own ChaCha20 stream derived from
//! (seed, repetition, chunk), so results do not depend on the number of threads.

use crate::analyzer::{AggregateError, Aggregator};
use crate::rng::{simulation_stream, SimulationRng};
use crate::shuffle::{Shuffler, UniformShuffler};
use rayon::prelude::*;

/// Users per chunk (and per RNG stream).
pub const CHUNK: usize = 1 << 16;

/// Simulates one repetition: user `i` sends `randomize(i, rng)`; the messages are shuffled by
/// the uniform shuffler (when `shuffle` is set) and absorbed into states from `new_state`,
/// merged in parallel. Returns the merged analyzer state.
pub fn run_single_message<A, F, N>(
    users: usize,
    seed: u64,
    repetition: u32,
    shuffle: bool,
    randomize: F,
    new_state: N,
) -> Result<A, AggregateError>
where
    A: Aggregator<Message = u32>,
    F: Fn(usize, &mut SimulationRng) -> u32 + Sync,
    N: Fn() -> A + Sync,
{
    let stream = |chunk: usize| (u64::from(repetition) << 32) | chunk as u64;
    let chunks = users.div_ceil(CHUNK);
    if !shuffle {
        return (0..chunks)
            .into_par_iter()
            .map(|c| {
                let mut rng = simulation_stream(seed, stream(c));
                let mut state = new_state();
                for i in c * CHUNK..((c + 1) * CHUNK).min(users) {
                    state.absorb(randomize(i, &mut rng))?;
                }
                Ok(state)
            })
            .try_reduce_with(|mut a, b| {
                a.merge(b)?;
                Ok(a)
            })
            .unwrap_or_else(|| Ok(new_state()));
    }
    let mut messages = vec![0u32; users];
    messages
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(c, out)| {
            let mut rng = simulation_stream(seed, stream(c));
            for (j, slot) in out.iter_mut().enumerate() {
                *slot = randomize(c * CHUNK + j, &mut rng);
            }
        });
    let mut shuffle_rng = simulation_stream(seed, u64::MAX - u64::from(repetition));
    UniformShuffler.shuffle(&mut messages, &mut shuffle_rng);
    messages
        .par_chunks(CHUNK)
        .map(|part| {
            let mut state = new_state();
            state.absorb_all(part)?;
            Ok(state)
        })
        .try_reduce_with(|mut a, b| {
            a.merge(b)?;
            Ok(a)
        })
        .unwrap_or_else(|| Ok(new_state()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::Counts;
    use crate::params::{DomainSize, Gamma};
    use crate::protocol::Histogram;

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
}
