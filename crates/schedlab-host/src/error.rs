//! The harness's error type: one enum whose messages name the offending workload, key, value,
//! file or tool, so the CLI can print them as they are.

use schedlab_vocab::suggest::did_you_mean;
use std::path::PathBuf;
use std::time::Duration;

/// Everything that can go wrong running, capturing or calibrating on the real host.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The workload spec is not `NAME[:key=value,...]`.
    #[error("bad workload spec {spec:?}: {reason}")]
    BadSpec {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No workload of that name.
    #[error("unknown workload '{name}'{}; known: {known}", did_you_mean(suggestion.as_deref()))]
    UnknownWorkload {
        /// The name as given.
        name: String,
        /// The closest known name, if any is close.
        suggestion: Option<String>,
        /// All known names, comma-separated.
        known: String,
    },
    /// The workload has no parameter of that name.
    #[error(
        "{workload}: unknown parameter '{key}'{}; known: {known}",
        did_you_mean(suggestion.as_deref())
    )]
    UnknownKey {
        /// The workload.
        workload: String,
        /// The key as given.
        key: String,
        /// The closest known key, if any is close.
        suggestion: Option<String>,
        /// All known keys, comma-separated.
        known: String,
    },
    /// A parameter value does not parse or is out of range.
    #[error("{workload}: bad value {value:?} for `{key}`: expected {expected}")]
    BadValue {
        /// The workload (or command) the key belongs to.
        workload: String,
        /// The key.
        key: String,
        /// The value as given.
        value: String,
        /// What would have been accepted.
        expected: String,
    },
    /// An operating-system call failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The run exceeded its time limit; everything it started has been stopped.
    #[error("{what} timed out after {after:?}; all its threads and processes were stopped")]
    Timeout {
        /// What timed out.
        what: String,
        /// The limit.
        after: Duration,
    },
    /// The run was cancelled (Ctrl-C); everything it started has been stopped.
    #[error("{what} cancelled; all its threads and processes were stopped")]
    Cancelled {
        /// What was cancelled.
        what: String,
    },
    /// A worker thread or process of a benchmark failed.
    #[error("{what} failed: {detail}")]
    WorkerFailed {
        /// Which benchmark.
        what: String,
        /// How it failed.
        detail: String,
    },
    /// An external tool is not installed (or has no Debian package).
    #[error("{tool} is not available: {hint}")]
    ExternalUnavailable {
        /// The tool.
        tool: String,
        /// How to get it, or why it cannot be had.
        hint: String,
    },
    /// An external tool ran but failed.
    #[error("{tool} failed ({status}): {output}")]
    ExternalFailed {
        /// The command line.
        tool: String,
        /// Its exit status.
        status: String,
        /// The tail of its output.
        output: String,
    },
    /// An external tool's output could not be parsed.
    #[error(transparent)]
    Native(#[from] schedlab_metrics::native::NativeError),
    /// tracefs cannot be used (not root, not mountable, event missing).
    #[error("tracefs unavailable ({reason})")]
    TracefsUnavailable {
        /// Why.
        reason: String,
    },
    /// A tracefs file could not be read or written.
    #[error("tracefs {path}: {source}")]
    Tracefs {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A captured trace could not be converted.
    #[error("captured trace: {0}")]
    Trace(String),
    /// `/proc/schedstat` is missing or not in a layout the delta understands.
    #[error("{0}")]
    Schedstat(String),
}

impl HostError {
    /// An [`HostError::Io`] from an `io::Error`.
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        HostError::Io {
            what: what.into(),
            source,
        }
    }
}
