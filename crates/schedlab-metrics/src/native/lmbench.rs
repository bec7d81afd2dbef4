//! lmbench 3: `bw_pipe` / `bw_unix` bandwidth lines and the `lat_ctx` table. From the lmbench
//! source.

use super::{NativeError, NativeFormat, find_line, metric, num, re};
use crate::result::{Better, Metric};
use regex::Regex;
use std::fmt::Write as _;
use std::sync::LazyLock;

/// Which lmbench bandwidth test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LmbenchBwKind {
    /// `bw_pipe`.
    Pipe,
    /// `bw_unix`.
    Unix,
}

/// One lmbench `bw_pipe` / `bw_unix` result.
#[derive(Clone, Debug, PartialEq)]
pub struct LmbenchBwReport {
    /// Which test.
    pub kind: LmbenchBwKind,
    /// Bandwidth, MB/s (2 decimals).
    pub mb_per_sec: f64,
}

impl LmbenchBwReport {
    /// `bandwidth_mb_s` (higher is better).
    pub fn metrics(&self) -> Vec<Metric> {
        vec![metric(
            "bandwidth_mb_s",
            self.mb_per_sec,
            "MB/s",
            Better::Higher,
        )]
    }
}

/// `Pipe bandwidth: X MB/sec` or `AF_UNIX sock stream bandwidth: X MB/sec`.
pub fn format_lmbench_bw(r: &LmbenchBwReport) -> String {
    let what = match r.kind {
        LmbenchBwKind::Pipe => "Pipe",
        LmbenchBwKind::Unix => "AF_UNIX sock stream",
    };
    format!("{what} bandwidth: {:.2} MB/sec\n", r.mb_per_sec)
}

static LM_BW: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(Pipe|AF_UNIX sock stream) bandwidth: ([0-9.]+) MB/sec"));

/// Reads `bw_pipe` or `bw_unix` output.
pub fn parse_lmbench_bw(text: &str) -> Result<LmbenchBwReport, NativeError> {
    const T: &str = "lmbench bw";
    let (line, c) = find_line(text, &LM_BW).ok_or(NativeError::Missing {
        tool: T,
        what: "bandwidth:",
    })?;
    Ok(LmbenchBwReport {
        kind: if &c[1] == "Pipe" {
            LmbenchBwKind::Pipe
        } else {
            LmbenchBwKind::Unix
        },
        mb_per_sec: num(T, line, &c, 2)?,
    })
}

/// One lmbench `lat_ctx` result: per ring size, microseconds per context switch.
#[derive(Clone, Debug, PartialEq)]
pub struct LatCtxReport {
    /// Per-process working set summed between switches (`-s`), KiB.
    pub size_kb: u64,
    /// Measured pipe-plus-sum overhead that was subtracted, µs (2 decimals).
    pub overhead_us: f64,
    /// `(processes in the ring, µs per switch)`, 2 decimals.
    pub points: Vec<(u64, f64)>,
}

impl LatCtxReport {
    /// `ctx_us_<N>` for each ring size N (lower is better), in printed order.
    pub fn metrics(&self) -> Vec<Metric> {
        self.points
            .iter()
            .map(|(n, us)| metric(&format!("ctx_us_{n}"), *us, "us", Better::Lower))
            .collect()
    }
}

/// `lat_ctx` output for `r`: a blank line, `"size=Nk ovr=X`, then `N time` lines.
pub fn format_lat_ctx(r: &LatCtxReport) -> String {
    let mut s = format!("\n\"size={}k ovr={:.2}\n", r.size_kb, r.overhead_us);
    for (n, us) in &r.points {
        let _ = writeln!(s, "{n} {us:.2}");
    }
    s
}

static LC_HEAD: LazyLock<Regex> = LazyLock::new(|| re(r#"^"size=(\d+)k ovr=([0-9.]+)"#));
static LC_ROW: LazyLock<Regex> = LazyLock::new(|| re(r"^(\d+) ([0-9.]+)\s*$"));

/// Reads `lat_ctx` output (the first `"size=` block).
pub fn parse_lat_ctx(text: &str) -> Result<LatCtxReport, NativeError> {
    const T: &str = "lat_ctx";
    let (line, c) = find_line(text, &LC_HEAD).ok_or(NativeError::Missing {
        tool: T,
        what: "\"size=",
    })?;
    let mut r = LatCtxReport {
        size_kb: num(T, line, &c, 1)?,
        overhead_us: num(T, line, &c, 2)?,
        points: Vec::new(),
    };
    for (i, l) in text.lines().enumerate().skip(line) {
        match LC_ROW.captures(l) {
            Some(c) => r
                .points
                .push((num(T, i + 1, &c, 1)?, num(T, i + 1, &c, 2)?)),
            None => break,
        }
    }
    Ok(r)
}

/// The `lmbench bw` format (see [`format_lmbench_bw`], [`parse_lmbench_bw`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct LmbenchBw;

impl NativeFormat for LmbenchBw {
    const TOOL: &'static str = "lmbench bw";
    type Report = LmbenchBwReport;
    type Parsed = LmbenchBwReport;

    fn format(r: &Self::Report) -> String {
        format_lmbench_bw(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_lmbench_bw(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        r.clone()
    }

    fn examples() -> Vec<Self::Report> {
        [LmbenchBwKind::Pipe, LmbenchBwKind::Unix]
            .map(|kind| LmbenchBwReport {
                kind,
                mb_per_sec: 4321.5,
            })
            .to_vec()
    }
}

/// The `lat_ctx` format (see [`format_lat_ctx`], [`parse_lat_ctx`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct LatCtx;

impl NativeFormat for LatCtx {
    const TOOL: &'static str = "lat_ctx";
    type Report = LatCtxReport;
    type Parsed = LatCtxReport;

    fn format(r: &Self::Report) -> String {
        format_lat_ctx(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_lat_ctx(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        r.clone()
    }

    fn examples() -> Vec<Self::Report> {
        vec![LatCtxReport {
            size_kb: 16,
            overhead_us: 1.23,
            points: vec![(2, 3.45), (4, 4.1), (8, 4.87)],
        }]
    }
}
