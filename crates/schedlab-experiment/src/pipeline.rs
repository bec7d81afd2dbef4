//! The experiment end to end: prepare a plan, run a comparison (or a shard of one, with
//! added repetitions for `--until-ci`), merge shard files. Re-exported at the crate root.

use crate::error::ExperimentError;
use crate::outfile::{
    OutLock, PLAN_SCHEMA, PlanHeader, check_runs, dedup_runs, read_header, start_out_file,
};
use crate::plan::Plan;
use crate::report::{CompareReport, MetricInfo, build_report};
use crate::runner::{self, ExecOptions, Machine, RunRecord, execute, read_jsonl};

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
///
/// Every point's spec is checked (each swept key and value, as `--sweep` reads them), and the
/// first and the last point are built: between them they hold every axis's first and last
/// value, where a range or size limit is crossed. The points between are built by their own
/// runs (a point that cannot be built stops the comparison at its first run, naming it):
/// building every point here made the time before the first run grow with the sum of the
/// points' sizes, quadratic in a sweep of sizes (`clients=1,...,1000`).
pub fn prepare(plan: &Plan) -> Result<(Machine, MetricInfo), ExperimentError> {
    plan.experiment.validate()?;
    let machine = Machine::load(plan)?;
    let n = plan.points.len();
    let mut metric = None;
    for point in 0..n {
        let spec = runner::point_workload(plan, point)?;
        if point != 0 && point + 1 != n {
            continue;
        }
        let inst = schedlab_workloads::instantiate(&spec, &machine.topo)
            .map_err(|e| ExperimentError::Input(runner::point_error(plan, point, e)))?;
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

/// Runs a comparison (all of it, or one shard), adding repetitions for `until_ci`.
pub fn compare(plan: &Plan, opts: &ExecOptions) -> Result<CompareOutput, ExperimentError> {
    let (machine, mut metric) = prepare(plan)?;
    if plan.experiment.until_ci.is_some() && opts.shard.is_some() {
        return Err(ExperimentError::Input("--until-ci cannot be combined with --shard (the number of repetitions would differ per shard)".into()));
    }
    // The results file is a regular file (a symlink's target): a device or FIFO cannot be
    // read back or renamed over, and a rewrite must replace the target, not the link.
    let resolved;
    let opts = match &opts.out {
        Some(p) => {
            resolved = ExecOptions {
                out: Some(
                    crate::outpath::results_file(p, "--out").map_err(ExperimentError::Input)?,
                ),
                ..opts.clone()
            };
            &resolved
        }
        None => opts,
    };
    // One writer per file, for the whole run (dropped, and removed, when compare returns).
    let _lock = opts.out.as_deref().map(OutLock::acquire).transpose()?;
    let mut done = match &opts.out {
        Some(p) => start_out_file(p, plan, opts.resume, &metric.name)?,
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
        records.push((f.clone(), read_jsonl(f)?));
    }
    let header = header.ok_or_else(|| ExperimentError::Input("no header".into()))?;
    let plan = Plan::new(header.experiment);
    let (_, mut metric) = prepare(&plan)?;
    for (f, recs) in &records {
        check_runs(&plan, recs, f, &metric.name)?;
    }
    let mut records = dedup_runs(
        records
            .iter()
            .flat_map(|(f, recs)| recs.iter().map(move |r| (f.as_path(), r.clone())))
            .collect(),
    )?;
    let keys = plan.keys(0..plan.experiment.reps);
    let have: std::collections::BTreeSet<usize> = records.iter().map(|r| r.key.index).collect();
    let missing: Vec<usize> = keys
        .iter()
        .map(|k| k.index)
        .filter(|i| !have.contains(i))
        .collect();
    if !missing.is_empty() {
        return Err(ExperimentError::Input(format!(
            "{} of {} runs are missing (e.g. run indices {:?}); run the missing shards or --resume them",
            missing.len(),
            keys.len(),
            &missing[..missing.len().min(8)]
        )));
    }
    let planned: std::collections::BTreeSet<usize> = keys.iter().map(|k| k.index).collect();
    records.retain(|r| planned.contains(&r.key.index));
    records.sort_by_key(|r| r.key.index);
    if let Some(m) = records.first().and_then(|r| r.result.metric(&metric.name)) {
        metric.unit = m.unit.clone();
    }
    let report = build_report(&plan, &records, &metric);
    Ok((plan, report))
}
