//! schbench, both generations: the old (2016-2023) `Latency percentiles (usec)` block and the v1.0
//! (April 2023 on) summary of wake-up, request and RPS percentiles. From the schbench source
//! (github.com/masoncl/schbench).

use super::{NativeError, NativeFormat, find_line, metric, num, re};
use crate::result::{Better, Metric};
use regex::Regex;
use std::fmt::Write as _;
use std::sync::LazyLock;

/// Wake-up latency percentiles of an old (2019-2022) schbench run, microseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct SchbenchOldReport {
    /// 50th percentile.
    pub p50: u64,
    /// 75th percentile.
    pub p75: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile (the headline, starred in the output).
    pub p99: u64,
    /// 99.5th percentile.
    pub p99_5: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
    /// Smallest sample.
    pub min: u64,
    /// Largest sample.
    pub max: u64,
}

/// The wake-up latency metrics both schbench generations report: p99 (headline), p50, p90,
/// p99.9, all in µs, lower is better.
fn schbench_lat_metrics(p50: u64, p90: u64, p99: u64, p99_9: u64) -> Vec<Metric> {
    vec![
        metric("wakeup_lat_p99_us", p99 as f64, "us", Better::Lower),
        metric("wakeup_lat_p50_us", p50 as f64, "us", Better::Lower),
        metric("wakeup_lat_p90_us", p90 as f64, "us", Better::Lower),
        metric("wakeup_lat_p99_9_us", p99_9 as f64, "us", Better::Lower),
    ]
}

impl SchbenchOldReport {
    /// `wakeup_lat_p99_us` (headline), `wakeup_lat_p50_us`, `wakeup_lat_p90_us`,
    /// `wakeup_lat_p99_9_us`.
    pub fn metrics(&self) -> Vec<Metric> {
        schbench_lat_metrics(self.p50, self.p90, self.p99, self.p99_9)
    }
}

/// The 2019-2022 schbench `Latency percentiles (usec)` block for `r`.
pub fn format_schbench_old(r: &SchbenchOldReport) -> String {
    let rows = [
        ("", 50.0, r.p50),
        ("", 75.0, r.p75),
        ("", 90.0, r.p90),
        ("", 95.0, r.p95),
        ("*", 99.0, r.p99),
        ("", 99.5, r.p99_5),
        ("", 99.9, r.p99_9),
    ];
    let mut s = String::from("Latency percentiles (usec)\n");
    for (star, p, v) in rows {
        let _ = writeln!(s, "\t{star}{p:2.1}th: {v}");
    }
    let _ = writeln!(s, "\tmin={}, max={}", r.min, r.max);
    s
}

static SO_ROW: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*\*?\s*([0-9.]+)th: (\d+)\s*(?:\((\d+) samples\))?\s*$"));
static SO_MINMAX: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*min=(\d+), max=(\d+)"));

/// Reads the old schbench latency block (both the 2016 `50.0000th:` and the 2019
/// `50.0th:` spellings). Percentile rows that are absent read as 0; p50 and p99 are required.
pub fn parse_schbench_old(text: &str) -> Result<SchbenchOldReport, NativeError> {
    const T: &str = "schbench";
    let start = text
        .lines()
        .position(|l| l.starts_with("Latency percentiles (usec)"))
        .ok_or(NativeError::Missing {
            tool: T,
            what: "Latency percentiles (usec)",
        })?;
    let mut r = SchbenchOldReport {
        p50: 0,
        p75: 0,
        p90: 0,
        p95: 0,
        p99: 0,
        p99_5: 0,
        p99_9: 0,
        min: 0,
        max: 0,
    };
    let (mut seen50, mut seen99) = (false, false);
    for (i, l) in text.lines().enumerate().skip(start + 1) {
        if let Some(c) = SO_ROW.captures(l) {
            let p: f64 = num(T, i + 1, &c, 1)?;
            let v: u64 = num(T, i + 1, &c, 2)?;
            let slot = match (p * 10.0).round() as u64 {
                500 => {
                    seen50 = true;
                    &mut r.p50
                }
                750 => &mut r.p75,
                900 => &mut r.p90,
                950 => &mut r.p95,
                990 => {
                    seen99 = true;
                    &mut r.p99
                }
                995 => &mut r.p99_5,
                999 => &mut r.p99_9,
                _ => continue,
            };
            *slot = v;
        } else if let Some(c) = SO_MINMAX.captures(l) {
            r.min = num(T, i + 1, &c, 1)?;
            r.max = num(T, i + 1, &c, 2)?;
            break;
        } else {
            break;
        }
    }
    if !seen50 || !seen99 {
        return Err(NativeError::Missing {
            tool: T,
            what: "50.0th and 99.0th",
        });
    }
    Ok(r)
}

/// One percentile row of a schbench v1.0 block.
#[derive(Clone, Debug, PartialEq)]
pub struct PctRow {
    /// Percentile, e.g. 99.0.
    pub pct: f64,
    /// Value at that percentile.
    pub value: u64,
    /// Samples in the histogram bucket of that row (as schbench prints it).
    pub samples: u64,
}

/// One schbench v1.0 percentile block (wake-up latency, request latency or RPS).
#[derive(Clone, Debug, PartialEq)]
pub struct PctBlock {
    /// Total samples in the block.
    pub total_samples: u64,
    /// The rows, in printed order.
    pub rows: Vec<PctRow>,
    /// Which row is the starred headline (index into `rows`).
    pub star: usize,
    /// Smallest sample.
    pub min: u64,
    /// Largest sample.
    pub max: u64,
}

impl PctBlock {
    /// The value at percentile `pct`, if the block has that row.
    pub fn at(&self, pct: f64) -> Option<u64> {
        self.rows
            .iter()
            .find(|r| (r.pct - pct).abs() < 1e-9)
            .map(|r| r.value)
    }
}

/// One schbench v1.0 run (its stderr summary).
#[derive(Clone, Debug, PartialEq)]
pub struct SchbenchV1Report {
    /// `-r` runtime, seconds.
    pub runtime_s: u64,
    /// Wake-up latency block, µs (rows 50, 90, 99*, 99.9).
    pub wakeup: PctBlock,
    /// Request latency block, µs (rows 50, 90, 99*, 99.9).
    pub request: PctBlock,
    /// Requests per second block (rows 20, 50*, 90).
    pub rps: PctBlock,
    /// Average requests per second (2 decimals).
    pub average_rps: f64,
}

impl SchbenchV1Report {
    /// `wakeup_lat_p99_us` (headline), `wakeup_lat_p50_us`, `wakeup_lat_p90_us`,
    /// `wakeup_lat_p99_9_us`, then `rps` (higher is better).
    pub fn metrics(&self) -> Vec<Metric> {
        let w = |p| self.wakeup.at(p).unwrap_or(0);
        let mut m = schbench_lat_metrics(w(50.0), w(90.0), w(99.0), w(99.9));
        m.push(metric("rps", self.average_rps, "req/s", Better::Higher));
        m
    }
}

fn format_pct_block(s: &mut String, title: &str, runtime_s: u64, b: &PctBlock) {
    let _ = writeln!(
        s,
        "{title} percentiles ({}) runtime {runtime_s} (s) ({} total samples)",
        if title.starts_with("RPS") {
            "requests"
        } else {
            "usec"
        },
        b.total_samples
    );
    for (i, r) in b.rows.iter().enumerate() {
        let star = if i == b.star { "* " } else { "  " };
        let _ = writeln!(
            s,
            "\t{star}{:2.1}th: {:<10} ({} samples)",
            r.pct, r.value, r.samples
        );
    }
    let _ = writeln!(s, "\t  min={}, max={}", b.min, b.max);
}

/// The schbench v1.0 summary for `r` (wake-up, request and RPS blocks, average rps).
pub fn format_schbench_v1(r: &SchbenchV1Report) -> String {
    let mut s = String::new();
    format_pct_block(&mut s, "Wakeup Latencies", r.runtime_s, &r.wakeup);
    format_pct_block(&mut s, "Request Latencies", r.runtime_s, &r.request);
    format_pct_block(&mut s, "RPS", r.runtime_s, &r.rps);
    let _ = writeln!(s, "average rps: {:.2}", r.average_rps);
    s
}

static V1_HEAD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(Wakeup Latencies|Request Latencies|RPS) percentiles \((?:usec|requests)\) runtime (\d+) \(s\) \((\d+) total samples\)",
    )
});
static V1_ROW: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*(\*)?\s*([0-9.]+)th: (\d+)\s+\((\d+) samples\)"));
static V1_AVG: LazyLock<Regex> = LazyLock::new(|| re(r"^average rps: ([0-9.]+)"));

/// Reads a schbench v1.0 summary. The wake-up block is required; the request and RPS blocks
/// and the average rps line read as empty/0 when absent.
pub fn parse_schbench_v1(text: &str) -> Result<SchbenchV1Report, NativeError> {
    const T: &str = "schbench v1";
    let empty = || PctBlock {
        total_samples: 0,
        rows: Vec::new(),
        star: 0,
        min: 0,
        max: 0,
    };
    let mut blocks: [Option<PctBlock>; 3] = [None, None, None];
    let mut runtime_s = 0;
    let mut current: Option<usize> = None;
    for (i, l) in text.lines().enumerate() {
        if let Some(c) = V1_HEAD.captures(l) {
            let k = match &c[1] {
                "Wakeup Latencies" => 0,
                "Request Latencies" => 1,
                _ => 2,
            };
            runtime_s = num(T, i + 1, &c, 2)?;
            let mut b = empty();
            b.total_samples = num(T, i + 1, &c, 3)?;
            blocks[k] = Some(b);
            current = Some(k);
            continue;
        }
        let Some(b) = current.and_then(|k| blocks[k].as_mut()) else {
            continue;
        };
        if let Some(c) = V1_ROW.captures(l) {
            if c.get(1).is_some() {
                b.star = b.rows.len();
            }
            b.rows.push(PctRow {
                pct: num(T, i + 1, &c, 2)?,
                value: num(T, i + 1, &c, 3)?,
                samples: num(T, i + 1, &c, 4)?,
            });
        } else if let Some(c) = SO_MINMAX.captures(l) {
            b.min = num(T, i + 1, &c, 1)?;
            b.max = num(T, i + 1, &c, 2)?;
            current = None;
        } else {
            current = None;
        }
    }
    let [w, req, rps] = blocks;
    let wakeup = w.ok_or(NativeError::Missing {
        tool: T,
        what: "Wakeup Latencies percentiles",
    })?;
    let average_rps = match find_line(text, &V1_AVG) {
        Some((line, c)) => num(T, line, &c, 1)?,
        None => 0.0,
    };
    Ok(SchbenchV1Report {
        runtime_s,
        wakeup,
        request: req.unwrap_or_else(empty),
        rps: rps.unwrap_or_else(empty),
        average_rps,
    })
}

/// The `schbench` format (see [`format_schbench_old`], [`parse_schbench_old`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct SchbenchOld;

impl NativeFormat for SchbenchOld {
    const TOOL: &'static str = "schbench";
    type Report = SchbenchOldReport;
    type Parsed = SchbenchOldReport;

    fn format(r: &Self::Report) -> String {
        format_schbench_old(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_schbench_old(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        r.clone()
    }

    fn examples() -> Vec<Self::Report> {
        vec![SchbenchOldReport {
            p50: 33,
            p75: 45,
            p90: 51,
            p95: 4152,
            p99: 14288,
            p99_5: 14288,
            p99_9: 14288,
            min: 0,
            max: 14276,
        }]
    }
}

/// The `schbench v1` format (see [`format_schbench_v1`], [`parse_schbench_v1`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct SchbenchV1;

impl NativeFormat for SchbenchV1 {
    const TOOL: &'static str = "schbench v1";
    type Report = SchbenchV1Report;
    type Parsed = SchbenchV1Report;

    fn format(r: &Self::Report) -> String {
        format_schbench_v1(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_schbench_v1(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        r.clone()
    }

    fn examples() -> Vec<Self::Report> {
        {
            let row = |pct, value, samples| PctRow {
                pct,
                value,
                samples,
            };
            vec![SchbenchV1Report {
                runtime_s: 30,
                wakeup: PctBlock {
                    total_samples: 2631154,
                    rows: vec![
                        row(50.0, 7, 1729909),
                        row(90.0, 7, 0),
                        row(99.0, 8, 71575),
                        row(99.9, 14, 20272),
                    ],
                    star: 2,
                    min: 1,
                    max: 562,
                },
                request: PctBlock {
                    total_samples: 90310,
                    rows: vec![
                        row(50.0, 16784, 45123),
                        row(90.0, 17040, 35120),
                        row(99.0, 17552, 8021),
                        row(99.9, 18080, 812),
                    ],
                    star: 2,
                    min: 16478,
                    max: 23110,
                },
                rps: PctBlock {
                    total_samples: 30,
                    rows: vec![row(20.0, 2996, 3), row(50.0, 3004, 2), row(90.0, 3020, 4)],
                    star: 1,
                    min: 2982,
                    max: 3021,
                },
                average_rps: 3009.10,
            }]
        }
    }
}
