//! Scheduler trace events shared by the simulator and the real-host harness.
//!
//! One closed event type ([`TraceEvent`]) is produced by two very different
//! sources — `schedlab-engine` (simulated runs) and `schedlab-host` (tracefs /
//! `perf script` captures of a real kernel) — so that both feed the same sinks
//! and the same analysis code:
//!
//! * [`perfetto`]: native Perfetto protobuf (`.pftrace`) for ui.perfetto.dev, and
//!   a decoder for the subset we write (used by golden tests).
//! * [`ftrace`]: the tracefs `trace` text format, plus a parser that also reads
//!   real tracefs, `trace-cmd report` and `perf script` output.
//! * [`analysis`]: schedstat-shaped counters (switches, wakeups, migrations,
//!   busy/idle time, wakeup latency).
//!
//! This crate deliberately depends on no other schedlab crate: both producers
//! sit above it.

#![warn(missing_docs)]

use std::path::PathBuf;

pub mod analysis;
pub mod dynamics;
pub mod ftrace;
pub mod perfetto;

pub use analysis::{LatencySummary, PerCpuTime, TraceCounters, counters};
pub use ftrace::{ParseStats, parse_ftrace_text, parse_ftrace_text_with_stats, write_ftrace_text};
pub use perfetto::{decode_perfetto, write_perfetto};

/// Kernel priority of a nice-0 `SCHED_NORMAL` task in the 120-based numbering
/// used by sched tracepoints; the default whenever a source does not know better.
pub const DEFAULT_PRIO: i32 = 120;

/// One run's scheduler trace: which CPUs exist, who the threads are and what
/// happened, in (usually) timestamp order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// Number of CPUs of the machine (CPU ids are `0..nr_cpus`); sinks need it
    /// to describe CPUs that never appear in an event.
    pub nr_cpus: u32,
    /// Thread names and thread-group ids, so sinks can label tracks. Pid 0 (the
    /// per-CPU idle task) need not be listed: it is always `swapper/N`.
    pub threads: Vec<ThreadInfo>,
    /// The events; see [`Trace::sort`].
    pub events: Vec<TraceEvent>,
}

/// Identity of one thread (kernel task).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Kernel pid of the task (a thread id in userspace terms); 0 = idle.
    pub pid: u32,
    /// Thread-group id (the userspace process id); equals `pid` for a main thread.
    pub tgid: u32,
    /// Task name as in `/proc/PID/comm`.
    pub comm: String,
}

/// State of the task being switched out, which tells voluntary from
/// involuntary context switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PrevState {
    /// Still runnable (`R`/`R+`): it was preempted (an involuntary switch).
    Runnable,
    /// Interruptible sleep (`S`; tracefs `I`, `T`, `t`, `P` map here too).
    Sleeping,
    /// Uninterruptible sleep (`D`), e.g. waiting for I/O.
    Uninterruptible,
    /// The task exited (`X`/`Z`): this was its last switch-out.
    Dead,
}

impl PrevState {
    /// The letter tracefs prints for this state in `sched_switch` lines.
    pub fn letter(self) -> &'static str {
        match self {
            PrevState::Runnable => "R",
            PrevState::Sleeping => "S",
            PrevState::Uninterruptible => "D",
            PrevState::Dead => "X",
        }
    }

    /// Parses a tracefs / trace-cmd state string such as `S`, `R+`, `D|K` or `I`.
    ///
    /// The kernel has more states than schedlab distinguishes; they are folded
    /// by what matters for scheduling analysis: `R` (with or without the
    /// preemption `+`) is runnable, `D` uninterruptible, `X`/`Z` dead, and every
    /// other letter (`S`, `I` idle kthread wait, `T`/`t` stopped, `P` parked,
    /// `W`, `K`) is a voluntary sleep. Returns `None` for an empty or
    /// unrecognised string.
    pub fn parse(s: &str) -> Option<PrevState> {
        let s = s.trim();
        let mut result: Option<PrevState> = None;
        for part in s.trim_end_matches('+').split('|') {
            let st = match part {
                "R" => PrevState::Runnable,
                "S" | "I" | "T" | "t" | "P" | "W" | "K" | "N" => PrevState::Sleeping,
                "D" => PrevState::Uninterruptible,
                "X" | "Z" | "x" => PrevState::Dead,
                _ => return None,
            };
            // With combined flags (e.g. `D|K`) the most specific one wins:
            // dead > uninterruptible > sleeping > runnable.
            result = Some(match result {
                None => st,
                Some(prev) => prev.max(st),
            });
        }
        result
    }
}

/// One scheduler event. Field names follow the kernel tracepoints of the same
/// name so that host captures map one to one; `cpu` is always the CPU that
/// emitted the event (where the code ran), not necessarily the task's CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceEvent {
    /// `sched_switch`: `cpu` stops running `prev_pid` and starts `next_pid`.
    Switch {
        /// Time in nanoseconds.
        ts_ns: u64,
        /// CPU doing the switch.
        cpu: u32,
        /// Task switched out (0 = idle).
        prev_pid: u32,
        /// Its priority (120 = nice 0).
        prev_prio: i32,
        /// Why it stopped running.
        prev_state: PrevState,
        /// Task switched in (0 = idle).
        next_pid: u32,
        /// Its priority.
        next_prio: i32,
    },
    /// `sched_waking`: a wakeup starts; `cpu` is where the waker runs.
    Waking {
        /// Time in nanoseconds.
        ts_ns: u64,
        /// CPU of the waker.
        cpu: u32,
        /// Task being woken.
        pid: u32,
        /// Its priority.
        prio: i32,
        /// CPU chosen for it.
        target_cpu: u32,
    },
    /// `sched_wakeup`: the woken task is now on `target_cpu`'s runqueue.
    Wakeup {
        /// Time in nanoseconds.
        ts_ns: u64,
        /// CPU emitting the event.
        cpu: u32,
        /// Task woken.
        pid: u32,
        /// Its priority.
        prio: i32,
        /// CPU it was enqueued on.
        target_cpu: u32,
    },
    /// `sched_wakeup_new`: a freshly forked task is enqueued for the first time.
    WakeupNew {
        /// Time in nanoseconds.
        ts_ns: u64,
        /// CPU emitting the event (the parent's).
        cpu: u32,
        /// The new task.
        pid: u32,
        /// Its priority.
        prio: i32,
        /// CPU it was placed on.
        target_cpu: u32,
    },
    /// `sched_migrate_task`: a task moves from `orig_cpu` to `dest_cpu`, at
    /// wakeup or by the load balancer.
    MigrateTask {
        /// Time in nanoseconds.
        ts_ns: u64,
        /// CPU emitting the event.
        cpu: u32,
        /// Task moved.
        pid: u32,
        /// Its priority.
        prio: i32,
        /// CPU it leaves.
        orig_cpu: u32,
        /// CPU it goes to.
        dest_cpu: u32,
    },
    /// `sched_process_fork`: `parent_pid` created `child_pid`.
    ProcessFork {
        /// Time in nanoseconds.
        ts_ns: u64,
        /// CPU of the parent.
        cpu: u32,
        /// Forking task.
        parent_pid: u32,
        /// New task.
        child_pid: u32,
    },
    /// `sched_process_exit`: `pid` exits.
    ProcessExit {
        /// Time in nanoseconds.
        ts_ns: u64,
        /// CPU it exits on.
        cpu: u32,
        /// Exiting task.
        pid: u32,
    },
    /// schedlab's own annotation: why a wakeup went where it went.
    Placement {
        /// Time in nanoseconds (the wakeup's).
        ts_ns: u64,
        /// CPU of the waker.
        cpu: u32,
        /// Waking task (0 = idle / interrupt context).
        waker_pid: u32,
        /// Task being woken.
        wakee_pid: u32,
        /// CPU the wakee last ran on.
        prev_cpu: u32,
        /// CPU the policy chose.
        target_cpu: u32,
        /// Decision path recorded by the policy, e.g.
        /// `"affine:wake_affine_idle sis:idle_core"`.
        path: String,
        /// How many CPUs the policy examined to decide.
        examined: u32,
    },
}

impl TraceEvent {
    /// Timestamp in nanoseconds.
    pub fn ts_ns(&self) -> u64 {
        match *self {
            TraceEvent::Switch { ts_ns, .. }
            | TraceEvent::Waking { ts_ns, .. }
            | TraceEvent::Wakeup { ts_ns, .. }
            | TraceEvent::WakeupNew { ts_ns, .. }
            | TraceEvent::MigrateTask { ts_ns, .. }
            | TraceEvent::ProcessFork { ts_ns, .. }
            | TraceEvent::ProcessExit { ts_ns, .. }
            | TraceEvent::Placement { ts_ns, .. } => ts_ns,
        }
    }

    /// CPU that emitted the event.
    pub fn cpu(&self) -> u32 {
        match *self {
            TraceEvent::Switch { cpu, .. }
            | TraceEvent::Waking { cpu, .. }
            | TraceEvent::Wakeup { cpu, .. }
            | TraceEvent::WakeupNew { cpu, .. }
            | TraceEvent::MigrateTask { cpu, .. }
            | TraceEvent::ProcessFork { cpu, .. }
            | TraceEvent::ProcessExit { cpu, .. }
            | TraceEvent::Placement { cpu, .. } => cpu,
        }
    }

    /// Tracepoint name (`sched_switch`, ...; `schedlab_placement` for placements),
    /// handy for per-kind counts and messages.
    pub fn name(&self) -> &'static str {
        match self {
            TraceEvent::Switch { .. } => "sched_switch",
            TraceEvent::Waking { .. } => "sched_waking",
            TraceEvent::Wakeup { .. } => "sched_wakeup",
            TraceEvent::WakeupNew { .. } => "sched_wakeup_new",
            TraceEvent::MigrateTask { .. } => "sched_migrate_task",
            TraceEvent::ProcessFork { .. } => "sched_process_fork",
            TraceEvent::ProcessExit { .. } => "sched_process_exit",
            TraceEvent::Placement { .. } => "schedlab_placement",
        }
    }

    /// Largest CPU id mentioned anywhere in the event (emitting CPU and any
    /// target/origin CPU), used to infer `nr_cpus` when a source omits it.
    pub fn max_cpu_mentioned(&self) -> u32 {
        match *self {
            TraceEvent::Waking {
                cpu, target_cpu, ..
            }
            | TraceEvent::Wakeup {
                cpu, target_cpu, ..
            }
            | TraceEvent::WakeupNew {
                cpu, target_cpu, ..
            } => cpu.max(target_cpu),
            TraceEvent::MigrateTask {
                cpu,
                orig_cpu,
                dest_cpu,
                ..
            } => cpu.max(orig_cpu).max(dest_cpu),
            TraceEvent::Placement {
                cpu,
                prev_cpu,
                target_cpu,
                ..
            } => cpu.max(prev_cpu).max(target_cpu),
            _ => self.cpu(),
        }
    }
}

impl Trace {
    /// An empty trace for a machine with `nr_cpus` CPUs.
    pub fn new(nr_cpus: u32) -> Trace {
        Trace {
            nr_cpus,
            threads: Vec::new(),
            events: Vec::new(),
        }
    }

    /// The thread entry for `pid`, if listed.
    pub fn thread(&self, pid: u32) -> Option<&ThreadInfo> {
        self.threads.iter().find(|t| t.pid == pid)
    }

    /// Name of `pid`: its listed comm, `swapper` for pid 0 when not listed
    /// (use [`idle_comm`] when the CPU is known), or `<...>` — what tracefs
    /// prints for a task whose name it does not know.
    pub fn comm(&self, pid: u32) -> &str {
        match self.thread(pid) {
            Some(t) => &t.comm,
            None if pid == 0 => "swapper",
            None => UNKNOWN_COMM,
        }
    }

    /// Sorts events by timestamp, keeping the original order of events with
    /// equal timestamps (the emitter's causal order, e.g. waking before switch).
    pub fn sort(&mut self) {
        self.events.sort_by_key(TraceEvent::ts_ns);
    }

    /// Whether events are already in timestamp order.
    pub fn is_sorted(&self) -> bool {
        self.events.windows(2).all(|w| w[0].ts_ns() <= w[1].ts_ns())
    }

    /// Event indices in stable timestamp order, for sinks that must emit in
    /// time order without mutating (or cloning) the trace.
    pub(crate) fn sorted_indices(&self) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..self.events.len()).collect();
        if !self.is_sorted() {
            idx.sort_by_key(|&i| self.events[i].ts_ns());
        }
        idx
    }

    /// `nr_cpus` if set, else one more than the largest CPU any event mentions.
    pub fn effective_nr_cpus(&self) -> u32 {
        let seen = self
            .events
            .iter()
            .map(|e| e.max_cpu_mentioned() + 1)
            .max()
            .unwrap_or(0);
        self.nr_cpus.max(seen)
    }
}

/// Comm tracefs shows for a task whose name it has not recorded.
pub const UNKNOWN_COMM: &str = "<...>";

/// Name of the idle task of `cpu` (`swapper/N`), as the kernel prints it.
pub fn idle_comm(cpu: u32) -> String {
    format!("swapper/{cpu}")
}

/// Everything that can go wrong reading or decoding a trace. Messages name the
/// line, packet, field or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A text line that looks like one of our sched events but does not parse.
    #[error("line {line}: {event}: expected {expected}, found `{found}`")]
    Parse {
        /// 1-based line number.
        line: usize,
        /// Event name (or `event line` when the line prefix itself is bad).
        event: String,
        /// What the parser wanted.
        expected: String,
        /// The offending text (shortened).
        found: String,
    },
    /// A Perfetto file that is not valid protobuf for our message subset.
    #[error("Perfetto trace does not decode as protobuf: {0}")]
    Decode(#[from] prost::DecodeError),
    /// Valid protobuf but a packet lacks a field we need or holds a bad value.
    #[error("Perfetto packet {packet}: {what}")]
    Perfetto {
        /// 0-based packet index in the file.
        packet: usize,
        /// What is wrong.
        what: String,
    },
    /// Reading a trace file failed.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// An error inside a named file (wraps the error with the path).
    #[error("{}: {inner}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// What went wrong in it.
        inner: Box<TraceError>,
    },
}

impl TraceError {
    /// Attaches the file the error came from, for messages like `trace.txt: line 7: ...`.
    pub fn in_file(self, path: impl Into<PathBuf>) -> TraceError {
        TraceError::InFile {
            path: path.into(),
            inner: Box::new(self),
        }
    }
}

/// Shortens user text for error messages (char-boundary safe).
pub(crate) fn excerpt(s: &str) -> String {
    const MAX: usize = 120;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// Builds the thread list of a parsed/decoded trace: threads given explicitly
/// (a schedlab header, a Perfetto process tree) win; other pids are inferred
/// from comm fields of events, keeping the last comm seen (a task's name
/// changes at exec) in order of first appearance.
#[derive(Debug, Default)]
pub(crate) struct ThreadTable {
    explicit: Vec<ThreadInfo>,
    explicit_pids: std::collections::BTreeSet<u32>,
    inferred: Vec<ThreadInfo>,
    inferred_index: std::collections::BTreeMap<u32, usize>,
    /// tgids learned from a tgid column or `pid/tid` field.
    tgids: std::collections::BTreeMap<u32, u32>,
}

impl ThreadTable {
    pub(crate) fn add_explicit(&mut self, t: ThreadInfo) {
        if self.explicit_pids.insert(t.pid) {
            self.explicit.push(t);
        }
    }

    /// Records that `pid` is called `comm`. Pid 0 and unknown names are ignored.
    pub(crate) fn saw_comm(&mut self, pid: u32, comm: &str) {
        if pid == 0 || comm.is_empty() || comm == UNKNOWN_COMM || self.explicit_pids.contains(&pid)
        {
            return;
        }
        match self.inferred_index.get(&pid) {
            Some(&i) => {
                if self.inferred[i].comm != comm {
                    self.inferred[i].comm = comm.to_string();
                }
            }
            None => {
                self.inferred_index.insert(pid, self.inferred.len());
                self.inferred.push(ThreadInfo {
                    pid,
                    tgid: pid,
                    comm: comm.to_string(),
                });
            }
        }
    }

    /// Records a name for `pid` only if nothing better is known.
    pub(crate) fn saw_comm_if_unknown(&mut self, pid: u32, comm: &str) {
        if !self.inferred_index.contains_key(&pid) {
            self.saw_comm(pid, comm);
        }
    }

    /// Records the thread group of `pid`.
    pub(crate) fn saw_tgid(&mut self, pid: u32, tgid: u32) {
        if pid != 0 {
            self.tgids.insert(pid, tgid);
        }
    }

    pub(crate) fn finish(self) -> Vec<ThreadInfo> {
        let mut out = self.explicit;
        for mut t in self.inferred {
            if let Some(&tgid) = self.tgids.get(&t.pid) {
                t.tgid = tgid;
            }
            out.push(t);
        }
        out
    }
}

/// Creates `path` and writes it through a buffered writer with `write`; errors name the file.
/// Shared by the ftrace-text and Perfetto file writers.
pub(crate) fn write_file(
    path: &std::path::Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<(), TraceError> {
    use std::io::Write as _;
    let io_err = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let f = std::fs::File::create(path).map_err(io_err)?;
    let mut w = std::io::BufWriter::new(f);
    write(&mut w).map_err(io_err)?;
    w.flush().map_err(io_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prev_state_parse_covers_kernel_spellings() {
        assert_eq!(PrevState::parse("R"), Some(PrevState::Runnable));
        assert_eq!(PrevState::parse("R+"), Some(PrevState::Runnable));
        assert_eq!(PrevState::parse("S"), Some(PrevState::Sleeping));
        assert_eq!(PrevState::parse("I"), Some(PrevState::Sleeping));
        assert_eq!(PrevState::parse("D"), Some(PrevState::Uninterruptible));
        assert_eq!(PrevState::parse("D|K"), Some(PrevState::Uninterruptible));
        assert_eq!(PrevState::parse("X"), Some(PrevState::Dead));
        assert_eq!(PrevState::parse("Z"), Some(PrevState::Dead));
        assert_eq!(PrevState::parse(""), None);
        assert_eq!(PrevState::parse("Q"), None);
        for s in [
            PrevState::Runnable,
            PrevState::Sleeping,
            PrevState::Uninterruptible,
            PrevState::Dead,
        ] {
            assert_eq!(PrevState::parse(s.letter()), Some(s));
        }
    }

    #[test]
    fn sort_is_stable_and_comm_falls_back() {
        let mut t = Trace::new(2);
        t.threads.push(ThreadInfo {
            pid: 7,
            tgid: 7,
            comm: "a".into(),
        });
        t.events.push(TraceEvent::ProcessExit {
            ts_ns: 5,
            cpu: 0,
            pid: 1,
        });
        t.events.push(TraceEvent::ProcessExit {
            ts_ns: 3,
            cpu: 0,
            pid: 2,
        });
        t.events.push(TraceEvent::ProcessExit {
            ts_ns: 5,
            cpu: 1,
            pid: 3,
        });
        t.sort();
        let pids: Vec<u32> = t
            .events
            .iter()
            .map(|e| match e {
                TraceEvent::ProcessExit { pid, .. } => *pid,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(pids, vec![2, 1, 3]);
        assert_eq!(t.comm(7), "a");
        assert_eq!(t.comm(0), "swapper");
        assert_eq!(t.comm(8), "<...>");
        assert_eq!(idle_comm(3), "swapper/3");
    }

    #[test]
    fn effective_nr_cpus_uses_targets() {
        let mut t = Trace::new(0);
        t.events.push(TraceEvent::Waking {
            ts_ns: 0,
            cpu: 1,
            pid: 5,
            prio: 120,
            target_cpu: 6,
        });
        assert_eq!(t.effective_nr_cpus(), 7);
        t.nr_cpus = 16;
        assert_eq!(t.effective_nr_cpus(), 16);
    }
}
