//! The relay's release: the task's DP protocol (calibrated at creation for the honest,
//! present users n' = n - floor(alpha n) - floor(gamma n) by
//! [`blanket_protocol::release::calibrate_histogram`], the same code as `blanket protocol
//! run --protocol histogram`), its randomizer for the clients, and the estimate from the
//! decrypted multiset with the certified guarantee (`docs/protocol.md`, "Over the network").

use super::api::{RandomizerJson, ReleaseJson, TaskSpec};
use blanket::analyzer::Aggregator;
use blanket_protocol::params::Variant;
use blanket_protocol::relay::RunOutput;
use blanket_protocol::release::{blanket_users, HistogramRelease, TRUST, TRUST_ALTERNATING};
use blanket_protocol::ProtocolParams;

/// Appended to the trust statement of a release of an open task.
pub const TRUST_OPEN: &str = " Admission was OPEN: anyone who knew the task id could \
register, so the bound of gamma n malicious clients was not enforced by the operator (one \
party registering more clients voids the guarantee).";

/// The trust statement of a task's release: the variant's, and for an open task
/// (`admission: open`) that nobody enforced the malicious bound ([`TRUST_OPEN`]).
pub fn trust_of(spec: &TaskSpec, params: &ProtocolParams) -> String {
    let base = match params.variant {
        Variant::Amortized => TRUST,
        Variant::Alternating => TRUST_ALTERNATING,
    };
    match spec.admission() {
        Ok(super::api::Admission::Tokens) => base.to_string(),
        _ => format!("{base}{TRUST_OPEN}"),
    }
}

/// The randomizer clients fetch from the task.
pub fn randomizer_json(plan: &HistogramRelease) -> RandomizerJson {
    RandomizerJson {
        protocol: "histogram".into(),
        domain: u64::from(plan.h.randomizer().m().get()),
        gamma: plan.cal.gamma.get(),
    }
}

/// The estimate from the decrypted multiset, with the certified guarantee for n' users.
pub fn release_json(
    plan: &HistogramRelease,
    spec: &TaskSpec,
    params: &ProtocolParams,
    out: &RunOutput,
) -> ReleaseJson {
    let m = u64::from(plan.h.randomizer().m().get());
    let mut state = plan.h.aggregator();
    let mut out_of_domain = 0;
    for &msg in &out.messages {
        // Reports outside the domain come only from malicious clients: dropped.
        match u32::try_from(msg) {
            Ok(y) if u64::from(y) < m && state.absorb(y).is_ok() => {}
            _ => out_of_domain += 1,
        }
    }
    let (estimate, reports) = match plan.h.estimate(&state) {
        Ok(e) => (e.counts, e.reports),
        Err(_) => (vec![0.0; m as usize], 0),
    };
    let (certified_epsilon, certified_delta) = plan
        .cal
        .certified
        .as_ref()
        .map_or((f64::INFINITY, 1.0), |g| (g.epsilon, g.delta));
    ReleaseJson {
        protocol: "histogram".into(),
        estimate,
        reports,
        out_of_domain,
        population: blanket_users(params),
        target_epsilon: spec.eps.unwrap_or(f64::NAN),
        target_delta: spec.delta.unwrap_or(f64::NAN),
        certified_epsilon,
        certified_delta,
        method: plan.method(),
        shuffle_failure: 2f64.powi(-(params.sigma as i32)),
        trust: trust_of(spec, params),
        predicted_rmse: plan.cal.predicted_mse.sqrt(),
        release_id: None,
        budget: None,
    }
}

/// The core's histogram randomizer of a task (`GET /relay/tasks/{task}`, key `randomizer`).
pub fn histogram_of(
    rz: &RandomizerJson,
) -> Result<blanket::protocol::histogram::Histogram, String> {
    if rz.protocol != "histogram" {
        return Err(format!(
            "the task's protocol {} is not supported by this client (histogram)",
            rz.protocol
        ));
    }
    let m = blanket::params::DomainSize::new(rz.domain).map_err(|e| e.to_string())?;
    let gamma = blanket::params::Gamma::new(rz.gamma).map_err(|e| e.to_string())?;
    Ok(blanket::protocol::histogram::Histogram::new(m, gamma))
}

/// A real client's message: its category randomized with the task's GRR (OS randomness).
pub fn randomize_value(rz: &RandomizerJson, value: u64) -> Result<u64, String> {
    let h = histogram_of(rz)?;
    let category = u32::try_from(value)
        .ok()
        .filter(|&c| u64::from(c) < rz.domain)
        .ok_or_else(|| {
            format!(
                "--value {value} is not a category of the task's histogram (allowed: 0..={})",
                rz.domain.saturating_sub(1)
            )
        })?;
    let mut rng = blanket::rng::SecureRng::from_os().map_err(|e| e.to_string())?;
    h.randomize(category, &mut rng)
        .map(u64::from)
        .map_err(|e| e.to_string())
}

/// Simulated clients' messages (seeded): client i's category is drawn from `seed` and
/// randomized with the task's GRR on the simulation stream (seed, i), as `blanket protocol
/// run --protocol histogram` does.
pub fn simulated_inputs(
    rz: &RandomizerJson,
    clients: u32,
    seed: u64,
) -> Result<Vec<Vec<u64>>, String> {
    use rand_chacha03::rand_core::{RngCore, SeedableRng};
    let h = histogram_of(rz)?;
    let mut rng = rand_chacha03::ChaCha20Rng::seed_from_u64(seed ^ 0x4849_5354);
    (0..clients)
        .map(|i| {
            let c = (rng.next_u64() % rz.domain) as u32;
            let mut r = blanket::rng::simulation_stream(seed, u64::from(i));
            h.randomize_simulated(c, &mut r)
                .map(|y| vec![u64::from(y)])
                .map_err(|e| e.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_task_says_so_in_its_trust_statement() {
        let tokens = TaskSpec {
            admission: Some("tokens".into()),
            ..TaskSpec::new(30)
        };
        let open = TaskSpec {
            admission: Some("open".into()),
            ..TaskSpec::new(30)
        };
        let params = tokens.params().unwrap();
        assert_eq!(trust_of(&tokens, &params), TRUST);
        assert!(trust_of(&open, &params).ends_with(TRUST_OPEN));
        // A stored spec from before admission existed was open.
        assert!(trust_of(&TaskSpec::new(30), &params).ends_with(TRUST_OPEN));
    }
}
