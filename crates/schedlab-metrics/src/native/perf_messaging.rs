//! `perf bench sched messaging` (perf's port of hackbench), default format and `-f simple`. From
//! the perf source, checked on perf 6.1.

use super::{NativeError, NativeFormat, PERF_TOTAL, find_line, metric, num, re, sec_ms};
use crate::result::{Better, Metric};
use regex::Regex;
use std::sync::LazyLock;

/// One `perf bench sched messaging` run (perf's port of hackbench).
#[derive(Clone, Debug, PartialEq)]
pub struct PerfMessagingReport {
    /// Thread mode (`-t`).
    pub threads: bool,
    /// Number of groups (`-g`).
    pub groups: u64,
    /// Senders (= receivers) per group; perf fixes it at 20 by default.
    pub fds: u64,
    /// Total time, seconds (printed truncated to milliseconds).
    pub time_s: f64,
}

impl PerfMessagingReport {
    /// `time_s` (lower is better).
    pub fn metrics(&self) -> Vec<Metric> {
        vec![metric("time_s", self.time_s, "s", Better::Lower)]
    }
}

/// The `perf bench sched messaging` output (default format) for `r`.
pub fn format_perf_messaging(r: &PerfMessagingReport) -> String {
    let kind = if r.threads { "threads" } else { "processes" };
    format!(
        "# Running 'sched/messaging' benchmark:\n\
         # {} sender and receiver {kind} per group\n\
         # {} groups == {} {kind} run\n\
         \n     Total time: {} [sec]\n",
        r.fds,
        r.groups,
        2 * r.fds * r.groups,
        sec_ms(r.time_s)
    )
}

static PM_HEAD: LazyLock<Regex> =
    LazyLock::new(|| re(r"^# (\d+) sender and receiver (processes|threads) per group"));
static PM_GROUPS: LazyLock<Regex> = LazyLock::new(|| re(r"^# (\d+) groups == (\d+) "));
static BARE_NUMBER: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*([0-9]+\.[0-9]+)\s*$"));

/// Reads `perf bench sched messaging` output, default format or `-f simple` (a bare number).
pub fn parse_perf_messaging(text: &str) -> Result<PerfMessagingReport, NativeError> {
    const T: &str = "perf bench sched messaging";
    let (line, c) = find_line(text, &PERF_TOTAL)
        .or_else(|| find_line(text, &BARE_NUMBER))
        .ok_or(NativeError::Missing {
            tool: T,
            what: "Total time:",
        })?;
    let mut r = PerfMessagingReport {
        threads: false,
        groups: 0,
        fds: 0,
        time_s: num(T, line, &c, 1)?,
    };
    if let Some((line, c)) = find_line(text, &PM_HEAD) {
        r.fds = num(T, line, &c, 1)?;
        r.threads = &c[2] == "threads";
    }
    if let Some((line, c)) = find_line(text, &PM_GROUPS) {
        r.groups = num(T, line, &c, 1)?;
    }
    Ok(r)
}

/// The `perf bench sched messaging` format (see [`format_perf_messaging`], [`parse_perf_messaging`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct PerfMessaging;

impl NativeFormat for PerfMessaging {
    const TOOL: &'static str = "perf bench sched messaging";
    type Report = PerfMessagingReport;
    type Parsed = PerfMessagingReport;

    fn format(r: &Self::Report) -> String {
        format_perf_messaging(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_perf_messaging(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        r.clone()
    }

    fn examples() -> Vec<Self::Report> {
        vec![PerfMessagingReport {
            threads: true,
            groups: 4,
            fds: 20,
            time_s: 1.25,
        }]
    }
}
