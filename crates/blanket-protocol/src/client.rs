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

use blanket_crypto::channel::{Channel, ChannelError};
use blanket_crypto::dkg::{
    self, Dealer, Dealing, DkgError, DkgParams, SecretShare, VerifiedDealing, VerifiedShare,
};
use blanket_crypto::reencrypt::{self, ReencryptContext, ReencryptError};
use blanket_crypto::shuffle::{self, ProofSystem, ShuffleError, ShuffleSetup};
use blanket_crypto::submission::{encrypt_with_proof, SubmissionContext, SubmissionError};
use blanket_crypto::threshold::KeyShare;
use blanket_crypto::{Ciphertext, Keypair, PublicKey};
use curve25519_dalek::traits::Identity;
use rand_core::{CryptoRng, RngCore};

use crate::context;
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
        }
    }

    /// The same client proving its shuffles with `proof` (the run's
    /// `ProtocolParams::proof`; Terelius-Wikstrom unless set).
    pub fn with_proof(mut self, proof: ProofSystem) -> Self {
        self.proof = proof;
        self
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
            Message::DkgRevealRequest { complainers } => self.dkg_reveal(complainers)?,
            Message::KeyAnnounce {
                public_key,
                messages,
                qualified,
                revealed,
            } => self.key_announce(public_key, messages, qualified, revealed)?,
            Message::ShuffleRequest { lane, stage, list } => self.shuffle(lane, stage, list)?,
            Message::DecryptRequest { c1 } => self.decrypt(c1)?,
            Message::LaneKeyAnnounce {
                messages,
                slot_keys,
                lane_keys,
                served,
                qualified,
                revealed,
            } => {
                self.lane_key_announce(messages, slot_keys, lane_keys, served, qualified, revealed)?
            }
            Message::ReencryptRequest { lanes } => self.reencrypt(lanes)?,
            Message::LaneDecryptRequest { lanes } => self.decrypt_lanes(lanes)?,
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
        Ok(Message::DkgComplaints {
            dealers: complaints,
        })
    }

    fn dkg_reveal(&mut self, complainers: Vec<u32>) -> Result<Message, ClientError> {
        let m = self.member.as_ref().ok_or(ClientError::Unexpected {
            kind: Kind::DkgRevealRequest,
        })?;
        let shares = complainers
            .iter()
            .map(|&c| m.dealer.share_for(c))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Message::DkgReveal { shares })
    }

    fn key_announce(
        &mut self,
        public_key: PublicKey,
        messages: u32,
        qualified: Vec<u32>,
        revealed: Vec<SecretShare>,
    ) -> Result<Message, ClientError> {
        if messages as usize != self.messages.len() {
            return Err(ClientError::MessageCount {
                asked: messages,
                held: self.messages.len(),
            });
        }
        self.take_key_share(&[public_key], &qualified, &revealed)?;
        self.public_key = Some(public_key);
        let keys = vec![public_key; self.messages.len()];
        self.submit(&keys)
    }

    /// A member's key share from QUAL and the revealed shares; `keys` are
    /// the announced keys of its committee (all must be the joint key the
    /// qualified dealings give).
    fn take_key_share(
        &mut self,
        keys: &[PublicKey],
        qualified: &[u32],
        revealed: &[SecretShare],
    ) -> Result<(), ClientError> {
        if let (Some(m), false) = (self.member.as_ref(), qualified.is_empty()) {
            // Every dealing and share held was verified when it arrived
            // (`dkg_shares`); only revealed shares are checked here.
            let qual: Vec<&VerifiedDealing> = qualified
                .iter()
                .filter_map(|q| m.dealings.iter().find(|d| d.dealer() == *q))
                .collect();
            if qual.len() == qualified.len() {
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
            submissions.push(encrypt_with_proof(key, msg, self.id, &ctx, &mut self.rng)?);
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
        Ok(Message::ShuffleResponse {
            lane,
            stage,
            list: out,
            proof,
        })
    }

    fn decrypt(
        &mut self,
        c1: Vec<curve25519_dalek::ristretto::RistrettoPoint>,
    ) -> Result<Message, ClientError> {
        let share = self.key_share.as_ref().ok_or(ClientError::NoKeyShare)?;
        // The partial and its proof involve only `c1`.
        let cts: Vec<Ciphertext> = c1
            .into_iter()
            .map(|c1| Ciphertext {
                c1,
                c2: curve25519_dalek::ristretto::RistrettoPoint::identity(),
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
    ) -> Result<Message, ClientError> {
        if messages as usize != self.messages.len() || slot_keys.len() != self.messages.len() {
            return Err(ClientError::MessageCount {
                asked: messages.max(slot_keys.len() as u32),
                held: self.messages.len(),
            });
        }
        self.lane_keys = lane_keys.into_iter().collect();
        if self.member.is_some() && !qualified.is_empty() {
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

    fn lane_cts(
        &self,
        lane: u32,
        c1: Vec<curve25519_dalek::ristretto::RistrettoPoint>,
    ) -> Result<Vec<Ciphertext>, ClientError> {
        if !self.served.contains(&lane) {
            return Err(ClientError::LaneKeys(format!(
                "lane {lane} is not served by this committee"
            )));
        }
        Ok(c1
            .into_iter()
            .map(|c1| Ciphertext {
                c1,
                c2: curve25519_dalek::ristretto::RistrettoPoint::identity(),
            })
            .collect())
    }

    /// Re-encrypt every row lane asked to the column keys: position `k` of
    /// row `r` goes to column `k`, whose key is taken from the announcement
    /// (the public layout), never from the request.
    fn reencrypt(
        &mut self,
        lanes: Vec<(u32, Vec<curve25519_dalek::ristretto::RistrettoPoint>)>,
    ) -> Result<Message, ClientError> {
        let share = self.key_share.clone().ok_or(ClientError::NoKeyShare)?;
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
        lanes: Vec<(u32, Vec<curve25519_dalek::ristretto::RistrettoPoint>)>,
    ) -> Result<Message, ClientError> {
        let share = self.key_share.clone().ok_or(ClientError::NoKeyShare)?;
        let mut partials = Vec::with_capacity(lanes.len());
        for (lane, c1) in lanes {
            let cts = self.lane_cts(lane, c1)?;
            let ctx = context::decrypt_lane(&self.run, lane);
            partials.push((lane, share.partial_decrypt(&cts, &ctx, &mut self.rng)));
        }
        Ok(Message::LaneDecryptResponse { partials })
    }
}
