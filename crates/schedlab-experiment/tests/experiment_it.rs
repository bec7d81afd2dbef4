//! Experiments end to end: determinism across job counts, shards merged equal a straight
//! run, a killed and resumed sweep loses nothing, and every shipped experiment file parses.

use schedlab_experiment::plan::{Experiment, Plan};
use schedlab_experiment::runner::ExecOptions;
use schedlab_experiment::{compare, merge};
use std::path::PathBuf;

fn small() -> Experiment {
    Experiment {
        topology: "desktop-4c8t".into(),
        smt: None,
        llc_per_node: None,
        profile: None,
        workload: "pipe:loops=2000".into(),
        variants: vec!["linux-6.6".into(), "waker".into()],
        sweep: vec![("pairs".into(), vec!["1".into(), "2".into()])],
        reps: 2,
        seed: 5,
        until_ci: None,
        max_reps: 30,
    }
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schedlab-exp-{}-{name}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir.join(format!("{name}.jsonl"))
}

#[test]
fn json_is_identical_for_one_and_two_jobs() {
    let plan = Plan::new(small());
    let a = compare(
        &plan,
        &ExecOptions {
            jobs: 1,
            ..Default::default()
        },
    )
    .unwrap();
    let b = compare(
        &plan,
        &ExecOptions {
            jobs: 2,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(a.report.to_json(), b.report.to_json());
    assert_eq!(a.report.points.len(), 2);
    assert_eq!(a.report.points[0].variants[0].samples.len(), 2);
    let j: serde_json::Value = serde_json::from_str(&a.report.to_json()).unwrap();
    assert_eq!(j["schema"], "schedlab.compare/1");
    for key in [
        "variant",
        "samples",
        "mean",
        "stderr",
        "ratio",
        "ci_low",
        "ci_high",
        "p_value",
        "significant",
        "counters",
    ] {
        assert!(
            j["points"][0]["variants"][1].get(key).is_some(),
            "missing {key}"
        );
    }
    assert!(matches!(
        j["metric"]["better"].as_str(),
        Some("higher") | Some("lower")
    ));
}

#[test]
fn shards_merge_to_the_straight_run_and_resume_loses_nothing() {
    let plan = Plan::new(small());
    let straight = compare(
        &plan,
        &ExecOptions {
            jobs: 1,
            ..Default::default()
        },
    )
    .unwrap();
    let mut files = Vec::new();
    for k in 0..3 {
        let f = tmp(&format!("shard{k}"));
        let _ = std::fs::remove_file(&f);
        let out = compare(
            &plan,
            &ExecOptions {
                jobs: 1,
                out: Some(f.clone()),
                shard: Some((k, 3)),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(out.sharded);
        files.push(f);
    }
    let (_, merged) = merge(&files).unwrap();
    assert_eq!(merged.to_json(), straight.report.to_json());
    // Missing shard: a clear error.
    let err = merge(&files[..2]).err().unwrap().to_string();
    assert!(err.contains("missing"), "{err}");
    // A shard given twice: its runs count once, as --resume counts a doubled line (the
    // same result twice; different results for one run are an error, see outfile_it.rs).
    let dup = vec![
        files[0].clone(),
        files[0].clone(),
        files[1].clone(),
        files[2].clone(),
    ];
    let (_, twice) = merge(&dup).unwrap();
    assert_eq!(twice.to_json(), straight.report.to_json());

    // "Kill" a run: keep the header and the first two run lines, plus a torn last line.
    let full = tmp("full");
    let _ = std::fs::remove_file(&full);
    compare(
        &plan,
        &ExecOptions {
            jobs: 1,
            out: Some(full.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    let text = std::fs::read_to_string(&full).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        1 + 8,
        "header + 2 points x 2 reps x 2 variants"
    );
    let killed = format!(
        "{}\n{}\n{}\n{}",
        lines[0],
        lines[1],
        lines[2],
        &lines[3][..lines[3].len() / 2]
    );
    std::fs::write(&full, killed).unwrap();
    let resumed = compare(
        &plan,
        &ExecOptions {
            jobs: 2,
            out: Some(full.clone()),
            resume: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(resumed.report.to_json(), straight.report.to_json());
    let (_, from_file) = merge(std::slice::from_ref(&full)).unwrap();
    assert_eq!(from_file.to_json(), straight.report.to_json());
}

#[test]
fn shipped_experiment_files_parse() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) == Some("toml") {
            let (exp, desc) =
                Experiment::from_file(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(desc.is_some(), "{} has no description", p.display());
            let plan = Plan::new(exp);
            schedlab_experiment::prepare(&plan).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            n += 1;
        }
    }
    assert!(n >= 8, "only {n} experiment files");
}

#[test]
fn bad_inputs_are_clear_errors() {
    let mut e = small();
    e.variants = vec!["linux-9.99".into()];
    let err = schedlab_experiment::prepare(&Plan::new(e))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("linux-9.99"), "{err}");
    let mut e = small();
    e.workload = "hackbnech".into();
    let err = schedlab_experiment::prepare(&Plan::new(e))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("hackbench"),
        "should suggest the closest name: {err}"
    );
    let mut e = small();
    e.topology = "westmere-2s".into();
    let err = schedlab_experiment::prepare(&Plan::new(e))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("westmere-2s20c"), "{err}");
}

#[test]
fn percentile_metrics_get_bootstrap_intervals() {
    use schedlab_experiment::report::is_percentile_metric;
    assert!(is_percentile_metric("wakeup_lat_p99_us"));
    assert!(is_percentile_metric("max_latency_ms"));
    assert!(!is_percentile_metric("throughput_mb_s"));
    // schbench's headline is its p99 wakeup latency: the report must still be complete and
    // deterministic, with an interval around the ratio.
    let e = Experiment {
        topology: "desktop-4c8t".into(),
        smt: None,
        llc_per_node: None,
        profile: None,
        workload: "schbench:message_threads=1,threads=4,runtime=100ms".into(),
        variants: vec!["linux-6.6".into(), "linux-6.6,NO_WAKEUP_PREEMPTION".into()],
        sweep: vec![],
        reps: 4,
        seed: 3,
        until_ci: None,
        max_reps: 30,
    };
    let plan = Plan::new(e);
    let a = compare(
        &plan,
        &ExecOptions {
            jobs: 2,
            ..Default::default()
        },
    )
    .unwrap();
    let b = compare(
        &plan,
        &ExecOptions {
            jobs: 1,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(a.report.to_json(), b.report.to_json());
    assert!(
        is_percentile_metric(&a.report.metric.name),
        "{}",
        a.report.metric.name
    );
    let v = &a.report.points[0].variants[1];
    assert!(v.ci_low <= v.ratio && v.ratio <= v.ci_high, "{v:?}");
    assert!((0.0..=1.0).contains(&v.p_value));
}

#[test]
fn validation_cases_are_the_shipped_files_and_every_run_prepares() {
    use schedlab_experiment::validate::case::{BUILTIN, CaseFile, RunKind};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments/validate");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().to_uppercase())
        .collect();
    files.sort();
    let mut builtin: Vec<String> = BUILTIN.iter().map(|(n, _)| n.to_string()).collect();
    builtin.sort();
    assert_eq!(
        files, builtin,
        "experiments/validate/ and the built-in list differ"
    );
    for (name, _) in BUILTIN {
        let case = CaseFile::builtin(name).unwrap();
        assert_eq!(&case.name, name);
        assert!(!case.checks.is_empty(), "{name} has no checks");
        for run in &case.runs {
            for quick in [false, true] {
                let (e, _) = run.experiment(quick, name).unwrap();
                if run.kind == RunKind::Compare {
                    schedlab_experiment::prepare(&Plan::new(e))
                        .unwrap_or_else(|err| panic!("{name} {}: {err}", run.id));
                }
            }
        }
    }
}

/// An existing --out file holds finished runs, so it is never truncated without --resume; and
/// a run line written twice (two writers on one file) is one sample, not two, lest it weigh
/// twice in the statistics.
#[test]
fn out_files_are_never_overwritten_and_duplicates_count_once() {
    let plan = Plan::new(small());
    let straight = compare(
        &plan,
        &ExecOptions {
            jobs: 1,
            ..Default::default()
        },
    )
    .unwrap();
    let f = tmp("dup");
    let _ = std::fs::remove_file(&f);
    let opts = |resume| ExecOptions {
        jobs: 1,
        out: Some(f.clone()),
        resume,
        ..Default::default()
    };
    compare(&plan, &opts(false)).unwrap();
    let text = std::fs::read_to_string(&f).unwrap();
    // Without --resume, the finished file is refused and left as it was.
    let err = compare(&plan, &opts(false)).err().unwrap().to_string();
    assert!(
        err.contains("already exists") && err.contains("--resume"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), text);
    // Every run line twice, as two concurrent writers would leave it.
    let lines: Vec<&str> = text.lines().collect();
    let mut doubled = format!("{}\n", lines[0]);
    for l in &lines[1..] {
        doubled += &format!("{l}\n{l}\n");
    }
    std::fs::write(&f, &doubled).unwrap();
    let resumed = compare(&plan, &opts(true)).unwrap();
    assert_eq!(resumed.report.to_json(), straight.report.to_json());
    assert_eq!(resumed.report.points[0].variants[0].samples.len(), 2);
    // The resume rewrote the file without the duplicates, atomically (no temporary left).
    assert_eq!(std::fs::read_to_string(&f).unwrap(), text);
    let dir = f.parent().unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
