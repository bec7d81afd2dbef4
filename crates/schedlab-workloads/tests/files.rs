//! The TOML workload format and rt-app import: the shipped examples run, and malformed or
//! unsupported input gets an error naming the file, line and column, key or event.

mod common;

use common::*;
use schedlab_workloads::{WorkloadError, instantiate, parse_spec};
use std::path::PathBuf;

fn example(name: &str) -> String {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "..", "workloads", name]
        .iter()
        .collect();
    p.to_string_lossy().into_owned()
}

/// Writes `text` to a temporary file with `ext` and returns (dir guard, path).
fn temp(text: &str, ext: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("w.{ext}"));
    std::fs::write(&p, text).unwrap();
    (dir, p.to_string_lossy().into_owned())
}

fn file_err(text: &str) -> String {
    let (_d, p) = temp(text, "toml");
    match instantiate(&parse_spec(&format!("file:{p}")).unwrap(), &quad()) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn rtapp_err(text: &str) -> WorkloadError {
    let (_d, p) = temp(text, "json");
    instantiate(&parse_spec(&format!("rtapp:{p}")).unwrap(), &quad())
        .expect_err("expected an error")
}

#[test]
fn pingpong_example_runs_and_reports_its_histogram() {
    let (r, sim, inst) = run_spec(&format!("file:{}", example("pingpong.toml")), &quad()).unwrap();
    assert_eq!(sim.nr_tasks(), 2);
    assert_eq!(sim.channel_delivered(0) + sim.channel_delivered(1), 20_000);
    assert_eq!(val(&r, "round_trips"), 10_000.0);
    assert_eq!(r.headline().unwrap().name, "rtt_p50_us");
    assert_eq!(inst.headline().0, "rtt_p50_us");
    let p50 = val(&r, "rtt_p50_us");
    // Each round trip is the run's time divided by the count, give or take the histogram.
    let per = sim.now() as f64 / 1e3 / 10_000.0;
    assert!(
        (p50 - per).abs() / per < 0.2,
        "p50 {p50} µs vs {per} µs per round trip"
    );
    assert!(r.native.contains("histogram rtt: n=10000"), "{}", r.native);
    assert_eq!(r.workload, "file");
}

#[test]
fn dispatcher_example_runs_for_its_duration() {
    let (r, sim, inst) =
        run_spec(&format!("file:{}", example("dispatcher.toml")), &quad()).unwrap();
    assert_eq!(sim.now(), 200_000_000);
    assert_eq!(inst.workload.channels.len(), 2);
    // The 8 workers are threads of one address space.
    let workers: Vec<_> = inst
        .workload
        .initial
        .iter()
        .map(|&i| &inst.workload.specs[i])
        .filter(|s| s.comm == "worker")
        .collect();
    assert_eq!(workers.len(), 8);
    assert!(
        workers
            .iter()
            .all(|s| s.mm.is_some() && s.mm == workers[0].mm)
    );
    assert_eq!(
        sim.task_stats()
            .iter()
            .filter(|t| t.comm == "worker")
            .count(),
        8
    );
    let done = sim
        .workload()
        .channels
        .iter()
        .position(|c| c.name == "done")
        .unwrap();
    let n = val(&r, "requests");
    assert!(n > 1000.0 && (sim.channel_delivered(done) as f64 - n).abs() <= 8.0);
    assert!((val(&r, "requests_per_s") - n / 0.2).abs() < 1e-6);
}

#[test]
fn ring_example_closes_the_ring_with_index_arithmetic() {
    let (r, sim, inst) = run_spec(&format!("file:{}", example("ring.toml")), &quad()).unwrap();
    let names: Vec<_> = inst
        .workload
        .channels
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["ring0", "ring1", "ring2"]);
    assert_eq!(inst.workload.barriers, vec![4]);
    assert_eq!(val(&r, "hops"), 6000.0);
    assert_eq!(sim.nr_tasks(), 4);
}

#[test]
fn rtapp_examples_run() {
    let (r, sim, inst) = run_spec(&format!("rtapp:{}", example("periodic.json")), &quad()).unwrap();
    assert_eq!(sim.now(), 1_000_000_000);
    assert_eq!(inst.workload.initial.len(), 4);
    assert_eq!(r.headline().unwrap().name, "elapsed_s");
    // Two periodic tasks: 2 ms every 10 ms for 1 s is about 400 ms of CPU.
    let periodic: u64 = sim
        .task_stats()
        .iter()
        .filter(|t| t.comm == "periodic")
        .map(|t| t.sum_exec_ns)
        .sum();
    assert!((380_000_000..430_000_000).contains(&periodic), "{periodic}");
    // The consumer is woken through the condition variable, so it ran too.
    assert!(
        sim.task_stats()
            .iter()
            .any(|t| t.comm == "consumer" && t.sum_exec_ns > 10 * 800_000)
    );

    let (_, sim, _) = run_spec(&format!("rtapp:{}", example("phases.json")), &quad()).unwrap();
    assert!(sim.task_stats().iter().all(|t| t.exited));
    let heavy = sim
        .task_stats()
        .iter()
        .find(|t| t.comm == "light_then_heavy")
        .unwrap()
        .sum_exec_ns;
    // 5 × (10 × 1 ms + 10 × 8 ms) of run events.
    assert!(
        (440_000_000..465_000_000).contains(&heavy),
        "{heavy} (450 ms ± the profile's jitter)"
    );
}

#[test]
fn a_deadlocked_file_names_the_blocked_tasks() {
    let (_d, p) = temp(
        r#"
[[channel]]
name = "never"
kind = "pipe"
[[task]]
name = "waiter"
program = [ { op = "recv", channel = "never" } ]
"#,
        "toml",
    );
    let Err(err) = run_spec(&format!("file:{p}"), &quad()) else {
        panic!("expected a deadlock")
    };
    let WorkloadError::Deadlock { blocked, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(blocked.len(), 1);
    let msg = err.to_string();
    assert!(
        msg.contains("deadlocked") && msg.contains("waiter") && msg.contains("never"),
        "{msg}"
    );
}

#[test]
fn file_errors_carry_line_and_column() {
    let head = "[[channel]]\nname = \"ping\"\nkind = \"pipe\"\n[[task]]\nname = \"a\"\n";
    let e = file_err(&format!(
        "{head}program = [ {{ op = \"sned\", channel = \"ping\" }} ]\n"
    ));
    assert!(
        e.contains("line 6, column 20")
            && e.contains("unknown op 'sned'")
            && e.contains("did you mean 'send'"),
        "{e}"
    );
    let e = file_err(&format!(
        "{head}program = [ {{ op = \"send\", chanel = \"ping\" }} ]\n"
    ));
    assert!(
        e.contains("unknown field") && e.contains("chanel") && e.contains("line 6"),
        "{e}"
    );
    let e = file_err(&format!(
        "{head}program = [ {{ op = \"recv\", channel = \"pong\" }} ]\n"
    ));
    assert!(
        e.contains("line 6, column 38")
            && e.contains("unknown channel 'pong'")
            && e.contains("declared: ping"),
        "{e}"
    );
    let e = file_err(&format!(
        "{head}program = [ {{ op = \"recv\", channel = \"ping\", bytes = 4 }} ]\n"
    ));
    assert!(e.contains("does not take 'bytes'"), "{e}");
    let e = file_err(&format!(
        "{head}program = [ {{ op = \"compute\", time = \"5\" }} ]\n"
    ));
    assert!(
        e.contains("line 6, column 38") && e.contains("no unit"),
        "{e}"
    );
    let e = file_err(&format!(
        "{head}program = [ {{ op = \"compute\", dist = \"exp\" }} ]\n"
    ));
    assert!(e.contains("needs 'mean'"), "{e}");
    let e = file_err(&format!(
        "{head}program = [ {{ op = \"compute\" time = \"5us\" }} ]\n"
    ));
    assert!(e.contains("line 6"), "TOML syntax error: {e}");
    let e = file_err(&format!(
        "{head}cpus = \"7\"\nprogram = [ {{ op = \"yield\" }} ]\n"
    ));
    assert!(
        e.contains("CPU 7 does not exist on this 4-CPU machine"),
        "{e}"
    );
    let e = file_err(&format!(
        "{head}program = [ {{ op = \"barrier\", barrier = \"b\" }} ]\n"
    ));
    assert!(e.contains("unknown barrier 'b'"), "{e}");
    let e = file_err(&format!(
        "{head}program = [ {{ op = \"fork\", task = \"child\" }} ]\n"
    ));
    assert!(e.contains("fork of unknown task 'child'"), "{e}");
    let e = file_err(&format!(
        "{head}headline = \"x\"\nprogram = [ {{ op = \"yield\" }} ]\n"
    ));
    assert!(
        e.contains("unknown field") && e.contains("headline"),
        "headline belongs at the top: {e}"
    );
    let e =
        file_err("headline = \"nope\"\n[[task]]\nname = \"a\"\nprogram = [ { op = \"yield\" } ]\n");
    assert!(
        e.contains("headline 'nope' is not a metric") && e.contains("elapsed_s"),
        "{e}"
    );
    let e = file_err("[[task]]\nname = \"a\"\n");
    assert!(e.contains("has no program"), "{e}");
    let missing = instantiate(&parse_spec("file:/nonexistent/w.toml").unwrap(), &quad())
        .unwrap_err()
        .to_string();
    assert!(
        missing.contains("/nonexistent/w.toml") && missing.contains("cannot read"),
        "{missing}"
    );
}

#[test]
fn forks_barriers_locks_and_per_instance_names_lower_correctly() {
    let text = r#"
name = "mix"
[[barrier]]
name = "go"
[[task]]
name = "child"
start = false
program = [ { op = "compute", time = "100us" } ]
[[task]]
name = "parent"
count = 3
program = [
  { op = "barrier", barrier = "go" },
  { op = "fork", task = "child", count = 2 },
  { op = "wait_children" },
  { op = "lock", mutex = "m", spin = "forever" },
  { op = "compute", dist = "uniform", min = "10us", max = "20us" },
  { op = "unlock", mutex = "m" },
  { op = "lock", mutex = "pc", per_cpu = true },
  { op = "unlock", mutex = "pc", per_cpu = true },
  { op = "stamp", slot = "t0" },
  { op = "sleep", dist = "choice", values = ["10us", "30us"], weights = [1, 3] },
  { op = "record", hist = "lat", since = "t0" },
]
"#;
    let (_d, p) = temp(text, "toml");
    let (r, sim, inst) = run_spec(&format!("file:{p}"), &quad()).unwrap();
    assert_eq!(inst.workload.barriers, vec![3]);
    // One fixed mutex plus one per CPU.
    assert_eq!(inst.workload.mutexes, 1 + 4);
    assert_eq!(sim.nr_tasks(), 3 + 6);
    assert!(sim.task_stats().iter().all(|t| t.exited));
    assert!(val(&r, "lat_p50_us") >= 10.0);
}

#[test]
fn rtapp_unsupported_events_are_named() {
    let e = rtapp_err(
        r#"{ "tasks": { "t1": { "loop": 1, "run": 10, "iorun": 100 }, "t2": { "loop": 1, "sync": { "ref": "c", "mutex": "m" } } } }"#,
    );
    let WorkloadError::RtAppUnsupported { items, what, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(what, "events");
    assert_eq!(items.len(), 2);
    let msg = e.to_string();
    assert!(
        msg.contains("\"iorun\" in task t1")
            && msg.contains("\"sync\" in task t2")
            && msg.contains("supported events: run"),
        "{msg}"
    );
    let e = rtapp_err(r#"{ "tasks": { "rt": { "policy": "SCHED_FIFO", "priority": 10, "loop": 1, "run": 10 } } }"#).to_string();
    assert!(e.contains("rt.policy SCHED_FIFO"), "{e}");
    let e = rtapp_err(r#"{ "tasks": { "t": { "run": 10, "sleep": 10 } } }"#).to_string();
    assert!(e.contains("never end"), "{e}");
    let e = rtapp_err("{ \"tasks\": { \"t\": { \"loop\": 1,\n \"run\": 10,, } } }").to_string();
    assert!(e.contains("invalid JSON") && e.contains("line 2"), "{e}");
    let e = rtapp_err(r#"{ "tasks": { "t": { "loop": 1, "run": "ten" } } }"#).to_string();
    assert!(e.contains("t.run") && e.contains("microseconds"), "{e}");
}

#[test]
fn rtapp_fork_suspend_resume_and_barriers() {
    let json = r#"
// comments are allowed
{
  "global": { "duration": -1, "calibration": 100 },
  "tasks": {
    "parent": { "loop": 3, "run": 100, "fork": "kid", "barrier": "b", "resume": "sleeper", "sleep": 50 },
    "kid": { "instance": 0, "loop": 1, "runtime": 200 },
    "peer": { "loop": 3, "barrier": "b", "yield": "" },
    "sleeper": { "loop": 3, "suspend": "", "mem": 100000 }
  }
}"#;
    let (_d, p) = temp(json, "json");
    let (_, sim, inst) = run_spec(&format!("rtapp:{p}"), &quad()).unwrap();
    assert_eq!(inst.workload.barriers, vec![2]);
    // parent, peer, sleeper at start; 3 kids forked.
    assert_eq!(inst.workload.initial.len(), 3);
    assert_eq!(sim.nr_tasks(), 6);
    assert!(sim.task_stats().iter().all(|t| t.exited));
}

#[test]
fn spec_values_out_of_range_are_refused_at_instantiate() {
    let topo = quad();
    let e = |s: &str| {
        instantiate(&parse_spec(s).unwrap(), &topo)
            .unwrap_err()
            .to_string()
    };
    let m = e("hackbench:groups=0");
    assert!(
        m.contains("hackbench: groups=0: must be between 1 and"),
        "{m}"
    );
    let m = e("tbench:duration=0s");
    assert!(m.contains("duration=0s") && m.contains("between"), "{m}");
    let m = e("lmbench-bw:size=64K,total=1K");
    assert!(
        m.contains("total") && m.contains("at least one write"),
        "{m}"
    );
    let m = e("hackbench:groups=10000");
    assert!(m.contains("more than the"), "{m}");
}

/// Engine issue found while testing schbench v1 (reported to the lead): with this futex /
/// wait-list pattern, some 17 ms computes finish early (request latencies of 9 µs - 3.3 ms
/// are recorded), which inflates schbench v1's RPS by ~5 %. Without the list handshake no
/// compute is cut short. Regression test for the engine bug fixed in `switch_to` (a preempted
/// task resumed its next op before finishing its interrupted segment).
#[test]
fn engine_issue_compute_cut_short_after_list_wakeups() {
    let text = r#"
duration = "1s"
[[task]]
name = "m"
program = [ { op = "loop", count = "forever", body = [ { op = "futex_wait", futex = "f" }, { op = "wake_list", list = "l" } ] } ]
[[task]]
name = "w"
count = 4
program = [ { op = "loop", count = "forever", body = [
  { op = "list_add", list = "l" }, { op = "futex_wake", futex = "f" }, { op = "wait_self" },
  { op = "stamp", slot = 0 }, { op = "compute", time = "17ms" },
  { op = "record", hist = "req", since = 0 } ] } ]
"#;
    let (_d, p) = temp(text, "toml");
    let (r, sim, _) = run_spec(&format!("file:{p}"), &quad()).unwrap();
    let h = sim.user_hist(0);
    // Every sample is at least the 17 ms compute (less the profile's 2 % jitter).
    let short = h.count_between(0, 16_500_000);
    assert_eq!(
        short,
        0,
        "{short} of {} computes finished early\n{}",
        h.len(),
        r.native
    );
}

/// What can only be a mistake is refused when the file is read (issue 49): a choice whose
/// weights are all 0, a zero duration, a `record` since a slot nothing stamps, an `unlock`
/// of a mutex nothing locks.
#[test]
fn mistakes_seen_without_running_are_refused() {
    let task = |prog: &str| format!("[[task]]\nname = \"a\"\nprogram = [ {prog} ]\n");
    let e = file_err(&task(
        r#"{ op = "compute", dist = "choice", values = ["1ms", "2ms"], weights = [0, 0] }"#,
    ));
    assert!(e.contains("every weight is 0"), "{e}");
    let e = file_err(&format!(
        "duration = \"0s\"\n{}",
        task(r#"{ op = "compute", time = "1ms" }"#)
    ));
    assert!(e.contains("duration must be past zero"), "{e}");
    let e = file_err(&task(r#"{ op = "record", hist = "h", since = 0 }"#));
    assert!(
        e.contains("record since slot 0") && e.contains("line 3"),
        "{e}"
    );
    let e = file_err(&task(r#"{ op = "record", hist = "h", since = "g" }"#));
    assert!(e.contains("slot \"g\", which no op stamps"), "{e}");
    let e = file_err(&task(r#"{ op = "unlock", mutex = "m" }"#));
    assert!(e.contains("unlock of mutex 'm', which no op locks"), "{e}");
    // Stamped or locked somewhere, they stand (a global slot by another task).
    let ok = format!(
        "{}[[task]]\nname = \"b\"\nprogram = [ {{ op = \"stamp\", slot = \"g\" }}, {{ op = \"lock\", mutex = \"m\" }} ]\n",
        task(r#"{ op = "record", hist = "h", since = "g" }, { op = "unlock", mutex = "m" }"#)
    );
    let (_d, p) = temp(&ok, "toml");
    instantiate(&parse_spec(&format!("file:{p}")).unwrap(), &quad()).unwrap();
}

/// Inputs as editors and tools write them: a byte-order mark is read past, gzip data is
/// named, a lookalike digit is named.
#[test]
fn byte_order_marks_gzip_and_lookalikes() {
    let text = "[[task]]\nname = \"a\"\nprogram = [ { op = \"compute\", time = \"1ms\" } ]\n";
    let (_d, p) = temp(&format!("\u{feff}{text}"), "toml");
    instantiate(&parse_spec(&format!("file:{p}")).unwrap(), &quad()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("w.toml");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0]).unwrap();
    let e = instantiate(
        &parse_spec(&format!("file:{}", gz.display())).unwrap(),
        &quad(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("gzip-compressed"), "{e}");
    let e = file_err(&text.replace("1ms", "\u{ff11}ms"));
    assert!(e.contains("U+FF11"), "{e}");
    let (_d, p) = temp(&text.replace("1ms", "1\u{3bc}s"), "toml");
    instantiate(&parse_spec(&format!("file:{p}")).unwrap(), &quad()).unwrap();
}

/// rt-app keeps the last value of a key given twice in one object (json-c replaces it in
/// place): one run of 5 ms, not 1 ms and 5 ms.
#[test]
fn rtapp_duplicate_key_keeps_the_last_value() {
    let run = |json: &str| {
        let (_d, p) = temp(json, "json");
        run_spec(&format!("rtapp:{p}"), &quad()).unwrap().1.now()
    };
    let dup = run(r#"{ "tasks": { "t": { "loop": 1, "run": 1000, "run": 5000 } } }"#);
    let once = run(r#"{ "tasks": { "t": { "loop": 1, "run": 5000 } } }"#);
    assert_eq!(dup, once);
}
