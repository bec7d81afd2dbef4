//! Experiments: run one variant, compare several over a sweep with repetitions and honest
//! statistics, write tables, JSON, CSV, plots, HTML and traces, split long sweeps into shards
//! and merge them, and validate the simulator against published results.
//!
//! Every run is single-threaded and seeded by its repetition (common random numbers across
//! variants), and runs are collected in plan order, so the output is identical for any
//! `--jobs` and for any sharding merged back together.
#![warn(missing_docs)]

pub mod html;
pub mod plan;
pub mod plot;
pub mod progress;
pub mod report;
pub mod runner;
pub mod table;
pub mod validate;

use plan::{Experiment, Plan};
use report::{CompareReport, MetricInfo, build_report};
use runner::{ExecOptions, Machine, RunRecord, execute, read_jsonl};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// Why an experiment could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExperimentError {
    /// Bad user input (names the flag, file or key).
    #[error("{0}")]
    Input(String),
    /// A run failed (deadlock, event limit, workload error).
    #[error("{0}")]
    Run(String),
    /// A file could not be read or written.
    #[error("{0}")]
    Io(String),
}

/// Schema tag of the header line of a JSON-lines results file.
pub const PLAN_SCHEMA: &str = "schedlab.plan/1";

#[derive(Serialize, Deserialize)]
struct PlanHeader {
    schema: String,
    fingerprint: String,
    experiment: Experiment,
}

/// What `compare` produced.
pub struct CompareOutput {
    /// The statistics.
    pub report: CompareReport,
    /// All runs (new and resumed) of this process's share.
    pub records: Vec<RunRecord>,
    /// Whether Ctrl-C stopped it early.
    pub interrupted: bool,
    /// Whether this was one shard of several.
    pub sharded: bool,
    /// Repetitions per (point, variant) in the end.
    pub reps: usize,
}

/// Loads the machine, checks the workload and every variant once, and returns the metric.
pub fn prepare(plan: &Plan) -> Result<(Machine, MetricInfo), ExperimentError> {
    plan.experiment.validate()?;
    let machine = Machine::load(plan)?;
    let mut metric = None;
    for point in 0..plan.points.len() {
        let spec = runner::point_workload(plan, point)?;
        let inst = schedlab_workloads::instantiate(&spec, &machine.topo)
            .map_err(|e| ExperimentError::Input(e.to_string()))?;
        if metric.is_none() {
            let (name, better) = inst.headline();
            let unit = String::new();
            metric = Some(MetricInfo { name, unit, better });
        }
    }
    for v in &plan.experiment.variants {
        schedlab_policies::build(v, &machine.topo, plan.experiment.seed)
            .map_err(|e| ExperimentError::Input(format!("variant '{v}': {e}")))?;
    }
    let metric = metric.ok_or_else(|| ExperimentError::Input("no sweep point".into()))?;
    Ok((machine, metric))
}

fn start_out_file(
    path: &Path,
    plan: &Plan,
    resume: bool,
) -> Result<Vec<RunRecord>, ExperimentError> {
    let fp = plan.experiment.fingerprint();
    if resume && let Some(h) = read_header(path)? {
        if h.fingerprint != fp {
            return Err(ExperimentError::Input(format!(
                "{} holds runs of another experiment (fingerprint {} vs {fp}); use another --out",
                path.display(),
                h.fingerprint
            )));
        }
        let mut recs: Vec<RunRecord> = read_jsonl(path)?
            .into_iter()
            .filter(|r| r.experiment == fp)
            .collect();
        // A run written twice (two writers, or a rerun) counts once: the first line wins.
        let mut seen = std::collections::BTreeSet::new();
        recs.retain(|r| seen.insert(r.key.index));
        // Rewrite the file without a torn last line (a run killed mid-write) or duplicates, so
        // runs appended from now on start on a fresh line. The new text goes to a temporary
        // file in the same folder, synced, then renamed over the old one: a kill at any point
        // leaves either the old file or the new one, never a truncated one.
        let mut text = serde_json::to_string(&h).unwrap_or_default();
        text.push('\n');
        for r in &recs {
            text.push_str(&serde_json::to_string(r).unwrap_or_default());
            text.push('\n');
        }
        replace_atomically(path, &text)?;
        return Ok(recs);
    }
    if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
        return Err(ExperimentError::Input(if resume {
            format!(
                "{} has no schedlab run header: it is not a `compare --out` file (it is left as it is)",
                path.display()
            )
        } else {
            format!(
                "{} already exists; continue it with --resume, or remove it (runs are never overwritten)",
                path.display()
            )
        }));
    }
    let header = PlanHeader {
        schema: PLAN_SCHEMA.into(),
        fingerprint: fp,
        experiment: plan.experiment.clone(),
    };
    let mut text = serde_json::to_string(&header).unwrap_or_default();
    text.push('\n');
    replace_atomically(path, &text)?;
    Ok(Vec::new())
}

/// Writes `text` to a temporary file beside `path`, syncs it and renames it over `path`.
fn replace_atomically(path: &Path, text: &str) -> Result<(), ExperimentError> {
    let err = |what: &str, e: std::io::Error| {
        ExperimentError::Io(format!("cannot {what} {}: {e}", path.display()))
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let mut f = std::fs::File::create(&tmp).map_err(|e| err("create a temporary file for", e))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| err("write", e))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err("replace", e)
    })?;
    // The rename itself is durable once the folder is synced.
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn read_header(path: &Path) -> Result<Option<PlanHeader>, ExperimentError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ExperimentError::Io(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    for line in text.lines() {
        if let Ok(h) = serde_json::from_str::<PlanHeader>(line)
            && h.schema == PLAN_SCHEMA
        {
            return Ok(Some(h));
        }
    }
    Ok(None)
}

/// Runs a comparison (all of it, or one shard), adding repetitions for `until_ci`.
pub fn compare(plan: &Plan, opts: &ExecOptions) -> Result<CompareOutput, ExperimentError> {
    let (machine, mut metric) = prepare(plan)?;
    if plan.experiment.until_ci.is_some() && opts.shard.is_some() {
        return Err(ExperimentError::Input("--until-ci cannot be combined with --shard (the number of repetitions would differ per shard)".into()));
    }
    let mut done = match &opts.out {
        Some(p) => start_out_file(p, plan, opts.resume)?,
        None => Vec::new(),
    };
    let mut reps = plan.experiment.reps;
    let keys = plan.keys(0..reps);
    let new = execute(plan, &machine, &keys, &done, opts)?;
    done.extend(new);
    let interrupted = runner::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst);
    if let Some(first) = done.first()
        && let Some(m) = first.result.metric(&metric.name)
    {
        metric.unit = m.unit.clone();
    }
    let mut report = build_report(plan, &done, &metric);
    if let Some(target) = plan.experiment.until_ci {
        while !runner::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
            && report.worst_ci_pct() > target
            && reps < plan.experiment.max_reps
        {
            let keys = plan.keys(reps..reps + 1);
            reps += 1;
            let new = execute(plan, &machine, &keys, &done, opts)?;
            done.extend(new);
            report = build_report(plan, &done, &metric);
        }
    }
    done.sort_by_key(|r| r.key.index);
    Ok(CompareOutput {
        report,
        records: done,
        interrupted: interrupted || runner::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst),
        sharded: opts.shard.is_some(),
        reps,
    })
}

/// Merges shard files: checks that every run of the plan is present exactly once and builds
/// the same report as the unsharded run.
pub fn merge(files: &[std::path::PathBuf]) -> Result<(Plan, CompareReport), ExperimentError> {
    if files.is_empty() {
        return Err(ExperimentError::Input(
            "merge needs at least one file".into(),
        ));
    }
    let mut header: Option<PlanHeader> = None;
    let mut records = Vec::new();
    for f in files {
        let h = read_header(f)?.ok_or_else(|| {
            ExperimentError::Input(format!(
                "{}: no {PLAN_SCHEMA} header line (not a schedlab --out file?)",
                f.display()
            ))
        })?;
        if let Some(prev) = &header {
            if prev.fingerprint != h.fingerprint {
                return Err(ExperimentError::Input(format!(
                    "{} belongs to another experiment ({} vs {})",
                    f.display(),
                    h.fingerprint,
                    prev.fingerprint
                )));
            }
        } else {
            header = Some(h);
        }
        records.extend(read_jsonl(f)?);
    }
    let header = header.ok_or_else(|| ExperimentError::Input("no header".into()))?;
    let plan = Plan::new(header.experiment);
    let keys = plan.keys(0..plan.experiment.reps);
    let mut missing = Vec::new();
    for k in &keys {
        let n = records.iter().filter(|r| r.key.index == k.index).count();
        if n == 0 {
            missing.push(k.index);
        } else if n > 1 {
            return Err(ExperimentError::Input(format!(
                "run {} (point {}, variant {}, repetition {}) appears {n} times across the files",
                k.index, k.point, k.variant, k.rep
            )));
        }
    }
    if !missing.is_empty() {
        return Err(ExperimentError::Input(format!(
            "{} of {} runs are missing (e.g. run indices {:?}); run the missing shards or --resume them",
            missing.len(),
            keys.len(),
            &missing[..missing.len().min(8)]
        )));
    }
    records.retain(|r| keys.iter().any(|k| k.index == r.key.index));
    records.sort_by_key(|r| r.key.index);
    let (_, mut metric) = prepare(&plan)?;
    if let Some(m) = records.first().and_then(|r| r.result.metric(&metric.name)) {
        metric.unit = m.unit.clone();
    }
    let report = build_report(&plan, &records, &metric);
    Ok((plan, report))
}
