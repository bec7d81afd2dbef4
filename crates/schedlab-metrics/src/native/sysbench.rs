//! sysbench 1.0 OLTP report (`oltp_read_write`). The layout is **recalled**, not checked.

use super::{NativeError, NativeFormat, find_line, metric, num, re};
use crate::result::{Better, Metric};
use regex::Regex;
use std::sync::LazyLock;

/// One sysbench OLTP run (sysbench 1.0 report; the layout is recalled, not checked).
#[derive(Clone, Debug, PartialEq)]
pub struct SysbenchReport {
    /// Read queries.
    pub reads: u64,
    /// Write queries.
    pub writes: u64,
    /// Other queries (BEGIN/COMMIT).
    pub other: u64,
    /// Transactions.
    pub transactions: u64,
    /// Transactions per second (2 decimals).
    pub transactions_per_sec: f64,
    /// Average latency, milliseconds (2 decimals).
    pub latency_avg_ms: f64,
    /// 95th percentile latency, milliseconds (2 decimals).
    pub latency_p95_ms: f64,
}

impl SysbenchReport {
    /// `transactions_per_sec` (higher is better), `latency_avg_ms`, `latency_p95_ms`.
    pub fn metrics(&self) -> Vec<Metric> {
        vec![
            metric(
                "transactions_per_sec",
                self.transactions_per_sec,
                "tps",
                Better::Higher,
            ),
            metric("latency_avg_ms", self.latency_avg_ms, "ms", Better::Lower),
            metric("latency_p95_ms", self.latency_p95_ms, "ms", Better::Lower),
        ]
    }
}

/// sysbench 1.0 OLTP report for `r` (recalled layout; min/max latency are not modelled and
/// printed as the average).
pub fn format_sysbench(r: &SysbenchReport) -> String {
    let total = r.reads + r.writes + r.other;
    let secs = if r.transactions_per_sec > 0.0 {
        r.transactions as f64 / r.transactions_per_sec
    } else {
        0.0
    };
    let qps = if secs > 0.0 { total as f64 / secs } else { 0.0 };
    format!(
        "SQL statistics:\n\
         \x20   queries performed:\n\
         \x20       read:                            {}\n\
         \x20       write:                           {}\n\
         \x20       other:                           {}\n\
         \x20       total:                           {}\n\
         \x20   transactions:                        {}  ({:.2} per sec.)\n\
         \x20   queries:                             {} ({:.2} per sec.)\n\
         \n\
         Latency (ms):\n\
         \x20        min:                                    {:.2}\n\
         \x20        avg:                                    {:.2}\n\
         \x20        max:                                    {:.2}\n\
         \x20        95th percentile:                        {:.2}\n",
        r.reads,
        r.writes,
        r.other,
        total,
        r.transactions,
        r.transactions_per_sec,
        total,
        qps,
        r.latency_avg_ms,
        r.latency_avg_ms,
        r.latency_p95_ms.max(r.latency_avg_ms),
        r.latency_p95_ms
    )
}

static SB_READ: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*read:\s+(\d+)\s*$"));
static SB_WRITE: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*write:\s+(\d+)\s*$"));
static SB_OTHER: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*other:\s+(\d+)\s*$"));
static SB_TXN: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*transactions:\s+(\d+)\s+\(([0-9.]+) per sec\.\)"));
static SB_AVG: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*avg:\s+([0-9.]+)\s*$"));
static SB_P95: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*95th percentile:\s+([0-9.]+)\s*$"));

/// Reads a sysbench OLTP report; the `transactions:` line is required, the rest optional (0).
pub fn parse_sysbench(text: &str) -> Result<SysbenchReport, NativeError> {
    const T: &str = "sysbench";
    let (line, c) = find_line(text, &SB_TXN).ok_or(NativeError::Missing {
        tool: T,
        what: "transactions:",
    })?;
    let opt = |re: &Regex| -> Result<Option<f64>, NativeError> {
        match find_line(text, re) {
            Some((line, c)) => Ok(Some(num(T, line, &c, 1)?)),
            None => Ok(None),
        }
    };
    Ok(SysbenchReport {
        transactions: num(T, line, &c, 1)?,
        transactions_per_sec: num(T, line, &c, 2)?,
        reads: opt(&SB_READ)?.unwrap_or(0.0) as u64,
        writes: opt(&SB_WRITE)?.unwrap_or(0.0) as u64,
        other: opt(&SB_OTHER)?.unwrap_or(0.0) as u64,
        latency_avg_ms: opt(&SB_AVG)?.unwrap_or(0.0),
        latency_p95_ms: opt(&SB_P95)?.unwrap_or(0.0),
    })
}

/// The `sysbench` format (see [`format_sysbench`], [`parse_sysbench`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Sysbench;

impl NativeFormat for Sysbench {
    const TOOL: &'static str = "sysbench";
    type Report = SysbenchReport;
    type Parsed = SysbenchReport;

    fn format(r: &Self::Report) -> String {
        format_sysbench(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_sysbench(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        r.clone()
    }

    fn examples() -> Vec<Self::Report> {
        vec![SysbenchReport {
            reads: 140_000,
            writes: 40_000,
            other: 20_000,
            transactions: 10_000,
            transactions_per_sec: 999.87,
            latency_avg_ms: 5.0,
            latency_p95_ms: 8.0,
        }]
    }
}
