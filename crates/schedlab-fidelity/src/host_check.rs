//! `host check WORKLOAD` as a library: the same workload for real (schedlab-host, captured
//! through tracefs when possible) and in simulation (the host's topology, a calibrated
//! profile, the era preset closest to the running kernel), side by side with the error per
//! metric and per counter. Both sides' counters come from the same trace analysis
//! (`schedlab_trace::analysis`) applied to the real kernel's trace and to the simulator's, so
//! they are measured alike. The suite, the fit and the replay check run their sides here too.

use anyhow::{Context, Result};
use schedlab_engine::{MachineProfile, SimOptions};
use schedlab_experiment::simulate::SimRecipe;
use schedlab_metrics::BenchResult;
use schedlab_trace::analysis::{TraceCounters, counters};
use std::fmt::Write as _;
use std::sync::Arc;

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
pub fn host_variant() -> (String, String) {
    describe_host_variant(&schedlab_host::host_kernel())
}

fn describe_host_variant(k: &schedlab_host::HostKernel) -> (String, String) {
    let era = closest_era(&k.release);
    let mut variant = era.clone();
    // A stable preset (linux-6.18.33) is its mainline release plus the backports it lists.
    let stable = era
        .strip_prefix("linux-")
        .is_some_and(|v| v.split('.').count() == 3 && !v.starts_with("2."));
    let mut said = vec![if stable {
        format!(
            "kernel {} → {era} (a stable series: its mainline release plus the backports `schedlab policies {era}` lists)",
            k.release
        )
    } else {
        format!("kernel {} → {era}", k.release)
    }];
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

/// The running kernel's release (`/proc/sys/kernel/osrelease`; empty when unreadable).
pub fn running_kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// This machine as a `-t` spec that reads the same elsewhere: its compact form, or `host`
/// where it has none (an irregular machine).
pub fn host_topology() -> String {
    schedlab_topo::spec::parse_topology("host", &Default::default())
        .ok()
        .and_then(|t| t.compact_string())
        .unwrap_or_else(|| "host".into())
}

/// Runs the host side, captured when possible.
pub fn host_side(
    spec: &str,
    capture: bool,
    note: &mut dyn FnMut(&str),
) -> Result<(BenchResult, Option<TraceCounters>, String)> {
    let (result, trace, note) = host_run_traced(spec, capture, note)?;
    Ok((result, trace.as_ref().map(counters), note))
}

/// Runs the host side, captured when possible, with the whole machine's trace. The capture
/// runs this very executable's `host run SPEC --json` (so it must be the `schedlab` binary);
/// when capturing is not possible, `note` hears why and the run is done without it.
pub fn host_run_traced(
    spec: &str,
    capture: bool,
    note: &mut dyn FnMut(&str),
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
                note(&format!("note: no capture ({e}); running without counters"));
            }
        }
    }
    let run = schedlab_host::run_workload(spec, &opts)?;
    Ok((run.result, None, "not captured (no counters)".into()))
}

/// The simulated side on this machine (`-t host`), with its trace counters.
pub fn sim_side(
    spec: &str,
    variant: &str,
    profile: &MachineProfile,
    seed: u64,
) -> Result<(BenchResult, TraceCounters)> {
    sim_side_on("host", spec, variant, profile, seed)
}

/// [`sim_side`] on the machine `topo` (a `-t` spec; `host` is this machine).
pub fn sim_side_on(
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
pub fn sim_trace_on(
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

/// Whether workload `spec` runs: built for `topo` and simulated under `variant` for at most
/// `limit_ns` of simulated time (reaching it is fine: the run went on). The error says what
/// stopped it: the workload refused when built, or a deadlock with what each task waits for.
pub fn sim_runs(
    topo: &str,
    spec: &str,
    variant: &str,
    profile: &MachineProfile,
    limit_ns: u64,
) -> Result<()> {
    let topo = Arc::new(schedlab_topo::spec::parse_topology(
        topo,
        &Default::default(),
    )?);
    let recipe = SimRecipe::new(variant, topo.clone(), profile.clone(), 1)?;
    let inst = schedlab_workloads::instantiate(&schedlab_workloads::parse_spec(spec)?, &topo)?;
    let (sim, end) = recipe.run(
        inst.workload.clone(),
        SimOptions {
            seed: 1,
            time_limit_ns: Some(limit_ns),
            ..Default::default()
        },
    )?;
    if let schedlab_engine::EndReason::Deadlock(blocked) = end {
        anyhow::bail!(
            "it deadlocks at {:.6} s of simulation: {}",
            sim.now() as f64 / 1e9,
            blocked.join("; ")
        );
    }
    Ok(())
}

/// The error of `sim` against `host` as `+1.2%`, `-` where there is none (a zero or
/// non-finite host value, a non-finite simulated one).
pub fn err_pct(host: f64, sim: f64) -> String {
    if host.abs() < 1e-12 || !host.is_finite() || !sim.is_finite() {
        "-".into()
    } else {
        format!("{:+.1}%", (sim - host) / host * 100.0)
    }
}

/// One workload run for real and in simulation ([`check`]).
#[derive(Clone, Debug)]
pub struct Checked {
    /// The real run's result.
    pub host: BenchResult,
    /// The real run's trace counters (`None`: not captured).
    pub host_counters: Option<TraceCounters>,
    /// How the real run was done (captured or not, and why).
    pub note: String,
    /// The simulated run's result.
    pub sim: BenchResult,
    /// The simulated run's trace counters.
    pub sim_counters: TraceCounters,
}

/// Runs `workload` for real (captured when `capture` and possible; `note` hears why not) and
/// in simulation on this machine under `variant` and `profile` with `seed`.
pub fn check(
    workload: &str,
    capture: bool,
    variant: &str,
    profile: &MachineProfile,
    seed: u64,
    note: &mut dyn FnMut(&str),
) -> Result<Checked> {
    let (host, host_counters, said) = host_side(workload, capture, note)?;
    let (sim, sim_counters) = sim_side(workload, variant, profile, seed)?;
    Ok(Checked {
        host,
        host_counters,
        note: said,
        sim,
        sim_counters,
    })
}

impl Checked {
    /// Both native outputs, then every metric and every trace counter side by side with the
    /// error of each: what `host check WORKLOAD` prints after its header.
    pub fn render(&self) -> String {
        let (host, sim) = (&self.host, &self.sim);
        let mut s = String::new();
        let _ = writeln!(s, "## host (native output)\n{}", host.native.trim_end());
        let _ = writeln!(s, "## simulated (native output)\n{}", sim.native.trim_end());
        let _ = writeln!(
            s,
            "\n{:<28} {:>14} {:>14} {:>9}",
            "metric", "host", "simulated", "error"
        );
        for m in &host.metrics {
            let sv = sim.metric(&m.name).map_or(f64::NAN, |x| x.value);
            let _ = writeln!(
                s,
                "{:<28} {:>14.4} {:>14.4} {:>9}",
                format!("{} [{}]", m.name, m.unit),
                m.value,
                sv,
                err_pct(m.value, sv)
            );
        }
        let rows = counter_rows;
        let _ = writeln!(
            s,
            "\n{:<28} {:>14} {:>14} {:>9}",
            "counter (from traces)", "host", "simulated", "error"
        );
        let s_rows = rows(&self.sim_counters);
        match &self.host_counters {
            Some(h) => {
                for ((name, hv), (_, sv)) in rows(h).into_iter().zip(s_rows) {
                    let _ = writeln!(s, "{name:<28} {hv:>14.1} {sv:>14.1} {:>9}", err_pct(hv, sv));
                }
            }
            None => {
                for (name, sv) in s_rows {
                    let _ = writeln!(s, "{name:<28} {:>14} {sv:>14.1} {:>9}", "n/a", "-");
                }
            }
        }
        s
    }
}

/// The trace counters `host check` and `replay check` print, real side against simulated.
pub fn counter_rows(c: &TraceCounters) -> Vec<(&'static str, f64)> {
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

    /// A workload whose two tasks each wait for the other first deadlocks, and says so.
    #[test]
    fn sim_runs_names_a_deadlock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.toml");
        std::fs::write(
            &path,
            "[[channel]]\nname = \"ab\"\nkind = \"pipe\"\n[[channel]]\nname = \"ba\"\nkind = \"pipe\"\n\
             [[task]]\nname = \"a\"\nprogram = [ { op = \"recv\", channel = \"ba\" }, { op = \"send\", channel = \"ab\" } ]\n\
             [[task]]\nname = \"b\"\nprogram = [ { op = \"recv\", channel = \"ab\" }, { op = \"send\", channel = \"ba\" } ]\n",
        )
        .unwrap();
        let spec = format!("file:{}", path.display());
        let profile = schedlab_engine::MachineProfile::default();
        let e = super::sim_runs("desktop-4c8t", &spec, "linux-6.6", &profile, 1_000_000_000)
            .unwrap_err()
            .to_string();
        assert!(e.contains("deadlocks") && e.contains("waits for"), "{e}");
        let ok = format!("file:{}", path.display()).replace("w.toml", "ok.toml");
        std::fs::write(
            dir.path().join("ok.toml"),
            "[[task]]\nname = \"a\"\nprogram = [ { op = \"compute\", time = \"1ms\" } ]\n",
        )
        .unwrap();
        super::sim_runs("desktop-4c8t", &ok, "linux-6.6", &profile, 1_000_000_000).unwrap();
    }

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
        // This machine's kernel: 6.18 with the stable backports of 6.18.33-6.18.44.
        let (v, said) = super::describe_host_variant(&k("6.18.44-fc", Some(250), Some("none")));
        assert_eq!(v, "linux-6.18.33,hz=250,PREEMPT_NONE");
        assert!(
            said.contains("HZ 250")
                && said.contains("preemption none")
                && said.contains("6.18.44-fc → linux-6.18.33 (a stable series"),
            "{said}"
        );
        let (v, _) = super::describe_host_variant(&k("6.18.20", Some(250), Some("none")));
        assert_eq!(v, "linux-6.18,hz=250,PREEMPT_NONE");
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
        assert_eq!(closest_era("6.18.44-fc-v1300"), "linux-6.18.33");
        assert_eq!(closest_era("6.19.3"), "linux-6.19");
        assert_eq!(closest_era("7.2.0"), "linux-7.1");
        assert_eq!(closest_era("6.17.2"), "linux-6.12");
        assert_eq!(closest_era("6.6.30"), "linux-6.6");
        assert_eq!(closest_era("6.5.0"), "linux-6.0");
        assert_eq!(closest_era("3.11.2"), "linux-3.10");
        assert_eq!(closest_era("2.6.34"), "linux-2.6.33");
        assert_eq!(closest_era("garbage"), "linux-6.6");
    }

    #[test]
    fn errors_are_signed_percentages_or_a_dash() {
        use super::err_pct;
        assert_eq!(err_pct(2.0, 2.5), "+25.0%");
        assert_eq!(err_pct(4.0, 3.0), "-25.0%");
        assert_eq!(err_pct(0.0, 3.0), "-");
        assert_eq!(err_pct(f64::NAN, 3.0), "-");
        assert_eq!(err_pct(1.0, f64::INFINITY), "-");
    }

    fn result(value: f64, native: &str) -> schedlab_metrics::BenchResult {
        schedlab_metrics::BenchResult {
            workload: "pipe".into(),
            params: Default::default(),
            metrics: vec![schedlab_metrics::Metric {
                name: "time_s".into(),
                value,
                unit: "s".into(),
                better: schedlab_metrics::Better::Lower,
            }],
            native: native.into(),
        }
    }

    #[test]
    fn counter_rows_read_latencies_in_microseconds() {
        let c = super::TraceCounters {
            context_switches: 10,
            voluntary_switches: 6,
            wakeups: 3,
            wakeup_latencies_ns: vec![1_000, 3_000, 2_000],
            ..Default::default()
        };
        let rows = super::counter_rows(&c);
        assert_eq!(rows.len(), 9);
        assert_eq!(rows[0], ("context switches", 10.0));
        assert_eq!(rows[1], ("  voluntary", 6.0));
        assert_eq!(rows[3], ("wakeups", 3.0));
        assert_eq!(rows[7], ("wakeup latency p50 [us]", 2.0));
        // No latency samples: no value, not a zero.
        assert!(super::counter_rows(&Default::default())[8].1.is_nan());
    }

    #[test]
    fn the_check_prints_both_outputs_then_metrics_and_counters() {
        let mut checked = super::Checked {
            host: result(2.0, "host says\n"),
            host_counters: None,
            note: "not captured (no counters)".into(),
            sim: result(2.5, "sim says"),
            sim_counters: super::TraceCounters {
                context_switches: 10,
                ..Default::default()
            },
        };
        let text = checked.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..8],
            [
                "## host (native output)",
                "host says",
                "## simulated (native output)",
                "sim says",
                "",
                "metric                                 host      simulated     error",
                "time_s [s]                           2.0000         2.5000    +25.0%",
                "",
            ]
        );
        // Not captured: the host column says so, with no error.
        assert_eq!(
            lines[9],
            "context switches                        n/a           10.0         -"
        );
        assert_eq!(lines.len(), 9 + 9);
        // Captured: both columns and the error.
        checked.host_counters = Some(super::TraceCounters {
            voluntary_switches: 4,
            ..Default::default()
        });
        checked.sim_counters.voluntary_switches = 6;
        assert!(
            checked.render().contains(
                "\n  voluntary                             4.0            6.0    +50.0%\n"
            )
        );
    }
}
