//! `blanket protocol run`'s report: the JSON object (issue 16's contract keys and the rest),
//! built from the driver's [`SimReport`], and the same figures as a table.

use anyhow::Result;
use blanket_protocol::driver::{Fate, SimConfig, SimReport};
use blanket_protocol::KeyCommittees;
use blanket_server::relay::api::CheaterJson;
use serde::Serialize;

use super::args::{ProtocolRunArgs, Variant};
use super::payload;
use crate::output::{kv_table, num};

#[derive(Serialize)]
pub(super) struct LaneKeysJson {
    pub(super) row_committees: u32,
    pub(super) column_committees: u32,
    pub(super) dummies: usize,
    /// Worst sent + received bytes of a row- and of a column-committee member, over every
    /// member (malicious ones included), and over the honest members only (honest: follows
    /// the protocol, honest dropouts included).
    pub(super) row_member_bytes_worst: u64,
    pub(super) column_member_bytes_worst: u64,
    pub(super) row_member_bytes_worst_honest: u64,
    pub(super) column_member_bytes_worst_honest: u64,
}

#[derive(Serialize)]
pub(super) struct StepRounds {
    pub(super) step: &'static str,
    pub(super) rounds: u32,
}

#[derive(Serialize)]
pub(super) struct RoleJson {
    pub(super) role: &'static str,
    /// Parties that acted in the role, and their worst and mean sent + received bytes, over
    /// every party (malicious ones included: a malicious party's replays and equivocations
    /// count in its own bytes).
    pub(super) parties: usize,
    pub(super) bytes_worst: u64,
    pub(super) bytes_avg: f64,
    /// The same over the role's honest parties only (honest dropouts included).
    pub(super) honest_parties: usize,
    pub(super) bytes_worst_honest: u64,
    pub(super) bytes_avg_honest: f64,
    pub(super) cpu_seconds_total: f64,
    pub(super) cpu_seconds_per_party: f64,
}

#[derive(Serialize)]
pub(super) struct RunJson {
    pub(super) variant: &'static str,
    /// Proof of shuffle: "tw" or "bg".
    pub(super) proof: &'static str,
    pub(super) clients: u32,
    pub(super) messages_per_client: u32,
    pub(super) sigma: u32,
    pub(super) eta: u32,
    pub(super) max_dropouts: u32,
    pub(super) max_malicious: u32,
    pub(super) committee: u32,
    pub(super) threshold: u32,
    /// Shuffler lists (1 amortized; W = ceil(sqrt(n m)) alternating).
    pub(super) lanes: u32,
    /// Who holds the decryption keys: "per-lane" (a committee per row and per column; the
    /// default of the alternating variant) or "single" (one committee; the amortized variant,
    /// `--key-committees single`, or the fallback named in `key_committees_note`).
    pub(super) key_committees: &'static str,
    /// Present when the alternating variant's default per-lane committees had no solution and
    /// the run fell back to one committee: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) key_committees_note: Option<String>,
    /// Per-lane key committees: their counts, the dummies inserted and the worst row- and
    /// column-committee member's bytes; present exactly when `key_committees` is "per-lane".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) lane_keys: Option<LaneKeysJson>,
    pub(super) chain: u32,
    pub(super) backups: u32,
    pub(super) delivered: bool,
    pub(super) correct: bool,
    pub(super) error: Option<String>,
    pub(super) rounds: u32,
    /// Rounds per protocol step in protocol order (`dkg_deal`, `dkg_complaints`,
    /// `dkg_reveal`, `submit`, `shuffle` or `row_shuffle` and `column_shuffle`, `reencrypt`,
    /// `decrypt`); they add up to `rounds`.
    pub(super) rounds_by_step: Vec<StepRounds>,
    /// Issue 16's contract keys: the client with the most bytes sent + received (envelope
    /// headers included) over **all** clients, malicious ones included (a malicious client's
    /// replays, equivocations and garbage count in its own bytes), the shuffle-proof part of
    /// its bytes, its id and its fate in the simulation (`honest`, `honest, drops out at
    /// <Kind>`, `malicious (<Behaviour>)`). docs/protocol.md, "The in-memory driver".
    pub(super) bytes_worst_client: u64,
    pub(super) proof_bytes_worst_client: u64,
    pub(super) worst_client: u32,
    pub(super) worst_client_fate: String,
    /// The same over the honest clients only (they follow the protocol; honest dropouts
    /// included): what the protocol costs a client that follows it, whatever the malicious
    /// clients do. 0 when no client is honest.
    pub(super) bytes_worst_honest_client: u64,
    pub(super) proof_bytes_worst_honest_client: u64,
    pub(super) worst_honest_client: u32,
    pub(super) worst_honest_client_fate: String,
    /// Mean bytes over all clients.
    pub(super) bytes_avg_client: f64,
    /// Honest clients whose submission was accepted (the honest, present users; at least
    /// `blanket_users` when the adversary stays within the bounds), malicious clients whose
    /// submission was accepted, and whether every honest, present client's messages are in
    /// the output (`correct` checks the whole output: exactly the messages of all accepted
    /// clients, honest and malicious).
    pub(super) honest_present_clients: usize,
    pub(super) malicious_accepted_clients: usize,
    pub(super) honest_messages_delivered: bool,
    pub(super) cheaters_detected: usize,
    pub(super) cheaters: Vec<CheaterJson>,
    /// Malicious clients that deviated in a message the relay saw but were not named
    /// (must be 0), and honest clients named (must be 0).
    pub(super) cheaters_missed: usize,
    pub(super) honest_named: usize,
    /// Clients whose submission was accepted, and decrypted elements outside the
    /// message space.
    pub(super) accepted_clients: usize,
    pub(super) undecodable: usize,
    pub(super) silent: usize,
    pub(super) seconds: f64,
    pub(super) cpu_seconds_by_role: std::collections::BTreeMap<&'static str, f64>,
    pub(super) roles: Vec<RoleJson>,
    /// Who the privacy guarantee of a protocol over this shuffler covers.
    pub(super) blanket_users: u64,
    pub(super) trust: &'static str,
    pub(super) paper: PaperJson,
    /// Probability that the shuffle is not private (every shuffler of a chain malicious,
    /// or t malicious key holders): 2^-sigma; add it to a protocol's delta when the public
    /// randomness is not conditioned on.
    pub(super) shuffle_failure: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) histogram: Option<HistogramJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) vector_sum: Option<payload::VectorSumJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) ikos_sum: Option<payload::IkosSumJson>,
}

#[derive(Serialize)]
pub(super) struct HistogramJson {
    pub(super) domain: u64,
    pub(super) gamma: f64,
    /// Certified for `blanket_users` users (eps, delta rounded up); `certified_delta` is
    /// unconditional: `certified_delta_given_private_shuffle` + 2^-sigma, rounded up.
    pub(super) certified_epsilon: f64,
    pub(super) certified_delta: f64,
    /// The delta given that the shuffle is private (probability >= 1 - 2^-sigma).
    pub(super) certified_delta_given_private_shuffle: f64,
    pub(super) method: String,
    /// Estimated counts from the decrypted, shuffled reports.
    pub(super) estimate: Vec<f64>,
    /// True counts of the accepted clients' inputs (malicious clients' included: they are
    /// in the output, not in the blanket).
    pub(super) truth: Vec<u64>,
    /// True counts of the honest clients whose submission was accepted (the population the
    /// guarantee covers).
    pub(super) truth_honest: Vec<u64>,
    pub(super) rmse: f64,
    /// Predicted RMSE per category (the calibrator's error model at the honest, present
    /// users: the variance of one debiased count).
    pub(super) predicted_rmse: f64,
    /// Alternating variant only: how the guarantee was certified with bad cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) alternating: Option<AlternatingBoundJson>,
}

/// How the alternating variant's guarantee was certified (`docs/alternating.md`, "Bad
/// cells"): the worst case over the grids the run can produce.
#[derive(Serialize, Clone)]
pub(crate) struct AlternatingBoundJson {
    /// The bound that certified the binding class: the joint clone reduction with bad
    /// cells, or the uniform shuffle of the column's (row's) good cells.
    pub(super) bound: &'static str,
    pub(super) placement: &'static str,
    /// The grid holds between `honest_cells_min` (n - D - G) and `cells_max` (n) accepted
    /// messages, at most `bad_cells_max` (G) of them malicious; with `--lane-keys` the grid
    /// has n cells and `bad_cells_max` = D + G (malicious messages and public dummies).
    pub(super) honest_cells_min: u64,
    pub(super) cells_max: u64,
    pub(super) bad_cells_max: u64,
    /// Worst case over the grids: good cells in the target's row (target included), other
    /// full rows, and the largest mean number of bad cells per column.
    pub(super) worst_row_good_cells: u64,
    pub(super) worst_other_full_rows: u64,
    pub(super) bad_per_column_mean_max: f64,
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

#[derive(Serialize)]
pub(super) struct PaperJson {
    pub(super) rounds: u32,
    pub(super) rounds_no_shuffler_dropout: u32,
    pub(super) bytes_worst_client: f64,
    pub(super) bytes_avg_client: f64,
}

fn role_label(r: &str) -> &'static str {
    match r {
        "relay" => "relay",
        "key_committee" => "key committee member",
        "shuffler" => "shuffler",
        _ => "every client (submit)",
    }
}

pub(super) fn to_json(
    args: &ProtocolRunArgs,
    cfg: &SimConfig,
    r: &SimReport,
    key_committees_note: Option<String>,
) -> RunJson {
    let p = r.params;
    let (worst, bytes_worst) = r.worst_client();
    let honest_worst = r.worst_honest_client();
    let fate = |c: u32| {
        r.fates
            .get(c as usize)
            .map_or(String::new(), |f| f.to_string())
    };
    let roles: Vec<RoleJson> = r
        .by_role
        .iter()
        .map(|(name, c)| RoleJson {
            role: name,
            parties: c.parties,
            bytes_worst: c.bytes_worst,
            bytes_avg: c.bytes_avg,
            honest_parties: c.honest_parties,
            bytes_worst_honest: c.bytes_worst_honest,
            bytes_avg_honest: c.bytes_avg_honest,
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
        key_committees: KeyCommittees::of(&p).name(),
        key_committees_note,
        lane_keys: p.lane_committees.map(|(kr, kc)| {
            let worst = |qs: &[Vec<u32>], honest_only: bool| {
                qs.iter()
                    .flatten()
                    .filter(|&&c| !honest_only || r.is_honest(c))
                    .map(|&c| r.bytes_of(c))
                    .max()
                    .unwrap_or(0)
            };
            let split = (kr as usize).min(r.roles.committees.len());
            let (rows, columns) = r.roles.committees.split_at(split);
            LaneKeysJson {
                row_committees: kr,
                column_committees: kc,
                dummies: r.dummies,
                row_member_bytes_worst: worst(rows, false),
                column_member_bytes_worst: worst(columns, false),
                row_member_bytes_worst_honest: worst(rows, true),
                column_member_bytes_worst_honest: worst(columns, true),
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
        rounds_by_step: r
            .rounds_by_step
            .iter()
            .map(|&(step, rounds)| StepRounds { step, rounds })
            .collect(),
        bytes_worst_client: bytes_worst,
        proof_bytes_worst_client: r.proof_bytes.get(worst as usize).copied().unwrap_or(0),
        worst_client: worst,
        worst_client_fate: fate(worst),
        bytes_worst_honest_client: honest_worst.map_or(0, |(_, b)| b),
        proof_bytes_worst_honest_client: honest_worst.map_or(0, |(c, _)| {
            r.proof_bytes.get(c as usize).copied().unwrap_or(0)
        }),
        worst_honest_client: honest_worst.map_or(0, |(c, _)| c),
        worst_honest_client_fate: honest_worst.map_or(String::new(), |(c, _)| fate(c)),
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
        blanket_users: blanket_protocol::release::blanket_users(&p),
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

pub(super) fn is_malicious(cfg: &SimConfig, c: u32) -> bool {
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

/// Print the report as tables.
pub(super) fn print_table(j: &RunJson) -> Result<()> {
    let mut rows: Vec<(&str, String)> = vec![
        ("clients n", j.clients.to_string()),
        ("messages per client", j.messages_per_client.to_string()),
        (
            "dropouts / malicious (bounds)",
            format!("{} / {}", j.max_dropouts, j.max_malicious),
        ),
        (
            "key committees",
            match &j.lane_keys {
                Some(lk) => format!(
                    "per-lane: {} row + {} column committees, {} dummies",
                    lk.row_committees, lk.column_committees, lk.dummies
                ),
                None => j.key_committees.to_string(),
            },
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
            format!(
                "{} ({})",
                j.rounds,
                j.rounds_by_step
                    .iter()
                    .map(|s| format!("{} {}", s.step, s.rounds))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        (
            "bytes, worst client (paper: 1.25 MB)",
            format!(
                "{} (client {}, {})",
                j.bytes_worst_client, j.worst_client, j.worst_client_fate
            ),
        ),
        (
            "  of which shuffle proof",
            j.proof_bytes_worst_client.to_string(),
        ),
        (
            "bytes, worst honest client",
            format!(
                "{} (client {}, {}; shuffle proof {})",
                j.bytes_worst_honest_client,
                j.worst_honest_client,
                j.worst_honest_client_fate,
                j.proof_bytes_worst_honest_client
            ),
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
                "{} parties ({} honest), bytes worst {} avg {} (honest: worst {} avg {}), CPU s per party {}",
                r.parties,
                r.honest_parties,
                r.bytes_worst,
                num(r.bytes_avg),
                r.bytes_worst_honest,
                num(r.bytes_avg_honest),
                num(r.cpu_seconds_per_party)
            ),
        ));
    }
    let title = format!("blanket protocol run ({} shuffler)", j.variant);
    crate::println_wrapped!("{}", kv_table(&title, &rows));
    if let Some(note) = &j.key_committees_note {
        crate::println_wrapped!("note: {note}");
    }
    crate::println_wrapped!(
        "privacy of a protocol over this shuffler covers the {} honest, present users (n - dropout bound - malicious bound)",
        j.blanket_users
    );
    crate::println_wrapped!("trust: {}", j.trust);
    for c in &j.cheaters {
        crate::println_wrapped!(
            "  named: client {} in round {} ({}): {}",
            c.client,
            c.round,
            c.phase,
            c.offence
        );
    }
    if let Some(h) = &j.histogram {
        crate::println_wrapped!(
            "histogram over {} categories (gamma {}): RMSE {} per category against the accepted clients' categories",
            h.domain,
            num(h.gamma),
            num(h.rmse)
        );
        crate::println_wrapped!(
            "certified: ({}, {})-DP for the {} honest, present users (by {}), under the trust assumption above; delta = {} given a private shuffle + 2^-sigma = {} (the shuffle's failure), rounded up",
            crate::output::up(h.certified_epsilon),
            crate::output::up(h.certified_delta),
            j.blanket_users,
            h.method,
            crate::output::up(h.certified_delta_given_private_shuffle),
            crate::output::up(j.shuffle_failure)
        );
        if let Some(b) = &h.alternating {
            crate::println_wrapped!(
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
        crate::println_wrapped!(
            "vector sum, d = {}, t = {}, k = {}, gamma {}: estimated sum {:?}; true sum of the honest, present clients {:?} (of all accepted clients {:?}); mean-vector squared error {} (predicted {}); one malicious client shifts a coordinate by at most {}",
            v.d, v.t, v.k, num(v.gamma), v.estimate_sum.iter().map(|x| num(*x)).collect::<Vec<_>>(),
            v.truth_sum_honest.iter().map(|x| num(*x)).collect::<Vec<_>>(),
            v.truth_sum_accepted.iter().map(|x| num(*x)).collect::<Vec<_>>(),
            num(v.mse_mean), num(v.predicted_mse_mean), num(v.malicious_shift_per_client)
        );
        crate::println_wrapped!(
            "certified: ({}, {})-DP for the {} honest, present users (by {}), under the trust assumption above; delta = {} given a private shuffle + 2^-sigma = {} (the shuffle's failure), rounded up",
            crate::output::up(v.certified_epsilon),
            crate::output::up(v.certified_delta),
            v.users,
            v.method,
            crate::output::up(v.certified_delta_given_private_shuffle),
            crate::output::up(j.shuffle_failure)
        );
    }
    if let Some(k) = &j.ikos_sum {
        crate::println_wrapped!(
            "IKOS sum, p = {}, q = 2^{}, m = {} shares (split-and-mix {}-secure for the {} honest, present users needs {}): estimate {}; true sum of the honest, present clients {} (of all accepted clients {}); predicted RMSE {}; one malicious client can move the estimate by up to q/p = {}",
            k.precision, k.modulus_bits, k.shares, k.sigma, k.users, k.shares_required_blanket,
            num(k.estimate), num(k.truth_honest), num(k.truth_accepted), num(k.predicted_rmse),
            num(k.malicious_shift_per_client)
        );
        crate::println_wrapped!(
            "certified: ({}, {})-DP for the {} honest, present users ({}), under the trust assumption above; delta = {} given a private shuffle + 2^-sigma = {} (the shuffle's failure), rounded up",
            crate::output::up(k.certified_epsilon),
            crate::output::up(k.certified_delta),
            k.users,
            k.method,
            crate::output::up(k.certified_delta_given_private_shuffle),
            crate::output::up(j.shuffle_failure)
        );
    }
    Ok(())
}
