//! The crate's one error type, below every module that returns it (so that none of them
//! names the crate root, which names them all).

/// Why an experiment could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExperimentError {
    /// Bad user input (names the flag, file or key).
    #[error("{0}")]
    Input(String),
    /// A run failed (deadlock, event limit, workload error).
    #[error("{0}")]
    Run(String),
    /// A file could not be read or written.
    #[error("{0}")]
    Io(String),
}
