//! # blanket: differential privacy in the shuffle model
//!
//! The core library: pure, deterministic given an RNG, no I/O, no async, no global state.
//! Data flows `value --encode--> integer --randomize--> message --shuffle--> multiset
//! --analyze--> estimate`, with parameters from `calibrate` and guarantees from `accounting`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod accounting;
pub mod analyzer;
pub mod audit;
pub mod calibrate;
pub mod display;
pub mod encode;
pub mod field;
pub mod params;
pub mod protocol;
pub mod randomizer;
pub mod rng;
pub mod sample;
pub mod shuffle;
pub mod simulate;
