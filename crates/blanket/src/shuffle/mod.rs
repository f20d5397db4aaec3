//! Shufflers: turn per-client messages into an anonymous multiset.
//!
//! The protocol does not care which shuffler ran; the guarantee does (see
//! [`ShufflerTrust`]).

pub mod uniform;

pub use uniform::UniformShuffler;

use rand_core::CryptoRng;
use serde::Serialize;

/// What the privacy guarantee assumes about the shuffler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShufflerTrust {
    /// A trusted party applies a uniformly random permutation and reveals nothing else.
    IdealUniform,
}

/// Permutes a batch of messages in place.
pub trait Shuffler {
    /// The trust assumption under which this shuffler yields the protocol's guarantee.
    fn trust(&self) -> ShufflerTrust;

    /// Applies the shuffler's permutation to `messages`.
    fn shuffle<T, R: CryptoRng + ?Sized>(&self, messages: &mut [T], rng: &mut R);
}
