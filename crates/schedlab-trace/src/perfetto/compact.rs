//! Decoding `FtraceEventBundle.compact_sched`: the encoding `traced` uses for sched_switch
//! and sched_waking when the trace config sets `ftrace_config { compact_sched { enabled:
//! true } }` (the default since Perfetto v42, per `ftrace_config.proto`).
//!
//! A bundle carries its CPU's switches and wakings as parallel packed arrays, one entry per
//! event, timestamps delta-encoded within the bundle, comms as indices into the bundle's
//! `intern_table`. A compact switch stores only the task switched in: the task switched out
//! is the one the previous switch on that CPU switched in, so the prev side is filled in
//! after all events are in time order ([`resolve`]). The first switch of each CPU has no
//! such predecessor. Perfetto's trace_processor (`FtraceSchedEventTracker::
//! PushSchedSwitchCompact`, counted as `compact_sched_switch_skipped`) then records only
//! that the next task now runs there, and invents no prev task; schedlab keeps the next side
//! too but reads the prev side as idle (pid 0, state R), so no task is charged CPU time or
//! a block it was not seen to have, and counts it ([`DecodeStats::compact_no_prev`]).
//!
//! Compact wakings store no `common_pid` (the waker): trace_processor drops those before
//! the first switch of their CPU, since it cannot name the waker. schedlab keeps them: its
//! replay takes the waker from the task running on the waking CPU anyway, as it does for
//! text traces, and a waking before any switch there is an interrupt-like wakeup to it.
//!
//! Malformed arrays are handled as trace_processor does (`compact_sched_has_parse_errors`):
//! events are decoded up to the first fault (arrays of unequal length end at the shortest;
//! a comm index past the intern table or a timestamp that overflows ends the array there),
//! and the bundle is counted in [`DecodeStats::compact_malformed`]. Nothing is allocated
//! beyond what the input's own bytes hold.

use std::collections::BTreeMap;

use super::decode::{Ctx, DecodeStats};
use super::proto::CompactSched;
use super::state_from_bits;
use crate::{DEFAULT_PRIO, PrevState, ThreadTable, TraceError, TraceEvent};

/// An event of a bundle before the prev side of compact switches is known.
#[derive(Debug)]
pub(super) enum Pending {
    /// A complete event (regular ftrace events, compact wakings).
    Event(TraceEvent),
    /// A compact sched_switch: switched out is the previous switch's next task on `cpu`.
    Switch {
        ts_ns: u64,
        cpu: u32,
        prev_state: i64,
        next_pid: u32,
        next_prio: i32,
    },
}

impl Pending {
    fn ts_ns(&self) -> u64 {
        match self {
            Pending::Event(e) => e.ts_ns(),
            Pending::Switch { ts_ns, .. } => *ts_ns,
        }
    }
}

/// Decodes one bundle's compact events into `out`: its switches, then its wakings (the
/// order trace_processor's tokenizer pushes them in; [`resolve`] sorts stably by time).
pub(super) fn decode_bundle(
    ctx: &Ctx,
    cpu: u32,
    cs: &CompactSched,
    table: &mut ThreadTable,
    stats: &mut DecodeStats,
    out: &mut Vec<Pending>,
) -> Result<(), TraceError> {
    let comm = |i: u32| cs.intern_table.get(i as usize).map(String::as_str);
    let mut bad = false;

    let n = cs.switch_timestamp.len();
    let n_sw = n
        .min(cs.switch_prev_state.len())
        .min(cs.switch_next_pid.len())
        .min(cs.switch_next_prio.len())
        .min(cs.switch_next_comm_index.len());
    bad |= [
        cs.switch_prev_state.len(),
        cs.switch_next_pid.len(),
        cs.switch_next_prio.len(),
        cs.switch_next_comm_index.len(),
    ]
    .iter()
    .any(|&l| l != n);
    let mut ts = 0u64;
    for i in 0..n_sw {
        let (Some(t), Some(c)) = (
            ts.checked_add(cs.switch_timestamp[i]),
            comm(cs.switch_next_comm_index[i]),
        ) else {
            bad = true;
            break;
        };
        ts = t;
        let next_pid = id(ctx, cs.switch_next_pid[i], || {
            format!("switch {i}: `switch_next_pid`")
        })?;
        table.saw_comm(next_pid, c);
        out.push(Pending::Switch {
            ts_ns: ts,
            cpu,
            prev_state: cs.switch_prev_state[i],
            next_pid,
            next_prio: cs.switch_next_prio[i],
        });
        stats.compact_switches += 1;
    }

    let n = cs.waking_timestamp.len();
    let n_wk = n
        .min(cs.waking_pid.len())
        .min(cs.waking_target_cpu.len())
        .min(cs.waking_prio.len())
        .min(cs.waking_comm_index.len());
    bad |= [
        cs.waking_pid.len(),
        cs.waking_target_cpu.len(),
        cs.waking_prio.len(),
        cs.waking_comm_index.len(),
    ]
    .iter()
    .any(|&l| l != n);
    let mut ts = 0u64;
    for i in 0..n_wk {
        let (Some(t), Some(c)) = (
            ts.checked_add(cs.waking_timestamp[i]),
            comm(cs.waking_comm_index[i]),
        ) else {
            bad = true;
            break;
        };
        ts = t;
        let what = |f: &str| format!("waking {i}: `{f}`");
        let pid = id(ctx, cs.waking_pid[i], || what("waking_pid"))?;
        let target_cpu = id(ctx, cs.waking_target_cpu[i], || what("waking_target_cpu"))?;
        table.saw_comm(pid, c);
        out.push(Pending::Event(TraceEvent::Waking {
            ts_ns: ts,
            cpu,
            pid,
            prio: cs.waking_prio[i],
            target_cpu,
        }));
        stats.compact_wakings += 1;
    }
    if bad {
        stats.compact_malformed += 1;
    }
    Ok(())
}

/// Sorts the events by time (stable: file order among equal times) and fills in the prev
/// side of each compact switch from the switch before it on its CPU, regular or compact.
pub(super) fn resolve(mut items: Vec<Pending>, stats: &mut DecodeStats) -> Vec<TraceEvent> {
    items.sort_by_key(Pending::ts_ns);
    // CPU -> (pid, prio) switched in last. A map, not a vector: CPU ids come from the file.
    let mut current: BTreeMap<u32, (u32, i32)> = BTreeMap::new();
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        let ev = match it {
            Pending::Event(ev) => {
                if let TraceEvent::Switch {
                    cpu,
                    next_pid,
                    next_prio,
                    ..
                } = ev
                {
                    current.insert(cpu, (next_pid, next_prio));
                }
                ev
            }
            Pending::Switch {
                ts_ns,
                cpu,
                prev_state,
                next_pid,
                next_prio,
            } => {
                let (prev_pid, prev_prio, prev_state) =
                    match current.insert(cpu, (next_pid, next_prio)) {
                        Some((pid, prio)) => (pid, prio, state_from_bits(prev_state)),
                        None => {
                            stats.compact_no_prev += 1;
                            (0, DEFAULT_PRIO, PrevState::Runnable)
                        }
                    };
                TraceEvent::Switch {
                    ts_ns,
                    cpu,
                    prev_pid,
                    prev_prio,
                    prev_state,
                    next_pid,
                    next_prio,
                }
            }
        };
        out.push(ev);
    }
    out
}

/// `v` as a pid / CPU id, or an error naming the array entry.
fn id(ctx: &Ctx, v: i32, what: impl FnOnce() -> String) -> Result<u32, TraceError> {
    u32::try_from(v).map_err(|_| ctx.err(format!("compact_sched {} is negative ({v})", what())))
}
