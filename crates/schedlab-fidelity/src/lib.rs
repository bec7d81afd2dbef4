//! How close the simulator is to the real host, as a library: the CLI's `host check` (one
//! workload and the fixed suite), the second half of `host calibrate` (the secant fit) and
//! `replay check` parse their flags and print; everything they compute is here, so it can be
//! tested without spawning the binary.
//!
//! Nothing here reads argv or the terminal: notes meant for the user while something runs
//! are handed to a callback (`note`), and results come back as values or rendered text.
#![warn(missing_docs)]

pub mod host_check;
pub mod host_fit;
pub mod host_suite;
pub mod replay_check;
pub mod stats;
