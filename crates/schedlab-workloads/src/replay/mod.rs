//! `schedlab replay`: a workload file derived from a real scheduler trace.
//!
//! A trace of `sched_switch` / `sched_waking` (and, where recorded, `sched_process_fork` /
//! `sched_process_exit`) events says, for each thread, when it ran, when it went to sleep
//! and who was running on the CPU that woke it. [`derive_reader`] turns that into one task
//! per traced thread whose program is its run bursts and blocking points, with one channel
//! per causal edge (waker → wakee): each wakeup becomes a `send` in the waker's program at the
//! point of its CPU time where it woke the wakee, and a `recv` in the wakee's at the point
//! where it blocked. Blocks ended by no task (the idle task or an interrupt was on the waking
//! CPU: timers, devices) become timed `sleep`s of the traced length. What the derivation
//! infers and what it cannot know is in `docs/replay.md`.
//!
//! The real run is one valid execution of the derived program (every `recv` has its `send`
//! earlier in real time, and sends never block), so a replay cannot deadlock on the edges.

mod compress;
mod derive;
mod emit;

use schedlab_trace::{ThreadInfo, Trace, TraceError, TraceEvent};
use std::collections::{BTreeMap, BTreeSet};

pub use derive::SYNC_WINDOW_NS;

/// How burst and sleep lengths inside a loop are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// The recorded lengths, as a `choice` over them (at most [`MAX_CHOICE`] values: more
    /// are merged into equal-count quantile bins, each its bin's median).
    Empirical,
    /// A lognormal fitted to the recorded lengths (median and sigma of their logarithms).
    Fitted,
}

/// What to do with threads outside `--only`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Background {
    /// Every traced thread becomes a task.
    Keep,
    /// Only the selected threads become tasks; wakeups from others become timed sleeps.
    Drop,
    /// As `Drop`, plus one task per CPU that keeps that CPU as busy as the others did.
    Fold,
}

/// Most values of an empirical `choice`.
pub const MAX_CHOICE: usize = 32;

/// What [`derive_reader`] is asked for.
#[derive(Clone, Debug)]
pub struct DeriveOptions {
    /// Burst model.
    pub model: Model,
    /// Threads to keep: a pid, a process id (tgid) or a comm; their descendants come along.
    /// Empty: every thread.
    pub only: Vec<String>,
    /// The other threads.
    pub background: Background,
    /// Workload name written in the file.
    pub name: String,
    /// Where the trace came from (written in the file's description).
    pub source: String,
    /// Kernel work of one send or receive, taken off the traced burst before it (the
    /// simulator charges its own from the machine profile); 0 keeps the bursts as traced.
    pub op_cost_ns: u64,
    /// Kernel work of a wakeup after its `sched_waking` (select the CPU, enqueue, the IPI
    /// for a remote one), taken off the traced burst after each send: (local, remote), as
    /// the trace placed the wakee. The simulator charges its own from the profile.
    pub wake_cost_ns: (u64, u64),
    /// Kernel work of the switch into a woken task, taken off its burst after each
    /// receive (the simulator charges the profile's context switch).
    pub switch_cost_ns: u64,
    /// Keep inferred hand-offs (see `derive`): a task preempted by the task it woke, given
    /// the CPU back when that task blocks, waits for it, on edges that also carry traced
    /// wakeups the other way. What keeps a ping-pong on one CPU a ping-pong elsewhere.
    pub handoffs: bool,
}

/// Why a trace could not be derived.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The trace does not parse.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// It has no scheduling events to derive from.
    #[error(
        "the trace has no sched_switch events (capture sched_switch and sched_waking, e.g. with `schedlab host capture` or `perf sched record`)"
    )]
    Empty,
    /// `--only` matched nothing.
    #[error("--only {0}: no traced thread has this pid, process id or name (busiest: {1})")]
    NoMatch(String, String),
}

/// Counts of what the trace lacked or contradicted; each non-zero count is a warning.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Warnings {
    /// Events the kernel dropped (`[LOST N EVENTS]`; in a Perfetto trace, the growth of
    /// the ring buffers' overrun counters in its `FtraceStats`).
    pub lost_events: u64,
    /// Perfetto ftrace bundles that follow a loss of events whose count is not recorded.
    pub lost_bundles: u64,
    /// Per-CPU buffers that wrapped (`buffer started` lines).
    pub buffer_started: u64,
    /// The last line (or Perfetto packet) was cut off.
    pub truncated: bool,
    /// Events earlier than one before them.
    pub out_of_order: u64,
    /// Events that repeat the one before exactly (doubled lines), dropped.
    pub duplicates: u64,
    /// Switches that contradict the ones before (a task switched out where another was
    /// running, or in on two CPUs): lost events.
    pub inconsistent_switches: u64,
    /// Switch-ins missing from the trace and implied by a wakeup onto an idle CPU (see
    /// `derive`'s module doc).
    pub implied_switches: u64,
    /// Threads first seen after the trace began, not by a traced fork.
    pub appeared_mid_trace: u64,
    /// Wakeups with no task as waker (idle or interrupt context on the waking CPU).
    pub irq_wakeups: u64,
    /// Real-time threads (priority below 100), written as nice -20.
    pub rt_threads: u64,
    /// CPUs seen beyond the count the header declared (hotplug or a bad header).
    pub cpus_beyond_header: u64,
    /// CPUs the header declared that no event mentions (offline, or idle throughout).
    pub cpus_silent: u64,
    /// Perfetto compact sched_switches with no earlier switch on their CPU (its first):
    /// the task switched out is not recorded, read as idle.
    pub compact_no_prev: u64,
    /// Perfetto compact sched bundles that are malformed, decoded up to the fault.
    pub compact_malformed: u64,
}

impl Warnings {
    /// One line per non-zero count, saying what it means for the workload.
    pub fn lines(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.lost_events > 0 {
            v.push(format!(
                "{} events lost (buffer overruns): bursts and edges around them are wrong; capture with a larger buffer",
                self.lost_events
            ));
        }
        if self.lost_bundles > 0 {
            v.push(format!(
                "{} Perfetto ftrace bundles follow events the kernel lost (how many is not recorded): bursts and edges around them are wrong; capture with a larger buffer",
                self.lost_bundles
            ));
        }
        if self.buffer_started > 0 {
            v.push(format!(
                "{} per-CPU buffers wrapped: those CPUs' early events are missing",
                self.buffer_started
            ));
        }
        if self.truncated {
            v.push(
                "the trace ends in a cut-off line or packet (truncated file): derived up to it"
                    .into(),
            );
        }
        if self.out_of_order > 0 {
            v.push(format!(
                "{} events out of time order: the trace is not sorted; sort it (`perf script` does, tracefs `trace` does)",
                self.out_of_order
            ));
        }
        if self.duplicates > 0 {
            v.push(format!(
                "{} events repeat the one before them exactly (doubled lines): read once",
                self.duplicates
            ));
        }
        if self.inconsistent_switches > 0 {
            v.push(format!(
                "{} switches contradict the ones before them (lost events): the affected bursts are cut there",
                self.inconsistent_switches
            ));
        }
        if self.implied_switches > 0 {
            v.push(format!(
                "{} switches into a task woken onto an idle CPU are missing from the trace: taken at the wakeups",
                self.implied_switches
            ));
        }
        if self.appeared_mid_trace > 0 {
            v.push(format!(
                "{} threads appear mid-trace without a traced fork: they start after a `delay` of their first appearance",
                self.appeared_mid_trace
            ));
        }
        if self.rt_threads > 0 {
            v.push(format!(
                "{} real-time threads: written as nice -20 (workload files have no SCHED_FIFO/RR)",
                self.rt_threads
            ));
        }
        if self.cpus_beyond_header > 0 {
            v.push(format!(
                "{} CPUs appear beyond the header's CPU count (hotplug?)",
                self.cpus_beyond_header
            ));
        }
        if self.cpus_silent > 0 {
            v.push(format!(
                "{} CPUs of the header never appear (offline or hotplugged?)",
                self.cpus_silent
            ));
        }
        if self.compact_no_prev > 0 {
            v.push(format!(
                "{} CPUs begin with a compact sched_switch, which does not record the task switched out: read as idle, so that task's CPU time before it is not counted",
                self.compact_no_prev
            ));
        }
        if self.compact_malformed > 0 {
            v.push(format!(
                "{} compact sched bundles are malformed (arrays of unequal length, a comm index past the intern table): decoded up to the fault",
                self.compact_malformed
            ));
        }
        v
    }
}

/// One thread of the derived workload.
#[derive(Clone, Debug)]
pub struct DerivedTask {
    /// Kernel pid.
    pub pid: u32,
    /// The task's name in the file (`COMM-PID`, cleaned).
    pub name: String,
    /// CPU time in the trace.
    pub cpu_ns: u64,
}

/// The result of a derivation.
#[derive(Clone, Debug)]
pub struct Derived {
    /// The workload file.
    pub toml: String,
    /// The tasks written, pid order.
    pub tasks: Vec<DerivedTask>,
    /// Pids of the threads selected (the tasks, before empty ones were left out).
    pub selected: BTreeSet<u32>,
    /// What went wrong in the trace.
    pub warnings: Warnings,
    /// Events read.
    pub events: u64,
    /// Wakeups turned into edges.
    pub edge_wakeups: u64,
    /// Causal edges (channels).
    pub edges: usize,
    /// First to last event, ns.
    pub span_ns: u64,
}

/// One op of a thread before selection and compression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RawOp {
    /// Run for this long.
    Compute(u64),
    /// Wake the wakee of this edge; `true` when the trace placed it on another CPU.
    Send(usize, bool),
    /// Block until the waker of this edge wakes it; it slept this long in the trace.
    Recv(usize, u64),
    /// A timed sleep (no waker task).
    Sleep(u64),
    /// Create this thread.
    Fork(u32),
    /// Blocked, waker not yet seen (resolved or removed by the pass).
    Wait,
    /// An inferred hand-off on this edge (see the `derive` module): kept as a send when the edge
    /// also carries traced wakeups, else dropped with its `HandoffRecv`.
    HandoffSend(usize),
    /// The waker's side of a hand-off: it waits for the wakee to block.
    HandoffRecv(usize),
}

/// A causal edge: `waker` woke `wakee` `wakes` times, `sync_like` of them sync-like;
/// `handoffs` more were inferred (the wakee blocked and gave its CPU back to the waker, which
/// it had preempted).
#[derive(Clone, Debug)]
pub(crate) struct Edge {
    pub waker: u32,
    pub wakee: u32,
    pub wakes: u64,
    pub sync_like: u64,
    pub handoffs: u64,
}

/// Derives a workload from ftrace-style text (tracefs, trace-cmd, `perf script`), read a line
/// at a time.
pub fn derive_reader(
    reader: impl std::io::BufRead,
    opts: &DeriveOptions,
) -> Result<Derived, ReplayError> {
    let mut pass = derive::Pass::default();
    let mut events = 0u64;
    let s = schedlab_trace::ftrace::parse_ftrace_reader(reader, |ev| {
        events += 1;
        pass.event(&ev);
    })?;
    pass.warn.lost_events = s.stats.lost_events;
    pass.warn.buffer_started = s.stats.buffer_started;
    pass.warn.truncated = s.stats.truncated_last_line;
    finish(pass, &s.threads, s.header_cpus, events, opts)
}

/// Derives a workload from a trace already in memory (a decoded Perfetto file), with what
/// its decoding found lost or malformed.
pub fn derive_trace(
    trace: &Trace,
    stats: &schedlab_trace::perfetto::DecodeStats,
    opts: &DeriveOptions,
) -> Result<Derived, ReplayError> {
    let mut pass = derive::Pass::default();
    pass.warn.lost_events = stats.lost_events;
    pass.warn.lost_bundles = stats.lost_bundles;
    pass.warn.truncated = stats.truncated;
    pass.warn.compact_no_prev = stats.compact_no_prev;
    pass.warn.compact_malformed = stats.compact_malformed;
    let mut order: Vec<&TraceEvent> = trace.events.iter().collect();
    order.sort_by_key(|e| e.ts_ns());
    for ev in &order {
        pass.event(ev);
    }
    let cpus = (trace.nr_cpus > 0).then_some(trace.nr_cpus);
    finish(pass, &trace.threads, cpus, order.len() as u64, opts)
}

fn finish(
    mut pass: derive::Pass,
    threads: &[ThreadInfo],
    header_cpus: Option<u32>,
    events: u64,
    opts: &DeriveOptions,
) -> Result<Derived, ReplayError> {
    pass.finish();
    // Wakeups alone say who woke whom but not how long anyone ran or when it blocked.
    if pass.threads.is_empty() || pass.switches == 0 {
        return Err(ReplayError::Empty);
    }
    if let (Some(n), Some(max)) = (header_cpus, pass.max_cpu) {
        pass.warn.cpus_beyond_header = (max + 1).saturating_sub(n) as u64;
        pass.warn.cpus_silent = n.saturating_sub(max + 1) as u64;
    }
    let info: BTreeMap<u32, &ThreadInfo> = threads.iter().map(|t| (t.pid, t)).collect();
    let selected = select(&pass, &info, &opts.only)?;
    let out = emit::write(&mut pass, &info, &selected, opts);
    Ok(Derived {
        toml: out.toml,
        tasks: out.tasks,
        selected,
        warnings: pass.warn.clone(),
        events,
        edge_wakeups: pass.edges.iter().map(|e| e.wakes).sum(),
        edges: pass.edges.len(),
        span_ns: pass.last_ts.saturating_sub(pass.first_ts.unwrap_or(0)),
    })
}

/// The selected pids: those matching `only` (pid, tgid or comm) and their descendants.
fn select(
    pass: &derive::Pass,
    info: &BTreeMap<u32, &ThreadInfo>,
    only: &[String],
) -> Result<BTreeSet<u32>, ReplayError> {
    if only.is_empty() {
        return Ok(pass.threads.keys().copied().collect());
    }
    let mut sel = BTreeSet::new();
    for o in only {
        let before = sel.len();
        let num: Option<u32> = o.parse().ok();
        for &pid in pass.threads.keys() {
            let t = info.get(&pid);
            let hit = num.is_some_and(|n| n == pid || t.is_some_and(|t| t.tgid == n))
                || t.is_some_and(|t| t.comm == *o);
            if hit {
                sel.insert(pid);
            }
        }
        if sel.len() == before {
            let mut busiest: Vec<(&u32, &derive::Thread)> = pass.threads.iter().collect();
            busiest.sort_by_key(|(_, t)| std::cmp::Reverse(t.cpu_ns));
            let names: Vec<String> = busiest
                .iter()
                .take(5)
                .map(|(p, _)| format!("{} ({p})", info.get(p).map_or("?", |t| t.comm.as_str())))
                .collect();
            return Err(ReplayError::NoMatch(o.clone(), names.join(", ")));
        }
    }
    // Descendants: forked by a selected thread during the trace.
    loop {
        let more: Vec<u32> = pass
            .threads
            .iter()
            .filter(|(p, t)| !sel.contains(p) && t.parent.is_some_and(|pp| sel.contains(&pp)))
            .map(|(p, _)| *p)
            .collect();
        if more.is_empty() {
            break;
        }
        sel.extend(more);
    }
    Ok(sel)
}

/// The trace as the selected threads saw it: other threads' switches become switches to and
/// from idle and their wakeups are dropped, so counters of a `--only` derivation compare with
/// its replay.
pub fn restrict_trace(trace: &Trace, selected: &BTreeSet<u32>) -> Trace {
    let keep = |p: u32| p == 0 || selected.contains(&p);
    let mut out = Trace {
        nr_cpus: trace.nr_cpus,
        threads: trace
            .threads
            .iter()
            .filter(|t| keep(t.pid))
            .cloned()
            .collect(),
        events: Vec::with_capacity(trace.events.len()),
    };
    for ev in &trace.events {
        let ev = match ev.clone() {
            TraceEvent::Switch {
                ts_ns,
                cpu,
                prev_pid,
                prev_prio,
                prev_state,
                next_pid,
                next_prio,
            } => {
                let (p, n) = (
                    if keep(prev_pid) { prev_pid } else { 0 },
                    if keep(next_pid) { next_pid } else { 0 },
                );
                if p == 0 && n == 0 {
                    continue;
                }
                TraceEvent::Switch {
                    ts_ns,
                    cpu,
                    prev_pid: p,
                    prev_prio,
                    prev_state,
                    next_pid: n,
                    next_prio,
                }
            }
            TraceEvent::Waking { pid, .. }
            | TraceEvent::Wakeup { pid, .. }
            | TraceEvent::WakeupNew { pid, .. }
            | TraceEvent::MigrateTask { pid, .. }
            | TraceEvent::ProcessExit { pid, .. }
                if !keep(pid) =>
            {
                continue;
            }
            e => e,
        };
        out.events.push(ev);
    }
    out
}

/// CPU time per thread of a trace (ns), by pid; the idle task is left out.
pub fn cpu_by_pid(trace: &Trace) -> BTreeMap<u32, u64> {
    let mut order: Vec<&TraceEvent> = trace.events.iter().collect();
    order.sort_by_key(|e| e.ts_ns());
    // The derive pass's own accounting, so the switches it implies count here too.
    let mut pass = derive::Pass::default();
    for ev in order {
        pass.event(ev);
    }
    pass.finish();
    pass.threads
        .iter()
        .filter(|(p, t)| **p != 0 && t.cpu_ns > 0)
        .map(|(&p, t)| (p, t.cpu_ns))
        .collect()
}
