//! Batched simulation: the same output distribution as the per-client path of
//! [`super::run`], with less work per user.
//!
//! The analyzer state is a function of the multiset of messages (every analyzer is a
//! commutative monoid), and users holding the same input are exchangeable: permuting users
//! does not change the law of the multiset. So a simulation may process users *grouped by
//! input* (group g: `groups[g]` users holding input g) instead of in user order, and may
//! draw each decision with any exact sampler of the same law (a Binomial count of blanket
//! coins for a whole group, 64 coins per generator word bit-sliced, 8-bit first comparisons,
//! 16-bit bounded uniforms). Each protocol's batch sampler states why its per-user law is
//! the client's (`docs/performance.md`), and a chi-square test compares the batched and the
//! per-client states on small instances.
//!
//! The users, sorted by group, are cut into blocks of [`CHUNK`] users, each with its own
//! ChaCha12 stream (seed, repetition, block): the result does not depend on the thread
//! count. With the ideal shuffler the messages are written out, permuted uniformly and
//! absorbed; a uniform permutation of a sequence has a law that depends only on the multiset
//! of its entries, so writing them grouped changes nothing, and the state is bit-identical
//! to the unshuffled one for the same seed.

use super::{check_run, stream, SimulationError, CHUNK};
use crate::analyzer::{AggregateError, Aggregator};
use crate::rng::{simulation_stream, SimulationRng};
use crate::sample::BitPool;
use crate::shuffle::UniformShuffler;
use rayon::prelude::*;

/// Where a batch sampler puts its messages: the analyzer state, or the buffer the shuffler
/// permutes.
pub trait Sink<M> {
    /// One message.
    fn push(&mut self, message: M) -> Result<(), AggregateError>;
    /// `k` copies of one message.
    fn push_many(&mut self, message: M, k: u64) -> Result<(), AggregateError>;
}

struct StateSink<'a, A>(&'a mut A);

impl<A: Aggregator> Sink<A::Message> for StateSink<'_, A> {
    #[inline]
    fn push(&mut self, message: A::Message) -> Result<(), AggregateError> {
        self.0.absorb(message)
    }
    #[inline]
    fn push_many(&mut self, message: A::Message, k: u64) -> Result<(), AggregateError> {
        self.0.absorb_repeated(message, k)
    }
}

/// Writes a block's messages into its slice of the buffer to shuffle (exactly
/// `users * per_user` of them: every user sends `per_user` messages).
struct SliceSink<'a, M> {
    out: &'a mut [M],
    at: usize,
}

impl<M: Copy> Sink<M> for SliceSink<'_, M> {
    #[inline]
    fn push(&mut self, message: M) -> Result<(), AggregateError> {
        if let Some(slot) = self.out.get_mut(self.at) {
            *slot = message;
        }
        self.at += 1;
        Ok(())
    }
    #[inline]
    fn push_many(&mut self, message: M, k: u64) -> Result<(), AggregateError> {
        let end = (self.at + k as usize).min(self.out.len());
        if let Some(slots) = self.out.get_mut(self.at..end) {
            slots.fill(message);
        }
        self.at += k as usize;
        Ok(())
    }
}

/// A protocol's batch sampler: the messages of a block of users given as segments
/// `(group, users)` (consecutive users holding the same input), from the block's generator.
pub trait BlockWork: Sync {
    /// One message.
    type Message: Copy + Send + Sync + Default;
    /// Messages per user (every user sends exactly this many).
    fn per_user(&self) -> u32;
    /// Emits the `per_user` messages of every user of every segment into `sink`.
    fn block<S: Sink<Self::Message>>(
        &self,
        pool: &mut BitPool<SimulationRng>,
        segments: Segments<'_>,
        sink: &mut S,
    ) -> Result<(), AggregateError>;
}

/// Consecutive users of a block, as `(group, users)` segments of users holding the same
/// input (empty groups skipped).
#[derive(Debug, Clone)]
pub struct Segments<'a> {
    groups: &'a [u64],
    group: usize,
    offset: u64,
    left: u64,
}

impl Iterator for Segments<'_> {
    type Item = (usize, u64);

    #[inline]
    fn next(&mut self) -> Option<(usize, u64)> {
        while self.left > 0 {
            let g = self.group;
            let take = self
                .groups
                .get(g)?
                .saturating_sub(self.offset)
                .min(self.left);
            self.group += 1;
            self.offset = 0;
            if take > 0 {
                self.left -= take;
                return Some((g, take));
            }
        }
        None
    }
}

/// Where each block of [`CHUNK`] users of the users sorted by group starts: (group, offset
/// in the group, users in the block). One pass over the groups; no per-user memory.
fn plan(groups: &[u64]) -> Vec<(usize, u64, u64)> {
    let mut starts = Vec::new();
    let mut before = 0u64; // users in the groups before g
    let mut next = 0u64; // first user of the next block
    for (g, &c) in groups.iter().enumerate() {
        while next < before + c {
            starts.push((g, next - before, CHUNK as u64));
            next += CHUNK as u64;
        }
        before += c;
    }
    if let Some(last) = starts.last_mut() {
        last.2 = before - (next - CHUNK as u64);
    }
    starts
}

/// One repetition of a batched simulation of `groups[g]` users holding input g; returns
/// the merged analyzer state (see the module documentation).
pub fn run_grouped<W, A, N>(
    groups: &[u64],
    seed: u64,
    repetition: u32,
    shuffle: bool,
    work: &W,
    new_state: N,
) -> Result<A, SimulationError>
where
    W: BlockWork<Message = A::Message>,
    A: Aggregator,
    A::Message: Default + Send + Sync,
    N: Fn() -> A + Sync,
{
    let users = groups
        .iter()
        .try_fold(0u64, |a, &c| a.checked_add(c))
        .unwrap_or(u64::MAX);
    let per_user = work.per_user();
    check_run(users, per_user, shuffle)?;
    let blocks = plan(groups);
    let segments = |&(group, offset, left): &(usize, u64, u64)| Segments {
        groups,
        group,
        offset,
        left,
    };
    let pool = |b: usize| BitPool::new(simulation_stream(seed, stream(repetition, b as u64)));
    let merge = |mut a: A, b: A| -> Result<A, AggregateError> {
        a.merge(b)?;
        Ok(a)
    };
    let state = if !shuffle {
        blocks
            .par_iter()
            .enumerate()
            .try_fold(&new_state, |mut state, (b, start)| {
                work.block(&mut pool(b), segments(start), &mut StateSink(&mut state))?;
                Ok::<_, AggregateError>(state)
            })
            .try_reduce_with(merge)
    } else {
        let per_block = CHUNK * per_user as usize;
        // check_run bounded the messages by MAX_SHUFFLED_MESSAGES (2^28).
        let mut all = vec![A::Message::default(); (users * u64::from(per_user)) as usize];
        all.par_chunks_mut(per_block.max(1))
            .zip(blocks.par_iter())
            .enumerate()
            .try_for_each(|(b, (out, start))| {
                let mut sink = SliceSink { out, at: 0 };
                work.block(&mut pool(b), segments(start), &mut sink)?;
                debug_assert_eq!(sink.at, sink.out.len(), "per_user messages per user");
                Ok::<_, AggregateError>(())
            })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_groups_in_order() {
        let groups = [3u64, 0, CHUNK as u64 * 2 + 5, 1];
        let starts = plan(&groups);
        let seg = |&(group, offset, left): &(usize, u64, u64)| -> Vec<(usize, u64)> {
            Segments {
                groups: &groups,
                group,
                offset,
                left,
            }
            .collect()
        };
        assert_eq!(starts.len(), 3);
        assert_eq!(seg(&starts[0]), vec![(0, 3), (2, CHUNK as u64 - 3)]);
        assert_eq!(seg(&starts[1]), vec![(2, CHUNK as u64)]);
        assert_eq!(seg(&starts[2]), vec![(2, 8), (3, 1)]);
        let mut total = vec![0u64; 4];
        for s in &starts {
            for (g, c) in seg(s) {
                total[g] += c;
            }
        }
        assert_eq!(total, groups);
        assert!(plan(&[0, 0]).is_empty());
        assert_eq!(plan(&[0, CHUNK as u64, 0]), vec![(1, 0, CHUNK as u64)]);
        let exact = [CHUNK as u64, CHUNK as u64];
        assert_eq!(
            plan(&exact),
            vec![(0, 0, CHUNK as u64), (1, 0, CHUNK as u64)]
        );
    }
}
