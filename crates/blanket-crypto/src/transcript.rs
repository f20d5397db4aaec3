//! Fiat-Shamir transcripts (merlin / STROBE) with blanket's domain separators.
//!
//! Every proof in this crate starts a fresh `merlin::Transcript` with its own
//! protocol label, appends every public input (context, sizes, keys, lists,
//! commitments) in a fixed order with field labels, and derives challenges
//! from it. Lists are appended as one message of concatenated 32-byte
//! encodings (merlin frames every message with its label and length).

use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use merlin::Transcript;
use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use rayon::prelude::*;
use sha2::{Digest, Sha512};

use crate::elgamal::Ciphertext;

/// Domain separator of the shuffle proof.
pub const SHUFFLE_DOMAIN: &[u8] = b"blanket/shuffle-proof/v1";
/// Domain separator of the Chaum-Pedersen (DLEQ) proof.
pub const DLEQ_DOMAIN: &[u8] = b"blanket/dleq/v1";

const EXPAND_DOMAIN: &[u8] = b"blanket/challenge-expand/v1";

/// A thin wrapper over `merlin::Transcript` with typed appends.
pub struct ProofTranscript(Transcript);

impl ProofTranscript {
    /// A new transcript for the protocol `domain`.
    pub fn new(domain: &'static [u8]) -> Self {
        ProofTranscript(Transcript::new(domain))
    }

    /// Append raw bytes.
    pub fn append_bytes(&mut self, label: &'static [u8], bytes: &[u8]) {
        self.0.append_message(label, bytes);
    }

    /// Append an integer.
    pub fn append_u64(&mut self, label: &'static [u8], x: u64) {
        self.0.append_u64(label, x);
    }

    /// Append one compressed point.
    pub fn append_point(&mut self, label: &'static [u8], p: &CompressedRistretto) {
        self.0.append_message(label, p.as_bytes());
    }

    /// Append a list of compressed points as one message.
    pub fn append_points(&mut self, label: &'static [u8], ps: &[CompressedRistretto]) {
        let mut buf = Vec::with_capacity(32 * ps.len());
        for p in ps {
            buf.extend_from_slice(p.as_bytes());
        }
        self.0.append_message(label, &buf);
    }

    /// Append a list of ciphertexts (their 64-byte encodings) as one message.
    /// Compression runs on the rayon pool.
    pub fn append_ciphertexts(&mut self, label: &'static [u8], cts: &[Ciphertext]) {
        let enc: Vec<[u8; 64]> = cts.par_iter().map(Ciphertext::to_bytes).collect();
        let mut buf = Vec::with_capacity(64 * cts.len());
        for e in &enc {
            buf.extend_from_slice(e);
        }
        self.0.append_message(label, &buf);
    }

    /// One challenge scalar, uniform mod l (64 bytes reduced).
    pub fn challenge_scalar(&mut self, label: &'static [u8]) -> Scalar {
        let mut b = [0u8; 64];
        self.0.challenge_bytes(label, &mut b);
        Scalar::from_bytes_mod_order_wide(&b)
    }

    /// `n` challenge scalars: a 32-byte seed from the transcript, expanded as
    /// `u_i = SHA-512(EXPAND_DOMAIN || seed || i) mod l` (in parallel).
    pub fn challenge_scalars(&mut self, label: &'static [u8], n: usize) -> Vec<Scalar> {
        let mut seed = [0u8; 32];
        self.0.challenge_bytes(label, &mut seed);
        (0..n as u64)
            .into_par_iter()
            .map(|i| {
                let h = Sha512::new()
                    .chain_update(EXPAND_DOMAIN)
                    .chain_update(seed)
                    .chain_update(i.to_le_bytes());
                Scalar::from_hash(h)
            })
            .collect()
    }

    /// A prover-side nonce RNG bound to the transcript, the secret witness and
    /// fresh external randomness (merlin's hedged construction: nonces stay
    /// unpredictable if either the RNG or the witness is).
    pub fn witness_rng<R: RngCore + CryptoRng>(
        &self,
        witness: &[u8],
        external: &mut R,
    ) -> ChaCha20Rng {
        let mut trng = self
            .0
            .build_rng()
            .rekey_with_witness_bytes(b"witness", witness)
            .finalize(external);
        let mut seed = [0u8; 32];
        trng.fill_bytes(&mut seed);
        ChaCha20Rng::from_seed(seed)
    }

    /// A verifier-side RNG bound to the transcript state *and* to fresh
    /// external randomness (merlin's `TranscriptRng`), reseeded into ChaCha20.
    pub fn verifier_rng<R: RngCore + CryptoRng>(&self, external: &mut R) -> ChaCha20Rng {
        let mut trng = self.0.build_rng().finalize(external);
        let mut seed = [0u8; 32];
        trng.fill_bytes(&mut seed);
        ChaCha20Rng::from_seed(seed)
    }
}

/// Compress a list of points on the rayon pool.
pub fn compress_all(ps: &[RistrettoPoint]) -> Vec<CompressedRistretto> {
    ps.par_iter().map(RistrettoPoint::compress).collect()
}

/// The multiplicative inverse of 2 mod l: `HALF·P` is the point whose
/// double is `P` in the prime-order Ristretto group.
pub(crate) fn half() -> Scalar {
    Scalar::from(2u8).invert()
}

/// The encodings of `2·Q_i` for the given halves `Q_i`, on the rayon pool.
///
/// A single compression costs an inversion square root (about 250 field
/// squarings, the dominant cost of a Ristretto encoding); dalek's
/// `double_and_compress_batch` encodes the *doubles* of a batch with one
/// field inversion for the whole batch and a few multiplications per point
/// [de Valence et al., the Ristretto group, "Batched double-and-encode"].
/// A prover or verifier that computes a point `P = sum s_j X_j` only to
/// hash its encoding computes `Q = sum (s_j / 2) X_j` instead (same cost)
/// and gets `compress(P) = compress(2 Q)` here: the bytes are identical, so
/// transcripts do not change.
pub(crate) fn compress_doubles(halves: &[RistrettoPoint]) -> Vec<CompressedRistretto> {
    let c = crate::msm::chunk_len(halves.len());
    halves
        .par_chunks(c)
        .flat_map_iter(RistrettoPoint::double_and_compress_batch)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compress_doubles_is_the_compression_of_the_double() {
        use curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT as G;
        use curve25519_dalek::traits::Identity;
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let mut ps: Vec<RistrettoPoint> =
            (0..600).map(|_| RistrettoPoint::random(&mut rng)).collect();
        ps.push(RistrettoPoint::identity());
        ps.push(G);
        ps.insert(3, RistrettoPoint::identity());
        // Points decoded from bytes (other coset representatives).
        ps.push(
            RistrettoPoint::random(&mut rng)
                .compress()
                .decompress()
                .unwrap(),
        );
        let want: Vec<CompressedRistretto> = ps.iter().map(|p| (p + p).compress()).collect();
        assert_eq!(compress_doubles(&ps), want);
        let halves: Vec<RistrettoPoint> = ps.iter().map(|p| half() * p).collect();
        let direct: Vec<CompressedRistretto> = ps.iter().map(|p| p.compress()).collect();
        assert_eq!(compress_doubles(&halves), direct);
        assert!(compress_doubles(&[]).is_empty());
    }

    #[test]
    fn challenges_depend_on_everything() {
        let mk = |ctx: &[u8], x: u64| {
            let mut t = ProofTranscript::new(SHUFFLE_DOMAIN);
            t.append_bytes(b"ctx", ctx);
            t.append_u64(b"x", x);
            t.challenge_scalars(b"u", 3)
        };
        let a = mk(b"a", 1);
        assert_eq!(a, mk(b"a", 1));
        assert_ne!(a, mk(b"b", 1));
        assert_ne!(a, mk(b"a", 2));
        assert_ne!(a[0], a[1]);
    }
}
