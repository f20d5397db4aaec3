//! Chaum-Pedersen proof of equality of discrete logarithms (DLEQ).
//!
//! [Chaum and Pedersen, "Wallet Databases with Observers", CRYPTO 1992;
//! spec appendix "Chaum-Pedersen proof of a correct partial decryption".]
//! Proves knowledge of `x` with `X1 = x·G1` and `X2 = x·G2`: pick `w`,
//! `A = w·G1`, `B = w·G2`, `c = H(context, G1, X1, G2, X2, A, B)`,
//! `s = w + c·x`. blanket sends the compact form `(c, s)` (64 bytes); the
//! verifier recomputes `A = s·G1 - c·X1`, `B = s·G2 - c·X2` and checks the
//! challenge. Non-interactive via a merlin transcript with domain
//! [`crate::transcript::DLEQ_DOMAIN`]; callers may first append their own
//! statement (the threshold module binds a whole ciphertext list).

use curve25519_dalek::ristretto::RistrettoPoint;
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::VartimeMultiscalarMul;
use rand_core::{CryptoRng, RngCore};
use zeroize::Zeroize;

use crate::transcript::ProofTranscript;
use crate::wire::{DecodeError, SCALAR_BYTES};

/// Encoded size of a [`DleqProof`].
pub const DLEQ_PROOF_BYTES: usize = 2 * SCALAR_BYTES;

/// A DLEQ proof in compact form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DleqProof {
    /// Challenge.
    pub c: Scalar,
    /// Response.
    pub s: Scalar,
}

/// The proof does not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("DLEQ proof verification failed")]
pub struct DleqError;

fn append_statement(
    t: &mut ProofTranscript,
    g1: &RistrettoPoint,
    x1: &RistrettoPoint,
    g2: &RistrettoPoint,
    x2: &RistrettoPoint,
) {
    t.append_point(b"g1", &g1.compress());
    t.append_point(b"x1", &x1.compress());
    t.append_point(b"g2", &g2.compress());
    t.append_point(b"x2", &x2.compress());
}

/// Prove `log_{g1} x1 = log_{g2} x2 = x` on the given transcript (which the
/// caller may have primed with context).
pub fn prove_in<R: RngCore + CryptoRng>(
    mut t: ProofTranscript,
    g1: &RistrettoPoint,
    x1: &RistrettoPoint,
    g2: &RistrettoPoint,
    x2: &RistrettoPoint,
    x: &Scalar,
    rng: &mut R,
) -> DleqProof {
    append_statement(&mut t, g1, x1, g2, x2);
    let mut nonce_rng = t.witness_rng(x.as_bytes(), rng);
    let mut w = Scalar::random(&mut nonce_rng);
    let a = w * g1;
    let b = w * g2;
    t.append_point(b"A", &a.compress());
    t.append_point(b"B", &b.compress());
    let c = t.challenge_scalar(b"c");
    let s = w + c * x;
    w.zeroize();
    DleqProof { c, s }
}

/// Verify a proof made by [`prove_in`] on an identically primed transcript.
pub fn verify_in(
    mut t: ProofTranscript,
    g1: &RistrettoPoint,
    x1: &RistrettoPoint,
    g2: &RistrettoPoint,
    x2: &RistrettoPoint,
    proof: &DleqProof,
) -> Result<(), DleqError> {
    append_statement(&mut t, g1, x1, g2, x2);
    let a = RistrettoPoint::vartime_multiscalar_mul([proof.s, -proof.c], [*g1, *x1]);
    let b = RistrettoPoint::vartime_multiscalar_mul([proof.s, -proof.c], [*g2, *x2]);
    t.append_point(b"A", &a.compress());
    t.append_point(b"B", &b.compress());
    if t.challenge_scalar(b"c") == proof.c {
        Ok(())
    } else {
        Err(DleqError)
    }
}

/// Prove with a fresh transcript bound to `context`.
pub fn prove<R: RngCore + CryptoRng>(
    context: &[u8],
    g1: &RistrettoPoint,
    x1: &RistrettoPoint,
    g2: &RistrettoPoint,
    x2: &RistrettoPoint,
    x: &Scalar,
    rng: &mut R,
) -> DleqProof {
    prove_in(primed(context), g1, x1, g2, x2, x, rng)
}

/// Verify with a fresh transcript bound to `context`.
pub fn verify(
    context: &[u8],
    g1: &RistrettoPoint,
    x1: &RistrettoPoint,
    g2: &RistrettoPoint,
    x2: &RistrettoPoint,
    proof: &DleqProof,
) -> Result<(), DleqError> {
    verify_in(primed(context), g1, x1, g2, x2, proof)
}

fn primed(context: &[u8]) -> ProofTranscript {
    let mut t = ProofTranscript::new(crate::transcript::DLEQ_DOMAIN);
    t.append_bytes(b"context", context);
    t
}

impl DleqProof {
    /// `c || s`, 64 bytes.
    pub fn to_bytes(&self) -> [u8; DLEQ_PROOF_BYTES] {
        let mut out = [0u8; DLEQ_PROOF_BYTES];
        out[..32].copy_from_slice(self.c.as_bytes());
        out[32..].copy_from_slice(self.s.as_bytes());
        out
    }

    /// Decode; rejects wrong length and non-canonical scalars.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        const WHAT: &str = "DLEQ proof";
        if bytes.len() != DLEQ_PROOF_BYTES {
            return Err(DecodeError::WrongLength {
                what: WHAT,
                expected: DLEQ_PROOF_BYTES,
                got: bytes.len(),
            });
        }
        Ok(DleqProof {
            c: crate::wire::decode_scalar(&bytes[..32], WHAT, 0)?,
            s: crate::wire::decode_scalar(&bytes[32..], WHAT, 1)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT as G;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    #[test]
    fn dleq_completeness_and_soundness() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let x = Scalar::random(&mut rng);
        let h = RistrettoPoint::random(&mut rng);
        let (x1, x2) = (x * G, x * h);
        let p = prove(b"ctx", &G, &x1, &h, &x2, &x, &mut rng);
        verify(b"ctx", &G, &x1, &h, &x2, &p).unwrap();
        assert_eq!(verify(b"other", &G, &x1, &h, &x2, &p), Err(DleqError));
        assert_eq!(verify(b"ctx", &G, &x1, &h, &(x2 + G), &p), Err(DleqError));
        let y = x + Scalar::ONE;
        let bad = prove(b"ctx", &G, &x1, &h, &(y * h), &x, &mut rng);
        assert_eq!(verify(b"ctx", &G, &x1, &h, &(y * h), &bad), Err(DleqError));
        let p2 = DleqProof::from_bytes(&p.to_bytes()).unwrap();
        assert_eq!(p, p2);
        assert!(DleqProof::from_bytes(&[0u8; 63]).is_err());
        assert!(matches!(
            DleqProof::from_bytes(&[0xffu8; 64]),
            Err(DecodeError::NonCanonicalScalar { index: 0, .. })
        ));
    }
}
