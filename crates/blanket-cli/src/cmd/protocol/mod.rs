//! `blanket protocol run`: the clients' own verifiable shuffle (issue 16;
//! spec `05-secure-shuffle.md`), run in memory with dropouts and malicious
//! clients, and its costs beside the paper's reference figures.

use crate::usage_bail;
use anyhow::{bail, Context, Result};
use blanket::protocol::IkosSumError;
use blanket_protocol::driver::{self, SimConfig, ALL_BEHAVIOURS};
use blanket_protocol::ProtocolParams;
use blanket_server::relay::api::one_release_delta;
use rand_chacha::rand_core::{RngCore, SeedableRng};

use super::common::spinner;
use payload::Populations;

mod args;
mod payload;
mod report;
use crate::output::print_json;
pub use args::{DpProtocol, ProtocolCommand, ProtocolRunArgs, Variant};
pub(crate) use report::AlternatingBoundJson;
use report::HistogramJson;

struct HistogramRun {
    rel: blanket_protocol::release::HistogramRelease,
    categories: Vec<u32>,
    bound: Option<AlternatingBoundJson>,
}

/// The honest, present users n' = n - floor(alpha n) - floor(gamma n) the guarantee covers.
fn blanket_users(params: &ProtocolParams) -> u64 {
    blanket_protocol::release::blanket_users(params)
}

/// The calibration target of --protocol: --eps, --delta, n' honest, present users.
fn protocol_target(
    a: &ProtocolRunArgs,
    params: &ProtocolParams,
) -> Result<blanket::calibrate::Target> {
    let (Some(eps), Some(delta)) = (a.eps, a.delta) else {
        usage_bail!("--protocol needs --eps and --delta");
    };
    Ok(blanket_protocol::release::target(params, eps, delta)?)
}

/// Calibrate the histogram for the blanket users (shared with the relay:
/// [`blanket_protocol::release::calibrate_histogram`]) and randomize every client's category.
fn histogram_inputs(a: &ProtocolRunArgs, params: &ProtocolParams) -> Result<HistogramRun> {
    let (Some(eps), Some(delta)) = (a.eps, a.delta) else {
        usage_bail!("--protocol needs --eps and --delta");
    };
    let rel = blanket_protocol::release::calibrate_histogram(params, a.domain, eps, delta)
        .with_context(|| match a.variant {
            Variant::Alternating => no_alternating_guarantee("histogram", params),
            Variant::Amortized => "calibrating --protocol histogram".into(),
        })?;
    let bound = rel.bound.clone().map(AlternatingBoundJson::from);
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(a.seed ^ 0x4849_5354);
    let categories: Vec<u32> = (0..params.clients)
        .map(|_| (rng.next_u64() % a.domain) as u32)
        .collect();
    Ok(HistogramRun {
        rel,
        categories,
        bound,
    })
}

/// The accountant of the alternating variant ([`blanket_protocol::release::alternating_accountant`]).
pub(crate) fn alternating_accountant(
    params: &ProtocolParams,
) -> Result<blanket::accounting::AlternatingBadCells<blanket::accounting::Best>> {
    Ok(blanket_protocol::release::alternating_accountant(params)?)
}

/// The error context when the alternating variant certifies nothing.
pub(crate) fn no_alternating_guarantee(protocol: &str, params: &ProtocolParams) -> String {
    format!(
        "no certified guarantee for --protocol {protocol} over the alternating shuffler with up to {} malicious cells and {} dropped-out clients among {} (worst placement of the bad cells; docs/alternating.md, \"Bad cells\"): too many bad cells for the target; use fewer --malicious/--dropout, a larger --eps or --delta, or --variant amortized",
        params.max_malicious, params.max_dropouts, params.clients
    )
}

/// How the alternating guarantee was certified, for GRR over m values at gamma.
pub(crate) fn alternating_bound_json(
    acct: &blanket::accounting::AlternatingBadCells<blanket::accounting::Best>,
    m: u32,
    gamma: f64,
    eps: f64,
) -> Result<AlternatingBoundJson> {
    Ok(blanket_protocol::release::alternating_bound(acct, m, gamma, eps)?.into())
}

pub fn run(c: &ProtocolCommand) -> Result<()> {
    match c {
        ProtocolCommand::Run(a) => run_protocol(a),
    }
}

/// The DP protocol of a run, set up for the honest, present users.
enum Payload {
    Histogram(HistogramRun),
    Vector(payload::VectorRun),
    Ikos(payload::IkosRun),
}

/// Memory of an in-memory run per client and message (keys, ciphertexts, proofs, the
/// relay's copies), rounded up from runs measured at n = 200 and 800 (about 10 KB per client
/// plus 9 KB per extra message): checked before any allocation, so that a `--clients` the
/// machine cannot hold is refused (exit code 2) instead of aborting.
const BYTES_PER_CLIENT_MESSAGE: f64 = 12_288.0;

/// Refuses `--clients` when n clients sending `messages` each would not fit in memory.
fn check_memory(n: u32, messages: u32) -> Result<()> {
    crate::memory::check(
        "--clients",
        u64::from(n),
        BYTES_PER_CLIENT_MESSAGE * f64::from(messages.max(1)),
        64.0 * 1024.0 * 1024.0,
        &format!("about 12 KiB per client and message, {messages} message(s) per client"),
    )
}

fn run_protocol(a: &ProtocolRunArgs) -> Result<()> {
    let n = a.clients()?;
    check_memory(n, a.messages.unwrap_or(1))?;
    if a.protocol == Some(DpProtocol::Histogram) {
        // The true and estimated counts and the aggregator: about 40 bytes per category.
        crate::memory::check(
            "--domain",
            a.domain,
            48.0,
            0.0,
            "about 48 bytes per category",
        )?;
    }
    let base = a.params(a.messages.unwrap_or(1))?.params;
    a.check_protocol()?;
    let (payload, inputs): (Option<Payload>, Vec<Vec<u64>>) = match a.protocol {
        Some(DpProtocol::Histogram) => {
            let hr = histogram_inputs(a, &base)?;
            let inputs = hr
                .categories
                .iter()
                .enumerate()
                .map(|(i, &c)| {
                    let mut r = blanket::rng::simulation_stream(a.seed, i as u64);
                    Ok(vec![u64::from(hr.rel.h.randomize_simulated(c, &mut r)?)])
                })
                .collect::<Result<_>>()?;
            (Some(Payload::Histogram(hr)), inputs)
        }
        Some(DpProtocol::VectorSum) => {
            let target = protocol_target(a, &base)?;
            let (run, inputs) = match a.variant {
                Variant::Amortized => payload::vector_inputs(
                    a.d,
                    a.t,
                    a.k,
                    &target,
                    n,
                    a.seed,
                    &blanket::accounting::Best::default(),
                    None,
                )?,
                Variant::Alternating => {
                    let acct = alternating_accountant(&base)?;
                    payload::vector_inputs(a.d, a.t, a.k, &target, n, a.seed, &acct, Some(&acct))
                        .with_context(|| no_alternating_guarantee("vector-sum", &base))?
                }
            };
            (Some(Payload::Vector(run)), inputs)
        }
        Some(DpProtocol::IkosSum) => {
            let Some(eps) = a.eps else {
                usage_bail!("--protocol ikos-sum needs --eps");
            };
            if a.delta.is_some() {
                usage_bail!("--delta does not apply to --protocol ikos-sum: its delta is (1 + e^eps) 2^-sigma, set by --sigma");
            }
            let (run, inputs) = payload::ikos_inputs(eps, a.sigma, blanket_users(&base), n, a.seed)
                .map_err(|e| {
                    if e.chain().any(|c| {
                        matches!(
                            c.downcast_ref::<IkosSumError>(),
                            Some(IkosSumError::VacuousDelta { .. })
                        )
                    }) {
                        anyhow::Error::new(crate::exit::Usage(format!(
                            "--protocol ikos-sum --eps {} --sigma {}: {}",
                            crate::output::echo(eps),
                            a.sigma,
                            crate::exit::render(&e)
                        )))
                    } else {
                        e
                    }
                })?;
            (Some(Payload::Ikos(run)), inputs)
        }
        None => {
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(a.seed);
            let m = a.messages.unwrap_or(1);
            let inputs = (0..n)
                .map(|_| (0..m).map(|_| rng.next_u64() >> 32).collect())
                .collect();
            (None, inputs)
        }
    };
    let messages = match &payload {
        None => a.messages.unwrap_or(1),
        Some(Payload::Histogram(_)) => 1,
        Some(Payload::Vector(v)) => v.messages(),
        Some(Payload::Ikos(k)) => k.messages(),
    };
    if let Some(m) = a.messages.filter(|&m| m != messages) {
        usage_bail!("--messages = {m} differs from the {messages} messages per client of this --protocol (leave --messages out)");
    }
    check_memory(n, messages)?;
    let resolved = a.params(messages)?;
    let params = resolved.params;
    let cfg = SimConfig::random(
        params,
        params.max_dropouts,
        params.max_malicious,
        &ALL_BEHAVIOURS,
        inputs,
        a.seed,
    );
    let pb = spinner("protocol run", a.json);
    let report = driver::run(&cfg, &mut |p| {
        pb.set_message(format!(
            "protocol run: round {} ({:?}, {}/{} shuffles)",
            p.round, p.phase, p.shuffles.0, p.shuffles.1
        ))
    })?;
    pb.finish_and_clear();
    let mut j = report::to_json(a, &cfg, &report, resolved.key_committees_note);
    if let (Some(pl), Some(out)) = (&payload, &report.output) {
        let honest = |c: u32| !report::is_malicious(&cfg, c);
        let pop = Populations {
            accepted: &out.accepted_clients,
            honest: &honest,
        };
        // The printed delta is unconditional: the guarantee given a private shuffle, plus
        // the probability 2^-sigma that the shuffle is not private, rounded up (the charge of
        // the relay's budget ledger, `one_release_delta`).
        let sigma = params.sigma;
        let charge = |given: f64| (given, one_release_delta(given, sigma));
        match pl {
            Payload::Histogram(hr) => {
                let mut h = histogram_estimate(a, hr, out, &pop)?;
                (h.certified_delta_given_private_shuffle, h.certified_delta) =
                    charge(h.certified_delta);
                j.histogram = Some(h);
            }
            Payload::Vector(v) => {
                let mut v = v.estimate(out, &pop)?;
                (v.certified_delta_given_private_shuffle, v.certified_delta) =
                    charge(v.certified_delta);
                j.vector_sum = Some(v);
            }
            Payload::Ikos(k) => {
                let mut k = k.estimate(out, &pop)?;
                (k.certified_delta_given_private_shuffle, k.certified_delta) =
                    charge(k.certified_delta);
                j.ikos_sum = Some(k);
            }
        }
    }
    if a.json {
        return print_json(&j);
    }
    report::print_table(&j)?;
    if !j.delivered {
        bail!("the run did not deliver: {}", j.error.unwrap_or_default());
    }
    if !j.correct {
        bail!("the run delivered an incorrect output");
    }
    Ok(())
}

fn histogram_estimate(
    a: &ProtocolRunArgs,
    hr: &HistogramRun,
    out: &blanket_protocol::relay::RunOutput,
    pop: &Populations,
) -> Result<HistogramJson> {
    use blanket::analyzer::Aggregator;
    let mut state = hr.rel.h.aggregator();
    for &msg in &out.messages {
        // Reports outside the domain come only from malicious clients: dropped.
        if let Ok(y) = u32::try_from(msg) {
            if (y as u64) < a.domain {
                state.absorb(y)?;
            }
        }
    }
    let est = hr.rel.h.estimate(&state)?;
    let mut truth = vec![0u64; a.domain as usize];
    let mut truth_honest = vec![0u64; a.domain as usize];
    for &c in pop.accepted.iter().filter(|&&c| (pop.honest)(c)) {
        truth_honest[hr.categories[c as usize] as usize] += 1;
    }
    for &c in &out.accepted_clients {
        truth[hr.categories[c as usize] as usize] += 1;
    }
    let rmse = (est
        .counts
        .iter()
        .zip(&truth)
        .map(|(e, &t)| (e - t as f64).powi(2))
        .sum::<f64>()
        / a.domain as f64)
        .sqrt();
    let Some(g) = hr.rel.cal.certified.as_ref() else {
        bail!("the accountant certifies no guarantee for this randomizer at these parameters");
    };
    Ok(HistogramJson {
        domain: a.domain,
        gamma: hr.rel.cal.gamma.get(),
        certified_epsilon: g.epsilon,
        certified_delta: g.delta,
        certified_delta_given_private_shuffle: g.delta,
        method: hr.rel.method(),
        estimate: est.counts,
        truth,
        truth_honest,
        rmse,
        predicted_rmse: hr.rel.cal.predicted_mse.sqrt(),
        alternating: hr.bound.clone(),
    })
}
