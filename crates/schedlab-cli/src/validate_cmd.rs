//! `schedlab validate`: reproduce the published results and print checks with verdicts. Exits
//! 1 when any check fails (`--no-fail` reports without failing); the last line is a summary a
//! script can read.

use anyhow::{Context, Result, bail};
use clap::Args;
use schedlab_experiment::validate::{
    ValidateOptions, builtin_names, case_text, load_case, markdown, run_cases, splice_generated,
    summary,
};
use serde::Serialize;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Options of `schedlab validate`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  schedlab validate --quick --no-fail     # the reduced form, as CI runs it\n  \
schedlab validate R1 --json\n  schedlab validate                       # every case at the published sizes\n  \
schedlab validate my-lab/case.toml      # a case of your own (format: docs/validation.md)\n  \
schedlab validate --markdown docs/validation.md   # regenerate the record\n\nCases:\n  \
R1  wakeup buddy, Linux 3.10, 80 CPUs\n  R2  select_idle_sibling rewrite, Linux 4.6, 48 CPUs\n  \
R3  2.5.59 NUMA balancer, NEC TX7\n  R4  B0's node-tick scan, NEC TX7\n  Q1-Q3  the qualitative shapes\n  \
M1  6.16's sync test vs DELAY_DEQUEUE, lat_ctx, 192 CPUs\n  M2  PREEMPT_SHORT null, hackbench, 2-socket Zen3\n  \
(the built-in cases are the files of experiments/validate/)\n\n\
Exit status: 0 when every check passes, 1 when one fails (0 with --no-fail), 2 on bad input."
)]
pub struct ValidateArgs {
    /// Cases to run: built-in names (R1 ... R4, Q1 ... Q3, M1, M2) or case files (default: every built-in case).
    cases: Vec<String>,
    /// Reduced form: fewer points, shorter runs and fewer seeds (what CI runs); the output says
    /// what each case reduced.
    #[arg(long)]
    quick: bool,
    /// Report failing checks without failing (exit 0).
    #[arg(long)]
    no_fail: bool,
    /// Print `{cases: [{name, checks: [...]}], summary}` JSON.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Write the generated record into FILE, between its BEGIN/END markers (docs/validation.md).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Parallel runs (default: all cores).
    #[arg(short = 'j', long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    jobs: Option<u64>,
}

/// Whether every check passed.
pub enum Verdict {
    /// Every check passed (or `--no-fail`).
    AllPass,
    /// At least one check failed.
    ChecksFailed,
}

#[derive(Serialize)]
struct JsonOut<'a> {
    cases: &'a [schedlab_experiment::validate::CaseResult],
    summary: String,
}

/// Runs `schedlab validate`.
pub fn run(args: ValidateArgs) -> Result<Verdict> {
    let names: Vec<String> = if args.cases.is_empty() {
        builtin_names().into_iter().map(String::from).collect()
    } else {
        args.cases.clone()
    };
    let cases = names
        .iter()
        .map(|n| load_case(n))
        .collect::<Result<Vec<_>, _>>()?;
    // The same case twice only runs it twice, with the same results.
    for (i, c) in cases.iter().enumerate() {
        if let Some(j) = cases[..i]
            .iter()
            .position(|o| o.name.eq_ignore_ascii_case(&c.name))
        {
            bail!(
                "case {} is given twice ('{}' and '{}'); give each case once",
                c.name,
                names[j],
                names[i]
            );
        }
    }
    if let Some(path) = &args.markdown {
        // Fail before the work, not after it.
        let doc = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        splice_generated(&doc, "")?;
        crate::checks::writable(path, "--markdown")?;
    }
    let tty = std::io::stderr().is_terminal();
    let opts = ValidateOptions {
        quick: args.quick,
        jobs: args.jobs.unwrap_or(0) as usize,
        progress: tty,
        ticker: !tty,
    };
    let text = !args.json;
    let results = run_cases(&cases, &opts, |r| {
        if text {
            print!("{}", case_text(r));
        }
        if !tty {
            eprintln!(
                "validate: case {} done in {:.0} s: {} of {} checks pass",
                r.name,
                r.wall_s,
                r.passed(),
                r.checks.len()
            );
        }
    })?;
    let line = summary(&results);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&JsonOut {
                cases: &results,
                summary: line.clone(),
            })?
        );
    } else {
        println!("{line}");
    }
    if let Some(path) = &args.markdown {
        let doc = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let out = splice_generated(
            &doc,
            &markdown(&results, env!("SCHEDLAB_COMMIT"), args.quick),
        )?;
        std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("validate: wrote the record into {}", path.display());
    }
    let all = results.iter().all(|r| r.passed() == r.checks.len());
    Ok(if all || args.no_fail {
        Verdict::AllPass
    } else {
        Verdict::ChecksFailed
    })
}
