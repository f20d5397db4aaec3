//! # blanket-server: the blanket service
//!
//! The encode-shuffle-analyze architecture (Bittau et al., "Prochlo", SOSP 2017) over
//! blanket's protocols, in two roles that run as separate processes and trust domains:
//!
//! - the **shuffler** ([`shuffler`]) accepts reports over HTTP, stores them durably, keeps
//!   nothing that identifies a sender, and forwards each batch of at least `min_batch`
//!   reports to the analyzer in a uniformly random order;
//! - the **analyzer** ([`analyzer`]) creates and calibrates tasks, holds their HPKE keys,
//!   accepts batches from its shuffler only, opens and aggregates them with the core's
//!   mergeable analyzer states, and releases estimates with their certified guarantee within
//!   each task's privacy budget.
//!
//! Clients ([`client`]) randomize locally and seal their message to the analyzer
//! ([`crypto`], HPKE RFC 9180), so the shuffler cannot read a report and the analyzer cannot
//! link one to its sender. Errors are typed ([`problem`]) and answered as RFC 9457 problems.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod aggregate;
pub mod analyzer;
pub mod client;
pub mod crypto;
pub mod http;
pub mod multi;
pub mod problem;
pub mod relay;
pub mod release;
pub mod server;
pub mod shuffler;
pub mod status_page;
pub mod store;
pub mod task;
pub mod wire;

pub use http::Limits;
pub use problem::{AdminAuth, Problem, Rejection};
pub use server::{start, start_with, Role, Running, ServeConfig, ALL_IN_ONE_WARNING};
