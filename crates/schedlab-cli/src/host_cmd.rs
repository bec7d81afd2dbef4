//! `schedlab host ...`: the real-host harness (run, capture, calibrate).
//!
//! Thin layer over `schedlab_host`: parses flags, installs the Ctrl-C handler that makes every
//! run stop and clean up, and prints results (native text on stdout, a summary on stderr).
//! `calibrate` then fits and re-simulates the measured values (`schedlab_fidelity::host_fit`),
//! which needs the simulator and so is not in the harness.

use anyhow::Context as _;
use clap::{Args, Subcommand};
use schedlab_fidelity::host_fit;
use std::path::PathBuf;
use std::time::Duration;

/// Real-host subcommands.
#[derive(Subcommand, Debug)]
pub enum HostCmd {
    /// Run a benchmark for real on this machine (threads/processes, pipes, sockets, loopback
    /// TCP, futexes), with the simulator's workload names, parameters and output format.
    Run(RunArgs),
    /// Record the kernel's scheduling events (sched_switch, sched_waking, sched_wakeup,
    /// sched_migrate_task, sched_wakeup_new, sched_process_fork/exit) through tracefs while
    /// COMMAND runs (root).
    Capture(CaptureArgs),
    /// Measure this machine's scheduling costs and write a machine profile for the simulator.
    Calibrate(CalibrateArgs),
    /// Run a workload for real and in simulation (host topology, calibrated profile, the era
    /// closest to the running kernel) and print both with the error per metric and counter.
    Check(crate::host_check::CheckArgs),
}

/// `schedlab host run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Workload spec `NAME[:key=value,...]`, the simulator's names and keys: hackbench, pipe,
    /// tbench (built in: threads replaying dbench's client.txt op mix over TCP loopback),
    /// schbench; pgbench (--external only). The simulator's server and cost keys are
    /// recorded as ignored. E.g. `hackbench:groups=1,loops=10`.
    pub workload: String,
    /// Run the real tool instead (rt-tests hackbench, perf bench sched pipe, dbench's tbench,
    /// pgbench against a throwaway PostgreSQL on 127.0.0.1).
    #[arg(long)]
    pub external: bool,
    /// Stop everything and fail after this long (suffix ns, us, ms, s; bare = seconds).
    #[arg(long, default_value = "120s", allow_hyphen_values = true, value_parser = crate::checks::timeout)]
    pub timeout: String,
    /// Print the result as JSON instead of the tool's native text.
    #[arg(long)]
    pub json: bool,
    /// Write the kernel's /proc/schedstat counters of the run (the delta around it) to FILE
    /// in the same format; needs a kernel with CONFIG_SCHEDSTATS.
    #[arg(long, value_name = "FILE")]
    pub schedstat: Option<PathBuf>,
}

/// `schedlab host capture`.
#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// Output: FILE.pftrace (Perfetto only), FILE.txt (ftrace text only), or any other name
    /// for both (FILE.pftrace and FILE.txt).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// End the command (SIGTERM, then SIGKILL) after this long.
    #[arg(long, default_value = "60s", allow_hyphen_values = true, value_parser = crate::checks::timeout)]
    pub timeout: String,
    /// Per-CPU trace buffer while capturing, KiB (1 to 4194304, i.e. 4 GiB).
    #[arg(long, default_value_t = 8192, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..=4_194_304))]
    pub buffer_kb: u64,
    /// The command to run, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `schedlab host calibrate`.
#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Where to write the profile (TOML).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// A short run (about 2 s) with fewer batches: for smoke tests, not for real profiles.
    #[arg(long)]
    pub quick: bool,
    /// Total time to spend measuring (default about 18 s; 2 s with --quick).
    #[arg(long)]
    pub budget: Option<String>,
    /// Policy variant the fit simulates (default: the preset closest to the running kernel).
    #[arg(short = 'v', long)]
    pub variant: Option<String>,
    /// Also write what the fit started from (derived profile and microbenchmarks) as JSON,
    /// for a test to redo the fit on recorded measurements.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Measure nothing: redo the fit from a file `--record` wrote and write its profile.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["record", "quick", "budget"])]
    pub replay: Option<PathBuf>,
    /// Root of the sysfs tree read for the CPUs, caches and cpuidle driver (the directory
    /// containing devices/system/cpu) [env: SCHEDLAB_SYSFS_ROOT] [default: /sys]. Another
    /// machine's tree is for tests: the measurements are still of this one.
    #[arg(long, value_name = "DIR")]
    pub sysfs_root: Option<PathBuf>,
}

/// A duration flag: the workspace's one parser, a bare number taken as seconds.
fn duration(flag: &str, s: &str) -> anyhow::Result<Duration> {
    schedlab_vocab::parse_duration_or_bare(s, "s")
        .map(Duration::from_nanos)
        .map_err(|e| anyhow::anyhow!("--{flag} {s:?}: {e}"))
}

/// Runs a host subcommand.
pub fn run(cmd: HostCmd) -> anyhow::Result<()> {
    // The signal handlers are main's (`signals::install_host`): a signal cancels the run.
    match cmd {
        HostCmd::Run(a) => run_cmd(a),
        HostCmd::Capture(a) => capture_cmd(a),
        HostCmd::Calibrate(a) => calibrate_cmd(a),
        HostCmd::Check(a) => crate::host_check::run(a),
    }
}

fn run_cmd(a: RunArgs) -> anyhow::Result<()> {
    let opts = schedlab_host::HostRunOptions {
        timeout: duration("timeout", &a.timeout)?,
        external: a.external,
    };
    let proc = std::path::Path::new(schedlab_host::PROC_SCHEDSTAT);
    let before = match &a.schedstat {
        Some(p) => {
            crate::checks::writable(p, "--schedstat")?;
            match schedlab_host::read_schedstat(proc)? {
                Some(s) => Some(s),
                None => anyhow::bail!(
                    "--schedstat: this kernel has no {} (built without CONFIG_SCHEDSTATS), so there are no kernel counters to write; `schedlab host capture -o FILE -- COMMAND` derives the wakeup and switch counts a trace allows",
                    proc.display()
                ),
            }
        }
        None => None,
    };
    let run = schedlab_host::run_workload(&a.workload, &opts)?;
    if let (Some(p), Some(before)) = (&a.schedstat, &before) {
        let after = schedlab_host::read_schedstat(proc)?
            .ok_or_else(|| anyhow::anyhow!("--schedstat: {} went away", proc.display()))?;
        let delta = schedlab_host::schedstat_delta(before, &after)?;
        crate::checks::write_atomic(p, &delta, "--schedstat")?;
        eprintln!("schedstat: {} (the delta around the run)", p.display());
    }
    let r = &run.result;
    if a.json {
        println!("{}", serde_json::to_string_pretty(r)?);
    } else {
        print!("{}", r.native);
    }
    let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    eprintln!(
        "schedlab host run {}{}: {} ({:.2} s wall)",
        r.workload,
        if a.external { " (external)" } else { "" },
        params.join(","),
        run.wall.as_secs_f64()
    );
    for m in &r.metrics {
        eprintln!(
            "  {:<22} {:>14.3} {:<6} ({} is better)",
            m.name,
            m.value,
            m.unit,
            match m.better {
                schedlab_metrics::Better::Higher => "higher",
                schedlab_metrics::Better::Lower => "lower",
            }
        );
    }
    Ok(())
}

fn capture_cmd(a: CaptureArgs) -> anyhow::Result<()> {
    let opts = schedlab_host::CaptureOptions {
        timeout: duration("timeout", &a.timeout)?,
        buffer_size_kb: a.buffer_kb,
    };
    let s = schedlab_host::capture_with(&a.output, &a.command, &opts)?;
    println!(
        "captured `{}`: {} after {:.3} s",
        a.command.join(" "),
        s.exit,
        s.wall.as_secs_f64()
    );
    for (e, n) in &s.events {
        println!("  {e:<20} {n}");
    }
    if s.overruns > 0 {
        println!(
            "  warning: {} events lost to full buffers (raise --buffer-kb)",
            s.overruns
        );
    }
    for f in &s.files {
        println!("wrote {}", f.display());
    }
    print!("{}", s.counters);
    Ok(())
}

/// The 1-minute load average at or above which `calibrate` warns: a CPU's worth of other
/// work takes turns with the probes' pinned threads and skews what they time.
const BUSY_LOAD: f64 = 1.0;

/// Warns, before measuring, when the machine is busy with other work.
fn warn_if_loaded() {
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse::<f64>().ok());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if let Some(w) = load.and_then(|l| load_warning(l, cpus)) {
        eprintln!("{w}");
    }
}

/// The warning for a 1-minute load average of `load` on `cpus` CPUs, if it is high.
fn load_warning(load: f64, cpus: usize) -> Option<String> {
    (load >= BUSY_LOAD).then(|| {
        format!(
            "warning: the load average (1 min) is {load:.2} on {cpus} CPUs: other work on the machine takes turns with the probes and can make the profile far off; calibrate on an idle machine"
        )
    })
}

fn calibrate_cmd(a: CalibrateArgs) -> anyhow::Result<()> {
    if let Some(path) = &a.replay {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let rec: host_fit::Recorded = serde_json::from_str(&text).with_context(|| {
            format!("{} is not a `host calibrate --record` file", path.display())
        })?;
        let base = schedlab_engine::MachineProfile::from_toml(
            &rec.profile_toml,
            &path.display().to_string(),
        )?;
        let variant = a.variant.clone().unwrap_or(rec.variant);
        let (fitted, rows) = host_fit::fit(&rec.topology, &base, &rec.targets, &variant)?;
        print!("{}", host_fit::render(&rows));
        std::fs::write(&a.output, host_fit::annotate(&fitted, &rows, &rec.machine))
            .with_context(|| format!("writing {}", a.output.display()))?;
        println!(
            "wrote {} (fitted from {})",
            a.output.display(),
            path.display()
        );
        return Ok(());
    }
    let mut opts = if a.quick {
        schedlab_host::CalibrateOptions::quick()
    } else {
        schedlab_host::CalibrateOptions::default()
    };
    if let Some(b) = &a.budget {
        opts.budget = duration("budget", b)?;
    }
    let sysfs_root = a.sysfs_root.clone().or_else(|| {
        std::env::var_os(crate::topo_cmd::SYSFS_ROOT_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    // The fit simulates the machine the profile describes: the same tree's topology.
    let topology = match &sysfs_root {
        Some(root) if !root.is_dir() => anyhow::bail!(
            "--sysfs-root {}: not a directory (the root of a sysfs tree, containing devices/system/cpu)",
            root.display()
        ),
        Some(root) => {
            opts.sysfs_root = root.clone();
            root.to_string_lossy().into_owned()
        }
        None => "host".to_string(),
    };
    // Minutes of measurement must not end in "cannot write".
    crate::checks::writable(&a.output, "-o")?;
    if let Some(r) = &a.record {
        crate::checks::writable(r, "--record")?;
        crate::checks::distinct_outputs(&[("-o", a.output.as_path()), ("--record", r)])?;
    }
    warn_if_loaded();
    eprintln!(
        "calibrating for about {:.0} s ...",
        opts.budget.as_secs_f64()
    );
    let c = schedlab_host::calibrate(&opts)?;
    print!("{}", c.report());
    let variant = crate::host_check::variant_or_host(a.variant.as_deref());
    let targets = host_fit::targets(&c);
    if let Some(path) = &a.record {
        let rec = host_fit::Recorded {
            machine: format!("{}, kernel {}", c.cpu_model, c.kernel),
            variant: variant.clone(),
            topology: if topology == "host" {
                schedlab_fidelity::host_check::host_topology()
            } else {
                topology.clone()
            },
            profile_toml: c.to_profile_toml(),
            targets: targets.clone(),
        };
        std::fs::write(path, serde_json::to_string_pretty(&rec)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
        println!("recorded the fit's inputs in {}", path.display());
    }
    let (fitted, rows) = host_fit::fit(&topology, &c.profile(), &targets, &variant)?;
    print!("{}", host_fit::render(&rows));
    let text = c.to_profile_toml_with(&fitted, &host_fit::notes(&rows));
    std::fs::write(&a.output, text)
        .with_context(|| format!("-o {}: cannot write", a.output.display()))?;
    println!("wrote {}", a.output.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::load_warning;

    #[test]
    fn a_busy_machine_is_warned_about() {
        let w = load_warning(3.5, 16).unwrap();
        assert!(
            w.contains("3.50 on 16 CPUs") && w.contains("idle machine"),
            "{w}"
        );
        assert!(load_warning(0.2, 16).is_none());
    }
}
