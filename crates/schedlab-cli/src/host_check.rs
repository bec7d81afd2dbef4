//! `schedlab host check WORKLOAD`: the same workload for real (schedlab-host, captured through
//! tracefs when possible) and in simulation (the host's topology, a calibrated profile, the era
//! preset closest to the running kernel), side by side with the error per metric and per
//! counter. Both sides' counters come from the same trace analysis (`schedlab_trace::analysis`)
//! applied to the real kernel's trace and to the simulator's, so they are measured alike.

use anyhow::{Context, Result};
use clap::Args;
use schedlab_engine::{MachineProfile, SimOptions};
use schedlab_experiment::simulate::SimRecipe;
use schedlab_metrics::BenchResult;
use schedlab_trace::analysis::{TraceCounters, counters};
use std::path::PathBuf;
use std::sync::Arc;

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

/// The era preset closest to (not newer than) the running kernel.
pub fn closest_era(release: &str) -> String {
    let parse = |s: &str| -> Option<(u32, u32, u32)> {
        let mut it = s
            .split(|c: char| !c.is_ascii_digit())
            .filter(|x| !x.is_empty());
        Some((
            it.next()?.parse().ok()?,
            it.next()?.parse().ok()?,
            it.next().and_then(|x| x.parse().ok()).unwrap_or(0),
        ))
    };
    let Some(k) = parse(release) else {
        return "linux-6.6".into();
    };
    let mut best: Option<((u32, u32, u32), &str)> = None;
    for p in schedlab_policies::presets() {
        let Some(v) = p.name.strip_prefix("linux-").and_then(parse) else {
            continue;
        };
        if v <= k && best.is_none_or(|(b, _)| v > b) {
            best = Some((v, p.name));
        }
    }
    best.map_or_else(|| "linux-2.5.59".into(), |(_, n)| n.to_string())
}

/// The simulator's variant for this machine: the era preset closest to the running kernel,
/// with the host's `CONFIG_HZ` (`hz=`) and preemption model (`PREEMPT_*`), and one line
/// saying what was read where and what was assumed.
pub(crate) fn host_variant() -> (String, String) {
    describe_host_variant(&schedlab_host::host_kernel())
}

fn describe_host_variant(k: &schedlab_host::HostKernel) -> (String, String) {
    let era = closest_era(&k.release);
    let mut variant = era.clone();
    let mut said = vec![format!("kernel {} → {era}", k.release)];
    match k.hz.value {
        Some(hz) => {
            variant.push_str(&format!(",hz={hz}"));
            said.push(format!("HZ {hz} ({})", k.hz.source));
        }
        None => said.push(format!("HZ assumed 1000, the presets' ({})", k.hz.source)),
    }
    match k.preempt.value.as_deref() {
        Some(m) => {
            let with = format!("{variant},PREEMPT_{}", m.to_ascii_uppercase());
            if schedlab_policies::settings(&with).is_ok() {
                variant = with;
                said.push(format!("preemption {m} ({})", k.preempt.source));
            } else {
                said.push(format!(
                    "preemption {m} ({}), which {era} does not have: assumed voluntary, the presets'",
                    k.preempt.source
                ));
            }
        }
        None => said.push(format!(
            "preemption assumed voluntary, the presets' ({})",
            k.preempt.source
        )),
    }
    (variant, format!("host: {}", said.join("; ")))
}

/// The variant given with `-v`, else [`host_variant`] (its line on stderr).
pub(crate) fn variant_or_host(given: Option<&str>) -> String {
    match given {
        Some(v) => v.to_string(),
        None => {
            let (v, said) = host_variant();
            eprintln!("{said}; simulator variant {v}");
            v
        }
    }
}

pub(crate) fn running_kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Runs the host side, captured when possible.
pub(crate) fn host_side(
    spec: &str,
    capture: bool,
) -> Result<(BenchResult, Option<TraceCounters>, String)> {
    let (result, trace, note) = host_run_traced(spec, capture)?;
    Ok((result, trace.as_ref().map(counters), note))
}

/// Runs the host side, captured when possible, with the whole machine's trace.
pub(crate) fn host_run_traced(
    spec: &str,
    capture: bool,
) -> Result<(BenchResult, Option<schedlab_trace::Trace>, String)> {
    let opts = schedlab_host::HostRunOptions::default();
    if capture {
        // Removed when it goes out of scope, on every return path (a failed or interrupted
        // host run included).
        let tmp = tempfile::Builder::new()
            .prefix("schedlab-check-")
            .tempdir()
            .context("cannot create a temporary directory")?;
        let dir = tmp.path().to_path_buf();
        let result_file = dir.join("result.json");
        let exe = std::env::current_exe().context("cannot find the schedlab executable")?;
        let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
        let cmd = format!(
            "{} host run {} --json > {}",
            quote(&exe.display().to_string()),
            quote(spec),
            quote(&result_file.display().to_string())
        );
        let base = dir.join("host");
        match schedlab_host::capture(&base, &["sh".to_string(), "-c".to_string(), cmd]) {
            Ok(summary) if summary.exit_code == Some(0) => {
                let text = std::fs::read_to_string(&result_file)
                    .context("the captured run wrote no result")?;
                let result: BenchResult =
                    serde_json::from_str(&text).context("cannot read the captured run's result")?;
                let trace = schedlab_trace::ftrace::read_ftrace_file(&base.with_extension("txt"))?;
                let note = format!(
                    "captured through tracefs ({} events; the whole machine is traced)",
                    trace.events.len()
                );
                return Ok((result, Some(trace), note));
            }
            _ if schedlab_host::cancel_requested() => {
                // Ctrl-C (or SIGTERM/SIGHUP) during the captured run: stop here, do not
                // start the run a second time without capture.
                anyhow::bail!("interrupted: the host run was stopped")
            }
            Ok(summary) => anyhow::bail!("the captured host run failed ({})", summary.exit),
            Err(e) => {
                eprintln!("note: no capture ({e}); running without counters");
            }
        }
    }
    let run = schedlab_host::run_workload(spec, &opts)?;
    Ok((run.result, None, "not captured (no counters)".into()))
}

pub(crate) fn sim_side(
    spec: &str,
    variant: &str,
    profile: &MachineProfile,
    seed: u64,
) -> Result<(BenchResult, TraceCounters)> {
    sim_side_on("host", spec, variant, profile, seed)
}

/// [`sim_side`] on the machine `topo` (a `-t` spec; `host` is this machine).
pub(crate) fn sim_side_on(
    topo: &str,
    spec: &str,
    variant: &str,
    profile: &MachineProfile,
    seed: u64,
) -> Result<(BenchResult, TraceCounters)> {
    let (result, trace) = sim_trace_on(topo, spec, variant, profile, seed)?;
    Ok((result, counters(&trace)))
}

/// [`sim_side_on`] with the simulator's whole trace.
pub(crate) fn sim_trace_on(
    topo: &str,
    spec: &str,
    variant: &str,
    profile: &MachineProfile,
    seed: u64,
) -> Result<(BenchResult, schedlab_trace::Trace)> {
    let topo = Arc::new(schedlab_topo::spec::parse_topology(
        topo,
        &Default::default(),
    )?);
    let recipe = SimRecipe::new(variant, topo.clone(), profile.clone(), seed)?;
    let inst = schedlab_workloads::instantiate(&schedlab_workloads::parse_spec(spec)?, &topo)?;
    let (mut sim, end) = recipe.run(
        inst.workload.clone(),
        SimOptions {
            seed,
            trace: true,
            ..Default::default()
        },
    )?;
    let result = inst.result(&sim, &end)?;
    let trace = sim
        .take_trace()
        .context("the simulator recorded no trace")?;
    Ok((result, trace))
}

fn err_pct(host: f64, sim: f64) -> String {
    if host.abs() < 1e-12 || !host.is_finite() || !sim.is_finite() {
        "-".into()
    } else {
        format!("{:+.1}%", (sim - host) / host * 100.0)
    }
}

/// Runs `schedlab host check`.
pub fn run(a: CheckArgs) -> Result<()> {
    // Checked here: clap counts a flag's default as present for `requires`.
    if !a.suite && (a.quick || a.record.is_some()) {
        anyhow::bail!(
            "--quick and --record go with --suite (`schedlab host check --suite --quick`)"
        );
    }
    let kernel = running_kernel();
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
        return crate::host_suite::run_cmd(
            &crate::host_suite::SuiteOptions {
                quick: a.quick,
                capture: !a.no_capture,
                variant,
                record: a.record.clone(),
            },
            &profile,
            &kernel,
        );
    };
    let (host, host_c, note) = host_side(workload, !a.no_capture)?;
    let (sim, sim_c) = sim_side(workload, &variant, &profile, a.seed)?;
    println!(
        "# {workload} on this machine (kernel {kernel}); simulator: -t host, {variant}, profile '{}'",
        profile.name
    );
    println!("# host run {note}");
    println!("## host (native output)\n{}", host.native.trim_end());
    println!("## simulated (native output)\n{}", sim.native.trim_end());
    println!(
        "\n{:<28} {:>14} {:>14} {:>9}",
        "metric", "host", "simulated", "error"
    );
    for m in &host.metrics {
        let s = sim.metric(&m.name).map_or(f64::NAN, |x| x.value);
        println!(
            "{:<28} {:>14.4} {:>14.4} {:>9}",
            format!("{} [{}]", m.name, m.unit),
            m.value,
            s,
            err_pct(m.value, s)
        );
    }
    let rows = counter_rows;
    println!(
        "\n{:<28} {:>14} {:>14} {:>9}",
        "counter (from traces)", "host", "simulated", "error"
    );
    let s_rows = rows(&sim_c);
    match &host_c {
        Some(h) => {
            for ((name, hv), (_, sv)) in rows(h).into_iter().zip(s_rows) {
                println!("{name:<28} {hv:>14.1} {sv:>14.1} {:>9}", err_pct(hv, sv));
            }
        }
        None => {
            for (name, sv) in s_rows {
                println!("{name:<28} {:>14} {sv:>14.1} {:>9}", "n/a", "-");
            }
        }
    }
    Ok(())
}

/// The trace counters `host check` and `replay check` print, real side against simulated.
pub(crate) fn counter_rows(c: &TraceCounters) -> Vec<(&'static str, f64)> {
    vec![
        ("context switches", c.context_switches as f64),
        ("  voluntary", c.voluntary_switches as f64),
        ("  involuntary", c.involuntary_switches as f64),
        ("wakeups", c.wakeups as f64),
        ("  local (same CPU)", c.wakeups_local as f64),
        ("  remote", c.wakeups_remote as f64),
        ("migrations", c.migrations as f64),
        (
            "wakeup latency p50 [us]",
            c.latency_p50().map_or(f64::NAN, |x| x as f64 / 1e3),
        ),
        (
            "wakeup latency p99 [us]",
            c.latency_p99().map_or(f64::NAN, |x| x as f64 / 1e3),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::closest_era;

    #[test]
    fn the_host_variant_carries_hz_and_the_preemption_model() {
        use schedlab_host::{HostKernel, Sourced};
        let k = |release: &str, hz, preempt: Option<&str>| HostKernel {
            release: release.into(),
            hz: Sourced {
                value: hz,
                source: "CONFIG_HZ in /proc/config.gz".into(),
            },
            preempt: Sourced {
                value: preempt.map(str::to_string),
                source: "the configured default".into(),
            },
        };
        let (v, said) = super::describe_host_variant(&k("6.18.44-fc", Some(250), Some("none")));
        assert_eq!(v, "linux-6.18,hz=250,PREEMPT_NONE");
        assert!(
            said.contains("HZ 250") && said.contains("preemption none"),
            "{said}"
        );
        // Lazy preemption came in 6.13: a 6.12 era cannot take it, and says so.
        let (v, said) = super::describe_host_variant(&k("6.12.9", None, Some("lazy")));
        assert_eq!(v, "linux-6.12");
        assert!(
            said.contains("does not have") && said.contains("HZ assumed"),
            "{said}"
        );
    }

    #[test]
    fn era_is_the_newest_not_after_the_kernel() {
        assert_eq!(closest_era("6.18.0-1-amd64"), "linux-6.18");
        assert_eq!(closest_era("6.17.2"), "linux-6.12");
        assert_eq!(closest_era("6.6.30"), "linux-6.6");
        assert_eq!(closest_era("6.5.0"), "linux-6.0");
        assert_eq!(closest_era("3.11.2"), "linux-3.10");
        assert_eq!(closest_era("2.6.34"), "linux-2.6.33");
        assert_eq!(closest_era("garbage"), "linux-6.6");
    }
}
