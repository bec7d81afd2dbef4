//! The benchmarks' own output formats, one module per real tool behind one trait,
//! [`NativeFormat`]: `format` writes the text the real tool prints, `parse` reads the numbers
//! back.
//!
//! Both the simulator's workload models and the real-host harness print their results through
//! these formatters, and the host harness reads the real tools' output through these parsers, so
//! the simulated, re-implemented and real runs of a benchmark share one format that cannot drift.
//! Every `*Report` type also names its metrics ([`HackbenchReport::metrics`] etc.), so the
//! [`crate::BenchResult`] metric names come from one place too. The free functions
//! (`format_hackbench`, `parse_hackbench`, ...) are the same code, for callers that know their
//! tool; [`formats`] lists every registered format for code that handles them all alike.
//!
//! | tool | format (module) | provenance |
//! |---|---|---|
//! | rt-tests `hackbench` | [`Hackbench`] (`hackbench`) | source, checked on the Debian rt-tests 2.4 binary |
//! | `perf bench sched messaging` | [`PerfMessaging`] (`perf_messaging`) | source, checked on perf 6.1 |
//! | `perf bench sched pipe` | [`PerfPipe`] (`perf_pipe`) | source, checked on perf 6.1 |
//! | dbench `tbench` | [`Tbench`] (`tbench`) | source, checked on the Debian dbench 4.0 binary |
//! | netperf TCP_RR | [`NetperfRr`] (`netperf`) | **recalled**, not checked |
//! | `pgbench` (14+ and older) | [`Pgbench`] (`pgbench`) | docs, checked on pgbench 15 |
//! | sysbench OLTP | [`Sysbench`] (`sysbench`) | **recalled**, not checked |
//! | schbench (2016-2023) | [`SchbenchOld`] (`schbench`) | source |
//! | schbench v1.0 | [`SchbenchV1`] (`schbench`) | source |
//! | AIM7 / re-aim-7 | [`Aim7`] (`aim7`) | **recalled** |
//! | kernbench | [`Kernbench`] (`kernbench`) | **recalled** |
//! | numa_test | [`NumaTest`] (`numa_test`) | **recalled**; the tool is obsolete |
//! | lmbench `bw_pipe`, `bw_unix` | [`LmbenchBw`] (`lmbench`) | source |
//! | lmbench `lat_ctx` | [`LatCtx`] (`lmbench`) | source |
//!
//! Formatters print numbers at the precision of the real tool, so a parse of a formatted report
//! gives back the report's numbers at that precision ([`NativeFormat::read_back`]); one test
//! round-trips the examples of every registered format.
//!
//! Adding a tool: a module with its report, `format_*`/`parse_*` and a [`NativeFormat`]
//! impl, its `mod` and `pub use` lines here, and one line in [`formats`]' list.

mod aim7;
mod hackbench;
mod kernbench;
mod lmbench;
mod netperf;
mod numa_test;
mod perf_messaging;
mod perf_pipe;
mod pgbench;
mod schbench;
mod sysbench;
mod tbench;

pub use aim7::*;
pub use hackbench::*;
pub use kernbench::*;
pub use lmbench::*;
pub use netperf::*;
pub use numa_test::*;
pub use perf_messaging::*;
pub use perf_pipe::*;
pub use pgbench::*;
pub use schbench::*;
pub use sysbench::*;
pub use tbench::*;

use crate::result::{Better, Metric};
use regex::Regex;
use std::sync::LazyLock;

/// Why a tool's output could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NativeError {
    /// A line the format requires is absent (the tool failed, or this is not its output).
    #[error("{tool} output: no {what} line found")]
    Missing {
        /// The tool whose output was parsed.
        tool: &'static str,
        /// What was looked for, e.g. `"Time:"`.
        what: &'static str,
    },
    /// A number on a matched line does not parse.
    #[error("{tool} output line {line}: bad number {value:?}")]
    BadNumber {
        /// The tool whose output was parsed.
        tool: &'static str,
        /// 1-based line number in the output.
        line: usize,
        /// The offending text.
        value: String,
    },
}

/// Why a format's example did not survive format → parse ([`Format::check_round_trip`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RoundTripError {
    /// The formatted text did not parse.
    #[error("{tool}: {error}\n{text}")]
    Unparsed {
        /// The tool.
        tool: &'static str,
        /// Why the parser refused it.
        error: NativeError,
        /// The formatted text.
        text: String,
    },
    /// It parsed to something else than `read_back` of the report.
    #[error("{tool}: read back {got}, expected {want}\n{text}")]
    Mismatch {
        /// The tool.
        tool: &'static str,
        /// What the parser gave (`Debug` form).
        got: String,
        /// What `read_back` gave (`Debug` form).
        want: String,
        /// The formatted text.
        text: String,
    },
}

pub(super) fn metric(name: &str, value: f64, unit: &str, better: Better) -> Metric {
    Metric {
        name: name.to_string(),
        value,
        unit: unit.to_string(),
        better,
    }
}

pub(super) fn re(pattern: &str) -> Regex {
    // The patterns are literals of the format modules; a bad one is a bug caught by the tests.
    Regex::new(pattern).expect("native format regex literal")
}

/// Finds the first line matching `re` and returns its 1-based number and captures.
pub(super) fn find_line<'t>(text: &'t str, re: &Regex) -> Option<(usize, regex::Captures<'t>)> {
    text.lines()
        .enumerate()
        .find_map(|(i, l)| re.captures(l).map(|c| (i + 1, c)))
}

pub(super) fn num<T: std::str::FromStr>(
    tool: &'static str,
    line: usize,
    caps: &regex::Captures<'_>,
    group: usize,
) -> Result<T, NativeError> {
    let s = caps.get(group).map_or("", |m| m.as_str());
    s.parse().map_err(|_| NativeError::BadNumber {
        tool,
        line,
        value: s.to_string(),
    })
}

/// `"%lu.%03lu"` of a duration in seconds, truncated to milliseconds as rt-tests and perf do.
pub(super) fn sec_ms(seconds: f64) -> String {
    let ms = (seconds.max(0.0) * 1000.0 + 1e-6).floor() as u64;
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// C's `%g` (six significant digits, trailing zeros removed), which tbench uses.
pub fn format_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x.is_finite() {
            "0".to_string()
        } else {
            x.to_string()
        };
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&exp) {
        let m = strip(mantissa.to_string());
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        strip(format!("{x:.decimals$}"))
    }
}

static PERF_TOTAL: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*Total time: ([0-9.]+) \[sec\]"));

/// A number as a formatter printed it, read back (for [`NativeFormat::read_back`]).
fn printed(text: &str) -> f64 {
    // The text comes from a `format!` of an f64 in this module, so it always parses.
    text.trim().parse().unwrap_or(f64::NAN)
}

/// One real tool's output format: what the tool prints for a run, and the reader of it.
///
/// The unit types implementing it ([`Hackbench`], [`PerfPipe`], ...) name a tool; the report
/// and parse types are the tool's own (`Parsed` differs from `Report` where the real tool's
/// output may leave fields out, e.g. [`PipeOutput`]).
pub trait NativeFormat {
    /// The tool, as parse errors name it.
    const TOOL: &'static str;
    /// A run's numbers, as the formatter takes them.
    type Report: Clone + std::fmt::Debug;
    /// What the parser reads from the tool's output.
    type Parsed: PartialEq + std::fmt::Debug;
    /// The text the real tool prints for `r`.
    fn format(r: &Self::Report) -> String;
    /// Reads the tool's output (the real tool's or [`NativeFormat::format`]'s).
    fn parse(text: &str) -> Result<Self::Parsed, NativeError>;
    /// What `parse(&format(r))` must give: `r`'s numbers at the precision the tool prints.
    fn read_back(r: &Self::Report) -> Self::Parsed;
    /// Representative reports, which the round-trip test runs through the format.
    fn examples() -> Vec<Self::Report>;
}

/// A registered format with its types erased, so that tests and tools can iterate over every
/// tool alike.
pub trait Format: Sync {
    /// The tool's name ([`NativeFormat::TOOL`]).
    fn tool(&self) -> &'static str;
    /// Formats each example, parses it back and compares it with `read_back`; returns how
    /// many examples passed, or the first mismatch with the text.
    fn check_round_trip(&self) -> Result<usize, RoundTripError>;
    /// Whether `text` parses as this tool's output (the parsed value is dropped).
    fn accepts(&self, text: &str) -> Result<(), NativeError>;
}

/// The type-erased handle of format `F`.
struct Registered<F>(std::marker::PhantomData<fn() -> F>);

impl<F: NativeFormat> Format for Registered<F> {
    fn tool(&self) -> &'static str {
        F::TOOL
    }

    fn check_round_trip(&self) -> Result<usize, RoundTripError> {
        let examples = F::examples();
        for r in &examples {
            let text = F::format(r);
            let got = match F::parse(&text) {
                Ok(got) => got,
                Err(error) => {
                    let tool = F::TOOL;
                    return Err(RoundTripError::Unparsed { tool, error, text });
                }
            };
            let want = F::read_back(r);
            if got != want {
                return Err(RoundTripError::Mismatch {
                    tool: F::TOOL,
                    got: format!("{got:?}"),
                    want: format!("{want:?}"),
                    text,
                });
            }
        }
        Ok(examples.len())
    }

    fn accepts(&self, text: &str) -> Result<(), NativeError> {
        F::parse(text).map(drop)
    }
}

/// Registers format `F` in [`formats`]' list.
const fn reg<F: NativeFormat>() -> Registered<F> {
    Registered(std::marker::PhantomData)
}

/// Every registered format, one line per tool.
static FORMATS: &[&dyn Format] = &[
    &reg::<Hackbench>(),
    &reg::<PerfMessaging>(),
    &reg::<PerfPipe>(),
    &reg::<Tbench>(),
    &reg::<NetperfRr>(),
    &reg::<Pgbench>(),
    &reg::<Sysbench>(),
    &reg::<SchbenchOld>(),
    &reg::<SchbenchV1>(),
    &reg::<Aim7>(),
    &reg::<Kernbench>(),
    &reg::<NumaTest>(),
    &reg::<LmbenchBw>(),
    &reg::<LatCtx>(),
];

/// Every registered native format, in the order of the table above.
pub fn formats() -> &'static [&'static dyn Format] {
    FORMATS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_g_matches_c() {
        // Values checked against printf("%g") by hand.
        assert_eq!(format_g(287.617), "287.617");
        assert_eq!(format_g(78.47894), "78.4789");
        assert_eq!(format_g(1105.9312), "1105.93");
        assert_eq!(format_g(100.0), "100");
        assert_eq!(format_g(0.5), "0.5");
        assert_eq!(format_g(1234567.0), "1.23457e+06");
        assert_eq!(format_g(0.00001234), "1.234e-05");
    }

    #[test]
    fn sec_ms_truncates_like_rt_tests() {
        assert_eq!(sec_ms(0.7159), "0.715");
        assert_eq!(sec_ms(12.0), "12.000");
        assert_eq!(sec_ms(0.043), "0.043");
    }
}
