//! The edges of the command line: contradictions, options that need another option, bounds,
//! output paths that cannot be written (refused before any run), a JSON file given as a TOML
//! workload, K/M/G sizes, and the table a one-repetition comparison prints. Each bad input
//! exits 2 with one line that names what is wrong.

mod common;

use common::{schedlab, tempdir};

use predicates::prelude::*;

/// Runs `args`, expects exit 2 and one `schedlab: error:` (or clap) line containing `needle`.
fn refused(args: &[&str], needle: &str) {
    let out = schedlab().args(args).assert().code(2).get_output().clone();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
}

const QUICK: &str = "pipe:loops=50";

#[test]
fn a_switch_on_and_off_is_refused() {
    refused(
        &[
            "run",
            "-w",
            QUICK,
            "-v",
            "linux-6.6,WAKE_AFFINE,NO_WAKE_AFFINE",
        ],
        "'WAKE_AFFINE' and 'NO_WAKE_AFFINE' contradict each other",
    );
    refused(
        &[
            "compare",
            "-w",
            QUICK,
            "-v",
            "linux-6.6",
            "-v",
            "linux-6.6,hz=100,hz=250",
        ],
        "contradict",
    );
}

#[test]
fn two_balancer_variants_are_refused() {
    refused(
        &[
            "run",
            "-t",
            "tx7-4n2c",
            "-w",
            QUICK,
            "-v",
            "linux-2.5.59,ingo,ingofix",
        ],
        "two balancer variants",
    );
}

#[test]
fn json_with_csv_is_refused() {
    refused(
        &["compare", "-w", QUICK, "--json", "--csv"],
        "cannot be used with",
    );
    refused(
        &["merge", "x.jsonl", "--json", "--csv"],
        "cannot be used with",
    );
}

#[test]
fn max_reps_needs_until_ci() {
    refused(
        &["compare", "-w", QUICK, "--max-reps", "5"],
        "--max-reps only applies with --until-ci",
    );
}

#[test]
fn zero_jobs_is_refused() {
    refused(
        &["compare", "-w", QUICK, "--jobs", "0"],
        "0 is not in 1..=1024",
    );
}

#[test]
fn a_sweep_key_given_twice_is_refused_with_the_merged_axis() {
    refused(
        &[
            "compare", "-w", QUICK, "--sweep", "loops=10", "--sweep", "loops=20",
        ],
        "--sweep loops=10,20",
    );
}

#[test]
fn repetitions_are_bounded() {
    refused(
        &["compare", "-w", QUICK, "--reps", "1000000000"],
        "--reps 1000000000: at most 10000",
    );
    refused(&["run", "-w", QUICK, "--reps", "20000"], "at most 10000");
    refused(
        &[
            "compare",
            "-w",
            QUICK,
            "--until-ci",
            "1",
            "--max-reps",
            "99999",
        ],
        "--max-reps 99999: at most 10000",
    );
}

#[test]
fn a_plan_past_the_size_bound_needs_force() {
    let sweep: Vec<String> = (1..=60).map(|i| i.to_string()).collect();
    let sweep = format!("loops={}", sweep.join(","));
    refused(
        &[
            "compare", "-w", "pipe", "--reps", "10000", "--sweep", &sweep,
        ],
        "needs --force",
    );
}

#[test]
fn unwritable_outputs_are_refused_before_the_work() {
    let dir = tempdir();
    let missing = dir.path().join("no/such/folder");
    let p = |f: &str| missing.join(f).display().to_string();
    for (flag, file) in [
        ("--plot", "p.svg"),
        ("--report", "r.html"),
        ("--html", "r.html"),
        ("--out", "runs.jsonl"),
        ("--trace", "t.pftrace"),
    ] {
        // A plan of hours: refused at once, so the check comes before any run.
        refused(
            &["compare", "-w", "tbench:duration=1000s", flag, &p(file)],
            "cannot write: the folder",
        );
    }
    refused(
        &["run", "-w", QUICK, "--trace", &p("t.pftrace")],
        &format!("--trace {}: cannot write", p("t.pftrace")),
    );
    // A folder given as the file.
    refused(
        &[
            "compare",
            "-w",
            QUICK,
            "--plot",
            &dir.path().display().to_string(),
        ],
        "it is a folder",
    );
    refused(
        &["host", "calibrate", "--quick", "-o", &p("profile.toml")],
        &format!("-o {}: cannot write", p("profile.toml")),
    );
}

#[test]
fn a_json_workload_file_points_to_rtapp() {
    let dir = tempdir();
    let f = dir.path().join("w.json");
    std::fs::write(&f, "{\"tasks\": {}}").unwrap();
    let spec = format!("file:{}", f.display());
    refused(&["run", "-w", &spec], &format!("-w rtapp:{}", f.display()));
}

#[test]
fn lat_ctx_sizes_take_units() {
    for size in ["1M", "64K", "16"] {
        schedlab()
            .args(["run", "-w", &format!("lat-ctx:rounds=20,size={size}")])
            .assert()
            .success();
    }
    refused(
        &["run", "-w", "lat-ctx:rounds=20,size=100B"],
        "whole number of KB",
    );
}

#[test]
fn one_repetition_prints_no_interval_instead_of_nan() {
    let out = schedlab()
        .args(["compare", "-w", QUICK, "--reps", "1"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let t = String::from_utf8(out).unwrap();
    assert!(t.contains("n=1: no interval"), "{t}");
    assert!(
        !t.contains("NaN") && !t.contains("no significant difference"),
        "{t}"
    );
    // The variants' names head the columns.
    assert!(t.contains("NO_WAKE_AFFINE") && !t.contains("[0]"), "{t}");
}

#[test]
fn the_version_names_the_commit() {
    schedlab()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::contains("(commit "));
}

#[test]
fn plots_are_ratio_by_default_absolute_on_request_and_log_x_for_doubling_sweeps() {
    let dir = tempdir();
    let (ratio, abs) = (dir.path().join("r.svg"), dir.path().join("a.svg"));
    let base = [
        "compare",
        "-w",
        "pipe",
        "--reps",
        "2",
        "--sweep",
        "loops=10,20,40,80",
    ];
    schedlab()
        .args(base)
        .arg("--plot")
        .arg(&ratio)
        .assert()
        .success();
    schedlab()
        .args(base)
        .arg("--plot")
        .arg(&abs)
        .arg("--absolute")
        .assert()
        .success();
    let r = std::fs::read_to_string(&ratio).unwrap();
    let a = std::fs::read_to_string(&abs).unwrap();
    assert!(r.contains("(baseline = 1)") && r.contains("95% confidence interval"));
    assert!(a.contains("one standard error") && !a.contains("(baseline = 1)"));
    assert!(
        r.contains("loops (log scale)"),
        "a doubling sweep gets a log x axis"
    );
    assert!(r.contains("lower is better") || r.contains("higher is better"));
    refused(&["compare", "-w", QUICK, "--absolute"], "--plot");
}
