//! `blanket protocol run`: the clients' own verifiable shuffle (issue 16;
//! spec `05-secure-shuffle.md`), run in memory with dropouts and malicious
//! clients, and its costs beside the paper's reference figures.

use anyhow::{bail, Context, Result};
use blanket_protocol::driver::{self, Fate, SimConfig, SimReport, ALL_BEHAVIOURS};
use blanket_protocol::params::{ProofSystem, Variant as Layout};
use blanket_protocol::ProtocolParams;
use blanket_server::relay::api::CheaterJson;
use clap::{Args, Subcommand, ValueEnum};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use serde::Serialize;

use super::common::spinner;
use payload::Populations;

mod payload;
use crate::output::{kv_table, num, print_json};

#[derive(Subcommand)]
pub enum ProtocolCommand {
    /// Run the protocol in memory: n clients and the relay in one process, with honest
    /// dropouts and malicious clients; prints delivery, correctness, cheaters named, rounds,
    /// bytes and CPU per role.
    Run(ProtocolRunArgs),
}

/// Shuffle layouts.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// One chain of k shufflers over all ciphertexts (the amortized shuffler).
    Amortized,
    /// The 2-round alternating shuffle: a chain per row of the sqrt(n) x sqrt(n) grid (rows
    /// in parallel), then a chain per column; each shuffler moves about sqrt(n) ciphertexts.
    Alternating,
}

/// DP protocols that can run over the shuffle.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DpProtocol {
    /// Histogram over m categories with the privacy-blanket GRR randomizer.
    Histogram,
    /// Sum of vectors in [0, 1]^d (Scott, Cormode, Maple 2021): t (coordinate, level) pairs
    /// per client.
    VectorSum,
    /// DP sum of reals in [0, 1] by split-and-mix with distributed Polya noise: m IKOS
    /// shares per client.
    IkosSum,
}

#[derive(Args, Clone)]
pub struct ProtocolRunArgs {
    /// Number of clients n (>= 3).
    #[arg(long, value_parser = crate::numeric::parse_u64)]
    pub clients: u64,
    /// Dropout fraction alpha in [0, 0.5): the bound the parameters assume, and the
    /// fraction of honest clients that drop out (at a step of their role) in the run.
    #[arg(long, default_value_t = 0.0, value_parser = crate::numeric::parse_f64)]
    pub dropout: f64,
    /// Malicious fraction gamma in [0, 0.5): the bound the parameters assume, and the
    /// fraction of clients that misbehave in the run (silent, garbage, bad proofs, replaced
    /// or duplicated ciphertexts, wrong partials, bad shares, equivocation, replays, in turn).
    #[arg(long, default_value_t = 0.0, value_parser = crate::numeric::parse_f64)]
    pub malicious: f64,
    /// Shuffle layout.
    #[arg(long, value_enum, default_value_t = Variant::Amortized)]
    pub variant: Variant,
    /// Proof of shuffle every shuffler gives and the relay checks: `tw` (Terelius-Wikstrom,
    /// about 160 bytes per ciphertext) or `bg` (Bayer-Groth, O(sqrt N) group elements).
    #[arg(long, default_value = "tw")]
    pub proof: ProofSystem,
    /// Alternating variant only: per-lane key committees with threshold re-encryption
    /// (docs/protocol.md, "Per-lane key committees and threshold re-encryption"): every row
    /// and every column has its own key committee, so no client handles the whole list; the
    /// cells of absent clients hold public dummies, counted as bad cells in the guarantee.
    #[arg(long)]
    pub lane_keys: bool,
    /// Statistical security: privacy fails with probability at most 2^-sigma.
    #[arg(long, default_value_t = 40)]
    pub sigma: u32,
    /// Output delivery fails with probability at most 2^-eta.
    #[arg(long, default_value_t = 10)]
    pub eta: u32,
    /// Messages per client (default 1 without --protocol; with --protocol it is the
    /// protocol's count: 1 for histogram, t for vector-sum, the IKOS share count m for
    /// ikos-sum, and if given it must equal that count).
    #[arg(long)]
    pub messages: Option<u32>,
    /// Run a DP protocol over the shuffle and end with its estimate and certified guarantee
    /// for the honest, present users only (amortized variant: histogram, vector-sum,
    /// ikos-sum; alternating variant: histogram, with the malicious cells placed at worst).
    #[arg(long, value_enum)]
    pub protocol: Option<DpProtocol>,
    /// Target epsilon of --protocol (> 0, natural log).
    #[arg(long, requires = "protocol")]
    pub eps: Option<f64>,
    /// Target delta of --protocol, in (0, 1).
    #[arg(long, requires = "protocol")]
    pub delta: Option<f64>,
    /// Number of categories m of --protocol histogram.
    #[arg(long, default_value_t = 32, value_parser = crate::numeric::parse_u64)]
    pub domain: u64,
    /// Dimension d of --protocol vector-sum.
    #[arg(long, default_value_t = 4, value_parser = crate::numeric::parse_u64)]
    pub d: u64,
    /// Coordinates each client reports, t, of --protocol vector-sum.
    #[arg(long, default_value_t = 1, value_parser = crate::numeric::parse_u64)]
    pub t: u64,
    /// Fixed precision k of --protocol vector-sum (default: the best k).
    #[arg(long, value_parser = crate::numeric::parse_u64)]
    pub k: Option<u64>,
    /// Seed of the simulation (reproducible; real clients never use a seed).
    #[arg(long, default_value_t = 1, value_parser = crate::numeric::parse_u64)]
    pub seed: u64,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct LaneKeysJson {
    row_committees: u32,
    column_committees: u32,
    dummies: usize,
    row_member_bytes_worst: u64,
    column_member_bytes_worst: u64,
}

#[derive(Serialize)]
struct RoleJson {
    role: &'static str,
    parties: usize,
    bytes_worst: u64,
    bytes_avg: f64,
    cpu_seconds_total: f64,
    cpu_seconds_per_party: f64,
}

#[derive(Serialize)]
struct RunJson {
    variant: &'static str,
    /// Proof of shuffle: "tw" or "bg".
    proof: &'static str,
    clients: u32,
    messages_per_client: u32,
    sigma: u32,
    eta: u32,
    max_dropouts: u32,
    max_malicious: u32,
    committee: u32,
    threshold: u32,
    /// Shuffler lists (1 amortized; W = ceil(sqrt(n m)) alternating).
    lanes: u32,
    /// Per-lane key committees (`--lane-keys`): their counts, the dummies inserted and the
    /// worst row- and column-committee member's bytes; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    lane_keys: Option<LaneKeysJson>,
    chain: u32,
    backups: u32,
    delivered: bool,
    correct: bool,
    error: Option<String>,
    rounds: u32,
    bytes_worst_client: u64,
    proof_bytes_worst_client: u64,
    worst_client: u32,
    bytes_avg_client: f64,
    /// Honest clients whose submission was accepted (the honest, present users; at least
    /// `blanket_users` when the adversary stays within the bounds), malicious clients whose
    /// submission was accepted, and whether every honest, present client's messages are in
    /// the output (`correct` checks the whole output: exactly the messages of all accepted
    /// clients, honest and malicious).
    honest_present_clients: usize,
    malicious_accepted_clients: usize,
    honest_messages_delivered: bool,
    cheaters_detected: usize,
    cheaters: Vec<CheaterJson>,
    /// Malicious clients that deviated in a message the relay saw but were not named
    /// (must be 0), and honest clients named (must be 0).
    cheaters_missed: usize,
    honest_named: usize,
    /// Clients whose submission was accepted, and decrypted elements outside the
    /// message space.
    accepted_clients: usize,
    undecodable: usize,
    silent: usize,
    seconds: f64,
    cpu_seconds_by_role: std::collections::BTreeMap<&'static str, f64>,
    roles: Vec<RoleJson>,
    /// Who the privacy guarantee of a protocol over this shuffler covers.
    blanket_users: u64,
    trust: &'static str,
    paper: PaperJson,
    /// Probability that the shuffle is not private (every shuffler of a chain malicious,
    /// or t malicious key holders): 2^-sigma; add it to a protocol's delta when the public
    /// randomness is not conditioned on.
    shuffle_failure: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    histogram: Option<HistogramJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vector_sum: Option<payload::VectorSumJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ikos_sum: Option<payload::IkosSumJson>,
}

#[derive(Serialize)]
struct HistogramJson {
    domain: u64,
    gamma: f64,
    /// Certified for `blanket_users` users (eps, delta rounded up).
    certified_epsilon: f64,
    certified_delta: f64,
    method: String,
    /// Estimated counts from the decrypted, shuffled reports.
    estimate: Vec<f64>,
    /// True counts of the accepted clients' inputs (malicious clients' included: they are
    /// in the output, not in the blanket).
    truth: Vec<u64>,
    /// True counts of the honest clients whose submission was accepted (the population the
    /// guarantee covers).
    truth_honest: Vec<u64>,
    rmse: f64,
    /// Predicted RMSE per category (the calibrator's error model at the honest, present
    /// users: the variance of one debiased count).
    predicted_rmse: f64,
    /// Alternating variant only: how the guarantee was certified with bad cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    alternating: Option<AlternatingBoundJson>,
}

struct HistogramRun {
    rel: blanket_protocol::release::HistogramRelease,
    categories: Vec<u32>,
    bound: Option<AlternatingBoundJson>,
}

/// How the alternating variant's guarantee was certified (`docs/alternating.md`, "Bad
/// cells"): the worst case over the grids the run can produce.
#[derive(Serialize, Clone)]
pub(crate) struct AlternatingBoundJson {
    /// The bound that certified the binding class: the joint clone reduction with bad
    /// cells, or the uniform shuffle of the column's (row's) good cells.
    bound: &'static str,
    placement: &'static str,
    /// The grid holds between `honest_cells_min` (n - D - G) and `cells_max` (n) accepted
    /// messages, at most `bad_cells_max` (G) of them malicious; with `--lane-keys` the grid
    /// has n cells and `bad_cells_max` = D + G (malicious messages and public dummies).
    honest_cells_min: u64,
    cells_max: u64,
    bad_cells_max: u64,
    /// Worst case over the grids: good cells in the target's row (target included), other
    /// full rows, and the largest mean number of bad cells per column.
    worst_row_good_cells: u64,
    worst_other_full_rows: u64,
    bad_per_column_mean_max: f64,
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
        bail!("--protocol needs --eps and --delta");
    };
    Ok(blanket_protocol::release::target(params, eps, delta)?)
}

/// Calibrate the histogram for the blanket users (shared with the relay:
/// [`blanket_protocol::release::calibrate_histogram`]) and randomize every client's category.
fn histogram_inputs(a: &ProtocolRunArgs, params: &ProtocolParams) -> Result<HistogramRun> {
    let (Some(eps), Some(delta)) = (a.eps, a.delta) else {
        bail!("--protocol needs --eps and --delta");
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

impl From<blanket_protocol::release::AlternatingBound> for AlternatingBoundJson {
    fn from(b: blanket_protocol::release::AlternatingBound) -> Self {
        AlternatingBoundJson {
            bound: b.bound,
            placement: blanket_protocol::release::ALTERNATING_PLACEMENT,
            honest_cells_min: b.honest_cells_min,
            cells_max: b.cells_max,
            bad_cells_max: b.bad_cells_max,
            worst_row_good_cells: b.worst_row_good_cells,
            worst_other_full_rows: b.worst_other_full_rows,
            bad_per_column_mean_max: b.bad_per_column_mean_max,
        }
    }
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

#[derive(Serialize)]
struct PaperJson {
    rounds: u32,
    rounds_no_shuffler_dropout: u32,
    bytes_worst_client: f64,
    bytes_avg_client: f64,
}

fn role_label(r: &str) -> &'static str {
    match r {
        "relay" => "relay",
        "key_committee" => "key committee member",
        "shuffler" => "shuffler",
        _ => "every client (submit)",
    }
}

fn to_json(args: &ProtocolRunArgs, cfg: &SimConfig, r: &SimReport) -> RunJson {
    let p = r.params;
    let (worst, bytes_worst) = r.worst_client();
    let roles: Vec<RoleJson> = r
        .by_role
        .iter()
        .map(|(name, c)| RoleJson {
            role: name,
            parties: c.parties,
            bytes_worst: c.bytes_worst,
            bytes_avg: c.bytes_avg,
            cpu_seconds_total: c.cpu_seconds_total,
            cpu_seconds_per_party: if c.parties == 0 {
                0.0
            } else {
                c.cpu_seconds_total / c.parties as f64
            },
        })
        .collect();
    RunJson {
        variant: match args.variant {
            Variant::Amortized => "amortized",
            Variant::Alternating => "alternating",
        },
        proof: p.proof.name(),
        lanes: p.lanes,
        lane_keys: p.lane_committees.map(|(kr, kc)| {
            let worst = |qs: &[Vec<u32>]| {
                qs.iter()
                    .flatten()
                    .map(|&c| r.bytes_sent[c as usize] + r.bytes_received[c as usize])
                    .max()
                    .unwrap_or(0)
            };
            let split = (kr as usize).min(r.roles.committees.len());
            LaneKeysJson {
                row_committees: kr,
                column_committees: kc,
                dummies: r.dummies,
                row_member_bytes_worst: worst(&r.roles.committees[..split]),
                column_member_bytes_worst: worst(&r.roles.committees[split..]),
            }
        }),
        clients: p.clients,
        messages_per_client: p.messages_per_client,
        sigma: p.sigma,
        eta: p.eta,
        max_dropouts: p.max_dropouts,
        max_malicious: p.max_malicious,
        committee: p.committee,
        threshold: p.threshold,
        chain: p.chain,
        backups: p.backups,
        delivered: r.delivered,
        correct: r.correct,
        error: r.error.clone(),
        rounds: r.rounds,
        bytes_worst_client: bytes_worst,
        proof_bytes_worst_client: r.proof_bytes[worst as usize],
        worst_client: worst,
        bytes_avg_client: r.bytes_avg(),
        honest_present_clients: r.output.as_ref().map_or(0, |o| {
            o.accepted_clients
                .iter()
                .filter(|&&c| !is_malicious(cfg, c))
                .count()
        }),
        malicious_accepted_clients: r.output.as_ref().map_or(0, |o| {
            o.accepted_clients
                .iter()
                .filter(|&&c| is_malicious(cfg, c))
                .count()
        }),
        honest_messages_delivered: r
            .output
            .as_ref()
            .is_some_and(|o| honest_messages_delivered(cfg, o)),
        cheaters_detected: r.cheaters.len(),
        cheaters: r.cheaters.iter().map(CheaterJson::from).collect(),
        cheaters_missed: r.cheaters_missed.len(),
        honest_named: r.honest_named.len(),
        accepted_clients: r.output.as_ref().map_or(0, |o| o.accepted_clients.len()),
        undecodable: r.output.as_ref().map_or(0, |o| o.undecodable),
        silent: r.silent.len(),
        seconds: r.wall_seconds,
        cpu_seconds_by_role: roles
            .iter()
            .map(|x| (x.role, x.cpu_seconds_per_party))
            .collect(),
        roles,
        blanket_users: blanket_users(&p),
        trust: blanket_protocol::release::trust(&p),
        shuffle_failure: 2f64.powi(-(p.sigma.min(1000) as i32)),
        histogram: None,
        vector_sum: None,
        ikos_sum: None,
        paper: PaperJson {
            rounds: 24,
            rounds_no_shuffler_dropout: 18,
            bytes_worst_client: 1.25e6,
            bytes_avg_client: 4350.0,
        },
    }
}

pub fn run(c: &ProtocolCommand) -> Result<()> {
    match c {
        ProtocolCommand::Run(a) => run_protocol(a),
    }
}

fn is_malicious(cfg: &SimConfig, c: u32) -> bool {
    matches!(cfg.fates.get(c as usize), Some(Fate::Malicious(_)))
}

/// Every honest client that was accepted has all its messages in the output multiset.
fn honest_messages_delivered(cfg: &SimConfig, o: &blanket_protocol::relay::RunOutput) -> bool {
    let mut got: std::collections::BTreeMap<u64, usize> = std::collections::BTreeMap::new();
    for &m in &o.messages {
        *got.entry(m).or_default() += 1;
    }
    for &c in o
        .accepted_clients
        .iter()
        .filter(|&&c| !is_malicious(cfg, c))
    {
        for m in &cfg.inputs[c as usize] {
            match got.get_mut(m) {
                Some(k) if *k > 0 => *k -= 1,
                _ => return false,
            }
        }
    }
    true
}

/// The DP protocol of a run, set up for the honest, present users.
enum Payload {
    Histogram(HistogramRun),
    Vector(payload::VectorRun),
    Ikos(payload::IkosRun),
}

fn run_protocol(a: &ProtocolRunArgs) -> Result<()> {
    if a.clients < 3 || a.clients > u32::MAX as u64 / 2 {
        bail!(
            "--clients = {} is out of range (allowed 3..=2147483647)",
            a.clients
        );
    }
    let n = a.clients as u32;
    let layout = match a.variant {
        Variant::Amortized => Layout::Amortized,
        Variant::Alternating => Layout::Alternating,
    };
    let params_for = |messages: u32| {
        let p = ProtocolParams::for_variant(
            layout,
            n,
            a.dropout,
            a.malicious,
            a.sigma,
            a.eta,
            messages,
        )
        .map(|p| p.with_proof(a.proof))?;
        if a.lane_keys {
            p.with_lane_keys()
        } else {
            Ok(p)
        }
    };
    if a.lane_keys && a.variant != Variant::Alternating {
        bail!("--lane-keys needs --variant alternating (the amortized variant has one list and one key committee)");
    }
    let base = params_for(a.messages.unwrap_or(1))?;
    if a.variant == Variant::Alternating {
        match a.protocol {
            Some(DpProtocol::VectorSum) if a.t != 1 => bail!("--protocol vector-sum --t {} with --variant alternating is refused: the bad-cell bound for the alternating shuffler (docs/alternating.md) is for single-message protocols; vector sum with t = 1 reduces to one GRR report per client and is certified, but t >= 2 conditions on every user's coordinates and needs independent per-coordinate uniform shuffles, which A^2_pi does not give; use --t 1 or --variant amortized", a.t),
            Some(DpProtocol::IkosSum) => bail!("--protocol ikos-sum with --variant alternating is refused: the relay's alternating variant is not wired to blanket's A^2_pi share count (m_required_alternating, docs/multi-message.md: honest clients, any n under the GridLayout rule; the malicious cells of this variant are not analysed for split-and-mix); use --variant amortized"),
            _ => {}
        }
    }
    let fixed = match a.protocol {
        Some(DpProtocol::Histogram) => Some(1),
        Some(DpProtocol::VectorSum) => u32::try_from(a.t).ok(),
        _ => None,
    };
    if let (Some(m), Some(want)) = (a.messages, fixed) {
        if m != want {
            bail!("--messages = {m} differs from the {want} messages per client of this --protocol (leave --messages out)");
        }
    }
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
                bail!("--protocol ikos-sum needs --eps");
            };
            if a.delta.is_some() {
                bail!("--delta does not apply to --protocol ikos-sum: its delta is (1 + e^eps) 2^-sigma, set by --sigma");
            }
            let (run, inputs) =
                payload::ikos_inputs(eps, a.sigma, blanket_users(&base), n, a.seed)?;
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
        bail!("--messages = {m} differs from the {messages} messages per client of this --protocol (leave --messages out)");
    }
    let params = params_for(messages)?;
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
    let mut j = to_json(a, &cfg, &report);
    if let (Some(pl), Some(out)) = (&payload, &report.output) {
        let honest = |c: u32| !is_malicious(&cfg, c);
        let pop = Populations {
            accepted: &out.accepted_clients,
            honest: &honest,
        };
        match pl {
            Payload::Histogram(hr) => j.histogram = Some(histogram_estimate(a, hr, out, &pop)?),
            Payload::Vector(v) => j.vector_sum = Some(v.estimate(out, &pop)?),
            Payload::Ikos(k) => j.ikos_sum = Some(k.estimate(out, &pop)?),
        }
    }
    if a.json {
        return print_json(&j);
    }
    let mut rows: Vec<(&str, String)> = vec![
        ("clients n", j.clients.to_string()),
        ("messages per client", j.messages_per_client.to_string()),
        (
            "dropouts / malicious (bounds)",
            format!("{} / {}", j.max_dropouts, j.max_malicious),
        ),
        (
            "key committee c, threshold t",
            format!("{}, {}", j.committee, j.threshold),
        ),
        (
            "shuffler lists, chain k, backups per list",
            format!("{}, {}, {}", j.lanes, j.chain, j.backups),
        ),
        ("delivered", j.delivered.to_string()),
        ("correct", j.correct.to_string()),
    ];
    if let Some(e) = &j.error {
        rows.push(("error", e.clone()));
    }
    rows.extend([
        (
            "rounds (paper: 24, 18 without shuffler dropout)",
            j.rounds.to_string(),
        ),
        (
            "bytes, worst client (paper: 1.25 MB)",
            format!("{} (client {})", j.bytes_worst_client, j.worst_client),
        ),
        (
            "  of which shuffle proof",
            j.proof_bytes_worst_client.to_string(),
        ),
        (
            "bytes, average client (paper: 4.35 KB)",
            num(j.bytes_avg_client),
        ),
        ("cheaters named", j.cheaters_detected.to_string()),
        ("silent (timed out)", j.silent.to_string()),
        ("wall seconds", num(j.seconds)),
    ]);
    for r in &j.roles {
        rows.push((
            role_label(r.role),
            format!(
                "{} parties, bytes worst {} avg {}, CPU s per party {}",
                r.parties,
                r.bytes_worst,
                num(r.bytes_avg),
                num(r.cpu_seconds_per_party)
            ),
        ));
    }
    let title = format!("blanket protocol run ({} shuffler)", j.variant);
    println!("{}", kv_table(&title, &rows));
    println!(
        "privacy of a protocol over this shuffler covers the {} honest, present users (n - dropout bound - malicious bound)",
        j.blanket_users
    );
    println!("trust: {}", j.trust);
    for c in &j.cheaters {
        println!(
            "  named: client {} in round {} ({}): {}",
            c.client, c.round, c.phase, c.offence
        );
    }
    if let Some(h) = &j.histogram {
        println!(
            "histogram over {} categories (gamma {}): RMSE {} per category against the accepted clients' categories",
            h.domain,
            num(h.gamma),
            num(h.rmse)
        );
        println!(
            "certified: ({}, {})-DP for the {} honest, present users (by {}), under the trust assumption above",
            crate::output::up(h.certified_epsilon),
            crate::output::up(h.certified_delta),
            j.blanket_users,
            h.method
        );
        if let Some(b) = &h.alternating {
            println!(
                "  over the alternating shuffler: certified by the {}; worst case over grids of {} to {} cells with at most {} malicious, placed anywhere (worst row: {} good cells; {} other full rows; at most {} bad cells per column on average)",
                b.bound,
                b.honest_cells_min,
                b.cells_max,
                b.bad_cells_max,
                b.worst_row_good_cells,
                b.worst_other_full_rows,
                num(b.bad_per_column_mean_max)
            );
        }
    }
    if let Some(v) = &j.vector_sum {
        println!(
            "vector sum, d = {}, t = {}, k = {}, gamma {}: estimated sum {:?}; true sum of the honest, present clients {:?} (of all accepted clients {:?}); mean-vector squared error {} (predicted {}); one malicious client shifts a coordinate by at most {}",
            v.d, v.t, v.k, num(v.gamma), v.estimate_sum.iter().map(|x| num(*x)).collect::<Vec<_>>(),
            v.truth_sum_honest.iter().map(|x| num(*x)).collect::<Vec<_>>(),
            v.truth_sum_accepted.iter().map(|x| num(*x)).collect::<Vec<_>>(),
            num(v.mse_mean), num(v.predicted_mse_mean), num(v.malicious_shift_per_client)
        );
        println!(
            "certified: ({}, {})-DP for the {} honest, present users (by {}), under the trust assumption above",
            crate::output::up(v.certified_epsilon),
            crate::output::up(v.certified_delta),
            v.users,
            v.method
        );
    }
    if let Some(k) = &j.ikos_sum {
        println!(
            "IKOS sum, p = {}, q = 2^{}, m = {} shares (split-and-mix {}-secure for the {} honest, present users needs {}): estimate {}; true sum of the honest, present clients {} (of all accepted clients {}); predicted RMSE {}; one malicious client can move the estimate by up to q/p = {}",
            k.precision, k.modulus_bits, k.shares, k.sigma, k.users, k.shares_required_blanket,
            num(k.estimate), num(k.truth_honest), num(k.truth_accepted), num(k.predicted_rmse),
            num(k.malicious_shift_per_client)
        );
        println!(
            "certified: ({}, {})-DP for the {} honest, present users ({}), under the trust assumption above",
            crate::output::up(k.certified_epsilon),
            crate::output::up(k.certified_delta),
            k.users,
            k.method
        );
    }
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
        method: hr.rel.method(),
        estimate: est.counts,
        truth,
        truth_honest,
        rmse,
        predicted_rmse: hr.rel.cal.predicted_mse.sqrt(),
        alternating: hr.bound.clone(),
    })
}
