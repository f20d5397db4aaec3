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
}
