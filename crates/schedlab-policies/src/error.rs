//! Errors of variant parsing and building. Every message names the offending policy, switch
//! or value and lists what would have been valid, so a typo on the command line is fixed in
//! one look.

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
    #[error("unknown policy '{name}'{}; valid policies: {valid}", did_you_mean(.suggestion))]
    UnknownPolicy {
        /// The name given.
        name: String,
        /// The closest valid name, if any is close.
        suggestion: Option<String>,
        /// Every valid name.
        valid: String,
    },
    /// No switch of that name exists in any era.
    #[error("unknown switch '{switch}' for {policy}{}; valid switches for {policy}: {valid}", did_you_mean(.suggestion))]
    UnknownSwitch {
        /// The preset.
        policy: String,
        /// The switch given.
        switch: String,
        /// The closest valid switch of this preset, if any is close.
        suggestion: Option<String>,
        /// The switches valid for this preset.
        valid: String,
    },
    /// The switch exists, but not in the chosen era.
    #[error("switch '{switch}' does not apply to {policy} (it exists in: {applies_to}){}; valid switches for {policy}: {valid}", did_you_mean(.suggestion))]
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

fn did_you_mean(s: &Option<String>) -> String {
    match s {
        Some(s) => format!(" (did you mean {s}?)"),
        None => String::new(),
    }
}

/// The candidate closest to `given` (case-insensitive Jaro-Winkler), quoted, when it is close
/// enough to be a plausible typo.
pub(crate) fn closest<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let g = given.to_ascii_lowercase();
    let mut best: Option<(f64, &str)> = None;
    for c in candidates {
        let score = strsim::jaro_winkler(&g, &c.to_ascii_lowercase());
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, c));
        }
    }
    best.filter(|(s, _)| *s >= 0.8)
        .map(|(_, c)| format!("'{c}'"))
}
