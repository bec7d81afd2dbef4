//! `schedlab topo ...` (in progress).

use clap::Subcommand;

/// Topology subcommands.
#[derive(Subcommand, Debug)]
pub enum TopoCmd {
    /// List the built-in presets.
    List,
}

/// Runs a topology subcommand.
pub fn run(cmd: TopoCmd) -> anyhow::Result<()> {
    match cmd {
        TopoCmd::List => Ok(()),
    }
}
