//! CLI tests of run / compare / merge / validate / bench: every workload runs under old and
//! new eras on a NUMA preset, outputs are written where asked, bad input exits 2 with a
//! message.

mod common;

use common::{schedlab, success, tempdir};

use predicates::prelude::*;

fn repo(p: &str) -> String {
    format!("{}/../../{p}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_workload_runs_under_old_and_new_eras() {
    let specs = [
        "hackbench:groups=2,loops=10".to_string(),
        "pipe:loops=500".into(),
        "tbench:clients=3,duration=20ms".into(),
        "netperf-rr:pairs=2,duration=20ms".into(),
        "pgbench:clients=3,duration=20ms".into(),
        "sysbench:threads=3,duration=20ms".into(),
        "schbench:runtime=100ms,message_threads=1,threads=2,sleeptime=5ms,cputime=5ms".into(),
        "schbench:version=v1,runtime=50ms,threads=2".into(),
        "aim7-compute:tasks=4,jobs=2".into(),
        "kernbench:files=10".into(),
        "numa-test:tasks=4,work=5ms,hackbench_loops=2".into(),
        "lmbench-bw:total=1M".into(),
        "lat-ctx:rounds=100".into(),
        format!("file:{}", repo("workloads/pingpong.toml")),
        format!("rtapp:{}", repo("workloads/periodic.json")),
    ];
    for v in ["linux-2.5.59", "linux-6.12"] {
        for w in &specs {
            schedlab()
                .args(["run", "-t", "tx7-4n2c", "-v", v, "-w", w])
                .assert()
                .success()
                .stdout(predicate::str::contains("# counters"));
        }
    }
}

#[test]
fn compare_writes_json_csv_plot_and_report() {
    let dir = tempdir();
    let svg = dir.path().join("p.svg");
    let html = dir.path().join("r.html");
    let out = schedlab()
        .args([
            "compare",
            "-w",
            "pipe:loops=300",
            "-v",
            "linux-6.6",
            "-v",
            "waker",
            "--reps",
            "2",
            "--json",
        ])
        .arg("--plot")
        .arg(&svg)
        .arg("--report")
        .arg(&html)
        .assert()
        .success();
    let j: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(j["schema"], "schedlab.compare/1");
    assert_eq!(j["points"][0]["variants"].as_array().unwrap().len(), 2);
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.contains("<svg") && svg_text.contains("waker"));
    let page = std::fs::read_to_string(&html).unwrap();
    // Self-contained: no script, style sheet or image fetched from anywhere.
    assert!(page.contains("<table") && page.contains("<svg"));
    for external in [
        "src=\"http",
        "href=\"http",
        "@import",
        "<script src",
        "<link",
    ] {
        assert!(
            !page.contains(external),
            "report references an external resource: {external}"
        );
    }
    // The header says how the page was made; verdicts carry a direction; the raw JSON is
    // folded away, not on the page.
    for needle in [
        "(commit ",
        "schedlab compare -w pipe:loops=300",
        "seed</td><td>1 ",
        "built-in profile of desktop-4c8t",
        "Ratio to the baseline",
        "<details><summary>Raw JSON",
    ] {
        assert!(page.contains(needle), "report lacks {needle:?}");
    }
    assert!(
        page.contains("class=\"better\"")
            || page.contains("class=\"worse\"")
            || page.contains("class=\"same\"")
    );
    assert!(
        !page.contains(".0000<"),
        "integer counters printed with decimals"
    );
    // The default plot is the ratio to the baseline, in the Okabe-Ito colours.
    assert!(svg_text.contains("/ linux-6.6"), "not a ratio plot");
    assert!(svg_text.contains("#0072B2"), "not the Okabe-Ito palette");
    schedlab()
        .args([
            "compare",
            "-w",
            "pipe:loops=300",
            "-v",
            "linux-6.6",
            "-v",
            "waker",
            "--reps",
            "2",
            "--csv",
        ])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("variant,metric,unit,n,mean"));
}

#[test]
fn run_writes_traces_in_both_formats() {
    let dir = tempdir();
    for name in ["t.pftrace", "t.txt"] {
        let p = dir.path().join(name);
        schedlab()
            .args(["run", "-w", "hackbench:groups=1,loops=5", "--trace"])
            .arg(&p)
            .assert()
            .success();
        let bytes = std::fs::read(&p).unwrap();
        assert!(bytes.len() > 1000, "{name}: {} bytes", bytes.len());
        if name.ends_with(".pftrace") {
            let t = schedlab_trace::perfetto::decode_perfetto(&bytes).unwrap();
            assert!(
                t.events
                    .iter()
                    .any(|e| matches!(e, schedlab_trace::TraceEvent::Placement { .. }))
            );
            assert!(
                t.events
                    .iter()
                    .any(|e| matches!(e, schedlab_trace::TraceEvent::Switch { .. }))
            );
        } else {
            let text = String::from_utf8(bytes).unwrap();
            assert!(
                text.contains("sched_switch")
                    && text.contains("sched_waking")
                    && text.contains("schedlab_placement")
            );
        }
    }
}

#[test]
fn loaded_loopback_runs_show_ksoftirqd_in_counters_and_trace() {
    // 40 tbench pairs on 40 CPUs (linux-6.6): a tick during a loopback softirq whose reader
    // wakeup preempts the sender leaves the rest to ksoftirqd (the load at which the kernel
    // hands loopback receive work to ksoftirqd, so the counters and the trace must show it).
    let dir = tempdir();
    let p = dir.path().join("t.txt");
    let out = schedlab()
        .args([
            "run",
            "-t",
            "westmere-2s20c",
            "-w",
            "tbench:clients=40,duration=20ms",
        ])
        .arg("--trace")
        .arg(&p)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("wake paths: from softirq "), "{text}");
    assert!(text.contains("ksoftirqd: woken "), "{text}");
    let trace = std::fs::read_to_string(&p).unwrap();
    assert!(
        trace.contains("comm=ksoftirqd/"),
        "no ksoftirqd thread in the trace"
    );
    assert!(
        trace.contains("next_comm=ksoftirqd/"),
        "ksoftirqd never ran"
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    for (args, needle) in [
        (vec!["run", "-w", "hackbnech"], "hackbench"),
        (vec!["run", "-v", "linux-6.6,NO_SIS_UTLI"], "SIS_UTIL"),
        (vec!["run", "-t", "westmere-2s"], "westmere-2s20c"),
        (vec!["run", "-w", "tbench:duration=2"], "unit"),
        (
            vec!["compare", "--shard", "3/2", "--out", "/tmp/x.jsonl"],
            "K/N",
        ),
        (vec!["validate", "R9"], "R1"),
        // The host grammar is the simulator's (an empty item is refused), so one spec means
        // the same on both sides of `host check`.
        (
            vec!["host", "run", "hackbench:groups=1,,loops=2"],
            "empty parameter",
        ),
        (vec!["bench", "--only", "nothing-like-this"], "no scenario"),
    ] {
        schedlab()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle));
    }
}

#[test]
fn host_check_prints_both_sides_with_errors() {
    let out = schedlab()
        .args([
            "host",
            "check",
            "pipe:loops=300",
            "--no-capture",
            "-v",
            "linux-6.6",
        ])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("## host (native output)") && text.contains("## simulated (native output)"),
        "{text}"
    );
    // The metric table has both values and an error column for usecs_per_op.
    let row = text
        .lines()
        .find(|l| l.starts_with("usecs_per_op"))
        .expect("no usecs_per_op row");
    assert!(row.trim_end().ends_with('%'), "{row}");
    // Without a capture the host side has no counters, said so explicitly.
    assert!(text.contains("n/a"));
}

#[test]
fn bench_prints_rates_next_to_their_targets() {
    let out = schedlab()
        .args(["bench", "--only", "pipe-pair", "--repeat", "2"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("best of 2 run(s)"), "{out}");
    // The build is named, so figures from a debug build are not taken for real ones.
    let build = if cfg!(debug_assertions) {
        "build: debug, not for measuring"
    } else {
        "build: release"
    };
    assert!(out.contains(build), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("pipe-pair-2cpu"))
        .unwrap_or_else(|| panic!("no pipe-pair line in {out}"));
    assert!(line.contains("M events/s"), "{line}");
    assert!(
        line.contains(">= 10.0 M (met)") || line.contains(">= 10.0 M (missed)"),
        "{line}"
    );
    assert!(line.contains("[AllExited,"), "{line}");
    schedlab()
        .args(["bench", "--only", "no-such-scenario"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no scenario name contains"));
}

/// `schedlab bench | head -1`: the reader leaves after the header, the next line meets a
/// closed pipe, and the process ends by SIGPIPE like any Unix filter, without a panic message.
#[test]
fn a_closed_stdout_ends_the_run_quietly() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    let mut child = std::process::Command::new(common::bin())
        .args(["bench", "--only", "pipe-pair"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("scenario"), "{first}");
    // The reader is dropped here, before the scenario's line is printed.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}", out.status);
}

/// `run`/`compare` list `--sysfs-root` and `SCHEDLAB_SYSFS_ROOT` in their help, so `-t host`
/// must read that tree (they once refused the one and ignored the other).
#[test]
fn run_and_compare_read_host_from_sysfs_root_and_its_env() {
    let root = format!(
        "{}/../schedlab-topo/tests/fixtures/sysfs/2node-8core-smt2",
        env!("CARGO_MANIFEST_DIR")
    );
    let json = |out: &[u8]| -> serde_json::Value {
        let v: serde_json::Value = serde_json::from_slice(out).expect("run --json prints JSON");
        v
    };
    let by_flag = schedlab()
        .env_remove("SCHEDLAB_SYSFS_ROOT")
        .args([
            "run",
            "-t",
            "host",
            "--sysfs-root",
            &root,
            "-w",
            "pipe:loops=50",
            "--json",
        ])
        .output()
        .unwrap();
    success(&by_flag, "schedlab");
    let by_env = schedlab()
        .env("SCHEDLAB_SYSFS_ROOT", &root)
        .args(["run", "-t", "host", "-w", "pipe:loops=50", "--json"])
        .output()
        .unwrap();
    success(&by_env, "schedlab");
    // The same 16-CPU machine either way (the host here has fewer CPUs or another shape;
    // the topology shown is the tree's).
    assert_eq!(json(&by_flag.stdout), json(&by_env.stdout));
    schedlab()
        .env_remove("SCHEDLAB_SYSFS_ROOT")
        .args([
            "run",
            "-t",
            "host",
            "--sysfs-root",
            &root,
            "-w",
            "pipe:loops=50",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("2node-8core-smt2"));
    schedlab()
        .env("SCHEDLAB_SYSFS_ROOT", &root)
        .args([
            "compare",
            "-t",
            "host",
            "-w",
            "pipe:loops=50",
            "-v",
            "prev",
            "-v",
            "linux-6.6",
            "--reps",
            "1",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("2node-8core-smt2"));
    // A root that is not a directory, or given with another topology, is an error.
    schedlab()
        .args([
            "run",
            "-t",
            "host",
            "--sysfs-root",
            "/nonexistent/root",
            "-w",
            "pipe:loops=5",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a directory"));
    schedlab()
        .args([
            "run",
            "-t",
            "quad-4c",
            "--sysfs-root",
            &root,
            "-w",
            "pipe:loops=5",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("applies to -t host only"));
}
