//! kernbench: a kernel build at one `make -j` load (benchmarks.md §2.8).
//!
//! ```text
//!   make: put `jobs` tokens in the jobserver pipe;
//!         files × { take a token (sleeps while none); fork gcc }
//!         wait for every gcc; fork ld; wait
//!   gcc:  fork cc1 (LogNormal CPU, median 200 ms × scale); wait; fork as; wait;
//!         give the token back (wakes a sleeping make, WF_SYNC); exit
//! ```
//!
//! Every process is created by fork (WF_FORK slow-path placement) and its parent is woken
//! (WF_SYNC) by the last child's exit, as make and gcc are in wait4. User time is the CPU
//! time of the compute-only processes (cc1, as, ld); system time is that of make and the
//! gcc drivers (forks, waits, token traffic). The engine has no per-task user/system
//! split, so this is the closest honest reading.

use super::{Built, secs};
use crate::error::WorkloadError;
use crate::instance::Report;
use crate::spec::Args;
use schedlab_engine::task::Op;
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{KernbenchReport, format_kernbench};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

/// cc1's CPU per file at scale 1: median 200 ms, log-normal shape 0.8.
pub(crate) const CC1_MEDIAN_NS: f64 = 200e6;
const CC1_SIGMA: f64 = 0.8;
/// as's CPU per file at scale 1.
const AS_NS: f64 = 10e6;

pub(crate) fn build(a: &mut Args, topo: &Topology) -> Result<Built, WorkloadError> {
    let ncpus = topo.nr_cpus() as u64;
    let jobs = a.int_in("jobs", 0, 60_000)?.unwrap_or(4 * ncpus);
    a.resolve("jobs", jobs);
    let files = a.int("files", 1, 50_000)?;
    let scale = a.float("scale")?;
    let link = a.int("link", 0, 3_600_000_000_000)?;
    let ns = |x: f64| (x * scale).round() as u64;
    let mut w = Workload::new("kernbench");
    let cc1 = w.spec(TaskSpec::new(
        "cc1",
        vec![
            Op::Exec,
            Op::Compute(Dist::LogNormal {
                median: ns(CC1_MEDIAN_NS).max(1),
                sigma: CC1_SIGMA,
            }),
        ],
    ));
    let asm = w.spec(TaskSpec::new(
        "as",
        vec![Op::Exec, Op::Compute(Dist::Const(ns(AS_NS)))],
    ));
    let ld = w.spec(TaskSpec::new(
        "ld",
        vec![Op::Exec, Op::Compute(Dist::Const(ns(link as f64)))],
    ));
    let tokens = w.channel(ChannelKind::pipe(), "jobserver");
    let mut gcc = vec![
        Op::Fork(cc1),
        Op::WaitChildren,
        Op::Fork(asm),
        Op::WaitChildren,
    ];
    if jobs > 0 {
        gcc.push(Op::Send {
            ch: tokens,
            bytes: Dist::Const(1),
        });
    }
    let gcc = w.spec(TaskSpec::new("gcc", gcc));
    let mut make = Vec::new();
    if jobs > 0 {
        make.extend([
            Op::Loop(jobs),
            Op::Send {
                ch: tokens,
                bytes: Dist::Const(1),
            },
            Op::EndLoop,
        ]);
        make.extend([
            Op::Loop(files),
            Op::Recv { ch: tokens },
            Op::Fork(gcc),
            Op::EndLoop,
        ]);
    } else {
        make.extend([Op::Loop(files), Op::Fork(gcc), Op::EndLoop]);
    }
    make.extend([Op::WaitChildren, Op::Fork(ld), Op::WaitChildren]);
    w.spawn(TaskSpec::new("make", make));
    let load = if jobs == 0 {
        "Maximal load -j".to_string()
    } else if jobs == 4 * ncpus {
        format!("Optimal load -j {jobs}")
    } else if jobs == (ncpus / 2).max(1) {
        format!("Half load -j {jobs}")
    } else {
        format!("Custom load -j {jobs}")
    };
    Ok((w, Arc::new(KernbenchOut { load })))
}

struct KernbenchOut {
    load: String,
}

impl Report for KernbenchOut {
    fn headline(&self) -> (String, Better) {
        ("elapsed_s".into(), Better::Lower)
    }
    fn duration_based(&self) -> bool {
        false
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let (mut user, mut sys) = (0u64, 0u64);
        for t in sim.task_stats() {
            match t.comm.as_str() {
                "cc1" | "as" | "ld" => user += t.sum_exec_ns,
                _ => sys += t.sum_exec_ns,
            }
        }
        let elapsed = secs(sim.now());
        let c = sim.counters();
        let r = KernbenchReport {
            load: self.load.clone(),
            elapsed_s: (elapsed, 0.0),
            user_s: (secs(user), 0.0),
            system_s: (secs(sys), 0.0),
            percent_cpu: (
                if elapsed > 0.0 {
                    (100.0 * secs(user + sys) / elapsed).round()
                } else {
                    0.0
                },
                0.0,
            ),
            context_switches: (c.ctx_switches as f64, 0.0),
            sleeps: (c.ctx_voluntary as f64, 0.0),
        };
        let mut m = r.metrics();
        m.push(crate::instance::metric(
            "percent_cpu",
            r.percent_cpu.0,
            "%",
            Better::Higher,
        ));
        Ok((format_kernbench(std::slice::from_ref(&r)), m))
    }
}
