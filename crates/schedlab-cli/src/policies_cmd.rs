//! `schedlab policies` lists the placement presets (kernel eras and reference policies) with
//! their era and what they model; `schedlab policies NAME` shows one preset (or a variant
//! such as `linux-3.10,WAKEUP_BUDDY`) in full: its kernel configuration, what is
//! reconstructed, and every switch with its default, meaning and provenance.
//!
//! The text itself comes from `schedlab_policies::{describe_presets, describe_preset}`, where
//! it is tested; this module only parses the arguments and prints.

use anyhow::Context as _;
use clap::Args;

/// Arguments of `schedlab policies`.
#[derive(Args, Debug, Clone, PartialEq, Eq)]
#[command(after_help = "\
Variant syntax, used by every command that takes a policy: POLICY[,SWITCH]...
  NAME        turn a feature on (sched_feat style), e.g. linux-3.10,WAKEUP_BUDDY
  NO_NAME     turn it off, e.g. linux-6.6,NO_SIS_UTIL,SIS_PROP
  name=value  set a tunable, e.g. linux-6.6,sched_migration_cost_ns=250000
  orig|ingo|ingofix|ingoB0   the 2.5.59 node balancer variant, e.g. linux-2.5.59,ingoB0")]
pub struct PoliciesArgs {
    /// A preset or variant to show in full (`linux-4.6`, `linux-3.10,WAKEUP_BUDDY`); without
    /// it, list the presets.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
}

/// What `schedlab policies` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoliciesCmd {
    /// List every preset.
    List,
    /// Show one preset or variant.
    Show(String),
}

impl PoliciesArgs {
    /// The command the arguments ask for.
    pub fn command(&self) -> PoliciesCmd {
        match &self.name {
            Some(n) => PoliciesCmd::Show(n.clone()),
            None => PoliciesCmd::List,
        }
    }
}

/// Runs `schedlab policies [NAME]`, printing to stdout.
pub fn run(args: PoliciesArgs) -> anyhow::Result<()> {
    let text = match args.command() {
        PoliciesCmd::List => schedlab_policies::describe_presets(),
        PoliciesCmd::Show(name) => schedlab_policies::describe_preset(&name)
            .with_context(|| format!("schedlab policies {name}"))?,
    };
    print!("{text}");
    Ok(())
}
