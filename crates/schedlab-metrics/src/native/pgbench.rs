//! `pgbench`: the summary of pgbench 14+ (written) and of 13 and older (read). From the PostgreSQL
//! documentation, checked on pgbench 15.

use super::{NativeError, NativeFormat, find_line, metric, num, printed, re};
use crate::result::{Better, Metric};
use regex::Regex;
use std::sync::LazyLock;

/// One pgbench run (the summary that pgbench 14+ prints).
#[derive(Clone, Debug, PartialEq)]
pub struct PgbenchReport {
    /// `transaction type` text, e.g. `<builtin: select only>`.
    pub transaction_type: String,
    /// Scale factor (`-s` at `-i`).
    pub scale: u64,
    /// Clients (`-c`).
    pub clients: u64,
    /// pgbench threads (`-j`).
    pub threads: u64,
    /// Duration (`-T`), seconds.
    pub duration_s: u64,
    /// Transactions processed.
    pub transactions: u64,
    /// Average latency, milliseconds (3 decimals).
    pub latency_avg_ms: f64,
    /// Initial connection time, milliseconds (3 decimals).
    pub initial_connection_ms: f64,
    /// Transactions per second without the initial connection time (6 decimals).
    pub tps: f64,
}

impl PgbenchReport {
    /// `tps` (higher is better), then `latency_avg_ms`.
    pub fn metrics(&self) -> Vec<Metric> {
        vec![
            metric("tps", self.tps, "tps", Better::Higher),
            metric("latency_avg_ms", self.latency_avg_ms, "ms", Better::Lower),
        ]
    }
}

/// pgbench 15 output for `r` (without the `pgbench (version)` banner).
pub fn format_pgbench(r: &PgbenchReport) -> String {
    format!(
        "transaction type: {}\n\
         scaling factor: {}\n\
         query mode: simple\n\
         number of clients: {}\n\
         number of threads: {}\n\
         maximum number of tries: 1\n\
         duration: {} s\n\
         number of transactions actually processed: {}\n\
         number of failed transactions: 0 (0.000%)\n\
         latency average = {:.3} ms\n\
         initial connection time = {:.3} ms\n\
         tps = {:.6} (without initial connection time)\n",
        r.transaction_type,
        r.scale,
        r.clients,
        r.threads,
        r.duration_s,
        r.transactions,
        r.latency_avg_ms,
        r.initial_connection_ms,
        r.tps
    )
}

/// What pgbench output says; `tps` is always present.
#[derive(Clone, Debug, PartialEq)]
pub struct PgbenchOutput {
    /// Transactions per second: the `without initial connection time` line (14+) or the
    /// `excluding connections establishing` line (13 and older).
    pub tps: f64,
    /// `latency average`, milliseconds (absent in old versions without `-r`/`-l`).
    pub latency_avg_ms: Option<f64>,
    /// Transactions processed (the part before `/` in old `-t` runs).
    pub transactions: Option<u64>,
    /// Clients.
    pub clients: Option<u64>,
}

impl PgbenchOutput {
    /// Same metric names as [`PgbenchReport::metrics`].
    pub fn metrics(&self) -> Vec<Metric> {
        let mut m = vec![metric("tps", self.tps, "tps", Better::Higher)];
        if let Some(l) = self.latency_avg_ms {
            m.push(metric("latency_avg_ms", l, "ms", Better::Lower));
        }
        m
    }
}

static PG_TPS_NEW: LazyLock<Regex> =
    LazyLock::new(|| re(r"^tps = ([0-9.]+) \(without initial connection time\)"));
static PG_TPS_OLD: LazyLock<Regex> =
    LazyLock::new(|| re(r"^tps = ([0-9.]+) \(excluding connections establishing\)"));
static PG_TPS_ANY: LazyLock<Regex> = LazyLock::new(|| re(r"^tps = ([0-9.]+)"));
static PG_LAT: LazyLock<Regex> = LazyLock::new(|| re(r"^latency average = ([0-9.]+) ms"));
static PG_TXN: LazyLock<Regex> =
    LazyLock::new(|| re(r"^number of transactions actually processed: (\d+)"));
static PG_CLIENTS: LazyLock<Regex> = LazyLock::new(|| re(r"^number of clients: (\d+)"));

/// Reads pgbench output, old (≤ 13) or new (14+) summary.
pub fn parse_pgbench(text: &str) -> Result<PgbenchOutput, NativeError> {
    const T: &str = "pgbench";
    let (line, c) = find_line(text, &PG_TPS_NEW)
        .or_else(|| find_line(text, &PG_TPS_OLD))
        .or_else(|| find_line(text, &PG_TPS_ANY))
        .ok_or(NativeError::Missing {
            tool: T,
            what: "tps =",
        })?;
    let mut out = PgbenchOutput {
        tps: num(T, line, &c, 1)?,
        latency_avg_ms: None,
        transactions: None,
        clients: None,
    };
    if let Some((line, c)) = find_line(text, &PG_LAT) {
        out.latency_avg_ms = Some(num(T, line, &c, 1)?);
    }
    if let Some((line, c)) = find_line(text, &PG_TXN) {
        out.transactions = Some(num(T, line, &c, 1)?);
    }
    if let Some((line, c)) = find_line(text, &PG_CLIENTS) {
        out.clients = Some(num(T, line, &c, 1)?);
    }
    Ok(out)
}

/// The `pgbench` format (see [`format_pgbench`], [`parse_pgbench`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Pgbench;

impl NativeFormat for Pgbench {
    const TOOL: &'static str = "pgbench";
    type Report = PgbenchReport;
    type Parsed = PgbenchOutput;

    fn format(r: &Self::Report) -> String {
        format_pgbench(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_pgbench(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        PgbenchOutput {
            tps: printed(&format!("{:.6}", r.tps)),
            latency_avg_ms: Some(printed(&format!("{:.3}", r.latency_avg_ms))),
            transactions: Some(r.transactions),
            clients: Some(r.clients),
        }
    }

    fn examples() -> Vec<Self::Report> {
        vec![PgbenchReport {
            transaction_type: "<builtin: select only>".into(),
            scale: 1,
            clients: 4,
            threads: 1,
            duration_s: 5,
            transactions: 100_000,
            latency_avg_ms: 0.2,
            initial_connection_ms: 12.5,
            tps: 20_000.123_456,
        }]
    }
}
