//! Errors of variant parsing and building. Every message names the offending policy, switch
//! or value and lists what would have been valid, so a typo on the command line is fixed in
//! one look.

use schedlab_vocab::suggest::{did_you_mean, did_you_mean_noting};

/// Why a variant string could not be parsed or built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The string is not of the form `POLICY[,SWITCH]...`.
    #[error(
        "bad variant '{input}': {reason} (expected POLICY[,SWITCH]..., e.g. linux-3.10,WAKEUP_BUDDY)"
    )]
    Syntax {
        /// The whole input.
        input: String,
        /// What is wrong.
        reason: String,
    },
    /// No preset of that name.
    #[error("unknown policy '{name}'{}; valid policies: {valid}", did_you_mean(.suggestion.as_deref()))]
    UnknownPolicy {
        /// The name given.
        name: String,
        /// The closest valid name, if any is close.
        suggestion: Option<String>,
        /// Every valid name.
        valid: String,
    },
    /// No switch of that name exists in any era.
    #[error(
        "unknown switch '{switch}' for {policy}{}; valid switches for {policy}: {valid}",
        did_you_mean_noting(.suggestion.as_deref(), .suggestion_eras.as_deref())
    )]
    UnknownSwitch {
        /// The preset.
        policy: String,
        /// The switch given.
        switch: String,
        /// The closest switch name of any era, if any is close.
        suggestion: Option<String>,
        /// Where the suggestion exists (`which exists only in ...`) when it is not valid for
        /// this preset.
        suggestion_eras: Option<String>,
        /// The switches valid for this preset.
        valid: String,
    },
    /// The switch exists, but not in the chosen era.
    #[error("switch '{switch}' does not apply to {policy} (it exists in: {applies_to}){}; valid switches for {policy}: {valid}", did_you_mean(.suggestion.as_deref()))]
    NotApplicable {
        /// The preset.
        policy: String,
        /// The switch given.
        switch: String,
        /// The presets where it applies.
        applies_to: String,
        /// The closest valid switch of this preset, if any is close.
        suggestion: Option<String>,
        /// The switches valid for this preset.
        valid: String,
    },
    /// A `name=value` switch with an unusable value, or a feature given a value.
    #[error("bad value for '{key}' in {policy}: '{value}': {reason}")]
    BadValue {
        /// The preset.
        policy: String,
        /// The tunable or feature name.
        key: String,
        /// The value given.
        value: String,
        /// What is wrong.
        reason: String,
    },
}
