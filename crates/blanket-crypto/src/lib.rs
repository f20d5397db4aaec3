//! Cryptographic building blocks for shuffling without a trusted shuffler
//! (blanket issue 5; Balle, Bell, Gascon, "Amplification by Shuffling
//! without Shuffling", CCS 2023, building blocks 1-6).
//!
//! - [`encoding`]: the message space (u64 embedded into a ristretto255 point);
//! - [`elgamal`]: ElGamal over ristretto255, 64-byte ciphertexts;
//! - [`shuffle`]: re-randomizing shuffle and the Terelius-Wikstrom proof of
//!   shuffle (Haenni et al. pseudo-code), batched verification; the
//!   Bayer-Groth proof of shuffle of size `O(sqrt N)`
//!   ([`shuffle::bayer_groth`], issue 17); [`shuffle::ProofSystem`] to choose;
//! - [`dleq`]: Chaum-Pedersen proofs of equal discrete logarithms;
//! - [`dkg`]: joint-Feldman distributed key generation (t-of-c) with
//!   complaints and a proof of knowledge of each constant term;
//! - [`schnorr`]: Schnorr proofs of knowledge of a discrete logarithm;
//! - [`submission`]: client ciphertexts with a proof of knowledge of their
//!   randomness, and the relay's check of a batch of them;
//! - [`threshold`]: partial decryptions with DLEQ proofs and their
//!   combination;
//! - [`reencrypt`]: threshold re-encryption from a committee's key to
//!   another key, with a proof per member (per-lane key committees);
//! - [`channel`]: authenticated encryption between registered clients
//!   through an untrusted relay;
//! - [`wire`]: encodings and the typed [`wire::DecodeError`].
//!
//! See `docs/crypto.md` for which parts are the paper's and which are
//! blanket's design, and for measured costs.

#![forbid(unsafe_code)]

pub mod bench;
pub mod channel;
pub mod dkg;
pub mod dleq;
pub mod elgamal;
pub mod encoding;
mod msm;
pub mod reencrypt;
pub mod schnorr;
pub mod shuffle;
pub mod submission;
pub mod threshold;
pub mod transcript;
pub mod wire;

pub use curve25519_dalek;
pub use elgamal::{Ciphertext, Keypair, PublicKey, SecretKey};
