//! Shuffling without a trusted shuffler, as a protocol (blanket issue 16;
//! spec `05-secure-shuffle.md`; Balle, Bell, Gascon, "Amplification by
//! Shuffling without Shuffling", CCS 2023).
//!
//! One relay server and n clients in a star. The clients themselves run
//! the shuffle: a key committee runs a DKG, every client encrypts its
//! message(s) under the joint key, a chain of shufflers re-randomizes and
//! permutes the list with a proof of shuffle each, and the key committee
//! decrypts with DLEQ-checked partial decryptions.
//!
//! - [`wire`]: versioned, length-checked messages and their typed
//!   [`wire::WireError`];
//! - [`params`]: committee size, threshold, chain length and backups from
//!   sigma, eta, gamma and alpha (formulas in `docs/protocol.md`);
//! - [`select`]: roles from public randomness;
//! - [`client`] and [`relay`]: the sans-IO state machines (no socket, no
//!   clock: time and randomness are inputs);
//! - [`driver`]: an in-memory run of n clients with dropouts and malicious
//!   behaviours, and its measurements.

#![deny(unsafe_code)]

pub mod client;
pub mod context;
pub mod driver;
pub mod evidence;
pub mod lane_keys;
pub mod params;
pub mod relay;
pub mod release;
pub mod select;
pub mod wire;

pub use client::{Client, ClientError};
pub use params::{KeyCommittees, ParamsError, ProtocolParams};
pub use relay::{Relay, RelayError, RelayRefusal};

pub use wire::{Envelope, Kind, Message, WireError};
