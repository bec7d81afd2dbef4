//! The `schedlab` binary's input checks, compiled into the extension from the CLI's own file
//! so that the same bad input gives the same words in Python as on the command line (the
//! checks live in the binary crate, which a library cannot depend on).

// Not every check applies to the Python API (timeouts, op costs, atomic writes).
#![allow(dead_code)]

#[path = "../../crates/schedlab-cli/src/checks.rs"]
mod checks;

pub use checks::*;
