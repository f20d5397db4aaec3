//! Vector sums and histograms on top of the IKOS DP sum (spec `04-multi-message.md`,
//! "Vector and histogram sums"; issue 10 item 5): d independent coordinate instances of
//! [`IkosSum`], each with its own m shares per client (d m messages per client). No packing.
//!
//! **Inputs and neighbours** (one client's input replaced):
//! * [`VectorInput::Histogram`]: a bucket in 0..d, encoded one-hot with precision p = 1
//!   (exact, no rounding). A replacement changes two coordinates by 1 each: L1 sensitivity 2,
//!   so each coordinate gets discrete Laplace noise with alpha >= e^(-eps/2).
//! * [`VectorInput::UnitBox`]: a vector in [0, 1]^d, each coordinate randomized-rounded at
//!   p = ceil(sqrt(n)). A replacement changes each encoded coordinate by at most p: L1
//!   sensitivity d p, so each coordinate gets alpha >= e^(-eps/(d p)) (budget eps/d per
//!   coordinate). This is the L-infinity (box) bound; no L1/L2 structure is exploited.
//!
//! **Privacy** (derivation in `docs/multi-message.md`): the d noisy encoded sums
//! S_j = sum_i x_bar_ij + DLap_j are independent given the inputs, so the privacy loss of the
//! vector is the sum over coordinates of |Delta_j| ln(1/alpha_j) <= eps (pure eps-DP, basic
//! composition, exact for product mechanisms). Each IKOS instance runs with
//! sigma_c = sigma + ceil(log2 d), so the whole view is within d 2^-sigma_c <= 2^-sigma of a
//! simulation from the d sums (hybrid over the instances) and the protocol is
//! (eps, (1 + e^eps) 2^-sigma)-DP.
//!
//! **Over the alternating shuffler A^2_pi** ([`IkosVector::over_alternating`]): all d m
//! instances share one public placement pi, each draws its own secret row and column
//! permutations, and each coordinate's m gets m_required_alternating(n, q, sigma_c). The
//! A^2_pi bound holds for every fixed pi (`docs/multi-message.md`: the view under pi is the
//! pi-free view of relabelled inputs), and given pi and the noisy encoded values the d
//! coordinates' views are independent (fresh shares, independent secret permutations), so
//! the same hybrid over the d coordinates, conditionally on pi, gives d 2^-sigma_c again.
//!
//! **Overflow**: each coordinate's modulus is chosen by [`IkosSum`]: the smallest power of two
//! with q >= 2 n p, q >= 4 T and n p + T < 3q/4 (T: noise bound, Pr[|noise| > T] <= 2^-sigma_c),
//! so a coordinate decodes correctly unless its noise exceeds T.

use rand_core::CryptoRng;
use serde::Serialize;
use thiserror::Error;

use crate::analyzer::ModularSum;
use crate::encode::randomized_round;
use crate::params::{ParamError, Precision, UnitValue};
use crate::protocol::ikos::MAX_SIGMA;
use crate::protocol::ikos_alternating_bound::AlternatingBoundError;
use crate::protocol::ikos_sum::{
    ikos_delta, min_epsilon_display, sigma_needed, IkosSum, IkosSumError, IkosSumReport,
    DEFAULT_DELTA, MIN_EPS_PER_UNIT,
};

/// delta = (1 + e^eps) d 2^-sigma_c of the whole vector (module docs: hybrid over the d
/// coordinate instances), rounded up; at most (1 + e^eps) 2^-sigma.
pub fn vector_delta(epsilon: f64, dim: usize, sigma_coord: u32) -> f64 {
    (ikos_delta(epsilon, sigma_coord) * dim as f64 * (1.0 + 1e-15)).next_up()
}
use crate::rng::{SecureRng, SimulationRng};

/// Largest dimension d.
pub const MAX_DIM: usize = 1 << 20;

/// What a client holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VectorInput {
    /// A bucket in 0..d (histogram: one-hot vector, L1 sensitivity 2).
    Histogram,
    /// A vector in [0, 1]^d (L1 sensitivity d p after rounding at precision p).
    UnitBox,
}

/// A parameter or input of [`IkosVector`] outside its range.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum IkosVectorError {
    /// A parameter or input value (the field is named).
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A coordinate instance.
    #[error(transparent)]
    Sum(#[from] IkosSumError),
    /// The per-coordinate epsilon / p is below [`MIN_EPS_PER_UNIT`] (2^-39 (1 + 2^-10)).
    #[error("epsilon {epsilon:?} is too small for n = {users}, d = {dim}: the per-coordinate {per_unit} must be >= 2^-39 (1 + 2^-10) (about 1.821e-12: the discrete Laplace parameter alpha, e^(-that) rounded up to a 40-bit dyadic, must stay below 1), i.e. epsilon >= {}", min_epsilon_display(*scale))]
    EpsilonTooSmall {
        /// The epsilon of the whole vector.
        epsilon: f64,
        /// Clients n.
        users: u64,
        /// Dimension d.
        dim: usize,
        /// "epsilon / 2" or "epsilon / (d p), p = ceil(sqrt(n)) = ..".
        per_unit: String,
        /// epsilon / per-unit parameter (2, or d p).
        scale: f64,
    },
}

fn out_of_range(
    field: &'static str,
    allowed: &'static str,
    value: impl ToString,
) -> IkosVectorError {
    IkosVectorError::Param(ParamError::OutOfRange {
        field,
        allowed,
        value: value.to_string(),
    })
}

/// The guarantee and predicted error of an [`IkosVector`].
#[derive(Debug, Clone, PartialEq)]
pub struct IkosVectorReport {
    /// Input kind.
    pub input: VectorInput,
    /// Dimension d (buckets for a histogram).
    pub dim: usize,
    /// Target epsilon of the whole vector.
    pub epsilon: f64,
    /// Security parameter of the whole view.
    pub sigma: u32,
    /// Per-instance security parameter sigma + ceil(log2 d).
    pub sigma_per_coordinate: u32,
    /// (1 + e^eps) d 2^-sigma_per_coordinate (<= (1 + e^eps) 2^-sigma).
    pub delta: f64,
    /// Epsilon of each coordinate for sensitivity p (eps/2 or eps/d).
    pub epsilon_per_coordinate: f64,
    /// One coordinate's instance (p, q, m, alpha, T, its own MSE).
    pub coordinate: IkosSumReport,
    /// Messages per client, d m.
    pub messages_per_user: u64,
    /// Predicted MSE of the estimated vector: sum over coordinates of the per-coordinate
    /// bound (histogram: noise only, counts exact; box: rounding <= 1/4 per client and
    /// coordinate plus noise, divided by p^2), all clients present.
    pub predicted_mse: f64,
    /// Whether the shares go through the alternating shuffler A^2_pi (all d m instances
    /// sharing pi) rather than one uniform shuffle per coordinate.
    pub alternating: bool,
}

/// d coordinate instances of the IKOS DP sum (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IkosVector {
    input: VectorInput,
    dim: usize,
    epsilon: f64,
    sigma: u32,
    sigma_coord: u32,
    eps_coord: f64,
    coord: IkosSum,
}

impl IkosVector {
    /// n clients each holding a bucket in 0..d; the noisy histogram is eps-DP and the view
    /// (eps, (1 + e^eps) 2^-sigma)-DP.
    pub fn histogram(
        users: u64,
        dim: usize,
        epsilon: f64,
        sigma: u32,
    ) -> Result<Self, IkosVectorError> {
        Self::new(VectorInput::Histogram, users, dim, epsilon, sigma)
    }

    /// n clients each holding a vector in [0, 1]^d.
    pub fn unit_box(
        users: u64,
        dim: usize,
        epsilon: f64,
        sigma: u32,
    ) -> Result<Self, IkosVectorError> {
        Self::new(VectorInput::UnitBox, users, dim, epsilon, sigma)
    }

    /// Either kind.
    pub fn new(
        input: VectorInput,
        users: u64,
        dim: usize,
        epsilon: f64,
        sigma: u32,
    ) -> Result<Self, IkosVectorError> {
        Self::for_present(input, users, users, dim, epsilon, sigma)
    }

    /// [`IkosVector::new`] certified for `honest` (1..=n) honest, present clients only: each
    /// coordinate is [`IkosSum::for_honest_present`] (noise scaled so that their noise alone
    /// is the discrete Laplace, m sigma_c-secure for their shares); `honest = users` is
    /// [`IkosVector::new`].
    pub fn for_present(
        input: VectorInput,
        users: u64,
        honest: u64,
        dim: usize,
        epsilon: f64,
        sigma: u32,
    ) -> Result<Self, IkosVectorError> {
        let min_dim = if input == VectorInput::Histogram {
            2
        } else {
            1
        };
        if !(min_dim..=MAX_DIM).contains(&dim) {
            return Err(out_of_range(
                "dim",
                if input == VectorInput::Histogram {
                    "an integer from 2 to 1048576 (buckets)"
                } else {
                    "an integer from 1 to 1048576"
                },
                dim,
            ));
        }
        if !(epsilon.is_finite() && epsilon > 0.0) {
            return Err(out_of_range("epsilon", "a finite number > 0", epsilon));
        }
        // ceil(log2 d)
        let extra = usize::BITS - (dim - 1).leading_zeros();
        let sigma_coord = sigma.saturating_add(extra);
        if sigma == 0 || sigma_coord > MAX_SIGMA {
            return Err(out_of_range(
                "sigma",
                "an integer from 1 to 512 - ceil(log2 d)",
                sigma,
            ));
        }
        let delta = vector_delta(epsilon, dim, sigma_coord);
        if delta.is_nan() || delta >= 1.0 {
            return Err(IkosSumError::VacuousDelta {
                epsilon,
                sigma,
                delta,
                needed: sigma_needed(epsilon, DEFAULT_DELTA),
            }
            .into());
        }
        let (p, eps_coord) = match input {
            VectorInput::Histogram => (1u64, epsilon / 2.0),
            VectorInput::UnitBox => {
                let mut p = (users as f64).sqrt().ceil() as u64;
                while p.saturating_mul(p) < users {
                    p += 1;
                }
                while p > 1 && (p - 1) * (p - 1) >= users {
                    p -= 1;
                }
                (p, epsilon / dim as f64)
            }
        };
        let scale = match input {
            VectorInput::Histogram => 2.0,
            VectorInput::UnitBox => dim as f64 * p as f64,
        };
        if eps_coord / (p.max(1) as f64) < MIN_EPS_PER_UNIT {
            return Err(IkosVectorError::EpsilonTooSmall {
                epsilon,
                users,
                dim,
                per_unit: match input {
                    VectorInput::Histogram => "epsilon / 2".into(),
                    VectorInput::UnitBox => format!("epsilon / (d p), p = ceil(sqrt(n)) = {p},"),
                },
                scale,
            });
        }
        let mut coord =
            IkosSum::with_precision(users, p.max(1), eps_coord, sigma_coord, honest, None)?;
        if honest < users {
            coord = coord.for_honest_present()?;
        }
        Ok(Self {
            input,
            dim,
            epsilon,
            sigma,
            sigma_coord,
            eps_coord,
            coord,
        })
    }

    /// The same protocol over the alternating shuffler A^2_pi: all d m instances share one
    /// public placement pi, each with its own secret row and column permutations, and m
    /// becomes [`crate::protocol::m_required_alternating`] at the coordinate's modulus and
    /// sigma_c = sigma + ceil(log2 d) (module docs: the hybrid over the d coordinates holds
    /// conditionally on pi). Noise, q and delta are unchanged.
    pub fn over_alternating(&self) -> Result<Self, AlternatingBoundError> {
        Ok(Self {
            coord: self.coord.over_alternating()?,
            ..*self
        })
    }

    /// Whether the shares go through the alternating shuffler A^2_pi.
    pub fn is_alternating(&self) -> bool {
        self.coord.is_alternating()
    }

    /// One coordinate's instance (all d share its parameters).
    pub fn coordinate(&self) -> &IkosSum {
        &self.coord
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Guarantee and predicted error.
    pub fn report(&self) -> IkosVectorReport {
        let c = self.coord.report();
        let d = self.dim as f64;
        // Histogram: p = 1 and counts are exact, so only the noise variance remains.
        let per_coord = match self.input {
            VectorInput::Histogram => c.noise_variance,
            VectorInput::UnitBox => c.predicted_mse,
        };
        IkosVectorReport {
            input: self.input,
            dim: self.dim,
            epsilon: self.epsilon,
            sigma: self.sigma,
            sigma_per_coordinate: self.sigma_coord,
            delta: vector_delta(self.epsilon, self.dim, self.sigma_coord),
            epsilon_per_coordinate: self.eps_coord,
            messages_per_user: self.dim as u64 * u64::from(c.shares),
            predicted_mse: d * per_coord,
            alternating: self.coord.is_alternating(),
            coordinate: c,
        }
    }

    fn shares_of<R: CryptoRng + ?Sized>(
        &self,
        encoded: impl Iterator<Item = u64>,
        rng: &mut R,
    ) -> Result<Vec<Vec<u64>>, IkosVectorError> {
        encoded
            .map(|x_bar| Ok(self.coord.randomize_encoded(x_bar, rng)?))
            .collect()
    }

    fn bucket_with<R: CryptoRng + ?Sized>(
        &self,
        bucket: usize,
        rng: &mut R,
    ) -> Result<Vec<Vec<u64>>, IkosVectorError> {
        if self.input != VectorInput::Histogram {
            return Err(out_of_range(
                "input",
                "a vector (this instance sums vectors)",
                "a bucket",
            ));
        }
        if bucket >= self.dim {
            return Err(out_of_range("bucket", "an integer in 0..d", bucket));
        }
        self.shares_of((0..self.dim).map(|j| u64::from(j == bucket)), rng)
    }

    fn vector_with<R: CryptoRng + ?Sized>(
        &self,
        x: &[f64],
        rng: &mut R,
    ) -> Result<Vec<Vec<u64>>, IkosVectorError> {
        if self.input != VectorInput::UnitBox {
            return Err(out_of_range(
                "input",
                "a bucket (this instance is a histogram)",
                "a vector",
            ));
        }
        if x.len() != self.dim {
            return Err(out_of_range(
                "vector length",
                "exactly d coordinates",
                x.len(),
            ));
        }
        let values = x
            .iter()
            .map(|&v| UnitValue::new(v))
            .collect::<Result<Vec<_>, _>>()?;
        let p = Precision::new(u64::from(self.coord.precision()))?;
        let encoded: Vec<u64> = values
            .into_iter()
            .map(|v| u64::from(randomized_round(v, p, rng)))
            .collect();
        self.shares_of(encoded.into_iter(), rng)
    }

    /// Client side, histogram: for each coordinate j, the m shares for instance j.
    pub fn randomize_bucket(
        &self,
        bucket: usize,
        rng: &mut SecureRng,
    ) -> Result<Vec<Vec<u64>>, IkosVectorError> {
        self.bucket_with(bucket, rng)
    }

    /// [`IkosVector::randomize_bucket`] with a seeded RNG, for simulations only.
    pub fn randomize_bucket_simulated(
        &self,
        bucket: usize,
        rng: &mut SimulationRng,
    ) -> Result<Vec<Vec<u64>>, IkosVectorError> {
        self.bucket_with(bucket, rng)
    }

    /// Client side, vector in [0, 1]^d: for each coordinate j, the m shares for instance j.
    pub fn randomize_vector(
        &self,
        x: &[f64],
        rng: &mut SecureRng,
    ) -> Result<Vec<Vec<u64>>, IkosVectorError> {
        self.vector_with(x, rng)
    }

    /// [`IkosVector::randomize_vector`] with a seeded RNG, for simulations only.
    pub fn randomize_vector_simulated(
        &self,
        x: &[f64],
        rng: &mut SimulationRng,
    ) -> Result<Vec<Vec<u64>>, IkosVectorError> {
        self.vector_with(x, rng)
    }

    /// Empty analyzer states, one per coordinate (instance j's shares go to state j, through
    /// instance j's own shuffle).
    pub fn analyzers(&self) -> Vec<ModularSum> {
        (0..self.dim).map(|_| self.coord.analyzer()).collect()
    }

    /// The estimated counts (histogram) or coordinate sums (box).
    pub fn estimate(&self, sums: &[ModularSum]) -> Result<Vec<f64>, IkosVectorError> {
        if sums.len() != self.dim {
            return Err(out_of_range(
                "analyzer states",
                "exactly d states",
                sums.len(),
            ));
        }
        sums.iter().map(|s| Ok(self.coord.estimate(s)?)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::Aggregator;
    use crate::rng::simulation_rng;
    use crate::shuffle::{Shuffler, UniformShuffler};

    fn run(v: &IkosVector, clients: &[Vec<Vec<u64>>], rng: &mut SimulationRng) -> Vec<f64> {
        let mut states = v.analyzers();
        for (j, state) in states.iter_mut().enumerate() {
            let mut instance: Vec<u64> =
                clients.iter().flat_map(|c| c[j].iter().copied()).collect();
            UniformShuffler.shuffle(&mut instance, rng);
            state.absorb_all(&instance).unwrap();
        }
        v.estimate(&states).unwrap()
    }

    /// Without noise the counts are exact: encoded one-hot values, shared, shuffled per
    /// instance, summed.
    #[test]
    fn histogram_exact_without_noise() {
        let mut rng = simulation_rng(3);
        let v = IkosVector::histogram(500, 7, 1.0, 30).unwrap();
        let c = v.coordinate();
        let buckets: Vec<usize> = (0..500).map(|i| (i * i + 3) % 7).collect();
        let clients: Vec<Vec<Vec<u64>>> = buckets
            .iter()
            .map(|&b| {
                (0..7)
                    .map(|j| {
                        c.ikos()
                            .modulus()
                            .share(
                                c.encode(u64::from(j == b), 0),
                                c.ikos().shares() as usize,
                                &mut rng,
                            )
                            .unwrap()
                    })
                    .collect()
            })
            .collect();
        let est = run(&v, &clients, &mut rng);
        for (j, e) in est.iter().enumerate() {
            let count = buckets.iter().filter(|&&b| b == j).count() as f64;
            assert_eq!(*e, count, "bucket {j}");
        }
    }

    /// Over A^2_pi: each coordinate's m is `m_required_alternating` at the coordinate's q and
    /// sigma_c (never below the uniform count), noise and delta unchanged; the counts are
    /// exact through the real alternating shuffler (all d m instances sharing pi, a ragged
    /// n = 500 layout: 23 x 23, last row of 16).
    #[test]
    fn histogram_over_alternating_is_exact_and_certified() {
        use crate::shuffle::{AlternatingShuffler, GridLayout, PublicPlacement};
        let mut rng = simulation_rng(4);
        let (n, d) = (500usize, 7usize);
        let uniform = IkosVector::histogram(n as u64, d, 1.0, 30).unwrap();
        let v = uniform.over_alternating().unwrap();
        assert!(v.is_alternating() && !uniform.is_alternating());
        let c = v.coordinate();
        let q = c.ikos().modulus();
        let m = c.ikos().shares();
        assert_eq!(
            m,
            crate::protocol::m_required_alternating(n as u64, q, v.report().sigma_per_coordinate)
                .unwrap()
        );
        assert!(m >= uniform.coordinate().ikos().shares());
        let (r, ru) = (v.report(), uniform.report());
        assert!(r.alternating && !ru.alternating);
        assert_eq!((r.delta, r.predicted_mse), (ru.delta, ru.predicted_mse));
        assert_eq!(r.messages_per_user, d as u64 * u64::from(m));
        let buckets: Vec<usize> = (0..n).map(|i| (i * i + 3) % d).collect();
        let shuffler =
            AlternatingShuffler::new(PublicPlacement::sample(GridLayout::new(n), &mut rng));
        let mut states = v.analyzers();
        for (j, state) in states.iter_mut().enumerate() {
            let shares: Vec<Vec<u64>> = buckets
                .iter()
                .map(|&b| {
                    q.share(c.encode(u64::from(j == b), 0), m as usize, &mut rng)
                        .unwrap()
                })
                .collect();
            let mut instances: Vec<Vec<u64>> = (0..m as usize)
                .map(|k| shares.iter().map(|s| s[k]).collect())
                .collect();
            shuffler
                .shuffle_instances(&mut instances, &mut rng)
                .unwrap();
            for inst in &instances {
                crate::analyzer::Aggregator::absorb_all(state, inst).unwrap();
            }
        }
        let est = v.estimate(&states).unwrap();
        for (j, e) in est.iter().enumerate() {
            let count = buckets.iter().filter(|&&b| b == j).count() as f64;
            assert_eq!(*e, count, "bucket {j}");
        }
    }

    /// Observed MSE of the noisy histogram against the prediction (exact for counts: the sum
    /// of d discrete Laplace variances): 1500 runs, n = 200, d = 5, eps = 1, seed 11.
    /// The squared error summed over 5 Laplace-like coordinates has relative sd about 1 per
    /// run, so about 2.6% over 1500 runs; tolerance 12%.
    #[test]
    fn histogram_mse_matches_prediction() {
        let mut rng = simulation_rng(11);
        let (n, d) = (200u64, 5usize);
        let v = IkosVector::histogram(n, d, 1.0, 20).unwrap();
        let r = v.report();
        assert_eq!(r.sigma_per_coordinate, 23);
        assert!(r.delta <= (1.0 + 1f64.exp()) * 2f64.powi(-20));
        assert!((r.epsilon_per_coordinate - 0.5).abs() < 1e-15);
        let buckets: Vec<usize> = (0..n as usize).map(|i| i % d).collect();
        let truth = vec![40.0; d];
        let runs = 1500;
        let mut total = 0.0;
        for _ in 0..runs {
            let clients: Vec<_> = buckets
                .iter()
                .map(|&b| v.randomize_bucket_simulated(b, &mut rng).unwrap())
                .collect();
            let est = run(&v, &clients, &mut rng);
            total += est
                .iter()
                .zip(&truth)
                .map(|(e, t)| (e - t).powi(2))
                .sum::<f64>();
        }
        let mse = total / f64::from(runs);
        let ratio = mse / r.predicted_mse;
        println!(
            "observed MSE {mse:.4}, predicted {:.4}, m = {}",
            r.predicted_mse, r.coordinate.shares
        );
        assert!(
            (0.88..=1.12).contains(&ratio),
            "observed {mse}, predicted {}",
            r.predicted_mse
        );
    }

    /// Unit box, every coordinate 0.55 at p = 10 (rounding variance exactly 1/4 per client
    /// and coordinate, so the bound is the exact MSE): 1000 runs, n = 100, d = 3, eps = 3,
    /// seed 12; tolerance 12% (relative sd about 3%).
    #[test]
    fn box_mse_matches_prediction() {
        let mut rng = simulation_rng(12);
        let (n, d) = (100u64, 3usize);
        let v = IkosVector::unit_box(n, d, 3.0, 20).unwrap();
        let r = v.report();
        assert_eq!(r.coordinate.precision, 10);
        assert!((r.epsilon_per_coordinate - 1.0).abs() < 1e-15);
        let x = vec![0.55; d];
        let truth = 0.55 * n as f64;
        let runs = 1000;
        let mut total = 0.0;
        for _ in 0..runs {
            let clients: Vec<_> = (0..n)
                .map(|_| v.randomize_vector_simulated(&x, &mut rng).unwrap())
                .collect();
            let est = run(&v, &clients, &mut rng);
            total += est.iter().map(|e| (e - truth).powi(2)).sum::<f64>();
        }
        let mse = total / f64::from(runs);
        let ratio = mse / r.predicted_mse;
        println!(
            "observed MSE {mse:.4}, predicted {:.4}, m = {}",
            r.predicted_mse, r.coordinate.shares
        );
        assert!(
            (0.88..=1.12).contains(&ratio),
            "observed {mse}, predicted {}",
            r.predicted_mse
        );
        // Messages: d m.
        assert_eq!(
            r.messages_per_user,
            d as u64 * u64::from(r.coordinate.shares)
        );
    }

    #[test]
    fn bad_inputs_name_the_field() {
        let mut rng = simulation_rng(1);
        let field = |e: IkosVectorError| match e {
            IkosVectorError::Param(ParamError::OutOfRange { field, .. }) => field.to_string(),
            other => other.to_string(),
        };
        assert_eq!(
            field(IkosVector::histogram(100, 1, 1.0, 20).unwrap_err()),
            "dim"
        );
        assert_eq!(
            field(IkosVector::unit_box(100, 0, 1.0, 20).unwrap_err()),
            "dim"
        );
        assert_eq!(
            field(IkosVector::histogram(100, 4, 0.0, 20).unwrap_err()),
            "epsilon"
        );
        assert_eq!(
            field(IkosVector::histogram(100, 4, 1.0, 511).unwrap_err()),
            "sigma"
        );
        assert_eq!(
            field(IkosVector::histogram(100, 4, 1.0, 0).unwrap_err()),
            "sigma"
        );
        assert!(IkosVector::histogram(0, 4, 1.0, 20)
            .unwrap_err()
            .to_string()
            .contains("users n"));
        let h = IkosVector::histogram(100, 4, 1.0, 20).unwrap();
        assert_eq!(
            field(h.randomize_bucket_simulated(4, &mut rng).unwrap_err()),
            "bucket"
        );
        assert_eq!(
            field(
                h.randomize_vector_simulated(&[0.5; 4], &mut rng)
                    .unwrap_err()
            ),
            "input"
        );
        let b = IkosVector::unit_box(100, 3, 1.0, 20).unwrap();
        assert_eq!(
            field(
                b.randomize_vector_simulated(&[0.5; 2], &mut rng)
                    .unwrap_err()
            ),
            "vector length"
        );
        assert_eq!(
            field(
                b.randomize_vector_simulated(&[0.5, 1.5, 0.0], &mut rng)
                    .unwrap_err()
            ),
            "value"
        );
        assert_eq!(
            field(
                b.randomize_vector_simulated(&[0.5, f64::NAN, 0.0], &mut rng)
                    .unwrap_err()
            ),
            "value"
        );
        assert_eq!(field(b.estimate(&[]).unwrap_err()), "analyzer states");
        // eps / (d p) below 2^-39 (1 + 2^-10): named refusal with the smallest epsilon accepted.
        let e = IkosVector::unit_box(1_000_000_000_000, 10_000, 0.01, 40).unwrap_err();
        assert!(matches!(e, IkosVectorError::EpsilonTooSmall { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("n = 1000000000000, d = 10000")
                && msg.contains("p = ceil(sqrt(n)) = 1000000")
                && msg.contains("epsilon >= 1.821e-2"),
            "{msg}"
        );
        assert!(IkosVector::unit_box(1_000_000_000_000, 10_000, 0.01821, 40).is_ok());
        // Just above the old 2^-39 boundary (eps / (d p) = 3.2e-12): accepted.
        assert!(IkosVector::unit_box(100_000_000_000, 10_000, 0.01, 40).is_ok());
    }

    /// Regression: `calibrate ikos-histogram --n 1e8 --domain 100 --eps 1` was refused by the
    /// Polya sampler (n (2^40 - A) >= 2^64 for alpha = e^(-1/2)); the large-k sampler thins.
    /// The noise is still exactly Polya(1/n, alpha) for the alpha the report certifies.
    #[test]
    fn large_n_histogram_is_supported() {
        let v = IkosVector::histogram(100_000_000, 100, 1.0, 40).unwrap();
        let r = v.report();
        let c = &r.coordinate;
        assert_eq!(c.precision, 1);
        // Sensitivity 2 per bucket change: 2 ln(1/alpha) <= eps = 1.
        assert!(
            c.epsilon_realized <= 0.5 && c.epsilon_realized > 0.49999,
            "{c:?}"
        );
        let noise = v.coordinate().noise();
        assert_eq!(noise.k(), 100_000_000);
        let (num, den) = noise.a();
        assert_eq!(num as f64 / den as f64, v.coordinate().alpha());
    }

    /// Scan of the corners of the parameter space (n 1e2..1e12, d 2..1e4, eps 0.01..10, both
    /// input kinds, and the scalar sum; the full grid is a CLI scan, `docs/multi-message.md`):
    /// every instance is built, or refused with `EpsilonTooSmall` exactly when
    /// eps / (d p) < 2^-39 (1 + 2^-10); no other error, no panic.
    #[test]
    fn parameter_scan_has_no_internal_errors() {
        for n in [100u64, 100_000_000, 1_000_000_000_000] {
            for eps in [0.01, 10.0] {
                if let Err(e) = IkosSum::new(n, eps, 40) {
                    panic!("sum n={n} eps={eps}: {e}");
                }
                for d in [2usize, 10_000] {
                    if let Err(e) = IkosVector::histogram(n, d, eps, 40) {
                        panic!("histogram n={n} d={d} eps={eps}: {e}");
                    }
                    let p = (n as f64).sqrt().ceil();
                    match IkosVector::unit_box(n, d, eps, 40) {
                        Ok(_) => assert!(eps / d as f64 / p >= MIN_EPS_PER_UNIT),
                        Err(IkosVectorError::EpsilonTooSmall { .. }) => {
                            assert!(eps / d as f64 / p < MIN_EPS_PER_UNIT)
                        }
                        Err(e) => panic!("box n={n} d={d} eps={eps}: {e}"),
                    }
                }
            }
        }
    }

    /// The sweep of issue 26 for histograms and vectors: eps log-spaced over 1e-3..1e4 at
    /// sigma = 40 and at the default sigma: a built instance reports delta < 1 (<= 10^-6 with
    /// the default sigma); the others are refused with a typed error, never a vacuous delta.
    #[test]
    fn eps_sweep_never_certifies_delta_of_one_or_more() {
        use crate::protocol::ikos_sum::default_sigma;
        for i in 0..=14 {
            let eps = 10f64.powf(-3.0 + f64::from(i) / 2.0);
            let sigmas = [Some(40), default_sigma(eps).ok()];
            for (k, sigma) in sigmas.into_iter().enumerate() {
                let Some(sigma) = sigma else { continue };
                for input in [VectorInput::Histogram, VectorInput::UnitBox] {
                    match IkosVector::new(input, 1_000, 8, eps, sigma) {
                        Ok(v) => {
                            let d = v.report().delta;
                            assert!(d.is_finite() && d < 1.0, "eps={eps} {input:?}: {d}");
                            if k == 1 {
                                assert!(d <= DEFAULT_DELTA, "eps={eps}: {d}");
                            }
                        }
                        Err(IkosVectorError::Sum(IkosSumError::VacuousDelta { .. })) => {
                            assert!(k == 0 && eps > 27.0, "eps={eps}")
                        }
                        Err(IkosVectorError::EpsilonTooSmall { .. }) => assert!(eps < 1e-2),
                        Err(e) => panic!("eps={eps} {input:?}: {e}"),
                    }
                }
            }
        }
    }
}
