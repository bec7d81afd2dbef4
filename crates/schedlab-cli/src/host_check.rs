//! `schedlab host check WORKLOAD` and `host check --suite`: the flags, and what is printed
//! where. The checks themselves (both sides, the suite, its report) are
//! `schedlab_fidelity::host_check` and `schedlab_fidelity::host_suite`.

use anyhow::Result;
use clap::Args;
use schedlab_engine::MachineProfile;
use schedlab_fidelity::{host_check, host_suite};
use std::path::{Path, PathBuf};

/// `schedlab host check`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  schedlab host calibrate -o profile.toml\n  \
schedlab host check pipe:loops=20000 --profile profile.toml\n  \
schedlab host check hackbench:groups=10,loops=20 --profile profile.toml\n  \
schedlab host check tbench:clients=2,duration=2s --profile profile.toml\n  \
schedlab host check --suite --profile profile.toml\n  \
schedlab host check --suite --quick"
)]
pub struct CheckArgs {
    /// Workload spec, e.g. `pipe:loops=20000` (give durations explicitly: host and simulator
    /// defaults differ). Not with --suite.
    #[arg(required_unless_present = "suite", conflicts_with = "suite")]
    pub workload: Option<String>,
    /// Run the fixed fidelity suite (pipe, hackbench, tbench, schbench; see docs/fidelity.md)
    /// instead of one workload, and print its tables and summary line.
    #[arg(long)]
    pub suite: bool,
    /// With --suite: the short smoke form (well under a minute).
    #[arg(long)]
    pub quick: bool,
    /// With --suite: passes over the suite of one real run per benchmark, whose range the
    /// noise-aware counts judge by (default 3, with --quick 2; at least 2).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::checks::whole::<usize>)]
    pub rounds: Option<usize>,
    /// With --suite: also write the real runs as JSON (the recorded fixture the harness's
    /// tests compare profiles on).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Machine profile for the simulator (from `schedlab host calibrate`; default: built-in).
    #[arg(long)]
    pub profile: Option<PathBuf>,
    /// Policy variant for the simulator (default: the preset closest to the running kernel).
    #[arg(short = 'v', long)]
    pub variant: Option<String>,
    /// Do not capture the real run through tracefs (no counters for the host side).
    #[arg(long)]
    pub no_capture: bool,
    /// Seed of the simulation.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::checks::whole::<u64>)]
    pub seed: u64,
}

/// The variant given with `-v`, else the host's ([`host_check::host_variant`], its line on
/// stderr).
pub(crate) fn variant_or_host(given: Option<&str>) -> String {
    match given {
        Some(v) => v.to_string(),
        None => {
            let (v, said) = host_check::host_variant();
            eprintln!("{said}; simulator variant {v}");
            v
        }
    }
}

/// Runs `schedlab host check`.
pub fn run(a: CheckArgs) -> Result<()> {
    // Checked here: clap counts a flag's default as present for `requires`.
    if !a.suite && (a.quick || a.record.is_some() || a.rounds.is_some()) {
        anyhow::bail!(
            "--quick, --rounds and --record go with --suite (`schedlab host check --suite --quick`)"
        );
    }
    // Minutes of real runs must not end in "cannot write".
    if let Some(r) = &a.record {
        crate::checks::writable(r, "--record")?;
    }
    // Refused before anything runs: fewer than two rounds have no range.
    let rounds = if a.suite {
        host_suite::rounds(a.rounds, a.quick)?
    } else {
        0
    };
    let kernel = host_check::running_kernel();
    let variant = variant_or_host(a.variant.as_deref());
    let profile = match &a.profile {
        Some(p) => MachineProfile::load(p)?,
        None => {
            eprintln!(
                "note: no --profile: the simulator uses the built-in default costs (run `schedlab host calibrate -o profile.toml`)"
            );
            MachineProfile::default()
        }
    };
    let Some(workload) = a.workload.as_deref() else {
        return suite_cmd(
            &host_suite::SuiteOptions {
                quick: a.quick,
                rounds,
                capture: !a.no_capture,
                variant,
            },
            a.record.as_deref(),
            &profile,
            &kernel,
        );
    };
    let checked = host_check::check(
        workload,
        !a.no_capture,
        &variant,
        &profile,
        a.seed,
        &mut |s| eprintln!("{s}"),
    )?;
    println!(
        "# {workload} on this machine (kernel {kernel}); simulator: -t host, {variant}, profile '{}'",
        profile.name
    );
    println!("# host run {}", checked.note);
    print!("{}", checked.render());
    Ok(())
}

/// `schedlab host check --suite`: runs the suite and prints its header, tables and summary
/// (progress on stderr), and writes the real side to `record` when given.
fn suite_cmd(
    opts: &host_suite::SuiteOptions,
    record: Option<&Path>,
    profile: &MachineProfile,
    kernel: &str,
) -> Result<()> {
    let t0 = std::time::Instant::now();
    let (cpus, _) = host_suite::host_cpus();
    let load_before = host_suite::loadavg();
    let (rows, effects, traced) = host_suite::run_suite(opts, profile, &mut |s| eprintln!("{s}"))?;
    println!(
        "host fidelity suite{}: {} ({} CPUs), kernel {kernel}; simulator: -t host, {}, profile '{}'; {} rounds of real runs",
        if opts.quick { " (quick)" } else { "" },
        host_suite::cpu_model(),
        cpus.len(),
        opts.variant,
        profile.name,
        opts.rounds
    );
    println!(
        "load average (1 min) before {load_before}, after {}; other load on the machine shows as spread and as busy time in the real counters\n",
        host_suite::loadavg()
    );
    print!("{}", host_suite::render(&rows, &effects, traced));
    if let Some(path) = record {
        let rec = host_suite::recorded(opts, &rows, &effects, kernel, cpus.len());
        std::fs::write(path, serde_json::to_string_pretty(&rec)? + "\n")
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        eprintln!("recorded the real side in {}", path.display());
    }
    eprintln!("suite took {:.0} s", t0.elapsed().as_secs_f64());
    Ok(())
}
