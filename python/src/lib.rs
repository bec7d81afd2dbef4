//! `schedlab._schedlab`: the native half of the `schedlab` Python package.
//!
//! Each function does what the `schedlab` command of the same name does, through the same
//! library calls, and hands back plain data: the JSON the CLI prints with `--json` (so the
//! numbers are the CLI's to the last digit) or lists of columns. The Python half
//! (`schedlab/__init__.py`) turns them into pandas DataFrames, which keeps pandas out of Rust.
//! Errors become `schedlab.SchedlabError` with the CLI's message; long work runs without the
//! GIL and stops on Ctrl-C (`interrupt`).

mod args;
mod cli_checks;
mod interrupt;
mod trace_cols;

use anyhow::{Result, bail};
use args::Common;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use schedlab_experiment::output::{Json, OutputFormat};
use schedlab_experiment::plan::{Plan, RunKey};
use schedlab_experiment::runner::{ExecOptions, RunRecord, run_one};
use std::path::PathBuf;

create_exception!(
    _schedlab,
    SchedlabError,
    PyException,
    "Bad input or a failed run; the message is the one the `schedlab` command prints."
);

/// The CLI's `schedlab: error: {e:#}`, less the prefix.
fn py_err(e: anyhow::Error) -> PyErr {
    SchedlabError::new_err(format!("{e:#}"))
}

/// Runs `work` interruptibly and maps its error.
fn work<T: Send + 'static>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> PyResult<T> {
    interrupt::run(py, f)?.map_err(py_err)
}

fn json<T: serde::Serialize + ?Sized>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| py_err(e.into()))
}

/// What `compare` (and `explain`) hand to Python.
struct Compared {
    /// `schedlab compare --json`, byte for byte.
    compare_json: String,
    /// One object per run: its place, seed, metric value and counters (JSON array).
    runs_json: String,
    /// `schedlab explain --json` (`{"explain", "sensitivity"}`), when asked for.
    explain_json: Option<String>,
    interrupted: bool,
}

/// The arguments of `compare`, as the CLI's `CompareArgs` holds them.
struct CompareCall {
    common: Common,
    file: Option<PathBuf>,
    variants: Vec<String>,
    sweep: Vec<String>,
    until_ci: Option<f64>,
    max_reps: Option<usize>,
    min_effect: Option<f64>,
    jobs: Option<u64>,
    force: bool,
    explain: bool,
    sensitivity: bool,
}

/// `schedlab compare` (`experiment_cmd::compare`) without the terminal and files.
fn compare_impl(c: CompareCall) -> Result<Compared> {
    let variants = if c.variants.is_empty() && c.file.is_none() {
        vec![
            args::DEFAULT_VARIANT.to_string(),
            format!("{},NO_WAKE_AFFINE", args::DEFAULT_VARIANT),
        ]
    } else {
        c.variants.clone()
    };
    let mut sweep = c.sweep.clone();
    if c.file.is_none() && c.common.workload.is_none() && sweep.is_empty() {
        sweep.push(args::DEFAULT_SWEEP.to_string());
    }
    let (mut e, _) = args::experiment_from(&c.common, variants, &sweep, c.file.as_deref())?;
    if let Some(p) = c.until_ci {
        e.until_ci = Some(p);
    }
    if let Some(m) = c.max_reps {
        if e.until_ci.is_none() {
            bail!("--max-reps only applies with --until-ci P (the cap of the repetitions it adds)");
        }
        cli_checks::reps("--max-reps", m)?;
        e.max_reps = m;
    }
    let min_effect = c.min_effect.map(args::min_effect).transpose()?;
    let jobs = args::jobs(c.jobs)?;
    e.validate()?;
    let plan = Plan::new(e);
    if c.sensitivity && !c.explain {
        bail!(
            "--sensitivity tests an explanation's verdicts: use it with `schedlab explain` or `compare --explain`"
        );
    }
    if c.explain {
        schedlab_experiment::explain::check_plan(&plan)?;
    }
    let reruns = if c.sensitivity {
        1 + 2 * schedlab_experiment::explain::sensitivity::SCALED.len()
    } else {
        1
    };
    cli_checks::check_plan(&plan, jobs, c.force, reruns)?;
    let opts = ExecOptions {
        jobs,
        ..Default::default()
    };
    let out = schedlab_experiment::compare(&plan, &opts)?;
    let report = match min_effect {
        Some(pct) => out.report.clone().with_min_effect(pct / 100.0),
        None => out.report.clone(),
    };
    let compare_json = Json.render(&report)?;
    let runs_json = runs_json(&plan, &out.records, &report.metric.name)?;
    let mut interrupted = out.interrupted;
    let explain_json = if c.explain {
        let ex = schedlab_experiment::explain::explain(&report, &out.records);
        let sens = if c.sensitivity && !interrupted {
            Some(schedlab_experiment::explain::sensitivity::sensitivity(
                &plan, &opts, &report,
            )?)
        } else {
            None
        };
        interrupted |=
            schedlab_experiment::runner::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst);
        Some(serde_json::to_string(
            &serde_json::json!({ "explain": ex, "sensitivity": sens }),
        )?)
    } else {
        None
    };
    Ok(Compared {
        compare_json,
        runs_json,
        explain_json,
        interrupted,
    })
}

/// The long form of the runs: one object per (point, variant, repetition).
fn runs_json(plan: &Plan, records: &[RunRecord], metric: &str) -> Result<String> {
    let rows: Vec<serde_json::Value> = records
        .iter()
        .map(|r| {
            serde_json::json!({
                "point": r.key.point,
                "params": plan.points.get(r.key.point).map(|p| &p.params),
                "variant": r.variant,
                "rep": r.key.rep,
                "seed": r.seed,
                "workload": r.workload,
                "value": schedlab_experiment::report::metric_value(r, metric),
                "counters": r.counters.fields().into_iter().collect::<std::collections::BTreeMap<_, _>>(),
            })
        })
        .collect();
    Ok(serde_json::to_string(&rows)?)
}

/// Runs `schedlab compare`; returns `(compare_json, runs_json, explain_json)`. Use
/// `schedlab.compare`, which builds the DataFrames.
#[pyfunction]
#[pyo3(signature = (topo=None, workload=None, variants=vec![], sweep=vec![], reps=None, seed=None,
    file=None, profile=None, smt=None, llc_per_node=None, until_ci=None, max_reps=None,
    min_effect=None, jobs=None, force=false, explain=false, sensitivity=false))]
#[allow(clippy::too_many_arguments)]
fn compare(
    py: Python<'_>,
    topo: Option<String>,
    workload: Option<String>,
    variants: Vec<String>,
    sweep: Vec<String>,
    reps: Option<usize>,
    seed: Option<u64>,
    file: Option<PathBuf>,
    profile: Option<PathBuf>,
    smt: Option<usize>,
    llc_per_node: Option<usize>,
    until_ci: Option<f64>,
    max_reps: Option<usize>,
    min_effect: Option<f64>,
    jobs: Option<u64>,
    force: bool,
    explain: bool,
    sensitivity: bool,
) -> PyResult<(String, String, Option<String>)> {
    let call = CompareCall {
        common: Common {
            topology: topo.unwrap_or_else(|| args::DEFAULT_TOPOLOGY.into()),
            smt,
            llc_per_node,
            workload,
            profile,
            reps,
            seed,
        },
        file,
        variants,
        sweep,
        until_ci,
        max_reps,
        min_effect,
        jobs,
        force,
        explain,
        sensitivity,
    };
    let out = work(py, move || compare_impl(call))?;
    if out.interrupted {
        return Err(PyKeyboardInterrupt::new_err(
            "interrupted: the runs in progress finished; nothing is returned",
        ));
    }
    Ok((out.compare_json, out.runs_json, out.explain_json))
}

/// One repetition of `run`.
struct OneRun {
    record: RunRecord,
    counters: Vec<(&'static str, f64)>,
    counters_text: String,
    wake_graph_text: String,
    schedstat: String,
    trace: Option<trace_cols::Columns>,
}

/// Runs `schedlab run`; returns a list of dicts, one per repetition (the first with the
/// trace's columns when `trace` is true). Use `schedlab.run`.
#[pyfunction]
#[pyo3(signature = (topo=None, workload=None, variant=None, reps=None, seed=None, profile=None,
    smt=None, llc_per_node=None, trace=false))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    topo: Option<String>,
    workload: Option<String>,
    variant: Option<String>,
    reps: Option<usize>,
    seed: Option<u64>,
    profile: Option<PathBuf>,
    smt: Option<usize>,
    llc_per_node: Option<usize>,
    trace: bool,
) -> PyResult<Vec<Py<PyDict>>> {
    let common = Common {
        topology: topo.unwrap_or_else(|| args::DEFAULT_TOPOLOGY.into()),
        smt,
        llc_per_node,
        workload,
        profile,
        reps,
        seed,
    };
    let variant = variant.unwrap_or_else(|| args::DEFAULT_VARIANT.into());
    let runs = work(py, move || -> Result<Vec<OneRun>> {
        let (mut e, _) = args::experiment_from(&common, vec![variant], &[], None)?;
        e.reps = common.reps.unwrap_or(1);
        let plan = Plan::new(e);
        let (machine, _) = schedlab_experiment::prepare(&plan)?;
        let mut out = Vec::new();
        for rep in 0..plan.experiment.reps {
            if schedlab_experiment::runner::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            let key = RunKey {
                index: rep,
                point: 0,
                variant: 0,
                rep,
            };
            let one = run_one(&plan, &machine, key, rep == 0 && trace)?;
            out.push(OneRun {
                counters: one.record.counters.fields(),
                trace: one.trace.as_ref().map(trace_cols::Columns::of),
                record: one.record,
                counters_text: one.counters_text,
                wake_graph_text: one.wake_graph_text,
                schedstat: one.schedstat,
            });
        }
        Ok(out)
    })?;
    runs.into_iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("record", json(&r.record)?)?;
            let counters = PyDict::new(py);
            for (k, v) in r.counters {
                counters.set_item(k, v)?;
            }
            d.set_item("counters", counters)?;
            d.set_item("counters_text", r.counters_text)?;
            d.set_item("wake_graph_text", r.wake_graph_text)?;
            d.set_item("schedstat", r.schedstat)?;
            if let Some(t) = r.trace {
                d.set_item("trace", t.into_dict(py)?)?;
            }
            Ok(d.unbind())
        })
        .collect()
}

/// Runs `schedlab validate`; returns the `--json` object. Use `schedlab.validate`.
#[pyfunction]
#[pyo3(signature = (cases=vec![], quick=false, jobs=None))]
fn validate(
    py: Python<'_>,
    cases: Vec<String>,
    quick: bool,
    jobs: Option<u64>,
) -> PyResult<String> {
    use schedlab_experiment::validate::{
        ValidateOptions, builtin_names, load_case, run_cases, summary,
    };
    work(py, move || {
        let names: Vec<String> = if cases.is_empty() {
            builtin_names().into_iter().map(String::from).collect()
        } else {
            cases
        };
        let cases = names
            .iter()
            .map(|n| load_case(n))
            .collect::<Result<Vec<_>, _>>()?;
        let opts = ValidateOptions {
            quick,
            jobs: args::jobs(jobs)?,
            progress: false,
            ticker: false,
        };
        let results = run_cases(&cases, &opts, |_| {})?;
        if schedlab_experiment::runner::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
            bail!("interrupted");
        }
        let line = summary(&results);
        Ok(serde_json::to_string(
            &serde_json::json!({ "cases": results, "summary": line }),
        )?)
    })
}

/// The topology presets (`schedlab topo list`) as a JSON array.
#[pyfunction]
fn topologies() -> PyResult<String> {
    let rows: Vec<serde_json::Value> = schedlab_topo::presets()
        .iter()
        .map(|p| {
            let t = schedlab_topo::preset(p.name);
            serde_json::json!({
                "name": p.name,
                "cpus": t.as_ref().map_or(0, |t| t.nr_cpus()),
                "description": p.description,
                "source": p.source,
            })
        })
        .collect();
    json(&rows)
}

/// One machine (`schedlab topo show SPEC --json`, era 5.10) as JSON.
#[pyfunction]
#[pyo3(signature = (spec, smt=None, llc_per_node=None))]
fn topology(spec: &str, smt: Option<usize>, llc_per_node: Option<usize>) -> PyResult<String> {
    use schedlab_topo::spec::{TopologyOptions, parse_topology};
    let opts = TopologyOptions {
        smt,
        llc_per_node,
        sysfs_root: std::env::var_os("SCHEDLAB_SYSFS_ROOT")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
    };
    let t = parse_topology(spec, &opts).map_err(|e| py_err(e.into()))?;
    let sd = schedlab_topo::SchedDomains::build(&t, schedlab_topo::DomainEra::Linux510);
    let mut v = t.to_json_value();
    if let Some(obj) = v.as_object_mut() {
        obj.insert("era".into(), sd.era.label().into());
        obj.insert("domains".into(), sd.to_json_value());
    }
    json(&v)
}

/// Without a name the presets (`schedlab policies`); with one, its switches
/// (`schedlab policies NAME`), as JSON.
#[pyfunction]
#[pyo3(signature = (name=None))]
fn policies(name: Option<&str>) -> PyResult<String> {
    match name {
        None => {
            let rows: Vec<serde_json::Value> = schedlab_policies::presets()
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "name": p.name,
                        "kind": match p.kind {
                            schedlab_policies::PresetKind::Era => "era",
                            schedlab_policies::PresetKind::Reference => "reference",
                        },
                        "era": p.era,
                        "models": p.models,
                    })
                })
                .collect();
            json(&rows)
        }
        Some(n) => {
            let sw = schedlab_policies::switches(n).map_err(|e| {
                py_err(anyhow::Error::new(e).context(format!("schedlab policies {n}")))
            })?;
            let rows: Vec<serde_json::Value> = sw
                .iter()
                .map(|s| {
                    serde_json::json!({
                        "name": s.name,
                        "default": s.default,
                        "meaning": s.meaning,
                        "provenance": s.provenance.label(),
                        "scope": s.scope.label(),
                        "min": s.range.as_ref().map(|r| r.min),
                        "max": s.range.as_ref().map(|r| r.max),
                        "unit": s.range.as_ref().map(|r| r.unit),
                    })
                })
                .collect();
            json(&rows)
        }
    }
}

/// The workload models and their parameters (`schedlab workloads [NAME] --json`) as JSON.
#[pyfunction]
#[pyo3(signature = (name=None))]
fn workloads(name: Option<&str>) -> PyResult<String> {
    use schedlab_workloads::{WorkloadInfo, catalog, parse_spec};
    let info = |w: &WorkloadInfo| {
        serde_json::json!({
            "name": w.name,
            "mirrors": w.mirrors,
            "follows": w.follows,
            "reconstructed": w.reconstructed,
            "about": w.about.split_whitespace().collect::<Vec<_>>().join(" "),
            "params": w.params.iter().map(|p| serde_json::json!({
                "name": p.name, "default": p.default, "unit": p.unit, "help": p.help,
            })).collect::<Vec<_>>(),
        })
    };
    match name {
        None => json(&catalog().iter().map(info).collect::<Vec<_>>()),
        Some(n) => {
            let bare = n.split(':').next().unwrap_or(n);
            match catalog().iter().find(|w| w.name == bare) {
                Some(w) => json(&info(w)),
                None => {
                    let err = parse_spec(bare)
                        .err()
                        .map(|e| e.to_string())
                        .unwrap_or_else(|| format!("unknown workload '{bare}'"));
                    Err(py_err(anyhow::anyhow!(err).context("schedlab workloads")))
                }
            }
        }
    }
}

/// Panics on the worker thread, for the test that a panic becomes `RuntimeError` (and the
/// interpreter lives on) rather than an abort.
#[pyfunction]
fn _panic_in_worker(py: Python<'_>) -> PyResult<()> {
    work(py, || -> Result<()> { panic!("a test panic") })
}

/// The native module; `schedlab/__init__.py` is the API.
#[pymodule]
fn _schedlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SchedlabError", m.py().get_type::<SchedlabError>())?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(topologies, m)?)?;
    m.add_function(wrap_pyfunction!(topology, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(workloads, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_in_worker, m)?)?;
    Ok(())
}
