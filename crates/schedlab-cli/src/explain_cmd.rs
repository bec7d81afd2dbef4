//! `schedlab explain` (and `compare --explain`): the comparison's table, then why each
//! variant differs from the baseline (`schedlab_experiment::explain`), optionally with the
//! sensitivity of each verdict to the machine's costs; `--json` prints the
//! `schedlab.explain/1` object instead, `--report` adds the explanation to the HTML page.

use crate::output_cmd::{OutputArgs, emit};
use anyhow::Result;
use schedlab_experiment::CompareOutput;
use schedlab_experiment::explain::{self, render, sensitivity};
use schedlab_experiment::plan::Plan;
use schedlab_experiment::runner::ExecOptions;

/// Prints the explanation of a finished comparison (and runs `--sensitivity`).
pub fn emit_explain(
    plan: &Plan,
    opts: &ExecOptions,
    out: &CompareOutput,
    args: &OutputArgs,
    description: Option<String>,
    with_sensitivity: bool,
) -> Result<()> {
    let report = match args.min_effect {
        Some(pct) => out.report.clone().with_min_effect(pct / 100.0),
        None => out.report.clone(),
    };
    let e = explain::explain(&report, &out.records);
    let sens = if with_sensitivity {
        Some(sensitivity::sensitivity(plan, opts, &report)?)
    } else {
        None
    };
    let section = explain::html::section(&e, sens.as_ref());
    emit(&report, args, description, Some(&section), !args.json)?;
    if args.json {
        let v = serde_json::json!({ "explain": e, "sensitivity": sens });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("\n{}", render::text(&e));
        if let Some(s) = &sens {
            print!("{}", s.text());
        }
    }
    if let Some(s) = &sens
        && schedlab_experiment::runner::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
    {
        eprintln!(
            "interrupted: the sensitivity covers {} of {} reruns",
            s.total,
            2 * sensitivity::SCALED.len()
        );
        std::process::exit(crate::signals::exit_code());
    }
    Ok(())
}
