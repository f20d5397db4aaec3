//! DPDG: the distributed Gaussian baseline (spec `06-frequency.md`, "DPDG", with the seed's
//! per-user variance corrected), with exact discrete Gaussian noise on a fixed-point grid and
//! n-party additive sharing over Z_q as in DPDS.
//!
//! Target: per item, total noise on psi_hat of variance G_f^2 sigma_G^2, G_f = sqrt(2)/n (the
//! L2 sensitivity of psi under replacing one user's item), sigma_G = sqrt(2 ln(1.25/delta)) /
//! eps, so V_G = 4 ln(1.25/delta) / (n^2 eps^2). Each user adds variance G_f^2 sigma_G^2 / n;
//! the seed's (G_f sigma_G / n)^2 is n times too small (the n users' variances add up to
//! G_f^2 sigma_G^2 / n then), and blanket uses the corrected value.
//!
//! Fixed point with k fractional bits: user i encodes its one-hot count vector as x_i 2^k
//! and adds Z_(i,j) ~ N_Z(0, s^2) per item, sampled exactly ([`DiscreteGaussian`], CKS 2020;
//! integer arithmetic only) with, in grid units,
//! s^2 = (n 2^k)^2 G_f^2 sigma_G^2 / n = 4 ln(1.25/delta) 4^k / (eps^2 n),
//! rounded *up* to a multiple of 2^-16 (more noise). It then shares y_i = x_i 2^k + Z_i mod q
//! n ways like DPDS; the server decodes the sum centred (v >= q/2 means v - q) and outputs
//! psi_hat_j = v_j / (2^k n).
//!
//! Field: T = ceil(12 sqrt(n s^2)) bounds the total noise except with probability
//! 2 exp(-72) (the discrete Gaussian is sub-Gaussian with parameter s^2, CKS 2020), and q is
//! the smallest power of two with n 2^k + T < q/2: log2 q = ceil(log2(2 (n 2^k + T) + 1)),
//! i.e. about log2 n + k + 1 bits plus the noise headroom; q <= 2^64 or
//! [`FrequencyError::FieldTooSmall`].

use rand_core::CryptoRng;

use super::dpds::{
    helper_sum, literal_costs, literal_run, sample_server_view, server_sum, share_vector, DpdsMode,
    DpdsRun,
};
use super::{
    check_items, holders, out_of_range, Costs, FrequencyError, FrequencyEstimate, FrequencyReport,
    GuaranteeKind, RoleCost,
};
use crate::field::Modulus;
use crate::params::Rational;
use crate::rng::{simulation_stream, SecureRng, SimulationRng};
use crate::sample::DiscreteGaussian;

/// The trust statement of DPDG.
pub const TRUST: &str = "no trusted party: honest-but-curious; every user adds its share of \
                         the noise, so the guarantee needs all n users to add it honestly; \
                         private against up to n - 1 colluding users (minus their noise) or the \
                         server, not both; authenticated, encrypted pairwise channels";

/// Denominator of the rounded-up per-user variance s^2 (grid units).
pub const SIGMA2_DEN: u64 = 1 << 16;

/// Largest fractional-bit count k.
pub const MAX_FRAC_BITS: u32 = 24;

/// DPDG for n users over items 0..N (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dpdg {
    users: u64,
    items: u32,
    epsilon: f64,
    delta: f64,
    frac_bits: u32,
    noise: Option<DiscreteGaussian>,
    noise_bound: u64,
    modulus: Modulus,
}

impl Dpdg {
    /// Validates n >= 1, N >= 1, eps in (0, 1) (the classical Gaussian-mechanism bound behind
    /// sigma_G needs eps < 1), delta in (0, 1), k <= 24; derives s^2, T and q.
    pub fn new(
        users: u64,
        items: u32,
        epsilon: f64,
        delta: f64,
        frac_bits: u32,
    ) -> Result<Self, FrequencyError> {
        if users == 0 {
            return Err(out_of_range("n", "an integer >= 1", users));
        }
        check_items(items)?;
        if !(epsilon > 0.0 && epsilon < 1.0) {
            return Err(out_of_range(
                "eps",
                "in (0, 1) (classical Gaussian mechanism)",
                epsilon,
            ));
        }
        if !(delta > 0.0 && delta < 1.0) {
            return Err(out_of_range("delta", "in the open interval (0, 1)", delta));
        }
        if frac_bits > MAX_FRAC_BITS {
            return Err(out_of_range("frac_bits", "in 0..=24", frac_bits));
        }
        let s2 = per_user_variance(users, epsilon, delta, frac_bits);
        let num = (s2 * SIGMA2_DEN as f64).ceil();
        if !(num >= 1.0 && num < (1u64 << 53) as f64) {
            return Err(out_of_range(
                "frac_bits",
                "small enough that the per-user variance s^2 fits the exact sampler",
                frac_bits,
            ));
        }
        let sigma2 = Rational::new(num as u64, SIGMA2_DEN)?;
        let noise = DiscreteGaussian::new(sigma2).map_err(|_| {
            out_of_range(
                "frac_bits",
                "small enough that the per-user variance s^2 fits the exact sampler",
                frac_bits,
            )
        })?;
        let noise_bound = (12.0 * (users as f64 * sigma2.to_f64()).sqrt()).ceil() as u64;
        let top = u128::from(users) << frac_bits;
        let need = 2 * (top + u128::from(noise_bound)) + 1; // q >= need gives top + T < q/2
        let q = need.next_power_of_two();
        if q > 1u128 << 64 {
            return Err(FrequencyError::FieldTooSmall { q, n: users });
        }
        Ok(Self {
            users,
            items,
            epsilon,
            delta,
            frac_bits,
            noise: Some(noise),
            noise_bound,
            modulus: Modulus::new(q)?,
        })
    }

    /// The same protocol with the noise switched off (NOT private; tests of the sharing).
    pub fn without_noise(mut self) -> Self {
        self.noise = None;
        self
    }

    /// The modulus q.
    pub fn modulus(&self) -> Modulus {
        self.modulus
    }

    /// The per-user noise parameter s^2 in grid units, as sampled (rounded up), if on.
    pub fn per_user_sigma2(&self) -> Option<Rational> {
        self.noise.map(|g| g.sigma2())
    }

    /// The noise bound T.
    pub fn noise_bound(&self) -> u64 {
        self.noise_bound
    }

    /// V_G = 4 ln(1.25/delta) / (n^2 eps^2), the spec's variance of psi_hat_j.
    pub fn predicted_variance(&self) -> f64 {
        predicted_variance(self.users, self.epsilon, self.delta)
    }

    /// Per-role cost of one literal run (`docs/frequency.md`): per user as DPDS but N discrete
    /// Gaussian samples instead of one Bernoulli and N more additions (noise onto the
    /// encoding): messages n / n - 1, elements n N / (n - 1) N / N kept, N + (n - 1) N
    /// samples, N + 2 (n - 1) N additions; server n messages, n N elements, (n - 1) N
    /// additions, N multiplications.
    pub fn closed_form_costs(&self) -> Costs {
        let nn = u64::from(self.items);
        literal_costs(self.users, nn, nn, nn)
    }

    fn encode<R: CryptoRng + ?Sized>(
        &self,
        item: u32,
        rng: &mut R,
        cost: &mut RoleCost,
    ) -> Result<Vec<u64>, FrequencyError> {
        super::check_item(0, item, self.items)?;
        let q = self.modulus;
        let mut y = vec![0u64; self.items as usize];
        y[item as usize] = 1u64 << self.frac_bits;
        for v in y.iter_mut() {
            let z = match self.noise {
                Some(g) => {
                    cost.random_samples += 1;
                    g.sample(rng)
                }
                None => 0,
            };
            cost.additions += 1;
            *v = add_signed(q, *v, z);
        }
        Ok(y)
    }

    /// User role, round 1, with OS randomness: n share vectors of x_i 2^k + Z_i.
    pub fn user_round1(
        &self,
        user: usize,
        item: u32,
        rng: &mut SecureRng,
        cost: &mut RoleCost,
    ) -> Result<Vec<Vec<u64>>, FrequencyError> {
        let y = self.encode(item, rng, cost)?;
        debug_assert!(user < self.users as usize);
        Ok(share_vector(
            self.modulus,
            self.users as usize,
            &y,
            rng,
            cost,
        ))
    }

    /// [`Dpdg::user_round1`] on simulation randomness (noise and shares from separate streams).
    pub fn user_round1_simulated(
        &self,
        user: usize,
        item: u32,
        noise: &mut SimulationRng,
        shares: &mut SimulationRng,
        cost: &mut RoleCost,
    ) -> Result<Vec<Vec<u64>>, FrequencyError> {
        let y = self.encode(item, noise, cost)?;
        debug_assert!(user < self.users as usize);
        Ok(share_vector(
            self.modulus,
            self.users as usize,
            &y,
            shares,
            cost,
        ))
    }

    /// Helper role (user k): t_k = sum of the n share vectors addressed to k.
    pub fn helper_round2(&self, received: &[Vec<u64>], cost: &mut RoleCost) -> Vec<u64> {
        helper_sum(self.modulus, received, cost)
    }

    /// Server role: the residues sum_k t_k mod q.
    pub fn server_sum(&self, sums: &[Vec<u64>], cost: &mut RoleCost) -> Vec<u64> {
        server_sum(self.modulus, sums, cost)
    }

    /// Centred decoding and scaling: psi_hat_j = v_j / (2^k n), v_j = r_j or r_j - q.
    pub fn server_estimate(&self, residues: &[u64], cost: &mut RoleCost) -> Vec<f64> {
        let q = self.modulus.q() as i128;
        let factor = 1.0 / ((1u64 << self.frac_bits) as f64 * self.users as f64);
        cost.multiplications += residues.len() as u64;
        residues
            .iter()
            .map(|&r| {
                let r = i128::from(r);
                let v = if 2 * r >= q { r - q } else { r };
                v as f64 * factor
            })
            .collect()
    }

    /// The whole protocol on simulation randomness: noise from `simulation_stream(seed, 0)`
    /// (user-major, item-minor), shares from stream 1. [`DpdsMode::Fast`] draws the same noise
    /// in the same order and sums the encodings directly (identical output, O(n N) samples,
    /// no shares).
    pub fn simulate(
        &self,
        data: &[u32],
        mode: DpdsMode,
        seed: u64,
    ) -> Result<DpdsRun, FrequencyError> {
        if data.len() as u64 != self.users {
            return Err(out_of_range(
                "n",
                "equal to the number of users the protocol was built for",
                data.len(),
            ));
        }
        let pi = holders(data, self.items)?;
        let mut noise_rng = simulation_stream(seed, 0);
        let mut share_rng = simulation_stream(seed, 1);
        let n = self.users as usize;
        let nn = self.items as usize;
        let q = self.modulus;
        let (residues, helper_sums, mut costs) = match mode {
            DpdsMode::Literal => {
                let (residues, sums, costs) = literal_run(q, self.items, data, |i, x, cost| {
                    self.user_round1_simulated(i, x, &mut noise_rng, &mut share_rng, cost)
                })?;
                (residues, Some(sums), costs)
            }
            DpdsMode::Fast | DpdsMode::FastWithServerView => {
                let mut residues = vec![0u64; nn];
                let mut scratch = RoleCost::default();
                for &x in data {
                    let y = self.encode(x, &mut noise_rng, &mut scratch)?;
                    for (r, v) in residues.iter_mut().zip(y) {
                        *r = q.add(*r, v);
                    }
                }
                let sums = (mode == DpdsMode::FastWithServerView)
                    .then(|| sample_server_view(q, n, &residues, &mut share_rng));
                let mut costs = self.closed_form_costs();
                if self.noise.is_none() {
                    costs.per_user.random_samples -= u64::from(self.items);
                }
                costs.server.multiplications = 0; // added by `server_estimate`
                (residues, sums, costs)
            }
        };
        let estimate = self.server_estimate(&residues, &mut costs.server);
        let sampled_counts = estimate
            .iter()
            .map(|&e| (e * self.users as f64).round().max(0.0) as u64)
            .collect();
        Ok(DpdsRun {
            output: FrequencyEstimate {
                sampled_counts,
                estimate,
                report: self.report(&pi),
                costs,
            },
            helper_sums,
        })
    }

    /// The report: worst-case (eps, delta) (not data-dependent), V_G, notes.
    pub fn report(&self, pi: &[u64]) -> FrequencyReport {
        let v = self.predicted_variance();
        let mut notes = vec![
            format!(
                "Worst-case (eps, delta) = ({}, {:.3e}) of the Gaussian mechanism with L2 \
                 sensitivity sqrt(2)/n, provided all n users add their noise; no condition on the \
                 data.",
                self.epsilon, self.delta
            ),
            "The total noise is a sum of n exact discrete Gaussians, not exactly one discrete \
             Gaussian; the (eps, delta) carried over from the continuous Gaussian mechanism is \
             cited (Canonne-Kamath-Steinke 2020; Kairouz-Liu-Steinke 2021 for sums), not \
             re-derived in blanket."
                .to_string(),
            format!(
                "Per-user variance uses the corrected G_f^2 sigma_G^2 / n (the seed's \
                 (G_f sigma_G / n)^2 is n = {} times too small); s^2 = {} grid units, rounded up.",
                self.users,
                self.noise
                    .map(|g| g.sigma2().to_string())
                    .unwrap_or_else(|| "0 (noise off)".into())
            ),
            format!(
                "Fixed point: k = {} fractional bits; field q = {} (n 2^k + T < q/2, T = {}).",
                self.frac_bits,
                self.modulus.q(),
                self.noise_bound
            ),
        ];
        if self.noise.is_none() {
            notes.push("NOISE OFF: this output is NOT private.".into());
        }
        FrequencyReport {
            protocol: "dpdg",
            users: self.users,
            items: self.items,
            p: 1.0,
            epsilon: self.epsilon,
            delta: self.delta,
            modulus: Some(self.modulus.q()),
            guarantee_kind: GuaranteeKind::WorstCase,
            trust: TRUST,
            predicted_variance: vec![v; pi.len()],
            predicted_variance_worst: v,
            notes,
            certified: self.noise.is_some(),
        }
    }
}

/// s^2 = 4 ln(1.25/delta) 4^k / (eps^2 n) in grid units (before rounding up).
pub fn per_user_variance(users: u64, epsilon: f64, delta: f64, frac_bits: u32) -> f64 {
    4.0 * (1.25 / delta).ln() * 4f64.powi(frac_bits as i32) / (epsilon * epsilon * users as f64)
}

/// V_G = 4 ln(1.25/delta) / (n^2 eps^2).
pub fn predicted_variance(users: u64, epsilon: f64, delta: f64) -> f64 {
    let n = users as f64;
    4.0 * (1.25 / delta).ln() / (n * n * epsilon * epsilon)
}

/// The seed's crossover: DPDG's V_G is below DPCS/DPDS's worst case 1/(n (e^eps - 1)) iff
/// n > 4 (e^eps - 1) ln(1.25/delta) / eps^2.
pub fn crossover_users(epsilon: f64, delta: f64) -> f64 {
    4.0 * epsilon.exp_m1() * (1.25 / delta).ln() / (epsilon * epsilon)
}

fn add_signed(q: Modulus, a: u64, z: i64) -> u64 {
    let mag = (u128::from(z.unsigned_abs()) % q.q()) as u64;
    if z >= 0 {
        q.add(a, mag)
    } else {
        q.sub(a, mag)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{data_with, variances};
    use super::*;
    use crate::rng::simulation_rng;
    use rand_core::RngCore;

    #[test]
    fn dpdg_noise_off_reconstructs_exact_frequencies() {
        let mut rng = simulation_rng(3);
        for trial in 0..20u64 {
            let n = 1 + (rng.next_u64() % 30);
            let items = 1 + (trial % 5) as u32;
            let data: Vec<u32> = (0..n)
                .map(|_| (rng.next_u64() % u64::from(items)) as u32)
                .collect();
            let pi = holders(&data, items).unwrap();
            let proto = Dpdg::new(n, items, 0.5, 1e-6, (trial % 9) as u32)
                .unwrap()
                .without_noise();
            for mode in [DpdsMode::Literal, DpdsMode::Fast] {
                let out = proto.simulate(&data, mode, trial).unwrap().output;
                assert_eq!(out.sampled_counts, pi, "{mode:?}");
                for (e, &h) in out.estimate.iter().zip(&pi) {
                    assert!((e - h as f64 / n as f64).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn dpdg_literal_and_fast_identical_for_the_same_seed() {
        let data = data_with(&[6, 3, 1]);
        let proto = Dpdg::new(10, 3, 0.8, 1e-5, 6).unwrap();
        for seed in 0..30 {
            let lit = proto
                .simulate(&data, DpdsMode::Literal, seed)
                .unwrap()
                .output;
            let fast = proto.simulate(&data, DpdsMode::Fast, seed).unwrap().output;
            assert_eq!(lit, fast);
        }
    }

    /// Var[psi_hat_j] vs V_G = 4 ln(1.25/delta) / (n^2 eps^2): n = 200, N = 3, k = 8,
    /// 3000 repetitions (sample-variance relative standard error sqrt(2/3000) = 2.6%);
    /// tolerance 12%. The discrete Gaussian's variance is below its parameter by a
    /// negligible amount at s^2 ~ 3.7e3 and s^2 is rounded up by < 2^-16.
    #[test]
    fn dpdg_observed_variance_matches_corrected_formula() {
        let data = data_with(&[100, 60, 40]);
        let proto = Dpdg::new(200, 3, 0.5, 1e-5, 8).unwrap();
        let runs: Vec<Vec<f64>> = (0..3000)
            .map(|seed| {
                proto
                    .simulate(&data, DpdsMode::Fast, seed)
                    .unwrap()
                    .output
                    .estimate
            })
            .collect();
        let pred = proto.predicted_variance();
        for (j, o) in variances(&runs).iter().enumerate() {
            let ratio = o / pred;
            eprintln!("dpdg item {j}: observed {o:.4e} predicted {pred:.4e} ratio {ratio:.4}");
            assert!((ratio - 1.0).abs() < 0.12, "item {j}: ratio {ratio:.3}");
        }
        // The seed's uncorrected per-user variance would give V_G / n: far outside.
        assert!(variances(&runs)[0] > 10.0 * pred / 200.0);
    }

    #[test]
    fn dpdg_crossover_matches_seed_formula() {
        for (eps, delta) in [(0.5, 1e-6), (0.9, 1e-5), (0.1, 1e-8)] {
            let nc = crossover_users(eps, delta);
            let v_sampling = |n: u64| 1.0 / (n as f64 * f64::exp_m1(eps));
            let below = nc.floor() as u64;
            let above = nc.ceil() as u64 + 1;
            assert!(predicted_variance(below, eps, delta) >= v_sampling(below));
            assert!(predicted_variance(above, eps, delta) < v_sampling(above));
        }
    }

    #[test]
    fn dpdg_cost_counters_equal_closed_forms() {
        for (n, items) in [(1u64, 1u32), (2, 1), (3, 2), (6, 4)] {
            let data: Vec<u32> = (0..n).map(|i| (i % u64::from(items)) as u32).collect();
            let proto = Dpdg::new(n, items, 0.5, 1e-6, 4).unwrap();
            let lit = proto
                .simulate(&data, DpdsMode::Literal, n)
                .unwrap()
                .output
                .costs;
            let fast = proto
                .simulate(&data, DpdsMode::Fast, n)
                .unwrap()
                .output
                .costs;
            assert_eq!(lit, proto.closed_form_costs(), "n {n} N {items}");
            assert_eq!(fast, lit);
        }
    }

    #[test]
    fn dpdg_parameters_validated_and_field_documented() {
        let field = |e: FrequencyError| match e {
            FrequencyError::Param(crate::params::ParamError::OutOfRange { field, .. }) => field,
            e => panic!("{e:?}"),
        };
        assert_eq!(field(Dpdg::new(10, 2, 1.0, 1e-6, 4).unwrap_err()), "eps");
        assert_eq!(field(Dpdg::new(10, 2, 0.5, 0.0, 4).unwrap_err()), "delta");
        assert_eq!(
            field(Dpdg::new(10, 2, 0.5, 1e-6, 25).unwrap_err()),
            "frac_bits"
        );
        assert_eq!(field(Dpdg::new(0, 2, 0.5, 1e-6, 4).unwrap_err()), "n");
        let p = Dpdg::new(1000, 2, 0.5, 1e-6, 8).unwrap();
        let s2 = p.per_user_sigma2().unwrap();
        let exact = per_user_variance(1000, 0.5, 1e-6, 8);
        assert!(s2.to_f64() >= exact && s2.to_f64() - exact <= 1.0 / SIGMA2_DEN as f64);
        let q = p.modulus().q();
        assert!(q.is_power_of_two());
        let used = 2 * ((1000u128 << 8) + u128::from(p.noise_bound())) + 1;
        assert!(q >= used && q / 2 < used);
        assert_eq!(q, 1 << 20, "documented example in docs/frequency.md");
    }
}
