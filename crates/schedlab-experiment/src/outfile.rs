//! `--out` files: the JSON-lines results of `compare`, one plan header then one line per run.
//!
//! * crash safety: a rewrite goes to a synced temporary file renamed over the old one; runs
//!   are appended whole and synced (in `runner::execute`);
//! * one writer: [`OutLock`] holds an exclusive lock beside the file while a `compare`
//!   writes it, so a second `compare --out` (or `--resume`) on it is refused at once;
//! * runs that contradict the plan (a key outside it, another experiment's fingerprint, a
//!   workload or metric set not the plan's, no metrics) are refused by `check_runs`, by
//!   `--resume` and `merge` alike, naming the file and line's run.

use crate::error::ExperimentError;
use crate::plan::{Experiment, Plan};
use crate::runner::{RunRecord, point_workload, read_jsonl};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Schema tag of the header line of a JSON-lines results file.
pub const PLAN_SCHEMA: &str = "schedlab.plan/1";

/// The first line of an `--out` file: the experiment its runs belong to.
#[derive(Serialize, Deserialize)]
pub(crate) struct PlanHeader {
    pub(crate) schema: String,
    pub(crate) fingerprint: String,
    pub(crate) experiment: Experiment,
}

/// Opens `path` for this plan's runs: a new file gets the header; `--resume` reads the
/// runs already there (checked against the plan) and rewrites the file without a torn last
/// line or duplicates. Returns the runs already done.
pub(crate) fn start_out_file(
    path: &Path,
    plan: &Plan,
    resume: bool,
    headline: &str,
) -> Result<Vec<RunRecord>, ExperimentError> {
    remove_stale_temporaries(path);
    let fp = plan.experiment.fingerprint();
    if resume && let Some(h) = read_header(path)? {
        if h.fingerprint != fp {
            return Err(ExperimentError::Input(format!(
                "{} holds runs of another experiment (fingerprint {} vs {fp}); use another --out",
                path.display(),
                h.fingerprint
            )));
        }
        let recs: Vec<RunRecord> = read_jsonl(path)?;
        check_runs(plan, &recs, path, headline)?;
        let recs = dedup_runs(recs.into_iter().map(|r| (path, r)).collect())?;
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

/// Removes the temporary files of rewrites that a kill interrupted before their rename
/// (`.NAME.tmp.PID`). The caller holds the file's [`OutLock`], so none is in use.
fn remove_stale_temporaries(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!(".{}.tmp.", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.strip_prefix(&prefix)
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Writes `text` to a temporary file beside `path`, syncs it and renames it over `path`.
pub(crate) fn replace_atomically(path: &Path, text: &str) -> Result<(), ExperimentError> {
    let err = |what: &str, e: std::io::Error| {
        ExperimentError::Io(format!("cannot {what} {}: {e}", path.display()))
    };
    // A rename replaces whatever is there: never a device, FIFO or link (callers pass the
    // path `outpath::results_file` resolved).
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
        return Err(ExperimentError::Input(format!(
            "{} is not a regular file; it is not replaced",
            path.display()
        )));
    }
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

/// The plan header of `path` (`None` for a missing file or one without a header); a header
/// whose experiment no longer has the fingerprint written beside it (edited by hand) is an
/// error.
pub(crate) fn read_header(path: &Path) -> Result<Option<PlanHeader>, ExperimentError> {
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
            let fp = h.experiment.fingerprint();
            if fp != h.fingerprint {
                return Err(ExperimentError::Input(format!(
                    "{}: the plan header was edited: its experiment has fingerprint {fp}, not the {} \
                     written beside it, so its runs may not be of this plan",
                    path.display(),
                    h.fingerprint
                )));
            }
            // Bounded before it is expanded into a plan (points, run keys).
            h.experiment
                .validate()
                .map_err(|e| ExperimentError::Input(format!("{}: {e}", path.display())))?;
            return Ok(Some(h));
        }
    }
    Ok(None)
}

/// The runs by index, each once: a run written twice with the same result (two writers, a
/// rerun, a shard given twice) counts once, by `--resume` and `merge` alike; two different
/// results for one run cannot both be right and are an error naming both files.
pub(crate) fn dedup_runs(recs: Vec<(&Path, RunRecord)>) -> Result<Vec<RunRecord>, ExperimentError> {
    let mut by_index: BTreeMap<usize, (&Path, RunRecord)> = BTreeMap::new();
    for (f, r) in recs {
        match by_index.get(&r.key.index) {
            None => {
                by_index.insert(r.key.index, (f, r));
            }
            Some((g, first)) if *first != r => {
                let k = r.key;
                return Err(ExperimentError::Input(format!(
                    "run {} (point {}, variant {}, repetition {}) has two different results \
                     (in {} and {}): they cannot both be right",
                    k.index,
                    k.point,
                    k.variant,
                    k.rep,
                    g.display(),
                    f.display()
                )));
            }
            Some(_) => {}
        }
    }
    Ok(by_index.into_values().map(|(_, r)| r).collect())
}

/// An exclusive lock on an `--out` file, held while one `compare` writes it. The lock is on
/// a hidden file beside it (`.NAME.lock`): the results file itself is replaced by rename on
/// `--resume`, and a lock on a replaced file would guard nothing. The lock file is removed
/// when the guard drops; the kernel releases the lock if the process dies.
#[derive(Debug)]
pub struct OutLock {
    path: PathBuf,
    _file: std::fs::File,
}

impl OutLock {
    /// Takes the lock for `out`, or says that another process writes it.
    pub fn acquire(out: &Path) -> Result<OutLock, ExperimentError> {
        use std::os::unix::fs::MetadataExt;
        let dir = match out.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = dir.join(format!(".{name}.lock"));
        let io = |e: std::io::Error| {
            ExperimentError::Io(format!(
                "cannot lock {} ({}): {e}",
                out.display(),
                path.display()
            ))
        };
        // A holder removes the lock file as it finishes; if we locked a file that was removed
        // (or replaced) meanwhile, lock the new one instead.
        loop {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(ExperimentError::Input(format!(
                        "{} is being written by another schedlab process (it holds {}); wait for \
                         it to finish, or use another --out",
                        out.display(),
                        path.display()
                    )));
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
            }
            let held = file.metadata().map_err(io)?;
            match std::fs::metadata(&path) {
                Ok(now) if now.ino() == held.ino() && now.dev() == held.dev() => {
                    return Ok(OutLock { path, _file: file });
                }
                _ => continue,
            }
        }
    }
}

impl Drop for OutLock {
    fn drop(&mut self) {
        // Removed while still locked, so no one can lock this file after us.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Checks that every run in `recs` (read from `path`) belongs to `plan`: the experiment's
/// fingerprint, a key inside the plan (point, variant and repetition in range and the index
/// the plan gives them), the point's workload, at least one metric, the headline among them,
/// and the same metric names as every other run of the point.
pub(crate) fn check_runs(
    plan: &Plan,
    recs: &[RunRecord],
    path: &Path,
    headline: &str,
) -> Result<(), ExperimentError> {
    let e = &plan.experiment;
    let fp = e.fingerprint();
    let (np, nv) = (plan.points.len(), e.variants.len());
    let stride = e.reps.max(e.max_reps);
    let mut workloads = BTreeMap::new();
    let mut names: BTreeMap<usize, (usize, Vec<&str>)> = BTreeMap::new();
    for r in recs {
        let k = r.key;
        let bad = |msg: String| {
            ExperimentError::Input(format!(
                "{}: run {} (point {}, variant {}, repetition {}) contradicts the plan: {msg}",
                path.display(),
                k.index,
                k.point,
                k.variant,
                k.rep
            ))
        };
        if r.experiment != fp {
            return Err(bad(format!(
                "it is of experiment {}, the file's plan is {fp}",
                r.experiment
            )));
        }
        if k.point >= np || k.variant >= nv || k.rep >= stride {
            return Err(bad(format!(
                "the plan has {np} points, {nv} variants and at most {stride} repetitions"
            )));
        }
        let index = (k.point * stride + k.rep) * nv + k.variant;
        if k.index != index {
            return Err(bad(format!("the plan numbers this run {index}")));
        }
        let want: &String = match workloads.entry(k.point) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(point_workload(plan, k.point)?.to_string()),
        };
        if r.workload != *want {
            return Err(bad(format!(
                "its workload is '{}', the plan's is '{want}'",
                r.workload
            )));
        }
        let mine: Vec<&str> = r.result.metrics.iter().map(|m| m.name.as_str()).collect();
        if mine.is_empty() {
            return Err(bad("it has no metrics".into()));
        }
        if !mine.contains(&headline) {
            return Err(bad(format!(
                "it has no {headline} metric (the plan's headline); its metrics: {}",
                mine.join(", ")
            )));
        }
        if let Some(bad_value) = r.result.metrics.iter().find(|m| !m.value.is_finite()) {
            return Err(bad(format!("metric {} is not a number", bad_value.name)));
        }
        // A distribution's counts are wakeups of one run: they add up within u64 (the report
        // takes its quantiles from the total; found by tests/fuzz.rs, a count set to u64::MAX).
        for (name, dist) in [
            ("wakee_flips", &r.counters.wakee_flips),
            ("waker_flips", &r.counters.waker_flips),
        ] {
            if dist
                .iter()
                .try_fold(0u64, |a, &n| a.checked_add(n))
                .is_none()
            {
                return Err(bad(format!(
                    "its {name} distribution counts more wakeups than a u64 holds"
                )));
            }
        }
        match names.get(&k.point) {
            None => {
                names.insert(k.point, (k.index, mine));
            }
            Some((first, theirs)) if *theirs != mine => {
                return Err(bad(format!(
                    "its metrics ({}) are not those of run {first} of the same point ({})",
                    mine.join(", "),
                    theirs.join(", ")
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}
