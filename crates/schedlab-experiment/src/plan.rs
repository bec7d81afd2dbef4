//! What to run: an [`Experiment`] (topology, workload, variants, sweep, repetitions, seed),
//! from command-line flags or a TOML file, expanded into a [`Plan`] of numbered runs.
//!
//! The plan's order is fixed — point-major, then repetition, then variant — so a run's index
//! identifies it across processes: shards, resumed sweeps and merges all agree on it.

use crate::error::ExperimentError;
use schedlab_engine::rng::derive_seed;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Most repetitions per (point, variant) an experiment may ask for (`reps`, `max_reps`).
pub const MAX_REPS: usize = 10_000;
/// Most sweep points (the product of the sweep's value counts).
pub const MAX_POINTS: usize = 100_000;

/// An experiment as the user describes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// Topology spec (preset, compact string, file, `host`).
    pub topology: String,
    /// `numactl` input: threads per core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smt: Option<usize>,
    /// `numactl` input: LLCs per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llc_per_node: Option<usize>,
    /// Machine profile file (default: the preset's built-in profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<PathBuf>,
    /// Workload spec `NAME[:key=value,...]`.
    pub workload: String,
    /// Policy variants `POLICY[,SWITCH]...`; the first is the baseline of ratios.
    pub variants: Vec<String>,
    /// Sweep axes: workload parameter → values (Cartesian product, first axis outermost).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sweep: Vec<(String, Vec<String>)>,
    /// Repetitions per (point, variant).
    #[serde(default = "default_reps")]
    pub reps: usize,
    /// Base seed; repetition k uses `derive_seed(seed, k)` for every variant and point.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Keep adding repetitions until every ratio's confidence interval is within ±P %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ci: Option<f64>,
    /// Cap on repetitions for `until_ci`.
    #[serde(default = "default_max_reps")]
    pub max_reps: usize,
}

fn default_reps() -> usize {
    3
}
fn default_seed() -> u64 {
    1
}
fn default_max_reps() -> usize {
    30
}

/// The TOML form of an experiment file (`schedlab compare FILE.toml`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExperimentFile {
    #[serde(default)]
    description: Option<String>,
    topology: String,
    #[serde(default)]
    smt: Option<usize>,
    #[serde(default)]
    llc_per_node: Option<usize>,
    #[serde(default)]
    profile: Option<PathBuf>,
    workload: String,
    variants: Vec<String>,
    #[serde(default)]
    sweep: toml::Table,
    #[serde(default)]
    reps: Option<usize>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    until_ci: Option<f64>,
    #[serde(default)]
    max_reps: Option<usize>,
}

impl Experiment {
    /// Reads an experiment TOML file. Relative `profile` paths are relative to the file.
    pub fn from_file(path: &Path) -> Result<(Experiment, Option<String>), ExperimentError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ExperimentError::Io(format!("cannot read {}: {e}", path.display())))?;
        // A byte-order mark (Windows editors write one) is not part of the TOML.
        let f: ExperimentFile = toml::from_str(text.strip_prefix('\u{feff}').unwrap_or(&text))
            .map_err(|e| ExperimentError::Input(format!("{}: {e}", path.display())))?;
        let sweep = sweep_axes(&f.sweep, &path.display().to_string())?;
        let profile = f.profile.map(|p| {
            if p.is_relative() {
                path.parent().map_or(p.clone(), |d| d.join(&p))
            } else {
                p
            }
        });
        let e = Experiment {
            topology: f.topology,
            smt: f.smt,
            llc_per_node: f.llc_per_node,
            profile,
            workload: f.workload,
            variants: f.variants,
            sweep,
            reps: f.reps.unwrap_or_else(default_reps),
            seed: f.seed.unwrap_or_else(default_seed),
            until_ci: f.until_ci,
            max_reps: f.max_reps.unwrap_or_else(default_max_reps),
        };
        e.validate()?;
        Ok((e, f.description))
    }

    /// Checks the parts that need no other crate.
    pub fn validate(&self) -> Result<(), ExperimentError> {
        if self.variants.is_empty() {
            return Err(ExperimentError::Input(
                "at least one variant (-v) is needed".into(),
            ));
        }
        if self.reps == 0 {
            return Err(ExperimentError::Input("--reps must be at least 1".into()));
        }
        // Bounds before anything is expanded: the plan's points and run keys are built in
        // memory (a run file's header is read back as an experiment too, so `merge` and
        // `--resume` are bounded by the same checks).
        for (flag, n) in [("--reps", self.reps), ("--max-reps", self.max_reps)] {
            if n > MAX_REPS {
                return Err(ExperimentError::Input(format!(
                    "{flag} {n}: at most {MAX_REPS}"
                )));
            }
        }
        let mut points: usize = 1;
        for (k, v) in &self.sweep {
            if v.is_empty() {
                return Err(ExperimentError::Input(format!(
                    "sweep key '{k}' has no values"
                )));
            }
            points = points.saturating_mul(v.len());
        }
        if points > MAX_POINTS {
            return Err(ExperimentError::Input(format!(
                "the sweep has {} points: at most {MAX_POINTS}; sweep fewer values",
                if points == usize::MAX {
                    "more than 2^64".to_string()
                } else {
                    points.to_string()
                }
            )));
        }
        if let Some(p) = self.until_ci {
            if !(p.is_finite() && p > 0.0) {
                return Err(ExperimentError::Input(format!(
                    "--until-ci {p}: expected a positive percentage"
                )));
            }
            if self.max_reps < self.reps.max(2) {
                return Err(ExperimentError::Input(format!(
                    "--max-reps {} must be at least --reps {} (and 2)",
                    self.max_reps, self.reps
                )));
            }
        }
        Ok(())
    }

    /// Parses `KEY=V1,V2,...`.
    pub fn parse_sweep(s: &str) -> Result<(String, Vec<String>), ExperimentError> {
        let (k, v) = s.split_once('=').ok_or_else(|| {
            ExperimentError::Input(format!(
                "--sweep '{s}': expected KEY=V1,V2,... (e.g. groups=1,2,4)"
            ))
        })?;
        let vals: Vec<String> = v
            .split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect();
        if k.trim().is_empty() || vals.is_empty() {
            return Err(ExperimentError::Input(format!(
                "--sweep '{s}': expected KEY=V1,V2,..."
            )));
        }
        Ok((k.trim().to_string(), vals))
    }

    /// A stable fingerprint of everything that decides the results (shards and resumed
    /// files must carry the same one).
    pub fn fingerprint(&self) -> String {
        let canon = serde_json::to_string(&(
            &self.topology,
            self.smt,
            self.llc_per_node,
            &self.profile,
            &self.workload,
            &self.variants,
            &self.sweep,
            self.seed,
        ))
        .unwrap_or_default();
        format!("{:016x}", fnv1a(canon.as_bytes()))
    }
}

/// A TOML sweep table as experiment axes (`key = [values]` or `key = value`, keys in table
/// order); `origin` names the file in errors.
pub(crate) fn sweep_axes(
    t: &toml::Table,
    origin: &str,
) -> Result<Vec<(String, Vec<String>)>, ExperimentError> {
    let mut out = Vec::new();
    for (k, v) in t {
        let vals = match v {
            toml::Value::Array(a) => a.iter().map(value_string).collect::<Result<Vec<_>, _>>(),
            other => value_string(other).map(|s| vec![s]),
        }
        .map_err(|e| ExperimentError::Input(format!("{origin}: sweep.{k}: {e}")))?;
        out.push((k.clone(), vals));
    }
    Ok(out)
}

/// A sweep or parameter value that is no string, number or boolean (a table, a date, an
/// array inside the array of a sweep axis).
#[derive(Debug, thiserror::Error)]
#[error("unsupported value {0}")]
pub(crate) struct UnsupportedValue(toml::Value);

/// A scalar TOML value as the text a workload spec would carry.
pub(crate) fn value_string(v: &toml::Value) -> Result<String, UnsupportedValue> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => Err(UnsupportedValue(other.clone())),
    }
}

/// 64-bit FNV-1a: a stable, dependency-free fingerprint.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// One sweep point: parameter assignments and the resulting workload spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// `(key, value)` in sweep-axis order.
    pub params: Vec<(String, String)>,
}

/// One run of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunKey {
    /// Global index in plan order.
    pub index: usize,
    /// Sweep point.
    pub point: usize,
    /// Variant.
    pub variant: usize,
    /// Repetition.
    pub rep: usize,
}

/// The expanded experiment.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The experiment.
    pub experiment: Experiment,
    /// Sweep points (one empty point without a sweep).
    pub points: Vec<Point>,
}

impl Plan {
    /// Expands the sweep.
    pub fn new(experiment: Experiment) -> Self {
        let mut points = vec![Point { params: Vec::new() }];
        for (k, vals) in &experiment.sweep {
            let mut next = Vec::new();
            for p in &points {
                for v in vals {
                    let mut q = p.clone();
                    q.params.push((k.clone(), v.clone()));
                    next.push(q);
                }
            }
            points = next;
        }
        Plan { experiment, points }
    }

    /// Runs for repetitions `reps` (a range), in plan order.
    pub fn keys(&self, reps: std::ops::Range<usize>) -> Vec<RunKey> {
        let nv = self.experiment.variants.len();
        let total_reps = self.experiment.reps.max(reps.end);
        let mut v = Vec::new();
        for point in 0..self.points.len() {
            for rep in reps.clone() {
                for variant in 0..nv {
                    let index =
                        (point * total_reps.max(self.experiment.max_reps) + rep) * nv + variant;
                    v.push(RunKey {
                        index,
                        point,
                        variant,
                        rep,
                    });
                }
            }
        }
        v
    }

    /// The seed of repetition `rep` (common random numbers: the same for every variant).
    pub fn seed(&self, rep: usize) -> u64 {
        derive_seed(self.experiment.seed, rep as u64)
    }

    /// Human label of a point, e.g. `groups=10 loops=100`, or `-` without a sweep.
    pub fn point_label(&self, point: usize) -> String {
        let p = &self.points[point];
        if p.params.is_empty() {
            "-".into()
        } else {
            p.params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        }
    }
}

/// Parses `K/N` (1-based K) into `(k-1, n)`.
pub fn parse_shard(s: &str) -> Result<(usize, usize), ExperimentError> {
    let bad = || {
        ExperimentError::Input(format!(
            "--shard '{s}': expected K/N with 1 <= K <= N (e.g. 2/8)"
        ))
    };
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let k: usize = k.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || k == 0 || k > n {
        return Err(bad());
    }
    Ok((k - 1, n))
}

/// The shard from the environment of a Slurm job array or a Kubernetes Indexed Job.
pub fn shard_from_env() -> Result<Option<(usize, usize)>, ExperimentError> {
    shard_from_vars(|k| std::env::var(k).ok())
}

/// [`shard_from_env`] over any variable source. An index without its count (a Kubernetes
/// Indexed Job whose `SCHEDLAB_SHARD_COUNT` was forgotten would otherwise run every run in
/// every pod), or a value that is not a number, is an error, never "no sharding".
pub fn shard_from_vars(
    get: impl Fn(&str) -> Option<String>,
) -> Result<Option<(usize, usize)>, ExperimentError> {
    let num = |k: &str| -> Result<Option<usize>, ExperimentError> {
        match get(k) {
            None => Ok(None),
            Some(v) => v.trim().parse::<usize>().map(Some).map_err(|_| {
                ExperimentError::Input(format!("{k}={v:?}: expected a non-negative integer"))
            }),
        }
    };
    for (index, count) in [
        ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"),
        ("JOB_COMPLETION_INDEX", "SCHEDLAB_SHARD_COUNT"),
    ] {
        match (num(index)?, num(count)?) {
            (None, None) => continue,
            // Arrays are 0- or 1-based (--array=0-N or 1-N); the id modulo the count covers
            // every shard exactly once either way.
            (Some(id), Some(n)) if n > 0 => return Ok(Some((id % n, n))),
            (Some(_), Some(_)) => {
                return Err(ExperimentError::Input(format!(
                    "{count}=0: expected at least 1"
                )));
            }
            (Some(_), None) => {
                return Err(ExperimentError::Input(format!(
                    "{index} is set but {count} is not: set {count} to the number of shards (or pass --shard K/N)"
                )));
            }
            (None, Some(_)) => {
                return Err(ExperimentError::Input(format!(
                    "{count} is set but {index} is not"
                )));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_variables_need_their_count() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(shard_from_vars(vars(&[])).unwrap(), None);
        assert_eq!(
            shard_from_vars(vars(&[
                ("JOB_COMPLETION_INDEX", "5"),
                ("SCHEDLAB_SHARD_COUNT", "4")
            ]))
            .unwrap(),
            Some((1, 4))
        );
        assert_eq!(
            shard_from_vars(vars(&[
                ("SLURM_ARRAY_TASK_ID", "4"),
                ("SLURM_ARRAY_TASK_COUNT", "4")
            ]))
            .unwrap(),
            Some((0, 4))
        );
        for (bad, needle) in [
            (
                &[("JOB_COMPLETION_INDEX", "2")][..],
                "SCHEDLAB_SHARD_COUNT is not",
            ),
            (
                &[
                    ("SLURM_ARRAY_TASK_ID", "x"),
                    ("SLURM_ARRAY_TASK_COUNT", "4"),
                ][..],
                "expected a non-negative integer",
            ),
            (
                &[("JOB_COMPLETION_INDEX", "1"), ("SCHEDLAB_SHARD_COUNT", "0")][..],
                "at least 1",
            ),
            (
                &[("SCHEDLAB_SHARD_COUNT", "3")][..],
                "JOB_COMPLETION_INDEX is not",
            ),
        ] {
            let err = shard_from_vars(vars(bad)).unwrap_err().to_string();
            assert!(err.contains(needle), "{bad:?}: {err}");
        }
    }

    fn exp() -> Experiment {
        Experiment {
            topology: "desktop-4c8t".into(),
            smt: None,
            llc_per_node: None,
            profile: None,
            workload: "pipe".into(),
            variants: vec!["a".into(), "b".into()],
            sweep: vec![
                ("x".into(), vec!["1".into(), "2".into()]),
                ("y".into(), vec!["a".into(), "b".into(), "c".into()]),
            ],
            reps: 2,
            seed: 7,
            until_ci: None,
            max_reps: 30,
        }
    }

    #[test]
    fn sweep_is_cartesian_and_keys_are_unique() {
        let p = Plan::new(exp());
        assert_eq!(p.points.len(), 6);
        assert_eq!(p.point_label(1), "x=1 y=b");
        let keys = p.keys(0..2);
        assert_eq!(keys.len(), 6 * 2 * 2);
        let mut idx: Vec<usize> = keys.iter().map(|k| k.index).collect();
        idx.sort_unstable();
        idx.dedup();
        assert_eq!(idx.len(), keys.len());
        // Adding repetitions later keeps earlier indices.
        let more = p.keys(2..4);
        assert!(
            more.iter()
                .all(|k| !keys.iter().any(|o| o.index == k.index))
        );
    }

    #[test]
    fn shard_syntax() {
        assert_eq!(parse_shard("2/8").unwrap(), (1, 8));
        assert!(parse_shard("0/8").is_err());
        assert!(parse_shard("9/8").is_err());
        assert!(parse_shard("x").is_err());
    }

    #[test]
    fn sweep_syntax() {
        assert_eq!(
            Experiment::parse_sweep("groups=1,2").unwrap(),
            ("groups".into(), vec!["1".into(), "2".into()])
        );
        assert!(Experiment::parse_sweep("groups").is_err());
        assert!(Experiment::parse_sweep("groups=").is_err());
    }
}
