//! The `schedlab` binary: the only place that reads argv/env or draws to a terminal.
//!
//! Each subcommand lives in its own module; `main` only dispatches and turns errors into a
//! message and exit code 2.

use clap::{Parser, Subcommand};

mod alloc;
mod bench_cmd;
mod checks;
mod experiment_cmd;
mod explain_cmd;
mod host_check;
mod host_cmd;
mod output_cmd;
mod policies_cmd;
mod profile_cmd;
mod replay_cmd;
mod signals;
mod topo_cmd;
mod validate_cmd;
mod workloads_cmd;

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

/// schedlab: a workbench for Linux wake-up placement. It simulates a multi-CPU machine
/// deterministically, runs the placement policies of every kernel era against models of the
/// benchmarks they were judged by, compares them with honest statistics, and checks the
/// simulator against the real host.
#[derive(Parser, Debug)]
#[command(
    name = "schedlab",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("SCHEDLAB_COMMIT"), ")"),
    about,
    long_about = None,
    after_help = "Start here:\n  schedlab compare                      compare two variants on the default machine and workload\n  \
schedlab run -w hackbench:groups=4    one run: the benchmark's own output and the scheduler counters\n  \
schedlab topo list | policies | workloads   what exists\n  schedlab validate --quick             reproduce the published results (reduced)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one workload under one policy variant: native output and counters.
    Run(experiment_cmd::RunArgs),
    /// Compare variants over a sweep with repetitions and statistics.
    // Boxed: its options are twice the size of any other command's.
    Compare(Box<experiment_cmd::CompareArgs>),
    /// Explain why variants differ: time budgets, every counter side by side ordered by
    /// what accounts for the difference, and (--sensitivity) how robust each verdict is.
    Explain(Box<experiment_cmd::CompareArgs>),
    /// Merge the JSON-lines files of sharded `compare --out` runs into one report.
    Merge(experiment_cmd::MergeArgs),
    /// Reproduce the published results (R1, R2, R3 and the qualitative shapes).
    Validate(validate_cmd::ValidateArgs),
    /// Placement policies: list the era presets, or show one preset's switches.
    Policies(policies_cmd::PoliciesArgs),
    /// Workload models: list them, or show one's parameters.
    Workloads(workloads_cmd::WorkloadsArgs),
    /// Machine topologies: list presets, show a machine and its sched-domain tree.
    #[command(subcommand)]
    Topo(topo_cmd::TopoCmd),
    /// Machine profiles: list the built-in ones, show one complete with units and sources.
    #[command(subcommand)]
    Profile(profile_cmd::ProfileCmd),
    /// Real-host harness: run benchmarks on real threads, capture traces, calibrate, check.
    #[command(subcommand)]
    Host(host_cmd::HostCmd),
    /// Replay a real trace: derive a workload file from it, or check its replay against it.
    #[command(subcommand)]
    Replay(replay_cmd::ReplayCmd),
    /// The simulator's own speed on fixed scenarios.
    Bench(bench_cmd::BenchArgs),
}

fn main() {
    let cli = Cli::parse();
    // Off a terminal, long runs print a progress line every 5 s; a batch log may want
    // another interval (the workspace's duration parser: a bare number is seconds).
    if let Some(v) = std::env::var_os("SCHEDLAB_PROGRESS_SECS") {
        let ns = v
            .to_str()
            .and_then(|s| schedlab_vocab::parse_duration_or_bare(s, "s").ok());
        match ns {
            Some(ns) if ns > 0 && ns <= 86_400_000_000_000 => {
                schedlab_experiment::progress::set_tick(std::time::Duration::from_nanos(ns));
            }
            _ => {
                eprintln!(
                    "schedlab: error: SCHEDLAB_PROGRESS_SECS={}: give seconds between 0 and 86400",
                    v.to_string_lossy()
                );
                std::process::exit(2);
            }
        }
    }
    if !matches!(cli.command, Command::Host(_)) {
        // `schedlab bench | head` should end quietly when the reader goes, like any Unix
        // filter, not panic in `println!`. The host harness keeps Rust's default (SIGPIPE
        // ignored): its benchmarks write to pipes of their own and handle EPIPE.
        // SAFETY: called before any thread is started; only resets a signal disposition.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    if matches!(cli.command, Command::Host(_)) {
        // The host harness stops its benchmarks itself and restores the machine on the way
        // out (children killed, tracefs restored), so it is never cut short.
        signals::install_host();
    } else {
        signals::install();
    }
    let result = match cli.command {
        Command::Run(a) => experiment_cmd::run(a),
        Command::Compare(a) => experiment_cmd::compare(*a),
        Command::Explain(mut a) => {
            a.explain = true;
            experiment_cmd::compare(*a)
        }
        Command::Merge(a) => experiment_cmd::merge(a),
        Command::Validate(a) => match validate_cmd::run(a) {
            // Failing checks are a result, not an error: exit 1, distinct from bad input (2).
            Ok(validate_cmd::Verdict::ChecksFailed) => std::process::exit(1),
            Ok(validate_cmd::Verdict::AllPass) => Ok(()),
            Err(e) => Err(e),
        },
        Command::Policies(a) => policies_cmd::run(a),
        Command::Workloads(a) => workloads_cmd::run(a),
        Command::Topo(cmd) => topo_cmd::run(cmd),
        Command::Profile(cmd) => profile_cmd::run(cmd),
        Command::Host(cmd) => host_cmd::run(cmd),
        Command::Replay(cmd) => replay_cmd::run(cmd),
        Command::Bench(a) => bench_cmd::run(a),
    };
    if let Err(e) = &result {
        eprintln!("schedlab: error: {e:#}");
    }
    // A command a signal stopped (a host run cancelled, say) exits 128 + the signal.
    if let Some(code) = signals::received() {
        std::process::exit(code);
    }
    if result.is_err() {
        std::process::exit(2);
    }
}
