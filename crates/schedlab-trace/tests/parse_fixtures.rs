//! The text parser on committed real captures (tracefs `trace`, `trace_pipe`
//! with tgid and without irq flags, `perf script` in two layouts) and a
//! hand-written `trace-cmd report` file. Expected counts come from `grep`
//! over the fixtures, not from the parser (see tests/fixtures/README.md).

use std::collections::BTreeMap;
use std::path::PathBuf;

use schedlab_trace::ftrace::read_ftrace_file;
use schedlab_trace::{
    ParseStats, PrevState, Trace, TraceError, TraceEvent, parse_ftrace_text_with_stats,
};

fn fixture(name: &str) -> (Trace, ParseStats) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    parse_ftrace_text_with_stats(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn kinds(t: &Trace) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for e in &t.events {
        *m.entry(e.name()).or_insert(0) += 1;
    }
    m
}

fn states(t: &Trace) -> BTreeMap<PrevState, usize> {
    let mut m = BTreeMap::new();
    for e in &t.events {
        if let TraceEvent::Switch { prev_state, .. } = e {
            *m.entry(*prev_state).or_insert(0) += 1;
        }
    }
    m
}

#[test]
fn tracefs_trace_file_with_irq_flags() {
    let (t, stats) = fixture("tracefs_sleep.txt");
    assert_eq!(
        kinds(&t),
        BTreeMap::from([
            ("sched_switch", 77),
            ("sched_waking", 38),
            ("sched_wakeup", 38),
            ("sched_wakeup_new", 4),
            ("sched_migrate_task", 4),
            ("sched_process_fork", 4),
            ("sched_process_exit", 4),
        ])
    );
    // Header says entries-written 169 and #P:2.
    assert_eq!(stats.event_lines, 169);
    assert_eq!(stats.other_lines, 12);
    assert_eq!(stats.skipped_event_lines(), 0);
    assert_eq!(t.nr_cpus, 2);
    // grep: R 36 + R+ 1; S 16 + I 18; D 2; X 1 + Z 3.
    assert_eq!(
        states(&t),
        BTreeMap::from([
            (PrevState::Runnable, 37),
            (PrevState::Sleeping, 34),
            (PrevState::Uninterruptible, 2),
            (PrevState::Dead, 4),
        ])
    );
    assert!(t.is_sorted());
    // Line 13.
    assert_eq!(
        t.events[0],
        TraceEvent::ProcessFork {
            ts_ns: 602_899_705_000,
            cpu: 1,
            parent_pid: 9711,
            child_pid: 9713
        }
    );
    // Line 14.
    assert_eq!(
        t.events[1],
        TraceEvent::WakeupNew {
            ts_ns: 602_900_911_000,
            cpu: 1,
            pid: 9713,
            prio: 120,
            target_cpu: 0
        }
    );
    // Line 27: `prev_state=R+`, RT migration thread with prio 0.
    assert_eq!(
        t.events[14],
        TraceEvent::Switch {
            ts_ns: 602_904_965_000,
            cpu: 1,
            prev_pid: 9714,
            prev_prio: 120,
            prev_state: PrevState::Runnable,
            next_pid: 21,
            next_prio: 0,
        }
    );
    // Line 28.
    assert_eq!(
        t.events[15],
        TraceEvent::MigrateTask {
            ts_ns: 602_904_971_000,
            cpu: 1,
            pid: 9714,
            prio: 120,
            orig_cpu: 1,
            dest_cpu: 0
        }
    );
    // Comm with a space; comm that changed at exec (bash -> sleep): last payload name wins.
    assert_eq!(t.comm(9685), "lto cgu.03");
    assert_eq!(t.comm(9713), "sleep");
    assert_eq!(t.comm(15), "rcu_preempt");
    assert_eq!(t.comm(21), "migration/1");
    assert!(t.thread(0).is_none(), "idle is not a thread entry");
}

#[test]
fn trace_pipe_with_tgid_column_and_no_irq_flags() {
    let (t, stats) = fixture("tracefs_pipe_tgid_noirq.txt");
    assert_eq!(
        kinds(&t),
        BTreeMap::from([
            ("sched_switch", 43),
            ("sched_waking", 21),
            ("sched_migrate_task", 2)
        ])
    );
    assert_eq!(stats.event_lines, 66);
    assert_eq!(stats.other_lines, 0);
    // No header: CPU count inferred from the CPUs seen.
    assert_eq!(t.nr_cpus, 2);
    // `opt cgu.11-9867    (   9788) [001]`: thread of process 9788.
    let th = t.thread(9867).unwrap();
    assert_eq!((th.tgid, th.comm.as_str()), (9788, "opt cgu.11"));
    // `memfd:sealed-91-5268`: dash and colon inside the comm.
    assert_eq!(t.comm(5268), "memfd:sealed-91");
    assert_eq!(
        t.events[2],
        TraceEvent::Waking {
            ts_ns: 608_903_694_000,
            cpu: 1,
            pid: 5268,
            prio: 120,
            target_cpu: 1
        }
    );
    // Last line: `prev_state=Z`.
    match t.events.last().unwrap() {
        TraceEvent::Switch {
            prev_pid: 9875,
            prev_state: PrevState::Dead,
            next_pid: 9873,
            ..
        } => {}
        other => panic!("unexpected last event {other:?}"),
    }
}

#[test]
fn perf_script_default_fields() {
    let (t, stats) = fixture("perf_script.txt");
    assert_eq!(
        kinds(&t),
        BTreeMap::from([
            ("sched_switch", 26),
            ("sched_waking", 14),
            ("sched_wakeup", 13),
            ("sched_migrate_task", 3)
        ])
    );
    assert_eq!(stats.event_lines, 56);
    assert_eq!(
        t.events[0],
        TraceEvent::Waking {
            ts_ns: 611_608_906_000,
            cpu: 0,
            pid: 18,
            prio: 0,
            target_cpu: 0
        }
    );
    assert_eq!(
        t.events[4],
        TraceEvent::MigrateTask {
            ts_ns: 611_608_919_000,
            cpu: 0,
            pid: 9905,
            prio: 120,
            orig_cpu: 0,
            dest_cpu: 1
        }
    );
    assert_eq!(t.comm(9907), "lto cgu.00");
    // 9908 is perf-exec until it execs `sleep`; the last payload name wins.
    assert_eq!(t.comm(9908), "sleep");
}

#[test]
fn perf_script_pid_tid_and_ns_agrees_with_default_layout() {
    let (us, _) = fixture("perf_script.txt");
    let (ns, stats) = fixture("perf_script_tid_ns.txt");
    assert_eq!(stats.event_lines, 56);
    assert_eq!(ns.events[0].ts_ns(), 611_608_906_334);
    // Same recording: identical events once timestamps are cut to microseconds.
    assert_eq!(us.events.len(), ns.events.len());
    for (a, b) in us.events.iter().zip(&ns.events) {
        assert_eq!(a.ts_ns(), b.ts_ns() / 1000 * 1000);
        assert_eq!(
            format!("{a:?}").split("cpu:").nth(1),
            format!("{b:?}").split("cpu:").nth(1)
        );
    }
    // `perf  9905/9905`: tgid learned from the pid/tid column.
    assert_eq!(ns.thread(9905).unwrap().tgid, 9905);
    assert_eq!(ns.comm(9905), us.comm(9905));
}

#[test]
fn trace_cmd_report_compact_renderings() {
    let (t, stats) = fixture("trace_cmd_report.txt");
    assert_eq!(
        kinds(&t),
        BTreeMap::from([
            ("sched_switch", 11),
            ("sched_waking", 2),
            ("sched_wakeup", 2),
            ("sched_wakeup_new", 1),
            ("sched_migrate_task", 2),
            ("sched_process_fork", 1),
            ("sched_process_exit", 1),
        ])
    );
    assert_eq!(
        stats.skipped_events,
        BTreeMap::from([
            ("irq_handler_entry".to_string(), 1),
            ("irq_handler_exit".to_string(), 1)
        ])
    );
    assert_eq!(stats.other_lines, 4);
    assert_eq!(t.nr_cpus, 4, "from the `cpus=4` header");
    assert_eq!(
        t.events[1],
        TraceEvent::WakeupNew {
            ts_ns: 602_900_911_000,
            cpu: 1,
            pid: 9713,
            prio: 120,
            target_cpu: 0
        }
    );
    // `rcu_preempt:15 [120] success=1 CPU:001`
    assert_eq!(
        t.events[7],
        TraceEvent::Wakeup {
            ts_ns: 602_904_818_000,
            cpu: 0,
            pid: 15,
            prio: 120,
            target_cpu: 1
        }
    );
    // `bash:9714 [120] R+ ==> migration/1:21 [0]`
    assert_eq!(
        t.events[10],
        TraceEvent::Switch {
            ts_ns: 602_904_965_000,
            cpu: 1,
            prev_pid: 9714,
            prev_prio: 120,
            prev_state: PrevState::Runnable,
            next_pid: 21,
            next_prio: 0,
        }
    );
    assert_eq!(states(&t).get(&PrevState::Dead), Some(&1));
    assert_eq!(t.comm(9685), "lto cgu.03");
    assert_eq!(t.comm(5268), "memfd:sealed-91");
    assert_eq!(t.comm(9714), "sh");
}

fn parse_err(text: &str) -> String {
    schedlab_trace::parse_ftrace_text(text)
        .unwrap_err()
        .to_string()
}

#[test]
fn malformed_sched_lines_name_line_and_expectation() {
    let ok = "          <idle>-0       [000] d..2.     1.000000: sched_waking: comm=a pid=5 prio=120 target_cpu=001\n";
    let bad_num = "            a-5       [000] d..2.     1.000001: sched_switch: prev_comm=a prev_pid=x prev_prio=120 prev_state=S ==> next_comm=b next_pid=6 next_prio=120\n";
    assert_eq!(
        parse_err(&format!("# tracer: nop\n{ok}{bad_num}")),
        "line 3: sched_switch: expected an integer for `prev_pid`, found `x`"
    );
    let missing =
        "            a-5       [000] d..2.     1.000001: sched_waking: comm=b pid=6 prio=120\n";
    assert_eq!(
        parse_err(missing),
        "line 1: sched_waking: expected field `target_cpu=`, found `comm=b pid=6 prio=120`"
    );
    let bad_state = "            a-5       [000] d..2.     1.000001: sched_switch: prev_comm=a prev_pid=5 prev_prio=120 prev_state=Q ==> next_comm=b next_pid=6 next_prio=120\n";
    assert!(
        parse_err(bad_state).starts_with("line 1: sched_switch: expected a task state"),
        "{}",
        parse_err(bad_state)
    );
    let no_arrow =
        "            a-5       [000] d..2.     1.000001: sched_switch: prev_comm=a prev_pid=5\n";
    assert!(parse_err(no_arrow).contains("expected `PREV ==> NEXT`"));
    let bad_prefix = "garbage sched_switch: prev_comm=a prev_pid=5 ==> next_comm=b next_pid=6\n";
    let e = parse_err(bad_prefix);
    assert!(
        e.starts_with("line 1: sched_switch: expected an event line"),
        "{e}"
    );
    let bad_mark = "            a-5       [000] .....     1.000001: tracing_mark_write: schedlab_placement waker=5 wakee=6 path=x\n";
    assert!(parse_err(bad_mark).contains("expected field `prev_cpu=`"));
}

#[test]
fn unknown_events_and_other_text_are_skipped_and_counted() {
    let text = "\
CPU:1 [LOST 12 EVENTS]
##### CPU 2 buffer started ####
          <idle>-0       [000] d.h2.     1.000000: irq_handler_entry: irq=1 name=x
            bash-7       [000] .....     1.000001: tracing_mark_write: B|7|some atrace slice
            bash-7       [000] d..2.     1.000002: sched_waking: comm=a pid=5 prio=120 target_cpu=001
random words that are not a trace
";
    let (t, stats) = parse_ftrace_text_with_stats(text).unwrap();
    assert_eq!(t.events.len(), 1);
    assert_eq!(stats.event_lines, 1);
    assert_eq!(
        stats.skipped_events,
        BTreeMap::from([
            ("irq_handler_entry".to_string(), 1),
            ("tracing_mark_write".to_string(), 1)
        ])
    );
    assert_eq!(stats.other_lines, 3);
    // The task column names bash (pid 7) even though no payload does.
    assert_eq!(t.comm(7), "bash");
}

#[test]
fn read_file_errors_name_the_file() {
    let dir = std::env::temp_dir().join(format!("schedlab-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.txt");
    std::fs::write(
        &path,
        "  a-5 [000] 1.000001: sched_waking: comm=b pid=z prio=1 target_cpu=0\n",
    )
    .unwrap();
    let err = read_ftrace_file(&path).unwrap_err();
    assert!(matches!(err, TraceError::InFile { .. }));
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("{}: line 1: sched_waking:", path.display())),
        "{msg}"
    );
    let missing = read_ftrace_file(&dir.join("nope.txt"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("nope.txt: cannot read"), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}
