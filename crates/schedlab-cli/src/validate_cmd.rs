//! `schedlab validate`: reproduce the published results and print checks with verdicts.

use anyhow::Result;
use clap::Args;
use schedlab_experiment::validate::{CASES, ValidateOptions, run_cases};
use serde::Serialize;
use std::io::IsTerminal;

/// Options of `schedlab validate`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  schedlab validate --quick\n  schedlab validate R1 --json\n  schedlab validate          # the full suite\n\nCases:\n  R1  wakeup buddy, Linux 3.10, 80 CPUs\n  R2  select_idle_sibling rewrite, Linux 4.6, 48 CPUs\n  R3  2.5.59 NUMA balancer, NEC TX7\n  Q1-Q3  the qualitative shapes"
)]
pub struct ValidateArgs {
    /// Cases to run (default: all).
    cases: Vec<String>,
    /// Reduced form: fewer points and seeds (what CI runs).
    #[arg(long)]
    quick: bool,
    /// Print `{cases: [{name, checks: [...]}]}` JSON.
    #[arg(long)]
    json: bool,
    /// Parallel runs (default: all cores).
    #[arg(short = 'j', long)]
    jobs: Option<usize>,
}

#[derive(Serialize)]
struct JsonOut<'a> {
    cases: &'a [schedlab_experiment::validate::CaseResult],
}

/// Runs `schedlab validate`.
pub fn run(args: ValidateArgs) -> Result<()> {
    let opts = ValidateOptions {
        quick: args.quick,
        jobs: args.jobs.unwrap_or(0),
        progress: std::io::stderr().is_terminal() && !args.json,
    };
    for c in &args.cases {
        anyhow::ensure!(
            CASES.iter().any(|(n, _)| n.eq_ignore_ascii_case(c)),
            "unknown case '{c}'; cases: {}",
            CASES.iter().map(|c| c.0).collect::<Vec<_>>().join(", ")
        );
    }
    let results = run_cases(&args.cases, &opts)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&JsonOut { cases: &results })?
        );
    } else {
        let (mut pass, mut total) = (0, 0);
        for r in &results {
            println!("== {}: {}", r.name, r.description);
            print!("{}", r.tables);
            for c in &r.checks {
                total += 1;
                pass += usize::from(c.pass);
                println!(
                    "  [{}] {}: published {}, simulated {:.3}  — {}",
                    if c.pass { "PASS" } else { "FAIL" },
                    c.name,
                    if c.published.is_finite() {
                        format!("{:.3}", c.published)
                    } else {
                        "-".into()
                    },
                    c.simulated,
                    c.detail
                );
            }
        }
        println!("{pass} of {total} checks passed");
    }
    Ok(())
}
