//! rt-tests `hackbench`: the three lines it prints (mode and sizes, messages per sender, `Time:`).
//! The format is from the rt-tests source, checked on the Debian rt-tests 2.4 binary.

use super::{NativeError, NativeFormat, find_line, metric, num, re, sec_ms};
use crate::result::{Better, Metric};
use regex::Regex;
use std::sync::LazyLock;

/// One hackbench run, as rt-tests' `hackbench` reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct HackbenchReport {
    /// Thread mode (`-T`) rather than process mode.
    pub threads: bool,
    /// Number of groups (`-g`).
    pub groups: u64,
    /// Receivers (= senders) per group (`-f`); rt-tests prints twice this as "file descriptors".
    pub fds: u64,
    /// Messages each sender passes to each receiver (`-l`).
    pub loops: u64,
    /// Bytes per message (`-s`).
    pub datasize: u64,
    /// Wall time of the message phase, seconds (printed truncated to milliseconds).
    pub time_s: f64,
}

impl HackbenchReport {
    /// `time_s` (lower is better), the metric both hackbench variants report.
    pub fn metrics(&self) -> Vec<Metric> {
        vec![metric("time_s", self.time_s, "s", Better::Lower)]
    }
}

/// The rt-tests `hackbench` output for `r`.
pub fn format_hackbench(r: &HackbenchReport) -> String {
    format!(
        "Running in {} mode with {} groups using {} file descriptors each (== {} tasks)\n\
         Each sender will pass {} messages of {} bytes\n\
         Time: {}\n",
        if r.threads { "threaded" } else { "process" },
        r.groups,
        2 * r.fds,
        2 * r.fds * r.groups,
        r.loops,
        r.datasize,
        sec_ms(r.time_s)
    )
}

static HB_MODE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^Running in (process|threaded) mode with (\d+) groups using (\d+) file descriptors each \(== (\d+) tasks\)",
    )
});
static HB_PASS: LazyLock<Regex> =
    LazyLock::new(|| re(r"^Each sender will pass (\d+) messages of (\d+) bytes"));
static HB_TIME: LazyLock<Regex> = LazyLock::new(|| re(r"^Time: ([0-9.]+)\s*$"));

/// Reads rt-tests `hackbench` output. The `Time:` line is required; the header lines fill in
/// the parameters when present (they are 0 otherwise).
pub fn parse_hackbench(text: &str) -> Result<HackbenchReport, NativeError> {
    const T: &str = "hackbench";
    let (line, c) = find_line(text, &HB_TIME).ok_or(NativeError::Missing {
        tool: T,
        what: "Time:",
    })?;
    let mut r = HackbenchReport {
        threads: false,
        groups: 0,
        fds: 0,
        loops: 0,
        datasize: 0,
        time_s: num(T, line, &c, 1)?,
    };
    if let Some((line, c)) = find_line(text, &HB_MODE) {
        r.threads = &c[1] == "threaded";
        r.groups = num(T, line, &c, 2)?;
        r.fds = num::<u64>(T, line, &c, 3)? / 2;
    }
    if let Some((line, c)) = find_line(text, &HB_PASS) {
        r.loops = num(T, line, &c, 1)?;
        r.datasize = num(T, line, &c, 2)?;
    }
    Ok(r)
}

/// The `hackbench` format (see [`format_hackbench`], [`parse_hackbench`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Hackbench;

impl NativeFormat for Hackbench {
    const TOOL: &'static str = "hackbench";
    type Report = HackbenchReport;
    type Parsed = HackbenchReport;

    fn format(r: &Self::Report) -> String {
        format_hackbench(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_hackbench(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        r.clone()
    }

    fn examples() -> Vec<Self::Report> {
        [false, true]
            .map(|threads| HackbenchReport {
                threads,
                groups: 10,
                fds: 20,
                loops: 100,
                datasize: 100,
                time_s: 0.715,
            })
            .to_vec()
    }
}
