//! Schnorr proof of knowledge of a discrete logarithm, non-interactive.
//!
//! [Schnorr, "Efficient Signature Generation by Smart Cards", J. Cryptology
//! 1991 (the identification protocol); Fiat and Shamir, CRYPTO 1986; in the
//! "strong" Fiat-Shamir form that hashes the statement, Bernhard, Pereira and
//! Warinschi, "How Not to Prove Yourself", ASIACRYPT 2012.]
//! Proves knowledge of `x` with `X = x·G`: pick a nonce `k`, `R = k·G`,
//! `c = H(transcript, X, R)`, `s = k + c·x`. blanket sends the compact form
//! `(c, s)` (64 bytes); the verifier recomputes `R = s·G - c·X` and checks
//! the challenge. The caller primes the transcript with its own domain
//! separator and with everything the proof must be bound to (who proves, for
//! which run, which key): the DKG binds the dealer's index, the committee and
//! the run ([`crate::dkg`], as FROST's key generation does), a client binds
//! its id, the run, the task and the whole ciphertext
//! ([`crate::submission`]). Nonces are hedged: derived from the transcript,
//! the witness and fresh randomness ([`ProofTranscript::witness_rng`]), so a
//! repeated RNG state alone never repeats a nonce for a different statement.

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::VartimeMultiscalarMul;
use rand_core::{CryptoRng, RngCore};
use zeroize::Zeroize;

use crate::elgamal::G;
use crate::transcript::ProofTranscript;
use crate::wire::{DecodeError, SCALAR_BYTES};

/// Encoded size of a [`SchnorrProof`].
pub const SCHNORR_PROOF_BYTES: usize = 2 * SCALAR_BYTES;

/// A Schnorr proof of knowledge in compact form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchnorrProof {
    /// Challenge.
    pub c: Scalar,
    /// Response.
    pub s: Scalar,
}

/// The proof does not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Schnorr proof of knowledge verification failed")]
pub struct SchnorrError;

/// Prove knowledge of `x = log_G X` on a transcript the caller primed with
/// its domain and context.
pub fn prove_in<R: RngCore + CryptoRng>(
    mut t: ProofTranscript,
    x_pub: &RistrettoPoint,
    x: &Scalar,
    rng: &mut R,
) -> SchnorrProof {
    t.append_point(b"X", &x_pub.compress());
    let mut nonce_rng = t.witness_rng(x.as_bytes(), rng);
    let mut k = Scalar::random(&mut nonce_rng);
    let r = &k * RISTRETTO_BASEPOINT_TABLE;
    t.append_point(b"R", &r.compress());
    let c = t.challenge_scalar(b"c");
    let s = k + c * x;
    k.zeroize();
    SchnorrProof { c, s }
}

/// Prove knowledge of the secret half of `keys` on a transcript the caller
/// primed (with a message in it this is a Schnorr signature under
/// `keys.public`, the relay's request authentication in blanket-server;
/// verify with [`verify_in`] and `keys.public.point()`).
pub fn prove_keypair_in<R: RngCore + CryptoRng>(
    t: ProofTranscript,
    keys: &crate::elgamal::Keypair,
    rng: &mut R,
) -> SchnorrProof {
    prove_in(t, keys.public.point(), &keys.secret.0, rng)
}

/// Verify a proof made by [`prove_in`] on an identically primed transcript.
pub fn verify_in(
    t: ProofTranscript,
    x_pub: &RistrettoPoint,
    proof: &SchnorrProof,
) -> Result<(), SchnorrError> {
    verify_in_compressed(t, x_pub, &x_pub.compress(), proof)
}

/// [`verify_in`] for a caller that already holds the canonical encoding of
/// `X` (e.g. the bytes it was decoded from): the transcript is the same,
/// one compression (an inversion square root, the dominant cost of a
/// verification) is saved. `x_compressed` must be `x_pub.compress()`; a
/// different encoding changes the transcript and the proof is rejected.
pub(crate) fn verify_in_compressed(
    mut t: ProofTranscript,
    x_pub: &RistrettoPoint,
    x_compressed: &CompressedRistretto,
    proof: &SchnorrProof,
) -> Result<(), SchnorrError> {
    t.append_point(b"X", x_compressed);
    let r = RistrettoPoint::vartime_multiscalar_mul([proof.s, -proof.c], [G, *x_pub]);
    t.append_point(b"R", &r.compress());
    if t.challenge_scalar(b"c") == proof.c {
        Ok(())
    } else {
        Err(SchnorrError)
    }
}

impl SchnorrProof {
    /// `c || s`, 64 bytes.
    pub fn to_bytes(&self) -> [u8; SCHNORR_PROOF_BYTES] {
        let mut out = [0u8; SCHNORR_PROOF_BYTES];
        out[..32].copy_from_slice(self.c.as_bytes());
        out[32..].copy_from_slice(self.s.as_bytes());
        out
    }

    /// Decode; rejects wrong length and non-canonical scalars.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "Schnorr proof";
        if bytes.len() != SCHNORR_PROOF_BYTES {
            return Err(DecodeError::WrongLength {
                what: WHAT,
                expected: SCHNORR_PROOF_BYTES,
                got: bytes.len(),
            });
        }
        Ok(SchnorrProof {
            c: crate::wire::decode_scalar(&bytes[..32], WHAT, 0)?,
            s: crate::wire::decode_scalar(&bytes[32..], WHAT, 1)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    fn primed(ctx: &[u8]) -> ProofTranscript {
        let mut t = ProofTranscript::new(b"blanket/test-schnorr/v1");
        t.append_bytes(b"ctx", ctx);
        t
    }

    #[test]
    fn completeness_soundness_binding() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let x = Scalar::random(&mut rng);
        let xp = x * G;
        let p = prove_in(primed(b"a"), &xp, &x, &mut rng);
        verify_in(primed(b"a"), &xp, &p).unwrap();
        assert_eq!(verify_in(primed(b"b"), &xp, &p), Err(SchnorrError));
        assert_eq!(verify_in(primed(b"a"), &(xp + G), &p), Err(SchnorrError));
        // A proof for another witness does not verify.
        let bad = prove_in(primed(b"a"), &xp, &(x + Scalar::ONE), &mut rng);
        assert_eq!(verify_in(primed(b"a"), &xp, &bad), Err(SchnorrError));
        assert_eq!(SchnorrProof::from_bytes(&p.to_bytes()).unwrap(), p);
        assert!(matches!(
            SchnorrProof::from_bytes(&[0u8; 63]),
            Err(DecodeError::WrongLength { .. })
        ));
        assert!(matches!(
            SchnorrProof::from_bytes(&[0xffu8; 64]),
            Err(DecodeError::NonCanonicalScalar { index: 0, .. })
        ));
    }

    #[test]
    fn nonce_is_hedged_against_a_repeated_rng() {
        // The same RNG state for two statements must not give the same nonce
        // (else x = (s1 - s2) / (c1 - c2)).
        let rng = ChaCha20Rng::seed_from_u64(2);
        let x = Scalar::from(7u8);
        let p1 = prove_in(primed(b"one"), &(x * G), &x, &mut rng.clone());
        let p2 = prove_in(primed(b"two"), &(x * G), &x, &mut rng.clone());
        let k1 = p1.s - p1.c * x;
        let k2 = p2.s - p2.c * x;
        assert_ne!(k1, k2);
    }
}
