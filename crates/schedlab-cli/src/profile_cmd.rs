//! `schedlab profile list` and `schedlab profile show NAME`: the built-in machine profiles
//! (`profiles/*.toml`), shown complete with each value's unit and source.

use anyhow::bail;
use clap::Subcommand;
use schedlab_engine::MachineProfile;
use schedlab_engine::profile::BUILTIN;

/// The `profile` subcommands.
#[derive(Subcommand, Debug)]
pub enum ProfileCmd {
    /// List the built-in profiles.
    List,
    /// Print a profile complete, as TOML, with each value's unit and source.
    #[command(
        after_help = "NAME is a built-in profile (`schedlab profile list`) or a topology \
preset; a preset without a profile of its own uses `default`.\n\
A file given with --profile to run/compare/validate may set only some keys: the others \
come from the topology preset's profile shown here.\n\nExamples:\n  \
schedlab profile show westmere-2s20c\n  schedlab profile show default > my.toml"
    )]
    Show {
        /// Profile or topology preset name.
        name: String,
    },
}

/// Runs a `profile` subcommand.
pub fn run(cmd: ProfileCmd) -> anyhow::Result<()> {
    match cmd {
        ProfileCmd::List => {
            for (name, _) in BUILTIN {
                let p = MachineProfile::for_preset(name);
                let src: String = p.source.chars().take(90).collect();
                println!("{name:16} {src}");
            }
            Ok(())
        }
        ProfileCmd::Show { name } => {
            if let Some(text) = MachineProfile::show_builtin(&name) {
                print!("{text}");
                return Ok(());
            }
            if schedlab_topo::preset(&name).is_some() {
                eprintln!(
                    "(topology preset `{name}` has no profile of its own: it uses `default`)"
                );
                print!(
                    "{}",
                    MachineProfile::show_builtin("default").unwrap_or_default()
                );
                return Ok(());
            }
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            bail!(
                "no profile or topology preset named '{name}' (profiles: {})",
                names.join(", ")
            )
        }
    }
}
