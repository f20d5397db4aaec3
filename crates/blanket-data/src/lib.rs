//! Data sources for blanket's simulations, demos and experiments: the embedded ECG excerpt
//! and loaders for user-supplied files. Readers take any `std::io::Read`; opening files is
//! the caller's job.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod ecg;
pub mod ecg_beats;
pub mod table;
