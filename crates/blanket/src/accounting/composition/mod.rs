//! Composition of (eps, delta) guarantees over k rounds: basic, advanced (Dwork, Rothblum,
//! Vadhan), optimal homogeneous (Kairouz, Oh, Viswanath) and numerical composition of a
//! shuffled randomizer's privacy-loss distribution (FFT, pessimistic discretization).

pub mod basic;
pub mod drv;
pub mod kov;
pub mod pld;

pub use basic::basic;
pub use drv::drv;
pub use kov::{kov_delta, kov_epsilon};
pub use pld::Pld;

use thiserror::Error;

/// A composition request that cannot be answered.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CompositionError {
    /// A parameter is outside the range the method supports.
    #[error("{0}")]
    Invalid(String),
}
