//! TOML workload files (`-w file:PATH`): tasks, groups, channels, barriers and programs
//! written with the engine's primitives (compute, send/recv on channels, futexes, sleeps and
//! timers, locks, fork/exit/wait, barriers). The format is documented with
//! examples in `docs/workloads/file-format.md` and `workloads/*.toml`; a ping-pong:
//!
//! ```toml
//! name = "pingpong"
//! [[channel]]
//! name = "ping"
//! kind = "pipe"
//! [[channel]]
//! name = "pong"
//! kind = "pipe"
//! [[task]]
//! name = "a"
//! program = [ { op = "loop", count = 1000, body = [
//!     { op = "send", channel = "ping", bytes = 4 },
//!     { op = "recv", channel = "pong" } ] } ]
//! [[task]]
//! name = "b"
//! program = [ { op = "loop", count = 1000, body = [
//!     { op = "recv", channel = "ping" },
//!     { op = "send", channel = "pong", bytes = 4 } ] } ]
//! ```
//!
//! Unknown keys are errors; syntax and type errors carry the line and column (from the
//! `toml` parser), and so do references to undeclared channels, barriers and tasks.

use crate::bounds::{MAX_BYTES, MAX_TIME_NS};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::ir::{Doc, IrOp, IrTask, Name};
use crate::models::Built;
use crate::spec::Args;
use crate::spec::parse_bytes;
use schedlab_engine::time::parse_duration;
use schedlab_engine::{ChannelKind, Dist};
use schedlab_topo::Topology;
use schedlab_vocab::UnitError;
use schedlab_vocab::suggest::{closest, did_you_mean};
use serde::Deserialize;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDecl {
    name: Option<String>,
    description: Option<String>,
    duration: Option<Spanned<String>>,
    headline: Option<String>,
    #[serde(default)]
    channel: Vec<ChannelDecl>,
    #[serde(default)]
    barrier: Vec<BarrierDecl>,
    #[serde(default)]
    task: Vec<TaskDecl>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChannelDecl {
    name: Spanned<String>,
    kind: Spanned<String>,
    #[serde(default = "one")]
    count: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BarrierDecl {
    name: Spanned<String>,
    parties: Option<u32>,
}

fn one() -> u64 {
    1
}
fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskDecl {
    name: Spanned<String>,
    #[serde(default = "one")]
    count: u64,
    #[serde(default = "yes")]
    start: bool,
    #[serde(default)]
    nice: i32,
    cpus: Option<Spanned<toml::Value>>,
    mm: Option<Spanned<toml::Value>>,
    ws_kb: Option<u64>,
    #[serde(default)]
    mem_intensity: f64,
    node: Option<usize>,
    slice: Option<Spanned<String>>,
    delay: Option<Spanned<String>>,
    #[serde(rename = "loop")]
    repeat: Option<Spanned<toml::Value>>,
    program: Option<Vec<OpDecl>>,
    phases: Option<Vec<PhaseDecl>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PhaseDecl {
    count: Option<Spanned<toml::Value>>,
    program: Vec<OpDecl>,
}

/// One operation; which fields are allowed depends on `op` (checked after parsing so that
/// every field keeps its location).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpDecl {
    op: Spanned<String>,
    channel: Option<Spanned<String>>,
    futex: Option<Spanned<String>>,
    mutex: Option<Spanned<String>>,
    barrier: Option<Spanned<String>>,
    list: Option<Spanned<String>>,
    task: Option<Spanned<String>>,
    counter: Option<Spanned<String>>,
    hist: Option<Spanned<String>>,
    slot: Option<Spanned<toml::Value>>,
    since: Option<Spanned<toml::Value>>,
    bytes: Option<Spanned<toml::Value>>,
    n: Option<Spanned<toml::Value>>,
    count: Option<Spanned<toml::Value>>,
    amount: Option<u64>,
    time: Option<Spanned<String>>,
    dist: Option<Spanned<String>>,
    mean: Option<Spanned<String>>,
    min: Option<Spanned<String>>,
    max: Option<Spanned<String>>,
    median: Option<Spanned<String>>,
    stddev: Option<Spanned<String>>,
    sigma: Option<f64>,
    values: Option<Vec<String>>,
    weights: Option<Vec<u32>>,
    period: Option<Spanned<String>>,
    spin: Option<Spanned<String>>,
    per_cpu: Option<bool>,
    body: Option<Vec<OpDecl>>,
}

/// The ops and the fields each takes (besides `op`).
const OPS: &[(&str, &[&str])] = &[
    (
        "compute",
        &[
            "time", "dist", "mean", "min", "max", "median", "stddev", "sigma", "values", "weights",
        ],
    ),
    (
        "sleep",
        &[
            "time", "dist", "mean", "min", "max", "median", "stddev", "sigma", "values", "weights",
        ],
    ),
    ("send", &["channel", "bytes"]),
    ("recv", &["channel"]),
    ("futex_wait", &["futex"]),
    ("futex_wake", &["futex", "n"]),
    ("list_add", &["list"]),
    ("wake_list", &["list"]),
    ("wait_self", &[]),
    ("timer", &["period"]),
    ("lock", &["mutex", "spin", "per_cpu"]),
    ("unlock", &["mutex", "per_cpu"]),
    ("fork", &["task", "count"]),
    ("wait_children", &[]),
    ("barrier", &["barrier"]),
    ("yield", &[]),
    ("loop", &["count", "body"]),
    ("stamp", &["slot"]),
    ("record", &["hist", "since"]),
    ("count", &["counter", "amount"]),
    ("count_recv", &["counter"]),
    ("exit", &[]),
];

impl OpDecl {
    fn present(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut add = |name: &'static str, is: bool| {
            if is {
                v.push(name);
            }
        };
        add("channel", self.channel.is_some());
        add("futex", self.futex.is_some());
        add("mutex", self.mutex.is_some());
        add("barrier", self.barrier.is_some());
        add("list", self.list.is_some());
        add("task", self.task.is_some());
        add("counter", self.counter.is_some());
        add("hist", self.hist.is_some());
        add("slot", self.slot.is_some());
        add("since", self.since.is_some());
        add("bytes", self.bytes.is_some());
        add("n", self.n.is_some());
        add("count", self.count.is_some());
        add("amount", self.amount.is_some());
        add("time", self.time.is_some());
        add("dist", self.dist.is_some());
        add("mean", self.mean.is_some());
        add("min", self.min.is_some());
        add("max", self.max.is_some());
        add("median", self.median.is_some());
        add("stddev", self.stddev.is_some());
        add("sigma", self.sigma.is_some());
        add("values", self.values.is_some());
        add("weights", self.weights.is_some());
        add("period", self.period.is_some());
        add("spin", self.spin.is_some());
        add("per_cpu", self.per_cpu.is_some());
        add("body", self.body.is_some());
        v
    }
}

/// Converts byte spans into `line L, column C` for messages.
struct Src<'a> {
    text: &'a str,
    path: &'a str,
}

impl Src<'_> {
    fn at(&self, span: std::ops::Range<usize>) -> String {
        let upto = &self.text[..span.start.min(self.text.len())];
        let line = upto.matches('\n').count() + 1;
        let col = upto
            .rfind('\n')
            .map_or(upto.chars().count(), |p| upto[p + 1..].chars().count())
            + 1;
        format!("line {line}, column {col}")
    }
    fn err(&self, span: std::ops::Range<usize>, msg: impl std::fmt::Display) -> WorkloadError {
        WorkloadError::File {
            path: self.path.into(),
            msg: format!("{}: {msg}", self.at(span)),
        }
    }
    fn name(&self, s: &Spanned<String>) -> Name {
        Name::new(s.get_ref().clone(), Some(self.at(s.span())))
    }
    /// A duration of at most [`MAX_TIME_NS`] (one hour: longer ones overflow a run's clock
    /// or never end).
    fn dur(&self, s: &Spanned<String>) -> Result<u64, WorkloadError> {
        bounded_dur(s.get_ref()).map_err(|m| self.err(s.span(), m))
    }
}

/// Reads a workload file.
/// The catalog entry of `file`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "file",
    mirrors: "a schedlab workload file (TOML), see docs/workloads/file-format.md",
    follows: "schedlab's own TOML workload format (docs/workloads/file-format.md)",
    reconstructed: "nothing: the file is the workload",
    about: "Tasks, channels, barriers and programs written in TOML: `-w file:PATH`.",
    params: &[param("path", "", "path", "the TOML file")],
    build: build_spec,
};

/// Builds `file:PATH` through [`build`] (the path is the one parameter).
fn build_spec(a: &mut Args, topo: &Topology) -> Result<Built, WorkloadError> {
    // `text` reads `auto` as "not given"; a path is never derived, so keep it verbatim.
    let path = a.text("path").unwrap_or_else(|| "auto".into());
    a.resolve("path", &path);
    build(&path, topo)
}

pub(crate) fn build(path: &str, topo: &Topology) -> Result<Built, WorkloadError> {
    let text = std::fs::read(path)
        .and_then(schedlab_vocab::text::decode_io)
        .map_err(|e| WorkloadError::File {
            path: path.into(),
            msg: format!("cannot read: {e}"),
        })?;
    let doc = parse(&text, path)?;
    crate::ir::lower(&doc, topo)
}

/// Parses TOML text into the common workload form (`path` is for messages).
pub(crate) fn parse(text: &str, path: &str) -> Result<Doc, WorkloadError> {
    let decl: FileDecl = toml::from_str(text).map_err(|e| WorkloadError::File {
        path: path.into(),
        msg: e.to_string().trim_end().to_string(),
    })?;
    let src = Src { text, path };
    let _ = &decl.description;
    let stem = std::path::Path::new(path)
        .file_stem()
        .map_or("workload".to_string(), |s| s.to_string_lossy().into_owned());
    let mut doc = Doc {
        name: decl.name.clone().unwrap_or(stem),
        source: path.to_string(),
        duration_ns: decl
            .duration
            .as_ref()
            .map(|d| positive_dur(&src, d))
            .transpose()?,
        headline: decl.headline.clone(),
        ..Default::default()
    };
    if decl.task.is_empty() {
        return Err(WorkloadError::File {
            path: path.into(),
            msg: "no [[task]] declared".into(),
        });
    }
    for c in &decl.channel {
        let kind = match c.kind.get_ref().as_str() {
            "pipe" => ChannelKind::pipe(),
            "unix" | "socket" => ChannelKind::unix(),
            "tcp" | "inet" => ChannelKind::tcp(),
            "unix-dgram" | "dgram" => ChannelKind::unix_dgram(),
            "udp" => ChannelKind::Udp,
            other => {
                return Err(src.err(
                    c.kind.span(),
                    format!(
                        "unknown channel kind '{other}' (expected pipe, unix, unix-dgram, tcp \
                         or udp)"
                    ),
                ));
            }
        };
        doc.channels.push((
            c.name.get_ref().clone(),
            kind,
            c.count,
            Some(src.at(c.name.span())),
        ));
    }
    for b in &decl.barrier {
        doc.barriers.push((
            b.name.get_ref().clone(),
            b.parties,
            Some(src.at(b.name.span())),
        ));
    }
    for t in &decl.task {
        let at = Some(src.at(t.name.span()));
        let mut program = match (&t.program, &t.phases) {
            (Some(_), Some(_)) => {
                return Err(src.err(
                    t.name.span(),
                    format!(
                        "task '{}': give either program or phases, not both",
                        t.name.get_ref()
                    ),
                ));
            }
            (None, None) => {
                return Err(src.err(
                    t.name.span(),
                    format!("task '{}' has no program", t.name.get_ref()),
                ));
            }
            (Some(p), None) => ops(&src, p)?,
            (None, Some(phases)) => {
                let mut v = Vec::new();
                for ph in phases {
                    let n = match &ph.count {
                        Some(c) => loop_count(&src, c)?,
                        None => 1,
                    };
                    v.push(IrOp::Loop(n, ops(&src, &ph.program)?));
                }
                v
            }
        };
        if let Some(r) = &t.repeat {
            program = vec![IrOp::Loop(loop_count(&src, r)?, program)];
        }
        if let Some(d) = &t.delay {
            program.insert(0, IrOp::Sleep(Dist::Const(src.dur(d)?)));
        }
        let cpus = match &t.cpus {
            None => None,
            Some(v) => Some(match v.get_ref() {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Array(a) => {
                    let mut parts = Vec::new();
                    for x in a {
                        match x.as_integer() {
                            Some(i) if i >= 0 => parts.push(i.to_string()),
                            _ => return Err(src.err(v.span(), "cpus must be a cpulist string (\"0-3,8\") or an array of CPU numbers")),
                        }
                    }
                    parts.join(",")
                }
                _ => {
                    return Err(src.err(
                        v.span(),
                        "cpus must be a cpulist string (\"0-3,8\") or an array of CPU numbers",
                    ));
                }
            }),
        };
        let mm = match &t.mm {
            None => None,
            Some(v) => Some(match v.get_ref() {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                _ => {
                    return Err(src.err(
                        v.span(),
                        "mm must be a name or a number shared by the threads of one process",
                    ));
                }
            }),
        };
        if let Some(kb) = t.ws_kb
            && kb > MAX_BYTES / 1024
        {
            return Err(src.err(
                t.name.span(),
                format!(
                    "task '{}': ws_kb = {kb} is more than the {} KiB (1 TiB) a working set may be",
                    t.name.get_ref(),
                    MAX_BYTES / 1024
                ),
            ));
        }
        doc.tasks.push(IrTask {
            name: t.name.get_ref().clone(),
            at,
            count: t.count,
            start: t.start,
            nice: t.nice,
            cpus,
            mm,
            ws_bytes: t.ws_kb.map(|k| k * 1024),
            mem_intensity: t.mem_intensity,
            node: t.node,
            slice_ns: t.slice.as_ref().map(|s| src.dur(s)).transpose()?,
            program,
        });
    }
    let mut names: Vec<&str> = doc.tasks.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(WorkloadError::File {
            path: path.into(),
            msg: format!("task '{}' declared twice", w[0]),
        });
    }
    Ok(doc)
}

/// Why a duration in a workload file is refused.
#[derive(Debug, thiserror::Error)]
enum DurationError {
    /// Not a duration with a unit.
    #[error(transparent)]
    Unit(#[from] UnitError),
    /// Longer than [`MAX_TIME_NS`].
    #[error(
        "'{text}' is longer than the {} h a workload may name",
        MAX_TIME_NS / 3_600_000_000_000
    )]
    TooLong {
        /// The duration as written.
        text: String,
    },
}

/// Parses a duration of at most [`MAX_TIME_NS`].
fn bounded_dur(text: &str) -> Result<u64, DurationError> {
    let ns = parse_duration(text)?;
    if ns > MAX_TIME_NS {
        return Err(DurationError::TooLong { text: text.into() });
    }
    Ok(ns)
}

/// The workload's `duration`: a zero-length run measures nothing.
fn positive_dur(src: &Src<'_>, d: &Spanned<String>) -> Result<u64, WorkloadError> {
    match src.dur(d)? {
        0 => Err(src.err(
            d.span(),
            "duration must be past zero (a zero-length run measures nothing); leave it out to run until every task exits",
        )),
        ns => Ok(ns),
    }
}

fn loop_count(src: &Src<'_>, v: &Spanned<toml::Value>) -> Result<u64, WorkloadError> {
    match v.get_ref() {
        toml::Value::Integer(i) if *i >= 0 => Ok(*i as u64),
        toml::Value::String(s) if s == "forever" => Ok(u64::MAX),
        _ => Err(src.err(
            v.span(),
            "count must be a non-negative whole number or \"forever\"",
        )),
    }
}

fn ops(src: &Src<'_>, decls: &[OpDecl]) -> Result<Vec<IrOp>, WorkloadError> {
    decls.iter().map(|d| op(src, d)).collect()
}

fn op(src: &Src<'_>, d: &OpDecl) -> Result<IrOp, WorkloadError> {
    let kind = d.op.get_ref().as_str();
    let Some((_, allowed)) = OPS.iter().find(|(n, _)| *n == kind) else {
        let hint = did_you_mean(closest(kind, OPS.iter().map(|(n, _)| *n)).as_deref());
        let all: Vec<&str> = OPS.iter().map(|(n, _)| *n).collect();
        return Err(src.err(
            d.op.span(),
            format!("unknown op '{kind}'{hint}; ops: {}", all.join(", ")),
        ));
    };
    if let Some(bad) = d.present().into_iter().find(|f| !allowed.contains(f)) {
        let takes = if allowed.is_empty() {
            "no fields".to_string()
        } else {
            allowed.join(", ")
        };
        return Err(src.err(
            d.op.span(),
            format!("op '{kind}' does not take '{bad}' (it takes: {takes})"),
        ));
    }
    let need = |f: &Option<Spanned<String>>, field: &str| -> Result<Name, WorkloadError> {
        f.as_ref()
            .map(|s| src.name(s))
            .ok_or_else(|| src.err(d.op.span(), format!("op '{kind}' needs '{field}'")))
    };
    let slot_name =
        |v: &Option<Spanned<toml::Value>>, field: &str| -> Result<Name, WorkloadError> {
            let v = v
                .as_ref()
                .ok_or_else(|| src.err(d.op.span(), format!("op '{kind}' needs '{field}'")))?;
            let text = match v.get_ref() {
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::String(s) => s.clone(),
                _ => {
                    return Err(src.err(
                        v.span(),
                        format!("{field} must be a task slot 0..=6 or the name of a global slot"),
                    ));
                }
            };
            Ok(Name::new(text, Some(src.at(v.span()))))
        };
    Ok(match kind {
        "compute" => IrOp::Compute(dist(src, d)?),
        "sleep" => IrOp::Sleep(dist(src, d)?),
        "send" => {
            let bytes = match &d.bytes {
                None => Dist::Const(1),
                Some(b) => {
                    let n = match b.get_ref() {
                        toml::Value::Integer(i) if *i >= 0 => *i as u64,
                        toml::Value::String(s) => {
                            parse_bytes(s).map_err(|m| src.err(b.span(), m))?
                        }
                        _ => {
                            return Err(
                                src.err(b.span(), "bytes must be a size: 100, \"64K\", \"1M\"")
                            );
                        }
                    };
                    if n > MAX_BYTES {
                        return Err(src.err(b.span(), "a message may be at most 1 TiB"));
                    }
                    Dist::Const(n)
                }
            };
            IrOp::Send {
                ch: need(&d.channel, "channel")?,
                bytes,
            }
        }
        "recv" => IrOp::Recv(need(&d.channel, "channel")?),
        "futex_wait" => IrOp::FutexWait(need(&d.futex, "futex")?),
        "futex_wake" => {
            let n = match &d.n {
                None => 1,
                Some(v) => match v.get_ref() {
                    toml::Value::Integer(i) if *i >= 1 => (*i).min(u32::MAX as i64 - 1) as u32,
                    toml::Value::String(s) if s == "all" => schedlab_engine::task::WAKE_ALL,
                    _ => return Err(src.err(v.span(), "n must be a positive number or \"all\"")),
                },
            };
            IrOp::FutexWake(need(&d.futex, "futex")?, n)
        }
        "list_add" => IrOp::ListAdd(need(&d.list, "list")?),
        "wake_list" => IrOp::WakeList(need(&d.list, "list")?),
        "wait_self" => IrOp::WaitSelf,
        "timer" => {
            let p = d
                .period
                .as_ref()
                .ok_or_else(|| src.err(d.op.span(), "op 'timer' needs 'period'"))?;
            let ns = src.dur(p)?;
            if ns == 0 {
                return Err(src.err(p.span(), "a timer period must be positive"));
            }
            IrOp::Timer(ns)
        }
        "lock" => {
            let spin = match &d.spin {
                None => 0,
                Some(s) if s.get_ref() == "forever" => u64::MAX,
                Some(s) => src.dur(s)?,
            };
            IrOp::Lock {
                m: need(&d.mutex, "mutex")?,
                per_cpu: d.per_cpu.unwrap_or(false),
                spin,
            }
        }
        "unlock" => IrOp::Unlock {
            m: need(&d.mutex, "mutex")?,
            per_cpu: d.per_cpu.unwrap_or(false),
        },
        "fork" => {
            let t = need(&d.task, "task")?;
            match &d.count {
                None => IrOp::Fork(t),
                Some(c) => IrOp::Loop(loop_count(src, c)?, vec![IrOp::Fork(t)]),
            }
        }
        "wait_children" => IrOp::WaitChildren,
        "barrier" => IrOp::Barrier(need(&d.barrier, "barrier")?),
        "yield" => IrOp::Yield,
        "loop" => {
            let c = d.count.as_ref().ok_or_else(|| {
                src.err(
                    d.op.span(),
                    "op 'loop' needs 'count' (a number or \"forever\")",
                )
            })?;
            let body = d
                .body
                .as_ref()
                .ok_or_else(|| src.err(d.op.span(), "op 'loop' needs 'body'"))?;
            IrOp::Loop(loop_count(src, c)?, ops(src, body)?)
        }
        "stamp" => IrOp::Stamp(slot_name(&d.slot, "slot")?),
        "record" => IrOp::Record {
            hist: need(&d.hist, "hist")?,
            since: slot_name(&d.since, "since")?,
        },
        "count" => IrOp::Count {
            counter: need(&d.counter, "counter")?,
            amount: Dist::Const(d.amount.unwrap_or(1)),
        },
        "count_recv" => IrOp::CountRecv(need(&d.counter, "counter")?),
        _ => IrOp::Exit,
    })
}

/// A duration distribution from `time = "5us"` or `dist = "exp", mean = "5us"` etc.
fn dist(src: &Src<'_>, d: &OpDecl) -> Result<Dist, WorkloadError> {
    let kind = d.op.get_ref();
    let get = |f: &Option<Spanned<String>>, name: &str, of: &str| -> Result<u64, WorkloadError> {
        let s = f
            .as_ref()
            .ok_or_else(|| src.err(d.op.span(), format!("{kind}: dist '{of}' needs '{name}'")))?;
        src.dur(s)
    };
    match (&d.time, &d.dist) {
        (Some(t), None) => Ok(Dist::Const(src.dur(t)?)),
        (Some(_), Some(ds)) => Err(src.err(
            ds.span(),
            format!("{kind}: give either time or dist, not both"),
        )),
        (None, None) => Err(src.err(
            d.op.span(),
            format!("op '{kind}' needs 'time' (e.g. \"5us\") or 'dist'"),
        )),
        (None, Some(ds)) => {
            let name = ds.get_ref().as_str();
            Ok(match name {
                "const" => Dist::Const(get(&d.mean, "mean", name)?),
                "uniform" => {
                    let (lo, hi) = (get(&d.min, "min", name)?, get(&d.max, "max", name)?);
                    if hi < lo {
                        return Err(src.err(ds.span(), "uniform: max is below min"));
                    }
                    Dist::Uniform { lo, hi }
                }
                "exp" => Dist::Exp {
                    mean: get(&d.mean, "mean", name)?,
                },
                "normal" => Dist::Normal {
                    mean: get(&d.mean, "mean", name)?,
                    stddev: get(&d.stddev, "stddev", name)?,
                },
                "lognormal" => {
                    let sigma = d.sigma.ok_or_else(|| {
                        src.err(ds.span(), "lognormal needs 'sigma' (shape, e.g. 0.5)")
                    })?;
                    // Above 10 a sample is beyond any clock (median × e^(10 z)).
                    if !(sigma.is_finite() && (0.0..=10.0).contains(&sigma)) {
                        return Err(
                            src.err(ds.span(), "lognormal: sigma must be a number in 0..=10")
                        );
                    }
                    Dist::LogNormal {
                        median: get(&d.median, "median", name)?,
                        sigma,
                    }
                }
                "choice" => {
                    let values = d
                        .values
                        .as_ref()
                        .ok_or_else(|| src.err(ds.span(), "choice needs 'values' (durations)"))?;
                    let weights = d.weights.clone().unwrap_or_else(|| vec![1; values.len()]);
                    if weights.len() != values.len() || values.is_empty() {
                        return Err(src.err(
                            ds.span(),
                            "choice: 'values' and 'weights' must be non-empty and of equal length",
                        ));
                    }
                    if weights.iter().all(|w| *w == 0) {
                        return Err(src.err(
                            ds.span(),
                            "choice: every weight is 0, so no value could be drawn; give at least one a weight past 0",
                        ));
                    }
                    let mut v = Vec::new();
                    for (w, s) in weights.iter().zip(values) {
                        v.push((*w, bounded_dur(s).map_err(|m| src.err(ds.span(), m))?));
                    }
                    Dist::Choice(v)
                }
                other => {
                    return Err(src.err(ds.span(), format!("unknown dist '{other}' (expected const, uniform, exp, normal, lognormal or choice)")));
                }
            })
        }
    }
}
