//! `schedlab validate`: reproduce the published results (docs/published-results.md) through the
//! simulator's mechanisms — one machine profile per preset, the same defaults a user gets, no
//! case-specific constants.
//!
//! A case is data ([`case::CaseFile`], the files of `experiments/validate/`): the runs it
//! needs and the checks that judge them. One runner executes any case, built-in or a user's
//! file. A check passes when the simulated direction agrees with the published one (or both
//! show no significant difference) and, where a band is stated, the magnitude is inside it.
//! `--quick` runs each case's reduced form, and the result says what was reduced.

pub mod case;
pub mod checks;
mod pinned;

use crate::error::ExperimentError;
use crate::plan::Plan;
use crate::runner::ExecOptions;
use case::{CaseFile, RunKind};
use checks::{RunOutput, evaluate};
use serde::Serialize;

pub use checks::{Check, MIN_EFFECT};
pub use pinned::pinned_pair;

/// One case's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// Case name (`R1`, ...).
    pub name: String,
    /// One-line description.
    pub description: String,
    /// Where the published result comes from.
    pub source: String,
    /// What the reduced form changed, per run (empty at full size).
    pub reduced: Vec<String>,
    /// The checks.
    pub checks: Vec<Check>,
    /// The simulated tables, for humans and docs/validation.md.
    #[serde(skip)]
    pub tables: String,
    /// Wall-clock seconds the case took.
    pub wall_s: f64,
}

impl CaseResult {
    /// Checks passed.
    pub fn passed(&self) -> usize {
        self.checks.iter().filter(|c| c.pass).count()
    }
}

/// Options of a validation run.
#[derive(Clone, Debug, Default)]
pub struct ValidateOptions {
    /// Reduced form (fewer points, shorter runs, fewer seeds) for CI.
    pub quick: bool,
    /// Parallel runs.
    pub jobs: usize,
    /// A progress bar over all runs of all cases, with the case and run it is on.
    pub progress: bool,
    /// Off a terminal: a line on stderr every few seconds with the runs done
    /// ([`crate::progress::Ticker`]).
    pub ticker: bool,
}

/// The built-in cases' names, in order.
pub fn builtin_names() -> Vec<&'static str> {
    case::BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// Resolves what the user named: a built-in case (`R1`, case-insensitive) or a case file.
pub fn load_case(name: &str) -> Result<CaseFile, ExperimentError> {
    if let Some(c) = CaseFile::builtin(name) {
        return Ok(c);
    }
    let path = std::path::Path::new(name);
    if path.extension().is_some_and(|e| e == "toml") || path.exists() {
        return CaseFile::from_file(path);
    }
    Err(ExperimentError::Input(format!(
        "unknown case '{name}'; cases: {} (or a case file, see docs/validation.md)",
        builtin_names().join(", ")
    )))
}

/// Simulations a case will run (for the progress bar's length).
fn nr_sims(case: &CaseFile, quick: bool) -> u64 {
    case.runs
        .iter()
        .map(|r| match r.kind {
            RunKind::PinnedPair => 2,
            RunKind::Compare => r
                .experiment(quick, &case.name)
                .map(|(e, _)| {
                    let points: usize = e.sweep.iter().map(|(_, v)| v.len()).product();
                    (points * e.variants.len() * e.reps) as u64
                })
                .unwrap_or(0),
        })
        .sum()
}

/// Runs one case.
pub fn run_case(
    case: &CaseFile,
    o: &ValidateOptions,
    bar: Option<&indicatif::ProgressBar>,
) -> Result<CaseResult, ExperimentError> {
    let t0 = std::time::Instant::now();
    let mut tables = String::new();
    let mut reduced = Vec::new();
    let mut outputs = Vec::new();
    for run in &case.runs {
        if let Some(b) = bar {
            b.set_message(format!("{} {}", case.name, run.id));
        }
        let out = match run.kind {
            RunKind::PinnedPair => {
                let loops = run.loops(o.quick);
                if loops != run.loops {
                    reduced.push(format!(
                        "{}: {loops} round trips instead of {}",
                        run.id, run.loops
                    ));
                }
                let (stacked, split) = pinned_pair(&run.topology, &run.variants[0], loops)?;
                if let Some(b) = bar {
                    b.inc(2);
                }
                tables += &format!(
                    "{}: pipe pair stacked {:.3} us/op, split over two LLCs {:.3} us/op, ratio {:.2}\n",
                    run.topology,
                    stacked / 1e3,
                    split / 1e3,
                    split / stacked
                );
                RunOutput::PinnedPair { stacked, split }
            }
            RunKind::Compare => {
                let (e, why) = run.experiment(o.quick, &case.name)?;
                if let Some(w) = why {
                    reduced.push(format!("{}: {w}", run.id));
                }
                let sweep = e.sweep.clone();
                let plan = Plan::new(e);
                let opts = ExecOptions {
                    jobs: o.jobs,
                    bar: bar.cloned(),
                    ..Default::default()
                };
                let report = crate::pipeline::compare(&plan, &opts)?.report;
                tables += &report.to_table();
                RunOutput::Compare {
                    report: Box::new(report),
                    sweep,
                }
            }
        };
        outputs.push((run.id.as_str(), out));
    }
    let mut checks = Vec::new();
    for spec in &case.checks {
        let Some((_, out)) = outputs.iter().find(|(id, _)| *id == spec.run) else {
            continue;
        };
        // A `metric.NAME` counter is known once the workload has run: one it does not report
        // is bad input, not a failed check with NaN.
        if let (Some(k), RunOutput::Compare { report, .. }) = (&spec.counter, out)
            && let Some(p) = report.points.first()
            && p.variants.iter().any(|v| !v.counters.contains_key(k))
        {
            let metrics: Vec<&str> = p.variants[0]
                .counters
                .keys()
                .filter(|n| n.starts_with("metric."))
                .map(String::as_str)
                .collect();
            return Err(ExperimentError::Input(format!(
                "{}: check '{}': run '{}' has no counter '{k}' (its metrics: {}; the headline metric is the mean itself: leave counter out)",
                case.name,
                spec.name,
                spec.run,
                if metrics.is_empty() {
                    "none".to_string()
                } else {
                    metrics.join(", ")
                }
            )));
        }
        if let Some(c) = evaluate(spec, out) {
            checks.push(c);
        }
    }
    Ok(CaseResult {
        name: case.name.clone(),
        description: case.description.clone(),
        source: case.source.clone(),
        reduced,
        checks,
        tables,
        wall_s: t0.elapsed().as_secs_f64(),
    })
}

/// Runs the cases in order, calling `on_case` as each finishes.
pub fn run_cases(
    cases: &[CaseFile],
    o: &ValidateOptions,
    mut on_case: impl FnMut(&CaseResult),
) -> Result<Vec<CaseResult>, ExperimentError> {
    let total = cases.iter().map(|c| nr_sims(c, o.quick)).sum();
    let bar = if o.ticker && !o.progress {
        Some(crate::progress::hidden_bar(total))
    } else {
        None
    };
    let _ticker = bar
        .clone()
        .map(|b| crate::progress::Ticker::start("validate", "runs", b));
    let bar = bar.or_else(|| {
        o.progress.then(|| {
            let b = indicatif::ProgressBar::new(total);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{msg:<16} {bar:30} {pos}/{len} runs, {elapsed} elapsed, ETA {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        })
    });
    let mut out = Vec::new();
    for c in cases {
        let r = run_case(c, o, bar.as_ref())?;
        if let Some(b) = &bar {
            b.suspend(|| on_case(&r));
        } else {
            on_case(&r);
        }
        out.push(r);
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(out)
}

/// The summary line a script can read: `validate: N of M checks pass (cases: R1 a/b, ...)`.
pub fn summary(results: &[CaseResult]) -> String {
    let pass: usize = results.iter().map(CaseResult::passed).sum();
    let total: usize = results.iter().map(|r| r.checks.len()).sum();
    let cases = results
        .iter()
        .map(|r| format!("{} {}/{}", r.name, r.passed(), r.checks.len()))
        .collect::<Vec<_>>()
        .join(", ");
    format!("validate: {pass} of {total} checks pass (cases: {cases})")
}

/// A check's published value as text.
fn published(c: &Check) -> String {
    if c.published.is_finite() {
        format!("{:.3}", c.published)
    } else {
        "-".into()
    }
}

/// The results as plain text (what `schedlab validate` prints per case).
pub fn case_text(r: &CaseResult) -> String {
    let mut s = format!("== {}: {}\n", r.name, r.description);
    for w in &r.reduced {
        s += &format!("  (reduced: {w})\n");
    }
    s += &r.tables;
    for c in &r.checks {
        s += &format!(
            "  [{}] {}: published {}, simulated {:.3}  — {}\n",
            if c.pass { "PASS" } else { "FAIL" },
            c.name,
            published(c),
            c.simulated,
            c.detail
        );
    }
    s
}

/// The generated record of docs/validation.md: per case, its source, the simulated tables and
/// each check's verdict with its rule, under a header naming the revision and the form run.
pub fn markdown(results: &[CaseResult], revision: &str, quick: bool) -> String {
    let mut s = format!(
        "Generated by `schedlab validate{} --markdown` at revision `{revision}`{}.\n\n**{}**\n",
        if quick { " --quick" } else { "" },
        if quick {
            " (the reduced form)"
        } else {
            " (full size)"
        },
        summary(results)
    );
    for r in results {
        s += &format!(
            "\n### {}: {}\n\nPublished: {} (tables in [published-results.md](published-results.md)). Took {:.0} s.\n",
            r.name, r.description, r.source, r.wall_s
        );
        if !r.reduced.is_empty() {
            s += &format!("\nReduced: {}.\n", r.reduced.join("; "));
        }
        s += &format!("\n```text\n{}```\n\n", r.tables);
        s += "| check | verdict | published | simulated | rule and detail |\n|---|---|---|---|---|\n";
        for c in &r.checks {
            s += &format!(
                "| {} | {} | {} | {:.3} | {} |\n",
                c.name.replace('|', "\\|"),
                if c.pass { "PASS" } else { "**FAIL**" },
                published(c),
                c.simulated,
                c.detail.replace('|', "\\|")
            );
        }
    }
    s
}

/// Markers around the generated section of a markdown file.
pub const BEGIN_MARK: &str = "<!-- BEGIN schedlab validate --markdown: generated, do not edit -->";
/// End marker.
pub const END_MARK: &str = "<!-- END schedlab validate --markdown -->";

/// Replaces the generated section of `doc` (between the markers) with `generated`.
pub fn splice_generated(doc: &str, generated: &str) -> Result<String, ExperimentError> {
    let (Some(a), Some(b)) = (doc.find(BEGIN_MARK), doc.find(END_MARK)) else {
        return Err(ExperimentError::Input(format!(
            "the file has no generated section; add the lines\n{BEGIN_MARK}\n{END_MARK}\nwhere the results go"
        )));
    };
    if b < a {
        return Err(ExperimentError::Input(
            "the end marker comes before the begin marker".into(),
        ));
    }
    Ok(format!(
        "{}{BEGIN_MARK}\n{generated}{END_MARK}{}",
        &doc[..a],
        &doc[b + END_MARK.len()..]
    ))
}
