//! `--out` files, which hold hours of runs and are shared by resumed and sharded processes: one
//! writer at a time, and runs that contradict the
//! plan refused by `merge` and `--resume` alike instead of shown as `n/a` or `NaN`.

use schedlab_experiment::outfile::OutLock;
use schedlab_experiment::plan::{Experiment, Plan};
use schedlab_experiment::runner::ExecOptions;
use schedlab_experiment::{compare, merge};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn small() -> Experiment {
    Experiment {
        topology: "desktop-4c8t".into(),
        smt: None,
        llc_per_node: None,
        profile: None,
        workload: "pipe:loops=300".into(),
        variants: vec!["linux-6.6".into(), "waker".into()],
        sweep: vec![("pairs".into(), vec!["1".into(), "2".into()])],
        reps: 2,
        seed: 5,
        until_ci: None,
        max_reps: 30,
    }
}

/// A finished `--out` file of [`small`] in its own folder.
fn finished(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let f = dir.join("runs.jsonl");
    compare(
        &Plan::new(small()),
        &ExecOptions {
            jobs: 1,
            out: Some(f.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    f
}

fn opts(f: &Path, resume: bool) -> ExecOptions {
    ExecOptions {
        jobs: 1,
        out: Some(f.to_path_buf()),
        resume,
        ..Default::default()
    }
}

/// Rewrites line `n` (0 = the header) of `f` through `edit` on its JSON.
fn edit_line(f: &Path, n: usize, edit: impl FnOnce(&mut Value)) {
    let text = std::fs::read_to_string(f).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut v: Value = serde_json::from_str(&lines[n]).unwrap();
    edit(&mut v);
    lines[n] = serde_json::to_string(&v).unwrap();
    std::fs::write(f, lines.join("\n") + "\n").unwrap();
}

fn both_refuse(f: &Path, needle: &str) {
    let Err(m) = merge(&[f.to_path_buf()]) else {
        panic!("merge accepted {}", f.display())
    };
    let m = m.to_string();
    assert!(m.contains(needle), "merge: {m}");
    let before = std::fs::read_to_string(f).unwrap();
    let Err(r) = compare(&Plan::new(small()), &opts(f, true)) else {
        panic!("--resume accepted {}", f.display())
    };
    let r = r.to_string();
    assert!(r.contains(needle), "--resume: {r}");
    assert_eq!(
        std::fs::read_to_string(f).unwrap(),
        before,
        "the file is left as it was"
    );
}

#[test]
fn a_second_writer_is_refused_while_the_first_holds_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("runs.jsonl");
    let held = OutLock::acquire(&f).unwrap();
    let err = compare(&Plan::new(small()), &opts(&f, false))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("being written by another schedlab process"),
        "{err}"
    );
    assert!(!f.exists(), "the refused writer created nothing");
    // Released: the lock file goes, and the next writer runs.
    drop(held);
    assert!(!dir.path().join(".runs.jsonl.lock").exists());
    compare(&Plan::new(small()), &opts(&f, false)).unwrap();
    assert!(!dir.path().join(".runs.jsonl.lock").exists());
    // A resume takes the same lock.
    let _held = OutLock::acquire(&f).unwrap();
    let err = compare(&Plan::new(small()), &opts(&f, true))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("being written by another"), "{err}");
}

#[test]
fn a_run_keyed_outside_the_plan_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = finished(dir.path());
    edit_line(&f, 1, |v| v["key"]["point"] = 99.into());
    both_refuse(&f, "contradicts the plan: the plan has 2 points");
    let f = finished(&dir.path().join("b"));
    edit_line(&f, 1, |v| v["key"]["index"] = 7.into());
    both_refuse(&f, "the plan numbers this run");
}

#[test]
fn renamed_or_missing_metrics_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = finished(dir.path());
    edit_line(&f, 2, |v| {
        v["result"]["metrics"][1]["name"] = "renamed".into()
    });
    both_refuse(&f, "are not those of run");
    let f = finished(&dir.path().join("b"));
    edit_line(&f, 1, |v| v["result"]["metrics"] = Value::Array(vec![]));
    both_refuse(&f, "it has no metrics");
    // Every line renamed alike: the headline is missing.
    let f = finished(&dir.path().join("c"));
    let n = std::fs::read_to_string(&f).unwrap().lines().count();
    for i in 1..n {
        edit_line(&f, i, |v| {
            v["result"]["metrics"][0]["name"] = "renamed".into()
        });
    }
    both_refuse(&f, "(the plan's headline)");
}

#[test]
fn an_edited_header_whose_fingerprint_was_kept_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = finished(dir.path());
    edit_line(&f, 0, |v| {
        v["experiment"]["workload"] = "pipe:loops=999".into()
    });
    both_refuse(&f, "the plan header was edited");
}

#[test]
fn a_run_of_another_workload_or_with_two_results_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = finished(dir.path());
    edit_line(&f, 1, |v| v["workload"] = "pipe:loops=1".into());
    both_refuse(&f, "its workload is 'pipe:loops=1'");
    // The same run twice with different results.
    let f = finished(&dir.path().join("b"));
    let text = std::fs::read_to_string(&f).unwrap();
    let second = text.lines().nth(1).unwrap().to_string();
    std::fs::write(&f, format!("{text}{second}\n")).unwrap();
    let n = text.lines().count();
    edit_line(&f, n, |v| {
        let x = v["result"]["metrics"][0]["value"].as_f64().unwrap();
        v["result"]["metrics"][0]["value"] = (x * 2.0).into();
    });
    both_refuse(&f, "has two different results");
}

#[test]
fn a_rewrite_killed_before_its_rename_leaves_no_temporary_behind() {
    let dir = tempfile::tempdir().unwrap();
    let f = finished(dir.path());
    // What a kill between the temporary's write and its rename leaves.
    let stale = dir.path().join(".runs.jsonl.tmp.4242");
    std::fs::write(&stale, "partial").unwrap();
    let other = dir.path().join(".other.jsonl.tmp.4242");
    std::fs::write(&other, "not ours").unwrap();
    compare(&Plan::new(small()), &opts(&f, true)).unwrap();
    assert!(!stale.exists());
    assert!(other.exists(), "another file's temporary is left alone");
}

/// A header edited to ask for 10^15 repetitions, its fingerprint recomputed (as the run-file
/// fuzz harness in tests/fuzz.rs does to get past the fingerprint check), made `merge` push
/// that many run keys, growing until the OOM killer came. The header's experiment is now
/// checked against the bounds before it is expanded.
#[test]
fn a_header_asking_for_more_runs_than_memory_holds_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = finished(dir.path());
    for (key, value) in [("reps", 1_000_000_000_000_000u64), ("max_reps", u64::MAX)] {
        edit_line(&f, 0, |v| {
            v["experiment"][key] = value.into();
            let e: Experiment = serde_json::from_value(v["experiment"].clone()).unwrap();
            v["fingerprint"] = e.fingerprint().into();
        });
        let err = merge(std::slice::from_ref(&f)).unwrap_err().to_string();
        assert!(err.contains("at most 10000"), "{key}: {err}");
        edit_line(&f, 0, |v| {
            v["experiment"][key] = small().reps.into();
            if key == "max_reps" {
                v["experiment"][key] = small().max_reps.into();
            }
            let e: Experiment = serde_json::from_value(v["experiment"].clone()).unwrap();
            v["fingerprint"] = e.fingerprint().into();
        });
    }
    assert!(merge(&[f]).is_ok());
}

/// A sweep whose points cannot be held (2^40 of them) is refused before it is expanded.
#[test]
fn a_sweep_past_the_point_bound_is_refused_before_expansion() {
    let mut e = small();
    e.sweep = (0..40)
        .map(|i| (format!("k{i}"), vec!["1".into(), "2".into()]))
        .collect();
    let err = e.validate().unwrap_err().to_string();
    assert!(
        err.contains("1099511627776 points: at most 100000"),
        "{err}"
    );
}

/// Found by the run-file fuzz harness (tests/fuzz.rs, 20,000 cases): a run whose wake-graph
/// flips distribution counts add past u64 (a count edited to u64::MAX) panicked in `merge`
/// with an overflow while the report took its quantiles. Such a run is refused.
#[test]
fn a_flips_distribution_past_u64_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = finished(dir.path());
    edit_line(&f, 1, |v| {
        v["counters"]["wakee_flips"] = serde_json::json!([u64::MAX, 1]);
    });
    both_refuse(
        &f,
        "its wakee_flips distribution counts more wakeups than a u64 holds",
    );
}
