//! `perf bench sched pipe`: the header, total time and the usecs/op and ops/sec lines. From the
//! perf source, checked on perf 6.1.

use super::{NativeError, NativeFormat, PERF_TOTAL, find_line, metric, num, printed, re, sec_ms};
use crate::result::{Better, Metric};
use regex::Regex;
use std::sync::LazyLock;

/// One `perf bench sched pipe` run.
#[derive(Clone, Debug, PartialEq)]
pub struct PipeReport {
    /// Round trips (`-l`).
    pub loops: u64,
    /// Threads (`-T`) rather than processes.
    pub threads: bool,
    /// Total time, seconds.
    pub total_s: f64,
}

impl PipeReport {
    /// Microseconds per round trip, as perf computes it.
    pub fn usecs_per_op(&self) -> f64 {
        self.total_s * 1e6 / self.loops.max(1) as f64
    }

    /// Round trips per second, truncated to an integer as perf prints it.
    pub fn ops_per_sec(&self) -> f64 {
        if self.total_s > 0.0 {
            (self.loops as f64 / self.total_s).floor()
        } else {
            0.0
        }
    }

    /// `usecs_per_op` (lower is better), then `ops_per_sec`.
    pub fn metrics(&self) -> Vec<Metric> {
        vec![
            metric("usecs_per_op", self.usecs_per_op(), "us", Better::Lower),
            metric("ops_per_sec", self.ops_per_sec(), "ops/s", Better::Higher),
        ]
    }
}

/// The `perf bench sched pipe` output for `r`.
pub fn format_perf_pipe(r: &PipeReport) -> String {
    format!(
        "# Running 'sched/pipe' benchmark:\n\
         # Executed {} pipe operations between two {}\n\
         \n     Total time: {} [sec]\n\
         \n {:14.6} usecs/op\n {:14} ops/sec\n",
        r.loops,
        if r.threads { "threads" } else { "processes" },
        sec_ms(r.total_s),
        r.usecs_per_op(),
        r.ops_per_sec() as u64
    )
}

/// What `perf bench sched pipe` output says; only `usecs_per_op` is always present.
#[derive(Clone, Debug, PartialEq)]
pub struct PipeOutput {
    /// Round trips, from the `# Executed` line.
    pub loops: Option<u64>,
    /// Whether the two sides were threads, from the `# Executed` line.
    pub threads: Option<bool>,
    /// Total time, seconds.
    pub total_s: Option<f64>,
    /// Microseconds per round trip (the headline).
    pub usecs_per_op: f64,
    /// Round trips per second.
    pub ops_per_sec: Option<f64>,
}

impl PipeOutput {
    /// Same metric names as [`PipeReport::metrics`]; `ops_per_sec` is derived if not printed.
    pub fn metrics(&self) -> Vec<Metric> {
        let ops = self.ops_per_sec.unwrap_or(if self.usecs_per_op > 0.0 {
            1e6 / self.usecs_per_op
        } else {
            0.0
        });
        vec![
            metric("usecs_per_op", self.usecs_per_op, "us", Better::Lower),
            metric("ops_per_sec", ops, "ops/s", Better::Higher),
        ]
    }
}

static PIPE_EXEC: LazyLock<Regex> =
    LazyLock::new(|| re(r"^# Executed (\d+) pipe operations between two (processes|threads)"));
static PIPE_USECS: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*([0-9.]+) usecs/op"));
static PIPE_OPS: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*([0-9]+) ops/sec"));

/// Reads `perf bench sched pipe` output.
pub fn parse_perf_pipe(text: &str) -> Result<PipeOutput, NativeError> {
    const T: &str = "perf bench sched pipe";
    let (line, c) = find_line(text, &PIPE_USECS).ok_or(NativeError::Missing {
        tool: T,
        what: "usecs/op",
    })?;
    let mut out = PipeOutput {
        loops: None,
        threads: None,
        total_s: None,
        usecs_per_op: num(T, line, &c, 1)?,
        ops_per_sec: None,
    };
    if let Some((line, c)) = find_line(text, &PIPE_EXEC) {
        out.loops = Some(num(T, line, &c, 1)?);
        out.threads = Some(&c[2] == "threads");
    }
    if let Some((line, c)) = find_line(text, &PERF_TOTAL) {
        out.total_s = Some(num(T, line, &c, 1)?);
    }
    if let Some((line, c)) = find_line(text, &PIPE_OPS) {
        out.ops_per_sec = Some(num(T, line, &c, 1)?);
    }
    Ok(out)
}

/// The `perf bench sched pipe` format (see [`format_perf_pipe`], [`parse_perf_pipe`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct PerfPipe;

impl NativeFormat for PerfPipe {
    const TOOL: &'static str = "perf bench sched pipe";
    type Report = PipeReport;
    type Parsed = PipeOutput;

    fn format(r: &Self::Report) -> String {
        format_perf_pipe(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_perf_pipe(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        PipeOutput {
            loops: Some(r.loops),
            threads: Some(r.threads),
            total_s: Some(printed(&sec_ms(r.total_s))),
            usecs_per_op: printed(&format!("{:.6}", r.usecs_per_op())),
            ops_per_sec: Some(r.ops_per_sec()),
        }
    }

    fn examples() -> Vec<Self::Report> {
        vec![
            PipeReport {
                loops: 1_000_000,
                threads: false,
                total_s: 8.813_985,
            },
            PipeReport {
                loops: 20000,
                threads: true,
                total_s: 1.740103,
            },
        ]
    }
}
