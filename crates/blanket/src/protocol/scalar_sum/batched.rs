//! Batched simulation of the scalar-sum protocol (issue 15): the same law of the analyzer
//! state as n per-client calls of [`ScalarSum::randomize_value_simulated`], with less work
//! per user.
//!
//! Why the law is the client's (`docs/performance.md`, "Batched simulation"):
//! 1. The analyzer state ([`IntegerSum`]: the sum and count of the messages) is a function of
//!    the multiset of messages, and users holding the same value are exchangeable, so the
//!    users may be processed grouped by value (`counts[r]` users hold `values[r]`).
//! 2. A client holding x sends Y = L with L = floor(x k) + Bernoulli(f), f = x k - floor(x k)
//!    (randomized rounding), unless its blanket coin B ~ Bernoulli(gamma) comes up, in which
//!    case it sends a uniform level U of {0..k}. B is drawn from bits of its own, independent
//!    of the rounding coin, and when B = 1 the message does not depend on L.
//! 3. So for the c users holding x: the number K of blanket messages is Binomial(c, gamma)
//!    (a sum of c independent exact coins, [`Coins::count`]); the c - K others send
//!    floor(x k) + 1 a Binomial(c - K, f) number of times (independent exact rounding coins:
//!    bit-sliced [`Coins::count`] for large groups, one 8-bit-first coin per user,
//!    [`randomized_round_pool`], for small ones) and floor(x k) the rest; the K blanket users
//!    send K independent uniform levels. That is the multiset of c per-client calls, in law.

use super::ScalarSum;
use crate::analyzer::{AggregateError, IntegerSum};
use crate::encode::{randomized_round_pool, split_level};
use crate::params::{Precision, UnitValue};
use crate::rng::SimulationRng;
use crate::sample::{Bernoulli, BitPool, Coins};
use crate::simulate::batched::{run_grouped, BlockWork, Segments, Sink};
use crate::simulate::SimulationError;

/// Groups with fewer non-blanket users than this round one user at a time (8 bits per coin in
/// 255 of 256 cases); larger ones draw 64 bit-sliced rounding coins per about 7.3 words.
const PER_USER_ROUNDING: u64 = 16;

/// The batch sampler of [`ScalarSum::simulate_batched`].
pub(super) struct RoundingBlocks<'a> {
    pub(super) values: &'a [UnitValue],
    pub(super) k: Precision,
    pub(super) blanket: Bernoulli,
    /// Levels of a blanket message: k + 1 ({0..k}).
    pub(super) levels: u32,
}

impl BlockWork for RoundingBlocks<'_> {
    type Message = u32;

    fn per_user(&self) -> u32 {
        1
    }

    fn block<S: Sink<u32>>(
        &self,
        pool: &mut BitPool<SimulationRng>,
        segments: Segments<'_>,
        sink: &mut S,
    ) -> Result<(), AggregateError> {
        let mut blanket = Coins::new(self.blanket);
        for (g, c) in segments {
            // simulate_batched checked that every group has a value.
            let x = self.values.get(g).map_or(0.0, |v| v.get());
            let b = blanket.count(c, pool);
            let kept = c - b;
            let (base, frac) = split_level(x, self.k);
            let up = if frac == 0.0 {
                0
            } else if kept < PER_USER_ROUNDING {
                (0..kept)
                    .map(|_| u64::from(randomized_round_pool(x, self.k, pool) - base))
                    .sum()
            } else {
                Coins::new(Bernoulli::expand(frac)).count(kept, pool)
            };
            if up > 0 {
                sink.push_many(base + 1, up)?;
            }
            if kept > up {
                sink.push_many(base, kept - up)?;
            }
            for _ in 0..b {
                sink.push(pool.uniform(self.levels))?;
            }
        }
        Ok(())
    }
}

impl ScalarSum {
    /// One simulated repetition, batched: `counts[r]` users hold `values[r]` (rows beyond
    /// `counts` hold no user). Per value, a Binomial count of exact blanket coins, a Binomial
    /// count of exact rounding coins among the others, and uniform levels for the blanket
    /// messages: the state has exactly the law of n per-client calls (module documentation;
    /// tested by chi-square against the per-client path). With `shuffle` the messages are
    /// permuted by the ideal shuffler before they are absorbed (same state). Reproducible for
    /// (seed, repetition), independent of the thread count.
    pub fn simulate_batched(
        &self,
        values: &[UnitValue],
        counts: &[u64],
        seed: u64,
        repetition: u32,
        shuffle: bool,
    ) -> Result<IntegerSum, SimulationError> {
        if counts.len() > values.len() {
            return Err(AggregateError::ShapeMismatch {
                left: values.len() as u64,
                right: counts.len() as u64,
            }
            .into());
        }
        run_grouped(
            counts,
            seed,
            repetition,
            shuffle,
            &RoundingBlocks {
                values,
                k: self.k,
                blanket: self.grr.blanket_coin(),
                levels: self.k.levels().get(),
            },
            || self.aggregator(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::Aggregator;
    use crate::params::Gamma;
    use crate::rng::simulation_rng;
    use crate::sample::stats::{chi_square, chi_square_critical};

    /// Exact pmf of the sum of the messages of one user per value of `data` (convolution of
    /// the per-user laws: (1 - gamma)((1 - f) at floor(x k), f at floor(x k) + 1) + gamma
    /// uniform on {0..k}).
    fn exact_sum_pmf(p: &ScalarSum, data: &[f64]) -> Vec<f64> {
        let k = p.k().get();
        let g = p.randomizer().gamma().get();
        let mut pmf = vec![1.0];
        for &x in data {
            let (base, f) = split_level(x, p.k());
            let mut one = vec![g / f64::from(k + 1); k as usize + 1];
            one[base as usize] += (1.0 - g) * (1.0 - f);
            if f > 0.0 {
                one[base as usize + 1] += (1.0 - g) * f;
            }
            let mut next = vec![0.0; pmf.len() + k as usize];
            for (s, &a) in pmf.iter().enumerate() {
                for (y, &b) in one.iter().enumerate() {
                    next[s + y] += a * b;
                }
            }
            pmf = next;
        }
        pmf
    }

    /// Chi-square of sums observed against a pmf (cells with expected count below 5 pooled),
    /// with its critical value at significance about 1e-6.
    fn against(observed: &[u64], pmf: &[f64], draws: u64) -> (f64, f64) {
        let (mut obs, mut exp, mut pooled) = (Vec::new(), Vec::new(), (0u64, 0.0));
        for (&o, &q) in observed.iter().zip(pmf) {
            if q * draws as f64 >= 5.0 {
                obs.push(o);
                exp.push(q * draws as f64);
            } else {
                pooled = (pooled.0 + o, pooled.1 + q * draws as f64);
            }
        }
        if pooled.1 > 0.0 {
            obs.push(pooled.0);
            exp.push(pooled.1);
        }
        (chi_square(&obs, &exp), chi_square_critical(obs.len() - 1))
    }

    /// Two-sample chi-square between equal-size samples (cells with a + b < 10 pooled), and
    /// its critical value at significance about 1e-6.
    fn two_sample(a: &[u64], b: &[u64]) -> (f64, f64) {
        let (mut stat, mut cells, mut rest) = (0.0, 0usize, (0u64, 0u64));
        for (&x, &y) in a.iter().zip(b) {
            if x + y >= 10 {
                stat += (x as f64 - y as f64).powi(2) / (x + y) as f64;
                cells += 1;
            } else {
                rest = (rest.0 + x, rest.1 + y);
            }
        }
        if rest.0 + rest.1 > 0 {
            stat += (rest.0 as f64 - rest.1 as f64).powi(2) / (rest.0 + rest.1) as f64;
            cells += 1;
        }
        (stat, chi_square_critical(cells - 1))
    }

    /// The validated values, and one entry per user (`counts[r]` copies of `values[r]`).
    fn users(values: &[f64], counts: &[u64]) -> (Vec<UnitValue>, Vec<f64>) {
        let vals = values.iter().map(|&x| UnitValue::new(x).unwrap()).collect();
        let data = values
            .iter()
            .zip(counts)
            .flat_map(|(&x, &c)| std::iter::repeat_n(x, c as usize))
            .collect();
        (vals, data)
    }

    /// Sums of `draws` batched states (the given sampler) for `counts[r]` users on `values[r]`.
    fn batched_sums(
        p: &ScalarSum,
        work: &RoundingBlocks<'_>,
        counts: &[u64],
        draws: u64,
    ) -> Vec<u64> {
        let max = counts.iter().sum::<u64>() * u64::from(p.k().get());
        let mut hist = vec![0u64; max as usize + 1];
        for r in 0..draws {
            let s: IntegerSum =
                run_grouped(counts, 29, r as u32, false, work, || p.aggregator()).unwrap();
            assert_eq!(s.reports(), counts.iter().sum::<u64>());
            hist[s.sum() as usize] += 1;
        }
        hist
    }

    #[test]
    fn batched_simulation_has_the_per_client_law() {
        // Issue 15: the batched path and n per-client calls give the same law of the state
        // (its sum; the count is n on both). Small instances, the law enumerated exactly:
        // chi-square of each path against it and a two-sample chi-square between the paths,
        // 30000 states per path, fixed seeds, significance about 1e-6 each. The groups are
        // small (per-user rounding) in the first two instances and large enough for the
        // bit-sliced rounding coins in the third (20 users on one value, gamma small).
        for (k, gamma, values, counts) in [
            (3u64, 0.3, vec![0.3, 0.55, 1.0, 0.0], vec![2u64, 1, 1, 1]),
            (2, 0.7, vec![0.5 + 1.0 / 1024.0, 0.9], vec![3, 1]),
            (1, 0.05, vec![0.3, 0.8], vec![20, 2]),
        ] {
            let p = ScalarSum::new(Precision::new(k).unwrap(), Gamma::new(gamma).unwrap());
            let (vals, data) = users(&values, &counts);
            let pmf = exact_sum_pmf(&p, &data);
            let draws = 30_000u64;
            let work = RoundingBlocks {
                values: &vals,
                k: p.k(),
                blanket: p.randomizer().blanket_coin(),
                levels: p.k().levels().get(),
            };
            let batched = batched_sums(&p, &work, &counts, draws);
            // The public entry point runs the same sampler.
            assert_eq!(
                p.simulate_batched(&vals, &counts, 29, 5, false).unwrap(),
                run_grouped(&counts, 29, 5, false, &work, || p.aggregator()).unwrap()
            );
            let mut client = vec![0u64; pmf.len()];
            let mut rng = simulation_rng(k);
            for _ in 0..draws {
                let mut s = p.aggregator();
                for &x in &data {
                    s.absorb(p.randomize_value_simulated(UnitValue::new(x).unwrap(), &mut rng))
                        .unwrap();
                }
                client[s.sum() as usize] += 1;
            }
            for (what, obs) in [("batched", &batched), ("per-client", &client)] {
                let (stat, crit) = against(obs, &pmf, draws);
                assert!(stat < crit, "k = {k}, {what}: {stat} >= {crit}");
            }
            let (stat, crit) = two_sample(&batched, &client);
            assert!(stat < crit, "k = {k}: two-sample {stat} >= {crit}");
        }
    }

    #[test]
    fn a_broken_batch_fails_the_test() {
        // The test above has the power to see a wrong batch: blanket levels drawn from {0..k-1}
        // instead of {0..k} (the top level missing) fail both chi-squares by a wide margin on
        // its first instance.
        let p = ScalarSum::new(Precision::new(3).unwrap(), Gamma::new(0.3).unwrap());
        let values = [0.3, 0.55, 1.0, 0.0];
        let counts = [2u64, 1, 1, 1];
        let (vals, data) = users(&values, &counts);
        let pmf = exact_sum_pmf(&p, &data);
        let draws = 30_000u64;
        let broken = RoundingBlocks {
            values: &vals,
            k: p.k(),
            blanket: p.randomizer().blanket_coin(),
            levels: p.k().get(),
        };
        let good = RoundingBlocks {
            levels: p.k().levels().get(),
            ..broken
        };
        let bad = batched_sums(&p, &broken, &counts, draws);
        let (stat, crit) = against(&bad, &pmf, draws);
        assert!(
            stat > 10.0 * crit,
            "broken batch not rejected: {stat} vs {crit}"
        );
        let ok = batched_sums(&p, &good, &counts, draws);
        let (stat, crit) = two_sample(&bad, &ok);
        assert!(stat > 10.0 * crit, "two-sample: {stat} vs {crit}");
    }

    #[test]
    fn batched_simulation_is_reproducible_unbiased_and_shuffle_free() {
        // Same state with and without the ideal shuffler and on 1 thread, for n spanning
        // several blocks; the estimate within 5 predicted sd of the true sum at n = 3e5.
        let p = ScalarSum::new(Precision::new(6).unwrap(), Gamma::new(0.1).unwrap());
        let values: Vec<f64> = (0..1000)
            .map(|i| ((i * 37) % 1001) as f64 / 1000.0)
            .collect();
        let vals: Vec<UnitValue> = values.iter().map(|&x| UnitValue::new(x).unwrap()).collect();
        let counts: Vec<u64> = (0..1000u64).map(|i| 1 + (i * 7) % 599).collect();
        let n: u64 = counts.iter().sum();
        let a = p.simulate_batched(&vals, &counts, 3, 2, false).unwrap();
        assert_eq!(a.reports(), n);
        assert_eq!(p.simulate_batched(&vals, &counts, 3, 2, true).unwrap(), a);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert_eq!(
            one.install(|| p.simulate_batched(&vals, &counts, 3, 2, false))
                .unwrap(),
            a
        );
        assert_ne!(p.simulate_batched(&vals, &counts, 3, 3, false).unwrap(), a);
        let truth: f64 = values
            .iter()
            .zip(&counts)
            .map(|(&x, &c)| x * c as f64)
            .sum();
        let sd = p.exact_sum_mse_weighted(&values, &counts).sqrt();
        let est = p.estimate(&a).unwrap();
        assert!((est.sum - truth).abs() < 5.0 * sd, "{} vs {truth}", est.sum);
        // A count without a value is refused.
        assert!(p
            .simulate_batched(&vals[..2], &counts[..3], 3, 2, false)
            .is_err());
    }
}
