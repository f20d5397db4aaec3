//! The relay's sans-IO state machine (the paper's server S; spec
//! `05-secure-shuffle.md`, "Setting" and "The amortized shuffler").
//!
//! The relay is semi-honest: it forwards, verifies every proof, selects the
//! roles from public randomness ([`crate::select`]) and times out silent
//! parties. It never touches a socket or a clock: the caller passes each
//! received message with its *authenticated* sender
//! ([`Relay::receive`]) and the current time ([`Relay::advance`]); a round
//! ends when every party asked has answered or when its deadline passed.
//!
//! Rounds of the amortized variant: DKG deal, DKG shares and complaints,
//! reveal (only if someone complained), key announcement and submission,
//! one round per shuffle (a silent or cheating shuffler costs a round and is
//! replaced by the next on the public list), partial decryption (more
//! rounds only if fewer than t partials were valid). Every cheater is named
//! with its offence; silent parties are listed apart (a timeout cannot tell
//! a dropout from a silent adversary).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use blanket_crypto::dkg::{DkgError, DkgParams};
use blanket_crypto::encoding;
use blanket_crypto::reencrypt::ReencryptError;
use blanket_crypto::shuffle::{ProofSystem, ShuffleError, ShuffleSetup};
use blanket_crypto::submission::{verify_submission, ClientSubmission, SubmissionContext};
use blanket_crypto::threshold::{PartialDecryption, ThresholdError};
use blanket_crypto::{Ciphertext, PublicKey};
use rayon::prelude::*;

use crate::context;
use crate::params::ProtocolParams;
use crate::select::{self, Roles};
use blanket::shuffle::alternating::GridLayout;

mod keygen;
mod lanekeys;
mod lanes;
use crate::wire::{Envelope, Kind, Message, RunId, WireError, RELAY_ID};

/// One message for the transport to deliver.
#[derive(Clone, Debug)]
pub struct Outgoing {
    pub to: u32,
    pub bytes: Vec<u8>,
}

/// Where the run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    DkgDeal,
    DkgComplaints,
    DkgReveal,
    Submit,
    Shuffle,
    /// Per-lane key committees: the row committees re-encrypt the rows'
    /// outputs to the column keys.
    Reencrypt,
    Decrypt,
    Done,
    Failed,
}

/// What a named cheater did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Offence {
    /// Bytes that do not decode, or a message of the wrong kind.
    Malformed(String),
    /// A dealing with a bad proof of knowledge, commitments or share list.
    InvalidDealing(String),
    /// A dealer that did not answer a complaint with a valid share.
    Disqualified,
    /// A submission with a bad proof, wrong id or count, or a repeated `c1`.
    InvalidSubmission(String),
    /// A shuffle whose proof does not verify (replaced, duplicated or
    /// dropped ciphertexts, wrong re-randomization, tampered proof).
    InvalidShuffle(String),
    /// A shuffle proof of another system than the run's
    /// (`ProtocolParams::proof`): refused before verification.
    WrongProofSystem {
        expected: ProofSystem,
        got: ProofSystem,
    },
    /// A partial decryption whose DLEQ proof does not verify.
    WrongPartial(String),
    /// A re-encryption partial whose proof does not verify, or an answer
    /// that does not cover exactly the lanes asked.
    WrongReencryption(String),
    /// Two different messages in one round.
    Equivocation,
}

/// In words, for people (JSON `offence`, the CLI's "named:" lines): the kind, then what was
/// wrong.
impl std::fmt::Display for Offence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Offence::Malformed(why) => write!(f, "malformed message: {why}"),
            Offence::InvalidDealing(why) => write!(f, "invalid dealing: {why}"),
            Offence::Disqualified => {
                f.write_str("disqualified dealer (no valid share answered a complaint)")
            }
            Offence::InvalidSubmission(why) => write!(f, "invalid submission: {why}"),
            Offence::InvalidShuffle(why) => write!(f, "invalid shuffle: {why}"),
            Offence::WrongProofSystem { expected, got } => write!(
                f,
                "wrong proof system: expected {}, got {}",
                expected.name(),
                got.name()
            ),
            Offence::WrongPartial(why) => write!(f, "wrong partial decryption: {why}"),
            Offence::WrongReencryption(why) => write!(f, "wrong re-encryption: {why}"),
            Offence::Equivocation => {
                f.write_str("equivocation (two different messages in one round)")
            }
        }
    }
}

/// A named cheater.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cheater {
    pub client: u32,
    pub round: u32,
    pub phase: Phase,
    pub offence: Offence,
}

/// A message the relay refused (the run goes on).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelayRefusal {
    #[error("message from client {from} does not decode: {error}")]
    Malformed { from: u32, error: WireError },
    #[error("message from client {from} is for another run")]
    WrongRun { from: u32 },
    #[error("envelope claims sender {claimed} but came from client {from}")]
    SenderMismatch { claimed: u32, from: u32 },
    #[error("message from client {from} is not addressed to the relay")]
    Misaddressed { from: u32 },
    #[error("message from client {from} is for round {got}, the current round is {current}")]
    WrongRound { from: u32, got: u32, current: u32 },
    #[error("client {from} was not asked anything in this round")]
    NotExpected { from: u32 },
    #[error("replayed message from client {from}")]
    Replay { from: u32 },
    #[error("client {from} sent two different messages in one round")]
    Equivocation { from: u32 },
    #[error("client {from} sent a {got:?} message, expected {expected:?}")]
    WrongKind {
        from: u32,
        got: Kind,
        expected: Kind,
    },
    #[error("the run is over")]
    Closed,
}

/// Why the run cannot finish (never a wrong output).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RelayError {
    #[error("round {round} is still open until {deadline} ms (now {now} ms)")]
    NotYet { round: u32, deadline: u64, now: u64 },
    #[error("directory has {got} keys for {clients} clients")]
    Directory { got: usize, clients: u32 },
    #[error("key generation failed: {0} (more committee members dropped out or cheated than the parameters allow)")]
    Dkg(#[from] DkgError),
    #[error("only {valid} valid dealings, threshold {threshold}: too many committee members dropped out or cheated")]
    TooFewDealings { valid: usize, threshold: u32 },
    #[error("no client submitted a valid ciphertext")]
    NoSubmissions,
    #[error("shuffle lane {lane}, chain stage {stage} of {chain}: the public list of {list} shufflers is exhausted (too many dropouts or cheaters)")]
    ChainExhausted {
        lane: u32,
        stage: u32,
        chain: u32,
        list: usize,
    },
    #[error("only {valid} valid partial decryptions, threshold {threshold}: too many key holders dropped out or cheated")]
    NotEnoughPartials { valid: usize, threshold: u32 },
    #[error("key committee {committee}: only {valid} valid {what}, threshold {threshold}: too many members dropped out or cheated")]
    CommitteeShort {
        committee: usize,
        what: &'static str,
        valid: usize,
        threshold: u32,
    },
    #[error("{found} dummies decrypted, {inserted} inserted: the output is refused")]
    DummyCount { found: usize, inserted: usize },
    #[error(transparent)]
    Reencrypt(#[from] ReencryptError),
    #[error(transparent)]
    Threshold(#[from] ThresholdError),
    #[error("the run already ended")]
    Ended,
    #[error("shuffle setup for {len} ciphertexts: {source}")]
    ShuffleSetup {
        len: usize,
        #[source]
        source: ShuffleError,
    },
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// Decrypted messages in shuffled order.
    pub messages: Vec<u64>,
    /// Decrypted elements outside the message space (a malicious client can
    /// encrypt any point).
    pub undecodable: usize,
    /// Clients whose submission was accepted.
    pub accepted_clients: Vec<u32>,
    /// Shufflers whose shuffle was accepted, in chain order.
    pub shufflers: Vec<u32>,
    /// Key-committee members whose partial decryption was used.
    pub decryptors: Vec<u32>,
}

/// What [`Relay::advance`] produced.
#[derive(Debug)]
pub enum Step {
    /// The next round's messages.
    Send(Vec<Outgoing>),
    /// The run is over.
    Done(RunOutput),
}

/// The relay of one run.
pub struct Relay {
    params: ProtocolParams,
    run: RunId,
    roles: Roles,
    directory: Vec<PublicKey>,
    /// One DKG per key committee (`roles.committees`).
    keygens: Vec<keygen::Keygen>,
    /// Client id to (committee, member index).
    member_of: HashMap<u32, (usize, u32)>,
    timeout_ms: u64,
    round: u32,
    phase: Phase,
    deadline: u64,
    expected: BTreeMap<u32, Kind>,
    asked: BTreeSet<u32>,
    inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    gone: BTreeSet<u32>,
    cheaters: Vec<Cheater>,
    silent: Vec<(u32, Phase)>,
    accepted: Vec<u32>,
    list: Vec<Ciphertext>,
    seed: [u8; 32],
    setup: Option<ShuffleSetup>,
    lanes: Vec<lanes::Lane>,
    columns_started: bool,
    grid: Option<GridLayout>,
    chain: Vec<u32>,
    decrypt_asked: BTreeSet<u32>,
    partials: Vec<PartialDecryption>,
    /// The signed shuffle chains that end in the final list (sent with
    /// every decryption request).
    final_chains: Vec<crate::evidence::LaneChain>,
    /// Per-lane key committees' state (`ProtocolParams::lane_committees`).
    lane: Option<lanekeys::LaneState>,
}

impl Relay {
    /// The relay for a run: `directory[i]` is client `i`'s registered
    /// long-term key (the PKI the channels rely on), `seed` the public
    /// randomness, `timeout_ms` the length of a round.
    pub fn new(
        params: ProtocolParams,
        run: RunId,
        seed: [u8; 32],
        directory: Vec<PublicKey>,
        timeout_ms: u64,
    ) -> Result<Self, RelayError> {
        if directory.len() != params.clients as usize {
            return Err(RelayError::Directory {
                got: directory.len(),
                clients: params.clients,
            });
        }
        let roles = select::roles(&params, &run, &seed);
        let mut keygens = Vec::with_capacity(roles.committees.len());
        let mut member_of = HashMap::new();
        for (q, members) in roles.committees.iter().enumerate() {
            let dkg = DkgParams::new(
                members.len() as u32,
                params.threshold,
                &context::dkg(&run, members),
            )?;
            for (i, &c) in members.iter().enumerate() {
                member_of.insert(c, (q, i as u32 + 1));
            }
            keygens.push(keygen::Keygen::new(members.clone(), dkg));
        }
        let lane = params
            .lane_committees
            .map(|_| lanekeys::LaneState::new(&params, &run, &seed));
        Ok(Relay {
            params,
            run,
            roles,
            directory,
            keygens,
            member_of,
            timeout_ms,
            round: 0,
            phase: Phase::DkgDeal,
            deadline: 0,
            expected: BTreeMap::new(),
            asked: BTreeSet::new(),
            inbox: BTreeMap::new(),
            gone: BTreeSet::new(),
            cheaters: Vec::new(),
            silent: Vec::new(),
            accepted: Vec::new(),
            list: Vec::new(),
            seed,
            setup: None,
            lanes: Vec::new(),
            columns_started: false,
            grid: None,
            chain: Vec::new(),
            decrypt_asked: BTreeSet::new(),
            partials: Vec::new(),
            final_chains: Vec::new(),
            lane,
        })
    }

    /// The public roles.
    pub fn roles(&self) -> &Roles {
        &self.roles
    }
    /// The parameters.
    pub fn params(&self) -> &ProtocolParams {
        &self.params
    }
    /// The current round (1-based once started).
    pub fn round(&self) -> u32 {
        self.round
    }
    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }
    /// The deadline of the current round.
    pub fn deadline(&self) -> u64 {
        self.deadline
    }
    /// Every named cheater so far.
    pub fn cheaters(&self) -> &[Cheater] {
        &self.cheaters
    }
    /// Parties that timed out, with the phase.
    pub fn silent(&self) -> &[(u32, Phase)] {
        &self.silent
    }
    /// Whether every party asked in this round has answered.
    pub fn ready(&self) -> bool {
        self.expected.is_empty()
    }
    /// Accepted shuffles so far.
    pub fn accepted_shuffles(&self) -> u32 {
        self.chain.len() as u32
    }
    /// The joint public key, once the DKG finished (of the first committee
    /// with per-lane key committees; see [`Relay::lane_key`]).
    pub fn public_key(&self) -> Option<&PublicKey> {
        self.keygens
            .first()
            .and_then(|k| k.group.as_ref())
            .map(|g| g.public_key())
    }

    fn envelope(&self, to: u32, message: Message) -> Outgoing {
        Outgoing {
            to,
            bytes: Envelope {
                run: self.run,
                round: self.round,
                sender: RELAY_ID,
                recipient: to,
                message,
            }
            .to_bytes(),
        }
    }

    fn open_round(&mut self, now: u64, out: &[Outgoing], reply: Kind) {
        self.expected = out.iter().map(|o| (o.to, reply)).collect();
        self.asked = self.expected.keys().copied().collect();
        self.inbox.clear();
        self.deadline = now.saturating_add(self.timeout_ms);
    }

    fn name(&mut self, client: u32, offence: Offence) {
        self.gone.insert(client);
        self.cheaters.push(Cheater {
            client,
            round: self.round,
            phase: self.phase,
            offence,
        });
    }

    fn member_index(&self, client: u32) -> Option<u32> {
        self.member_of.get(&client).map(|&(_, i)| i)
    }

    /// Round 1: the DKG start to every member of every key committee.
    pub fn start(&mut self, now: u64) -> Vec<Outgoing> {
        self.round = 1;
        let mut out: Vec<Outgoing> = Vec::new();
        for kg in &self.keygens {
            let members: Vec<(u32, PublicKey)> = kg
                .members
                .iter()
                .map(|&c| (c, self.directory[c as usize]))
                .collect();
            for &c in &kg.members {
                out.push(self.envelope(
                    c,
                    Message::DkgStart {
                        threshold: self.params.threshold,
                        members: members.clone(),
                    },
                ));
            }
        }
        self.open_round(now, &out, Kind::DkgDeal);
        out
    }

    /// A message from the authenticated client `from`. Refused messages
    /// change nothing, except that a sender of undecodable bytes, of the
    /// wrong kind or of two different messages is named.
    pub fn receive(&mut self, from: u32, bytes: &[u8]) -> Result<(), RelayRefusal> {
        if matches!(self.phase, Phase::Done | Phase::Failed) {
            return Err(RelayRefusal::Closed);
        }
        let env = match Envelope::from_bytes(bytes) {
            Ok(e) => e,
            Err(error) => {
                if self.expected.remove(&from).is_some() {
                    self.name(from, Offence::Malformed(error.to_string()));
                }
                return Err(RelayRefusal::Malformed { from, error });
            }
        };
        if env.run != self.run {
            return Err(RelayRefusal::WrongRun { from });
        }
        if env.sender != from {
            return Err(RelayRefusal::SenderMismatch {
                claimed: env.sender,
                from,
            });
        }
        if env.recipient != RELAY_ID {
            return Err(RelayRefusal::Misaddressed { from });
        }
        if env.round != self.round {
            return Err(RelayRefusal::WrongRound {
                from,
                got: env.round,
                current: self.round,
            });
        }
        let Some(&want) = self.expected.get(&from) else {
            if let Some((first, _)) = self.inbox.get(&from) {
                if first.as_slice() == bytes {
                    return Err(RelayRefusal::Replay { from });
                }
                self.inbox.remove(&from);
                self.name(from, Offence::Equivocation);
                return Err(RelayRefusal::Equivocation { from });
            }
            return Err(RelayRefusal::NotExpected { from });
        };
        let got = env.message.kind();
        self.expected.remove(&from);
        if got != want {
            self.name(
                from,
                Offence::Malformed(format!("sent {got:?}, expected {want:?}")),
            );
            return Err(RelayRefusal::WrongKind {
                from,
                got,
                expected: want,
            });
        }
        self.inbox.insert(from, (bytes.to_vec(), env.message));
        Ok(())
    }

    /// Close the current round (all answers in, or `now` past the
    /// deadline: the rest are silent), process it and open the next.
    pub fn advance(&mut self, now: u64) -> Result<Step, RelayError> {
        if matches!(self.phase, Phase::Done | Phase::Failed) {
            return Err(RelayError::Ended);
        }
        if !self.expected.is_empty() && now < self.deadline {
            return Err(RelayError::NotYet {
                round: self.round,
                deadline: self.deadline,
                now,
            });
        }
        let silent: Vec<u32> = std::mem::take(&mut self.expected).into_keys().collect();
        for s in silent {
            self.gone.insert(s);
            self.silent.push((s, self.phase));
        }
        let inbox = std::mem::take(&mut self.inbox);
        let r = self.process(now, inbox);
        if r.is_err() {
            self.phase = Phase::Failed;
        }
        r
    }

    fn next_round(&mut self, now: u64, out: Vec<Outgoing>, reply: Kind) -> Step {
        self.open_round(now, &out, reply);
        Step::Send(out)
    }

    fn process(
        &mut self,
        now: u64,
        inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    ) -> Result<Step, RelayError> {
        match self.phase {
            Phase::DkgDeal => self.after_deal(now, inbox),
            Phase::DkgComplaints => self.after_complaints(now, inbox),
            Phase::DkgReveal => self.after_reveal(now, inbox),
            Phase::Submit => self.after_submit(now, inbox),
            Phase::Shuffle => self.after_shuffle(now, inbox),
            Phase::Reencrypt => self.after_reencrypt(now, inbox),
            Phase::Decrypt if self.lane.is_some() => self.after_lane_decrypt(now, inbox),
            Phase::Decrypt => self.after_decrypt(now, inbox),
            Phase::Done | Phase::Failed => Err(RelayError::Ended),
        }
    }

    fn after_submit(
        &mut self,
        now: u64,
        inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    ) -> Result<Step, RelayError> {
        if self.lane.is_some() {
            return self.after_lane_submit(now, inbox);
        }
        let pk = *self.public_key().ok_or(RelayError::Ended)?;
        let m = self.params.messages_per_client as usize;
        let run = self.run;
        let subs: Vec<(u32, Vec<ClientSubmission>)> = inbox
            .into_iter()
            .filter_map(|(from, (_, msg))| match msg {
                Message::Submit { submissions } => Some((from, submissions)),
                _ => None,
            })
            .collect();
        let checked: Vec<(u32, Result<Vec<ClientSubmission>, String>)> = subs
            .into_par_iter()
            .map(|(from, s)| {
                if s.len() != m {
                    return (from, Err(format!("{} submissions, expected {m}", s.len())));
                }
                for (j, sub) in s.iter().enumerate() {
                    if sub.client != from {
                        return (from, Err(format!("claims client {}", sub.client)));
                    }
                    let task = context::task(j as u32);
                    let ctx = SubmissionContext {
                        run: &run,
                        task: &task,
                    };
                    if let Err(e) = verify_submission(&pk, &ctx, sub) {
                        return (from, Err(e.to_string()));
                    }
                }
                (from, Ok(s))
            })
            .collect();
        let mut seen: HashMap<[u8; 32], u32> = HashMap::new();
        for (from, r) in checked {
            let subs = match r {
                Ok(s) => s,
                Err(why) => {
                    self.name(from, Offence::InvalidSubmission(why));
                    continue;
                }
            };
            let keys: Vec<[u8; 32]> = subs
                .iter()
                .map(|s| s.ciphertext.c1.compress().to_bytes())
                .collect();
            let own: BTreeSet<&[u8; 32]> = keys.iter().collect();
            if own.len() != keys.len() {
                self.name(from, Offence::InvalidSubmission("repeated c1".into()));
                continue;
            }
            if let Some(first) = keys.iter().find_map(|k| seen.get(k)) {
                let why = format!("repeats the c1 of client {first}");
                self.name(from, Offence::InvalidSubmission(why));
                continue;
            }
            for k in keys {
                seen.insert(k, from);
            }
            self.accepted.push(from);
            self.list.extend(subs.iter().map(|s| s.ciphertext));
        }
        if self.list.is_empty() {
            return Err(RelayError::NoSubmissions);
        }
        self.phase = Phase::Shuffle;
        self.start_lanes()?;
        self.request_shuffle(now)
    }

    fn request_partials(&mut self, now: u64) -> Result<Step, RelayError> {
        let t = self.params.threshold as usize;
        let need = t.saturating_sub(self.partials.len());
        let kg = &self.keygens[0];
        let next: Vec<u32> = kg
            .holders
            .iter()
            .copied()
            .filter(|i| {
                !self.decrypt_asked.contains(i) && !self.gone.contains(&kg.members[*i as usize - 1])
            })
            .take(need)
            .collect();
        if next.is_empty() {
            return Err(RelayError::NotEnoughPartials {
                valid: self.partials.len(),
                threshold: self.params.threshold,
            });
        }
        self.round += 1;
        let c1: Vec<_> = self.list.iter().map(|c| c.c1).collect();
        let mut out = Vec::with_capacity(next.len());
        for i in next {
            self.decrypt_asked.insert(i);
            let client = self.keygens[0].members[i as usize - 1];
            out.push(self.envelope(
                client,
                Message::DecryptRequest {
                    c1: c1.clone(),
                    chains: self.final_chains.clone(),
                },
            ));
        }
        Ok(self.next_round(now, out, Kind::DecryptResponse))
    }

    fn after_decrypt(
        &mut self,
        now: u64,
        inbox: BTreeMap<u32, (Vec<u8>, Message)>,
    ) -> Result<Step, RelayError> {
        let gk = self.keygens[0].group.clone().ok_or(RelayError::Ended)?;
        let ctx = context::decrypt(&self.run);
        for (from, (_, msg)) in inbox {
            let Message::DecryptResponse { partial } = msg else {
                continue;
            };
            let idx = self.member_index(from);
            if idx != Some(partial.member) {
                let why = format!("partial for member {}", partial.member);
                self.name(from, Offence::WrongPartial(why));
                continue;
            }
            match gk.verify_partial(&self.list, &partial, &ctx) {
                Ok(()) => self.partials.push(partial),
                Err(e) => self.name(from, Offence::WrongPartial(e.to_string())),
            }
        }
        if self.partials.len() < self.params.threshold as usize {
            return self.request_partials(now);
        }
        let t = self.params.threshold as usize;
        let points = gk.combine(&self.list, &self.partials[..t], &ctx)?;
        let decoded: Vec<Result<u64, _>> = points.par_iter().map(encoding::decode_u64).collect();
        let undecodable = decoded.iter().filter(|r| r.is_err()).count();
        let messages = decoded.into_iter().filter_map(Result::ok).collect();
        self.phase = Phase::Done;
        Ok(Step::Done(RunOutput {
            messages,
            undecodable,
            accepted_clients: self.accepted.clone(),
            shufflers: self.chain.clone(),
            decryptors: self.partials[..t]
                .iter()
                .map(|p| self.keygens[0].members[p.member as usize - 1])
                .collect(),
        }))
    }
}
