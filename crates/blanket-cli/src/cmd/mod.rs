//! One module per command.

pub mod account;
pub mod audit;
pub mod bench;
pub mod calibrate;
pub mod client;
pub mod common;
pub mod compare_frequency;
pub mod compare_sum;
pub mod demo;
pub mod experiment;
pub mod frequency;
pub mod frequency_data;
pub mod ikos;
pub mod ikos_vector;
pub mod protocol;
pub mod serve;
pub mod service_demo;
pub mod simulate;
pub mod submit;
pub mod task;
