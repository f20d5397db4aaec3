//! The vector-sum analyzer (Algorithm 3) and its reproducible simulation.

use super::*;
use crate::analyzer::{AggregateError, CoordinateSums};
use crate::params::UnitValue;
use crate::simulate::SimulationError;

impl VectorSum {
    /// An empty analyzer state.
    pub fn aggregator(&self) -> CoordinateSums {
        CoordinateSums::new(self.d, self.k.get())
    }

    /// The debiased estimates (Algorithm 3): per coordinate j with n_j reports and
    /// z_j = (1/k) sum of their values, DeBias(z_j) = (z_j - gamma n_j / 2) / (1 - gamma).
    pub fn estimate(&self, state: &CoordinateSums) -> Result<VectorSumEstimate, AggregateError> {
        if state.max() != self.k.get() || state.dimension() != self.d {
            return Err(AggregateError::ShapeMismatch {
                left: u64::from(self.d) * (u64::from(self.k.get()) + 1),
                right: u64::from(state.dimension()) * (u64::from(state.max()) + 1),
            });
        }
        let g = self.grr.gamma().get();
        let kf = f64::from(self.k.get());
        let scale = f64::from(self.d) / f64::from(self.t);
        let mut est = VectorSumEstimate {
            mean: Vec::with_capacity(self.d as usize),
            sum: Vec::with_capacity(self.d as usize),
            reports: state.counts().to_vec(),
            unreported: Vec::new(),
        };
        for (j, (&c, &s)) in state.counts().iter().zip(state.sums()).enumerate() {
            let z = s as f64 / kf;
            let debiased = (z - g * c as f64 / 2.0) / (1.0 - g);
            est.sum.push(scale * debiased);
            if c == 0 {
                est.mean.push(0.5);
                est.unreported.push(j as u32);
            } else {
                est.mean.push(debiased / c as f64);
            }
        }
        Ok(est)
    }

    /// One simulated run on `data` (reproducible: users are cut into chunks of
    /// [`crate::simulate::CHUNK`], each with its own ChaCha12 stream derived from (seed,
    /// repetition, chunk), so the result does not depend on the number of threads). With
    /// `shuffle`, the messages are collected and permuted by the uniform shuffler first
    /// (the analyzer is order-free, so the estimate is the same either way).
    pub fn simulate(
        &self,
        data: &UnitVectors,
        seed: u64,
        repetition: u32,
        shuffle: bool,
    ) -> Result<CoordinateSums, SimulationError> {
        if data.dimension() != self.d {
            return Err(AggregateError::ShapeMismatch {
                left: u64::from(self.d),
                right: u64::from(data.dimension()),
            }
            .into());
        }
        self.simulate_rows(
            data.len() as u64,
            |i| data.row(i),
            seed,
            repetition,
            shuffle,
        )
    }

    /// [`VectorSum::simulate`] for `users` users where user i holds the validated row
    /// `row(i)` of length d (e.g. rows of a small data set resampled with
    /// [`crate::simulate::Resample`]), without materializing n vectors: without the shuffler
    /// memory is independent of n ([`crate::simulate::run`]).
    pub fn simulate_rows<'a, F>(
        &self,
        users: u64,
        row: F,
        seed: u64,
        repetition: u32,
        shuffle: bool,
    ) -> Result<CoordinateSums, SimulationError>
    where
        F: Fn(usize) -> &'a [UnitValue] + Sync,
    {
        crate::simulate::run(
            users,
            self.t,
            seed,
            repetition,
            shuffle,
            |i, rng, buf| self.randomize_row_into(row(i), rng, buf),
            || self.aggregator(),
        )
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::analyzer::Aggregator;

    /// Fixed data: n users, d coordinates, values from a deterministic pattern.
    fn pattern(n: usize, d: usize) -> UnitVectors {
        let rows: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..d)
                    .map(|j| ((i * 37 + j * 11) % 101) as f64 / 100.0 * (j + 1) as f64 / d as f64)
                    .collect()
            })
            .collect();
        UnitVectors::new(d as u64, rows).unwrap()
    }

    #[test]
    fn mean_unbiased_and_mse_matches_exact_prediction() {
        // 300 repetitions; per-coordinate bias of the sum within 4 standard errors; observed
        // mean-vector MSE within 15% of the exact prediction (300 reps of a sum of 8
        // roughly chi-square terms: relative sd about sqrt(2/(8*300)) = 3%, so 15% is ~5 sd
        // plus the E[1/n_j] approximation, ~d/(nt) = 0.2-0.4%).
        for t in [1u64, 3] {
            let data = pattern(4000, 8);
            let p = VectorSum::new(8, t, Precision::new(3).unwrap(), Gamma::new(0.25).unwrap())
                .unwrap();
            let truth_mean = data.mean();
            let truth_sum = data.sum();
            let pred = p.exact_mean_mse(&data);
            let reps = 300;
            let mut mse = 0.0;
            let mut bias = [0.0; 8];
            let mut sq = [0.0; 8];
            for r in 0..reps {
                let st = p.simulate(&data, 1000 + r as u64, 0, r % 2 == 0).unwrap();
                assert_eq!(st.reports(), 4000 * t);
                let e = p.estimate(&st).unwrap();
                mse += e
                    .mean
                    .iter()
                    .zip(&truth_mean)
                    .map(|(a, b)| (a - b).powi(2))
                    .sum::<f64>();
                for j in 0..8 {
                    bias[j] += e.sum[j] - truth_sum[j];
                    sq[j] += (e.sum[j] - truth_sum[j]).powi(2);
                }
            }
            mse /= reps as f64;
            assert!(
                (mse / pred - 1.0).abs() < 0.15,
                "t={t}: mse {mse} vs {pred}"
            );
            for j in 0..8 {
                let b = bias[j] / reps as f64;
                let se = (sq[j] / reps as f64 / reps as f64).sqrt();
                assert!(b.abs() < 4.0 * se, "t={t}, j={j}: bias {b}, se {se}");
            }
            assert!(p.worst_case_mean_mse(4000) >= pred);
        }
    }

    #[test]
    fn simulation_independent_of_threads_and_shuffling() {
        let data = pattern(150_000, 4);
        let p = VectorSum::new(4, 2, Precision::new(3).unwrap(), Gamma::new(0.1).unwrap()).unwrap();
        let a = p.simulate(&data, 3, 1, false).unwrap();
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = one.install(|| p.simulate(&data, 3, 1, false)).unwrap();
        assert_eq!(a, b);
        assert_eq!(p.simulate(&data, 3, 1, true).unwrap(), a);
    }

    #[test]
    fn unreported_coordinates_get_the_midpoint() {
        let p = VectorSum::new(3, 1, Precision::new(2).unwrap(), Gamma::new(0.5).unwrap()).unwrap();
        let mut st = p.aggregator();
        st.absorb((0, 2)).unwrap();
        st.absorb((2, 0)).unwrap();
        let e = p.estimate(&st).unwrap();
        assert_eq!(e.unreported, vec![1]);
        assert_eq!(e.mean[1], 0.5);
        assert_eq!(e.sum[1], 0.0);
        // Coordinate 0: z = 1, DeBias = (1 - 0.25) / 0.5 = 1.5; mean 1.5; sum 3 * 1.5.
        assert!((e.mean[0] - 1.5).abs() < 1e-15 && (e.sum[0] - 4.5).abs() < 1e-12);
        assert!(e.mean.iter().all(|m| m.is_finite()));
        assert!(p.estimate(&CoordinateSums::new(4, 2)).is_err());
    }
}
