//! Measurement vocabulary shared by the simulator and the real-host harness: benchmark
//! results ([`result`]), the benchmarks' native output formats and their parsers
//! ([`native`]), latency histograms ([`hist`]) and the statistics used to compare
//! variants ([`stats`]).
#![warn(missing_docs)]

pub mod hist;
pub mod native;
pub mod result;
pub mod stats;

pub use result::{BenchResult, Better, Metric};
