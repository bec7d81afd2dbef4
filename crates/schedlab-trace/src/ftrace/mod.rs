//! Linux ftrace text: a writer in the tracefs `trace` file format and a parser
//! for the text formats sched events come in on a real host.
//!
//! Why text as well as Perfetto: it is diff-friendly for golden tests, greppable,
//! readable by Perfetto's legacy text importer, and it is what `schedlab-host`
//! captures from tracefs — so simulated and real runs go through one parser.
//!
//! The parser reads:
//! * our own output and tracefs `trace` / `trace_pipe` text, with or without
//!   the irq-flags column and the `record-tgid` column, comms containing
//!   spaces, dashes or colons (`lto cgu.03`, `kworker/u4:1-events`);
//! * `trace-cmd report` output, including its compact `comm:pid [prio] S ==>
//!   ...` sched_switch and `comm:pid [prio] CPU:003` wakeup renderings;
//! * `perf script` output (`comm tid [cpu] ts: sched:sched_switch: ...`, also
//!   with `pid/tid` and `--ns`).
//!
//! Event lines of other events are skipped and counted in [`ParseStats`];
//! headers, comments and markers such as `CPU:0 [LOST 12 EVENTS]` are skipped.
//! A line that is one of our sched events but does not parse is an error
//! naming the line number and what was expected.
//!
//! Files written here carry the thread list and CPU count in `#` comment lines
//! (ignored by other tools) so that text → [`parse_ftrace_text`] reproduces the
//! [`Trace`] exactly. Timestamps are written with nanosecond precision for the
//! same reason.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use crate::{
    DEFAULT_PRIO, PrevState, ThreadInfo, ThreadTable, Trace, TraceError, TraceEvent, UNKNOWN_COMM,
    excerpt, idle_comm,
};

/// Header comment prefix carrying one thread of the trace.
const THREAD_LINE: &str = "# schedlab-thread:";
/// First word of our `tracing_mark_write` placement annotations.
pub const PLACEMENT_MARK: &str = "schedlab_placement";

/// Replaces line breaks so a name cannot break the line format.
fn clean(s: &str) -> Cow<'_, str> {
    if s.contains(['\n', '\r']) {
        Cow::Owned(s.replace(['\n', '\r'], " "))
    } else {
        Cow::Borrowed(s)
    }
}

/// Writes `trace` in the tracefs `trace` text format.
///
/// Events are written in stable timestamp order. The task column shows the
/// task running on that CPU (tracked from switches; `<idle>-0` before the first
/// one), the waker for placements, the parent for forks. Placements become
/// `tracing_mark_write: schedlab_placement waker=.. wakee=.. prev_cpu=..
/// target_cpu=.. examined=.. path=..` lines.
pub fn write_ftrace_text(trace: &Trace, w: &mut impl Write) -> io::Result<()> {
    let order = trace.sorted_indices();
    let nr_cpus = trace.effective_nr_cpus();
    let mut comms: BTreeMap<u32, &str> = BTreeMap::new();
    for t in &trace.threads {
        comms.entry(t.pid).or_insert(t.comm.as_str());
    }
    let comm_on = |pid: u32, cpu: u32| -> Cow<'_, str> {
        if pid == 0 {
            Cow::Owned(idle_comm(cpu))
        } else {
            clean(comms.get(&pid).copied().unwrap_or(UNKNOWN_COMM))
        }
    };
    let task_col = |pid: u32| -> Cow<'_, str> {
        if pid == 0 {
            Cow::Borrowed("<idle>")
        } else {
            clean(comms.get(&pid).copied().unwrap_or(UNKNOWN_COMM))
        }
    };

    let n = trace.events.len();
    writeln!(w, "# tracer: nop")?;
    writeln!(w, "#")?;
    writeln!(
        w,
        "# entries-in-buffer/entries-written: {n}/{n}   #P:{nr_cpus}"
    )?;
    writeln!(w, "#")?;
    writeln!(
        w,
        "# written by schedlab; thread list (comm runs to end of line):"
    )?;
    for t in &trace.threads {
        writeln!(
            w,
            "{THREAD_LINE} pid={} tgid={} comm={}",
            t.pid,
            t.tgid,
            clean(&t.comm)
        )?;
    }
    writeln!(w, "#")?;
    writeln!(
        w,
        "#                                _-----=> irqs-off/BH-disabled"
    )?;
    writeln!(w, "#                               / _----=> need-resched")?;
    writeln!(
        w,
        "#                              | / _---=> hardirq/softirq"
    )?;
    writeln!(w, "#                              || / _--=> preempt-depth")?;
    writeln!(
        w,
        "#                              ||| / _-=> migrate-disable"
    )?;
    writeln!(w, "#                              |||| /     delay")?;
    writeln!(
        w,
        "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION"
    )?;
    writeln!(w, "#              | |         |   |||||     |         |")?;

    let mut current: Vec<u32> = vec![0; nr_cpus as usize];
    for &i in &order {
        let ev = &trace.events[i];
        let cpu = ev.cpu();
        let running = current.get(cpu as usize).copied().unwrap_or(0);
        let (task, flags, payload) = match ev {
            TraceEvent::Switch {
                prev_pid,
                prev_prio,
                prev_state,
                next_pid,
                next_prio,
                ..
            } => {
                if let Some(slot) = current.get_mut(cpu as usize) {
                    *slot = *next_pid;
                }
                (
                    *prev_pid,
                    "d..2.",
                    format!(
                        "prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> next_comm={} next_pid={} next_prio={}",
                        comm_on(*prev_pid, cpu),
                        prev_pid,
                        prev_prio,
                        prev_state.letter(),
                        comm_on(*next_pid, cpu),
                        next_pid,
                        next_prio
                    ),
                )
            }
            TraceEvent::Waking {
                pid,
                prio,
                target_cpu,
                ..
            }
            | TraceEvent::Wakeup {
                pid,
                prio,
                target_cpu,
                ..
            }
            | TraceEvent::WakeupNew {
                pid,
                prio,
                target_cpu,
                ..
            } => (
                running,
                "d..2.",
                format!(
                    "comm={} pid={} prio={} target_cpu={:03}",
                    comm_on(*pid, cpu),
                    pid,
                    prio,
                    target_cpu
                ),
            ),
            TraceEvent::MigrateTask {
                pid,
                prio,
                orig_cpu,
                dest_cpu,
                ..
            } => (
                running,
                "d..2.",
                format!(
                    "comm={} pid={} prio={} orig_cpu={} dest_cpu={}",
                    comm_on(*pid, cpu),
                    pid,
                    prio,
                    orig_cpu,
                    dest_cpu
                ),
            ),
            TraceEvent::ProcessFork {
                parent_pid,
                child_pid,
                ..
            } => (
                *parent_pid,
                ".....",
                format!(
                    "comm={} pid={} child_comm={} child_pid={}",
                    comm_on(*parent_pid, cpu),
                    parent_pid,
                    comm_on(*child_pid, cpu),
                    child_pid
                ),
            ),
            TraceEvent::ProcessExit { pid, .. } => (
                *pid,
                ".....",
                format!(
                    "comm={} pid={} prio={}",
                    comm_on(*pid, cpu),
                    pid,
                    DEFAULT_PRIO
                ),
            ),
            TraceEvent::Placement {
                waker_pid,
                wakee_pid,
                prev_cpu,
                target_cpu,
                path,
                examined,
                ..
            } => (
                *waker_pid,
                ".....",
                format!(
                    "{PLACEMENT_MARK} waker={waker_pid} wakee={wakee_pid} prev_cpu={prev_cpu} target_cpu={target_cpu} examined={examined} path={}",
                    clean(path)
                ),
            ),
        };
        let ts = ev.ts_ns();
        let name = match ev {
            TraceEvent::Placement { .. } => "tracing_mark_write",
            other => other.name(),
        };
        writeln!(
            w,
            "{:>16}-{:<7} [{:03}] {} {:>5}.{:09}: {}: {}",
            task_col(task),
            task,
            cpu,
            flags,
            ts / 1_000_000_000,
            ts % 1_000_000_000,
            name,
            payload
        )?;
    }
    Ok(())
}

/// Writes `trace` as ftrace text to the file at `path`.
pub fn write_ftrace_file(trace: &Trace, path: &Path) -> Result<(), TraceError> {
    crate::write_file(path, |w| write_ftrace_text(trace, w))
}

/// Reads and parses an ftrace / trace-cmd / perf script text file; errors name the file.
pub fn read_ftrace_file(path: &Path) -> Result<Trace, TraceError> {
    let text = std::fs::read_to_string(path).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_ftrace_text(&text).map_err(|e| e.in_file(path))
}

mod lex;
mod parse;
pub use parse::{
    MAX_INPUT_BYTES, MAX_LINE_BYTES, ParseStats, StreamSummary, parse_ftrace_reader,
    parse_ftrace_text, parse_ftrace_text_with_stats,
};
