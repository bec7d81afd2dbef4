//! Experiments: run one variant, compare several over a sweep with repetitions and honest
//! statistics, write tables, JSON, CSV, plots, HTML and traces, split long sweeps into shards
//! and merge them, and validate the simulator against published results.
//!
//! Every run is single-threaded and seeded by its repetition (common random numbers across
//! variants), and runs are collected in plan order, so the output is identical for any
//! `--jobs` and for any sharding merged back together.
#![warn(missing_docs)]

mod error;
pub mod explain;
pub mod outfile;
pub mod outpath;
pub mod output;
mod pipeline;
pub mod plan;
pub mod progress;
pub mod report;
pub mod runner;
pub mod simulate;
pub mod validate;

pub use error::ExperimentError;
pub use outfile::PLAN_SCHEMA;
pub use pipeline::{CompareOutput, compare, merge, prepare};
