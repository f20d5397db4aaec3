//! The reports of blanket's calibration and accounting: the structs that `blanket ... --json`
//! prints and that the Python bindings hand to `.to_dict()`, and the functions that build them
//! from the core's results. The CLI (`crates/blanket-cli`) and the bindings
//! (`crates/blanket-py`) both call these, so their JSON keys and values cannot drift apart.
//!
//! Pure like the core: no I/O, no printing; errors are the core's typed errors (or, where a
//! report records a failed calibration as text, the caller's rendering of its own error).
//! JSON keys are a contract (the CLI's tests and `python/tests` check them).

pub mod account;
pub mod calibrate;
pub mod ikos;
