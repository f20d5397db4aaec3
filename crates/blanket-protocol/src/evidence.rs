//! What an honest client checks before it acts on a relay's request that
//! could hurt it if the relay lied (issue 25, item 4; `docs/protocol.md`,
//! "What a malicious relay can and cannot do"): statements signed by the
//! clients that made them, which the relay forwards but cannot forge.
//!
//! Signatures are Schnorr signatures under the signer's registered
//! long-term key ([`blanket_crypto::schnorr::prove_keypair_in`]: a proof of
//! knowledge of the secret key on a transcript that holds the message;
//! 64 bytes, hedged nonces), each on its own domain-separated transcript.
//!
//! - Complaints: a committee member signs the list of dealers it accuses
//!   (bound to the DKG session, i.e. the run and the committee, and to its
//!   member index). A dealer reveals a share only for a complaint signed by
//!   its complainer, and never for `t` or more complainers.
//! - Key attestations: every dealer attests its constant-term commitment
//!   under its registered key ([`Attestation`]); a key announcement carries
//!   the qualified dealers' attestations, and every client checks that at
//!   least `t` distinct clients attest commitments summing to the key
//!   ([`check_key`]). Committee members also check QUAL against the
//!   dealings they verified themselves (non-empty, every dealer known,
//!   themselves in it).
//! - Shuffle chains: every shuffler signs the digests of its input and
//!   output lists; a key holder decrypts (or re-encrypts) a list only with
//!   the signed chain that ends in it ([`LaneChain`], [`check_chain`]).

use blanket_crypto::schnorr::{self, SchnorrError, SchnorrProof};
use blanket_crypto::transcript::ProofTranscript;
use blanket_crypto::{Ciphertext, Keypair, PublicKey};
use curve25519_dalek::ristretto::RistrettoPoint;
use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};

use crate::wire::RunId;

const COMPLAINT: &[u8] = b"blanket/protocol/v1/complaint";

/// A member's complaints as it signed them, forwarded by the relay to the
/// accused dealers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedComplaint {
    /// The complainer's member index (1-based).
    pub complainer: u32,
    /// Every dealer (member index) it accused, in the order it signed.
    pub dealers: Vec<u32>,
    /// Its signature ([`sign_complaint`]).
    pub signature: SchnorrProof,
}

fn complaint_transcript(session: &[u8; 32], complainer: u32, dealers: &[u32]) -> ProofTranscript {
    let mut t = ProofTranscript::new(COMPLAINT);
    t.append_bytes(b"session", session);
    t.append_u64(b"complainer", complainer as u64);
    let mut d = Vec::with_capacity(4 * dealers.len());
    for x in dealers {
        d.extend_from_slice(&x.to_le_bytes());
    }
    t.append_bytes(b"dealers", &d);
    t
}

/// Member `complainer` of the DKG `session` signs its complaints.
pub fn sign_complaint<R: RngCore + CryptoRng>(
    session: &[u8; 32],
    complainer: u32,
    dealers: &[u32],
    keys: &Keypair,
    rng: &mut R,
) -> SchnorrProof {
    let t = complaint_transcript(session, complainer, dealers);
    schnorr::prove_keypair_in(t, keys, rng)
}

/// Check a complaint's signature under its complainer's registered key.
pub fn verify_complaint(
    session: &[u8; 32],
    complainer: u32,
    dealers: &[u32],
    signature: &SchnorrProof,
    key: &PublicKey,
) -> Result<(), SchnorrError> {
    let t = complaint_transcript(session, complainer, dealers);
    schnorr::verify_in(t, key.point(), signature)
}

const ATTEST: &[u8] = b"blanket/protocol/v1/key-attest";

/// One qualified dealer's part of an announced joint key: its constant-term
/// commitment `A_0` attested under its registered key
/// ([`blanket_crypto::dkg::Dealer::attest`]). The joint key is the sum of
/// the qualified dealers' `A_0`; a client accepts an announced key only
/// with at least `t` attestations by distinct clients that sum to it, so at
/// least one honest member's secret is in it (fewer than `t` members are
/// malicious) and the relay cannot know the private key. 132 bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attestation {
    /// The dealer's client id.
    pub client: u32,
    /// Its registered long-term key (checked against the directory when
    /// the client holds it).
    pub key: PublicKey,
    /// Its constant-term commitment `A_0`.
    pub a0: RistrettoPoint,
    pub proof: SchnorrProof,
}

/// Encoded size of an [`Attestation`].
pub const ATTESTATION_BYTES: usize = 4 + 32 + 32 + 64;

/// The context a dealer's attestation is bound to: the run and its client
/// id (a client deals at most once per run).
pub fn attest_context(run: &RunId, client: u32) -> Vec<u8> {
    let mut v = ATTEST.to_vec();
    v.extend_from_slice(run);
    v.extend_from_slice(&client.to_le_bytes());
    v
}

/// Why an announced key's evidence was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvidenceError {
    #[error("{got} attestations, need at least the threshold {need}")]
    TooFew { got: usize, need: usize },
    #[error("client {0} attests twice")]
    Repeated(u32),
    #[error("client {0}: the key is not its registered key")]
    NotRegistered(u32),
    #[error("client {0}: the attestation does not verify")]
    Invalid(u32),
    #[error("the attested commitments do not sum to the announced key")]
    WrongSum,
    #[error("shuffle chain of lane {lane}: {why}")]
    Chain { lane: u32, why: String },
}

/// Check the evidence of an announced `key`: at least `threshold`
/// attestations by distinct clients (each key the directory's, when
/// `directory` is given), each valid, summing to `key`.
pub fn check_key(
    run: &RunId,
    key: &PublicKey,
    evidence: &[Attestation],
    threshold: u32,
    directory: Option<&[PublicKey]>,
) -> Result<(), EvidenceError> {
    if evidence.len() < threshold.max(1) as usize {
        return Err(EvidenceError::TooFew {
            got: evidence.len(),
            need: threshold.max(1) as usize,
        });
    }
    let mut seen = std::collections::HashSet::new();
    let mut sum = RistrettoPoint::default();
    for a in evidence {
        if !seen.insert(a.client) {
            return Err(EvidenceError::Repeated(a.client));
        }
        if let Some(dir) = directory {
            if dir.get(a.client as usize) != Some(&a.key) {
                return Err(EvidenceError::NotRegistered(a.client));
            }
        }
        let ctx = attest_context(run, a.client);
        blanket_crypto::dkg::verify_attestation(&ctx, &a.key, &a.a0, &a.proof, a.client)
            .map_err(|_| EvidenceError::Invalid(a.client))?;
        sum += a.a0;
    }
    if sum != *key.point() {
        return Err(EvidenceError::WrongSum);
    }
    Ok(())
}

const SHUFFLE_SIGN: &[u8] = b"blanket/protocol/v1/shuffle-sign";
const C1_DIGEST: &[u8] = b"blanket/protocol/v1/list-c1";
const C2_DIGEST: &[u8] = b"blanket/protocol/v1/list-c2";
const LIST_DIGEST: &[u8] = b"blanket/protocol/v1/list";

fn points_digest(domain: &[u8], points: impl Iterator<Item = RistrettoPoint>) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(domain);
    for p in points {
        h.update(p.compress().as_bytes());
    }
    h.finalize().into()
}

/// SHA-256 of the `c1` parts of a list.
pub fn c1_digest(c1: &[RistrettoPoint]) -> [u8; 32] {
    points_digest(C1_DIGEST, c1.iter().copied())
}

/// SHA-256 of the `c2` parts of a list.
pub fn c2_digest(list: &[Ciphertext]) -> [u8; 32] {
    points_digest(C2_DIGEST, list.iter().map(|c| c.c2))
}

/// The digest of a list a shuffler signs: of its `c1` and `c2` digests (so
/// that a key holder, which receives only the `c1`s, recomputes it from
/// them and the relay's `c2` digest).
pub fn list_digest_from(c1: &[u8; 32], c2: &[u8; 32]) -> [u8; 32] {
    Sha256::new()
        .chain_update(LIST_DIGEST)
        .chain_update(c1)
        .chain_update(c2)
        .finalize()
        .into()
}

/// [`list_digest_from`] of a whole list.
pub fn list_digest(list: &[Ciphertext]) -> [u8; 32] {
    let c1: Vec<RistrettoPoint> = list.iter().map(|c| c.c1).collect();
    list_digest_from(&c1_digest(&c1), &c2_digest(list))
}

fn shuffle_transcript(
    run: &RunId,
    lane: u32,
    stage: u32,
    shuffler: u32,
    input: &[u8; 32],
    output: &[u8; 32],
) -> ProofTranscript {
    let mut t = ProofTranscript::new(SHUFFLE_SIGN);
    t.append_bytes(b"run", run);
    t.append_u64(b"lane", lane as u64);
    t.append_u64(b"stage", stage as u64);
    t.append_u64(b"shuffler", shuffler as u64);
    t.append_bytes(b"input", input);
    t.append_bytes(b"output", output);
    t
}

/// A shuffler signs "I shuffled the list of digest `input` into the list
/// of digest `output` at `stage` of `lane`".
#[allow(clippy::too_many_arguments)]
pub fn sign_shuffle<R: RngCore + CryptoRng>(
    run: &RunId,
    lane: u32,
    stage: u32,
    shuffler: u32,
    input: &[u8; 32],
    output: &[u8; 32],
    keys: &Keypair,
    rng: &mut R,
) -> SchnorrProof {
    let t = shuffle_transcript(run, lane, stage, shuffler, input, output);
    schnorr::prove_keypair_in(t, keys, rng)
}

/// Check a shuffler's signature ([`sign_shuffle`]) under its key.
#[allow(clippy::too_many_arguments)]
pub fn verify_shuffle(
    run: &RunId,
    lane: u32,
    stage: u32,
    shuffler: u32,
    input: &[u8; 32],
    output: &[u8; 32],
    signature: &SchnorrProof,
    key: &PublicKey,
) -> Result<(), SchnorrError> {
    let t = shuffle_transcript(run, lane, stage, shuffler, input, output);
    schnorr::verify_in(t, key.point(), signature)
}

/// One accepted shuffle of a lane's chain, as its shuffler signed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainLink {
    pub shuffler: u32,
    /// Its registered key (checked against the directory when the client
    /// holds it).
    pub key: PublicKey,
    pub signature: SchnorrProof,
}

/// Encoded size of a [`ChainLink`].
pub const CHAIN_LINK_BYTES: usize = 4 + 32 + 64;

/// The evidence that a lane's list is the end of its shuffle chain: the
/// digests of the lane's list before the first shuffle and after each
/// (`k + 1`), each shuffle signed by its shuffler, and the digest of the
/// final list's `c2` parts. A key holder decrypts (or re-encrypts) a lane's
/// `c1`s only if [`check_chain`] passes on them: `k` signatures of distinct
/// (registered) shufflers link the lane's input to exactly these `c1`s.
/// Cost to the key holder: `48 + 32 (k + 1) + 100 k` bytes per lane and
/// `k` signature checks (two scalar multiplications each) plus one hash of
/// its `c1`s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneChain {
    pub lane: u32,
    /// Ciphertexts in the lane.
    pub len: u32,
    pub c2_digest: [u8; 32],
    pub digests: Vec<[u8; 32]>,
    pub links: Vec<ChainLink>,
}

/// Check that `c1` (the `c1`s of lane `chain.lane`) is the end of a chain
/// of exactly `k` shuffles by distinct shufflers, each signed, each the
/// input of the next ([`LaneChain`]).
pub fn check_chain(
    run: &RunId,
    chain: &LaneChain,
    c1: &[RistrettoPoint],
    k: u32,
    directory: Option<&[PublicKey]>,
) -> Result<(), EvidenceError> {
    let lane = chain.lane;
    let bad = |why: String| EvidenceError::Chain { lane, why };
    if chain.len as usize != c1.len() {
        return Err(bad(format!(
            "{} ciphertexts, evidence for {}",
            c1.len(),
            chain.len
        )));
    }
    if chain.links.len() != k as usize || chain.digests.len() != k as usize + 1 {
        return Err(bad(format!(
            "{} shuffles and {} digests, the run's chain is {k}",
            chain.links.len(),
            chain.digests.len()
        )));
    }
    let mut seen = std::collections::HashSet::new();
    for (s, l) in chain.links.iter().enumerate() {
        if !seen.insert(l.shuffler) {
            return Err(bad(format!("shuffler {} appears twice", l.shuffler)));
        }
        if let Some(dir) = directory {
            if dir.get(l.shuffler as usize) != Some(&l.key) {
                return Err(bad(format!(
                    "shuffler {}: not its registered key",
                    l.shuffler
                )));
            }
        }
        let (input, output) = (&chain.digests[s], &chain.digests[s + 1]);
        verify_shuffle(
            run,
            lane,
            s as u32,
            l.shuffler,
            input,
            output,
            &l.signature,
            &l.key,
        )
        .map_err(|_| bad(format!("stage {s}: the signature does not verify")))?;
    }
    if list_digest_from(&c1_digest(c1), &chain.c2_digest) != chain.digests[k as usize] {
        return Err(bad("the list is not the chain's final output".into()));
    }
    Ok(())
}
