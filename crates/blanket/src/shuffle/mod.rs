//! Shufflers: turn per-client messages into an anonymous multiset.
//!
//! The protocol does not care which shuffler ran; the guarantee does (see
//! [`ShufflerTrust`]). [`UniformShuffler`] reveals only the multiset;
//! [`AlternatingShuffler`] (A^2_pi) also reveals which messages shared a column.

pub mod alternating;
pub mod uniform;

pub use alternating::{AlternatingError, AlternatingShuffler, GridLayout, PublicPlacement};
pub use uniform::UniformShuffler;

use rand_core::CryptoRng;
use serde::Serialize;

/// What the privacy guarantee assumes about the shuffler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShufflerTrust {
    /// A trusted party applies a uniformly random permutation and reveals nothing else.
    IdealUniform,
    /// The alternating shuffler A^2_pi (Balle, Bell, Gascon, CCS 2023): `rounds` shuffling
    /// rounds (2: rows, then columns), each run by a party trusted to keep its permutations
    /// secret, after a *public* uniform placement pi of the clients in an h x w matrix. The
    /// analyzer learns the column of each message (which messages shared a column), not its
    /// row. Its guarantee is weaker than [`ShufflerTrust::IdealUniform`]'s ("weak
    /// amplification") and needs its own accounting.
    Alternating {
        /// Number of alternating rounds (row, column, ...); 2 for A^2_pi.
        rounds: u32,
    },
}

/// Permutes a batch of messages in place.
pub trait Shuffler {
    /// The trust assumption under which this shuffler yields the protocol's guarantee.
    fn trust(&self) -> ShufflerTrust;

    /// Applies the shuffler's permutation to `messages`.
    fn shuffle<T, R: CryptoRng + ?Sized>(&self, messages: &mut [T], rng: &mut R);
}
