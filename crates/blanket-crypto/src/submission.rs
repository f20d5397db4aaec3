//! Client submissions: an ElGamal ciphertext with a non-interactive proof
//! of knowledge of its encryption randomness, and the relay's check of a
//! batch of them before the first shuffle (issue 9, item 2).
//!
//! Why: plain ElGamal is malleable. A malicious client that submits
//! `2·(c1, c2)` of an honest client's ciphertext gets `2·M` decrypted next to
//! `M`, and the server, looking for an output `P` with `2P` also in the
//! output, learns the honest client's value after honest, verified shuffles
//! and a correct threshold decryption (`tests/attacks.rs`). The fix is the
//! classic one: each ciphertext `(c1, c2) = (r·G, M + r·pk)` carries a
//! Schnorr proof of knowledge of `r = log_G c1` ([`crate::schnorr`]) bound,
//! through the Fiat-Shamir transcript (domain
//! `blanket/client-ciphertext-pok/v1`), to the client id, the protocol run,
//! the task, the public key and `c2`. [Schnorr-signed ElGamal: Tsiounis and
//! Yung, "On the Security of ElGamal Based Encryption", PKC 1998; Schnorr
//! and Jakobsson, "Security of Signed ElGamal Encryption", ASIACRYPT 2000:
//! the result is non-malleable (IND-CCA in the random oracle and generic
//! group models), so no client can submit a ciphertext related to another
//! client's. Bound statement as in Bernhard, Pereira, Warinschi,
//! ASIACRYPT 2012.] A multiple `k·(c1, c2)` or a re-randomization
//! `(c1 + r'·G, c2 + r'·pk)` of another client's ciphertext needs `k·r` or
//! `r + r'`, which the copier does not know; a verbatim copy carries a proof
//! bound to the victim's id, and the relay also refuses any repeated `c1`.
//!
//! The relay (not in this crate yet) calls [`SubmissionSet::insert`] with the
//! authenticated sender of each submission, or [`verify_submissions`] on a
//! batch, and gives the accepted ciphertexts ([`SubmissionSet::ciphertexts`])
//! to the first shuffler.
//!
//! Wire format (blanket): `u8 version (1) | u32 client | c1 | c2 | c | s`,
//! [`SUBMISSION_BYTES`] = 133 bytes.

use std::collections::{BTreeMap, HashMap};

use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::IsIdentity;
use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use zeroize::Zeroize;

use crate::elgamal::{Ciphertext, PublicKey, SecretKey, CIPHERTEXT_BYTES};
use crate::encoding::{self, MessageError};
use crate::schnorr::{self, SchnorrProof, SCHNORR_PROOF_BYTES};
use crate::transcript::ProofTranscript;
use crate::wire::{DecodeError, Reader};

/// Domain separator of the client's proof of knowledge of its randomness.
pub const SUBMISSION_DOMAIN: &[u8] = b"blanket/client-ciphertext-pok/v1";
/// Version tag of the [`ClientSubmission`] encoding.
pub const SUBMISSION_VERSION: u8 = 1;
/// Encoded size of a [`ClientSubmission`].
pub const SUBMISSION_BYTES: usize = 1 + 4 + CIPHERTEXT_BYTES + SCHNORR_PROOF_BYTES;

/// What a proof is bound to besides the client id: the protocol run and the
/// task (e.g. a run id and the task name or hash).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubmissionContext<'a> {
    pub run: &'a [u8],
    pub task: &'a [u8],
}

/// A client's ciphertext and its proof of knowledge of the randomness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientSubmission {
    pub client: u32,
    pub ciphertext: Ciphertext,
    pub proof: SchnorrProof,
}

/// Why the relay refused a submission.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmissionError {
    /// Malformed bytes (wrong length: e.g. a bare ciphertext without proof,
    /// unknown version, non-canonical or identity point, bad scalar).
    #[error("submission from client {sender}: {source}")]
    Decode {
        sender: u32,
        #[source]
        source: DecodeError,
    },
    /// The id inside the submission is not the authenticated sender.
    #[error("submission claims client {claimed} but was sent by client {sender}")]
    WrongClient { claimed: u32, sender: u32 },
    /// `c1` is the identity (randomness 0: the message in the clear).
    #[error("submission of client {client}: c1 is the identity")]
    IdentityC1 { client: u32 },
    /// The proof of knowledge does not verify for this client, run, task,
    /// key and ciphertext.
    #[error("submission of client {client}: invalid proof of knowledge of the randomness")]
    InvalidProof { client: u32 },
    /// The client already submitted.
    #[error("client {client} already submitted")]
    DuplicateClient { client: u32 },
    /// Another client already submitted this `c1`.
    #[error("submission of client {client} repeats the c1 of client {first}")]
    DuplicateC1 { client: u32, first: u32 },
    /// The message could not be encoded.
    #[error(transparent)]
    Message(#[from] MessageError),
}

fn transcript(
    pk: &PublicKey,
    ctx: &SubmissionContext<'_>,
    client: u32,
    c2: &RistrettoPoint,
) -> ProofTranscript {
    let mut t = ProofTranscript::new(SUBMISSION_DOMAIN);
    t.append_bytes(b"run", ctx.run);
    t.append_bytes(b"task", ctx.task);
    t.append_u64(b"client", client as u64);
    t.append_point(b"pk", pk.compressed());
    t.append_point(b"c2", &c2.compress());
    t
}

/// Encrypt a message element and prove knowledge of the randomness
/// (the statement is `c1 = r·G`, bound to `client`, `ctx`, `pk` and `c2`).
pub fn encrypt_point_with_proof<R: RngCore + CryptoRng>(
    pk: &PublicKey,
    m: &RistrettoPoint,
    client: u32,
    ctx: &SubmissionContext<'_>,
    rng: &mut R,
) -> ClientSubmission {
    let mut r = Scalar::random(rng);
    while r == Scalar::ZERO {
        r = Scalar::random(rng);
    }
    let ciphertext = pk.encrypt_point_with(m, &r);
    let t = transcript(pk, ctx, client, &ciphertext.c2);
    let proof = schnorr::prove_in(t, &ciphertext.c1, &r, rng);
    r.zeroize();
    ClientSubmission {
        client,
        ciphertext,
        proof,
    }
}

/// Domain of the hedged encryption randomness ([`encrypt_with_proof_hedged`]).
const RANDOMNESS_DOMAIN: &[u8] = b"blanket/client-ciphertext-randomness/v1";

/// [`encrypt_point_with_proof`] with hedged randomness (issue 25, item 8):
/// `r` is drawn from merlin's witness RNG on a transcript of the key, the
/// context, the client id and the message, keyed by the client's long-term
/// `secret` and by fresh bytes of `rng` ([`ProofTranscript::witness_rng`],
/// the construction the provers' nonces use). A client restored from an
/// RNG snapshot that encrypts a different message gets a different `r`, so
/// two submissions never share `r` (which would give `M1 - M2 = c2 - c2'`);
/// an `r` is unpredictable if either the RNG or the secret key is. The
/// proof's nonce is hedged as every Schnorr proof here.
pub fn encrypt_point_with_proof_hedged<R: RngCore + CryptoRng>(
    pk: &PublicKey,
    m: &RistrettoPoint,
    client: u32,
    ctx: &SubmissionContext<'_>,
    secret: &SecretKey,
    rng: &mut R,
) -> ClientSubmission {
    let mut t = ProofTranscript::new(RANDOMNESS_DOMAIN);
    t.append_bytes(b"run", ctx.run);
    t.append_bytes(b"task", ctx.task);
    t.append_u64(b"client", client as u64);
    t.append_point(b"pk", pk.compressed());
    let mut witness = zeroize::Zeroizing::new([0u8; 64]);
    witness[..32].copy_from_slice(secret.0.as_bytes());
    witness[32..].copy_from_slice(m.compress().as_bytes());
    let mut hedged = t.witness_rng(witness.as_ref(), rng);
    let mut r = Scalar::random(&mut hedged);
    while r == Scalar::ZERO {
        r = Scalar::random(&mut hedged);
    }
    let ciphertext = pk.encrypt_point_with(m, &r);
    let t = transcript(pk, ctx, client, &ciphertext.c2);
    let proof = schnorr::prove_in(t, &ciphertext.c1, &r, rng);
    r.zeroize();
    ClientSubmission {
        client,
        ciphertext,
        proof,
    }
}

/// Encode, encrypt (hedged, [`encrypt_point_with_proof_hedged`]) and prove
/// a `u64` message: what a client with a long-term key uses.
pub fn encrypt_with_proof_hedged<R: RngCore + CryptoRng>(
    pk: &PublicKey,
    m: u64,
    client: u32,
    ctx: &SubmissionContext<'_>,
    secret: &SecretKey,
    rng: &mut R,
) -> Result<ClientSubmission, SubmissionError> {
    let p = encoding::encode_u64(m)?;
    Ok(encrypt_point_with_proof_hedged(
        pk, &p, client, ctx, secret, rng,
    ))
}

/// Encode, encrypt and prove a `u64` message (randomness straight from
/// `rng`; a client with a long-term key uses
/// [`encrypt_with_proof_hedged`]).
pub fn encrypt_with_proof<R: RngCore + CryptoRng>(
    pk: &PublicKey,
    m: u64,
    client: u32,
    ctx: &SubmissionContext<'_>,
    rng: &mut R,
) -> Result<ClientSubmission, SubmissionError> {
    let p = encoding::encode_u64(m)?;
    Ok(encrypt_point_with_proof(pk, &p, client, ctx, rng))
}

/// Check one submission's proof (and that `c1` is not the identity).
pub fn verify_submission(
    pk: &PublicKey,
    ctx: &SubmissionContext<'_>,
    sub: &ClientSubmission,
) -> Result<(), SubmissionError> {
    let client = sub.client;
    if sub.ciphertext.c1.is_identity() {
        return Err(SubmissionError::IdentityC1 { client });
    }
    let t = transcript(pk, ctx, client, &sub.ciphertext.c2);
    schnorr::verify_in(t, &sub.ciphertext.c1, &sub.proof)
        .map_err(|_| SubmissionError::InvalidProof { client })
}

/// The relay's set of accepted submissions for one run and task: every
/// entry has a valid proof, one submission per client, no repeated `c1`.
#[derive(Clone, Debug)]
pub struct SubmissionSet {
    pk: PublicKey,
    run: Vec<u8>,
    task: Vec<u8>,
    by_client: BTreeMap<u32, Ciphertext>,
    c1_owner: HashMap<[u8; 32], u32>,
}

impl SubmissionSet {
    /// An empty set for `pk` and `ctx`.
    pub fn new(pk: PublicKey, ctx: &SubmissionContext<'_>) -> Self {
        SubmissionSet {
            pk,
            run: ctx.run.to_vec(),
            task: ctx.task.to_vec(),
            by_client: BTreeMap::new(),
            c1_owner: HashMap::new(),
        }
    }

    fn ctx(&self) -> SubmissionContext<'_> {
        SubmissionContext {
            run: &self.run,
            task: &self.task,
        }
    }

    /// Decode, check and add the submission that the authenticated client
    /// `sender` sent. A refused submission leaves the set unchanged.
    pub fn insert(&mut self, sender: u32, bytes: &[u8]) -> Result<(), SubmissionError> {
        let sub = ClientSubmission::from_bytes(bytes)
            .map_err(|source| SubmissionError::Decode { sender, source })?;
        self.insert_submission(sender, &sub)
    }

    /// Check and add a decoded submission from `sender`.
    pub fn insert_submission(
        &mut self,
        sender: u32,
        sub: &ClientSubmission,
    ) -> Result<(), SubmissionError> {
        if sub.client != sender {
            return Err(SubmissionError::WrongClient {
                claimed: sub.client,
                sender,
            });
        }
        verify_submission(&self.pk, &self.ctx(), sub)?;
        self.admit(sub)
    }

    /// Duplicate checks and insertion of a submission whose proof verified.
    fn admit(&mut self, sub: &ClientSubmission) -> Result<(), SubmissionError> {
        let client = sub.client;
        if self.by_client.contains_key(&client) {
            return Err(SubmissionError::DuplicateClient { client });
        }
        let c1 = sub.ciphertext.c1.compress().to_bytes();
        if let Some(&first) = self.c1_owner.get(&c1) {
            return Err(SubmissionError::DuplicateC1 { client, first });
        }
        self.c1_owner.insert(c1, client);
        self.by_client.insert(client, sub.ciphertext);
        Ok(())
    }

    /// Number of accepted submissions.
    pub fn len(&self) -> usize {
        self.by_client.len()
    }

    /// Whether no submission was accepted.
    pub fn is_empty(&self) -> bool {
        self.by_client.is_empty()
    }

    /// The accepted clients, in increasing id order.
    pub fn clients(&self) -> Vec<u32> {
        self.by_client.keys().copied().collect()
    }

    /// The accepted ciphertexts in increasing client-id order: the input of
    /// the first shuffle.
    pub fn ciphertexts(&self) -> Vec<Ciphertext> {
        self.by_client.values().copied().collect()
    }
}

/// Check a batch of `(authenticated sender, bytes)` submissions: decoding
/// and proofs in parallel, then duplicates in the given order (the first
/// submission of a `c1` or of a client wins). Returns the accepted set and
/// the refusals.
pub fn verify_submissions(
    pk: &PublicKey,
    ctx: &SubmissionContext<'_>,
    batch: &[(u32, Vec<u8>)],
) -> (SubmissionSet, Vec<SubmissionError>) {
    let checked: Vec<Result<ClientSubmission, SubmissionError>> = batch
        .par_iter()
        .map(|(sender, bytes)| {
            let sub =
                ClientSubmission::from_bytes(bytes).map_err(|source| SubmissionError::Decode {
                    sender: *sender,
                    source,
                })?;
            if sub.client != *sender {
                return Err(SubmissionError::WrongClient {
                    claimed: sub.client,
                    sender: *sender,
                });
            }
            verify_submission(pk, ctx, &sub)?;
            Ok(sub)
        })
        .collect();
    let mut set = SubmissionSet::new(*pk, ctx);
    let mut refused = Vec::new();
    for r in checked {
        if let Err(e) = r.and_then(|sub| set.admit(&sub)) {
            refused.push(e);
        }
    }
    (set, refused)
}

const WHAT: &str = "client submission";

impl ClientSubmission {
    /// `u8 version | u32 client | c1 | c2 | c | s` (133 bytes).
    pub fn to_bytes(&self) -> [u8; SUBMISSION_BYTES] {
        let mut out = [0u8; SUBMISSION_BYTES];
        out[0] = SUBMISSION_VERSION;
        out[1..5].copy_from_slice(&self.client.to_le_bytes());
        out[5..69].copy_from_slice(&self.ciphertext.to_bytes());
        out[69..].copy_from_slice(&self.proof.to_bytes());
        out
    }

    /// Decode; rejects a wrong length (a ciphertext without its proof), an
    /// unknown version, non-canonical points or scalars and an identity
    /// `c1`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        if bytes.len() != SUBMISSION_BYTES {
            return Err(DecodeError::WrongLength {
                what: WHAT,
                expected: SUBMISSION_BYTES,
                got: bytes.len(),
            });
        }
        let mut r = Reader::new(bytes, WHAT);
        let tag = r.u8()?;
        if tag != SUBMISSION_VERSION {
            return Err(DecodeError::UnknownVersion { what: WHAT, tag });
        }
        let client = r.u32()?;
        let (c1, _) = r.point(0)?;
        if c1.is_identity() {
            return Err(DecodeError::IdentityPoint {
                what: WHAT,
                index: 0,
            });
        }
        let (c2, _) = r.point(1)?;
        let proof = SchnorrProof::from_bytes(r.take(SCHNORR_PROOF_BYTES)?)?;
        r.finish()?;
        Ok(ClientSubmission {
            client,
            ciphertext: Ciphertext { c1, c2 },
            proof,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elgamal::{Keypair, G};
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    const CTX: SubmissionContext<'static> = SubmissionContext {
        run: b"run-1",
        task: b"histogram",
    };

    #[test]
    fn honest_submissions_accepted_and_decrypt() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let kp = Keypair::generate(&mut rng);
        let batch: Vec<(u32, Vec<u8>)> = (0..10u32)
            .map(|i| {
                let s = encrypt_with_proof(&kp.public, 100 + i as u64, i, &CTX, &mut rng).unwrap();
                (i, s.to_bytes().to_vec())
            })
            .collect();
        let (set, refused) = verify_submissions(&kp.public, &CTX, &batch);
        assert!(refused.is_empty());
        assert_eq!(set.len(), 10);
        assert_eq!(set.clients(), (0..10).collect::<Vec<_>>());
        let got: Vec<u64> = set
            .ciphertexts()
            .iter()
            .map(|c| kp.secret.decrypt(c).unwrap())
            .collect();
        assert_eq!(got, (100..110).collect::<Vec<_>>());
    }

    #[test]
    fn bound_to_client_run_task_key_and_c2() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let kp = Keypair::generate(&mut rng);
        let s = encrypt_with_proof(&kp.public, 5, 7, &CTX, &mut rng).unwrap();
        verify_submission(&kp.public, &CTX, &s).unwrap();
        let other_run = SubmissionContext {
            run: b"run-2",
            task: CTX.task,
        };
        let other_task = SubmissionContext {
            run: CTX.run,
            task: b"mean",
        };
        let inv = Err(SubmissionError::InvalidProof { client: 7 });
        assert_eq!(verify_submission(&kp.public, &other_run, &s), inv);
        assert_eq!(verify_submission(&kp.public, &other_task, &s), inv);
        let other_key = Keypair::generate(&mut rng).public;
        assert_eq!(verify_submission(&other_key, &CTX, &s), inv);
        let mut c2 = s;
        c2.ciphertext.c2 += G;
        assert_eq!(verify_submission(&kp.public, &CTX, &c2), inv);
        let mut id = s;
        id.client = 8;
        assert_eq!(
            verify_submission(&kp.public, &CTX, &id),
            Err(SubmissionError::InvalidProof { client: 8 })
        );
    }

    #[test]
    fn set_refuses_duplicates_wrong_sender_and_bare_ciphertexts() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let kp = Keypair::generate(&mut rng);
        let mut set = SubmissionSet::new(kp.public, &CTX);
        let s = encrypt_with_proof(&kp.public, 5, 1, &CTX, &mut rng).unwrap();
        set.insert(1, &s.to_bytes()).unwrap();
        assert_eq!(
            set.insert(1, &s.to_bytes()),
            Err(SubmissionError::DuplicateClient { client: 1 })
        );
        assert_eq!(
            set.insert(2, &s.to_bytes()),
            Err(SubmissionError::WrongClient {
                claimed: 1,
                sender: 2
            })
        );
        // A bare ciphertext (no proof) does not decode.
        assert!(matches!(
            set.insert(3, &s.ciphertext.to_bytes()),
            Err(SubmissionError::Decode {
                sender: 3,
                source: DecodeError::WrongLength { .. }
            })
        ));
        assert_eq!(set.len(), 1);
    }

    #[test]
    fn decoder_rejects_malformed() {
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        let kp = Keypair::generate(&mut rng);
        let s = encrypt_with_proof(&kp.public, 5, 1, &CTX, &mut rng).unwrap();
        let b = s.to_bytes();
        assert_eq!(ClientSubmission::from_bytes(&b).unwrap(), s);
        let mut v = b;
        v[0] = 2;
        assert!(matches!(
            ClientSubmission::from_bytes(&v),
            Err(DecodeError::UnknownVersion { tag: 2, .. })
        ));
        let mut id = b;
        id[5..37].copy_from_slice(&[0u8; 32]);
        assert!(matches!(
            ClientSubmission::from_bytes(&id),
            Err(DecodeError::IdentityPoint { index: 0, .. })
        ));
        let mut nc = b;
        nc[37] |= 1;
        assert!(matches!(
            ClientSubmission::from_bytes(&nc),
            Err(DecodeError::NonCanonicalPoint { index: 1, .. })
        ));
        let mut sc = b;
        sc[101..].copy_from_slice(&[0xff; 32]);
        assert!(matches!(
            ClientSubmission::from_bytes(&sc),
            Err(DecodeError::NonCanonicalScalar { index: 1, .. })
        ));
    }

    /// Issue 25, item 8: a client restored from an RNG snapshot that
    /// encrypts two different messages must not reuse the randomness (else
    /// `c1` repeats and `c2 - c2' = M1 - M2`).
    #[test]
    fn restored_rng_does_not_repeat_the_randomness() {
        let mut rng = ChaCha20Rng::seed_from_u64(77);
        let kp = Keypair::generate(&mut rng);
        let me = Keypair::generate(&mut rng);
        let snapshot = ChaCha20Rng::seed_from_u64(78);
        let enc = |m: u64| {
            encrypt_with_proof_hedged(&kp.public, m, 1, &CTX, &me.secret, &mut snapshot.clone())
                .unwrap()
        };
        let (a, b) = (enc(5), enc(6));
        assert_ne!(a.ciphertext.c1, b.ciphertext.c1);
        verify_submission(&kp.public, &CTX, &a).unwrap();
        verify_submission(&kp.public, &CTX, &b).unwrap();
        // The unhedged function with the same snapshot repeats c1 (what the
        // hedge removes).
        let plain =
            |m: u64| encrypt_with_proof(&kp.public, m, 1, &CTX, &mut snapshot.clone()).unwrap();
        assert_eq!(plain(5).ciphertext.c1, plain(6).ciphertext.c1);
        // Another client key with the same RNG and message: another r.
        let other = Keypair::generate(&mut rng);
        let c =
            encrypt_with_proof_hedged(&kp.public, 5, 1, &CTX, &other.secret, &mut snapshot.clone())
                .unwrap();
        assert_ne!(c.ciphertext.c1, a.ciphertext.c1);
    }
}
