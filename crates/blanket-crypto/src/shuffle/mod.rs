//! Verifiable shuffle of ElGamal ciphertexts.
//!
//! A shuffler re-randomizes and permutes a list of ciphertexts
//! ([`shuffle`]) and proves that it did so ([`prove`]) with the proof of
//! shuffle of Terelius and Wikstrom ("Proofs of Restricted Shuffles",
//! AFRICACRYPT 2010) in the form given as pseudo-code by Haenni, Locher,
//! Koenig and Dubuis ("Pseudo-Code Algorithms for Verifiable Re-Encryption
//! Mix-Nets", FC 2017 workshops: Algorithm 4 `GenShuffle`, Algorithm 8
//! `GenProof`, Algorithm 9 `CheckProof`), made non-interactive with
//! Fiat-Shamir over a merlin transcript ([`crate::transcript::SHUFFLE_DOMAIN`])
//! that binds a caller-chosen context, the size, the public key, the input
//! list, the output list and all commitments.
//!
//! blanket's implementation choices (not the paper's), all documented in
//! `docs/crypto.md`:
//! - the prover computes the commitment chain in closed form,
//!   `c^_i = R_i·G + U_i·h` with `U_i = u'_1 ... u'_i`, so that the chain and
//!   the `t^_i` are fixed-base multiplications that run in parallel instead of
//!   a sequential chain of variable-base exponentiations;
//! - the verifier folds all `N + 5` verification equations into one
//!   multi-scalar multiplication of `8N + 8` terms using random weights drawn
//!   from the transcript and fresh OS randomness (small-exponent batching);
//! - the u_i are expanded from one transcript challenge with SHA-512.
//! - the prover's nonces are hedged (merlin's transcript RNG keyed by the
//!   statement, the witness and the caller's randomness), as in the DLEQ
//!   prover, so a repeated RNG state never repeats them for another
//!   statement or witness (issue 9, item 4);
//! - prover and verifier refuse the identity as public key.
//!
//! [`bayer_groth`] is the other proof of the same statement (issue 17), of
//! size `O(sqrt N)`; [`ProofSystem`], [`ShuffleSetup`], [`AnyShuffleProof`],
//! [`shuffle_and_prove_with`] and [`verify_with`] choose between the two at
//! run time.

pub mod bayer_groth;
mod proof;
mod prover;
mod system;
mod verifier;

pub use proof::ShuffleProof;
pub use prover::{prove, shuffle, shuffle_and_prove, ShuffleWitness};
pub use system::{shuffle_and_prove_with, verify_with, AnyShuffleProof, ProofSystem, ShuffleSetup};
pub use verifier::verify;

use curve25519_dalek::ristretto::{RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use rayon::prelude::*;
use sha2::Sha512;
use zeroize::Zeroizing;

use crate::wire::DecodeError;

/// Errors of shuffling, proving and verifying.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShuffleError {
    /// The public key is the identity (never valid: `c2 = M` in the clear).
    #[error("the public key is the identity")]
    IdentityKey,
    /// The list to shuffle is empty.
    #[error("cannot shuffle an empty list")]
    Empty,
    /// Input and output lists differ in length.
    #[error("input has {input} ciphertexts but output has {output}")]
    LengthMismatch { input: usize, output: usize },
    /// The proof is for a list of another length.
    #[error("proof is for {proof} ciphertexts, list has {list}")]
    ProofLengthMismatch { proof: usize, list: usize },
    /// The generator set is too short for the list.
    #[error("generator set has {have} generators, need {need}")]
    NotEnoughGenerators { have: usize, need: usize },
    /// The prover's witness is malformed (not a permutation of the right size).
    #[error("malformed shuffle witness: {0}")]
    BadWitness(&'static str),
    /// The proof does not verify: the output is not a re-randomized
    /// permutation of the input under this key and context (or the proof was
    /// tampered with).
    #[error("shuffle proof verification failed")]
    VerificationFailed,
    /// A wire decoder rejected the proof.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

const GEN_DOMAIN: &[u8] = b"blanket/shuffle/generator/v1";
const GEN_H_DOMAIN: &[u8] = b"blanket/shuffle/generator-h/v1";

/// The independent generators `h, h_1..h_N` of the permutation commitment:
/// `h_i = HashToRistretto(SHA-512("blanket/shuffle/generator/v1" || i_le64))`
/// (Elligator, nothing up the sleeve: nobody knows a discrete log relation).
/// They depend only on the index, so one set serves every list up to its
/// length; computing them costs about 8 us each (in parallel), so a shuffler
/// or verifier that handles many lists should keep one set.
pub struct Generators {
    h: RistrettoPoint,
    h_table: RistrettoBasepointTable,
    hs: Vec<RistrettoPoint>,
}

impl Generators {
    /// The first `n` generators.
    pub fn new(n: usize) -> Self {
        let h = RistrettoPoint::hash_from_bytes::<Sha512>(GEN_H_DOMAIN);
        let hs = (0..n as u64).into_par_iter().map(generator).collect();
        Generators {
            h,
            h_table: RistrettoBasepointTable::create(&h),
            hs,
        }
    }

    /// Number of `h_i`.
    pub fn len(&self) -> usize {
        self.hs.len()
    }

    /// Whether there are no `h_i`.
    pub fn is_empty(&self) -> bool {
        self.hs.is_empty()
    }

    /// The `h_i`.
    pub fn hs(&self) -> &[RistrettoPoint] {
        &self.hs
    }

    /// The extra generator `h` (start of the commitment chain).
    pub fn h(&self) -> &RistrettoPoint {
        &self.h
    }

    pub(crate) fn h_table(&self) -> &RistrettoBasepointTable {
        &self.h_table
    }

    pub(crate) fn check(&self, n: usize) -> Result<(), ShuffleError> {
        if n == 0 {
            return Err(ShuffleError::Empty);
        }
        if self.hs.len() < n {
            return Err(ShuffleError::NotEnoughGenerators {
                have: self.hs.len(),
                need: n,
            });
        }
        Ok(())
    }
}

fn generator(i: u64) -> RistrettoPoint {
    let mut buf = Vec::with_capacity(GEN_DOMAIN.len() + 8);
    buf.extend_from_slice(GEN_DOMAIN);
    buf.extend_from_slice(&i.to_le_bytes());
    RistrettoPoint::hash_from_bytes::<Sha512>(&buf)
}

/// `n` uniformly random scalars from a 32-byte seed: ChaCha20 with one stream
/// per chunk of 1024, so that the expansion runs in parallel.
pub(crate) fn random_scalars(seed: [u8; 32], n: usize) -> Zeroizing<Vec<Scalar>> {
    const CH: usize = 1024;
    let chunks = n.div_ceil(CH);
    let out: Vec<Scalar> = (0..chunks)
        .into_par_iter()
        .flat_map_iter(|k| {
            let mut rng = ChaCha20Rng::from_seed(seed);
            rng.set_stream(k as u64);
            let len = CH.min(n - k * CH);
            (0..len)
                .map(move |_| Scalar::random(&mut rng))
                .collect::<Vec<_>>()
        })
        .collect();
    Zeroizing::new(out)
}

#[cfg(test)]
mod tests;
