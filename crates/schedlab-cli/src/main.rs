//! The `schedlab` binary: the only place that reads argv/env or draws to a terminal.
//!
//! Each subcommand lives in its own module; `main` only dispatches and turns errors into
//! a message and exit code 2.

use clap::{Parser, Subcommand};

mod host_cmd;
mod topo_cmd;

/// schedlab: a workbench for Linux wake-up placement. Simulates a multi-CPU machine
/// deterministically, runs the placement policies of every kernel era against models of the
/// benchmarks they were judged by, and checks the simulator against the real host.
#[derive(Parser, Debug)]
#[command(name = "schedlab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Machine topologies: list presets, show a machine and its sched-domain tree.
    #[command(subcommand)]
    Topo(topo_cmd::TopoCmd),
    /// Real-host harness: run benchmarks on real threads, capture traces, calibrate.
    #[command(subcommand)]
    Host(host_cmd::HostCmd),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Topo(cmd) => topo_cmd::run(cmd),
        Command::Host(cmd) => host_cmd::run(cmd),
    };
    if let Err(e) = result {
        eprintln!("schedlab: error: {e:#}");
        std::process::exit(2);
    }
}
