//! `--protocol vector-sum` and `--protocol ikos-sum` over the clients' own shuffle: each
//! client runs the protocol's real randomizer, its messages are encoded as `u64` plaintexts
//! of the ElGamal message space (`docs/protocol.md`, "Message space"), and the run ends with
//! the estimate and the guarantee certified for the honest, present users only
//! (n' = n - floor(alpha n) - floor(gamma n); `docs/protocol.md`, "What the guarantee covers").

use anyhow::{bail, Result};
use blanket::analyzer::Aggregator;
use blanket::protocol::ikos::m_required;
use blanket::protocol::ikos_sum::IkosSum;
use blanket::protocol::{DomainConvention, UnitVectors, VectorCalibration, VectorSum};
use blanket_protocol::relay::RunOutput;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use serde::Serialize;

/// A vector-sum message (coordinate j < 2^26, level y <= k < 2^32) as one plaintext:
/// `j << 32 | y`.
pub fn encode_pair(j: u32, y: u32) -> u64 {
    (u64::from(j) << 32) | u64::from(y)
}

/// The pair of a plaintext, if it is a message of the protocol (j < d, y <= k).
pub fn decode_pair(msg: u64, d: u32, k: u32) -> Option<(u32, u32)> {
    let j = (msg >> 32) as u32;
    let y = (msg & 0xffff_ffff) as u32;
    (j < d && y <= k).then_some((j, y))
}

/// A uniform value in [0, 1] (53 bits) for the simulated inputs.
fn unit(rng: &mut rand_chacha::ChaCha20Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Which clients' inputs a truth is summed over.
pub struct Populations<'a> {
    /// Clients whose submission was accepted (honest and malicious).
    pub accepted: &'a [u32],
    /// Whether a client is honest (in the simulation's fates).
    pub honest: &'a dyn Fn(u32) -> bool,
}

// ---------------------------------------------------------------------------------------
// vector sum

pub struct VectorRun {
    proto: VectorSum,
    cal: VectorCalibration,
    data: UnitVectors,
    users: u64,
    bound: Option<super::AlternatingBoundJson>,
}

#[derive(Serialize)]
pub struct VectorSumJson {
    pub d: u32,
    pub t: u32,
    pub k: u32,
    pub gamma: f64,
    /// The n the guarantee is calibrated and certified for: the honest, present users
    /// (n - dropout bound - malicious bound).
    pub users: u64,
    pub certified_epsilon: f64,
    /// Unconditional: `certified_delta_given_private_shuffle` + 2^-sigma, rounded up.
    pub certified_delta: f64,
    /// The delta given that the shuffle is private (probability >= 1 - 2^-sigma).
    pub certified_delta_given_private_shuffle: f64,
    pub method: String,
    /// Estimated sum vector (Algorithm 3) from the decrypted, shuffled messages.
    pub estimate_sum: Vec<f64>,
    /// True sum over the honest clients whose submission was accepted.
    pub truth_sum_honest: Vec<f64>,
    /// True sum over every accepted client (malicious clients in the simulation run the
    /// randomizer on their own input; they are in the output, not in the blanket).
    pub truth_sum_accepted: Vec<f64>,
    /// Squared error of the estimated mean vector against the accepted clients' mean,
    /// summed over coordinates, and its exact prediction for their data.
    pub mse_mean: f64,
    pub predicted_mse_mean: f64,
    /// Largest shift of one coordinate of the estimated sum (and of its L1 norm) one
    /// malicious client can cause with its t in-range messages: d (1 - gamma/2) / (1 - gamma).
    pub malicious_shift_per_client: f64,
    /// Decrypted plaintexts that are not (j < d, y <= k) pairs (dropped by the analyzer).
    pub out_of_domain: usize,
    /// Alternating variant only (t = 1): how the guarantee was certified with bad cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alternating: Option<super::AlternatingBoundJson>,
}

/// Calibrates vector sum for `n_blanket` users and runs every client's randomizer.
///
/// `alternating`: the alternating variant's accountant, to name the bound that certified
/// the guarantee (t = 1: one GRR report over d (k + 1) pairs per client).
#[allow(clippy::too_many_arguments)]
pub fn vector_inputs(
    d: u64,
    t: u64,
    k: Option<u64>,
    target: &blanket::calibrate::Target,
    clients: u32,
    seed: u64,
    accountant: &dyn blanket::accounting::ShuffleAccountant,
    alternating: Option<&blanket::accounting::AlternatingBadCells<blanket::accounting::Best>>,
) -> Result<(VectorRun, Vec<Vec<u64>>)> {
    use blanket::params::Precision;
    let k = k.map(Precision::new).transpose()?;
    let (proto, cal) = VectorSum::calibrate(
        d,
        Some(t),
        k,
        DomainConvention::TrueDomain,
        target,
        accountant,
    )?;
    let bound = match alternating {
        None => None,
        Some(acct) => {
            let eps = cal
                .certified
                .as_ref()
                .map_or(target.eps.get(), |g| g.epsilon);
            let m = cal.requirement.m.get();
            Some(super::alternating_bound_json(
                acct,
                m,
                cal.gamma.get(),
                eps,
            )?)
        }
    };
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed ^ 0x5645_4354);
    let flat: Vec<f64> = (0..u64::from(clients) * d)
        .map(|_| unit(&mut rng))
        .collect();
    let data = UnitVectors::from_flat(d, &flat)?;
    let mut scratch = Vec::new();
    let mut inputs = Vec::with_capacity(clients as usize);
    for i in 0..clients as usize {
        let mut r = blanket::rng::simulation_stream(seed ^ 0x5645_4354, i as u64);
        let mut msgs = Vec::with_capacity(t as usize);
        proto.randomize_row_simulated(data.row(i), &mut r, &mut scratch, |(j, y)| {
            msgs.push(encode_pair(j, y))
        });
        if msgs.len() != t as usize {
            bail!(
                "client {i}: the vector-sum randomizer sent {} messages, expected t = {t}",
                msgs.len()
            );
        }
        inputs.push(msgs);
    }
    Ok((
        VectorRun {
            proto,
            cal,
            data,
            users: target.n.get(),
            bound,
        },
        inputs,
    ))
}

impl VectorRun {
    /// Messages per client (t).
    pub fn messages(&self) -> u32 {
        self.proto.t()
    }

    pub fn estimate(&self, out: &RunOutput, pop: &Populations) -> Result<VectorSumJson> {
        let (d, k) = (self.proto.d(), self.proto.k().get());
        let mut state = self.proto.aggregator();
        let mut out_of_domain = 0;
        for &msg in &out.messages {
            match decode_pair(msg, d, k) {
                Some(m) => state.absorb(m)?,
                None => out_of_domain += 1,
            }
        }
        let est = self.proto.estimate(&state)?;
        let sum_over = |keep: &dyn Fn(u32) -> bool| -> Vec<f64> {
            let mut s = vec![0.0; d as usize];
            for &c in pop.accepted.iter().filter(|&&c| keep(c)) {
                for (a, x) in s.iter_mut().zip(self.data.row(c as usize)) {
                    *a += x.get();
                }
            }
            s
        };
        let truth_sum_honest = sum_over(pop.honest);
        let truth_sum_accepted = sum_over(&|_| true);
        let mut counts = vec![0u64; self.data.len()];
        for &c in pop.accepted {
            counts[c as usize] = 1;
        }
        let na = pop.accepted.len().max(1) as f64;
        let mse_mean = est
            .mean
            .iter()
            .zip(&truth_sum_accepted)
            .map(|(m, s)| (m - s / na).powi(2))
            .sum();
        let Some(g) = self.cal.certified.as_ref() else {
            bail!("the accountant certifies no guarantee for vector sum at these parameters");
        };
        let gamma = self.proto.gamma().get();
        Ok(VectorSumJson {
            d,
            t: self.proto.t(),
            k,
            gamma,
            users: self.users,
            certified_epsilon: g.epsilon,
            certified_delta: g.delta,
            certified_delta_given_private_shuffle: g.delta,
            method: match &self.bound {
                None => g.method.name().to_string(),
                Some(b) => format!("alternating-bad-cells ({})", b.bound),
            },
            estimate_sum: est.sum,
            truth_sum_honest,
            truth_sum_accepted,
            mse_mean,
            predicted_mse_mean: self.proto.exact_mean_mse_weighted(&self.data, &counts),
            malicious_shift_per_client: f64::from(d) * (1.0 - gamma / 2.0) / (1.0 - gamma),
            out_of_domain,
            alternating: self.bound.clone(),
        })
    }
}

// ---------------------------------------------------------------------------------------
// IKOS DP sum

pub struct IkosRun {
    proto: IkosSum,
    shares: u32,
    shares_required_blanket: u32,
    xs: Vec<f64>,
    users: u64,
}

#[derive(Serialize)]
pub struct IkosSumJson {
    /// The honest, present users the guarantee covers (n'): the noise is scaled so that
    /// their Polya noise alone sums to the discrete Laplace, and split-and-mix is
    /// sigma-secure for their shares.
    pub users: u64,
    pub precision: u32,
    pub modulus_bits: u32,
    /// Shares per client m = max(m_required(n, q, sigma), m_required(n', q, sigma)).
    pub shares: u32,
    /// m_required(n', q, sigma): split-and-mix sigma-secure for the n' honest, present users.
    pub shares_required_blanket: u32,
    pub sigma: u32,
    /// epsilon (sensitivity 1 on the real sum; alpha rounded up) and the unconditional
    /// delta = (1 + e^eps) 2^-sigma + 2^-sigma (the shuffle's failure), rounded up.
    pub certified_epsilon: f64,
    pub certified_delta: f64,
    /// (1 + e^eps) 2^-sigma, the delta given that the shuffle is private.
    pub certified_delta_given_private_shuffle: f64,
    pub method: &'static str,
    pub estimate: f64,
    pub truth_honest: f64,
    pub truth_accepted: f64,
    /// Predicted RMSE of the estimate against the accepted clients' sum (rounding <= 1/4
    /// per client plus the noise of every accepted client), upper bound.
    pub predicted_rmse: f64,
    /// One malicious client's shares can move the decoded sum to any value of the
    /// decoder's window [-q/4, 3q/4): its shift is bounded only by q / p.
    pub malicious_shift_per_client: f64,
    /// Decrypted plaintexts >= q (dropped by the analyzer).
    pub out_of_domain: usize,
}

/// The IKOS sum for n clients, noise and split-and-mix security for n' = `honest` of them.
pub fn ikos_inputs(
    eps: f64,
    sigma: u32,
    honest: u64,
    clients: u32,
    seed: u64,
) -> Result<(IkosRun, Vec<Vec<u64>>)> {
    let proto = IkosSum::with_options(u64::from(clients), eps, sigma, honest, None)?;
    let q = proto.ikos().modulus();
    let core = proto.ikos().shares();
    let shares_required_blanket = m_required(honest, q, sigma)?;
    let shares = core.max(shares_required_blanket);
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed ^ 0x494b_4f53);
    let xs: Vec<f64> = (0..clients).map(|_| unit(&mut rng)).collect();
    let mut inputs = Vec::with_capacity(clients as usize);
    for (i, &x) in xs.iter().enumerate() {
        let mut r = blanket::rng::simulation_stream(seed ^ 0x494b_4f53, i as u64);
        let mut s = proto.randomize_simulated(x, &mut r)?;
        if shares > core {
            // Re-split the last share into shares - core + 1 fresh additive shares: the
            // result is m uniform shares conditioned on their sum, the law of a fresh
            // m-way split of the same encoded value.
            let Some(last) = s.pop() else {
                bail!("the IKOS randomizer returned no share");
            };
            s.extend(q.share(last, (shares - core + 1) as usize, &mut r)?);
        }
        inputs.push(s);
    }
    Ok((
        IkosRun {
            proto,
            shares,
            shares_required_blanket,
            xs,
            users: honest,
        },
        inputs,
    ))
}

impl IkosRun {
    /// Shares per client m.
    pub fn messages(&self) -> u32 {
        self.shares
    }

    pub fn estimate(&self, out: &RunOutput, pop: &Populations) -> Result<IkosSumJson> {
        let mut state = self.proto.analyzer();
        let q = self.proto.ikos().modulus();
        let mut out_of_domain = 0;
        for &msg in &out.messages {
            if q.contains(msg) {
                state.absorb(msg)?;
            } else {
                out_of_domain += 1;
            }
        }
        let estimate = self.proto.estimate(&state)?;
        let truth = |keep: &dyn Fn(u32) -> bool| -> f64 {
            pop.accepted
                .iter()
                .filter(|&&c| keep(c))
                .map(|&c| self.xs[c as usize])
                .sum()
        };
        let report = self.proto.report();
        let p = f64::from(report.precision);
        let acc = pop.accepted.len() as u64;
        let predicted_mse = (acc as f64 / 4.0 + self.proto.noise_variance(acc)) / (p * p);
        Ok(IkosSumJson {
            users: self.users,
            precision: report.precision,
            modulus_bits: report.modulus.trailing_zeros(),
            shares: self.shares,
            shares_required_blanket: self.shares_required_blanket,
            sigma: report.sigma,
            certified_epsilon: report.epsilon,
            certified_delta: report.delta,
            certified_delta_given_private_shuffle: report.delta,
            method: "discrete Laplace from Polya noise of the n' honest, present clients (alpha rounded up) + split-and-mix statistical distance 2^-sigma (docs/protocol.md)",
            estimate,
            truth_honest: truth(pop.honest),
            truth_accepted: truth(&|_| true),
            predicted_rmse: predicted_mse.sqrt(),
            malicious_shift_per_client: report.modulus as f64 / p,
            out_of_domain,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_round_trip_and_out_of_range_pairs_are_refused() {
        for (j, y) in [(0, 0), (5, 3), ((1 << 26) - 1, u32::MAX)] {
            assert_eq!(
                decode_pair(encode_pair(j, y), 1 << 26, u32::MAX),
                Some((j, y))
            );
        }
        assert_eq!(encode_pair(2, 7), (2 << 32) | 7);
        assert_eq!(decode_pair(encode_pair(4, 1), 4, 3), None);
        assert_eq!(decode_pair(encode_pair(3, 4), 4, 3), None);
        assert_eq!(decode_pair(u64::MAX, 1 << 26, u32::MAX), None);
    }
}
