//! The relay's JSON bodies, shared by the server ([`super::routes`]) and the clients
//! ([`super::client`]). The API is described in `docs/protocol.md`, "Over the network".

use crate::problem::Rejection;
use blanket_crypto::shuffle::ProofSystem;
use blanket_protocol::params::Variant;
use blanket_protocol::{KeyCommittees, ProtocolParams};
use serde::{Deserialize, Serialize};

/// Default round timeout (milliseconds).
pub const DEFAULT_ROUND_TIMEOUT_MS: u64 = 30_000;
/// Longest round timeout accepted (milliseconds).
pub const MAX_ROUND_TIMEOUT_MS: u64 = 3_600_000;
/// Largest histogram domain a relay task accepts.
pub const MAX_DOMAIN: u64 = 65_536;
/// Largest run the relay accepts.
pub const MAX_CLIENTS: u32 = 1_000_000;

fn d_variant() -> String {
    "amortized".into()
}
fn d_sigma() -> u32 {
    40
}
fn d_eta() -> u32 {
    10
}
fn d_bound() -> f64 {
    0.05
}
fn d_one() -> u32 {
    1
}
fn d_proof() -> String {
    "tw".into()
}
fn d_timeout() -> u64 {
    DEFAULT_ROUND_TIMEOUT_MS
}

/// `POST /relay/tasks`: the parameters of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Number of clients n (registration closes at n).
    pub clients: u32,
    /// `amortized` (default) or `alternating`.
    #[serde(default = "d_variant")]
    pub variant: String,
    /// Privacy of the shuffle fails with probability at most 2^-sigma (default 40).
    #[serde(default = "d_sigma")]
    pub sigma: u32,
    /// Delivery fails with probability at most 2^-eta (default 10).
    #[serde(default = "d_eta")]
    pub eta: u32,
    /// Dropout bound alpha (default 0.05).
    #[serde(default = "d_bound")]
    pub alpha: f64,
    /// Malicious bound gamma (default 0.05).
    #[serde(default = "d_bound")]
    pub gamma: f64,
    /// Messages per client (default 1).
    #[serde(default = "d_one")]
    pub messages_per_client: u32,
    /// Proof of shuffle: `tw` (Terelius-Wikstrom, default) or `bg` (Bayer-Groth).
    #[serde(default = "d_proof")]
    pub proof: String,
    /// Who holds the decryption keys: `per-lane` (alternating only: a key committee per row
    /// and per column with threshold re-encryption between them; docs/protocol.md, "Per-lane
    /// key committees and threshold re-encryption") or `single` (one committee; the only
    /// value with `amortized`). Absent: the variant's default, per-lane for `alternating`
    /// when the lane rule has a solution at these parameters (one committee otherwise),
    /// single for `amortized`. The relay fills in the value it chose when it creates the task
    /// (a stored spec without it predates the field and ran one committee).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_committees: Option<String>,
    /// Round timeout in milliseconds (default 30000): a party silent this long after its
    /// request is timed out.
    #[serde(default = "d_timeout")]
    pub round_timeout_ms: u64,
    /// Simulation only: run id and public seed derived from this seed as the in-memory driver
    /// does (`blanket_protocol::driver::run_id_and_seed`), so a networked run can be compared
    /// with an in-memory one. A deployment leaves it out (random run id; seed from the
    /// registered keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_seed: Option<u64>,
    /// A DP protocol the clients run before encrypting, released with its certified
    /// guarantee when the run is done: `histogram` (needs `domain`, `eps`, `delta`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Number of categories m of `histogram` (2..=65536).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<u64>,
    /// Target epsilon of the protocol (> 0, natural log), for the n' honest, present users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eps: Option<f64>,
    /// Target delta of the protocol, in (0, 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
    /// Total epsilon over all releases charged to this task's budget (basic composition; as
    /// the analyzer's tasks). Default `eps` (one release); at least `eps`. Filled in at
    /// creation; absent with `continues`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_eps: Option<f64>,
    /// Total delta over all releases charged to this task's budget. Default
    /// `delta + 2^-sigma` rounded up (one release: a relay release is charged its certified
    /// delta plus the probability 2^-sigma that the shuffle is not private); at least that,
    /// below 1. Filled in at creation; absent with `continues`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_delta: Option<f64>,
    /// Another run of an earlier relay task's collection (its id, hex): this run's release is
    /// charged to that task's budget instead of a budget of its own. Stored as the task that
    /// holds the budget (a continuation of a continuation charges the first task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continues: Option<String>,
    /// Who may register (`docs/service.md`, "Admission to relay tasks"): `tokens` (the
    /// default: the creation answer carries one single-use enrollment token per client index,
    /// checked at registration) or `open` (anyone who knows the task id; marked open on the
    /// status page and in the release's trust statement). Filled in at creation; a stored spec
    /// without it predates admission and is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission: Option<String>,
}

/// Who may register for a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// The holders of the enrollment tokens issued at creation, one per index.
    Tokens,
    /// Anyone who knows the task id.
    Open,
}

impl Admission {
    /// The allowed values of the spec's `admission`.
    pub const ALLOWED: &'static str = "tokens or open";

    /// The name in the spec.
    pub fn name(self) -> &'static str {
        match self {
            Admission::Tokens => "tokens",
            Admission::Open => "open",
        }
    }
}

/// One client's credential for a task with admission tokens, as the creation answer lists
/// them and `blanket client run --credentials FILE` reads one (hand each to one participant,
/// privately: it lets its holder register as client `index`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Credential {
    /// The task id (hex).
    pub task: String,
    /// The client index the token is for.
    pub index: u32,
    /// The enrollment token (32 bytes, hex): single-use.
    pub token: String,
}

/// `POST /relay/tasks` answers the task's status and, with admission tokens, the credentials
/// (shown once: the relay keeps only their hashes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateResponse {
    /// The status.
    #[serde(flatten)]
    pub status: TaskStatus,
    /// One credential per client index (empty for an open task).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credentials: Vec<Credential>,
}

/// The delta one relay release is charged at most: `delta + 2^-sigma`, rounded up (the
/// guarantee's delta, plus the probability that the shuffle is not private, Balle et al.
/// CCS 2023; spec `05-secure-shuffle.md`).
pub fn one_release_delta(delta: f64, sigma: u32) -> f64 {
    crate::release::add_up(delta, 2f64.powi(-(sigma.min(1000) as i32)))
}

fn out_of_range(field: &str, allowed: &str, value: impl ToString) -> Rejection {
    Rejection::OutOfRange {
        field: field.into(),
        allowed: allowed.into(),
        value: value.to_string(),
    }
}

impl TaskSpec {
    /// A spec with the defaults for `clients` clients.
    pub fn new(clients: u32) -> Self {
        TaskSpec {
            clients,
            variant: d_variant(),
            sigma: d_sigma(),
            eta: d_eta(),
            alpha: d_bound(),
            gamma: d_bound(),
            messages_per_client: 1,
            proof: d_proof(),
            key_committees: None,
            round_timeout_ms: d_timeout(),
            sim_seed: None,
            protocol: None,
            domain: None,
            eps: None,
            delta: None,
            budget_eps: None,
            budget_delta: None,
            continues: None,
            admission: None,
        }
    }

    /// Who may register: the spec's `admission` (absent: a spec stored before the field
    /// existed, open; creation fills in `tokens` when a request leaves it out).
    pub fn admission(&self) -> Result<Admission, Rejection> {
        match self.admission.as_deref() {
            None | Some("open") => Ok(Admission::Open),
            Some("tokens") => Ok(Admission::Tokens),
            Some(a) => Err(out_of_range("admission", Admission::ALLOWED, a)),
        }
    }

    /// Checks the budget fields against the protocol (after [`Self::release_plan`]) and
    /// fills in the defaults of a task that holds its own budget: `Ok(None)` without a
    /// protocol. The smallest budget is one release's charge, so a task whose first release
    /// could not fit is refused here, naming the field.
    pub fn complete_budget(&mut self) -> Result<Option<(f64, f64)>, Rejection> {
        let Some(_) = self.protocol.as_deref() else {
            for (field, set) in [
                ("budget_eps", self.budget_eps.is_some()),
                ("budget_delta", self.budget_delta.is_some()),
                ("continues", self.continues.is_some()),
            ] {
                if set {
                    return Err(out_of_range(
                        field,
                        "absent unless protocol is given",
                        "set",
                    ));
                }
            }
            return Ok(None);
        };
        let (eps, delta) = match (self.eps, self.delta) {
            (Some(e), Some(d)) => (e, d),
            _ => return Err(out_of_range("eps", "set with a protocol", "missing")),
        };
        if self.continues.is_some() {
            for (field, set) in [
                ("budget_eps", self.budget_eps.is_some()),
                ("budget_delta", self.budget_delta.is_some()),
            ] {
                if set {
                    return Err(out_of_range(
                        field,
                        "absent with continues (the budget is the continued task's)",
                        "set",
                    ));
                }
            }
            return Ok(None);
        }
        let budget_eps = self.budget_eps.unwrap_or(eps);
        if !(budget_eps.is_finite() && budget_eps >= eps) {
            return Err(out_of_range(
                "budget_eps",
                &format!("finite and at least eps = {eps} (one release)"),
                budget_eps,
            ));
        }
        let one = one_release_delta(delta, self.sigma);
        let budget_delta = self.budget_delta.unwrap_or(one);
        if !(budget_delta >= one && budget_delta < 1.0) {
            return Err(out_of_range(
                "budget_delta",
                &format!(
                    "in [delta + 2^-sigma = {one:e}, 1) (one release: its delta plus the \
                     probability that the shuffle is not private)"
                ),
                budget_delta,
            ));
        }
        self.budget_eps = Some(budget_eps);
        self.budget_delta = Some(budget_delta);
        Ok(Some((budget_eps, budget_delta)))
    }

    /// The protocol's calibration for the n' honest, present users, or the field out of
    /// range (`None` without `protocol`).
    pub fn release_plan(
        &self,
        params: &ProtocolParams,
    ) -> Result<Option<blanket_protocol::release::HistogramRelease>, Rejection> {
        let Some(proto) = self.protocol.as_deref() else {
            for (field, set) in [
                ("domain", self.domain.is_some()),
                ("eps", self.eps.is_some()),
                ("delta", self.delta.is_some()),
            ] {
                if set {
                    return Err(out_of_range(
                        field,
                        "absent unless protocol is given",
                        "set",
                    ));
                }
            }
            return Ok(None);
        };
        if proto != "histogram" {
            return Err(out_of_range("protocol", "histogram", proto));
        }
        if self.messages_per_client != 1 {
            return Err(out_of_range(
                "messages_per_client",
                "1 with protocol histogram",
                self.messages_per_client,
            ));
        }
        let domain = self
            .domain
            .ok_or_else(|| out_of_range("domain", "2..=65536, required by histogram", "missing"))?;
        if !(2..=MAX_DOMAIN).contains(&domain) {
            return Err(out_of_range("domain", "2..=65536", domain));
        }
        let eps = self
            .eps
            .ok_or_else(|| out_of_range("eps", "finite, > 0, required by a protocol", "missing"))?;
        if !(eps.is_finite() && eps > 0.0) {
            return Err(out_of_range("eps", "finite, > 0", eps));
        }
        let delta = self
            .delta
            .ok_or_else(|| out_of_range("delta", "(0, 1), required by a protocol", "missing"))?;
        if !(delta > 0.0 && delta < 1.0) {
            return Err(out_of_range("delta", "(0, 1)", delta));
        }
        blanket_protocol::release::calibrate_histogram(params, domain, eps, delta)
            .map(Some)
            .map_err(|e| match e {
                blanket_protocol::release::ReleaseError::OutOfRange {
                    field,
                    value,
                    allowed,
                } => out_of_range(field, allowed, value),
                other => Rejection::Infeasible(other.to_string()),
            })
    }

    /// The protocol parameters, or the field out of range.
    pub fn params(&self) -> Result<ProtocolParams, Rejection> {
        self.admission()?;
        if self.clients > MAX_CLIENTS {
            return Err(out_of_range("clients", "3..=1000000", self.clients));
        }
        let variant = match self.variant.as_str() {
            "amortized" => Variant::Amortized,
            "alternating" => Variant::Alternating,
            v => return Err(out_of_range("variant", "amortized or alternating", v)),
        };
        let proof: ProofSystem = self
            .proof
            .parse()
            .map_err(|_| out_of_range("proof", "tw or bg", &self.proof))?;
        if !(1..=MAX_ROUND_TIMEOUT_MS).contains(&self.round_timeout_ms) {
            return Err(out_of_range(
                "round_timeout_ms",
                "1..=3600000",
                self.round_timeout_ms,
            ));
        }
        let asked = match self.key_committees.as_deref() {
            None => None,
            Some(k) => Some(
                KeyCommittees::parse(k)
                    .ok_or_else(|| out_of_range("key_committees", KeyCommittees::ALLOWED, k))?,
            ),
        };
        if variant == Variant::Amortized && asked == Some(KeyCommittees::PerLane) {
            return Err(out_of_range(
                "key_committees",
                "single with variant amortized (per-lane needs variant alternating)",
                "per-lane",
            ));
        }
        let params_error = |e| match e {
            blanket_protocol::ParamsError::OutOfRange {
                field,
                value,
                allowed,
            } => out_of_range(field, allowed, value),
            other => Rejection::Infeasible(other.to_string()),
        };
        let p = ProtocolParams::for_variant(
            variant,
            self.clients,
            self.alpha,
            self.gamma,
            self.sigma,
            self.eta,
            self.messages_per_client,
        )
        .map_err(params_error)?
        .with_proof(proof);
        match asked {
            Some(kc) => p
                .with_key_committees(kc)
                .map_err(|e| Rejection::Infeasible(format!("key_committees = {}: {e}", kc.name()))),
            // The variant's default; per-lane falls back to one committee when the lane rule
            // has no solution (the relay stores the choice in the spec at creation).
            None => match p.with_key_committees(KeyCommittees::default_for(variant)) {
                Ok(q) => Ok(q),
                Err(blanket_protocol::ParamsError::Infeasible { .. }) => Ok(p),
                Err(e) => Err(params_error(e)),
            },
        }
    }
}

/// The derived parameters of a task (in [`TaskStatus`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// Key committee size c.
    pub committee: u32,
    /// Decryption threshold t.
    pub threshold: u32,
    /// Chain length k per lane.
    pub chain: u32,
    /// Backup shufflers per list.
    pub backups: u32,
    /// Shuffle lanes (1 amortized).
    pub lanes: u32,
    /// `per-lane` or `single` (the key committees the run uses).
    #[serde(default)]
    pub key_committees: String,
    /// Per-lane key committees: the row and the column committees (each of `committee`
    /// members, threshold `threshold`); absent with one committee.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lane_committees: Option<[u32; 2]>,
}

/// `POST /relay/tasks/{task}/clients`: register a long-term key.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterRequest {
    /// The client's long-term public key (Ristretto point, 32 bytes, hex).
    pub public_key: String,
    /// Schnorr proof of knowledge of its secret key bound to the task, the index and the
    /// token (64 bytes, hex; [`super::auth::register_proof`]).
    pub proof: String,
    /// The index asked for: the credential's with admission tokens (required); on an open
    /// task, the next free one if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// The enrollment token of `index` (32 bytes, hex): required with admission tokens,
    /// absent on an open task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// The answer to a registration.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RegisterResponse {
    /// The task id (hex).
    pub task: String,
    /// The client's index (its id in the run).
    pub index: u32,
    /// The task's parameters.
    pub spec: TaskSpec,
}

/// A named cheater.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheaterJson {
    /// Client index.
    pub client: u32,
    /// Round of the offence.
    pub round: u32,
    /// Phase of the offence.
    pub phase: String,
    /// What it did.
    pub offence: String,
}

impl From<&blanket_protocol::relay::Cheater> for CheaterJson {
    fn from(c: &blanket_protocol::relay::Cheater) -> Self {
        CheaterJson {
            client: c.client,
            round: c.round,
            phase: format!("{:?}", c.phase),
            offence: c.offence.to_string(),
        }
    }
}

/// A party that timed out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SilentJson {
    /// Client index.
    pub client: u32,
    /// Phase it was silent in.
    pub phase: String,
}

/// The relay's output once the run delivered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputJson {
    /// The decrypted messages, in shuffled order.
    pub messages: Vec<u64>,
    /// Decrypted points outside the message space.
    pub undecodable: usize,
    /// Clients whose submission was accepted.
    pub accepted_clients: Vec<u32>,
    /// Shufflers whose shuffle was accepted.
    pub shufflers: Vec<u32>,
    /// Key holders whose partials were combined.
    pub decryptors: Vec<u32>,
    /// `true` while the decrypted messages are withheld. With a protocol, they (the
    /// clients' randomized reports) are published only once the release was charged to the
    /// budget (withheld while the release is not settled, or refused). Without a protocol
    /// they are the clients' raw inputs: shown only to a reader holding the admin token.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub messages_withheld: bool,
}

/// `GET /relay/tasks/{task}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatus {
    /// The task id (hex).
    pub task: String,
    /// Its parameters.
    pub spec: TaskSpec,
    /// Derived parameters.
    pub derived: Derived,
    /// Keys registered so far.
    pub registered: u32,
    /// `registering`, a protocol phase (`DkgDeal` ... `Decrypt`), `Done` or `Failed`.
    pub phase: String,
    /// Current round (1-based once started).
    pub round: u32,
    /// Deadline of the current round (ms since the Unix epoch).
    pub deadline_ms: u64,
    /// The run ended (delivered or failed).
    pub finished: bool,
    /// The output reached the relay.
    pub delivered: bool,
    /// Why the run failed.
    pub error: Option<String>,
    /// Named cheaters.
    pub cheaters: Vec<CheaterJson>,
    /// Parties that timed out.
    pub silent: Vec<SilentJson>,
    /// The output, once delivered.
    pub output: Option<OutputJson>,
    /// Inputs logged (the event log's length).
    pub log_entries: u64,
    /// The randomizer clients run before encrypting (with a protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub randomizer: Option<RandomizerJson>,
    /// The protocol's estimate and its certified guarantee, once delivered and charged to
    /// the budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<ReleaseJson>,
    /// The budget this task's releases are charged to (with a protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<LedgerJson>,
    /// Why the release was refused (an RFC 9457 problem, reason `budget-exhausted`); the
    /// run's output is kept, its messages withheld.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_refused: Option<crate::Problem>,
}

impl TaskStatus {
    /// For a reader without the admin token: a run without a protocol publishes no decrypted
    /// message (they are the clients' raw, unrandomized inputs), only their count's absence
    /// and `messages_withheld`; a run with a protocol is unchanged (its messages are the
    /// randomized reports, published once the release is charged).
    pub fn withhold_raw_messages(&mut self) {
        if self.randomizer.is_some() {
            return;
        }
        if let Some(o) = self.output.as_mut() {
            o.messages.clear();
            o.messages_withheld = true;
        }
    }
}

/// A relay task's privacy budget: the release ledger of the task that holds it (the
/// analyzer's ledger, `docs/service.md`, "Budget").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerJson {
    /// The task holding the budget (this task, or the one it continues; hex).
    pub task: String,
    /// Releases charged so far.
    pub releases: u64,
    /// Epsilon spent (basic composition, rounded up).
    pub spent_eps: f64,
    /// Delta spent (rounded up).
    pub spent_delta: f64,
    /// Total epsilon.
    pub total_eps: f64,
    /// Total delta.
    pub total_delta: f64,
    /// Epsilon left (rounded down).
    pub remaining_eps: f64,
    /// Delta left (rounded down).
    pub remaining_delta: f64,
}

/// The randomizer of a task's protocol (clients fetch it from `GET /relay/tasks/{task}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RandomizerJson {
    /// `histogram`: the generalized randomized response over `domain` categories.
    pub protocol: String,
    /// Number of categories m.
    pub domain: u64,
    /// Blanket probability gamma (calibrated for the n' honest, present users).
    pub gamma: f64,
}

/// What the relay releases once the run is done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReleaseJson {
    /// `histogram`.
    pub protocol: String,
    /// Unbiased count estimates per category, from the decrypted multiset.
    pub estimate: Vec<f64>,
    /// Reports absorbed by the analyzer.
    pub reports: u64,
    /// Decrypted messages outside the domain (dropped).
    pub out_of_domain: usize,
    /// The honest, present users n' = n - floor(alpha n) - M the guarantee covers (M =
    /// floor(gamma n), at least 1 when gamma > 0).
    pub population: u64,
    /// Target epsilon of the task.
    pub target_epsilon: f64,
    /// Target delta of the task.
    pub target_delta: f64,
    /// Epsilon certified for the n' honest, present users (rounded up; <= target).
    pub certified_epsilon: f64,
    /// Delta certified for the n' honest, present users (rounded up; <= target).
    pub certified_delta: f64,
    /// How it was certified (accountant; `alternating-bad-cells (..)` for alternating).
    pub method: String,
    /// Probability the shuffle is not private (2^-sigma): add it to delta when the public
    /// randomness is not conditioned on.
    pub shuffle_failure: f64,
    /// Who the guarantee covers and what it assumes.
    pub trust: String,
    /// Predicted RMSE of one count (the calibrator's error model at n' users).
    pub predicted_rmse: f64,
    /// The release's number on the ledger (set when charged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_id: Option<i64>,
    /// The budget after this release (set when charged): it spent (`certified_epsilon`,
    /// `certified_delta + shuffle_failure`), rounded up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::release::Budget>,
}

/// `GET /relay/tasks/{task}/roles`: the public seed of a started run, what it was computed
/// from, and the roles it selects (`docs/protocol.md`, "The public seed"); a client recomputes
/// all of it ([`super::roles::check_roles`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolesJson {
    /// The task id (hex), the run id the roles are drawn under.
    pub task: String,
    /// The 32 bytes the relay drew from the OS CSPRNG when registration closed (hex); absent
    /// for a simulation (`sim_seed`) and for a run started before the nonce existed.
    pub nonce: Option<String>,
    /// The public seed (hex): SHA-256 of the domain, the task, `keys` in order and `nonce`.
    pub public_seed: String,
    /// Every registered key, by index (hex).
    pub keys: Vec<String>,
    /// The shuffler lists, concatenated (chain, then backups, per list).
    pub shufflers: Vec<u32>,
    /// Length of one shuffler list.
    pub list_len: usize,
    /// The key committees (member i of committee q is `committees[q][i - 1]`).
    pub committees: Vec<Vec<u32>>,
}

/// The answer to a message post: one entry per envelope, `accepted` or the typed reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostResponse {
    /// Envelopes accepted.
    pub accepted: u32,
    /// Per envelope: `accepted` or the refusal's reason.
    pub results: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram() -> TaskSpec {
        TaskSpec {
            protocol: Some("histogram".into()),
            domain: Some(4),
            eps: Some(2.0),
            delta: Some(1e-3),
            ..TaskSpec::new(30)
        }
    }

    fn field(spec: TaskSpec) -> String {
        match spec.clone().complete_budget() {
            Err(Rejection::OutOfRange { field, .. }) => field,
            other => panic!("{spec:?}: {other:?}"),
        }
    }

    #[test]
    fn budget_defaults_to_one_release() {
        let mut s = histogram();
        let (e, d) = s.complete_budget().unwrap().unwrap();
        assert_eq!(e, 2.0);
        // delta + 2^-40, rounded up: at least the exact sum, at most one ulp above it.
        assert!(d > 1e-3 && d <= (1e-3 + 2f64.powi(-40)).next_up());
        assert_eq!((s.budget_eps, s.budget_delta), (Some(e), Some(d)));
        assert_eq!(TaskSpec::new(30).complete_budget().unwrap(), None);
        let mut c = TaskSpec {
            continues: Some("ab".repeat(16)),
            ..histogram()
        };
        assert_eq!(c.complete_budget().unwrap(), None);
        assert_eq!(c.budget_eps, None);
    }

    #[test]
    fn bad_budgets_name_the_field() {
        let with = |e: Option<f64>, d: Option<f64>| TaskSpec {
            budget_eps: e,
            budget_delta: d,
            ..histogram()
        };
        assert_eq!(field(with(Some(1.9), None)), "budget_eps");
        assert_eq!(field(with(Some(f64::INFINITY), None)), "budget_eps");
        assert_eq!(field(with(Some(f64::NAN), None)), "budget_eps");
        assert_eq!(field(with(None, Some(1e-3))), "budget_delta");
        assert_eq!(field(with(None, Some(1.0))), "budget_delta");
        assert_eq!(field(with(None, Some(f64::NAN))), "budget_delta");
        let plain = |f: fn(&mut TaskSpec)| {
            let mut s = TaskSpec::new(30);
            f(&mut s);
            s
        };
        assert_eq!(field(plain(|s| s.budget_eps = Some(1.0))), "budget_eps");
        assert_eq!(field(plain(|s| s.budget_delta = Some(0.1))), "budget_delta");
        assert_eq!(
            field(plain(|s| s.continues = Some("00".into()))),
            "continues"
        );
        let cont = TaskSpec {
            continues: Some("ab".repeat(16)),
            budget_delta: Some(0.1),
            ..histogram()
        };
        assert_eq!(field(cont), "budget_delta");
    }
}
