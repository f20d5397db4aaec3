//! A dealer's attestation of its constant-term commitment under its
//! long-term identity key, so that a party outside the committee can check
//! a joint key (`blanket-protocol`'s key announcement, issue 25 item 4).
//!
//! The statement: "the holder of the identity key `X` contributed
//! `A_0 = a_0·G` in `context`, and knows `a_0`". The proof is one Schnorr
//! proof of knowledge of `x + e·a_0` for `X + e·A_0`, where
//! `e = H(context, X, A_0)` is drawn from the transcript before the proof
//! (the weighting of MuSig's key aggregation [Maxwell, Poelstra, Seurin
//! and Wuille, "Simple Schnorr multi-signatures with applications to
//! Bitcoin", DCC 2019, section 3]: for a random-oracle `e`, rewinding on
//! `e` extracts both `x` and `a_0`). Knowing `a_0` matters: a party that
//! signs a commitment it chose without knowing its logarithm (`A_0 = Y -
//! sum of the others'`) would fix the joint key to a `Y` it controls (the
//! rogue-key attack of `dkg`'s documentation); an attestation of such an
//! `A_0` cannot be made. 64 bytes; the nonce is hedged like every Schnorr
//! proof here.

use curve25519_dalek::ristretto::RistrettoPoint;
use rand_core::{CryptoRng, RngCore};
use zeroize::Zeroize;

use super::{Dealer, DkgError};
use crate::elgamal::{Keypair, PublicKey};
use crate::schnorr::{self, SchnorrProof};
use crate::transcript::ProofTranscript;

const ATTEST_DOMAIN: &[u8] = b"blanket/dkg-attest/v1";

fn transcript(
    context: &[u8],
    identity: &PublicKey,
    a0: &RistrettoPoint,
) -> (ProofTranscript, curve25519_dalek::scalar::Scalar) {
    let mut t = ProofTranscript::new(ATTEST_DOMAIN);
    t.append_bytes(b"context", context);
    t.append_point(b"identity", identity.compressed());
    t.append_point(b"a0", &a0.compress());
    let e = t.challenge_scalar(b"e");
    (t, e)
}

impl Dealer {
    /// Attest this dealer's constant-term commitment (the first of its
    /// dealing's commitments) under the long-term `identity` key pair, in
    /// `context` (the caller binds the run and the signer's identity).
    pub fn attest<R: RngCore + CryptoRng>(
        &self,
        context: &[u8],
        identity: &Keypair,
        rng: &mut R,
    ) -> SchnorrProof {
        let a0 = self.dealing.commitments()[0];
        let (t, e) = transcript(context, &identity.public, &a0);
        let statement = identity.public.point() + e * a0;
        let mut witness = identity.secret.0 + e * self.coeffs[0];
        let proof = schnorr::prove_in(t, &statement, &witness, rng);
        witness.zeroize();
        proof
    }
}

/// Check an attestation ([`Dealer::attest`]) of `a0` by the holder of
/// `identity` in `context`; `dealer` only names the dealer in the error.
pub fn verify_attestation(
    context: &[u8],
    identity: &PublicKey,
    a0: &RistrettoPoint,
    proof: &SchnorrProof,
    dealer: u32,
) -> Result<(), DkgError> {
    let (t, e) = transcript(context, identity, a0);
    let statement = identity.point() + e * a0;
    schnorr::verify_in(t, &statement, proof).map_err(|_| DkgError::InvalidProof { dealer })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dkg::DkgParams;
    use crate::elgamal::G;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    #[test]
    fn attestation_binds_identity_commitment_and_context() {
        let mut rng = ChaCha20Rng::seed_from_u64(8);
        let params = DkgParams::new(3, 2, b"attest").unwrap();
        let dealer = Dealer::new(params, 1, &mut rng).unwrap();
        let id = Keypair::generate(&mut rng);
        let other = Keypair::generate(&mut rng);
        let a0 = dealer.dealing().commitments()[0];
        let p = dealer.attest(b"ctx", &id, &mut rng);
        verify_attestation(b"ctx", &id.public, &a0, &p, 1).unwrap();
        assert!(verify_attestation(b"other", &id.public, &a0, &p, 1).is_err());
        assert!(verify_attestation(b"ctx", &other.public, &a0, &p, 1).is_err());
        assert!(verify_attestation(b"ctx", &id.public, &(a0 + G), &p, 1).is_err());
    }

    #[test]
    fn a_rogue_commitment_cannot_be_attested_with_the_identity_key_alone() {
        // Knowing x but not log(A0): a proof for X + e A0 with witness x
        // (as if a0 were 0) does not verify.
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let id = Keypair::generate(&mut rng);
        let rogue = RistrettoPoint::random(&mut rng);
        let (t, e) = transcript(b"ctx", &id.public, &rogue);
        let p = schnorr::prove_in(t, &(id.public.point() + e * rogue), &id.secret.0, &mut rng);
        assert!(verify_attestation(b"ctx", &id.public, &rogue, &p, 1).is_err());
    }
}
