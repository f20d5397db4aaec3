//! What a simulated run reports ([`SimReport`]): delivery, correctness,
//! cheaters, rounds (per protocol step, [`round_step`]), bytes per client
//! and per role, over every party and over the honest ones.

use super::Fate;
use crate::params::ProtocolParams;
use crate::relay::{Cheater, Phase, RelayRefusal, RunOutput};
use crate::select::Roles;
use crate::wire::{Envelope, Message};

/// Bytes and CPU of one role.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoleCost {
    /// Parties that acted in this role (honest and malicious).
    pub parties: usize,
    /// Largest sent + received bytes of one party (all its roles), over
    /// every party of the role, malicious ones included (a malicious
    /// party's replays and equivocations count in its own bytes).
    pub bytes_worst: u64,
    /// Mean sent + received bytes per party (every party of the role).
    pub bytes_avg: f64,
    /// The same over the role's honest parties only (honest: follows the
    /// protocol, including honest dropouts; [`SimReport::is_honest`]).
    pub honest_parties: usize,
    pub bytes_worst_honest: u64,
    pub bytes_avg_honest: f64,
    /// Process CPU seconds spent in this role's handlers, in total.
    pub cpu_seconds_total: f64,
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct SimReport {
    pub params: ProtocolParams,
    pub roles: Roles,
    /// Output reached the relay.
    pub delivered: bool,
    /// The relay's error if it did not.
    pub error: Option<String>,
    /// The decrypted multiset equals the inputs of the accepted clients,
    /// every honest client that submitted was accepted, and no honest
    /// client was named.
    pub correct: bool,
    pub output: Option<RunOutput>,
    pub rounds: u32,
    pub cheaters: Vec<Cheater>,
    pub silent: Vec<(u32, Phase)>,
    /// Malicious clients that deviated in a message the relay saw but were
    /// not named (must stay empty).
    pub cheaters_missed: Vec<u32>,
    /// Honest clients named as cheaters (must stay empty).
    pub honest_named: Vec<u32>,
    /// Messages the relay refused (replays, out-of-round, equivocations...).
    pub refusals: Vec<RelayRefusal>,
    /// Errors honest clients hit (must stay empty).
    pub client_errors: Vec<(u32, String)>,
    /// Per client: bytes sent, bytes received, shuffle-proof bytes sent
    /// (the encoded `AnyShuffleProof`s of its shuffle responses, tag byte
    /// included, of whichever proof system it used).
    pub bytes_sent: Vec<u64>,
    pub bytes_received: Vec<u64>,
    pub proof_bytes: Vec<u64>,
    /// Per role: "relay", "key_committee", "shuffler", "client".
    pub by_role: Vec<(&'static str, RoleCost)>,
    pub wall_seconds: f64,
    /// Cells filled with public dummies (per-lane key committees only).
    pub dummies: usize,
    /// Every client's fate in this run (the configuration's).
    pub fates: Vec<Fate>,
    /// Rounds per protocol step, in protocol order ([`round_step`]): the
    /// DKG rounds, the key announcement with the submission, the shuffle
    /// rounds (rows and columns apart in the alternating variant), the
    /// re-encryption and the decryption rounds; they add up to `rounds`.
    pub rounds_by_step: Vec<(&'static str, u32)>,
}

impl SimReport {
    /// Bytes sent plus received by client `c` (0 for an unknown id).
    pub fn bytes_of(&self, c: u32) -> u64 {
        let c = c as usize;
        self.bytes_sent.get(c).copied().unwrap_or(0)
            + self.bytes_received.get(c).copied().unwrap_or(0)
    }
    /// Whether client `c` follows the protocol: [`Fate::Honest`] or an
    /// honest dropout ([`Fate::DropAt`]); malicious clients are not.
    pub fn is_honest(&self, c: u32) -> bool {
        self.fates.get(c as usize).is_some_and(|f| f.is_honest())
    }
    /// The client with the most bytes (sent + received) and its count,
    /// over all clients, malicious ones included (ties: the lowest id).
    pub fn worst_client(&self) -> (u32, u64) {
        self.worst_among(|_| true).unwrap_or((0, 0))
    }
    /// The honest client ([`SimReport::is_honest`]) with the most bytes
    /// and its count; `None` when no client is honest.
    pub fn worst_honest_client(&self) -> Option<(u32, u64)> {
        self.worst_among(|c| self.is_honest(c))
    }
    fn worst_among(&self, keep: impl Fn(u32) -> bool) -> Option<(u32, u64)> {
        (0..self.bytes_sent.len() as u32)
            .filter(|&c| keep(c))
            .map(|c| (c, self.bytes_of(c)))
            .max_by_key(|&(i, b)| (b, std::cmp::Reverse(i)))
    }
    /// Mean bytes (sent + received) per client.
    pub fn bytes_avg(&self) -> f64 {
        let n = self.bytes_sent.len().max(1) as f64;
        let total: u64 = self
            .bytes_sent
            .iter()
            .zip(&self.bytes_received)
            .map(|(s, r)| s + r)
            .sum();
        total as f64 / n
    }
}

/// The step a round belongs to, from one of its requests: `dkg_deal`,
/// `dkg_complaints`, `dkg_reveal`, `submit` (the key announcement),
/// `shuffle` (amortized), `row_shuffle`, `column_shuffle`, `reencrypt`,
/// `decrypt`, or `other`.
pub fn round_step(variant: crate::params::Variant, request: &[u8]) -> &'static str {
    let Ok(env) = Envelope::from_bytes(request) else {
        return "other";
    };
    match env.message {
        Message::DkgStart { .. } => "dkg_deal",
        Message::DkgShares { .. } => "dkg_complaints",
        Message::DkgRevealRequest { .. } => "dkg_reveal",
        Message::KeyAnnounce { .. } | Message::LaneKeyAnnounce { .. } => "submit",
        Message::ShuffleRequest { lane, .. } => match variant {
            crate::params::Variant::Amortized => "shuffle",
            _ if lane & crate::wire::COLUMN_LANE == 0 => "row_shuffle",
            _ => "column_shuffle",
        },
        Message::ReencryptRequest { .. } => "reencrypt",
        Message::DecryptRequest { .. } | Message::LaneDecryptRequest { .. } => "decrypt",
        _ => "other",
    }
}
