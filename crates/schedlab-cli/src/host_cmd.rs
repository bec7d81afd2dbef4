//! `schedlab host ...` (in progress).

use clap::Subcommand;

/// Real-host subcommands.
#[derive(Subcommand, Debug)]
pub enum HostCmd {
    /// Run a benchmark with real threads.
    Run,
}

/// Runs a host subcommand.
pub fn run(cmd: HostCmd) -> anyhow::Result<()> {
    match cmd {
        HostCmd::Run => Ok(()),
    }
}
