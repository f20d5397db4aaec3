//! Analyzer states. Each is a commutative monoid: `absorb` one message, `merge` two states,
//! then the protocol turns the state into an estimate. Order never matters, so aggregation
//! runs in parallel, streams, or shards across machines with the same code.

pub mod coordinates;
pub mod counts;
pub mod modular_sum;
pub mod sum;

pub use coordinates::{CoordinateMessage, CoordinateSums};
pub use counts::Counts;
pub use modular_sum::ModularSum;
pub use sum::IntegerSum;

use thiserror::Error;

/// A message or state the analyzer cannot take.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AggregateError {
    /// A message outside the protocol's message domain (from a faulty or malicious peer).
    #[error("message value {value} is outside the message domain 0..={max}")]
    MessageOutOfDomain {
        /// The rejected message.
        value: u64,
        /// The largest valid message.
        max: u64,
    },
    /// Two states for different parameters cannot be merged.
    #[error("cannot merge analyzer states of different shapes ({left} vs {right} values)")]
    ShapeMismatch {
        /// This state's domain.
        left: u64,
        /// The other state's domain.
        right: u64,
    },
    /// Two modular-sum states over different moduli cannot be merged.
    #[error("cannot merge modular sums over different moduli ({left} vs {right})")]
    ModulusMismatch {
        /// This state's modulus.
        left: u128,
        /// The other state's modulus.
        right: u128,
    },
}

/// A mergeable analyzer state.
pub trait Aggregator: Sized + Send {
    /// One message as the shuffler delivers it.
    type Message: Copy + Send;

    /// Adds one message.
    fn absorb(&mut self, message: Self::Message) -> Result<(), AggregateError>;

    /// Adds every message of a batch; stops at the first invalid one, which is reported with
    /// the messages before it already absorbed.
    fn absorb_all(&mut self, messages: &[Self::Message]) -> Result<(), AggregateError> {
        messages.iter().try_for_each(|&m| self.absorb(m))
    }

    /// Adds `k` copies of one message (for batched simulations); stops at an invalid message.
    fn absorb_repeated(&mut self, message: Self::Message, k: u64) -> Result<(), AggregateError> {
        (0..k).try_for_each(|_| self.absorb(message))
    }

    /// Adds another state of the same shape.
    fn merge(&mut self, other: Self) -> Result<(), AggregateError>;

    /// Number of messages absorbed.
    fn reports(&self) -> u64;
}
