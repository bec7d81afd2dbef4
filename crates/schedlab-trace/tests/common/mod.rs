//! Test helpers shared by the integration tests: a small hand-built trace
//! whose text and Perfetto renderings were checked by hand.

#![allow(dead_code)] // each test binary uses a different subset

use schedlab_trace::{PrevState, ThreadInfo, Trace, TraceEvent};

/// Two CPUs, a waker (100) waking a thread of its process (101) onto CPU 1 with
/// a placement annotation, a balancer migration, a fork (child 102 has no
/// thread entry, so it is `<...>`), a wakeup_new, an exit and a final switch
/// of the dead task. Timestamps are distinct except waking/placement.
pub fn tiny_trace() -> Trace {
    let t0 = 5_123_000_123_000u64;
    Trace {
        nr_cpus: 2,
        threads: vec![
            ThreadInfo {
                pid: 100,
                tgid: 100,
                comm: "hackbench".into(),
            },
            ThreadInfo {
                pid: 101,
                tgid: 100,
                comm: "worker 1".into(),
            },
        ],
        events: vec![
            TraceEvent::Switch {
                ts_ns: t0,
                cpu: 0,
                prev_pid: 0,
                prev_prio: 120,
                prev_state: PrevState::Runnable,
                next_pid: 100,
                next_prio: 120,
            },
            TraceEvent::Waking {
                ts_ns: t0 + 77_000,
                cpu: 0,
                pid: 101,
                prio: 120,
                target_cpu: 1,
            },
            TraceEvent::Placement {
                ts_ns: t0 + 77_000,
                cpu: 0,
                waker_pid: 100,
                wakee_pid: 101,
                prev_cpu: 1,
                target_cpu: 1,
                path: "affine:wake_affine_idle sis:idle_core".into(),
                examined: 3,
            },
            TraceEvent::Switch {
                ts_ns: t0 + 127_500,
                cpu: 1,
                prev_pid: 0,
                prev_prio: 120,
                prev_state: PrevState::Runnable,
                next_pid: 101,
                next_prio: 120,
            },
            TraceEvent::MigrateTask {
                ts_ns: t0 + 200_000,
                cpu: 1,
                pid: 100,
                prio: 120,
                orig_cpu: 0,
                dest_cpu: 1,
            },
            TraceEvent::Switch {
                ts_ns: t0 + 876_877,
                cpu: 0,
                prev_pid: 100,
                prev_prio: 120,
                prev_state: PrevState::Sleeping,
                next_pid: 0,
                next_prio: 120,
            },
            TraceEvent::ProcessFork {
                ts_ns: t0 + 900_000,
                cpu: 1,
                parent_pid: 101,
                child_pid: 102,
            },
            TraceEvent::WakeupNew {
                ts_ns: t0 + 900_100,
                cpu: 1,
                pid: 102,
                prio: 120,
                target_cpu: 0,
            },
            TraceEvent::ProcessExit {
                ts_ns: t0 + 1_000_000,
                cpu: 1,
                pid: 101,
            },
            TraceEvent::Switch {
                ts_ns: t0 + 1_000_001,
                cpu: 1,
                prev_pid: 101,
                prev_prio: 120,
                prev_state: PrevState::Dead,
                next_pid: 0,
                next_prio: 120,
            },
        ],
    }
}

/// Events in a total order (timestamp, then Debug text), for comparing traces
/// whose equal-timestamp events may legitimately come back reordered.
pub fn canonical(mut t: Trace) -> Trace {
    t.events
        .sort_by_cached_key(|e| (e.ts_ns(), format!("{e:?}")));
    t
}
