//! Local randomizers: what each user runs on its encoded value before shuffling.

pub mod grr;

pub use grr::{Grr, GrrError};
