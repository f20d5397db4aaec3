//! DPCS: differentially private central sampling (Tjuawinata et al., Algorithm 1; spec
//! `06-frequency.md`, "DPCS").
//!
//! Roles: each user sends its item to a trusted server ([`Dpcs::user_message`]); the server
//! keeps each record independently with probability p (exact [`crate::sample::Bernoulli`]),
//! counts the kept records per item, tau_hat_j ~ Bin(Pi_j, p), and outputs
//! psi_hat_j = tau_hat_j / (p n). Unbiased, Var[psi_hat_j] = psi_j (1 - p) / (p n).
//! The server sees every record: the guarantee is towards the *output's* recipients only, and
//! it is data-dependent (module docs of [`super`]).

use rand_core::CryptoRng;

use super::{
    build_report, check_items, holders, scale, ConditionPolicy, Costs, FrequencyError,
    FrequencyEstimate, RoleCost, Sampling,
};
use crate::rng::{SecureRng, SimulationRng};

/// The trust statement of DPCS.
pub const TRUST: &str = "trusted server: sees every user's item; the output is private \
                         (data-dependent) towards everyone else";

/// DPCS over items 0..N with sampling parameters and a condition policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dpcs {
    items: u32,
    sampling: Sampling,
    policy: ConditionPolicy,
}

impl Dpcs {
    /// Validates N >= 1.
    pub fn new(
        items: u32,
        sampling: Sampling,
        policy: ConditionPolicy,
    ) -> Result<Self, FrequencyError> {
        check_items(items)?;
        Ok(Self {
            items,
            sampling,
            policy,
        })
    }

    /// User role: the message to the server, the item itself (one message, one element).
    pub fn user_message(&self, item: u32, cost: &mut RoleCost) -> Result<u32, FrequencyError> {
        super::check_item(0, item, self.items)?;
        cost.messages_sent += 1;
        cost.elements_sent += 1;
        Ok(item)
    }

    /// Server role with OS randomness: sample, count, estimate.
    pub fn server(
        &self,
        records: &[u32],
        rng: &mut SecureRng,
    ) -> Result<FrequencyEstimate, FrequencyError> {
        self.server_with(records, rng)
    }

    /// [`Dpcs::server`] with simulation randomness.
    pub fn server_simulated(
        &self,
        records: &[u32],
        rng: &mut SimulationRng,
    ) -> Result<FrequencyEstimate, FrequencyError> {
        self.server_with(records, rng)
    }

    /// The whole protocol (users then server) on simulation randomness.
    pub fn simulate(
        &self,
        data: &[u32],
        rng: &mut SimulationRng,
    ) -> Result<FrequencyEstimate, FrequencyError> {
        let mut user = RoleCost::default();
        let mut records = Vec::with_capacity(data.len());
        for (i, &x) in data.iter().enumerate() {
            let mut c = RoleCost::default();
            records.push(self.user_message(x, &mut c).map_err(|e| match e {
                FrequencyError::ItemOutOfDomain { item, items, .. } => {
                    FrequencyError::ItemOutOfDomain {
                        user: i,
                        item,
                        items,
                    }
                }
                e => e,
            })?);
            user = c;
        }
        let mut out = self.server_with(&records, rng)?;
        out.costs.per_user = user;
        Ok(out)
    }

    fn server_with<R: CryptoRng + ?Sized>(
        &self,
        records: &[u32],
        rng: &mut R,
    ) -> Result<FrequencyEstimate, FrequencyError> {
        let pi = holders(records, self.items)?;
        let report = build_report("dpcs", TRUST, &self.sampling, self.policy, &pi, None)?;
        let n = records.len() as u64;
        let bernoulli = self.sampling.bernoulli();
        let mut server = RoleCost {
            messages_received: n,
            elements_received: n,
            ..RoleCost::default()
        };
        let mut counts = vec![0u64; self.items as usize];
        for &x in records {
            let b = bernoulli.sample(rng);
            server.random_samples += 1;
            counts[x as usize] += u64::from(b);
            server.additions += 1;
        }
        let estimate = scale(&counts, self.sampling.p(), n, &mut server);
        Ok(FrequencyEstimate {
            sampled_counts: counts,
            estimate,
            report,
            costs: Costs {
                per_user: RoleCost::default(),
                server,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{data_with, variances};
    use super::*;
    use crate::rng::simulation_rng;
    use rand_core::RngCore;

    #[test]
    fn dpcs_noise_off_reconstructs_exact_counts() {
        let mut rng = simulation_rng(11);
        for trial in 0..20u64 {
            let items = 1 + (trial % 7) as u32;
            let n = 1 + (rng.next_u64() % 200) as usize;
            let data: Vec<u32> = (0..n)
                .map(|_| (rng.next_u64() % u64::from(items)) as u32)
                .collect();
            let pi = holders(&data, items).unwrap();
            let s = Sampling::new(1.0, 1e-9).unwrap();
            let out = Dpcs::new(items, s, ConditionPolicy::ReleaseWithViolations)
                .unwrap()
                .simulate(&data, &mut rng)
                .unwrap();
            assert_eq!(out.sampled_counts, pi);
            for (e, &h) in out.estimate.iter().zip(&pi) {
                assert!((e - h as f64 / n as f64).abs() < 1e-12);
            }
        }
    }

    /// Var[psi_hat_j] = psi_j (1 - p) / (p n): 4000 repetitions, n = 1000; the sample
    /// variance's relative standard error is about sqrt(2/4000) = 2.2%; tolerance 12%.
    #[test]
    fn dpcs_observed_variance_matches_formula() {
        let pi = [500u64, 300, 150, 50];
        let data = data_with(&pi);
        let s = Sampling::from_epsilon(1.0, 0.04).unwrap();
        let proto = Dpcs::new(4, s, ConditionPolicy::Refuse).unwrap();
        let mut rng = simulation_rng(2026);
        let runs: Vec<Vec<f64>> = (0..4000)
            .map(|_| proto.simulate(&data, &mut rng).unwrap().estimate)
            .collect();
        let report = proto.simulate(&data, &mut rng).unwrap().report;
        let obs = variances(&runs);
        for (j, (o, pr)) in obs.iter().zip(&report.predicted_variance).enumerate() {
            let ratio = o / pr;
            eprintln!("item {j}: observed {o:.4e} predicted {pr:.4e} ratio {ratio:.4}");
            assert!(
                (ratio - 1.0).abs() < 0.12,
                "item {j}: observed {o:.3e}, predicted {pr:.3e}, ratio {ratio:.3}"
            );
        }
    }

    #[test]
    fn dpcs_refuses_violating_data_without_the_flag() {
        let s = Sampling::new(0.5, 0.1).unwrap();
        let data = data_with(&[30, 0, 70]);
        let e = Dpcs::new(3, s, ConditionPolicy::Refuse)
            .unwrap()
            .simulate(&data, &mut simulation_rng(1))
            .unwrap_err();
        assert!(matches!(
            e,
            FrequencyError::ConditionViolated {
                count: 1,
                first_item: 1,
                first_holders: 0,
                required: 10,
                ..
            }
        ));
        let out = Dpcs::new(3, s, ConditionPolicy::ReleaseWithViolations)
            .unwrap()
            .simulate(&data, &mut simulation_rng(1))
            .unwrap();
        assert!(out
            .report
            .notes
            .iter()
            .any(|n| n.contains("item 1 (0 holders)")));
        let e = Dpcs::new(3, s, ConditionPolicy::Refuse)
            .unwrap()
            .simulate(&[0, 5], &mut simulation_rng(1))
            .unwrap_err();
        assert_eq!(
            e,
            FrequencyError::ItemOutOfDomain {
                user: 1,
                item: 5,
                items: 3
            }
        );
    }

    #[test]
    fn dpcs_cost_counters_equal_closed_forms() {
        for (n, items) in [(1u64, 1u32), (7, 3), (50, 5)] {
            let data: Vec<u32> = (0..n).map(|i| (i % u64::from(items)) as u32).collect();
            let s = Sampling::new(0.3, 1e-9).unwrap();
            let c = Dpcs::new(items, s, ConditionPolicy::ReleaseWithViolations)
                .unwrap()
                .simulate(&data, &mut simulation_rng(n))
                .unwrap()
                .costs;
            let user = RoleCost {
                messages_sent: 1,
                elements_sent: 1,
                ..RoleCost::default()
            };
            let server = RoleCost {
                messages_received: n,
                elements_received: n,
                random_samples: n,
                additions: n,
                multiplications: u64::from(items),
                ..RoleCost::default()
            };
            assert_eq!(c.per_user, user);
            assert_eq!(c.server, server);
        }
    }
}
