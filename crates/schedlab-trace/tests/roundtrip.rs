//! Property tests: any trace survives ftrace text → parse exactly, and
//! Perfetto → decode up to the order of equal-timestamp events.

mod common;

use proptest::prelude::*;
use schedlab_trace::{
    PrevState, ThreadInfo, Trace, TraceEvent, decode_perfetto, parse_ftrace_text,
    write_ftrace_text, write_perfetto,
};

fn arb_comm() -> impl Strategy<Value = String> {
    // Real comms: slashes, colons, dots, dashes, brackets, parentheses and
    // single inner spaces (`kworker/u4:1-events`, `lto cgu.03`, `(sd-pam)`).
    // No `=` (tracefs cannot delimit such names either) and no edge spaces.
    "[a-zA-Z0-9_(\\[][a-zA-Z0-9_/:.()\\[\\]-]{0,10}( [a-zA-Z0-9_/:.-]{1,6})?"
}

fn arb_state() -> impl Strategy<Value = PrevState> {
    prop_oneof![
        Just(PrevState::Runnable),
        Just(PrevState::Sleeping),
        Just(PrevState::Uninterruptible),
        Just(PrevState::Dead)
    ]
}

fn arb_event(nr: u32, pids: Vec<u32>) -> impl Strategy<Value = TraceEvent> {
    let mut with_idle = pids.clone();
    with_idle.push(0);
    let cpu = 0..nr;
    let pid = proptest::sample::select(pids);
    let any_pid = proptest::sample::select(with_idle);
    let prio = -1i32..140;
    prop_oneof![
        (
            cpu.clone(),
            any_pid.clone(),
            prio.clone(),
            arb_state(),
            any_pid.clone(),
            prio.clone()
        )
            .prop_map(
                |(cpu, prev_pid, prev_prio, prev_state, next_pid, next_prio)| TraceEvent::Switch {
                    ts_ns: 0,
                    cpu,
                    prev_pid,
                    prev_prio,
                    prev_state,
                    next_pid,
                    next_prio
                }
            ),
        (cpu.clone(), pid.clone(), prio.clone(), cpu.clone()).prop_map(
            |(cpu, pid, prio, target_cpu)| TraceEvent::Waking {
                ts_ns: 0,
                cpu,
                pid,
                prio,
                target_cpu
            }
        ),
        (cpu.clone(), pid.clone(), prio.clone(), cpu.clone()).prop_map(
            |(cpu, pid, prio, target_cpu)| TraceEvent::Wakeup {
                ts_ns: 0,
                cpu,
                pid,
                prio,
                target_cpu
            }
        ),
        (cpu.clone(), pid.clone(), prio.clone(), cpu.clone()).prop_map(
            |(cpu, pid, prio, target_cpu)| TraceEvent::WakeupNew {
                ts_ns: 0,
                cpu,
                pid,
                prio,
                target_cpu
            }
        ),
        (
            cpu.clone(),
            pid.clone(),
            prio.clone(),
            cpu.clone(),
            cpu.clone()
        )
            .prop_map(
                |(cpu, pid, prio, orig_cpu, dest_cpu)| TraceEvent::MigrateTask {
                    ts_ns: 0,
                    cpu,
                    pid,
                    prio,
                    orig_cpu,
                    dest_cpu
                }
            ),
        (cpu.clone(), pid.clone(), pid.clone()).prop_map(|(cpu, parent_pid, child_pid)| {
            TraceEvent::ProcessFork {
                ts_ns: 0,
                cpu,
                parent_pid,
                child_pid,
            }
        }),
        (cpu.clone(), pid.clone()).prop_map(|(cpu, pid)| TraceEvent::ProcessExit {
            ts_ns: 0,
            cpu,
            pid
        }),
        (
            cpu.clone(),
            any_pid,
            pid,
            cpu.clone(),
            cpu,
            // Free text to the end of the line, `=` and colons included; may be empty.
            "([a-z_:]{1,12}( [a-z_:=0-9]{1,10}){0,3})?",
            0u32..64
        )
            .prop_map(
                |(cpu, waker_pid, wakee_pid, prev_cpu, target_cpu, path, examined)| {
                    TraceEvent::Placement {
                        ts_ns: 0,
                        cpu,
                        waker_pid,
                        wakee_pid,
                        prev_cpu,
                        target_cpu,
                        path,
                        examined,
                    }
                }
            ),
    ]
}

fn with_ts(ev: TraceEvent, t: u64) -> TraceEvent {
    let mut ev = ev;
    match &mut ev {
        TraceEvent::Switch { ts_ns, .. }
        | TraceEvent::Waking { ts_ns, .. }
        | TraceEvent::Wakeup { ts_ns, .. }
        | TraceEvent::WakeupNew { ts_ns, .. }
        | TraceEvent::MigrateTask { ts_ns, .. }
        | TraceEvent::ProcessFork { ts_ns, .. }
        | TraceEvent::ProcessExit { ts_ns, .. }
        | TraceEvent::Placement { ts_ns, .. } => *ts_ns = t,
    }
    ev
}

fn arb_trace() -> impl Strategy<Value = Trace> {
    (
        1u32..=8,
        proptest::collection::btree_set(1u32..4_000_000, 1..6),
    )
        .prop_flat_map(|(nr, pids)| {
            let pids: Vec<u32> = pids.into_iter().collect();
            let n = pids.len();
            (
                Just(nr),
                Just(pids.clone()),
                proptest::collection::vec(arb_comm(), n),
                proptest::collection::vec(0..n, n),
                proptest::collection::vec((0u64..3_000_000, arb_event(nr, pids)), 0..40),
                0u64..20_000_000_000_000,
            )
        })
        .prop_map(|(nr, pids, comms, leader, evs, start)| {
            let threads = pids
                .iter()
                .zip(comms)
                .zip(&leader)
                .map(|((&pid, comm), &l)| ThreadInfo {
                    pid,
                    tgid: pids[l],
                    comm,
                })
                .collect();
            let mut ts = start;
            let events = evs
                .into_iter()
                .map(|(delta, ev)| {
                    ts += delta;
                    with_ts(ev, ts)
                })
                .collect();
            Trace {
                nr_cpus: nr,
                threads,
                events,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn ftrace_text_round_trip(trace in arb_trace()) {
        let mut out = Vec::new();
        write_ftrace_text(&trace, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let back = parse_ftrace_text(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, trace);
    }

    #[test]
    fn perfetto_round_trip(trace in arb_trace()) {
        let mut out = Vec::new();
        write_perfetto(&trace, &mut out).unwrap();
        let back = decode_perfetto(&out).unwrap();
        prop_assert_eq!(common::canonical(back), common::canonical(trace));
    }

    /// Junk and near-miss lines (pieces of real lines glued at random) give
    /// `Ok` or a `Parse` error naming a line in range, never a panic.
    #[test]
    fn parser_never_panics(lines in proptest::collection::vec(
        proptest::collection::vec(
            prop_oneof![
                Just("  bash-12 ".to_string()),
                Just("[001]".to_string()),
                Just(" d..2. ".to_string()),
                Just("  12.000345:".to_string()),
                Just(" sched_switch: ".to_string()),
                Just(" sched_waking: ".to_string()),
                Just(" sched:sched_wakeup: ".to_string()),
                Just(" tracing_mark_write: schedlab_placement ".to_string()),
                Just("prev_comm=a b prev_pid=".to_string()),
                Just(" ==> ".to_string()),
                Just("next_pid=0 next_prio=120".to_string()),
                Just("comm=x pid=3 prio=120 target_cpu=002".to_string()),
                Just("x:5 [120] R+".to_string()),
                Just("(   77)".to_string()),
                Just("\u{e9}\u{1f600}[".to_string()),
                "[ -~]{0,12}",
            ],
            0..8,
        ).prop_map(|parts| parts.concat()),
        0..12,
    )) {
        let text = lines.join("\n");
        match parse_ftrace_text(&text) {
            Ok(_) => {}
            Err(schedlab_trace::TraceError::Parse { line, .. }) => prop_assert!(line >= 1 && line <= lines.len()),
            Err(other) => prop_assert!(false, "unexpected error kind: {other}"),
        }
    }
}
