//! Empirical privacy audit: a statistical *lower* bound on the eps of a mechanism, to check
//! that it never exceeds the certified (upper) bound.
//!
//! Sample a scalar statistic of the mechanism's output under two neighbouring datasets D0 and
//! D1, `trials` times each. For every threshold event S = {stat >= t} (and its complement),
//! Clopper-Pearson intervals at level 1 - alpha / (2 #events) (Bonferroni) give p0_lo <=
//! Pr[S | D0] and p1_hi >= Pr[S | D1]; (eps, delta)-DP implies p0 <= e^eps p1 + delta, so
//! eps >= ln((p0_lo - delta) / p1_hi) holds with confidence 1 - alpha for every event at once.
//! The audit reports the largest such lower bound. Generic over the mechanism (a closure).

use crate::accounting::binomial::ln_pmf;

/// Result of an audit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AuditResult {
    /// Lower bound on eps, valid with confidence 1 - alpha (0 if nothing was found).
    pub eps_lower: f64,
    /// The threshold of the best event.
    pub threshold: i64,
}

/// Pr[Bin(n, p) <= k].
fn binom_cdf(k: u64, n: u64, p: f64) -> f64 {
    (0..=k.min(n))
        .map(|x| ln_pmf(x, n, p, 1.0 - p).exp())
        .sum::<f64>()
        .min(1.0)
}

/// Clopper-Pearson interval for k successes in n trials at two-sided level `alpha`.
pub fn clopper_pearson(k: u64, n: u64, alpha: f64) -> (f64, f64) {
    let solve = |f: &dyn Fn(f64) -> bool| {
        // smallest p in [0, 1] with f(p) true (f monotone false -> true)
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if f(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        (lo, hi)
    };
    let lower = if k == 0 {
        0.0
    } else {
        // largest p with Pr[Bin(n,p) >= k] <= alpha/2  <=>  1 - cdf(k-1) <= alpha/2
        solve(&|p| 1.0 - binom_cdf(k - 1, n, p) > alpha / 2.0).0
    };
    let upper = if k == n {
        1.0
    } else {
        // smallest p with Pr[Bin(n,p) <= k] <= alpha/2
        solve(&|p| binom_cdf(k, n, p) <= alpha / 2.0).1
    };
    (lower, upper)
}

/// Audits a mechanism: `sample(neighbour)` draws the statistic under D0 (`false`) or D1
/// (`true`). Events are {stat >= t} for every observed t, and their complements.
pub fn audit(
    trials: u64,
    delta: f64,
    alpha: f64,
    mut sample: impl FnMut(bool) -> i64,
) -> AuditResult {
    let mut s0: Vec<i64> = (0..trials).map(|_| sample(false)).collect();
    let mut s1: Vec<i64> = (0..trials).map(|_| sample(true)).collect();
    s0.sort_unstable();
    s1.sort_unstable();
    let mut ts: Vec<i64> = s0.iter().chain(s1.iter()).copied().collect();
    ts.sort_unstable();
    ts.dedup();
    let level = alpha / (2.0 * ts.len().max(1) as f64);
    let count_ge = |s: &[i64], t: i64| (s.len() - s.partition_point(|&v| v < t)) as u64;
    let mut best = AuditResult {
        eps_lower: 0.0,
        threshold: 0,
    };
    for &t in &ts {
        let (a, b) = (count_ge(&s0, t), count_ge(&s1, t));
        for (k0, k1) in [
            (a, b),
            (trials - a, trials - b),
            (b, a),
            (trials - b, trials - a),
        ] {
            let (p0_lo, _) = clopper_pearson(k0, trials, level);
            let (_, p1_hi) = clopper_pearson(k1, trials, level);
            if p0_lo > delta && p1_hi > 0.0 {
                let e = ((p0_lo - delta) / p1_hi).ln();
                if e > best.eps_lower {
                    best = AuditResult {
                        eps_lower: e,
                        threshold: t,
                    };
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::{GrrExact, LocalRandomizer, ShuffleAccountant};
    use crate::params::{Delta, DomainSize, Gamma, NumUsers};
    use crate::randomizer::Grr;
    use crate::rng::simulation_rng;

    #[test]
    fn clopper_pearson_brackets() {
        let (lo, hi) = clopper_pearson(50, 100, 0.05);
        assert!(lo < 0.5 && hi > 0.5 && lo > 0.39 && hi < 0.61, "{lo} {hi}");
        assert_eq!(clopper_pearson(0, 10, 0.05).0, 0.0);
    }

    #[test]
    fn shuffled_grr_audit_stays_below_certified_eps() {
        // n = 8 users, GRR over m = 3 values, gamma = 0.5; others all hold value 2, the target
        // holds 0 (D0) or 1 (D1); statistic: count of 0s minus count of 1s in the histogram.
        let (n, m, gamma) = (8u64, 3u32, 0.5);
        let grr = Grr::new(DomainSize::new(3).unwrap(), Gamma::new(gamma).unwrap());
        let mut rng = simulation_rng(7);
        let r = audit(4_000, 1e-3, 0.05, |d1| {
            let mut c = [0i64; 3];
            c[grr.randomize_simulated(u32::from(d1), &mut rng).unwrap() as usize] += 1;
            for _ in 1..n {
                c[grr.randomize_simulated(2, &mut rng).unwrap() as usize] += 1;
            }
            c[0] - c[1]
        });
        let certified = GrrExact
            .epsilon(
                &LocalRandomizer::Grr { m, gamma },
                NumUsers::new(n).unwrap(),
                Delta::new(1e-3).unwrap(),
            )
            .unwrap();
        assert!(
            r.eps_lower > 0.2,
            "audit found too little: {r:?} (certified {certified})"
        );
        assert!(r.eps_lower <= certified, "{r:?} > certified {certified}");
    }
}
