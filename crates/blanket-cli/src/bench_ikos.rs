//! `blanket bench` figure for split-and-mix (IKOS): share generation, one uniform shuffle of
//! all n m shares, and their sum mod q, on one thread (key
//! `ikos_sum.shares_per_second_single_thread`). Kept apart from `cmd/bench.rs` so that file
//! only holds a one-line hook.

use anyhow::Result;
use blanket::analyzer::Aggregator;
use blanket::field::Modulus;
use blanket::protocol::Ikos;
use blanket::rng::secure_rng;
use blanket::shuffle::{Shuffler, UniformShuffler};
use serde::Serialize;
use std::time::Instant;

/// Clients per measurement.
pub const USERS: usize = 1_000_000;
/// Shares per client.
pub const SHARES: u32 = 12;
/// Bits of the modulus q = 2^32.
pub const MODULUS_BITS: u32 = 32;

/// The IKOS throughput (JSON keys are a contract).
#[derive(Serialize, Clone, Debug)]
pub struct IkosThroughput {
    /// Shares per second on one thread: n m / (time to generate, shuffle and sum them).
    pub shares_per_second_single_thread: f64,
    /// Clients per second on one thread.
    pub users_per_second_single_thread: f64,
    /// Clients n.
    pub n: u64,
    /// Shares per client m.
    pub m: u32,
    /// Modulus q.
    pub q: u64,
    /// Seconds of the best run: share generation, shuffle, sum.
    pub seconds: [f64; 3],
    /// What is measured.
    pub measures: &'static str,
}

/// Best of `tries` runs at n = [`USERS`], m = [`SHARES`], q = 2^32 (ChaCha20 from the OS for
/// the shares and the shuffle, as a real deployment would use).
pub fn measure(tries: usize) -> Result<IkosThroughput> {
    let modulus = Modulus::power_of_two(MODULUS_BITS)?;
    let ikos = Ikos::new(modulus, SHARES)?;
    let m = SHARES as usize;
    let mut all = vec![0u64; USERS * m];
    let mut rng = secure_rng()?;
    let inputs: Vec<u64> = (0..1 << 16).map(|_| modulus.uniform(&mut rng)).collect();
    let mut best: Option<[f64; 3]> = None;
    for _ in 0..tries.max(1) {
        let t0 = Instant::now();
        for (i, out) in all.chunks_exact_mut(m).enumerate() {
            modulus.share_into(inputs[i % inputs.len()], out, &mut rng)?;
        }
        let t1 = Instant::now();
        UniformShuffler.shuffle(&mut all, &mut rng);
        let t2 = Instant::now();
        let mut state = ikos.analyzer();
        state.absorb_all(&all)?;
        std::hint::black_box(state.sum());
        let t3 = Instant::now();
        let s = [
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            (t3 - t2).as_secs_f64(),
        ];
        if best.is_none_or(|b| s.iter().sum::<f64>() < b.iter().sum::<f64>()) {
            best = Some(s);
        }
    }
    let s = best.unwrap_or([f64::NAN; 3]);
    let total: f64 = s.iter().sum();
    Ok(IkosThroughput {
        shares_per_second_single_thread: (USERS * m) as f64 / total,
        users_per_second_single_thread: USERS as f64 / total,
        n: USERS as u64,
        m: SHARES,
        q: 1 << MODULUS_BITS,
        seconds: s,
        measures: "additive sharing of one element of Z_q into m shares per client, one uniform (Fisher-Yates) shuffle of all n m shares, and their sum mod q; one thread, ChaCha20 from the OS, best of 3",
    })
}

/// The human line of `blanket bench`.
pub fn print(t: &IkosThroughput) -> anyhow::Result<()> {
    crate::outln!(
        "IKOS split-and-mix, n = {}, m = {}, q = 2^{MODULUS_BITS}, one thread: {} M shares/s (share {:.3} s, shuffle {:.3} s, sum {:.3} s)",
        t.n,
        t.m,
        crate::output::num(t.shares_per_second_single_thread / 1e6),
        t.seconds[0],
        t.seconds[1],
        t.seconds[2]
    );
    Ok(())
}
