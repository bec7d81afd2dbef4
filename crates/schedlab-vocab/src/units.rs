//! Durations and sizes as users write them, one parser each for the whole workspace.
//!
//! Durations: a number (`2`, `2.5`, `1e3`) and a unit, `ns`, `us` (or `µs`, the micro sign
//! U+00B5, or `μs`, the Greek mu U+03BC: both are typed), `ms`, `s` or `m` (minutes), with
//! optional space between; the result is whole nanoseconds, rounded. A bare
//! number is an error unless the caller names a unit for it ([`parse_duration_or_bare`],
//! for flags like `--timeout 30` documented as seconds): a spec's unit is never guessed.
//!
//! Sizes: bytes with an optional `K`/`M`/`G` (or `KB`, `KiB`, ...) suffix, powers of 1024 as
//! lmbench and rt-tests read them; [`parse_kib`] reads a count of KiB (`16`, `16K`).
//!
//! Errors ([`UnitError`]) print as sentences that name the text and say what was expected;
//! callers prefix them with the key or flag they came from.

use std::fmt;

/// Why a duration or a size could not be read. Each variant holds the text as given
/// (trimmed).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnitError {
    /// A number without a unit where a duration needs one (`100`).
    NoUnit {
        /// The text.
        text: String,
    },
    /// A number followed by a unit that is not a duration unit (`5min`, `3h`).
    UnknownUnit {
        /// The unit as written.
        unit: String,
        /// The text.
        text: String,
    },
    /// Not a number and a unit at all (`fast`).
    NotADuration {
        /// The text.
        text: String,
    },
    /// A negative or infinite duration.
    Negative {
        /// The text.
        text: String,
    },
    /// Not a number of bytes with an optional `K`/`M`/`G` suffix.
    NotASize {
        /// The text.
        text: String,
    },
    /// A size over `u64::MAX` bytes.
    TooLarge {
        /// The text.
        text: String,
    },
    /// Not a count of KB nor a size with a unit.
    NotAKibCount {
        /// The text.
        text: String,
    },
    /// A size that is not a whole number of KB.
    NotWholeKib {
        /// The text.
        text: String,
    },
    /// A character that only looks like part of a number or unit (a fullwidth digit, a
    /// non-breaking space, a Cyrillic `ѕ`): named so the user can retype it.
    Lookalike {
        /// The text.
        text: String,
        /// The offending character.
        ch: char,
    },
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitError::NoUnit { text } => write!(
                f,
                "'{text}' has no unit (expected a number followed by ns, us, ms, s or m)"
            ),
            UnitError::UnknownUnit { unit, text } => write!(
                f,
                "unknown unit `{unit}` in '{text}' (expected ns, us, ms, s or m)"
            ),
            UnitError::NotADuration { text } => write!(
                f,
                "'{text}' is not a duration (expected e.g. 100us, 2.5ms, 2s)"
            ),
            UnitError::Negative { text } => write!(f, "'{text}' must be a non-negative duration"),
            UnitError::NotASize { text } => write!(
                f,
                "'{text}' is not a size (expected bytes, e.g. 100, 64K, 10M)"
            ),
            UnitError::TooLarge { text } => write!(f, "'{text}' is too large"),
            UnitError::NotAKibCount { text } => write!(
                f,
                "'{text}' is not a size (expected KB, e.g. 16, or a unit: 16K, 1M, 1G)"
            ),
            UnitError::NotWholeKib { text } => write!(f, "'{text}' is not a whole number of KB"),
            UnitError::Lookalike { text, ch } => write!(
                f,
                "'{text}' contains '{ch}' (U+{:04X}), which only looks like an ASCII digit, letter or space; retype it in ASCII",
                *ch as u32
            ),
        }
    }
}

impl std::error::Error for UnitError {}

/// Duration suffixes and their nanoseconds, longest first where one ends another.
const DURATION_UNITS: [(&str, f64); 7] = [
    ("ns", 1.0),
    ("us", 1e3),
    ("µs", 1e3),
    ("μs", 1e3),
    ("ms", 1e6),
    ("s", 1e9),
    ("m", 60e9),
];

/// Parses a duration such as `100us`, `2.5ms`, `2s`, `750ns`, `1m` into nanoseconds.
pub fn parse_duration(s: &str) -> Result<u64, UnitError> {
    let s = s.trim();
    let Some((num, mult)) = DURATION_UNITS
        .iter()
        .find_map(|(u, m)| s.strip_suffix(u).map(|n| (n, *m)))
    else {
        return Err(unit_problem(s));
    };
    let v: f64 = num.trim().parse().map_err(|_| unit_problem(s))?;
    if !v.is_finite() || v < 0.0 {
        return Err(UnitError::Negative { text: s.into() });
    }
    Ok((v * mult).round() as u64)
}

/// Like [`parse_duration`], but a bare number is taken in `bare_unit` (one of the suffixes,
/// e.g. `"s"`).
pub fn parse_duration_or_bare(s: &str, bare_unit: &str) -> Result<u64, UnitError> {
    if s.trim().parse::<f64>().is_ok() {
        parse_duration(&format!("{}{bare_unit}", s.trim()))
    } else {
        parse_duration(s)
    }
}

/// The number and the unit of `numberUNIT` when the unit is not one we know.
fn unknown_unit(s: &str) -> Option<&str> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let unit = unit.trim();
    (!num.is_empty() && num.parse::<f64>().is_ok() && !unit.is_empty()).then_some(unit)
}

/// The first character of `s` that is neither ASCII nor one of the micro signs: a lookalike
/// of a digit, letter or space that no number or unit contains.
fn lookalike(s: &str) -> Option<char> {
    s.chars().find(|c| !c.is_ascii() && !matches!(c, 'µ' | 'μ'))
}

fn unit_problem(s: &str) -> UnitError {
    let text = s.to_string();
    if let Some(ch) = lookalike(s) {
        return UnitError::Lookalike { text, ch };
    }
    match unknown_unit(s) {
        _ if s.parse::<f64>().is_ok() => UnitError::NoUnit { text },
        Some(u) => UnitError::UnknownUnit {
            unit: u.to_string(),
            text,
        },
        None => UnitError::NotADuration { text },
    }
}

/// The shortest exact spelling of `ns` nanoseconds with a unit, as [`parse_duration`] reads
/// it back (`300ms`, `5s`, `1500ns`).
pub fn format_duration(ns: u64) -> String {
    // The largest unit that divides the value exactly (no `is_multiple_of`: MSRV 1.85).
    for (div, unit) in [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")] {
        if ns > 0 && (ns / div) * div == ns {
            return format!("{}{unit}", ns / div);
        }
    }
    format!("{ns}ns")
}

/// Parses `64K`, `10M`, `1G`, `100` (bytes; powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let (num, mult) = [
        ("kib", 1u64 << 10),
        ("mib", 1 << 20),
        ("gib", 1 << 30),
        ("kb", 1 << 10),
        ("mb", 1 << 20),
        ("gb", 1 << 30),
        ("k", 1 << 10),
        ("m", 1 << 20),
        ("g", 1 << 30),
        ("b", 1),
    ]
    .iter()
    .find_map(|(suf, m)| lower.strip_suffix(suf).map(|n| (n.trim().to_string(), *m)))
    .unwrap_or((lower.clone(), 1));
    let v: u64 = num.parse().map_err(|_| match lookalike(t) {
        Some(ch) => UnitError::Lookalike { text: t.into(), ch },
        None => UnitError::NotASize { text: t.into() },
    })?;
    v.checked_mul(mult)
        .ok_or_else(|| UnitError::TooLarge { text: t.into() })
}

/// Parses a count of KiB for a parameter documented in KB (lmbench's `-s`): a bare number is
/// KB (`16`), and any size with a unit is read like every other size (`16K`, `1M`, `1G`,
/// `4096B`) and must be a whole number of KB.
pub fn parse_kib(s: &str) -> Result<u64, UnitError> {
    let t = s.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n);
    }
    let bytes = parse_size(t).map_err(|_| UnitError::NotAKibCount { text: t.into() })?;
    if bytes % 1024 != 0 {
        return Err(UnitError::NotWholeKib { text: t.into() });
    }
    Ok(bytes / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_need_units() {
        assert_eq!(parse_duration("100us"), Ok(100_000));
        assert_eq!(parse_duration("100µs"), Ok(100_000));
        assert_eq!(parse_duration("100\u{3bc}s"), Ok(100_000));
        assert_eq!(parse_duration("2.5ms"), Ok(2_500_000));
        assert_eq!(parse_duration("2 s"), Ok(2_000_000_000));
        assert_eq!(parse_duration("7ns"), Ok(7));
        assert_eq!(parse_duration("1m"), Ok(60_000_000_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000_000));
        assert!(
            parse_duration("100")
                .unwrap_err()
                .to_string()
                .contains("no unit")
        );
        assert!(
            parse_duration("1e3")
                .unwrap_err()
                .to_string()
                .contains("no unit")
        );
        assert!(
            parse_duration("-1ms")
                .unwrap_err()
                .to_string()
                .contains("non-negative")
        );
        assert!(
            parse_duration("fast")
                .unwrap_err()
                .to_string()
                .contains("not a duration")
        );
        assert!(
            parse_duration("ms")
                .unwrap_err()
                .to_string()
                .contains("not a duration")
        );
        assert!(
            parse_duration("5min")
                .unwrap_err()
                .to_string()
                .contains("unknown unit `min`")
        );
        assert!(
            parse_duration("3h")
                .unwrap_err()
                .to_string()
                .contains("unknown unit `h`")
        );
        assert!(
            parse_duration("5parsecs")
                .unwrap_err()
                .to_string()
                .contains("unknown unit `parsecs`")
        );
    }

    #[test]
    fn bare_numbers_only_where_asked() {
        assert_eq!(parse_duration_or_bare("30", "s"), Ok(30_000_000_000));
        assert_eq!(parse_duration_or_bare("30000", "us"), Ok(30_000_000));
        assert_eq!(parse_duration_or_bare("300ms", "s"), Ok(300_000_000));
        assert!(parse_duration_or_bare("5parsecs", "s").is_err());
    }

    #[test]
    fn shortest_exact_spelling_round_trips() {
        for (ns, text) in [
            (300_000_000, "300ms"),
            (5_000_000_000, "5s"),
            (30_000_000, "30ms"),
            (1_500, "1500ns"),
            (0, "0ns"),
        ] {
            assert_eq!(format_duration(ns), text);
            assert_eq!(parse_duration(text), Ok(ns));
        }
    }

    #[test]
    fn lookalike_characters_are_named() {
        let e = parse_duration("\u{ff15}us").unwrap_err().to_string();
        assert!(e.contains("U+FF15") && e.contains("ASCII"), "{e}");
        // A non-breaking space is white space: read as a space.
        assert_eq!(parse_duration("5\u{a0}ms"), Ok(5_000_000));
        let e = parse_duration("5m\u{455}").unwrap_err().to_string();
        assert!(e.contains("U+0455"), "{e}");
        let e = parse_size("\u{ff16}4K").unwrap_err().to_string();
        assert!(e.contains("U+FF16"), "{e}");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("10M"), Ok(10 << 20));
        assert_eq!(parse_size("100"), Ok(100));
        assert_eq!(parse_size("4kb"), Ok(4096));
        assert!(parse_size("lots").is_err());
        assert_eq!(parse_kib("16K"), Ok(16));
        assert_eq!(parse_kib("16"), Ok(16));
        assert_eq!(parse_kib("16KB"), Ok(16));
        assert_eq!(parse_kib("1M"), Ok(1024));
        assert_eq!(parse_kib("1G"), Ok(1 << 20));
        assert_eq!(parse_kib("2048B"), Ok(2));
        assert!(parse_kib("100B").is_err());
        assert!(parse_kib("x").is_err());
    }

    #[test]
    fn errors_say_what_was_expected() {
        let cases: [(Result<u64, UnitError>, &str); 8] = [
            (
                parse_duration(" 100 "),
                "'100' has no unit (expected a number followed by ns, us, ms, s or m)",
            ),
            (
                parse_duration("5min"),
                "unknown unit `min` in '5min' (expected ns, us, ms, s or m)",
            ),
            (
                parse_duration("fast"),
                "'fast' is not a duration (expected e.g. 100us, 2.5ms, 2s)",
            ),
            (
                parse_duration("-1ms"),
                "'-1ms' must be a non-negative duration",
            ),
            (
                parse_size("lots"),
                "'lots' is not a size (expected bytes, e.g. 100, 64K, 10M)",
            ),
            (
                parse_size("18446744073709551615G"),
                "'18446744073709551615G' is too large",
            ),
            (
                parse_kib("x"),
                "'x' is not a size (expected KB, e.g. 16, or a unit: 16K, 1M, 1G)",
            ),
            (parse_kib("100B"), "'100B' is not a whole number of KB"),
        ];
        for (got, text) in cases {
            assert_eq!(got.unwrap_err().to_string(), text);
        }
        assert_eq!(
            parse_duration("3h"),
            Err(UnitError::UnknownUnit {
                unit: "h".into(),
                text: "3h".into()
            })
        );
    }
}
