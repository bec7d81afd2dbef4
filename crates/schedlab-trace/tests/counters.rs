//! `analysis::counters` on a hand-built trace whose answers were worked out
//! by hand (see the comments), and on a real capture (counts from grep/awk).

use schedlab_trace::{LatencySummary, PerCpuTime, PrevState, Trace, TraceEvent, counters};

fn sw(ts_ns: u64, cpu: u32, prev_pid: u32, prev_state: PrevState, next_pid: u32) -> TraceEvent {
    TraceEvent::Switch {
        ts_ns,
        cpu,
        prev_pid,
        prev_prio: 120,
        prev_state,
        next_pid,
        next_prio: 120,
    }
}

/// 3 CPUs (CPU 2 never switches). Timeline, ns:
/// cpu0: idle→10 @0; 10 preempted (R)→30 @300; 30 blocks (D)→40 @700; 40 sleeps (S)→idle @960.
/// cpu1: idle→20 @150; 20 sleeps (S)→10 @500; 10 exits (X)→20 @900.
/// Wakes: 20 @100 (cpu0→1, remote, placed 0→1, migrated @110 on the wake path, sched_wakeup @120),
/// 20 @600 (cpu1→1 local), 40 new @650, 40 @950 while running (dropped when it switches out @960).
/// Balancer migration of 10 @400. Fork @800, exits @850 and @1000 (last event).
fn hand_trace() -> Trace {
    use PrevState::*;
    Trace {
        nr_cpus: 3,
        threads: vec![],
        events: vec![
            sw(0, 0, 0, Runnable, 10),
            TraceEvent::Waking {
                ts_ns: 100,
                cpu: 0,
                pid: 20,
                prio: 120,
                target_cpu: 1,
            },
            TraceEvent::Placement {
                ts_ns: 100,
                cpu: 0,
                waker_pid: 10,
                wakee_pid: 20,
                prev_cpu: 0,
                target_cpu: 1,
                path: "sis:idle_cpu".into(),
                examined: 2,
            },
            TraceEvent::MigrateTask {
                ts_ns: 110,
                cpu: 0,
                pid: 20,
                prio: 120,
                orig_cpu: 0,
                dest_cpu: 1,
            },
            TraceEvent::Wakeup {
                ts_ns: 120,
                cpu: 1,
                pid: 20,
                prio: 120,
                target_cpu: 1,
            },
            sw(150, 1, 0, Runnable, 20),
            sw(300, 0, 10, Runnable, 30),
            TraceEvent::MigrateTask {
                ts_ns: 400,
                cpu: 1,
                pid: 10,
                prio: 120,
                orig_cpu: 0,
                dest_cpu: 1,
            },
            sw(500, 1, 20, Sleeping, 10),
            TraceEvent::Waking {
                ts_ns: 600,
                cpu: 1,
                pid: 20,
                prio: 120,
                target_cpu: 1,
            },
            TraceEvent::WakeupNew {
                ts_ns: 650,
                cpu: 0,
                pid: 40,
                prio: 120,
                target_cpu: 0,
            },
            sw(700, 0, 30, Uninterruptible, 40),
            TraceEvent::ProcessFork {
                ts_ns: 800,
                cpu: 0,
                parent_pid: 40,
                child_pid: 41,
            },
            TraceEvent::ProcessExit {
                ts_ns: 850,
                cpu: 1,
                pid: 10,
            },
            sw(900, 1, 10, Dead, 20),
            TraceEvent::Waking {
                ts_ns: 950,
                cpu: 0,
                pid: 40,
                prio: 120,
                target_cpu: 0,
            },
            sw(960, 0, 40, Sleeping, 0),
            TraceEvent::ProcessExit {
                ts_ns: 1000,
                cpu: 0,
                pid: 41,
            },
        ],
    }
}

#[test]
fn hand_built_trace_has_the_hand_computed_counters() {
    let c = counters(&hand_trace());
    assert_eq!(c.nr_cpus, 3);
    assert_eq!(
        (c.first_ts_ns, c.last_ts_ns, c.duration_ns()),
        (0, 1000, 1000)
    );
    assert_eq!(c.context_switches, 7);
    assert_eq!(c.switches_from_idle, 2); // @0, @150
    assert_eq!(c.voluntary_switches, 3); // S @500, D @700, S @960
    assert_eq!(c.involuntary_switches, 1); // R @300
    assert_eq!(c.exit_switches, 1); // X @900
    assert_eq!((c.wakeups, c.wakeups_local, c.wakeups_remote), (3, 2, 1));
    assert_eq!((c.wakeup_events, c.wakeup_new), (1, 1));
    assert_eq!(
        (c.migrations, c.wake_migrations, c.balance_migrations),
        (2, 1, 1)
    );
    assert_eq!((c.placements, c.placements_moved), (1, 1));
    assert_eq!((c.forks, c.exits), (1, 2));
    // cpu0: busy 0-300 (10), 300-700 (30), 700-960 (40); idle 960-1000.
    // cpu1: idle 0-150; busy 150-500 (20), 500-900 (10), 900-1000 (20).
    assert_eq!(
        c.per_cpu,
        vec![
            PerCpuTime {
                busy_ns: 960,
                idle_ns: 40,
                switches: 4,
                observed: true
            },
            PerCpuTime {
                busy_ns: 850,
                idle_ns: 150,
                switches: 3,
                observed: true
            },
            PerCpuTime {
                busy_ns: 0,
                idle_ns: 0,
                switches: 0,
                observed: false
            },
        ]
    );
    assert_eq!(c.busy_ns_total(), 1810);
    // 20: 100→150; 40: 650→700; 20: 600→900. The wake of running 40 @950 is dropped.
    assert_eq!(c.wakeup_latencies_ns, vec![50, 50, 300]);
    assert_eq!(
        c.latency_summary(),
        Some(LatencySummary {
            count: 3,
            p50_ns: 50,
            p90_ns: 300,
            p99_ns: 300,
            max_ns: 300
        })
    );
    assert_eq!(
        (
            c.latency_p50(),
            c.latency_p90(),
            c.latency_p99(),
            c.latency_max()
        ),
        (Some(50), Some(300), Some(300), Some(300))
    );
    let text = c.to_text();
    assert!(
        text.contains("context switches: 7 (voluntary 3, involuntary 1, exit 1, from idle 2)"),
        "{text}"
    );
    assert!(
        text.contains("migrations: 2 (at wakeup 1, by balancer 1)"),
        "{text}"
    );
    assert!(
        text.contains("  0          960           40  96.0%         4"),
        "{text}"
    );
    assert!(
        text.contains("wakeup latency: n=3 p50=50 ns p90=300 ns p99=300 ns max=300 ns"),
        "{text}"
    );
}

#[test]
fn counters_do_not_depend_on_event_order_in_the_vec() {
    let sorted = hand_trace();
    let mut shuffled = sorted.clone();
    shuffled.events.reverse();
    // Equal timestamps exist only at 100 (waking, placement), which commute.
    assert_eq!(counters(&shuffled), counters(&sorted));
}

#[test]
fn real_capture_counters_match_grep() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tracefs_sleep.txt"
    );
    let t = schedlab_trace::ftrace::read_ftrace_file(std::path::Path::new(path)).unwrap();
    let c = counters(&t);
    // awk over prev_state / prev_pid: 0 from idle, 37 R, 36 S/I/D, 4 X/Z.
    assert_eq!(
        (
            c.context_switches,
            c.switches_from_idle,
            c.involuntary_switches,
            c.voluntary_switches,
            c.exit_switches
        ),
        (77, 0, 37, 36, 4)
    );
    // sed over `[CPU]` vs `target_cpu`: 26 local, 12 remote.
    assert_eq!((c.wakeups, c.wakeups_local, c.wakeups_remote), (38, 26, 12));
    assert_eq!((c.migrations, c.wakeup_new, c.forks, c.exits), (4, 4, 4, 4));
    assert_eq!(c.wake_migrations + c.balance_migrations, 4);
    for (cpu, pc) in c.per_cpu.iter().enumerate() {
        assert!(pc.observed, "cpu {cpu}");
        assert_eq!(pc.busy_ns + pc.idle_ns, c.duration_ns(), "cpu {cpu}");
    }
    // Loose bounds: at most one latency per wake event; all within the trace.
    assert!(!c.wakeup_latencies_ns.is_empty());
    assert!(c.wakeup_latencies_ns.len() <= 38 + 4);
    assert!(c.latency_max().unwrap() <= c.duration_ns());
}
