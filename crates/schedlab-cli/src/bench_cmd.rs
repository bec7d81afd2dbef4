//! `schedlab bench`: the simulator's own speed on fixed scenarios (events/s, context
//! switches/s, simulated seconds per wall second, peak heap), each next to the issue-3 target it
//! is held to. Figures, not a test: on a shared machine, compare ratios measured in one run, and
//! use `--repeat` to take the best of several (noise only ever slows a run down).

use crate::alloc;
use anyhow::Result;
use clap::Args;
use schedlab_engine::bench::{Scenario, Target, hackbench_400, scenarios};
use schedlab_engine::{MachineProfile, SimOptions};
use schedlab_experiment::simulate::SimRecipe;
use std::sync::Arc;
use std::time::Instant;

/// Options of `schedlab bench`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  schedlab bench\n  schedlab bench --only pairs64 --repeat 5\n  schedlab bench --large --only 400"
)]
pub struct BenchArgs {
    /// Only scenarios whose name contains this text.
    #[arg(long)]
    only: Option<String>,
    /// Also run hackbench 400 groups x 400 loops on 80 CPUs (about 64 M messages).
    #[arg(long)]
    large: bool,
    /// Policy variant to place wakeups with.
    #[arg(long, short = 'v', default_value = "linux-6.6")]
    variant: String,
    /// Runs per scenario; the fastest (least CPU time) is reported. Every run simulates the
    /// same thing, so the spread is the machine's noise.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: u32,
}

/// One measured run.
struct Measured {
    cpu_s: f64,
    wall_s: f64,
    peak_mib: f64,
    events: u64,
    ctx_switches: u64,
    elapsed_ns: u64,
    end: String,
}

/// Runs the benchmark scenarios and prints one line each.
pub fn run(args: BenchArgs) -> Result<()> {
    let mut list = scenarios();
    if args.large {
        list.push(hackbench_400());
    }
    if let Some(f) = &args.only {
        list.retain(|s| s.name.contains(f.as_str()));
        anyhow::ensure!(!list.is_empty(), "no scenario name contains '{f}'");
    }
    println!(
        "{:<24} {:>10} {:>8} {:>14} {:>13} {:>9} {:>8}  {:<18} about",
        "scenario", "events", "CPU s", "events/s", "ctx switch/s", "sim s/s", "peak MiB", "target"
    );
    println!(
        "(rates per second of this thread's CPU time, which a busy shared machine distorts less than wall time; best of {} run(s); wall time in brackets; build: {})",
        args.repeat,
        build_kind()
    );
    for s in list {
        let mut best: Option<Measured> = None;
        for _ in 0..args.repeat {
            let m = measure(&s, &args.variant)?;
            if best.as_ref().is_none_or(|b| m.cpu_s < b.cpu_s) {
                best = Some(m);
            }
        }
        let Some(m) = best else { continue };
        let events_per_s = m.events as f64 / m.cpu_s;
        let target = match s.target {
            None => "-".to_string(),
            Some(Target::EventsPerSec(min)) => format!(
                ">= {} ({})",
                rate(min, "").trim_end(),
                if events_per_s >= min { "met" } else { "missed" }
            ),
            Some(Target::CpuSecondsBelow(max)) => format!(
                "< {max:.0} s ({})",
                if m.cpu_s < max { "met" } else { "missed" }
            ),
        };
        println!(
            "{:<24} {:>10} {:>8.3} {:>14} {:>13} {:>9.3} {:>8.1}  {:<18} {} [{}, {:.2} s wall]",
            s.name,
            m.events,
            m.cpu_s,
            rate(events_per_s, "events/s"),
            rate(m.ctx_switches as f64 / m.cpu_s, "/s"),
            m.elapsed_ns as f64 / 1e9 / m.cpu_s,
            m.peak_mib,
            target,
            s.about,
            m.end,
            m.wall_s,
        );
    }
    Ok(())
}

/// How this binary was built: speed figures of a debug build mean nothing, and a PGO build
/// (`scripts/pgo-build.sh` sets `SCHEDLAB_BUILD`) is faster than a plain release build.
fn build_kind() -> &'static str {
    if cfg!(debug_assertions) {
        "debug, not for measuring"
    } else {
        option_env!("SCHEDLAB_BUILD").unwrap_or("release")
    }
}

/// Builds and runs one scenario, measuring CPU and wall time and the peak heap.
fn measure(s: &Scenario, variant: &str) -> Result<Measured> {
    let recipe = SimRecipe::new(
        variant,
        Arc::new(s.topo.clone()),
        MachineProfile::default(),
        1,
    )?;
    let workload = s.workload.clone();
    let base = alloc::reset_peak();
    let t0 = Instant::now();
    let c0 = thread_cpu_s();
    let mut sim = recipe.build(
        workload,
        SimOptions {
            seed: 1,
            ..Default::default()
        },
    )?;
    let end = sim.run();
    let wall_s = t0.elapsed().as_secs_f64();
    let cpu_s = thread_cpu_s() - c0;
    let c = sim.counters();
    let m = Measured {
        cpu_s,
        wall_s,
        peak_mib: alloc::peak().saturating_sub(base) as f64 / (1024.0 * 1024.0),
        events: c.events,
        ctx_switches: c.ctx_switches,
        elapsed_ns: c.elapsed_ns,
        end: format!("{end:?}"),
    };
    drop(sim);
    Ok(m)
}

/// CPU time of the calling thread, s (wall time would count other processes on a shared box).
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn rate(x: f64, unit: &str) -> String {
    if x >= 1e6 {
        format!("{:.1} M {unit}", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k {unit}", x / 1e3)
    } else {
        format!("{x:.0} {unit}")
    }
}
