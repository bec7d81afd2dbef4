//! dbench 4.0 `tbench`: the final operation table and the `Throughput` line (the per-second
//! progress lines are not reproduced). From the dbench source, checked on the Debian dbench 4.0
//! binary.

use super::{NativeError, NativeFormat, find_line, format_g, metric, num, re};
use crate::result::{Better, Metric};
use regex::Regex;
use std::fmt::Write as _;
use std::sync::LazyLock;

/// One row of tbench's per-operation latency table.
#[derive(Clone, Debug, PartialEq)]
pub struct TbenchOpStat {
    /// Operation name (`ReadX`, `WriteX`, `NTCreateX`, ...); no spaces.
    pub name: String,
    /// Operations completed.
    pub count: u64,
    /// Average latency, milliseconds (printed with 3 decimals).
    pub avg_lat_ms: f64,
    /// Maximum latency, milliseconds (printed with 3 decimals).
    pub max_lat_ms: f64,
}

/// One tbench run: the final table and the `Throughput` line.
#[derive(Clone, Debug, PartialEq)]
pub struct TbenchReport {
    /// Per-operation table (may be empty).
    pub ops: Vec<TbenchOpStat>,
    /// Counted payload throughput, MB/s with MB = 10^6 bytes (printed with `%g`).
    pub throughput_mb_s: f64,
    /// Clients.
    pub clients: u64,
    /// Client processes.
    pub procs: u64,
    /// Worst operation latency, milliseconds.
    pub max_latency_ms: f64,
}

impl TbenchReport {
    /// Average operation latency, milliseconds: the count-weighted mean of the table's `AvgLat`
    /// column (tbench prints no single average line). `None` when the table is empty.
    pub fn avg_latency_ms(&self) -> Option<f64> {
        let n: u64 = self.ops.iter().map(|o| o.count).sum();
        (n > 0).then(|| {
            self.ops
                .iter()
                .map(|o| o.count as f64 * o.avg_lat_ms)
                .sum::<f64>()
                / n as f64
        })
    }

    /// `throughput_mb_s` (higher is better), `max_latency_ms`, and `avg_latency_ms` when the
    /// table is present.
    pub fn metrics(&self) -> Vec<Metric> {
        let mut m = vec![
            metric(
                "throughput_mb_s",
                self.throughput_mb_s,
                "MB/s",
                Better::Higher,
            ),
            metric("max_latency_ms", self.max_latency_ms, "ms", Better::Lower),
        ];
        if let Some(avg) = self.avg_latency_ms() {
            m.push(metric("avg_latency_ms", avg, "ms", Better::Lower));
        }
        m
    }
}

/// The end of tbench's output for `r`: the operation table (when `r.ops` is non-empty), a blank
/// line and the `Throughput` line. The per-second progress lines are not reproduced.
pub fn format_tbench(r: &TbenchReport) -> String {
    let mut s = String::new();
    if !r.ops.is_empty() {
        s.push_str(" Operation      Count    AvgLat    MaxLat\n");
        s.push_str(" ----------------------------------------\n");
        for o in &r.ops {
            let _ = writeln!(
                s,
                " {:<12} {:7} {:9.3} {:9.3}",
                o.name, o.count, o.avg_lat_ms, o.max_lat_ms
            );
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "Throughput {} MB/sec  {} clients  {} procs  max_latency={:.3} ms",
        format_g(r.throughput_mb_s),
        r.clients,
        r.procs,
        r.max_latency_ms
    );
    s
}

static TB_THROUGHPUT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^Throughput ([0-9.e+]+) MB/sec(?:.*?)\s+(\d+) clients\s+(\d+) procs\s+max_latency=([0-9.]+) ms",
    )
});
static TB_ROW: LazyLock<Regex> =
    LazyLock::new(|| re(r"^ (\S+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s*$"));

/// Reads tbench output: the `Throughput` line (required) and the operation table (optional).
pub fn parse_tbench(text: &str) -> Result<TbenchReport, NativeError> {
    const T: &str = "tbench";
    let (line, c) = find_line(text, &TB_THROUGHPUT).ok_or(NativeError::Missing {
        tool: T,
        what: "Throughput",
    })?;
    let mut r = TbenchReport {
        ops: Vec::new(),
        throughput_mb_s: num(T, line, &c, 1)?,
        clients: num(T, line, &c, 2)?,
        procs: num(T, line, &c, 3)?,
        max_latency_ms: num(T, line, &c, 4)?,
    };
    let mut in_table = false;
    for (i, l) in text.lines().enumerate() {
        if l.starts_with(" Operation") && l.contains("AvgLat") {
            in_table = true;
            continue;
        }
        if !in_table || l.starts_with(" ---") {
            continue;
        }
        match TB_ROW.captures(l) {
            Some(c) => r.ops.push(TbenchOpStat {
                name: c[1].to_string(),
                count: num(T, i + 1, &c, 2)?,
                avg_lat_ms: num(T, i + 1, &c, 3)?,
                max_lat_ms: num(T, i + 1, &c, 4)?,
            }),
            None => in_table = false,
        }
    }
    Ok(r)
}

/// The `tbench` format (see [`format_tbench`], [`parse_tbench`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tbench;

impl NativeFormat for Tbench {
    const TOOL: &'static str = "tbench";
    type Report = TbenchReport;
    type Parsed = TbenchReport;

    fn format(r: &Self::Report) -> String {
        format_tbench(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_tbench(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        r.clone()
    }

    fn examples() -> Vec<Self::Report> {
        vec![TbenchReport {
            ops: vec![
                TbenchOpStat {
                    name: "ReadX".into(),
                    count: 300,
                    avg_lat_ms: 0.02,
                    max_lat_ms: 1.5,
                },
                TbenchOpStat {
                    name: "NTCreateX".into(),
                    count: 100,
                    avg_lat_ms: 0.06,
                    max_lat_ms: 0.25,
                },
            ],
            throughput_mb_s: 287.617,
            clients: 1,
            procs: 1,
            max_latency_ms: 5.487,
        }]
    }
}
