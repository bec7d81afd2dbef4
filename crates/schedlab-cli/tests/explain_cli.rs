//! `schedlab explain` and `run --schedstat` against the binary: the schedstat file read back
//! by an independent reader (`scripts/schedstat-read.py`, which knows only the kernel's
//! documented layout) agrees with `run --json`; explain's JSON carries a budget that closes
//! and a sentence; bad input is refused naming the problem.

mod common;

use common::{root, schedlab_at_root, success, tempdir};

use std::path::Path;
use std::process::Command;

fn has_python() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn schedstat_file_reads_back_with_an_independent_reader() {
    if !has_python() {
        // CI provides python3 and sets this, so there the reader always runs.
        assert!(
            std::env::var_os("SCHEDLAB_REQUIRE_PYTHON").is_none(),
            "SCHEDLAB_REQUIRE_PYTHON is set but python3 is missing"
        );
        eprintln!("skipped: no python3 to run scripts/schedstat-read.py");
        return;
    }
    let dir = tempdir();
    let file = dir.path().join("schedstat");
    let out = schedlab_at_root()
        .args([
            "run",
            "-t",
            "westmere-2s20c",
            "-w",
            "hackbench:groups=2,loops=20",
        ])
        .args(["-v", "linux-3.10", "--json", "--schedstat"])
        .arg(&file)
        .output()
        .unwrap();
    success(&out, "schedlab");
    let records: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let counts = &records[0]["counters"]["explain"]["counts"];
    let read = Command::new("python3")
        .arg(root().join("scripts/schedstat-read.py"))
        .arg(&file)
        .output()
        .unwrap();
    success(&read, "scripts/schedstat-read.py");
    let st: serde_json::Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(st["version"], 15);
    let cpus = st["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), 40, "one cpu line per CPU");
    // CPU 0's lowest domain is its SMT pair (CPU 20 on this preset).
    assert_eq!(cpus[0]["domains"][0]["span"], serde_json::json!([0, 20]));
    let totals = &st["totals"];
    for k in [
        "yld_count",
        "sched_count",
        "sched_goidle",
        "ttwu_count",
        "ttwu_local",
        "timeslices",
        "lb_count.idle",
        "lb_balanced.newidle",
        "lb_gained.newidle",
        "lb_nobusyg.idle",
        "alb_count",
        "ttwu_wake_remote",
        "ttwu_move_affine",
    ] {
        assert_eq!(totals[k], counts[k], "{k}: the file and --json disagree");
    }
    assert!(totals["ttwu_count"].as_u64().unwrap() > 0);
    // Run time is the busy time of the CPUs, which --json gives as a fraction of the whole.
    let busy = records[0]["counters"]["explain"]["busy_ns"]
        .as_u64()
        .unwrap();
    assert_eq!(totals["run_time_ns"].as_u64().unwrap(), busy);
}

#[test]
fn explain_json_has_a_closing_budget_and_a_sentence() {
    let out = schedlab_at_root()
        .args([
            "explain",
            "-t",
            "westmere-4s40c",
            "-w",
            "hackbench:groups=4,loops=20",
        ])
        .args([
            "-v",
            "linux-3.10",
            "-v",
            "linux-3.10,NO_WAKEUP_PREEMPTION",
            "--reps",
            "2",
            "--json",
        ])
        .output()
        .unwrap();
    success(&out, "schedlab");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = &v["explain"];
    assert_eq!(e["schema"], "schedlab.explain/1");
    for b in e["points"][0]["budgets"].as_array().unwrap() {
        assert!(b["closure_error"].as_f64().unwrap() < 1e-3);
    }
    let s = e["points"][0]["versus"][0]["summary"].as_str().unwrap();
    assert!(
        s.contains("NO_WAKEUP_PREEMPTION") && s.contains("CPU-s"),
        "{s}"
    );
    assert!(v["sensitivity"].is_null());
}

#[test]
fn explain_refuses_what_it_cannot_explain() {
    let one = schedlab_at_root()
        .args([
            "explain",
            "-w",
            "hackbench:groups=1,loops=5",
            "-v",
            "linux-6.6",
        ])
        .output()
        .unwrap();
    assert_eq!(one.status.code(), Some(2));
    let err = String::from_utf8_lossy(&one.stderr);
    assert!(err.contains("two or more variants"), "{err}");
    let sens = schedlab_at_root()
        .args([
            "compare",
            "-w",
            "hackbench:groups=1,loops=5",
            "--sensitivity",
        ])
        .output()
        .unwrap();
    assert_eq!(sens.status.code(), Some(2));
    let err = String::from_utf8_lossy(&sens.stderr);
    assert!(
        err.contains("--sensitivity") && err.contains("explain"),
        "{err}"
    );
}

#[test]
fn host_run_schedstat_says_when_the_kernel_has_none() {
    if Path::new("/proc/schedstat").exists() {
        eprintln!("skipped: this kernel has /proc/schedstat");
        return;
    }
    let dir = tempdir();
    let out = schedlab_at_root()
        .args(["host", "run", "hackbench:groups=1,loops=5", "--schedstat"])
        .arg(dir.path().join("ss"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CONFIG_SCHEDSTATS"), "{err}");
    assert!(!dir.path().join("ss").exists(), "no file is written");
}
