//! Summation of reals in [0, 1] (Balle, Bell, Gascon, Nissim, CRYPTO 2019, Section 4;
//! spec 01): randomized rounding to {0, ..., k}, the privacy-blanket randomizer over the k + 1
//! levels, and debiasing: sum_hat = ((1/k) sum_i y_i - gamma n / 2) / (1 - gamma).

mod batched;

use super::DomainConvention;
use crate::accounting::{LocalRandomizer, ShuffleAccountant};
use crate::analyzer::{AggregateError, Aggregator, IntegerSum};
use crate::calibrate::{
    calibrate, Calibratable, Calibration, CalibrationError, LocalPrivacy, Requirement, Target,
};
use crate::encode::randomized_round_pool;
use crate::params::{DomainSize, Gamma, NumUsers, ParamError, Precision, UnitValue};
use crate::randomizer::grr::local_epsilon;
use crate::randomizer::Grr;
use crate::rng::{SecureRng, SimulationRng};
use crate::sample::BitSource;
use serde::Serialize;

/// The scalar-sum protocol's shape for calibration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalarSumShape {
    /// A fixed precision k, or `None` to choose k minimizing the worst-case MSE.
    pub k: Option<Precision>,
    /// Which domain size the accountant is told.
    pub convention: DomainConvention,
}

impl ScalarSumShape {
    /// The domain size the accountant is told for precision k.
    fn accounted_domain(&self, k: Precision) -> Result<DomainSize, ParamError> {
        match self.convention {
            DomainConvention::TrueDomain => Ok(k.levels()),
            DomainConvention::Paper => {
                DomainSize::new(u64::from(k.get())).map_err(|_| ParamError::OutOfRange {
                    field: "k",
                    allowed: "at least 2 with the paper's m = k convention (m = 1 is no domain)",
                    value: k.get().to_string(),
                })
            }
        }
    }
}

impl Calibratable for ScalarSumShape {
    type Choice = Precision;

    fn choices(&self, t: &Target) -> Vec<Precision> {
        if let Some(k) = self.k {
            return vec![k];
        }
        // The MSE is unimodal in k (a rounding term falling as 1/k^2 against a blanket term
        // growing with k); scan from the smallest k up to well past the asymptotic optimum
        // k* = (n eps^2 / (14 log(2/delta)))^(1/3) (spec 01); the calibrator stops early.
        let e = t.eps.get().min(1.0);
        let k_star = (t.n.get() as f64 * e * e / (14.0 * (2.0 / t.delta.get()).ln())).cbrt();
        let k_max = (4.0 * k_star + 64.0).min(f64::from(DomainSize::MAX - 2)) as u64;
        let first = match self.convention {
            DomainConvention::TrueDomain => 1,
            DomainConvention::Paper => 2,
        };
        (first..=k_max)
            .filter_map(|k| Precision::new(k).ok())
            .collect()
    }

    fn requirement(&self, k: Precision, t: &Target) -> Result<Requirement, ParamError> {
        Ok(Requirement {
            m: self.accounted_domain(k)?,
            n: t.n,
            eps: t.eps,
            delta: t.delta,
        })
    }

    fn instance(&self, k: Precision, gamma: Gamma, t: &Target) -> (LocalRandomizer, NumUsers) {
        (
            LocalRandomizer::Grr {
                m: k.levels().get(),
                gamma: gamma.get(),
            },
            t.n,
        )
    }

    fn predicted_mse(&self, k: Precision, gamma: Gamma, n: NumUsers) -> f64 {
        ScalarSum::new(k, gamma).worst_case_sum_mse(n.get())
    }

    /// The estimated mean is the sum estimate divided by n, so its MSE is the sum's over n^2.
    fn normalized_mse(&self, predicted_mse: f64, n: NumUsers) -> f64 {
        predicted_mse / (n.get() as f64).powi(2)
    }

    /// One message of GRR over the k + 1 levels (whatever domain the accountant was told):
    /// eps0 = log(1 + (k + 1) (1 - gamma) / gamma).
    fn local_privacy(&self, k: Precision, gamma: Gamma) -> LocalPrivacy {
        LocalPrivacy::of_messages(local_epsilon(k.levels(), gamma), 1)
    }
}

/// The scalar-sum protocol with fixed parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarSum {
    k: Precision,
    grr: Grr,
}

/// The analyzer's estimates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScalarSumEstimate {
    /// Unbiased estimate of the sum of the users' values.
    pub sum: f64,
    /// The sum estimate divided by the number of reports.
    pub mean: f64,
    /// Number of reports received.
    pub reports: u64,
}

/// A user's value rejected by the client.
pub type ScalarSumError = ParamError;

impl ScalarSum {
    /// The protocol at precision k and blanket probability gamma (GRR over k + 1 levels).
    pub fn new(k: Precision, gamma: Gamma) -> Self {
        Self {
            k,
            grr: Grr::new(k.levels(), gamma),
        }
    }

    /// Calibrates k (unless fixed in `shape`) and gamma for the target.
    pub fn calibrate(
        shape: ScalarSumShape,
        target: &Target,
        accountant: &dyn ShuffleAccountant,
    ) -> Result<(Self, Calibration<Precision>), CalibrationError> {
        let cal = calibrate(&shape, target, accountant)?;
        Ok((Self::new(cal.choice, cal.gamma), cal))
    }

    /// Precision k.
    pub fn k(&self) -> Precision {
        self.k
    }

    /// The randomizer (GRR over the k + 1 levels).
    pub fn randomizer(&self) -> &Grr {
        &self.grr
    }

    /// Client side: encodes x in [0, 1] and randomizes it with the OS-seeded generator. NaN or
    /// x outside [0, 1] is an error.
    #[inline]
    pub fn randomize(&self, x: f64, rng: &mut SecureRng) -> Result<u32, ScalarSumError> {
        let x = UnitValue::new(x)?;
        Ok(self.randomize_with(x, rng))
    }

    /// Client side for an already validated value.
    #[inline]
    pub fn randomize_value(&self, x: UnitValue, rng: &mut SecureRng) -> u32 {
        self.randomize_with(x, rng)
    }

    /// [`ScalarSum::randomize_value`] for simulations (a seeded generator).
    #[inline]
    pub fn randomize_value_simulated(&self, x: UnitValue, rng: &mut SimulationRng) -> u32 {
        self.randomize_with(x, rng)
    }

    /// Rounding coin and blanket coin each from 8 fresh bits of the generator, more only on
    /// a tie (exact: [`crate::sample::Bernoulli::sample_pool`]).
    #[inline]
    fn randomize_with<R: BitSource + ?Sized>(&self, x: UnitValue, rng: &mut R) -> u32 {
        let level = randomized_round_pool(x.get(), self.k, rng);
        self.grr.randomize_in_domain(level, rng)
    }

    /// An empty analyzer state.
    pub fn aggregator(&self) -> IntegerSum {
        IntegerSum::new(self.k.get())
    }

    /// The debiased estimates from an analyzer state.
    pub fn estimate(&self, state: &IntegerSum) -> Result<ScalarSumEstimate, AggregateError> {
        if state.max() != self.k.get() {
            return Err(AggregateError::ShapeMismatch {
                left: u64::from(self.k.get()) + 1,
                right: u64::from(state.max()) + 1,
            });
        }
        let g = self.grr.gamma().get();
        let n = state.reports() as f64;
        let z = state.sum() as f64 / f64::from(self.k.get());
        let sum = (z - g * n / 2.0) / (1.0 - g);
        Ok(ScalarSumEstimate {
            sum,
            mean: if n > 0.0 { sum / n } else { 0.5 },
            reports: state.reports(),
        })
    }

    /// Exact variance of one user's y / k for value x (spec 01, derived): with f = frac(k x),
    /// (1 - gamma) f (1 - f) / k^2 + gamma (k + 2) / (12 k) + gamma (1 - gamma) (x - 1/2)^2.
    pub fn message_variance(&self, x: f64) -> f64 {
        let k = f64::from(self.k.get());
        let g = self.grr.gamma().get();
        let xk = x * k;
        let f = xk - xk.floor();
        (1.0 - g) * f * (1.0 - f) / (k * k)
            + g * (k + 2.0) / (12.0 * k)
            + g * (1.0 - g) * (x - 0.5).powi(2)
    }

    /// Exact MSE of the sum estimate for this data: sum_i Var(y_i / k) / (1 - gamma)^2.
    pub fn exact_sum_mse(&self, data: &[f64]) -> f64 {
        let g = self.grr.gamma().get();
        data.iter().map(|&x| self.message_variance(x)).sum::<f64>() / (1.0 - g).powi(2)
    }

    /// [`ScalarSum::exact_sum_mse`] for users given as distinct `rows` and how many users hold
    /// each (`counts[r]` users hold row r; rows beyond `counts` have weight 0).
    pub fn exact_sum_mse_weighted(&self, rows: &[f64], counts: &[u64]) -> f64 {
        let g = self.grr.gamma().get();
        rows.iter()
            .zip(counts)
            .map(|(&x, &c)| c as f64 * self.message_variance(x))
            .sum::<f64>()
            / (1.0 - g).powi(2)
    }

    /// Largest per-user variance of y / k over x in [0, 1], exactly: on each rounding cell
    /// x = (j + f) / k the variance is a concave quadratic in f,
    /// (1 - gamma)/k^2 ((1 + 2 gamma c k) f - (1 - gamma) f^2) + gamma (1 - gamma) c^2 + const
    /// with c = j / k - 1/2, maximized at f* = (1 + 2 gamma c k) / (2 (1 - gamma)) clipped.
    pub fn worst_message_variance(&self) -> f64 {
        let kf = f64::from(self.k.get());
        (0..self.k.get())
            .map(|j| {
                let g = self.grr.gamma().get();
                let c = f64::from(j) / kf - 0.5;
                let f = ((1.0 + 2.0 * g * c * kf) / (2.0 * (1.0 - g))).clamp(0.0, 1.0);
                self.message_variance((f64::from(j) + f) / kf)
            })
            .fold(0.0, f64::max)
    }

    /// Worst-case (over datasets of n users) MSE of the sum estimate, exact:
    /// n max_x Var(y / k) / (1 - gamma)^2.
    pub fn worst_case_sum_mse(&self, n: u64) -> f64 {
        let g = self.grr.gamma().get();
        n as f64 * self.worst_message_variance() / (1.0 - g).powi(2)
    }

    /// The paper's worst-case bound with Theorem 3.1's gamma (spec 01, derived from Balle et
    /// al. 2019 Section 4): (1 - gamma)^-2 (n / (4 k^2) + 7 k log(2/delta) / eps^2).
    pub fn paper_sum_mse_bound(&self, n: u64, eps: f64, delta: f64) -> f64 {
        let k = f64::from(self.k.get());
        let g = self.grr.gamma().get();
        let e = eps.min(1.0);
        (n as f64 / (4.0 * k * k) + 7.0 * k * (2.0 / delta).ln() / (e * e)) / (1.0 - g).powi(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::BlanketTheorem31;
    use crate::params::{Delta, Epsilon};
    use crate::rng::simulation_rng;

    #[test]
    fn message_variance_matches_monte_carlo() {
        let mut rng = simulation_rng(77);
        let p = ScalarSum::new(Precision::new(4).unwrap(), Gamma::new(0.25).unwrap());
        for x in [0.0, 0.13, 0.5, 0.9, 1.0] {
            let draws = 400_000;
            let (mut s, mut s2) = (0.0, 0.0);
            for _ in 0..draws {
                let y =
                    f64::from(p.randomize_value_simulated(UnitValue::new(x).unwrap(), &mut rng))
                        / 4.0;
                s += y;
                s2 += y * y;
            }
            let mean = s / draws as f64;
            let var = s2 / draws as f64 - mean * mean;
            let expected_mean = 0.75 * x + 0.125;
            let v = p.message_variance(x);
            assert!(
                (mean - expected_mean).abs() < 5.0 * (v / draws as f64).sqrt(),
                "x={x}: {mean}"
            );
            // Relative sd of a sample variance ~ sqrt(2/N) * kurtosis factor: 2% is ~6 sigma.
            assert!((var / v - 1.0).abs() < 0.02, "x={x}: var {var} vs {v}");
        }
    }

    #[test]
    fn sum_unbiased_and_mse_matches_prediction() {
        // 300 repetitions, n = 3000 values from a fixed pattern; bias within 4 standard
        // errors, observed MSE within 20% of the exact prediction (chi-square, 299 df: 4 sigma
        // is about 33%, pooled over repetitions of one statistic).
        let p = ScalarSum::new(Precision::new(5).unwrap(), Gamma::new(0.2).unwrap());
        let data: Vec<f64> = (0..3000).map(|i| ((i * 37) % 101) as f64 / 100.0).collect();
        let truth: f64 = data.iter().sum();
        let pred = p.exact_sum_mse(&data);
        let reps = 300;
        let (mut bias, mut mse) = (0.0, 0.0);
        for r in 0..reps {
            let mut rng = simulation_rng(500 + r);
            let mut agg = p.aggregator();
            for &x in &data {
                agg.absorb(p.randomize_value_simulated(UnitValue::new(x).unwrap(), &mut rng))
                    .unwrap();
            }
            let est = p.estimate(&agg).unwrap();
            bias += est.sum - truth;
            mse += (est.sum - truth).powi(2);
        }
        bias /= reps as f64;
        mse /= reps as f64;
        assert!(
            bias.abs() < 4.0 * (pred / reps as f64).sqrt(),
            "bias {bias}"
        );
        assert!((mse / pred - 1.0).abs() < 0.2, "mse {mse} vs {pred}");
        assert!(p.worst_case_sum_mse(3000) >= pred);
    }

    #[test]
    fn worst_case_variance_dominates_a_fine_grid() {
        for (k, g) in [(1u64, 0.1), (3, 0.5), (7, 0.02), (20, 0.9)] {
            let p = ScalarSum::new(Precision::new(k).unwrap(), Gamma::new(g).unwrap());
            let w = p.worst_message_variance();
            let grid = (0..=100_000)
                .map(|i| p.message_variance(i as f64 / 100_000.0))
                .fold(0.0, f64::max);
            assert!(w >= grid - 1e-15 && w - grid < 1e-9, "k={k}: {w} vs {grid}");
        }
    }

    #[test]
    fn calibration_picks_k_minimizing_worst_case_mse() {
        let target = Target {
            eps: Epsilon::new(1.0).unwrap(),
            delta: Delta::new(1e-6).unwrap(),
            n: NumUsers::new(1_000_000).unwrap(),
        };
        let shape = ScalarSumShape {
            k: None,
            convention: DomainConvention::TrueDomain,
        };
        let (p, cal) = ScalarSum::calibrate(shape, &target, &BlanketTheorem31).unwrap();
        let best = cal.predicted_mse;
        // Brute force over k = 1..200 with the same accountant.
        for k in 1..200u64 {
            let m = DomainSize::new(k + 1).unwrap();
            if let Ok(g) = BlanketTheorem31.min_gamma(m, target.n, target.eps, target.delta) {
                let q = ScalarSum::new(Precision::new(k).unwrap(), Gamma::new(g).unwrap());
                assert!(
                    q.worst_case_sum_mse(1_000_000) >= best * (1.0 - 1e-12),
                    "k={k}"
                );
            }
        }
        assert_eq!(p.k(), cal.choice);
        assert!(cal.guarantee.epsilon <= 1.0);
    }

    #[test]
    fn paper_domain_is_visible() {
        let target = Target {
            eps: Epsilon::new(0.95).unwrap(),
            delta: Delta::new(0.5).unwrap(),
            n: NumUsers::new(50_000).unwrap(),
        };
        let k3 = Some(Precision::new(3).unwrap());
        let safe = ScalarSumShape {
            k: k3,
            convention: DomainConvention::TrueDomain,
        };
        let paper = ScalarSumShape {
            k: k3,
            convention: DomainConvention::Paper,
        };
        let (_, s) = ScalarSum::calibrate(safe, &target, &BlanketTheorem31).unwrap();
        let (_, p) = ScalarSum::calibrate(paper, &target, &BlanketTheorem31).unwrap();
        // gamma scales with m: 4/3 between the conventions.
        assert!((s.gamma.get() / p.gamma.get() - 4.0 / 3.0).abs() < 1e-12);
        // The paper's gamma is not enough for the real 4 message values.
        let real = p.certified.map(|g| g.epsilon);
        assert!(real.is_none_or(|e| e > 0.95), "{real:?}");
        assert_eq!(s.certified, Some(s.guarantee));
    }

    #[test]
    fn bad_values_are_errors() {
        let p = ScalarSum::new(Precision::new(3).unwrap(), Gamma::new(0.2).unwrap());
        let mut rng = crate::rng::SecureRng::from_os().unwrap();
        for bad in [f64::NAN, -0.1, 1.5, f64::INFINITY] {
            let e = p.randomize(bad, &mut rng).unwrap_err();
            assert!(e.to_string().contains("value must be a number in [0, 1]"));
        }
    }
}
