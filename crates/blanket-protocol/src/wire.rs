//! Wire messages of the protocol: one versioned envelope, seventeen kinds
//! (13 to 17 only in runs with per-lane key committees),
//! every length checked (`docs/protocol.md`, "Wire format").
//!
//! Envelope (version 3), little-endian:
//! `u8 version | u8 kind | run id (16) | u32 round | u32 sender |
//! u32 recipient | u32 payload length | payload`. The payload length must
//! equal the rest of the input and stay below [`MAX_PAYLOAD_BYTES`]; every
//! payload decoder must consume its input exactly. The relay's id is
//! [`RELAY_ID`]. Cryptographic objects use the encodings of
//! `blanket-crypto` (`docs/crypto.md`); variable-length ones (dealings,
//! sealed channel messages, proofs) are prefixed with a `u32` length.
//!
//! Version 2 changed one payload from version 1: the proof of a
//! shuffle response is an `AnyShuffleProof` (a tag byte, 1
//! Terelius-Wikstrom or 2 Bayer-Groth, then that proof), so that the run's
//! proof system (`ProtocolParams::proof`) can be either.
//!
//! Version 3 (issue 25, item 4) adds the evidence honest clients check
//! against a malicious relay ([`crate::evidence`]): complaints are signed
//! and forwarded signed; dealings come with an attestation of their
//! constant term, and key announcements with the qualified dealers'
//! attestations; shuffle responses are signed, and every request to
//! decrypt or re-encrypt carries the signed chain of each lane
//! (`evidence::LaneChain`).

use blanket_crypto::channel::SealedMessage;
use blanket_crypto::dkg::{Dealing, SecretShare, SECRET_SHARE_BYTES};
use blanket_crypto::elgamal::{decode_ciphertexts, encode_ciphertexts, MAX_LIST_LEN};
use blanket_crypto::reencrypt::ReencryptionPartial;
use blanket_crypto::schnorr::{SchnorrProof, SCHNORR_PROOF_BYTES};
use blanket_crypto::shuffle::AnyShuffleProof;
use blanket_crypto::submission::{ClientSubmission, SUBMISSION_BYTES};
use blanket_crypto::threshold::PartialDecryption;
use blanket_crypto::wire::{decode_point, DecodeError, POINT_BYTES};
use blanket_crypto::{Ciphertext, PublicKey};
use curve25519_dalek::ristretto::RistrettoPoint;

mod codec;
mod payload;
use codec::{crypto, Reader, Writer};
use payload::{decode_payload, encode_payload};

use crate::evidence::{
    Attestation, ChainLink, LaneChain, SignedComplaint, ATTESTATION_BYTES, CHAIN_LINK_BYTES,
};

/// Version tag of the envelope.
pub const PROTOCOL_VERSION: u8 = 3;
/// The relay's identity in envelopes.
pub const RELAY_ID: u32 = u32::MAX;
/// Envelope header length.
pub const HEADER_BYTES: usize = 1 + 1 + 16 + 4 + 4 + 4 + 4;
/// Largest payload accepted (a shuffle response for 2^20 ciphertexts is
/// about 232 MiB; larger runs use the alternating layout).
pub const MAX_PAYLOAD_BYTES: usize = 1 << 28;
/// Largest key committee.
pub const MAX_COMMITTEE: usize = 4096;
/// Most messages one client may submit.
pub const MAX_MESSAGES_PER_CLIENT: usize = 1024;

/// Lane ids of the column round of the alternating layout (row and
/// amortized lanes count from 0).
pub const COLUMN_LANE: u32 = 1 << 31;

/// Identifies one protocol run; bound into every proof's context.
pub type RunId = [u8; 16];

/// Why a decoder refused its input. `what` names the message or field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Shorter than its header or a field says.
    #[error("{what}: truncated: need {need} bytes, got {got}")]
    Truncated {
        what: &'static str,
        need: usize,
        got: usize,
    },
    /// The payload length field does not match the input.
    #[error("{what}: wrong length: header says {expected} bytes, got {got}")]
    WrongLength {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// Unknown envelope version.
    #[error("envelope: unknown version {got} (this build speaks version {expected})")]
    UnknownVersion { got: u8, expected: u8 },
    /// Unknown message kind.
    #[error("envelope: unknown message kind {0} (allowed 1..=17)")]
    UnknownKind(u8),
    /// A length above the allowed maximum.
    #[error("{what}: length {len} exceeds the maximum {max}")]
    TooLarge {
        what: &'static str,
        len: usize,
        max: usize,
    },
    /// A count field out of range.
    #[error("{what}: count {count} out of range (max {max})")]
    CountOutOfRange {
        what: &'static str,
        count: usize,
        max: usize,
    },
    /// Bytes left after the payload was decoded.
    #[error("{what}: {extra} trailing bytes")]
    TrailingBytes { what: &'static str, extra: usize },
    /// A cryptographic object inside the payload did not decode.
    #[error("{what}: {source}")]
    Crypto {
        what: &'static str,
        #[source]
        source: DecodeError,
    },
}

/// The message kinds, in protocol order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Kind {
    DkgStart = 1,
    DkgDeal = 2,
    DkgShares = 3,
    DkgComplaints = 4,
    DkgRevealRequest = 5,
    DkgReveal = 6,
    KeyAnnounce = 7,
    Submit = 8,
    ShuffleRequest = 9,
    ShuffleResponse = 10,
    DecryptRequest = 11,
    DecryptResponse = 12,
    LaneKeyAnnounce = 13,
    ReencryptRequest = 14,
    ReencryptResponse = 15,
    LaneDecryptRequest = 16,
    LaneDecryptResponse = 17,
}

impl Kind {
    fn from_u8(b: u8) -> Result<Kind, WireError> {
        use Kind::*;
        Ok(match b {
            1 => DkgStart,
            2 => DkgDeal,
            3 => DkgShares,
            4 => DkgComplaints,
            5 => DkgRevealRequest,
            6 => DkgReveal,
            7 => KeyAnnounce,
            8 => Submit,
            9 => ShuffleRequest,
            10 => ShuffleResponse,
            11 => DecryptRequest,
            12 => DecryptResponse,
            13 => LaneKeyAnnounce,
            14 => ReencryptRequest,
            15 => ReencryptResponse,
            16 => LaneDecryptRequest,
            17 => LaneDecryptResponse,
            other => return Err(WireError::UnknownKind(other)),
        })
    }

    /// The reply a client owes to a relay request of this kind.
    pub fn reply(self) -> Option<Kind> {
        use Kind::*;
        match self {
            DkgStart => Some(DkgDeal),
            DkgShares => Some(DkgComplaints),
            DkgRevealRequest => Some(DkgReveal),
            KeyAnnounce => Some(Submit),
            ShuffleRequest => Some(ShuffleResponse),
            DecryptRequest => Some(DecryptResponse),
            LaneKeyAnnounce => Some(Submit),
            ReencryptRequest => Some(ReencryptResponse),
            LaneDecryptRequest => Some(LaneDecryptResponse),
            _ => None,
        }
    }
}

/// A message's content. (Variants differ in size; messages are transient,
/// one per party and round, so they are not boxed.)
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Message {
    /// Relay to a key-committee member: the committee (client id and
    /// registered long-term key, member index = position + 1) and the
    /// threshold.
    DkgStart {
        threshold: u32,
        members: Vec<(u32, PublicKey)>,
    },
    /// Member to relay: its dealing, the attestation of its constant term
    /// under its registered key (`evidence::Attestation`) and one sealed
    /// share per other member.
    DkgDeal {
        dealing: Dealing,
        attestation: SchnorrProof,
        shares: Vec<SealedMessage>,
    },
    /// Relay to member: every valid dealing and the sealed shares addressed
    /// to this member.
    DkgShares {
        dealings: Vec<Dealing>,
        shares: Vec<SealedMessage>,
    },
    /// Member to relay: the dealers whose share was missing or wrong,
    /// signed (`evidence::sign_complaint`; an empty list is signed too).
    DkgComplaints {
        dealers: Vec<u32>,
        signature: SchnorrProof,
    },
    /// Relay to an accused dealer: the signed complaints naming it, as
    /// their complainers sent them.
    DkgRevealRequest { complaints: Vec<SignedComplaint> },
    /// Accused dealer to relay: the complainers' shares, in the clear.
    DkgReveal { shares: Vec<SecretShare> },
    /// Relay to every client: the joint key and how many messages to send;
    /// to key holders also QUAL (dealer indices) and the shares revealed
    /// for them; to every client the qualified dealers' attestations
    /// (`evidence::check_key`).
    KeyAnnounce {
        public_key: PublicKey,
        messages: u32,
        qualified: Vec<u32>,
        revealed: Vec<SecretShare>,
        evidence: Vec<Attestation>,
    },
    /// Client to relay: its encrypted message(s) with proofs of knowledge.
    Submit { submissions: Vec<ClientSubmission> },
    /// Relay to a shuffler: the list to shuffle at this chain stage of this
    /// lane (0 for the amortized chain; rows and columns of the alternating
    /// layout are lanes).
    ShuffleRequest {
        lane: u32,
        stage: u32,
        list: Vec<Ciphertext>,
    },
    /// Shuffler to relay: the shuffled list and its proof (of the run's
    /// proof system; the relay refuses the other one).
    ShuffleResponse {
        lane: u32,
        stage: u32,
        /// The shuffler's signature on the digests of its input and
        /// output (`evidence::sign_shuffle`).
        signature: SchnorrProof,
        list: Vec<Ciphertext>,
        proof: AnyShuffleProof,
    },
    /// Relay to a key holder: the `c1` parts of the final list and the
    /// signed chain of every lane that ends in it (in list order; one lane
    /// for the amortized chain, the columns for the alternating layout).
    DecryptRequest {
        c1: Vec<RistrettoPoint>,
        chains: Vec<LaneChain>,
    },
    /// Key holder to relay: its partial decryption with the DLEQ proof.
    DecryptResponse { partial: PartialDecryption },
    /// Per-lane key committees, relay to every client: how many messages
    /// to send and the key of each of its message slots' rows
    /// (`slot_keys[s]` for slot `s`); the keys of the lanes it may serve
    /// (`lane_keys`: a shuffler's row and column, a row-committee member's
    /// re-encryption targets, i.e. every column); to a lane-committee
    /// member the lanes its committee serves (`served`, all under its
    /// committee's key), QUAL and the shares revealed for it; the
    /// attestations of each slot key (`evidence[s]` for `slot_keys[s]`).
    LaneKeyAnnounce {
        messages: u32,
        slot_keys: Vec<PublicKey>,
        lane_keys: Vec<(u32, PublicKey)>,
        served: Vec<u32>,
        qualified: Vec<u32>,
        revealed: Vec<SecretShare>,
        evidence: Vec<Vec<Attestation>>,
    },
    /// Relay to a row-committee member: the `c1`s of every row lane it
    /// serves, after the row chains.
    ReencryptRequest {
        lanes: Vec<(u32, Vec<RistrettoPoint>)>,
        /// The signed chain of each lane, in the same order.
        chains: Vec<LaneChain>,
    },
    /// Row-committee member to relay: one re-encryption partial (with its
    /// proof) per lane asked, targets from the announced column keys.
    ReencryptResponse {
        partials: Vec<(u32, ReencryptionPartial)>,
    },
    /// Relay to a column-committee member: the `c1`s of every column lane
    /// it serves, after the column chains.
    LaneDecryptRequest {
        lanes: Vec<(u32, Vec<RistrettoPoint>)>,
        /// The signed chain of each lane, in the same order.
        chains: Vec<LaneChain>,
    },
    /// Column-committee member to relay: one DLEQ-checked partial
    /// decryption per lane asked.
    LaneDecryptResponse {
        partials: Vec<(u32, PartialDecryption)>,
    },
}

impl Message {
    /// This message's kind.
    pub fn kind(&self) -> Kind {
        match self {
            Message::DkgStart { .. } => Kind::DkgStart,
            Message::DkgDeal { .. } => Kind::DkgDeal,
            Message::DkgShares { .. } => Kind::DkgShares,
            Message::DkgComplaints { .. } => Kind::DkgComplaints,
            Message::DkgRevealRequest { .. } => Kind::DkgRevealRequest,
            Message::DkgReveal { .. } => Kind::DkgReveal,
            Message::KeyAnnounce { .. } => Kind::KeyAnnounce,
            Message::Submit { .. } => Kind::Submit,
            Message::ShuffleRequest { .. } => Kind::ShuffleRequest,
            Message::ShuffleResponse { .. } => Kind::ShuffleResponse,
            Message::DecryptRequest { .. } => Kind::DecryptRequest,
            Message::DecryptResponse { .. } => Kind::DecryptResponse,
            Message::LaneKeyAnnounce { .. } => Kind::LaneKeyAnnounce,
            Message::ReencryptRequest { .. } => Kind::ReencryptRequest,
            Message::ReencryptResponse { .. } => Kind::ReencryptResponse,
            Message::LaneDecryptRequest { .. } => Kind::LaneDecryptRequest,
            Message::LaneDecryptResponse { .. } => Kind::LaneDecryptResponse,
        }
    }
}

/// A message with its routing header.
#[derive(Clone, Debug)]
pub struct Envelope {
    pub run: RunId,
    pub round: u32,
    pub sender: u32,
    pub recipient: u32,
    pub message: Message,
}

/// Most lanes in one lane message (rows plus columns of the largest grid).
pub const MAX_LANES: usize = 1 << 16;

/// Most shuffles in one chain.
pub const MAX_CHAIN: usize = 1 << 16;

impl Envelope {
    /// Encode (header and payload).
    pub fn to_bytes(&self) -> Vec<u8> {
        let payload = encode_payload(&self.message);
        let mut out = Vec::with_capacity(HEADER_BYTES + payload.len());
        out.push(PROTOCOL_VERSION);
        out.push(self.message.kind() as u8);
        out.extend_from_slice(&self.run);
        out.extend_from_slice(&self.round.to_le_bytes());
        out.extend_from_slice(&self.sender.to_le_bytes());
        out.extend_from_slice(&self.recipient.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    /// Decode; every malformed input is a typed [`WireError`], never a
    /// panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, WireError> {
        let (h, payload) = Self::header(bytes)?;
        let message = decode_payload(h.kind, payload)?;
        Ok(Envelope {
            run: h.run,
            round: h.round,
            sender: h.sender,
            recipient: h.recipient,
            message,
        })
    }

    /// The header and the payload bytes, with every check of
    /// [`Envelope::from_bytes`] on the header (version, kind, payload
    /// length) but the payload not decoded. A router or a simulator that
    /// needs only the kind or the addresses uses this: decoding a payload
    /// decompresses every point in it (a `DkgShares` carries `c t` of them),
    /// which is most of the cost of reading a message (issue 16).
    pub fn header(bytes: &[u8]) -> Result<(Header, &[u8]), WireError> {
        let mut r = Reader::new(bytes, "envelope");
        let version = r.u8()?;
        if version != PROTOCOL_VERSION {
            return Err(WireError::UnknownVersion {
                got: version,
                expected: PROTOCOL_VERSION,
            });
        }
        let kind = Kind::from_u8(r.u8()?)?;
        let mut run = [0u8; 16];
        run.copy_from_slice(r.take(16)?);
        let round = r.u32()?;
        let sender = r.u32()?;
        let recipient = r.u32()?;
        let len = r.u32()? as usize;
        if len > MAX_PAYLOAD_BYTES {
            return Err(WireError::TooLarge {
                what: "envelope payload",
                len,
                max: MAX_PAYLOAD_BYTES,
            });
        }
        let payload = r.rest();
        if payload.len() != len {
            return Err(WireError::WrongLength {
                what: "envelope payload",
                expected: len,
                got: payload.len(),
            });
        }
        let h = Header {
            kind,
            run,
            round,
            sender,
            recipient,
        };
        Ok((h, payload))
    }
}

/// An envelope's header ([`Envelope::header`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub run: RunId,
    pub round: u32,
    pub sender: u32,
    pub recipient: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_checked_before_payload() {
        let env = Envelope {
            run: [7; 16],
            round: 3,
            sender: 1,
            recipient: RELAY_ID,
            message: Message::DkgComplaints {
                dealers: vec![2, 5],
                signature: SchnorrProof {
                    c: Default::default(),
                    s: Default::default(),
                },
            },
        };
        let b = env.to_bytes();
        assert_eq!(b.len(), HEADER_BYTES + 4 + 8 + SCHNORR_PROOF_BYTES);
        let back = Envelope::from_bytes(&b).unwrap();
        assert_eq!(back.to_bytes(), b);
        let (h, payload) = Envelope::header(&b).unwrap();
        assert_eq!((h.kind, h.run, h.round), (Kind::DkgComplaints, [7; 16], 3));
        assert_eq!((h.sender, h.recipient, payload.len()), (1, RELAY_ID, 76));
        // Versions 1 (the shuffle proof was untagged) and 2 (no evidence
        // against a malicious relay) are refused, as is 4.
        for v in [1, 2, 4] {
            let mut bad = b.clone();
            bad[0] = v;
            assert!(matches!(
                Envelope::from_bytes(&bad),
                Err(WireError::UnknownVersion { got, expected: 3 }) if got == v
            ));
        }
        let mut bad = b.clone();
        bad[1] = 18;
        assert_eq!(
            Envelope::from_bytes(&bad).unwrap_err(),
            WireError::UnknownKind(18)
        );
        let mut bad = b.clone();
        bad.push(0);
        assert!(matches!(
            Envelope::from_bytes(&bad),
            Err(WireError::WrongLength { .. })
        ));
        // A count that promises more items than bytes left.
        let mut bad = b.clone();
        bad[HEADER_BYTES] = 200;
        assert!(matches!(
            Envelope::from_bytes(&bad),
            Err(WireError::CountOutOfRange { .. })
        ));
    }
}
