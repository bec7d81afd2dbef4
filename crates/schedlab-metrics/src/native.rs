//! The benchmarks' own output formats: one formatter per benchmark, writing the text the real
//! tool prints, and one parser per real tool, reading the numbers back.
//!
//! Both the simulator's workload models and the real-host harness print their results through
//! these formatters, and the host harness reads the real tools' output through these parsers, so
//! the simulated, re-implemented and real runs of a benchmark share one format that cannot drift.
//! Every `*Report` type also names its metrics ([`HackbenchReport::metrics`] etc.), so the
//! [`crate::BenchResult`] metric names come from one place too.
//!
//! Provenance of each format (see `shared/spec/benchmarks.md`):
//!
//! | tool | formatter / parser | provenance |
//! |---|---|---|
//! | rt-tests `hackbench` | [`format_hackbench`] / [`parse_hackbench`] | source, checked on the Debian 2.4 binary |
//! | `perf bench sched messaging` | [`format_perf_messaging`] / [`parse_perf_messaging`] | source, checked on perf 6.1 |
//! | `perf bench sched pipe` | [`format_perf_pipe`] / [`parse_perf_pipe`] | source, checked on perf 6.1 |
//! | dbench `tbench` | [`format_tbench`] / [`parse_tbench`] | source, checked on the Debian 4.0 binary |
//! | netperf TCP_RR | [`format_netperf_rr`] / [`parse_netperf_rr`] | **recalled**, not checked |
//! | `pgbench` (14+ and older) | [`format_pgbench`] / [`parse_pgbench`] | docs, checked on pgbench 15 |
//! | sysbench OLTP | [`format_sysbench`] / [`parse_sysbench`] | **recalled**, not checked |
//! | schbench (2019-2022) | [`format_schbench_old`] / [`parse_schbench_old`] | source |
//! | schbench v1.0 | [`format_schbench_v1`] / [`parse_schbench_v1`] | source |
//! | AIM7 / re-aim-7 | [`format_aim7`] / [`parse_aim7`] | **recalled** |
//! | kernbench | [`format_kernbench`] / [`parse_kernbench`] | **recalled** |
//! | numa_test | [`format_numa_test`] / [`parse_numa_test`] | **recalled**; the tool is obsolete |
//! | lmbench `bw_pipe`, `bw_unix` | [`format_lmbench_bw`] / [`parse_lmbench_bw`] | source |
//! | lmbench `lat_ctx` | [`format_lat_ctx`] / [`parse_lat_ctx`] | source |
//!
//! Formatters print numbers at the precision of the real tool, so a parse of a formatted report
//! gives back the report's numbers up to that precision (the tests round-trip every format).

use crate::result::{Better, Metric};
use regex::Regex;
use std::fmt::Write as _;
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

fn metric(name: &str, value: f64, unit: &str, better: Better) -> Metric {
    Metric {
        name: name.to_string(),
        value,
        unit: unit.to_string(),
        better,
    }
}

fn re(pattern: &str) -> Regex {
    // The patterns are literals of this module; a bad one is a bug caught by the tests.
    Regex::new(pattern).expect("native.rs regex literal")
}

/// Finds the first line matching `re` and returns its 1-based number and captures.
fn find_line<'t>(text: &'t str, re: &Regex) -> Option<(usize, regex::Captures<'t>)> {
    text.lines()
        .enumerate()
        .find_map(|(i, l)| re.captures(l).map(|c| (i + 1, c)))
}

fn num<T: std::str::FromStr>(
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
fn sec_ms(seconds: f64) -> String {
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

// ---------------------------------------------------------------------------------------------
// hackbench (rt-tests) and perf bench sched messaging

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
static PERF_TOTAL: LazyLock<Regex> = LazyLock::new(|| re(r"^\s*Total time: ([0-9.]+) \[sec\]"));
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

// ---------------------------------------------------------------------------------------------
// perf bench sched pipe

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

// ---------------------------------------------------------------------------------------------
// tbench (dbench 4.0)

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

// ---------------------------------------------------------------------------------------------
// netperf TCP_RR (recalled format)

/// One netperf request/response test (TCP_RR, UDP_RR). The format is recalled, not checked
/// against netperf's source: the classic table ending in a row of socket sizes, request and
/// response sizes, elapsed time and transaction rate.
#[derive(Clone, Debug, PartialEq)]
pub struct NetperfRrReport {
    /// Local send socket size, bytes.
    pub send_socket: u64,
    /// Local receive socket size, bytes.
    pub recv_socket: u64,
    /// Request size, bytes.
    pub request: u64,
    /// Response size, bytes.
    pub response: u64,
    /// Elapsed time, seconds (2 decimals).
    pub elapsed_s: f64,
    /// Transactions per second (2 decimals).
    pub trans_per_sec: f64,
}

impl NetperfRrReport {
    /// `trans_per_sec` (higher is better).
    pub fn metrics(&self) -> Vec<Metric> {
        vec![metric(
            "trans_per_sec",
            self.trans_per_sec,
            "trans/s",
            Better::Higher,
        )]
    }
}

/// netperf TCP_RR output for `r` (recalled layout).
pub fn format_netperf_rr(r: &NetperfRrReport) -> String {
    format!(
        "MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 127.0.0.1 () port 0 AF_INET : first burst 0\n\
         Local /Remote\n\
         Socket Size   Request  Resp.   Elapsed  Trans.\n\
         Send   Recv   Size     Size    Time     Rate\n\
         bytes  Bytes  bytes    bytes   secs.    per sec\n\
         \n\
         {:<6} {:<6} {:<8} {:<7} {:<8.2} {:.2}\n\
         {:<6} {:<6}\n",
        r.send_socket,
        r.recv_socket,
        r.request,
        r.response,
        r.elapsed_s,
        r.trans_per_sec,
        r.send_socket,
        r.recv_socket
    )
}

static NP_ROW: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s*$"));

/// Reads netperf TCP_RR/UDP_RR output: the first six-column result row.
pub fn parse_netperf_rr(text: &str) -> Result<NetperfRrReport, NativeError> {
    const T: &str = "netperf";
    let (line, c) = find_line(text, &NP_ROW).ok_or(NativeError::Missing {
        tool: T,
        what: "result row",
    })?;
    Ok(NetperfRrReport {
        send_socket: num(T, line, &c, 1)?,
        recv_socket: num(T, line, &c, 2)?,
        request: num(T, line, &c, 3)?,
        response: num(T, line, &c, 4)?,
        elapsed_s: num(T, line, &c, 5)?,
        trans_per_sec: num(T, line, &c, 6)?,
    })
}

// ---------------------------------------------------------------------------------------------
// pgbench

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

// ---------------------------------------------------------------------------------------------
// sysbench OLTP (recalled format)

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

// ---------------------------------------------------------------------------------------------
// schbench

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

// ---------------------------------------------------------------------------------------------
// AIM7, kernbench, numa_test (recalled formats)

/// An AIM7/re-aim-7 run's headline (recalled format).
#[derive(Clone, Debug, PartialEq)]
pub struct Aim7Report {
    /// Peak jobs per minute over the user counts (2 decimals).
    pub max_jobs_per_min: f64,
}

impl Aim7Report {
    /// `jobs_per_min` (higher is better).
    pub fn metrics(&self) -> Vec<Metric> {
        vec![metric(
            "jobs_per_min",
            self.max_jobs_per_min,
            "jobs/min",
            Better::Higher,
        )]
    }
}

/// AIM7's headline line for `r` (recalled).
pub fn format_aim7(r: &Aim7Report) -> String {
    format!("Max Jobs per Minute {:.2}\n", r.max_jobs_per_min)
}

static AIM_MAX: LazyLock<Regex> = LazyLock::new(|| re(r"Max Jobs per Minute\s+([0-9.]+)"));

/// Reads AIM7's `Max Jobs per Minute` line.
pub fn parse_aim7(text: &str) -> Result<Aim7Report, NativeError> {
    const T: &str = "aim7";
    let (line, c) = find_line(text, &AIM_MAX).ok_or(NativeError::Missing {
        tool: T,
        what: "Max Jobs per Minute",
    })?;
    Ok(Aim7Report {
        max_jobs_per_min: num(T, line, &c, 1)?,
    })
}

/// One kernbench load's averages (recalled format); each value has its standard deviation.
#[derive(Clone, Debug, PartialEq)]
pub struct KernbenchReport {
    /// The load label, e.g. `Optimal load -j 32`.
    pub load: String,
    /// Elapsed time, seconds, and its standard deviation.
    pub elapsed_s: (f64, f64),
    /// User time, seconds.
    pub user_s: (f64, f64),
    /// System time, seconds.
    pub system_s: (f64, f64),
    /// Percent CPU.
    pub percent_cpu: (f64, f64),
    /// Context switches.
    pub context_switches: (f64, f64),
    /// Sleeps.
    pub sleeps: (f64, f64),
}

impl KernbenchReport {
    /// `elapsed_s` (lower is better), `user_s`, `system_s`.
    pub fn metrics(&self) -> Vec<Metric> {
        vec![
            metric("elapsed_s", self.elapsed_s.0, "s", Better::Lower),
            metric("user_s", self.user_s.0, "s", Better::Lower),
            metric("system_s", self.system_s.0, "s", Better::Lower),
        ]
    }
}

/// kernbench's block for each load in `r` (recalled).
pub fn format_kernbench(r: &[KernbenchReport]) -> String {
    let mut s = String::new();
    for k in r {
        let _ = writeln!(s, "Average {} Run (std deviation):", k.load);
        let rows = [
            ("Elapsed Time", k.elapsed_s, 2),
            ("User Time", k.user_s, 2),
            ("System Time", k.system_s, 2),
            ("Percent CPU", k.percent_cpu, 0),
            ("Context Switches", k.context_switches, 0),
            ("Sleeps", k.sleeps, 0),
        ];
        for (name, (v, sd), prec) in rows {
            let _ = writeln!(s, "{name} {v:.prec$} ({sd:.2})");
        }
        s.push('\n');
    }
    s
}

static KB_HEAD: LazyLock<Regex> = LazyLock::new(|| re(r"^Average (.+?) Run \(std deviation\):"));
static KB_ROW: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(Elapsed Time|User Time|System Time|Percent CPU|Context Switches|Sleeps) ([0-9.]+) \(([0-9.]+)\)",
    )
});

/// Reads every `Average ... Run (std deviation):` block of kernbench output (at least one).
pub fn parse_kernbench(text: &str) -> Result<Vec<KernbenchReport>, NativeError> {
    const T: &str = "kernbench";
    let mut out: Vec<KernbenchReport> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if let Some(c) = KB_HEAD.captures(l) {
            out.push(KernbenchReport {
                load: c[1].to_string(),
                elapsed_s: (0.0, 0.0),
                user_s: (0.0, 0.0),
                system_s: (0.0, 0.0),
                percent_cpu: (0.0, 0.0),
                context_switches: (0.0, 0.0),
                sleeps: (0.0, 0.0),
            });
        } else if let (Some(c), Some(k)) = (KB_ROW.captures(l), out.last_mut()) {
            let v = (num(T, i + 1, &c, 2)?, num(T, i + 1, &c, 3)?);
            match &c[1] {
                "Elapsed Time" => k.elapsed_s = v,
                "User Time" => k.user_s = v,
                "System Time" => k.system_s = v,
                "Percent CPU" => k.percent_cpu = v,
                "Context Switches" => k.context_switches = v,
                _ => k.sleeps = v,
            }
        }
    }
    if out.is_empty() {
        return Err(NativeError::Missing {
            tool: T,
            what: "Average ... Run",
        });
    }
    Ok(out)
}

/// numa_test's summary (recalled from 2002-2003 LKML posts; the tool is obsolete).
#[derive(Clone, Debug, PartialEq)]
pub struct NumaTestReport {
    /// Number of tasks.
    pub tasks: u64,
    /// Average user time per task, seconds.
    pub average_user_s: f64,
    /// Elapsed time, seconds.
    pub elapsed_s: f64,
    /// Total user time, seconds.
    pub total_user_s: f64,
    /// Total system time, seconds.
    pub total_sys_s: f64,
}

impl NumaTestReport {
    /// `elapsed_s` (lower is better), `total_user_s`, `total_sys_s`.
    pub fn metrics(&self) -> Vec<Metric> {
        vec![
            metric("elapsed_s", self.elapsed_s, "s", Better::Lower),
            metric("total_user_s", self.total_user_s, "s", Better::Lower),
            metric("total_sys_s", self.total_sys_s, "s", Better::Lower),
        ]
    }
}

/// numa_test's summary lines for `r` (recalled layout).
pub fn format_numa_test(r: &NumaTestReport) -> String {
    format!(
        "{} tasks\nAverageUserTime {:.2} seconds\nElapsedTime     {:.2}\nTotalUserTime   {:.2}\nTotalSysTime    {:.2}\n",
        r.tasks, r.average_user_s, r.elapsed_s, r.total_user_s, r.total_sys_s
    )
}

static NT_TASKS: LazyLock<Regex> = LazyLock::new(|| re(r"^(\d+) tasks"));
static NT_ROW: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(AverageUserTime|ElapsedTime|TotalUserTime|TotalSysTime)\s+([0-9.]+)"));

/// Reads numa_test's summary; `ElapsedTime` is required.
pub fn parse_numa_test(text: &str) -> Result<NumaTestReport, NativeError> {
    const T: &str = "numa_test";
    let mut r = NumaTestReport {
        tasks: 0,
        average_user_s: 0.0,
        elapsed_s: 0.0,
        total_user_s: 0.0,
        total_sys_s: 0.0,
    };
    let mut elapsed = false;
    for (i, l) in text.lines().enumerate() {
        if let Some(c) = NT_TASKS.captures(l) {
            r.tasks = num(T, i + 1, &c, 1)?;
        } else if let Some(c) = NT_ROW.captures(l) {
            let v = num(T, i + 1, &c, 2)?;
            match &c[1] {
                "AverageUserTime" => r.average_user_s = v,
                "ElapsedTime" => {
                    elapsed = true;
                    r.elapsed_s = v;
                }
                "TotalUserTime" => r.total_user_s = v,
                _ => r.total_sys_s = v,
            }
        }
    }
    if !elapsed {
        return Err(NativeError::Missing {
            tool: T,
            what: "ElapsedTime",
        });
    }
    Ok(r)
}

// ---------------------------------------------------------------------------------------------
// lmbench

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
