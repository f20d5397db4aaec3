//! The client's sans-IO state machine: it consumes the relay's envelopes
//! and returns its reply, never touching a socket or a clock; randomness is
//! the `R` it was built with (`SecureRng`-style OS randomness in a
//! deployment, a seeded generator in simulations).
//!
//! One client plays every role it is given by the relay's requests (the
//! roles are public, [`crate::select`]): key-committee member (DKG deal,
//! complaints, reveal, partial decryption), submitter (always), shuffler.
//! Each request kind (each lane, for shuffles) is answered at most once
//! and rounds must increase: a
//! replayed or out-of-round request is refused with a typed error.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use blanket_crypto::channel::{Channel, ChannelError};
use blanket_crypto::dkg::{
    self, Dealer, Dealing, DkgError, DkgParams, SecretShare, VerifiedDealing, VerifiedShare,
};
use blanket_crypto::reencrypt::{self, ReencryptContext, ReencryptError};
use blanket_crypto::shuffle::{self, ProofSystem, ShuffleError, ShuffleSetup};
use blanket_crypto::submission::{encrypt_with_proof_hedged, SubmissionContext, SubmissionError};
use blanket_crypto::threshold::KeyShare;
use blanket_crypto::{Ciphertext, Keypair, PublicKey};
use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::traits::Identity;
use rand_core::{CryptoRng, RngCore};

use crate::context;
use crate::evidence::{self, Attestation, EvidenceError, LaneChain, SignedComplaint};
use crate::params::Variant;
use crate::wire::{Envelope, Kind, Message, RunId, WireError, COLUMN_LANE, RELAY_ID};

/// Why a client refused a message or could not answer it.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The bytes do not decode.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The envelope is for another run.
    #[error("message for another run")]
    WrongRun,
    /// The envelope is addressed to someone else or not sent by the relay.
    #[error("message from {sender} to {recipient} is not a relay message for client {me}")]
    Misrouted {
        sender: u32,
        recipient: u32,
        me: u32,
    },
    /// A round not after the last one answered (a replay or a reordering).
    #[error("round {round} is not after the last answered round {last}")]
    StaleRound { round: u32, last: u32 },
    /// A request this client already answered, or one that does not fit its
    /// state (e.g. shares before a DKG start, a client message).
    #[error("unexpected {kind:?} request")]
    Unexpected { kind: Kind },
    /// The committee in a DKG start is malformed or does not contain this
    /// client.
    #[error("bad committee: {0}")]
    BadCommittee(&'static str),
    /// The relay asked for a different number of messages than this client
    /// holds.
    #[error("relay asks for {asked} messages, client holds {held}")]
    MessageCount { asked: u32, held: usize },
    /// A check of the relay's request needs the run's parameters
    /// ([`Client::with_params`]).
    #[error("the run's parameters are unknown to this client (Client::with_params)")]
    NoParams,
    /// The evidence of an announced key (or of a list to decrypt) does not
    /// hold.
    #[error("evidence refused: {0}")]
    Evidence(#[from] EvidenceError),
    /// QUAL as announced to a committee member is empty, names a dealer it
    /// holds no verified dealing of, repeats one, has fewer than `t`
    /// dealers or leaves this member out (an honest dealer is never
    /// disqualified).
    #[error("qualified dealers refused: {0}")]
    BadQual(String),
    /// A reveal request whose complaints are not signed by their
    /// complainers, or that names `t` or more complainers.
    #[error("reveal request refused: {0}")]
    BadComplaint(String),
    /// The announced key is not the one the qualified dealings give.
    #[error("announced public key does not match the qualified dealings")]
    KeyMismatch,
    /// A decryption request to a client that holds no key share.
    #[error("no key share")]
    NoKeyShare,
    /// A lane-key request that does not fit the announced lane keys (a lane
    /// this client's committee does not serve, a missing target key).
    #[error("lane keys: {0}")]
    LaneKeys(String),
    #[error(transparent)]
    Reencrypt(#[from] ReencryptError),
    #[error(transparent)]
    Dkg(#[from] DkgError),
    #[error(transparent)]
    Channel(#[from] ChannelError),
    #[error(transparent)]
    Shuffle(#[from] ShuffleError),
    #[error(transparent)]
    Submission(#[from] SubmissionError),
}

struct Member {
    params: DkgParams,
    index: u32,
    committee: Vec<(u32, PublicKey)>,
    dealer: Dealer,
    deal_round: u32,
    channels: Vec<Option<Channel>>,
    /// Dealings received, verified once on arrival (the key share and the
    /// joint key reuse them without re-checking the proofs).
    dealings: Vec<VerifiedDealing>,
    /// Verified shares addressed to this member, including its own.
    shares: Vec<VerifiedShare>,
}

/// A client of one run.
pub struct Client<R> {
    id: u32,
    run: RunId,
    keys: Keypair,
    messages: Vec<u64>,
    rng: R,
    last_round: Option<u32>,
    /// Requests answered: kind and lane (shufflers of the alternating
    /// layout serve a row and later a column).
    answered: HashSet<(Kind, u32)>,
    member: Option<Member>,
    key_share: Option<KeyShare>,
    public_key: Option<PublicKey>,
    /// The run's proof of shuffle (`ProtocolParams::proof`).
    proof: ProofSystem,
    /// Per-lane key committees: the keys of the lanes this client may
    /// serve, as announced (`Message::LaneKeyAnnounce`); empty otherwise.
    lane_keys: HashMap<u32, PublicKey>,
    /// The lanes this client's lane committee serves.
    served: Vec<u32>,
    /// The run's threshold and chain length ([`Client::with_params`]).
    threshold: Option<u32>,
    chain: Option<u32>,
    variant: Option<Variant>,
    /// The registered keys of the run, by client id, when this client
    /// holds them ([`Client::with_directory`]).
    directory: Option<Arc<[PublicKey]>>,
}

impl<R: RngCore + CryptoRng> Client<R> {
    /// Client `id` with its registered long-term `keys` (the relay's
    /// directory holds the public half) and its message(s).
    pub fn new(id: u32, run: RunId, keys: Keypair, messages: Vec<u64>, rng: R) -> Self {
        Client {
            id,
            run,
            keys,
            messages,
            rng,
            last_round: None,
            answered: HashSet::new(),
            member: None,
            key_share: None,
            public_key: None,
            proof: ProofSystem::TereliusWikstrom,
            lane_keys: HashMap::new(),
            served: Vec::new(),
            threshold: None,
            chain: None,
            variant: None,
            directory: None,
        }
    }

    /// The same client proving its shuffles with `proof` (the run's
    /// `ProtocolParams::proof`; Terelius-Wikstrom unless set).
    pub fn with_proof(mut self, proof: ProofSystem) -> Self {
        self.proof = proof;
        self
    }

    /// The same client in a run with parameters `params` (its proof
    /// system; the chain length and threshold its checks of the relay's
    /// requests rely on).
    pub fn with_params(mut self, params: &crate::params::ProtocolParams) -> Self {
        self.proof = params.proof;
        self.threshold = Some(params.threshold);
        self.chain = Some(params.chain);
        self.variant = Some(params.variant);
        self
    }

    /// The same client holding the run's directory of registered keys (by
    /// client id): every key the relay names (committee members, attesting
    /// dealers, shufflers) must be the registered one. Without it, those
    /// keys are the relay's word (`docs/protocol.md`, "What a malicious
    /// relay can and cannot do").
    pub fn with_directory(mut self, directory: Arc<[PublicKey]>) -> Self {
        self.set_directory(directory);
        self
    }

    /// [`Client::with_directory`] on a client already built.
    pub fn set_directory(&mut self, directory: Arc<[PublicKey]>) {
        self.directory = Some(directory);
    }

    /// Whether `key` is client `id`'s registered key (true without a
    /// directory).
    fn registered(&self, id: u32, key: &PublicKey) -> bool {
        self.directory
            .as_ref()
            .is_none_or(|d| d.get(id as usize) == Some(key))
    }

    /// This client's id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The long-term key pair (its public half is registered with the relay;
    /// a networked client also signs its requests with it).
    pub fn keys(&self) -> &Keypair {
        &self.keys
    }

    /// The registered long-term public key.
    pub fn public_key(&self) -> PublicKey {
        self.keys.public
    }

    /// Whether this client holds a share of the joint key.
    pub fn holds_key_share(&self) -> bool {
        self.key_share.is_some()
    }

    /// Handle one envelope from the relay; the reply to send back, if any.
    pub fn handle(&mut self, bytes: &[u8]) -> Result<Option<Vec<u8>>, ClientError> {
        let env = Envelope::from_bytes(bytes)?;
        if env.run != self.run {
            return Err(ClientError::WrongRun);
        }
        if env.sender != RELAY_ID || env.recipient != self.id {
            return Err(ClientError::Misrouted {
                sender: env.sender,
                recipient: env.recipient,
                me: self.id,
            });
        }
        if let Some(last) = self.last_round {
            if env.round <= last {
                return Err(ClientError::StaleRound {
                    round: env.round,
                    last,
                });
            }
        }
        let kind = env.message.kind();
        let lane = match &env.message {
            Message::ShuffleRequest { lane, .. } => *lane,
            _ => 0,
        };
        if kind.reply().is_none() || self.answered.contains(&(kind, lane)) {
            return Err(ClientError::Unexpected { kind });
        }
        let round = env.round;
        let reply = match env.message {
            Message::DkgStart { threshold, members } => {
                self.dkg_start(round, threshold, members)?
            }
            Message::DkgShares { dealings, shares } => self.dkg_shares(dealings, shares)?,
            Message::DkgRevealRequest { complaints } => self.dkg_reveal(complaints)?,
            Message::KeyAnnounce {
                public_key,
                messages,
                qualified,
                revealed,
                evidence,
            } => self.key_announce(public_key, messages, qualified, revealed, evidence)?,
            Message::ShuffleRequest { lane, stage, list } => self.shuffle(lane, stage, list)?,
            Message::DecryptRequest { c1, chains } => self.decrypt(c1, chains)?,
            Message::LaneKeyAnnounce {
                messages,
                slot_keys,
                lane_keys,
                served,
                qualified,
                revealed,
                evidence,
            } => self.lane_key_announce(
                messages, slot_keys, lane_keys, served, qualified, revealed, evidence,
            )?,
            Message::ReencryptRequest { lanes, chains } => self.reencrypt(lanes, chains)?,
            Message::LaneDecryptRequest { lanes, chains } => self.decrypt_lanes(lanes, chains)?,
            _ => return Err(ClientError::Unexpected { kind }),
        };
        // Only a request that was answered moves the round on.
        self.last_round = Some(round);
        self.answered.insert((kind, lane));
        Ok(Some(
            Envelope {
                run: self.run,
                round,
                sender: self.id,
                recipient: RELAY_ID,
                message: reply,
            }
            .to_bytes(),
        ))
    }

    fn dkg_start(
        &mut self,
        round: u32,
        threshold: u32,
        committee: Vec<(u32, PublicKey)>,
    ) -> Result<Message, ClientError> {
        let pos = committee
            .iter()
            .position(|(id, _)| *id == self.id)
            .ok_or(ClientError::BadCommittee("this client is not a member"))?;
        let ids: Vec<u32> = committee.iter().map(|(id, _)| *id).collect();
        if ids.iter().collect::<HashSet<_>>().len() != ids.len() {
            return Err(ClientError::BadCommittee("repeated member"));
        }
        if committee[pos].1 != self.keys.public {
            return Err(ClientError::BadCommittee("wrong key for this client"));
        }
        if committee.iter().any(|(id, k)| !self.registered(*id, k)) {
            return Err(ClientError::BadCommittee(
                "a member's key is not its registered key",
            ));
        }
        if self.threshold.is_some_and(|t| t != threshold) {
            return Err(ClientError::BadCommittee("not the run's threshold"));
        }
        let params = DkgParams::new(
            committee.len() as u32,
            threshold,
            &context::dkg(&self.run, &ids),
        )?;
        let index = pos as u32 + 1;
        let dealer = Dealer::new(params, index, &mut self.rng)?;
        let mut channels = Vec::with_capacity(committee.len());
        let mut sealed = Vec::with_capacity(committee.len().saturating_sub(1));
        for (j, (peer, peer_key)) in committee.iter().enumerate() {
            if j == pos {
                channels.push(None);
                continue;
            }
            let mut ch = Channel::establish(self.id, &self.keys, *peer, peer_key, &mut self.rng)?;
            let share = dealer.share_for(j as u32 + 1)?;
            sealed.push(ch.seal(round as u64, share.to_bytes().as_ref())?);
            channels.push(Some(ch));
        }
        let own = dealer.verified_share_for(index)?;
        let dealing = dealer.dealing();
        let attestation = dealer.attest(
            &evidence::attest_context(&self.run, self.id),
            &self.keys,
            &mut self.rng,
        );
        let verified = dealer.verified_dealing();
        self.member = Some(Member {
            params,
            index,
            committee,
            dealer,
            deal_round: round,
            channels,
            dealings: vec![verified],
            shares: vec![own],
        });
        Ok(Message::DkgDeal {
            dealing,
            attestation,
            shares: sealed,
        })
    }

    fn dkg_shares(
        &mut self,
        dealings: Vec<Dealing>,
        sealed: Vec<blanket_crypto::channel::SealedMessage>,
    ) -> Result<Message, ClientError> {
        let me = self.id;
        let m = self.member.as_mut().ok_or(ClientError::Unexpected {
            kind: Kind::DkgShares,
        })?;
        let mut complaints = Vec::new();
        for d in dealings {
            if d.dealer == m.index || m.dealings.iter().any(|x| x.dealer() == d.dealer) {
                continue;
            }
            let Ok(d) = VerifiedDealing::new(&m.params, d) else {
                // The relay forwards only valid dealings; skip any other.
                continue;
            };
            let dealer = d.dealer();
            let peer = m.committee[dealer as usize - 1].0;
            let share = sealed
                .iter()
                .find(|s| s.sender == peer && s.receiver == me && s.round == m.deal_round as u64)
                .and_then(|s| {
                    m.channels[dealer as usize - 1]
                        .as_mut()
                        .and_then(|ch| ch.open(s).ok())
                })
                .and_then(|b| SecretShare::from_bytes(&b).ok())
                .filter(|s| s.recipient == m.index)
                .and_then(|s| VerifiedShare::new(&m.params, &d, s).ok());
            match share {
                Some(s) => m.shares.push(s),
                None => complaints.push(dealer),
            }
            m.dealings.push(d);
        }
        let signature = evidence::sign_complaint(
            m.params.session(),
            m.index,
            &complaints,
            &self.keys,
            &mut self.rng,
        );
        Ok(Message::DkgComplaints {
            dealers: complaints,
            signature,
        })
    }

    /// Reveal the shares of the members that complained about this dealer:
    /// only for complaints signed by their complainers (members of the
    /// committee of the DKG start, other than this dealer, each once,
    /// naming this dealer), and never for `t` or more of them (`t` shares
    /// would give the relay this dealer's secret). Any other request is
    /// refused whole.
    fn dkg_reveal(&mut self, complaints: Vec<SignedComplaint>) -> Result<Message, ClientError> {
        let m = self.member.as_ref().ok_or(ClientError::Unexpected {
            kind: Kind::DkgRevealRequest,
        })?;
        let t = m.params.threshold as usize;
        if complaints.len() >= t {
            return Err(ClientError::BadComplaint(format!(
                "{} complainers, threshold {t}: revealing would give away this dealer's secret",
                complaints.len()
            )));
        }
        let mut seen = HashSet::new();
        for c in &complaints {
            let bad =
                |why: &str| ClientError::BadComplaint(format!("member {}: {why}", c.complainer));
            let key = c
                .complainer
                .checked_sub(1)
                .and_then(|i| m.committee.get(i as usize))
                .map(|(_, k)| k)
                .ok_or_else(|| bad("not a member"))?;
            if c.complainer == m.index || !seen.insert(c.complainer) {
                return Err(bad("this dealer itself, or named twice"));
            }
            if !c.dealers.contains(&m.index) {
                return Err(bad("does not accuse this dealer"));
            }
            evidence::verify_complaint(
                m.params.session(),
                c.complainer,
                &c.dealers,
                &c.signature,
                key,
            )
            .map_err(|_| bad("signature does not verify"))?;
        }
        let shares = complaints
            .iter()
            .map(|c| m.dealer.share_for(c.complainer))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Message::DkgReveal { shares })
    }

    fn key_announce(
        &mut self,
        public_key: PublicKey,
        messages: u32,
        qualified: Vec<u32>,
        revealed: Vec<SecretShare>,
        evidence: Vec<Attestation>,
    ) -> Result<Message, ClientError> {
        if messages as usize != self.messages.len() {
            return Err(ClientError::MessageCount {
                asked: messages,
                held: self.messages.len(),
            });
        }
        self.check_key(&public_key, &evidence)?;
        self.take_key_share(&[public_key], &qualified, &revealed)?;
        self.public_key = Some(public_key);
        let keys = vec![public_key; self.messages.len()];
        self.submit(&keys)
    }

    /// An announced key with its evidence ([`evidence::check_key`]).
    fn check_key(&self, key: &PublicKey, evidence: &[Attestation]) -> Result<(), ClientError> {
        let t = self.threshold.ok_or(ClientError::NoParams)?;
        evidence::check_key(&self.run, key, evidence, t, self.directory.as_deref())?;
        Ok(())
    }

    /// A member's key share from QUAL and the revealed shares; `keys` are
    /// the announced keys of its committee (all must be the joint key the
    /// qualified dealings give). A member refuses a QUAL that is empty,
    /// repeats or does not know a dealer, has fewer than `t` dealers or
    /// leaves itself out.
    fn take_key_share(
        &mut self,
        keys: &[PublicKey],
        qualified: &[u32],
        revealed: &[SecretShare],
    ) -> Result<(), ClientError> {
        if let Some(m) = self.member.as_ref() {
            let t = m.params.threshold as usize;
            let distinct: HashSet<&u32> = qualified.iter().collect();
            if qualified.len() < t.max(1) || distinct.len() != qualified.len() {
                return Err(ClientError::BadQual(format!(
                    "{} dealers ({} distinct), threshold {t}",
                    qualified.len(),
                    distinct.len()
                )));
            }
            if !qualified.contains(&m.index) {
                return Err(ClientError::BadQual(format!(
                    "this member ({}) is left out",
                    m.index
                )));
            }
            // Every dealing and share held was verified when it arrived
            // (`dkg_shares`); only revealed shares are checked here.
            let mut qual: Vec<&VerifiedDealing> = Vec::with_capacity(qualified.len());
            for q in qualified {
                let d = m
                    .dealings
                    .iter()
                    .find(|d| d.dealer() == *q)
                    .ok_or_else(|| {
                        ClientError::BadQual(format!("dealer {q} has no verified dealing here"))
                    })?;
                qual.push(d);
            }
            let pk = dkg::joint_public_key(&m.params, &qual)?;
            if keys.is_empty() || keys.iter().any(|k| *k != pk) {
                return Err(ClientError::KeyMismatch);
            }
            let mut shares: Vec<VerifiedShare> = Vec::with_capacity(qual.len());
            for d in &qual {
                let s = m
                    .shares
                    .iter()
                    .find(|s| s.dealer() == d.dealer())
                    .cloned()
                    .or_else(|| {
                        revealed
                            .iter()
                            .filter(|s| s.dealer == d.dealer() && s.recipient == m.index)
                            .find_map(|s| VerifiedShare::new(&m.params, d, s.clone()).ok())
                    });
                if let Some(s) = s {
                    shares.push(s);
                }
            }
            // Without every share this member cannot hold a key share;
            // it still submits its own message.
            self.key_share = dkg::key_share_verified(&m.params, m.index, &qual, &shares).ok();
        }
        Ok(())
    }

    /// The submission: message `j` encrypted under `keys[j]`.
    fn submit(&mut self, keys: &[PublicKey]) -> Result<Message, ClientError> {
        let run = self.run;
        let mut submissions = Vec::with_capacity(self.messages.len());
        for (j, (&msg, key)) in self.messages.iter().zip(keys).enumerate() {
            let task = context::task(j as u32);
            let ctx = SubmissionContext {
                run: &run,
                task: &task,
            };
            // Hedged: a restored RNG never repeats r for another message.
            submissions.push(encrypt_with_proof_hedged(
                key,
                msg,
                self.id,
                &ctx,
                &self.keys.secret,
                &mut self.rng,
            )?);
        }
        Ok(Message::Submit { submissions })
    }

    fn shuffle(
        &mut self,
        lane: u32,
        stage: u32,
        list: Vec<Ciphertext>,
    ) -> Result<Message, ClientError> {
        let pk = if self.lane_keys.is_empty() {
            self.public_key
        } else {
            self.lane_keys.get(&lane).copied()
        }
        .ok_or(ClientError::Unexpected {
            kind: Kind::ShuffleRequest,
        })?;
        let setup = ShuffleSetup::new(self.proof, list.len())?;
        let ctx = context::shuffle(&self.run, self.proof, lane, stage, self.id);
        let (out, proof) =
            shuffle::shuffle_and_prove_with(&setup, &pk, &list, &ctx, &mut self.rng)?;
        let signature = evidence::sign_shuffle(
            &self.run,
            lane,
            stage,
            self.id,
            &evidence::list_digest(&list),
            &evidence::list_digest(&out),
            &self.keys,
            &mut self.rng,
        );
        Ok(Message::ShuffleResponse {
            lane,
            stage,
            signature,
            list: out,
            proof,
        })
    }

    /// Check that each lane's `c1`s are the end of its signed shuffle
    /// chain of the run's length ([`evidence::check_chain`]), and that the
    /// lanes are the run's final ones: the single lane 0 of the amortized
    /// chain, or columns of the alternating layout (`columns`), each once.
    fn check_chains(
        &self,
        lanes: &[(u32, &[RistrettoPoint])],
        chains: &[LaneChain],
        columns: bool,
    ) -> Result<(), ClientError> {
        let k = self.chain.ok_or(ClientError::NoParams)?;
        let chain_err = |lane: u32, why: &str| {
            ClientError::Evidence(EvidenceError::Chain {
                lane,
                why: why.to_string(),
            })
        };
        if lanes.is_empty() || chains.len() != lanes.len() {
            return Err(chain_err(0, "not one signed chain per lane"));
        }
        let mut seen = HashSet::new();
        for ((lane, c1), chain) in lanes.iter().zip(chains) {
            if chain.lane != *lane || !seen.insert(*lane) {
                return Err(chain_err(*lane, "chain of another lane, or a lane twice"));
            }
            if (*lane & COLUMN_LANE != 0) != columns {
                return Err(chain_err(*lane, "not a final lane of this run"));
            }
            evidence::check_chain(&self.run, chain, c1, k, self.directory.as_deref())?;
        }
        Ok(())
    }

    /// A partial decryption of the final list, only if it is the end of
    /// the signed chains: one chain (lane 0) for the amortized variant, the
    /// columns in order for the alternating layout.
    fn decrypt(
        &mut self,
        c1: Vec<RistrettoPoint>,
        chains: Vec<LaneChain>,
    ) -> Result<Message, ClientError> {
        if self.key_share.is_none() {
            return Err(ClientError::NoKeyShare);
        }
        let columns = self.variant == Some(Variant::Alternating);
        let mut lanes: Vec<(u32, &[RistrettoPoint])> = Vec::with_capacity(chains.len());
        let mut at = 0usize;
        for ch in &chains {
            let end = at.saturating_add(ch.len as usize);
            let seg = c1.get(at..end).ok_or_else(|| {
                ClientError::Evidence(EvidenceError::Chain {
                    lane: ch.lane,
                    why: "the chains do not cover the list".into(),
                })
            })?;
            lanes.push((ch.lane, seg));
            at = end;
        }
        if at != c1.len() || (!columns && chains.len() != 1) {
            return Err(ClientError::Evidence(EvidenceError::Chain {
                lane: 0,
                why: "the chains do not cover the list".into(),
            }));
        }
        self.check_chains(&lanes, &chains, columns)?;
        let share = self.key_share.as_ref().ok_or(ClientError::NoKeyShare)?;
        // The partial and its proof involve only `c1`.
        let cts: Vec<Ciphertext> = c1
            .into_iter()
            .map(|c1| Ciphertext {
                c1,
                c2: RistrettoPoint::identity(),
            })
            .collect();
        let partial = share.partial_decrypt(&cts, &context::decrypt(&self.run), &mut self.rng);
        Ok(Message::DecryptResponse { partial })
    }

    #[allow(clippy::too_many_arguments)]
    fn lane_key_announce(
        &mut self,
        messages: u32,
        slot_keys: Vec<PublicKey>,
        lane_keys: Vec<(u32, PublicKey)>,
        served: Vec<u32>,
        qualified: Vec<u32>,
        revealed: Vec<SecretShare>,
        evidence: Vec<Vec<Attestation>>,
    ) -> Result<Message, ClientError> {
        if messages as usize != self.messages.len()
            || slot_keys.len() != self.messages.len()
            || evidence.len() != slot_keys.len()
        {
            return Err(ClientError::MessageCount {
                asked: messages.max(slot_keys.len() as u32),
                held: self.messages.len(),
            });
        }
        for (k, e) in slot_keys.iter().zip(&evidence) {
            self.check_key(k, e)?;
        }
        self.lane_keys = lane_keys.into_iter().collect();
        if self.member.is_some() {
            let keys = served
                .iter()
                .map(|l| self.lane_keys.get(l).copied())
                .collect::<Option<Vec<PublicKey>>>()
                .ok_or_else(|| ClientError::LaneKeys("no key for a served lane".into()))?;
            self.take_key_share(&keys, &qualified, &revealed)?;
            self.served = served;
        }
        self.submit(&slot_keys)
    }

    fn lane_cts(&self, lane: u32, c1: Vec<RistrettoPoint>) -> Result<Vec<Ciphertext>, ClientError> {
        if !self.served.contains(&lane) {
            return Err(ClientError::LaneKeys(format!(
                "lane {lane} is not served by this committee"
            )));
        }
        Ok(c1
            .into_iter()
            .map(|c1| Ciphertext {
                c1,
                c2: RistrettoPoint::identity(),
            })
            .collect())
    }

    /// Re-encrypt every row lane asked to the column keys: position `k` of
    /// row `r` goes to column `k`, whose key is taken from the announcement
    /// (the public layout), never from the request.
    fn reencrypt(
        &mut self,
        lanes: Vec<(u32, Vec<RistrettoPoint>)>,
        chains: Vec<LaneChain>,
    ) -> Result<Message, ClientError> {
        let share = self.key_share.clone().ok_or(ClientError::NoKeyShare)?;
        let view: Vec<(u32, &[RistrettoPoint])> =
            lanes.iter().map(|(l, c)| (*l, c.as_slice())).collect();
        self.check_chains(&view, &chains, false)?;
        let mut partials = Vec::with_capacity(lanes.len());
        for (lane, c1) in lanes {
            if lane & COLUMN_LANE != 0 {
                return Err(ClientError::LaneKeys(format!(
                    "lane {lane} is a column; only rows are re-encrypted"
                )));
            }
            let cts = self.lane_cts(lane, c1)?;
            let targets = (0..cts.len() as u32)
                .map(|k| self.lane_keys.get(&(COLUMN_LANE | k)).copied())
                .collect::<Option<Vec<PublicKey>>>()
                .ok_or_else(|| ClientError::LaneKeys("no key for a target column".into()))?;
            let ctx = ReencryptContext {
                run: &self.run,
                lane,
            };
            let p = reencrypt::reencrypt(&share, &cts, &targets, &ctx, &mut self.rng)?;
            partials.push((lane, p));
        }
        Ok(Message::ReencryptResponse { partials })
    }

    /// Partial decryptions of every column lane asked.
    fn decrypt_lanes(
        &mut self,
        lanes: Vec<(u32, Vec<RistrettoPoint>)>,
        chains: Vec<LaneChain>,
    ) -> Result<Message, ClientError> {
        let share = self.key_share.clone().ok_or(ClientError::NoKeyShare)?;
        // Rows carry the submissions as they came in (only columns hold the
        // output of both shuffle rounds): a row is re-encrypted, never
        // decrypted.
        if let Some((lane, _)) = lanes.iter().find(|(l, _)| l & COLUMN_LANE == 0) {
            return Err(ClientError::LaneKeys(format!(
                "lane {lane} is a row; only columns are decrypted"
            )));
        }
        let view: Vec<(u32, &[RistrettoPoint])> =
            lanes.iter().map(|(l, c)| (*l, c.as_slice())).collect();
        self.check_chains(&view, &chains, true)?;
        let mut partials = Vec::with_capacity(lanes.len());
        for (lane, c1) in lanes {
            let cts = self.lane_cts(lane, c1)?;
            let ctx = context::decrypt_lane(&self.run, lane);
            partials.push((lane, share.partial_decrypt(&cts, &ctx, &mut self.rng)));
        }
        Ok(Message::LaneDecryptResponse { partials })
    }
}
