//! `schedlab bench`: the simulator's own speed on fixed scenarios (events/s, context
//! switches/s, simulated seconds per wall second, peak heap). Figures, not pass/fail: compare
//! ratios measured in one run.

use crate::alloc;
use anyhow::Result;
use clap::Args;
use schedlab_engine::bench::{Scenario, hackbench_400, scenarios};
use schedlab_engine::{MachineProfile, SimOptions, Simulation};
use std::sync::Arc;
use std::time::Instant;

/// Options of `schedlab bench`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  schedlab bench\n  schedlab bench --only pairs64\n  schedlab bench --large"
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
        "{:<26} {:>12} {:>14} {:>14} {:>12} {:>10}  about",
        "scenario", "events", "events/s", "ctx switch/s", "sim s/s", "peak MiB"
    );
    println!(
        "(rates per second of this thread's CPU time, which a busy shared machine does not distort; wall time in brackets)"
    );
    for s in list {
        let Scenario {
            name,
            about,
            topo,
            workload,
        } = s;
        let built = schedlab_policies::build(&args.variant, &topo, 1)?;
        let base = alloc::reset_peak();
        let t0 = Instant::now();
        let c0 = thread_cpu_s();
        let mut sim = Simulation::new(
            Arc::new(topo),
            MachineProfile::default(),
            built.config,
            built.policy,
            built.balancer,
            workload,
            SimOptions {
                seed: 1,
                ..Default::default()
            },
        )
        .map_err(anyhow::Error::msg)?;
        let end = sim.run();
        let wall = t0.elapsed().as_secs_f64();
        let cpu = thread_cpu_s() - c0;
        let c = sim.counters();
        let peak = alloc::peak().saturating_sub(base) as f64 / (1024.0 * 1024.0);
        println!(
            "{:<26} {:>12} {:>14} {:>14} {:>12.3} {:>10.1}  {about} [{end:?}, {wall:.2} s wall]",
            name,
            c.events,
            rate(c.events as f64 / cpu, "events/s"),
            rate(c.ctx_switches as f64 / cpu, "/s"),
            c.elapsed_ns as f64 / 1e9 / cpu,
            peak,
        );
        drop(sim);
    }
    Ok(())
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
