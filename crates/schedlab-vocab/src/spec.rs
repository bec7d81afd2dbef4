//! The spec grammar `NAME[:key=value,...]`, written once for the simulator's workloads, the
//! host harness and the CLI.
//!
//! ```text
//!   "tbench:clients=32, duration=2s" ──split_spec──▶ ("tbench", Some("clients=32, duration=2s"))
//!   "clients=32, duration=2s"        ──parse_params──▶ [("clients","32"), ("duration","2s")]
//! ```
//!
//! Only the shape is checked here; whether a name or a key exists, and what a value means,
//! is the caller's business (its catalog). The grammar is strict: an empty item (`a=1,,b=2`,
//! a trailing comma), a missing key or value, or a key given twice is an error, because in a
//! benchmark spec each of those is almost always a typo.

use std::fmt;

/// What is wrong with the shape of a spec.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecError {
    /// Nothing at all.
    Empty,
    /// `:key=value` with no name before it.
    MissingName,
    /// `NAME:` with nothing after the colon.
    NothingAfter {
        /// The name before the colon.
        name: String,
    },
    /// Two commas in a row, or a trailing comma.
    EmptyParam,
    /// An item without `=`.
    NotKeyValue {
        /// The item as written.
        item: String,
    },
    /// `=value` or `key=`.
    EmptyKeyOrValue {
        /// The item as written.
        item: String,
    },
    /// The same key twice.
    Duplicate {
        /// The key.
        key: String,
    },
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::Empty => {
                f.write_str("empty workload spec (expected NAME or NAME:key=value,...)")
            }
            SpecError::MissingName => f.write_str("missing workload name before ':'"),
            SpecError::NothingAfter { name } => {
                write!(f, "nothing after '{name}:' (expected key=value,...)")
            }
            SpecError::EmptyParam => {
                f.write_str("empty parameter (two commas in a row, or a trailing comma)")
            }
            SpecError::NotKeyValue { item } => write!(f, "parameter `{item}` is not key=value"),
            SpecError::EmptyKeyOrValue { item } => {
                write!(f, "parameter `{item}` needs both a key and a value")
            }
            SpecError::Duplicate { key } => write!(f, "parameter `{key}` given twice"),
        }
    }
}

impl std::error::Error for SpecError {}

/// Splits `NAME[:REST]` into the trimmed name and the untrimmed rest after the first `:`
/// (`None` without a colon). The rest is returned as written so a caller whose spec takes a
/// path (`file:PATH`) can use it verbatim.
pub fn split_spec(spec: &str) -> Result<(&str, Option<&str>), SpecError> {
    let text = spec.trim();
    if text.is_empty() {
        return Err(SpecError::Empty);
    }
    let (name, rest) = match text.split_once(':') {
        Some((n, r)) => (n.trim(), Some(r)),
        None => (text, None),
    };
    if name.is_empty() {
        return Err(SpecError::MissingName);
    }
    Ok((name, rest))
}

/// Parses the `key=value,...` after `NAME:` into trimmed pairs in the order given.
pub fn parse_params(name: &str, rest: &str) -> Result<Vec<(String, String)>, SpecError> {
    if rest.trim().is_empty() {
        return Err(SpecError::NothingAfter { name: name.into() });
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for item in rest.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(SpecError::EmptyParam);
        }
        let Some((k, v)) = item.split_once('=') else {
            return Err(SpecError::NotKeyValue { item: item.into() });
        };
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() || v.is_empty() {
            return Err(SpecError::EmptyKeyOrValue { item: item.into() });
        }
        if out.iter().any(|(x, _)| x == k) {
            return Err(SpecError::Duplicate { key: k.into() });
        }
        out.push((k.into(), v.into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_parses() {
        assert_eq!(split_spec(" pipe "), Ok(("pipe", None)));
        assert_eq!(
            split_spec("file:a,b=c.toml"),
            Ok(("file", Some("a,b=c.toml")))
        );
        let (n, r) = split_spec("hackbench:loops=4, groups = 2").unwrap();
        assert_eq!(
            parse_params(n, r.unwrap()).unwrap(),
            vec![("loops".into(), "4".into()), ("groups".into(), "2".into())]
        );
    }

    #[test]
    fn rejects_malformed_shapes() {
        assert_eq!(split_spec("  "), Err(SpecError::Empty));
        assert_eq!(split_spec(":x=1"), Err(SpecError::MissingName));
        let p = |r: &str| parse_params("w", r).unwrap_err().to_string();
        assert!(p(" ").contains("nothing after 'w:'"));
        assert!(p("a=1,").contains("empty parameter"));
        assert!(p("a=1,,b=2").contains("empty parameter"));
        assert_eq!(p("loops"), "parameter `loops` is not key=value");
        assert!(p("a=").contains("needs both a key and a value"));
        assert!(p("=1").contains("needs both a key and a value"));
        assert_eq!(p("a=1,a=2"), "parameter `a` given twice");
    }
}
