//! Histograms (frequency estimation) over m categories with the privacy-blanket randomizer
//! (Balle, Bell, Gascon, Nissim, CRYPTO 2019, Section 3; spec 01).
//!
//! Each user sends R^PH_{gamma,m}(x). With c_y messages equal to y out of n, the count
//! estimate f_hat_y = (c_y - gamma n / m) / (1 - gamma) is unbiased.

use crate::accounting::{LocalRandomizer, ShuffleAccountant};
use crate::analyzer::{AggregateError, Aggregator, Counts};
use crate::calibrate::{
    calibrate, Calibratable, Calibration, CalibrationError, LocalPrivacy, Requirement, Target,
};
use crate::params::{DomainSize, Gamma, NumUsers, ParamError};
use crate::randomizer::grr::local_epsilon;
use crate::randomizer::{Grr, GrrError};
use crate::rng::{SecureRng, SimulationRng};
use crate::sample::{Bernoulli, BitPool, Coins};
use crate::simulate::batched::{run_grouped, BlockWork, Segments, Sink};
use crate::simulate::SimulationError;
use serde::Serialize;

/// The histogram protocol's shape for calibration: m categories.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistogramShape {
    /// Number of categories.
    pub m: DomainSize,
}

impl Calibratable for HistogramShape {
    type Choice = ();

    fn choices(&self, _target: &Target) -> Vec<()> {
        vec![()]
    }

    fn requirement(&self, _: (), t: &Target) -> Result<Requirement, ParamError> {
        Ok(Requirement {
            m: self.m,
            n: t.n,
            eps: t.eps,
            delta: t.delta,
        })
    }

    fn instance(&self, _: (), gamma: Gamma, t: &Target) -> (LocalRandomizer, NumUsers) {
        (
            LocalRandomizer::Grr {
                m: self.m.get(),
                gamma: gamma.get(),
            },
            t.n,
        )
    }

    fn predicted_mse(&self, _: (), gamma: Gamma, n: NumUsers) -> f64 {
        Histogram::new(self.m, gamma).mean_count_variance(n.get())
    }

    /// The estimated frequency of y is f_hat_y / n, so its MSE is the count's divided by n^2.
    fn normalized_mse(&self, predicted_mse: f64, n: NumUsers) -> f64 {
        predicted_mse / (n.get() as f64).powi(2)
    }

    /// One message of GRR over the m categories: eps0 = log(1 + m (1 - gamma) / gamma).
    fn local_privacy(&self, _: (), gamma: Gamma) -> LocalPrivacy {
        LocalPrivacy::of_messages(local_epsilon(self.m, gamma), 1)
    }
}

/// The histogram protocol with fixed parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    grr: Grr,
}

/// Estimated counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistogramEstimate {
    /// Unbiased estimate of the number of users holding each category.
    pub counts: Vec<f64>,
    /// Number of reports the analyzer received (n when nobody dropped out).
    pub reports: u64,
}

impl HistogramEstimate {
    /// Estimated frequencies (counts divided by the number of reports).
    pub fn frequencies(&self) -> Vec<f64> {
        let n = self.reports.max(1) as f64;
        self.counts.iter().map(|c| c / n).collect()
    }
}

impl Histogram {
    /// The protocol over m categories with blanket probability gamma.
    pub fn new(m: DomainSize, gamma: Gamma) -> Self {
        Self {
            grr: Grr::new(m, gamma),
        }
    }

    /// Calibrates gamma for the target with the given accountant.
    pub fn calibrate(
        m: DomainSize,
        target: &Target,
        accountant: &dyn ShuffleAccountant,
    ) -> Result<(Self, Calibration<()>), CalibrationError> {
        let cal = calibrate(&HistogramShape { m }, target, accountant)?;
        Ok((Self::new(m, cal.gamma), cal))
    }

    /// The randomizer.
    pub fn randomizer(&self) -> &Grr {
        &self.grr
    }

    /// Client side: randomizes one user's category with the OS-seeded generator.
    #[inline]
    pub fn randomize(&self, category: u32, rng: &mut SecureRng) -> Result<u32, GrrError> {
        self.grr.randomize_with(category, rng)
    }

    /// [`Histogram::randomize`] for simulations (a seeded generator).
    #[inline]
    pub fn randomize_simulated(
        &self,
        category: u32,
        rng: &mut SimulationRng,
    ) -> Result<u32, GrrError> {
        self.grr.randomize_with(category, rng)
    }

    /// An empty analyzer state.
    pub fn aggregator(&self) -> Counts {
        Counts::new(self.grr.m().get())
    }

    /// The unbiased count estimates from an analyzer state.
    pub fn estimate(&self, state: &Counts) -> Result<HistogramEstimate, AggregateError> {
        let m = self.grr.m().get();
        if state.counts().len() != m as usize {
            return Err(AggregateError::ShapeMismatch {
                left: u64::from(m),
                right: state.counts().len() as u64,
            });
        }
        let g = self.grr.gamma().get();
        let n = state.reports() as f64;
        let blanket = g * n / f64::from(m);
        let counts = state
            .counts()
            .iter()
            .map(|&c| (c as f64 - blanket) / (1.0 - g))
            .collect();
        Ok(HistogramEstimate {
            counts,
            reports: state.reports(),
        })
    }

    /// One simulated repetition, batched: `true_counts[y]` users hold category y (the
    /// categories' counts are all a histogram's analyzer depends on, users with the same
    /// category being exchangeable). For each category, the number of its users who send a
    /// blanket message is a Binomial(c_y, gamma) count of exact blanket coins (64 per
    /// generator word, [`crate::sample::Coins`]); they send uniform values of {0..m-1}, the
    /// others y. Per user that is the client's law, Pr[R(x) = y] = (1 - gamma) 1[y = x] +
    /// gamma / m, so the state has exactly the distribution of n per-client calls
    /// (`docs/performance.md`; tested by chi-square against the per-client path). With
    /// `shuffle` the messages are permuted by the ideal shuffler before they are absorbed
    /// (same state). Reproducible for (seed, repetition), independent of the thread count.
    pub fn simulate_batched(
        &self,
        true_counts: &[u64],
        seed: u64,
        repetition: u32,
        shuffle: bool,
    ) -> Result<Counts, SimulationError> {
        let m = self.grr.m().get();
        if true_counts.len() != m as usize {
            return Err(AggregateError::ShapeMismatch {
                left: u64::from(m),
                right: true_counts.len() as u64,
            }
            .into());
        }
        run_grouped(
            true_counts,
            seed,
            repetition,
            shuffle,
            &GrrBlocks {
                coin: self.grr.blanket_coin(),
                m,
            },
            || self.aggregator(),
        )
    }

    /// (a, b): probability that a user's message is y when it holds y, and when it does not.
    fn hit_probabilities(&self) -> (f64, f64) {
        let g = self.grr.gamma().get();
        let b = g / f64::from(self.grr.m().get());
        (1.0 - g + b, b)
    }

    /// Exact variance of f_hat_y when `f` of the `n` users hold y (spec 01, derived):
    /// (f a (1 - a) + (n - f) b (1 - b)) / (1 - gamma)^2.
    pub fn count_variance(&self, f: u64, n: u64) -> f64 {
        let (a, b) = self.hit_probabilities();
        let g = self.grr.gamma().get();
        (f as f64 * a * (1.0 - a) + (n - f.min(n)) as f64 * b * (1.0 - b)) / (1.0 - g).powi(2)
    }

    /// Exact mean over the m categories of Var[f_hat_y], for *any* data of n users (the
    /// true counts sum to n): n (a (1 - a) + (m - 1) b (1 - b)) / (m (1 - gamma)^2).
    pub fn mean_count_variance(&self, n: u64) -> f64 {
        let (a, b) = self.hit_probabilities();
        let g = self.grr.gamma().get();
        let m = f64::from(self.grr.m().get());
        n as f64 * (a * (1.0 - a) + (m - 1.0) * b * (1.0 - b)) / (m * (1.0 - g).powi(2))
    }

    /// Largest Var[f_hat_y] over all datasets of n users: n max(a(1-a), b(1-b)) / (1-gamma)^2.
    pub fn worst_count_variance(&self, n: u64) -> f64 {
        let (a, b) = self.hit_probabilities();
        let g = self.grr.gamma().get();
        n as f64 * (a * (1.0 - a)).max(b * (1.0 - b)) / (1.0 - g).powi(2)
    }

    /// Exact expected mean squared error over categories for the given true counts.
    pub fn predicted_mse(&self, true_counts: &[u64]) -> f64 {
        let n: u64 = true_counts.iter().sum();
        true_counts
            .iter()
            .map(|&f| self.count_variance(f, n))
            .sum::<f64>()
            / true_counts.len().max(1) as f64
    }
}

/// The histogram's batch sampler: per segment of c users holding y, a Binomial(c, gamma)
/// count k of blanket coins, c - k messages y and k uniform values.
struct GrrBlocks {
    coin: Bernoulli,
    m: u32,
}

impl BlockWork for GrrBlocks {
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
        let mut coins = Coins::new(self.coin);
        for (y, c) in segments {
            let blanket = coins.count(c, pool);
            sink.push_many(y as u32, c - blanket)?;
            for _ in 0..blanket {
                sink.push(pool.uniform(self.m))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::BlanketTheorem31;
    use crate::params::{Delta, Epsilon};
    use crate::rng::simulation_rng;

    fn run(h: &Histogram, data: &[u32], seed: u64) -> HistogramEstimate {
        let mut rng = simulation_rng(seed);
        let mut agg = h.aggregator();
        for &x in data {
            agg.absorb(h.randomize_simulated(x, &mut rng).unwrap())
                .unwrap();
        }
        h.estimate(&agg).unwrap()
    }

    #[test]
    fn unbiased_and_variance_matches_exact_prediction() {
        // 400 repetitions of n = 2000 users over m = 5 categories, gamma = 0.3.
        // Tolerances: mean error within 4 standard errors; the empirical variance of each
        // count within 25% of the exact one (chi-square with 399 df: 4 sigma is about +-28%,
        // so the pooled check over 5 categories at 15% is well inside).
        let m = DomainSize::new(5).unwrap();
        let h = Histogram::new(m, Gamma::new(0.3).unwrap());
        let true_counts = [1000u64, 500, 300, 200, 0];
        let data: Vec<u32> = true_counts
            .iter()
            .enumerate()
            .flat_map(|(y, &c)| std::iter::repeat_n(y as u32, c as usize))
            .collect();
        let reps = 400;
        let mut sum = [0.0f64; 5];
        let mut sq = [0.0f64; 5];
        for r in 0..reps {
            let est = run(&h, &data, 1000 + r);
            for y in 0..5 {
                let e = est.counts[y] - true_counts[y] as f64;
                sum[y] += e;
                sq[y] += e * e;
            }
        }
        let mut pooled_obs = 0.0;
        let mut pooled_pred = 0.0;
        for y in 0..5 {
            let var = h.count_variance(true_counts[y], 2000);
            let bias = sum[y] / reps as f64;
            assert!(
                bias.abs() < 4.0 * (var / reps as f64).sqrt(),
                "bias y={y}: {bias}"
            );
            let mse = sq[y] / reps as f64;
            assert!((mse / var - 1.0).abs() < 0.3, "y={y}: mse {mse} vs {var}");
            pooled_obs += mse;
            pooled_pred += var;
        }
        assert!((pooled_obs / pooled_pred - 1.0).abs() < 0.15);
        assert!((h.predicted_mse(&true_counts) - pooled_pred / 5.0).abs() < 1e-9);
        // The data-free mean variance equals the data-dependent one.
        assert!((h.mean_count_variance(2000) - pooled_pred / 5.0).abs() < 1e-9);
        assert!(h.worst_count_variance(2000) >= h.count_variance(2000, 2000));
    }

    #[test]
    fn calibrated_protocol_is_certified() {
        let target = Target {
            eps: Epsilon::new(0.5).unwrap(),
            delta: Delta::new(1e-6).unwrap(),
            n: NumUsers::new(1_000_001).unwrap(),
        };
        let (h, cal) =
            Histogram::calibrate(DomainSize::new(10).unwrap(), &target, &BlanketTheorem31).unwrap();
        assert!(cal.guarantee.epsilon <= 0.5);
        assert_eq!(cal.certified, Some(cal.guarantee));
        assert_eq!(h.randomizer().gamma(), cal.gamma);
        let eps0 = (1.0 + 10.0 * (1.0 - cal.gamma.get()) / cal.gamma.get()).ln();
        assert!((cal.eps0 - eps0).abs() < 1e-12);
    }

    #[test]
    fn too_few_users_names_the_smallest_n() {
        let target = Target {
            eps: Epsilon::new(0.5).unwrap(),
            delta: Delta::new(1e-6).unwrap(),
            n: NumUsers::new(1000).unwrap(),
        };
        let err = Histogram::calibrate(DomainSize::new(10).unwrap(), &target, &BlanketTheorem31)
            .unwrap_err();
        // gamma < 1 needs n - 1 > 14 * 10 * ln(2e6) / 0.25 = 8124.85: n = 8126.
        match &err {
            CalibrationError::Infeasible { min_n, .. } => assert_eq!(*min_n, Some(8126)),
            other => panic!("{other}"),
        }
        assert!(err
            .to_string()
            .contains("smallest n that works at this eps and delta is 8126"));
    }

    #[test]
    fn bad_category_and_message_are_errors() {
        let h = Histogram::new(DomainSize::new(4).unwrap(), Gamma::new(0.2).unwrap());
        let mut rng = simulation_rng(0);
        assert!(h.randomize_simulated(4, &mut rng).is_err());
        let mut agg = h.aggregator();
        assert!(agg.absorb(7).is_err());
        assert!(h.estimate(&Counts::new(3)).is_err());
    }
    /// Exact law of the counts of n per-client calls on `data` (enumerates m^n outcomes).
    fn exact_counts_pmf(h: &Histogram, data: &[u32]) -> std::collections::BTreeMap<Vec<u64>, f64> {
        let m = h.randomizer().m().get();
        let mut pmf = std::collections::BTreeMap::new();
        let total = (m as usize).pow(data.len() as u32);
        for code in 0..total {
            let (mut c, mut p, mut rest) = (vec![0u64; m as usize], 1.0, code);
            for &x in data {
                let y = (rest % m as usize) as u32;
                rest /= m as usize;
                c[y as usize] += 1;
                p *= h.randomizer().probability(x, y);
            }
            *pmf.entry(c).or_insert(0.0) += p;
        }
        pmf
    }

    /// Chi-square of observed outcome counts against a pmf, cells with expected count below
    /// 5 pooled into one.
    fn chi_square_against(
        observed: &std::collections::BTreeMap<Vec<u64>, u64>,
        pmf: &std::collections::BTreeMap<Vec<u64>, f64>,
        draws: u64,
    ) -> (f64, f64) {
        use crate::sample::stats::{chi_square, chi_square_critical};
        assert!(
            observed.keys().all(|k| pmf.contains_key(k)),
            "impossible outcome"
        );
        let (mut obs, mut exp) = (Vec::new(), Vec::new());
        let (mut pooled_o, mut pooled_e) = (0u64, 0.0);
        for (k, &p) in pmf {
            let o = observed.get(k).copied().unwrap_or(0);
            if p * draws as f64 >= 5.0 {
                obs.push(o);
                exp.push(p * draws as f64);
            } else {
                pooled_o += o;
                pooled_e += p * draws as f64;
            }
        }
        if pooled_e > 0.0 {
            obs.push(pooled_o);
            exp.push(pooled_e);
        }
        (chi_square(&obs, &exp), chi_square_critical(obs.len() - 1))
    }

    #[test]
    fn batched_simulation_has_the_per_client_law() {
        // Issue 15: the batched path (Binomial counts of bit-sliced blanket coins per
        // category) and n per-client calls give the same law of the analyzer state. Small
        // instances, every outcome enumerated: chi-square of each path against the exact
        // law of the counts and a two-sample chi-square between the paths, fixed seeds,
        // significance about 1e-6 each.
        use crate::sample::stats::chi_square_critical;
        use std::collections::BTreeMap;
        for (m, gamma, data) in [
            (3u32, 0.3, vec![0u32, 0, 1, 2]),
            (2, 0.05, vec![1, 1, 1, 0, 0]),
            (4, 0.7, vec![3, 3, 3]),
        ] {
            let h = Histogram::new(
                DomainSize::new(u64::from(m)).unwrap(),
                Gamma::new(gamma).unwrap(),
            );
            let mut truth = vec![0u64; m as usize];
            data.iter().for_each(|&x| truth[x as usize] += 1);
            let pmf = exact_counts_pmf(&h, &data);
            let draws = 30_000u64;
            let (mut batched, mut client) = (BTreeMap::new(), BTreeMap::new());
            let mut rng = simulation_rng(u64::from(m));
            for r in 0..draws {
                let b = h.simulate_batched(&truth, 17, r as u32, false).unwrap();
                assert_eq!(b.reports(), data.len() as u64);
                *batched.entry(b.counts().to_vec()).or_insert(0u64) += 1;
                let mut c = h.aggregator();
                for &x in &data {
                    c.absorb(h.randomize_simulated(x, &mut rng).unwrap())
                        .unwrap();
                }
                *client.entry(c.counts().to_vec()).or_insert(0u64) += 1;
            }
            for (what, obs) in [("batched", &batched), ("per-client", &client)] {
                let (stat, crit) = chi_square_against(obs, &pmf, draws);
                assert!(stat < crit, "m = {m}, {what}: {stat} >= {crit}");
            }
            // Two-sample (equal sizes): sum (a - b)^2 / (a + b) over cells with a + b >= 10.
            let (mut stat, mut cells, mut rest) = (0.0, 0usize, (0u64, 0u64));
            for k in pmf.keys() {
                let a = batched.get(k).copied().unwrap_or(0);
                let b = client.get(k).copied().unwrap_or(0);
                if a + b >= 10 {
                    stat += (a as f64 - b as f64).powi(2) / (a + b) as f64;
                    cells += 1;
                } else {
                    rest = (rest.0 + a, rest.1 + b);
                }
            }
            if rest.0 + rest.1 > 0 {
                stat += (rest.0 as f64 - rest.1 as f64).powi(2) / (rest.0 + rest.1) as f64;
                cells += 1;
            }
            assert!(
                stat < chi_square_critical(cells - 1),
                "m = {m}: two-sample {stat}"
            );
        }
    }

    #[test]
    fn batched_simulation_is_reproducible_and_shuffle_free() {
        // Same state with and without the ideal shuffler, on 1 or all threads, for n spanning
        // several blocks; unbiased counts at n = 3e5 within 5 predicted sd.
        let h = Histogram::new(DomainSize::new(16).unwrap(), Gamma::new(0.2).unwrap());
        let truth: Vec<u64> = (0..16u64).map(|y| 1000 * (y + 1) * (y + 1) / 4).collect();
        let n: u64 = truth.iter().sum();
        let a = h.simulate_batched(&truth, 3, 2, false).unwrap();
        assert_eq!(a.reports(), n);
        assert_eq!(h.simulate_batched(&truth, 3, 2, true).unwrap(), a);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert_eq!(
            one.install(|| h.simulate_batched(&truth, 3, 2, false))
                .unwrap(),
            a
        );
        assert_ne!(h.simulate_batched(&truth, 3, 3, false).unwrap(), a);
        let est = h.estimate(&a).unwrap();
        for (y, (&e, &t)) in est.counts.iter().zip(&truth).enumerate() {
            let sd = h.count_variance(t, n).sqrt();
            assert!((e - t as f64).abs() < 5.0 * sd, "category {y}: {e} vs {t}");
        }
        assert!(h.simulate_batched(&truth[..15], 3, 2, false).is_err());
    }
}
