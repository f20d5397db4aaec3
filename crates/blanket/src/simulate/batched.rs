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
//! The users, sorted by group, are cut into blocks of [`CHUNK`] users (fewer for a
//! [`StepWork`] that asks for smaller blocks), each with its own ChaCha12 stream (seed,
//! repetition, block): the result does not depend on the thread count. With the ideal
//! shuffler the messages are written out, permuted uniformly and absorbed; a uniform
//! permutation of a sequence has a law that depends only on the multiset of its entries, so
//! writing them grouped changes nothing, and the state is bit-identical to the unshuffled
//! one for the same seed.

use super::{check_run, stream, SimulationError, CHUNK};
use crate::analyzer::{AggregateError, Aggregator};
use crate::rng::{simulation_stream, SimulationRng};
use crate::sample::BitPool;
use crate::shuffle::UniformShuffler;
use rayon::prelude::*;
use std::ops::Range;

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
pub(crate) fn plan(groups: &[u64]) -> Vec<(usize, u64, u64)> {
    plan_blocks(groups, CHUNK as u64)
}

/// [`plan`] with blocks of `block` users (1 <= block <= [`CHUNK`]).
pub(crate) fn plan_blocks(groups: &[u64], block: u64) -> Vec<(usize, u64, u64)> {
    let block = block.clamp(1, CHUNK as u64);
    let mut starts = Vec::new();
    let mut before = 0u64; // users in the groups before g
    let mut next = 0u64; // first user of the next block
    for (g, &c) in groups.iter().enumerate() {
        while next < before + c {
            starts.push((g, next - before, block));
            next += block;
        }
        before += c;
    }
    if let Some(last) = starts.last_mut() {
        last.2 = before - (next - block);
    }
    starts
}

/// The users of `groups` (saturating: an overflow is refused as too many), checked against
/// the simulation's limits for `per_user` messages each.
fn checked_users(groups: &[u64], per_user: u32, shuffle: bool) -> Result<u64, SimulationError> {
    let users = groups
        .iter()
        .try_fold(0u64, |a, &c| a.checked_add(c))
        .unwrap_or(u64::MAX);
    check_run(users, per_user, shuffle)?;
    Ok(users)
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
    let per_user = work.per_user();
    let users = checked_users(groups, per_user, shuffle)?;
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

/// A batch sampler that advances one batch of users at a time, so that the streams of several
/// repetitions over the same block of users can be interleaved batch by batch (the data the
/// batch reads is then loaded into the cache once for all of them). Each repetition's stream
/// draws exactly what it would draw alone.
pub trait StepWork: Sync {
    /// One message.
    type Message: Copy + Send + Sync + Default;
    /// A message as the ideal shuffler's buffer holds it (for example packed into 4 bytes):
    /// `unpack(pack(m)) == m` for every message the stream emits. The shuffler permutes the
    /// packed messages, which permutes the messages alike.
    type Packed: Copy + Send + Sync + Default;
    /// A message packed for the shuffler's buffer.
    fn pack(&self, message: Self::Message) -> Self::Packed;
    /// The message back from its packed form.
    fn unpack(&self, packed: Self::Packed) -> Self::Message;
    /// The state of one (repetition, block) stream: its generator, its pending coins, where
    /// it is in the block's segments.
    type Stream<'g>: Send;
    /// Messages per user (every user sends exactly this many).
    fn per_user(&self) -> u32;
    /// Users per block (each block of each repetition has its own stream), clamped to
    /// 8..=[`CHUNK`] (at least [`super::MAX_USERS`] / 2^32, so that stream ids stay
    /// unique). Smaller blocks let the threads share out the users of one repetition, each
    /// thread reading its own part of the data rows. It must not depend on the thread count.
    fn block_users(&self) -> u64 {
        CHUNK as u64
    }
    /// A stream over the users of `segments`, drawing from `pool`.
    fn start<'g>(&self, pool: BitPool<SimulationRng>, segments: Segments<'g>) -> Self::Stream<'g>;
    /// Emits the messages of the stream's next batch of users into `sink`; `false` when no
    /// user was left.
    fn step<S: Sink<Self::Message>>(
        &self,
        stream: &mut Self::Stream<'_>,
        sink: &mut S,
    ) -> Result<bool, AggregateError>;
}

/// Writes a block's messages, packed by `work`, into its slice of the buffer to shuffle
/// (exactly `users * per_user` of them).
struct PackSink<'a, W: StepWork> {
    work: &'a W,
    out: &'a mut [W::Packed],
    at: usize,
}

impl<W: StepWork> Sink<W::Message> for PackSink<'_, W> {
    #[inline]
    fn push(&mut self, message: W::Message) -> Result<(), AggregateError> {
        if let Some(slot) = self.out.get_mut(self.at) {
            *slot = self.work.pack(message);
        }
        self.at += 1;
        Ok(())
    }
    #[inline]
    fn push_many(&mut self, message: W::Message, k: u64) -> Result<(), AggregateError> {
        let end = (self.at + k as usize).min(self.out.len());
        if let Some(slots) = self.out.get_mut(self.at..end) {
            slots.fill(self.work.pack(message));
        }
        self.at += k as usize;
        Ok(())
    }
}

/// At most this many messages are held for the ideal shuffler at once by
/// [`run_grouped_repetitions`] (at most 64 MiB of messages of at most 8 bytes): repetitions
/// are run in rounds of at most this many messages in all (at least one repetition per
/// round).
pub const MAX_BUFFERED_MESSAGES: u64 = 1 << 23;

/// Runs the streams of repetitions `reps` over one block of users, interleaved batch by
/// batch, into one sink per repetition.
fn interleave<W: StepWork, S: Sink<W::Message>>(
    work: &W,
    seed: u64,
    block: usize,
    segments: Segments<'_>,
    reps: Range<u32>,
    sinks: &mut [S],
) -> Result<(), AggregateError> {
    let mut streams: Vec<_> = reps
        .map(|r| {
            let pool = BitPool::new(simulation_stream(seed, stream(r, block as u64)));
            work.start(pool, segments.clone())
        })
        .collect();
    loop {
        let mut more = false;
        for (s, sink) in streams.iter_mut().zip(sinks.iter_mut()) {
            more |= work.step(s, sink)?;
        }
        if !more {
            return Ok(());
        }
    }
}

/// Repetitions `reps` of a batched simulation of `groups[g]` users holding input g, returned
/// in repetition order. Repetition r's state is bit-identical to what it would be alone (the
/// same streams (seed, r, block), each drawing the same values in the same order), whatever
/// the thread count; the repetitions' streams over a block are interleaved batch by batch, so
/// the data a batch reads is fetched once for all of them. Work items are (block, group of
/// repetitions), as many as keep every thread busy. With `shuffle`, every repetition's
/// messages are written out, permuted by the ideal shuffler and absorbed (rounds of at most
/// [`MAX_BUFFERED_MESSAGES`] messages).
pub fn run_grouped_repetitions<W, A, N>(
    groups: &[u64],
    seed: u64,
    reps: Range<u32>,
    shuffle: bool,
    work: &W,
    new_state: N,
) -> Result<Vec<A>, SimulationError>
where
    W: StepWork<Message = A::Message>,
    A: Aggregator + Send,
    A::Message: Default + Send + Sync,
    N: Fn() -> A + Sync,
{
    let per_user = work.per_user();
    let users = checked_users(groups, per_user, shuffle)?;
    let messages = users * u64::from(per_user);
    // At least MAX_USERS / 2^32 users per block: fewer than 2^32 blocks, so every stream id
    // (repetition << 32 | block) is unique.
    let block = work
        .block_users()
        .clamp(super::MAX_USERS >> 32, CHUNK as u64);
    let blocks = plan_blocks(groups, block);
    if blocks.is_empty() {
        return Ok(reps.map(|_| new_state()).collect());
    }
    let round = if shuffle {
        (MAX_BUFFERED_MESSAGES / messages.max(1)).clamp(1, u64::from(u32::MAX)) as u32
    } else {
        u32::MAX
    };
    let mut out = Vec::with_capacity(reps.len());
    let mut r = reps.start;
    while r < reps.end {
        let end = r.saturating_add(round).min(reps.end);
        let states = if shuffle {
            shuffled_round(
                groups,
                &blocks,
                block,
                seed,
                r..end,
                work,
                &new_state,
                messages,
            )?
        } else {
            streamed_round(groups, &blocks, seed, r..end, work, &new_state)?
        };
        out.extend(states);
        r = end;
    }
    Ok(out)
}

/// Groups of repetitions, one work item per (block, group): all repetitions in one group
/// when the blocks alone keep every thread busy, else split so that there are about as many
/// items as threads.
fn repetition_groups(reps: Range<u32>, blocks: usize) -> Vec<Range<u32>> {
    let n = reps.len();
    let threads = rayon::current_num_threads().max(1);
    let split = threads.div_ceil(blocks.max(1)).clamp(1, n.max(1));
    let size = n.div_ceil(split).max(1) as u32;
    let mut groups = Vec::new();
    let mut r = reps.start;
    while r < reps.end {
        let e = r.saturating_add(size).min(reps.end);
        groups.push(r..e);
        r = e;
    }
    groups
}

/// The segments of block `start`.
fn segments_of<'g>(groups: &'g [u64], &(group, offset, left): &(usize, u64, u64)) -> Segments<'g> {
    Segments {
        groups,
        group,
        offset,
        left,
    }
}

/// One round without the shuffler: every repetition's messages folded straight into its
/// analyzer states (one per worker and repetition), merged.
fn streamed_round<W, A, N>(
    groups: &[u64],
    blocks: &[(usize, u64, u64)],
    seed: u64,
    reps: Range<u32>,
    work: &W,
    new_state: &N,
) -> Result<Vec<A>, AggregateError>
where
    W: StepWork<Message = A::Message>,
    A: Aggregator + Send,
    N: Fn() -> A + Sync,
{
    let fresh = |n: usize| (0..n).map(|_| new_state()).collect::<Vec<A>>();
    let per_group = repetition_groups(reps.clone(), blocks.len())
        .into_par_iter()
        .map(|g| {
            let n = g.len();
            blocks
                .par_iter()
                .enumerate()
                .try_fold(
                    || fresh(n),
                    |mut states, (b, start)| {
                        let mut sinks: Vec<StateSink<'_, A>> =
                            states.iter_mut().map(StateSink).collect();
                        interleave(
                            work,
                            seed,
                            b,
                            segments_of(groups, start),
                            g.clone(),
                            &mut sinks,
                        )?;
                        drop(sinks);
                        Ok::<_, AggregateError>(states)
                    },
                )
                .try_reduce_with(|mut a, b| {
                    for (x, y) in a.iter_mut().zip(b) {
                        x.merge(y)?;
                    }
                    Ok(a)
                })
                .unwrap_or_else(|| Ok(fresh(n)))
        })
        .collect::<Result<Vec<Vec<A>>, AggregateError>>()?;
    Ok(per_group.into_iter().flatten().collect())
}

/// One round with the ideal shuffler: every repetition's messages written (packed) into a
/// buffer, permuted by the ideal shuffler (stream (seed, u64::MAX - repetition)) and
/// absorbed. When a repetition is a single block of users, see [`one_block_shuffled_round`];
/// otherwise all buffers of the round are written first (work items (block, group of
/// repetitions) in parallel), then each is permuted and absorbed.
#[allow(clippy::too_many_arguments)]
fn shuffled_round<W, A, N>(
    groups: &[u64],
    blocks: &[(usize, u64, u64)],
    block: u64,
    seed: u64,
    reps: Range<u32>,
    work: &W,
    new_state: &N,
    messages: u64,
) -> Result<Vec<A>, AggregateError>
where
    W: StepWork<Message = A::Message>,
    A: Aggregator + Send,
    A::Message: Default + Send + Sync,
    N: Fn() -> A + Sync,
{
    if let [only] = blocks {
        return one_block_shuffled_round(groups, only, seed, reps, work, new_state, messages);
    }
    let per_block = block as usize * work.per_user() as usize;
    // check_run bounded the messages by MAX_SHUFFLED_MESSAGES (2^28).
    let mut bufs: Vec<Vec<W::Packed>> = reps
        .clone()
        .map(|_| vec![W::Packed::default(); messages as usize])
        .collect();
    {
        // Each repetition's buffer cut at the blocks' boundaries ([rep][block]), regrouped
        // per work item (block, group of repetitions).
        let mut cuts: Vec<Vec<&mut [W::Packed]>> = bufs
            .iter_mut()
            .map(|b| b.chunks_mut(per_block.max(1)).collect())
            .collect();
        let rep_groups = repetition_groups(reps.clone(), blocks.len());
        let mut items = Vec::new();
        // From the last block down, so that popping each repetition's cuts yields block b.
        for b in (0..blocks.len()).rev() {
            for g in &rep_groups {
                let outs: Vec<&mut [W::Packed]> = g
                    .clone()
                    .filter_map(|r| cuts.get_mut((r - reps.start) as usize)?.pop())
                    .collect();
                debug_assert_eq!(outs.len(), g.len());
                items.push((b, g.clone(), outs));
            }
        }
        items.into_par_iter().try_for_each(|(b, g, outs)| {
            let mut sinks: Vec<PackSink<'_, W>> = outs
                .into_iter()
                .map(|out| PackSink { work, out, at: 0 })
                .collect();
            interleave(
                work,
                seed,
                b,
                segments_of(groups, &blocks[b]),
                g,
                &mut sinks,
            )?;
            debug_assert!(sinks.iter().all(|s| s.at == s.out.len()));
            Ok::<_, AggregateError>(())
        })?;
    }
    bufs.into_par_iter()
        .zip(reps)
        .map(|(mut all, r)| shuffle_and_absorb(work, &mut all, seed, r, new_state))
        .collect()
}

/// [`shuffled_round`] when every repetition is one block of users: the
/// repetitions are cut into one group per thread, and each worker writes its group's
/// messages (the streams interleaved batch by batch, as in [`interleave`]), then permutes and
/// absorbs each buffer in turn. No barrier between writing and shuffling, and the buffers
/// (4 bytes a message when packed) are reused by the worker's next group instead of
/// allocated per repetition. The same streams draw the same values: each state is
/// bit-identical to the two-phase round's.
fn one_block_shuffled_round<W, A, N>(
    groups: &[u64],
    block: &(usize, u64, u64),
    seed: u64,
    reps: Range<u32>,
    work: &W,
    new_state: &N,
    messages: u64,
) -> Result<Vec<A>, AggregateError>
where
    W: StepWork<Message = A::Message>,
    A: Aggregator + Send,
    N: Fn() -> A + Sync,
{
    let threads = rayon::current_num_threads().max(1);
    let size = reps.len().div_ceil(threads).max(1) as u32;
    let mut rep_groups = Vec::new();
    let mut r = reps.start;
    while r < reps.end {
        let e = r.saturating_add(size).min(reps.end);
        rep_groups.push(r..e);
        r = e;
    }
    let per_group = rep_groups
        .into_par_iter()
        .map_init(Vec::<Vec<W::Packed>>::new, |bufs, g| {
            // check_run bounded the messages by MAX_SHUFFLED_MESSAGES (2^28). Every slot is
            // overwritten by the streams, so a reused buffer needs no clearing.
            if bufs.len() < g.len() {
                bufs.resize_with(g.len(), || vec![W::Packed::default(); messages as usize]);
            }
            let mut sinks: Vec<PackSink<'_, W>> = bufs
                .iter_mut()
                .take(g.len())
                .map(|out| PackSink {
                    work,
                    out: out.as_mut_slice(),
                    at: 0,
                })
                .collect();
            interleave(
                work,
                seed,
                0,
                segments_of(groups, block),
                g.clone(),
                &mut sinks,
            )?;
            debug_assert!(sinks.iter().all(|s| s.at == s.out.len()));
            drop(sinks);
            g.zip(bufs.iter_mut())
                .map(|(r, buf)| shuffle_and_absorb(work, buf, seed, r, new_state))
                .collect::<Result<Vec<A>, AggregateError>>()
        })
        .collect::<Result<Vec<Vec<A>>, AggregateError>>()?;
    Ok(per_group.into_iter().flatten().collect())
}

/// Permutes repetition `r`'s packed messages by the ideal shuffler (a uniform permutation,
/// stream (seed, u64::MAX - r)) and absorbs them into a fresh state.
fn shuffle_and_absorb<W, A, N>(
    work: &W,
    buf: &mut [W::Packed],
    seed: u64,
    r: u32,
    new_state: &N,
) -> Result<A, AggregateError>
where
    W: StepWork<Message = A::Message>,
    A: Aggregator + Send,
    N: Fn() -> A + Sync,
{
    let mut shuffle_rng = simulation_stream(seed, u64::MAX - u64::from(r));
    UniformShuffler.shuffle_parallel(buf, &mut shuffle_rng);
    buf.par_chunks(CHUNK)
        .try_fold(new_state, |mut state, part| {
            part.iter()
                .try_for_each(|&p| state.absorb(work.unpack(p)))?;
            Ok::<_, AggregateError>(state)
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
        assert_eq!(
            plan_blocks(&[5, 0, 3], 2),
            vec![(0, 0, 2), (0, 2, 2), (0, 4, 2), (2, 1, 2)]
        );
        assert_eq!(
            plan_blocks(&[5, 0, 3], 3),
            vec![(0, 0, 3), (0, 3, 3), (2, 1, 2)]
        );
    }
}
