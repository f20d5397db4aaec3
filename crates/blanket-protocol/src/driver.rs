//! An in-memory run: n clients and the relay in one process, with honest
//! dropouts at any step and malicious clients of several kinds, and the
//! measurements the issue asks for (delivery, correctness, cheaters named,
//! rounds, bytes per client, CPU per role, wall time).
//!
//! Time is simulated: a round ends as soon as every party asked has
//! answered, or at its deadline (`timeout_ms` after it opened) when some
//! party is silent. Randomness is seeded (`SimConfig::seed`): this is a
//! simulation; deployed clients take OS randomness.

mod behaviour;
mod cpu;
mod report;

use std::time::Instant;

use blanket_crypto::shuffle::ProofSystem;
use blanket_crypto::Keypair;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

pub use behaviour::{Behaviour, ALL_BEHAVIOURS};
pub use report::{round_step, RoleCost, SimReport};

use crate::client::Client;
use crate::params::ProtocolParams;
use crate::relay::{Phase, Relay, RelayError, RunOutput, Step};
use crate::select::{self, Roles};
use crate::wire::{Envelope, Kind, Message, RunId};

/// What happens to one client in a simulated run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Follows the protocol to the end.
    Honest,
    /// Honest, but silent from the first request of this kind (or a later
    /// one in protocol order, [`step`]) on: `DkgStart` or `DkgShares`
    /// (committee member during the DKG), `KeyAnnounce` (before
    /// encrypting), `ShuffleRequest` (as shuffler), `DecryptRequest` (as
    /// key holder); with per-lane key committees also `ReencryptRequest`
    /// (as row-committee member) and `LaneDecryptRequest` (as
    /// column-committee member).
    DropAt(Kind),
    /// Malicious with this behaviour.
    Malicious(Behaviour),
}

impl Fate {
    /// Honest ([`Fate::Honest`] or an honest dropout), i.e. not malicious.
    pub fn is_honest(self) -> bool {
        !matches!(self, Fate::Malicious(_))
    }
}

impl std::fmt::Display for Fate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fate::Honest => write!(f, "honest"),
            Fate::DropAt(k) => write!(f, "honest, drops out at {k:?}"),
            Fate::Malicious(b) => write!(f, "malicious ({b:?})"),
        }
    }
}

/// The protocol step of a request, for dropouts: a party that drops out at
/// one step is silent at every later one (the lane-key kinds are numbered
/// after the others but happen in between: the key announcement with the
/// submission, the re-encryption between the row and the column chains).
pub fn step(kind: Kind) -> u8 {
    match kind {
        Kind::LaneKeyAnnounce => Kind::KeyAnnounce as u8 * 2,
        Kind::ReencryptRequest | Kind::ReencryptResponse => Kind::ShuffleRequest as u8 * 2 + 1,
        Kind::LaneDecryptRequest | Kind::LaneDecryptResponse => Kind::DecryptRequest as u8 * 2,
        k => k as u8 * 2,
    }
}

/// A simulated run.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub params: ProtocolParams,
    /// One fate per client.
    pub fates: Vec<Fate>,
    /// One input vector per client (`params.messages_per_client` each).
    pub inputs: Vec<Vec<u64>>,
    /// Seeds the public randomness, the run id and every party's RNG.
    pub seed: u64,
    /// Round timeout (simulated milliseconds).
    pub timeout_ms: u64,
}

/// Simulation set-up errors (a failed run is a report, not an error).
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("{what} has {got} entries for {clients} clients")]
    Length {
        what: &'static str,
        got: usize,
        clients: u32,
    },
    #[error("client {client} has {got} inputs, the run has {expected} messages per client")]
    Inputs {
        client: u32,
        got: usize,
        expected: u32,
    },
    #[error(transparent)]
    Relay(#[from] RelayError),
}

/// Progress of a run, for a progress bar.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub round: u32,
    pub phase: Phase,
    /// Accepted shuffles so far and the chain length.
    pub shuffles: (u32, u32),
}

/// The run id and public seed a simulation derives from its seed.
pub fn run_id_and_seed(seed: u64) -> (RunId, [u8; 32]) {
    let h: [u8; 32] = Sha256::new()
        .chain_update(b"blanket/protocol/sim")
        .chain_update(seed.to_le_bytes())
        .finalize()
        .into();
    let mut run = [0u8; 16];
    run.copy_from_slice(&h[..16]);
    let seed2: [u8; 32] = Sha256::new().chain_update(h).finalize().into();
    (run, seed2)
}

/// The roles a simulation with this seed will draw.
pub fn roles_for(params: &ProtocolParams, seed: u64) -> Roles {
    let (run, s) = run_id_and_seed(seed);
    select::roles(params, &run, &s)
}

/// Whether the realized adversary meets what the protocol needs (the event
/// that the parameters make likely, `crate::params`): fewer than `t`
/// malicious committee members, at least `t` honest committee members
/// present through decryption, and at least `k` honest shufflers present
/// on every list. When this holds, a run must deliver.
pub fn assumptions_hold(cfg: &SimConfig) -> bool {
    let roles = roles_for(&cfg.params, cfg.seed);
    let fate = |c: u32| cfg.fates[c as usize];
    let malicious = |c: u32| matches!(fate(c), Fate::Malicious(_));
    let stays = |c: u32, until: Kind| match fate(c) {
        Fate::Honest => true,
        Fate::DropAt(k) => step(k) > step(until),
        Fate::Malicious(_) => false,
    };
    let t = cfg.params.threshold as usize;
    let committees_ok = roles.committees.iter().all(|q| {
        let bad = q.iter().filter(|&&c| malicious(c)).count();
        let good = q
            .iter()
            .filter(|&&c| stays(c, Kind::DecryptRequest))
            .count();
        bad < t && good >= t
    });
    let lists_ok = (0..cfg.params.lanes as usize).all(|j| {
        roles
            .list(j)
            .iter()
            .filter(|&&c| stays(c, Kind::ShuffleRequest))
            .count()
            >= cfg.params.chain as usize
    });
    committees_ok && lists_ok
}

impl SimConfig {
    /// `dropouts` honest dropouts and `malicious` malicious clients (the
    /// behaviours assigned in turn), drawn from the seed; dropouts leave at
    /// a step that fits their role (DKG or decryption for committee
    /// members, before encrypting or as shuffler for listed shufflers,
    /// before encrypting otherwise).
    pub fn random(
        params: ProtocolParams,
        dropouts: u32,
        malicious: u32,
        behaviours: &[Behaviour],
        inputs: Vec<Vec<u64>>,
        seed: u64,
    ) -> Self {
        let n = params.clients;
        let roles = roles_for(&params, seed);
        let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x5eed_fa7e);
        let mut order: Vec<u32> = (0..n).collect();
        for i in (1..order.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let mut fates = vec![Fate::Honest; n as usize];
        let malicious = malicious.min(n) as usize;
        for (k, &c) in order[..malicious].iter().enumerate() {
            if !behaviours.is_empty() {
                fates[c as usize] = Fate::Malicious(behaviours[k % behaviours.len()]);
            }
        }
        let dropouts = (dropouts as usize).min(n as usize - malicious);
        for &c in &order[malicious..malicious + dropouts] {
            let pick = rng.next_u64();
            let kind = if roles.committee.contains(&c) && params.lane_committees.is_some() {
                [
                    Kind::DkgStart,
                    Kind::DkgShares,
                    Kind::ReencryptRequest,
                    Kind::LaneDecryptRequest,
                ][(pick % 4) as usize]
            } else if roles.committee.contains(&c) {
                [Kind::DkgStart, Kind::DkgShares, Kind::DecryptRequest][(pick % 3) as usize]
            } else if roles.shufflers.contains(&c) {
                [Kind::KeyAnnounce, Kind::ShuffleRequest][(pick % 2) as usize]
            } else {
                Kind::KeyAnnounce
            };
            fates[c as usize] = Fate::DropAt(kind);
        }
        SimConfig {
            params,
            fates,
            inputs,
            seed,
            timeout_ms: 30_000,
        }
    }
}

struct Party {
    client: Client<ChaCha20Rng>,
    fate: Fate,
    /// The replies in which a malicious party deviates: those of its role.
    role_replies: &'static [Kind],
    tamper: ChaCha20Rng,
    last_reply: Option<Vec<u8>>,
}

struct Outcome {
    id: u32,
    replies: Vec<Vec<u8>>,
    deviated: bool,
    error: Option<String>,
    submitted: bool,
}

const COMMITTEE_REPLIES: [Kind; 6] = [
    Kind::DkgDeal,
    Kind::DkgComplaints,
    Kind::DkgReveal,
    Kind::DecryptResponse,
    Kind::ReencryptResponse,
    Kind::LaneDecryptResponse,
];

/// The replies of a client's role: a malicious committee member cheats in
/// the DKG and the decryption, a malicious shuffler in its shuffle, any
/// other malicious client in its submission (each submits honestly
/// otherwise, so that every attack reaches the step it targets).
fn role_replies(roles: &Roles, c: u32) -> &'static [Kind] {
    if roles.committee.contains(&c) {
        &COMMITTEE_REPLIES
    } else if roles.shufflers.contains(&c) {
        &[Kind::ShuffleResponse]
    } else {
        &[Kind::Submit]
    }
}

fn role_of(kind: Kind) -> usize {
    match kind {
        Kind::DkgStart
        | Kind::DkgShares
        | Kind::DkgRevealRequest
        | Kind::DecryptRequest
        | Kind::ReencryptRequest
        | Kind::LaneDecryptRequest => 1,
        Kind::ShuffleRequest => 2,
        _ => 3,
    }
}

fn request_kind(bytes: &[u8]) -> Option<Kind> {
    // The header alone: the recipient's `Client::handle` decodes and checks the payload.
    Envelope::header(bytes).ok().map(|(h, _)| h.kind)
}

impl Party {
    /// Client `i` of the simulation `cfg` (keys, randomness and fate from
    /// the seed), in the public `roles` the seed draws.
    fn new(cfg: &SimConfig, roles: &Roles, i: u32) -> Self {
        let (run_id, _) = run_id_and_seed(cfg.seed);
        let mut rng = ChaCha20Rng::seed_from_u64(cfg.seed);
        rng.set_stream(i as u64 + 1);
        let keys = Keypair::generate(&mut rng);
        let mut tamper = ChaCha20Rng::seed_from_u64(cfg.seed ^ 0x7a3b);
        tamper.set_stream(i as u64 + 1);
        let fate = cfg.fates[i as usize];
        // A client with the wrong-proof-system behaviour proves with the
        // other system (the relay must name it).
        let proof = match (fate, cfg.params.proof) {
            (Fate::Malicious(Behaviour::WrongProofSystem), ProofSystem::TereliusWikstrom) => {
                ProofSystem::BayerGroth
            }
            (Fate::Malicious(Behaviour::WrongProofSystem), ProofSystem::BayerGroth) => {
                ProofSystem::TereliusWikstrom
            }
            (_, p) => p,
        };
        Party {
            client: Client::new(i, run_id, keys, cfg.inputs[i as usize].clone(), rng)
                .with_params(&cfg.params)
                .with_proof(proof),
            fate,
            role_replies: role_replies(roles, i),
            tamper,
            last_reply: None,
        }
    }

    fn act(&mut self, id: u32, bytes: &[u8]) -> Outcome {
        let mut o = Outcome {
            id,
            replies: Vec::new(),
            deviated: false,
            error: None,
            submitted: false,
        };
        let kind = request_kind(bytes);
        if let (Fate::DropAt(at), Some(k)) = (self.fate, kind) {
            if step(k) >= step(at) {
                return o;
            }
        }
        let in_role = kind
            .and_then(Kind::reply)
            .is_some_and(|k| self.role_replies.contains(&k));
        if self.fate == Fate::Malicious(Behaviour::Silent) && in_role {
            return o;
        }
        let reply = match self.client.handle(bytes) {
            Ok(Some(r)) => r,
            Ok(None) => return o,
            Err(e) => {
                o.error = Some(e.to_string());
                return o;
            }
        };
        o.submitted = matches!(kind, Some(Kind::KeyAnnounce | Kind::LaneKeyAnnounce));
        match self.fate {
            Fate::Malicious(b) if in_role || b == Behaviour::Replay => {
                let (replies, deviated) =
                    b.apply(&reply, self.last_reply.as_deref(), &mut self.tamper);
                o.replies = replies;
                o.deviated = deviated;
                o.submitted &= !deviated;
            }
            _ => o.replies = vec![reply.clone()],
        }
        self.last_reply = Some(reply);
        o
    }
}

/// One simulated client of a [`SimConfig`], for a transport other than
/// this in-memory driver (the service's `--simulate` clients): the same
/// keys, randomness, fate and malicious behaviour as client `i` of
/// [`run`] with the same configuration, so that a run over a network
/// sends the same messages as the in-memory run.
pub struct SimClient {
    id: u32,
    party: Party,
}

/// What a [`SimClient`] did with one request.
#[derive(Clone, Debug, Default)]
pub struct SimAction {
    /// The envelopes to send to the relay (none when silent or dropped
    /// out; several for the equivocating and replaying behaviours, to be
    /// delivered together, before the round can close).
    pub replies: Vec<Vec<u8>>,
    /// The client refused the request (an honest client's error is a bug).
    pub error: Option<String>,
    /// This client dropped out at this request (it stays silent from now on).
    pub dropped: bool,
}

impl SimClient {
    /// Client `i` of the simulation `cfg`.
    pub fn new(cfg: &SimConfig, i: u32) -> Result<Self, SimError> {
        let n = cfg.params.clients;
        if i >= n || cfg.fates.len() != n as usize || cfg.inputs.len() != n as usize {
            return Err(SimError::Length {
                what: "fates or inputs",
                got: cfg.fates.len().min(cfg.inputs.len()),
                clients: n,
            });
        }
        let roles = roles_for(&cfg.params, cfg.seed);
        Ok(SimClient {
            id: i,
            party: Party::new(cfg, &roles, i),
        })
    }
    /// Every client of the simulation `cfg`, by index (the roles drawn once).
    pub fn all(cfg: &SimConfig) -> Result<Vec<Self>, SimError> {
        let n = cfg.params.clients;
        for (what, got) in [("fates", cfg.fates.len()), ("inputs", cfg.inputs.len())] {
            if got != n as usize {
                return Err(SimError::Length {
                    what,
                    got,
                    clients: n,
                });
            }
        }
        let roles = roles_for(&cfg.params, cfg.seed);
        Ok((0..n)
            .into_par_iter()
            .map(|i| SimClient {
                id: i,
                party: Party::new(cfg, &roles, i),
            })
            .collect())
    }
    /// The client's id (its index in the directory).
    pub fn id(&self) -> u32 {
        self.id
    }
    /// Its long-term key pair (registered with the relay).
    pub fn keys(&self) -> &Keypair {
        self.party.client.keys()
    }
    /// Its fate.
    pub fn fate(&self) -> Fate {
        self.party.fate
    }
    /// Handle one request from the relay.
    pub fn act(&mut self, bytes: &[u8]) -> SimAction {
        let dropped = match (self.party.fate, request_kind(bytes)) {
            (Fate::DropAt(at), Some(k)) => step(k) >= step(at),
            _ => false,
        };
        let o = self.party.act(self.id, bytes);
        SimAction {
            replies: o.replies,
            error: o.error,
            dropped,
        }
    }
}

/// Run a simulation; `progress` is called after every round.
pub fn run(cfg: &SimConfig, progress: &mut dyn FnMut(Progress)) -> Result<SimReport, SimError> {
    let wall = Instant::now();
    let params = cfg.params;
    let n = params.clients;
    if cfg.fates.len() != n as usize {
        return Err(SimError::Length {
            what: "fates",
            got: cfg.fates.len(),
            clients: n,
        });
    }
    if cfg.inputs.len() != n as usize {
        return Err(SimError::Length {
            what: "inputs",
            got: cfg.inputs.len(),
            clients: n,
        });
    }
    if let Some((i, v)) = cfg
        .inputs
        .iter()
        .enumerate()
        .find(|(_, v)| v.len() != params.messages_per_client as usize)
    {
        return Err(SimError::Inputs {
            client: i as u32,
            got: v.len(),
            expected: params.messages_per_client,
        });
    }
    let (run_id, public_seed) = run_id_and_seed(cfg.seed);
    let roles = roles_for(&params, cfg.seed);
    let mut parties: Vec<Party> = (0..n)
        .into_par_iter()
        .map(|i| Party::new(cfg, &roles, i))
        .collect();
    let directory: Vec<_> = parties.iter().map(|p| p.client.public_key()).collect();
    // Every client holds the directory (public), so the keys the relay
    // names are checked against it.
    let shared: std::sync::Arc<[_]> = directory.clone().into();
    for p in &mut parties {
        p.client.set_directory(shared.clone());
    }
    let mut relay = Relay::new(params, run_id, public_seed, directory, cfg.timeout_ms)?;

    let mut sent = vec![0u64; n as usize];
    let mut received = vec![0u64; n as usize];
    let mut proof_bytes = vec![0u64; n as usize];
    let mut deviated = vec![false; n as usize];
    let mut submitted = vec![false; n as usize];
    let mut acted = [
        vec![false; n as usize],
        vec![false; n as usize],
        vec![false; n as usize],
        vec![false; n as usize],
    ];
    let mut cpu = [0f64; 4];
    let mut refusals = Vec::new();
    let mut client_errors = Vec::new();

    let mut rounds_by_step: Vec<(&'static str, u32)> = Vec::new();
    let mut now = 0u64;
    let t0 = cpu::process_seconds();
    let mut out = relay.start(now);
    cpu[0] += cpu::process_seconds() - t0;
    let result: Result<RunOutput, RelayError> = loop {
        // The round's step, from its first request.
        let label = out
            .first()
            .map_or("other", |o| round_step(params.variant, &o.bytes));
        match rounds_by_step.iter_mut().find(|(l, _)| *l == label) {
            Some((_, k)) => *k += 1,
            None => rounds_by_step.push((label, 1)),
        }
        // Deliver the round's requests; clients act in parallel.
        let mut inbox: Vec<Option<&[u8]>> = vec![None; n as usize];
        let mut role = 3;
        for o in &out {
            received[o.to as usize] += o.bytes.len() as u64;
            inbox[o.to as usize] = Some(&o.bytes);
            if let Some(k) = request_kind(&o.bytes) {
                role = role_of(k);
                acted[role][o.to as usize] = true;
            }
        }
        let t0 = cpu::process_seconds();
        let outcomes: Vec<Outcome> = parties
            .par_iter_mut()
            .zip(inbox.par_iter())
            .enumerate()
            .filter_map(|(i, (p, m))| m.map(|b| p.act(i as u32, b)))
            .collect();
        cpu[role] += cpu::process_seconds() - t0;
        drop(inbox);
        let t0 = cpu::process_seconds();
        for o in outcomes {
            if let Some(e) = o.error {
                if matches!(parties[o.id as usize].fate, Fate::Malicious(_)) {
                    continue;
                }
                client_errors.push((o.id, e));
            }
            deviated[o.id as usize] |= o.deviated;
            submitted[o.id as usize] |= o.submitted;
            for r in o.replies {
                sent[o.id as usize] += r.len() as u64;
                if let Ok(Envelope {
                    message: Message::ShuffleResponse { proof, .. },
                    ..
                }) = Envelope::from_bytes(&r)
                {
                    proof_bytes[o.id as usize] += proof.size_bytes() as u64;
                }
                if let Err(e) = relay.receive(o.id, &r) {
                    refusals.push(e);
                }
            }
        }
        now = if relay.ready() {
            now + 1
        } else {
            relay.deadline()
        };
        let step = relay.advance(now);
        cpu[0] += cpu::process_seconds() - t0;
        match step {
            Ok(Step::Send(next)) => out = next,
            Ok(Step::Done(output)) => break Ok(output),
            Err(e) => break Err(e),
        }
        progress(Progress {
            round: relay.round(),
            phase: relay.phase(),
            shuffles: (relay.accepted_shuffles(), params.chain),
        });
    };

    let cheaters = relay.cheaters().to_vec();
    let named: std::collections::BTreeSet<u32> = cheaters.iter().map(|c| c.client).collect();
    let honest_named: Vec<u32> = named
        .iter()
        .copied()
        .filter(|&c| !matches!(cfg.fates[c as usize], Fate::Malicious(_)))
        .collect();
    // A dealer's corrupted share (`BadShare`) goes to the first other committee member; if
    // that member dropped out before reading its shares, or is itself malicious, no honest
    // party ever sees the bad share, so there is nothing to detect (and nothing it affects).
    let unobservable_bad_share = |c: u32| -> bool {
        if !matches!(cfg.fates[c as usize], Fate::Malicious(Behaviour::BadShare)) {
            return false;
        }
        let own = roles.committees.iter().find(|q| q.contains(&c));
        match own.and_then(|q| q.iter().find(|&&v| v != c)) {
            Some(&v) => matches!(
                cfg.fates[v as usize],
                Fate::DropAt(Kind::DkgStart) | Fate::DropAt(Kind::DkgShares) | Fate::Malicious(_)
            ),
            None => true,
        }
    };
    let cheaters_missed: Vec<u32> = (0..n)
        .filter(|&c| deviated[c as usize] && !named.contains(&c))
        .filter(|&c| {
            !matches!(
                cfg.fates[c as usize],
                Fate::Malicious(Behaviour::Replay) | Fate::Malicious(Behaviour::Silent)
            )
        })
        .filter(|&c| !unobservable_bad_share(c))
        .collect();
    let (delivered, error, output) = match result {
        Ok(o) => (true, None, Some(o)),
        Err(e) => (false, Some(e.to_string()), None),
    };
    let correct = match &output {
        Some(o) => {
            let mut expected: Vec<u64> = o
                .accepted_clients
                .iter()
                .flat_map(|&c| cfg.inputs[c as usize].iter().copied())
                .collect();
            expected.sort_unstable();
            let mut got = o.messages.clone();
            got.sort_unstable();
            let accepted: std::collections::BTreeSet<u32> =
                o.accepted_clients.iter().copied().collect();
            let honest_in = (0..n).all(|c| {
                !submitted[c as usize]
                    || matches!(cfg.fates[c as usize], Fate::Malicious(_))
                    || accepted.contains(&c)
            });
            got == expected && o.undecodable == 0 && honest_in && honest_named.is_empty()
        }
        None => false,
    };
    let names = ["relay", "key_committee", "shuffler", "client"];
    let mut by_role = Vec::new();
    for (r, name) in names.iter().enumerate() {
        let members: Vec<usize> = if r == 0 {
            Vec::new()
        } else {
            (0..n as usize).filter(|&i| acted[r][i]).collect()
        };
        let bytes: Vec<u64> = members.iter().map(|&i| sent[i] + received[i]).collect();
        let honest: Vec<u64> = members
            .iter()
            .filter(|&&i| !matches!(cfg.fates[i], Fate::Malicious(_)))
            .map(|&i| sent[i] + received[i])
            .collect();
        let mean = |b: &[u64]| {
            if b.is_empty() {
                0.0
            } else {
                b.iter().sum::<u64>() as f64 / b.len() as f64
            }
        };
        by_role.push((
            *name,
            RoleCost {
                parties: if r == 0 { 1 } else { members.len() },
                bytes_worst: bytes.iter().copied().max().unwrap_or(0),
                bytes_avg: mean(&bytes),
                honest_parties: if r == 0 { 1 } else { honest.len() },
                bytes_worst_honest: honest.iter().copied().max().unwrap_or(0),
                bytes_avg_honest: mean(&honest),
                cpu_seconds_total: cpu[r],
            },
        ));
    }
    Ok(SimReport {
        params,
        roles,
        delivered,
        error,
        correct,
        output,
        rounds: relay.round(),
        cheaters,
        silent: relay.silent().to_vec(),
        cheaters_missed,
        honest_named,
        refusals,
        client_errors,
        bytes_sent: sent,
        bytes_received: received,
        proof_bytes,
        by_role,
        wall_seconds: wall.elapsed().as_secs_f64(),
        dummies: relay.dummies(),
        fates: cfg.fates.clone(),
        rounds_by_step,
    })
}
