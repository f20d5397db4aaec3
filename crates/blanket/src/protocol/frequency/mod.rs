//! Fair, differentially private distributed frequency estimation by sampling and secret
//! sharing (Tjuawinata, Zhao, Lam, Yang, Zhu, "Fair and Differentially Private Distributed
//! Frequency Estimation", arXiv 2104.05974; spec `06-frequency.md`; `docs/frequency.md`).
//!
//! n users each hold one item of the domain {0, ..., N - 1}. Every protocol here estimates
//! psi_j = Pi_j / n (Pi_j = holders of item j) by Bernoulli(p) sampling of the users:
//!
//! * [`Dpcs`]: a trusted server keeps each record with probability p (Algorithm 1).
//! * [`Dpds`]: no trusted party; each user samples itself and n-party additively shares its
//!   sampled one-hot vector over Z_q (Algorithm 2), with a literal mode that materializes every
//!   share and a fast mode with the same output distribution ([`DpdsMode`]).
//! * [`Tss`]: two-stage sampling with two servers (Algorithm 3): users also sample a set of
//!   alpha N items to report, S1 elects helpers per item, helpers forward sums to S2; with a
//!   collusion threshold phi it is TSS' (every item gets at least phi + 1 helpers).
//! * [`Dpdg`]: the distributed Gaussian baseline: each user adds exact discrete Gaussian noise
//!   on a fixed-point grid (corrected per-user variance) and shares as in DPDS; worst-case
//!   (eps, delta), no data condition.
//!
//! **The guarantee is data-dependent.** Sampling hides a user only among the other holders of
//! its item, so (eps, delta) with eps = ln(1/(1 - p)) holds only for datasets in which every
//! item has at least beta n holders (seed Eq. (2)). Every protocol takes beta, counts the
//! items that violate the condition and refuses the data ([`ConditionPolicy::Refuse`], the
//! default) or, with [`ConditionPolicy::ReleaseWithViolations`], releases and names the
//! violations in every [`FrequencyReport`].

pub mod dpcs;
pub mod dpdg;
pub mod dpds;
pub mod tss;
pub mod tss_cost;

pub use dpcs::Dpcs;
pub use dpdg::Dpdg;
pub use dpds::{Dpds, DpdsMode, DpdsRun};
pub use tss::{Chi, Tss, TssMode, TssOutput};
pub use tss_cost::{TssCosts, TssTranscript};

use serde::Serialize;
use thiserror::Error;

use crate::field::FieldError;
use crate::params::ParamError;
use crate::sample::Bernoulli;

/// A parameter, an input or the data condition of a frequency protocol out of range.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FrequencyError {
    /// A parameter outside its range (the field is named: `p`, `beta`, `eps`, `items`, `n`).
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A modulus outside 2..=2^64.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// A user's item outside the domain.
    #[error("item of user {user} is {item}, outside the item domain 0..{items}")]
    ItemOutOfDomain {
        /// Index of the offending user.
        user: usize,
        /// The item it holds.
        item: u32,
        /// The domain size N.
        items: u32,
    },
    /// The field cannot hold a count of n users.
    #[error(
        "field q = {q} is too small for n = {n} users: q must be > n so that counts do not wrap"
    )]
    FieldTooSmall {
        /// The modulus.
        q: u128,
        /// The number of users.
        n: u64,
    },
    /// The data violate the data-dependent guarantee's condition and the policy is to refuse.
    #[error(
        "data condition violated: {count} of {items} items have fewer than beta n = {required} holders \
         (first: item {first_item} with {first_holders}); the guarantee would not hold for them. \
         Refused; pass ConditionPolicy::ReleaseWithViolations to release with the violation stated"
    )]
    ConditionViolated {
        /// Items violating the condition.
        count: usize,
        /// The domain size N.
        items: u32,
        /// ceil(beta n).
        required: u64,
        /// The first violating item.
        first_item: u32,
        /// Its number of holders.
        first_holders: u64,
    },
    /// The literal DPDS mode would materialize too many shares.
    #[error("literal DPDS mode materializes n^2 N = {shares} shares, above the limit {max}; use the fast mode (the same output, shares not materialized)")]
    LiteralTooLarge {
        /// n^2 N.
        shares: u128,
        /// [`dpds::LITERAL_MAX_SHARES`].
        max: u128,
    },
}

pub(crate) fn out_of_range(
    field: &'static str,
    allowed: &'static str,
    value: impl ToString,
) -> FrequencyError {
    FrequencyError::Param(ParamError::OutOfRange {
        field,
        allowed,
        value: value.to_string(),
    })
}

/// What to do with data that violate the condition "every item has at least beta n holders".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConditionPolicy {
    /// Refuse with [`FrequencyError::ConditionViolated`] (default).
    #[default]
    Refuse,
    /// Release anyway; every output lists the violating items.
    ReleaseWithViolations,
}

/// Validated sampling parameters shared by the sampling protocols: participation probability
/// p in (0, 1] (sampled exactly, [`Bernoulli`]) and the data condition's beta in (0, 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    p: f64,
    beta: f64,
    bernoulli: Bernoulli,
}

impl Sampling {
    /// Validates p in (0, 1] and beta in (0, 1).
    pub fn new(p: f64, beta: f64) -> Result<Self, FrequencyError> {
        if !(p > 0.0 && p <= 1.0) {
            return Err(out_of_range("p", "in (0, 1]", p));
        }
        if !(beta > 0.0 && beta < 1.0) {
            return Err(out_of_range("beta", "in the open interval (0, 1)", beta));
        }
        let bernoulli = Bernoulli::new(p)?;
        Ok(Self { p, beta, bernoulli })
    }

    /// p = 1 - e^-eps (the seed's eps = ln(1/(1 - p))), beta in (0, 1).
    pub fn from_epsilon(eps: f64, beta: f64) -> Result<Self, FrequencyError> {
        if !(eps.is_finite() && eps > 0.0) {
            return Err(out_of_range("eps", "a finite number > 0", eps));
        }
        Self::new(-(-eps).exp_m1(), beta)
    }

    /// The participation probability p (exactly the probability sampled).
    pub fn p(&self) -> f64 {
        self.p
    }

    /// beta.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// The exact Bernoulli(p) sampler.
    pub fn bernoulli(&self) -> Bernoulli {
        self.bernoulli
    }

    /// eps = ln(1/(1 - p)) (infinite for p = 1: no privacy).
    pub fn epsilon(&self) -> f64 {
        -(-self.p).ln_1p()
    }

    /// The derived delta = exp(-p (1 - p)^2 beta n / 3) (spec, [derived, not the paper's]).
    pub fn delta(&self, n: u64) -> f64 {
        (-self.p * (1.0 - self.p).powi(2) * self.beta * n as f64 / 3.0).exp()
    }

    /// ceil(beta n): the fewest holders an item may have.
    pub fn required_holders(&self, n: u64) -> u64 {
        (self.beta * n as f64).ceil() as u64
    }
}

/// Validated domain size N >= 1 for the frequency protocols.
pub(crate) fn check_items(items: u32) -> Result<(), FrequencyError> {
    if items == 0 {
        return Err(out_of_range("items", "an integer >= 1", items));
    }
    Ok(())
}

/// Pi_j for every item; rejects an item outside 0..N and an empty dataset.
pub fn holders(data: &[u32], items: u32) -> Result<Vec<u64>, FrequencyError> {
    check_items(items)?;
    if data.is_empty() {
        return Err(out_of_range("n", "at least one user", 0));
    }
    let mut pi = vec![0u64; items as usize];
    for (user, &item) in data.iter().enumerate() {
        check_item(user, item, items)?;
        pi[item as usize] += 1;
    }
    Ok(pi)
}

/// Rejects an item outside the domain 0..`items`, naming the user who holds it.
pub(crate) fn check_item(user: usize, item: u32, items: u32) -> Result<(), FrequencyError> {
    if item >= items {
        return Err(FrequencyError::ItemOutOfDomain { user, item, items });
    }
    Ok(())
}

/// An item with fewer than ceil(beta n) holders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The item.
    pub item: u32,
    /// Its holders Pi_j.
    pub holders: u64,
}

/// The kind of privacy guarantee an output carries.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GuaranteeKind {
    /// (eps, delta) only for datasets in which every item has >= `required_holders` =
    /// ceil(beta n) holders (and their neighbours); `violations` lists the items of this
    /// dataset that fail it (non-empty only under [`ConditionPolicy::ReleaseWithViolations`]).
    DataDependent {
        /// beta.
        beta: f64,
        /// ceil(beta n).
        required_holders: u64,
        /// Items below the threshold, with their holder counts.
        violations: Vec<Violation>,
    },
    /// Worst-case (eps, delta)-DP with no condition on the data (DPDG), given that every user
    /// adds its share of the noise.
    WorstCase,
}

/// Operation and communication counts of one role (see `docs/frequency.md`, "What is counted").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct RoleCost {
    /// Messages sent to another party (a vector to one recipient is one message).
    pub messages_sent: u64,
    /// Messages received from another party.
    pub messages_received: u64,
    /// Field elements (or item indices) sent to other parties.
    pub elements_sent: u64,
    /// Field elements received from other parties.
    pub elements_received: u64,
    /// Field elements a party "sends to itself" (DPDS: user k's own share s_(k,k)); not
    /// communicated, counted separately so that the seed's convention can be reproduced.
    pub elements_kept: u64,
    /// Random draws: Bernoulli(p) samples plus uniform field elements.
    pub random_samples: u64,
    /// Additions and subtractions in Z_q (or of integers).
    pub additions: u64,
    /// Multiplications (the server's scaling by 1/(p n), one per item).
    pub multiplications: u64,
}

/// Costs of one run per role. In DPCS and DPDS every user has the same cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Costs {
    /// One user (in DPDS a user is also the helper that aggregates the shares sent to it).
    pub per_user: RoleCost,
    /// The server.
    pub server: RoleCost,
}

/// The guarantee, parameters and predicted error attached to every output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrequencyReport {
    /// `dpcs`, `dpds`, `dpdg`, `tss` or `tss-prime`.
    pub protocol: &'static str,
    /// Users n.
    pub users: u64,
    /// Items N.
    pub items: u32,
    /// Participation probability p.
    pub p: f64,
    /// eps = ln(1/(1 - p)) (infinite for p = 1).
    pub epsilon: f64,
    /// delta = exp(-p (1 - p)^2 beta n / 3) [derived].
    pub delta: f64,
    /// Field modulus q (DPDS), none for DPCS.
    pub modulus: Option<u128>,
    /// Data-dependent, with the violations of this dataset.
    pub guarantee_kind: GuaranteeKind,
    /// Who is trusted with what.
    pub trust: &'static str,
    /// Predicted Var[psi_hat_j] = psi_j (1 - p) / (p n) per item [derived].
    pub predicted_variance: Vec<f64>,
    /// Worst case over psi_j <= 1: (1 - p) / (p n) = 1 / (n (e^eps - 1)).
    pub predicted_variance_worst: f64,
    /// Plain-language statements that travel with the output (always includes the
    /// data-dependence, the 0 vs 1 holder case, and every violation).
    pub notes: Vec<String>,
    /// Whether (epsilon, delta) is certified for everything the output's recipients see
    /// (data-dependent protocols: for datasets meeting the condition, which this one does).
    /// False when the condition is violated on this data (released with violations), when
    /// p = 1 or the noise is off, and for TSS/TSS' with adaptive chi (server S2 also sees
    /// helper counts that then depend on the data; not covered). Callers must not present
    /// an uncertified report as a guarantee.
    pub certified: bool,
}

/// An estimate with its report and costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrequencyEstimate {
    /// DPCS/DPDS: tau_hat_j, the sampled holders of item j (reconstructed by the server).
    /// DPDG: the noisy count psi_hat_j n rounded to the nearest integer, negatives to 0
    /// (exact counts when the noise is off).
    pub sampled_counts: Vec<u64>,
    /// psi_hat_j = tau_hat_j / (p n).
    pub estimate: Vec<f64>,
    /// The guarantee and prediction.
    pub report: FrequencyReport,
    /// Per-role counts.
    pub costs: Costs,
}

/// Checks the data condition, and builds the report (shared by the sampling protocols).
pub(crate) fn build_report(
    protocol: &'static str,
    trust: &'static str,
    sampling: &Sampling,
    policy: ConditionPolicy,
    pi: &[u64],
    modulus: Option<u128>,
) -> Result<FrequencyReport, FrequencyError> {
    let n: u64 = pi.iter().sum();
    let items = pi.len() as u32;
    let required = sampling.required_holders(n);
    let violations: Vec<Violation> = pi
        .iter()
        .enumerate()
        .filter(|&(_, &h)| h < required)
        .map(|(j, &h)| Violation {
            item: j as u32,
            holders: h,
        })
        .collect();
    if let (ConditionPolicy::Refuse, Some(first)) = (policy, violations.first()) {
        return Err(FrequencyError::ConditionViolated {
            count: violations.len(),
            items,
            required,
            first_item: first.item,
            first_holders: first.holders,
        });
    }
    let p = sampling.p();
    let nf = n as f64;
    let mut notes = vec![
        format!(
            "DATA-DEPENDENT GUARANTEE, NOT WORST-CASE DP: (eps, delta) = ({:.6}, {:.3e}) holds only \
             for datasets in which every item has at least beta n = {required} holders (beta = {}), \
             and for their add/remove neighbours; sampling hides a user only among the other holders \
             of its item.",
            sampling.epsilon(),
            sampling.delta(n),
            sampling.beta()
        ),
        format!(
            "An item with 0 vs 1 holders is not protected: with 0 holders its count is 0 with \
             probability 1, with 1 holder it is 1 with probability p = {p}, so no delta < p holds \
             for that pair; whether a lone user holds a rare item is revealed with probability p."
        ),
        "delta = exp(-p (1 - p)^2 beta n / 3) is derived in blanket (Chernoff bound), not stated \
         in the paper; eps = ln(1/(1 - p)) follows the seed's DPCS/DPDG comparison."
            .to_string(),
    ];
    if !violations.is_empty() {
        let list: Vec<String> = violations
            .iter()
            .take(20)
            .map(|v| format!("item {} ({} holders)", v.item, v.holders))
            .collect();
        notes.push(format!(
            "VIOLATION: {} of {items} items have fewer than {required} holders; NO privacy \
             guarantee holds for their holders. Released only because the caller asked for it. \
             Violating items{}: {}",
            violations.len(),
            if violations.len() > 20 {
                " (first 20)"
            } else {
                ""
            },
            list.join(", ")
        ));
    }
    if p >= 1.0 {
        notes.push("p = 1: every record is kept, so there is no privacy (eps is infinite).".into());
    }
    // delta rounds to 1 in f64 when p (1 - p)^2 beta n / 3 is tiny (p near 1): no guarantee.
    let certified = p < 1.0 && violations.is_empty() && sampling.delta(n) < 1.0;
    Ok(FrequencyReport {
        protocol,
        users: n,
        items,
        p,
        epsilon: sampling.epsilon(),
        delta: sampling.delta(n),
        modulus,
        guarantee_kind: GuaranteeKind::DataDependent {
            beta: sampling.beta(),
            required_holders: required,
            violations,
        },
        trust,
        predicted_variance: pi
            .iter()
            .map(|&h| (h as f64 / nf) * (1.0 - p) / (p * nf))
            .collect(),
        predicted_variance_worst: (1.0 - p) / (p * nf),
        notes,
        certified,
    })
}

/// psi_hat_j = tau_hat_j / (p n): N multiplications by the precomputed 1/(p n).
pub(crate) fn scale(counts: &[u64], p: f64, n: u64, cost: &mut RoleCost) -> Vec<f64> {
    let factor = 1.0 / (p * n as f64);
    cost.multiplications += counts.len() as u64;
    counts.iter().map(|&c| c as f64 * factor).collect()
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Shared helpers for the frequency tests.

    /// Sample variance of each coordinate over repetitions.
    pub fn variances(runs: &[Vec<f64>]) -> Vec<f64> {
        let r = runs.len() as f64;
        let k = runs[0].len();
        (0..k)
            .map(|j| {
                let mean = runs.iter().map(|x| x[j]).sum::<f64>() / r;
                runs.iter().map(|x| (x[j] - mean).powi(2)).sum::<f64>() / (r - 1.0)
            })
            .collect()
    }

    /// Items with holder counts `pi` (item j repeated pi[j] times, interleaved).
    pub fn data_with(pi: &[u64]) -> Vec<u32> {
        let mut d = Vec::new();
        for (j, &h) in pi.iter().enumerate() {
            d.extend(std::iter::repeat_n(j as u32, h as usize));
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 26: over eps log-spaced in 1e-3..1e4 (and several beta), a report that says
    /// certified has a finite eps and delta < 1; at large eps (p rounds to 1, or delta to
    /// 1) it says not certified.
    #[test]
    fn eps_sweep_never_certifies_delta_of_one_or_more() {
        let pi = [500_000u64, 500_000];
        let mut uncertified = 0;
        for i in 0..=28 {
            let eps = 10f64.powf(-3.0 + f64::from(i) / 4.0);
            for beta in [1e-6, 0.01, 0.4] {
                let s = Sampling::from_epsilon(eps, beta).unwrap();
                let r = build_report("dpcs", "t", &s, ConditionPolicy::Refuse, &pi, None).unwrap();
                if r.certified {
                    assert!(
                        r.delta < 1.0 && r.epsilon.is_finite(),
                        "eps={eps} beta={beta}: ({}, {})",
                        r.epsilon,
                        r.delta
                    );
                } else {
                    uncertified += 1;
                }
            }
        }
        assert!(
            uncertified > 0,
            "the large eps never reach p = 1 or delta = 1"
        );
    }

    fn field_of(e: FrequencyError) -> &'static str {
        match e {
            FrequencyError::Param(ParamError::OutOfRange { field, .. }) => field,
            other => panic!("expected a named parameter error, got {other:?}"),
        }
    }

    #[test]
    fn sampling_rejects_p_and_beta_out_of_range() {
        for p in [0.0, -0.1, 1.5, f64::NAN] {
            assert_eq!(field_of(Sampling::new(p, 0.1).unwrap_err()), "p");
        }
        assert!(Sampling::new(1.0, 0.1).is_ok());
        for beta in [0.0, 1.0, -0.5, 2.0, f64::NAN] {
            assert_eq!(field_of(Sampling::new(0.5, beta).unwrap_err()), "beta");
        }
        assert_eq!(
            field_of(Sampling::from_epsilon(0.0, 0.1).unwrap_err()),
            "eps"
        );
        let s = Sampling::from_epsilon(1.0, 0.1).unwrap();
        assert!((s.epsilon() - 1.0).abs() < 1e-12);
        assert!((s.p() - (1.0 - (-1.0f64).exp())).abs() < 1e-15);
    }

    #[test]
    fn holders_rejects_item_outside_domain_and_empty_data() {
        assert_eq!(
            holders(&[0, 3, 1], 3).unwrap_err(),
            FrequencyError::ItemOutOfDomain {
                user: 1,
                item: 3,
                items: 3
            }
        );
        assert_eq!(field_of(holders(&[], 3).unwrap_err()), "n");
        assert_eq!(field_of(holders(&[0], 0).unwrap_err()), "items");
        assert_eq!(holders(&[0, 2, 2], 4).unwrap(), vec![1, 0, 2, 0]);
    }

    #[test]
    fn report_refuses_violations_and_states_them_when_asked() {
        let s = Sampling::new(0.5, 0.2).unwrap();
        // n = 10, required 2; item 1 has 1 holder, item 3 has 0.
        let pi = [5, 1, 4, 0];
        let e = build_report("dpcs", "t", &s, ConditionPolicy::Refuse, &pi, None).unwrap_err();
        assert_eq!(
            e,
            FrequencyError::ConditionViolated {
                count: 2,
                items: 4,
                required: 2,
                first_item: 1,
                first_holders: 1
            }
        );
        assert!(e.to_string().contains("ReleaseWithViolations"));
        let r = build_report(
            "dpcs",
            "t",
            &s,
            ConditionPolicy::ReleaseWithViolations,
            &pi,
            None,
        )
        .unwrap();
        let GuaranteeKind::DataDependent {
            violations,
            required_holders,
            ..
        } = &r.guarantee_kind
        else {
            panic!("sampling protocols are data-dependent")
        };
        assert_eq!(*required_holders, 2);
        assert_eq!(
            violations,
            &vec![
                Violation {
                    item: 1,
                    holders: 1
                },
                Violation {
                    item: 3,
                    holders: 0
                }
            ]
        );
        assert!(r.notes.iter().any(|n| n.starts_with("VIOLATION: 2 of 4")));
        assert!(r.notes[0].contains("NOT WORST-CASE DP"));
        assert!(r.notes[1].contains("0 vs 1 holders"));
        // Satisfied data: no violation note, still data-dependent.
        let ok = build_report("dpcs", "t", &s, ConditionPolicy::Refuse, &[5, 5], None).unwrap();
        assert!(ok.notes.iter().all(|n| !n.starts_with("VIOLATION")));
        assert!(ok.notes[0].contains("DATA-DEPENDENT"));
        assert!((ok.predicted_variance[0] - 0.5 * 0.5 / (0.5 * 10.0)).abs() < 1e-15);
    }
}

#[cfg(test)]
mod scale_anchor {
    use super::*;
    use crate::rng::simulation_rng;
    use std::time::Instant;

    /// Realistic-scale anchor (ignored by default; `cargo test -p blanket --lib
    /// frequency_scale_anchor -- --ignored --nocapture`): DPCS at n = 10^6, DPDS fast mode at
    /// n = 10^5, N = 10^3, DPDG fast mode at n = 10^4, N = 10^2; prints wall times.
    #[test]
    #[ignore]
    fn frequency_scale_anchor() {
        let items = 1000u32;
        let s = Sampling::from_epsilon(0.5, 1e-4).unwrap();
        let data: Vec<u32> = (0..1_000_000u32).map(|i| i % items).collect();
        let t = Instant::now();
        let out = Dpcs::new(items, s, ConditionPolicy::Refuse)
            .unwrap()
            .simulate(&data, &mut simulation_rng(1))
            .unwrap();
        eprintln!("dpcs n=1e6 N=1e3: {:?}", t.elapsed());
        assert_eq!(out.estimate.len(), 1000);
        let data = &data[..100_000];
        let t = Instant::now();
        let run = Dpds::new(100_000, items, s, 1 << 32, ConditionPolicy::Refuse)
            .unwrap()
            .simulate(data, DpdsMode::Fast, 1)
            .unwrap();
        eprintln!("dpds fast n=1e5 N=1e3: {:?}", t.elapsed());
        assert_eq!(run.output.costs.per_user.elements_sent, 100_000 * 1000);
        let data: Vec<u32> = (0..10_000u32).map(|i| i % 100).collect();
        let t = Instant::now();
        Dpdg::new(10_000, 100, 0.5, 1e-6, 8)
            .unwrap()
            .simulate(&data, DpdsMode::Fast, 1)
            .unwrap();
        eprintln!(
            "dpdg fast n=1e4 N=1e2 (1e6 discrete Gaussians): {:?}",
            t.elapsed()
        );
    }
}
