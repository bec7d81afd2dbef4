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

/// explain names the wakeup-path decisions a switch changed (per 100 wakeups) and says when
/// the difference is not significant (issue 49): WAKEUP_BUDDY on tbench declines a few
/// affine pulls, and 3 repetitions cannot tell its headline from the seeds' spread.
#[test]
fn explain_names_the_decisions_changed_and_a_non_significant_difference() {
    let out = schedlab_at_root()
        .args([
            "explain",
            "-t",
            "westmere-2s20c",
            "-w",
            "tbench:clients=8,duration=100ms",
            "-v",
            "linux-3.10",
            "-v",
            "linux-3.10,WAKEUP_BUDDY",
            "--reps",
            "3",
        ])
        .output()
        .unwrap();
    let text = success(&out, "explain");
    let section = text
        .split("decisions changed (wakeup path, per 100 wakeups")
        .nth(1)
        .unwrap_or_else(|| panic!("no decisions section:\n{text}"));
    let first = section.lines().nth(1).unwrap_or("");
    assert!(
        first.contains("wakeups_affine") || first.contains("ttwu_move_affine"),
        "{section}"
    );
    assert!(
        section.contains("pulled to the waker's CPU (wake_affine)"),
        "{section}"
    );
    assert!(text.contains("Not significant (p = "), "{text}");
}

/// The plot marks what counts: the direction in the caption, filled and hollow markers and
/// the minimum-effect band in the legend, and a sweep of words keeps its words as labels;
/// the HTML counter table has a delta column.
#[test]
fn the_plot_marks_significance_and_a_word_sweep_keeps_its_labels() {
    let dir = tempdir();
    let svg = dir.path().join("s.svg");
    let html = dir.path().join("s.html");
    let out = schedlab_at_root()
        .args(["compare", "-w", "hackbench:groups=1,loops=20"])
        .args(["--sweep", "mode=process,thread", "-v", "linux-6.6"])
        .args(["-v", "linux-6.6,NO_WAKE_AFFINE", "--reps", "3", "--plot"])
        .arg(&svg)
        .arg("--report")
        .arg(&html)
        .output()
        .unwrap();
    success(&out, "compare --plot");
    let s = std::fs::read_to_string(&svg).unwrap();
    let texts: Vec<String> = s
        .split("<text")
        .skip(1)
        .filter_map(|t| {
            let (_, rest) = t.split_once('>')?;
            Some(rest.split("</text>").next()?.trim().to_string())
        })
        .collect();
    assert!(texts.iter().any(|t| t == "process"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "thread"), "{texts:?}");
    for needle in [
        "lower is better ↓; error bars",
        "filled marker: a difference",
        "hollow marker: no difference",
        "grey band: ±2 % (min. effect)",
    ] {
        assert!(
            texts.iter().any(|t| t.contains(needle)),
            "{needle}: {texts:?}"
        );
    }
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(h.contains("<th>Δ vs base</th>"), "no delta column");
}

#[test]
fn sensitivity_reruns_count_under_their_own_label_off_a_terminal() {
    // Off a terminal a progress line comes every SCHEDLAB_PROGRESS_SECS (5 s by default);
    // the reruns of --sensitivity are not the comparison's runs and say so.
    let out = schedlab_at_root()
        .env("SCHEDLAB_PROGRESS_SECS", "0.01")
        .args([
            "explain",
            "-w",
            "pipe:loops=2000",
            "--reps",
            "2",
            "--sensitivity",
        ])
        .output()
        .unwrap();
    success(&out, "schedlab");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("sensitivity: ") && l.contains(" runs done")),
        "{err}"
    );
    // The comparison's own count covers its 4 runs only, and stops before the reruns.
    for l in err.lines().filter(|l| l.starts_with("compare: ")) {
        assert!(l.contains(" of 4 runs done"), "{l}");
    }
    // A bad interval is bad input.
    let out = schedlab_at_root()
        .env("SCHEDLAB_PROGRESS_SECS", "soon")
        .args(["policies"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SCHEDLAB_PROGRESS_SECS"));
}
