//! The one error type of this crate. Every message names what was wrong and where: the
//! workload, the parameter and its value, or the file with its line and column.

use schedlab_vocab::suggest::did_you_mean;

/// Why a workload spec, file or run could not be turned into a benchmark result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadError {
    /// The spec string is not `NAME[:key=value,...]`.
    #[error("workload spec '{spec}': {msg}")]
    Syntax {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        msg: String,
    },
    /// No workload has this name.
    #[error(
        "unknown workload '{name}'{}; known workloads: {known}",
        did_you_mean(suggestion.as_deref())
    )]
    UnknownWorkload {
        /// The name given.
        name: String,
        /// The closest known name, if one is close.
        suggestion: Option<String>,
        /// All known names, comma separated.
        known: String,
    },
    /// The name is a retired workload name (`schedlab_vocab::retired`); the message names
    /// the workload to use and how the old parameters map onto it.
    #[error("{message}")]
    Retired {
        /// The name given.
        name: String,
        /// The workload that replaces it.
        now: String,
        /// The whole refusal, shared with the host harness.
        message: String,
    },
    /// The workload has no parameter of this name.
    #[error(
        "{workload}: unknown parameter '{key}'{}; its parameters are: {known}",
        did_you_mean(suggestion.as_deref())
    )]
    UnknownParam {
        /// The workload.
        workload: String,
        /// The key given.
        key: String,
        /// The closest parameter name, if one is close.
        suggestion: Option<String>,
        /// All parameter names, comma separated.
        known: String,
    },
    /// A parameter value does not parse, has the wrong unit or is out of range.
    #[error("{workload}: {key}={value}: {msg}")]
    BadValue {
        /// The workload.
        workload: String,
        /// The parameter.
        key: String,
        /// The value given.
        value: String,
        /// What was expected.
        msg: String,
    },
    /// A workload file (TOML or rt-app JSON) cannot be read or is malformed; `msg` carries
    /// the line and column where the format reports them.
    #[error("{path}: {msg}")]
    File {
        /// The file.
        path: String,
        /// What is wrong, with its location.
        msg: String,
    },
    /// An rt-app file uses events or properties this importer cannot map onto the engine.
    #[error("{path}: unsupported rt-app {what}: {} (supported events: {supported})", items.join(", "))]
    RtAppUnsupported {
        /// The file.
        path: String,
        /// `events` or `properties`.
        what: String,
        /// Each unsupported item with the task/phase that uses it.
        items: Vec<String>,
        /// The events that are supported, for the message.
        supported: String,
    },
    /// The engine refused the workload (an id out of range, an affinity for another machine).
    #[error("workload '{workload}' is invalid: {msg}")]
    Invalid {
        /// The workload.
        workload: String,
        /// The engine's reason.
        msg: String,
    },
    /// The run stopped because no task could make progress.
    #[error("workload '{workload}' deadlocked; blocked tasks: {}", blocked.join("; "))]
    Deadlock {
        /// The workload.
        workload: String,
        /// Each blocked task and what it waits on, as the engine reports them.
        blocked: Vec<String>,
    },
    /// The run ended before the benchmark finished (event or time limit).
    #[error("workload '{workload}': the run ended before the benchmark finished ({reason})")]
    Incomplete {
        /// The workload.
        workload: String,
        /// Why it ended.
        reason: String,
    },
}
