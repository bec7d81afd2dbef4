//! The experiment a call describes, built as `schedlab run`/`compare` build it from their
//! flags (`experiment_from` in `crates/schedlab-cli/src/experiment_cmd.rs`; `check_plan` is the
//! CLI's own, compiled in with its checks),
//! with the same defaults, the same checks and the same messages. Keep the two in step: the
//! tests compare this module's results and errors with the binary's.

use crate::cli_checks as checks;
use anyhow::{Result, bail};
use schedlab_experiment::plan::Experiment;
use std::path::{Path, PathBuf};

/// Default machine (`-t`), workload, sweep and variant: the CLI's.
pub const DEFAULT_TOPOLOGY: &str = "desktop-4c8t";
pub const DEFAULT_WORKLOAD: &str = "tbench:clients=4,duration=200ms";
pub const DEFAULT_SWEEP: &str = "clients=1,4,8,16";
pub const DEFAULT_VARIANT: &str = "linux-6.6";
/// Where `-t host` reads sysfs when set (the CLI's `$SCHEDLAB_SYSFS_ROOT`).
const SYSFS_ROOT_ENV: &str = "SCHEDLAB_SYSFS_ROOT";

/// The options `run` and `compare` share (`CommonArgs` of the CLI).
#[derive(Clone, Debug, Default)]
pub struct Common {
    pub topology: String,
    pub smt: Option<usize>,
    pub llc_per_node: Option<usize>,
    pub workload: Option<String>,
    pub profile: Option<PathBuf>,
    pub reps: Option<usize>,
    pub seed: Option<u64>,
}

/// `experiment_from` of the CLI, less `--trace` (a trace here is returned, not written).
pub fn experiment_from(
    common: &Common,
    variants: Vec<String>,
    sweep: &[String],
    file: Option<&Path>,
) -> Result<(Experiment, Option<String>)> {
    let (mut e, desc) = match file {
        Some(f) => Experiment::from_file(f)?,
        None => (
            Experiment {
                topology: common.topology.clone(),
                smt: None,
                llc_per_node: None,
                profile: None,
                workload: DEFAULT_WORKLOAD.into(),
                variants: vec![],
                sweep: vec![],
                reps: 3,
                seed: 1,
                until_ci: None,
                max_reps: 30,
            },
            None,
        ),
    };
    if file.is_none() || common.topology != DEFAULT_TOPOLOGY {
        e.topology = common.topology.clone();
    }
    e.smt = common.smt.or(e.smt);
    e.llc_per_node = common.llc_per_node.or(e.llc_per_node);
    if let Some(w) = &common.workload {
        e.workload = w.clone();
    }
    if let Some(p) = &common.profile {
        e.profile = Some(p.clone());
    }
    if let Some(r) = common.reps {
        checks::reps("--reps", r)?;
        e.reps = r;
    }
    if let Some(s) = common.seed {
        e.seed = s;
    }
    if !variants.is_empty() {
        e.variants = variants;
    }
    for s in sweep {
        let axis = Experiment::parse_sweep(s)?;
        if file.is_some() && e.sweep.iter().any(|(k, _)| *k == axis.0) {
            bail!(
                "--sweep {}: the experiment file sweeps '{}' already; change its values in the file, or give another key",
                axis.0,
                axis.0
            );
        }
        e.sweep.push(axis);
    }
    checks::sweep_keys(&e.sweep)?;
    checks::sweep_values(&e.sweep)?;
    // The built-in default workload names the clients the default sweep replaces.
    if common.workload.is_some() || file.is_some() {
        checks::sweep_vs_spec(&e.workload, &e.sweep)?;
    }
    checks::distinct_variants(&e.variants)?;
    for v in &e.variants {
        checks::variant(v)?;
    }
    checks::workload_file(&e.workload)?;
    if e.topology == "host"
        && let Some(root) = std::env::var_os(SYSFS_ROOT_ENV).filter(|v| !v.is_empty())
    {
        let root = PathBuf::from(root);
        if !root.is_dir() {
            bail!(
                "--sysfs-root {}: not a directory (the root of a sysfs tree, containing devices/system/cpu)",
                root.display()
            );
        }
        e.topology = root.to_string_lossy().into_owned();
    }
    Ok((e, desc))
}

/// `--min-effect`'s check: a percentage from 0 to below 100 (clap's value parser in the CLI).
pub fn min_effect(p: f64) -> Result<f64> {
    if (0.0..100.0).contains(&p) {
        Ok(p)
    } else {
        bail!(
            "invalid value '{p}' for '--min-effect <PCT>': a percentage from 0 to below 100, e.g. 2 (0 calls every significant difference)"
        )
    }
}

/// `--jobs`' range (clap's in the CLI).
pub fn jobs(j: Option<u64>) -> Result<usize> {
    match j {
        None => Ok(0),
        Some(n) if (1..=1024).contains(&n) => Ok(n as usize),
        Some(n) => bail!("invalid value '{n}' for '--jobs <JOBS>': {n} is not in 1..=1024"),
    }
}
