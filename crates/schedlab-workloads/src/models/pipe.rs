//! perf bench sched pipe (`tools/perf/bench/sched-pipe.c`, Ingo Molnar's pipe-test-1m): a strict 1:1 ping-pong of 4-byte messages over
//! two pipes; with `pairs > 1`, will-it-scale context_switch1's N independent pairs.
//! `cpu_a` / `cpu_b` pin side A / side B to one CPU, as `taskset` does.
//!
//! ```text
//!   A: loop { write(p1); read(p2) }        B: loop { read(p1); write(p2) }
//! ```
//!
//! Both wakeups are WF_SYNC and exactly one task of a pair is runnable at a time. Time is the
//! makespan of the run (both sides are started at t=0 through the fork placement).

use super::{Built, MAX_TASKS, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::Report;
use crate::spec::Args;
use schedlab_engine::task::Op;
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{PipeReport, format_perf_pipe};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::{CpuId, CpuSet, Topology};
use std::sync::Arc;

/// The catalog entry of `pipe`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "pipe",
    mirrors: "perf bench sched pipe (-l -T); will-it-scale context_switch1 with pairs>1",
    follows: "perf bench sched pipe (tools/perf/bench/sched-pipe.c); will-it-scale context_switch1",
    reconstructed: "nothing beyond the engine's pipe and switch costs: the program is a 4-byte ping-pong",
    about: "A 4-byte ping-pong over two pipes; one loop is a round trip. With pairs>1, that many \
            independent pairs run at once.",
    params: &[
        param(
            "loops",
            "100000",
            "count",
            "round trips per pair (-l; perf's default 1000000 shrunk to keep runs short)",
        ),
        param(
            "threads",
            "off",
            "bool",
            "the two sides are threads of one process (-T)",
        ),
        param("pairs", "1", "count", "independent ping-pong pairs"),
        param(
            "cpu_a",
            "auto",
            "count",
            "pin side A to this CPU (taskset; auto: unpinned)",
        ),
        param(
            "cpu_b",
            "auto",
            "count",
            "pin side B to this CPU (taskset; auto: unpinned)",
        ),
    ],
    build,
};

pub(crate) fn build(a: &mut Args, topo: &Topology) -> Result<Built, WorkloadError> {
    let loops = a.int("loops", 1, u64::MAX / 4)?;
    let threads = a.flag("threads")?;
    let pairs = a.int("pairs", 1, MAX_TASKS / 2)?;
    let last = topo.nr_cpus().saturating_sub(1) as u64;
    let pin = |a: &mut Args, key| -> Result<Option<CpuSet>, WorkloadError> {
        let cpu = a.int_in(key, 0, last)?;
        if cpu.is_none() {
            a.resolve(key, "auto");
        }
        Ok(cpu.map(|c| {
            let mut set = CpuSet::new(topo.nr_cpus());
            set.insert(CpuId::new(c as usize));
            set
        }))
    };
    let (pin_a, pin_b) = (pin(a, "cpu_a")?, pin(a, "cpu_b")?);
    let mut w = Workload::new("pipe");
    for i in 0..pairs {
        let p1 = w.channel(ChannelKind::pipe(), format!("pair{i}.p1"));
        let p2 = w.channel(ChannelKind::pipe(), format!("pair{i}.p2"));
        let four = || Dist::Const(4);
        let mut a_side = TaskSpec::new(
            "sched-pipe",
            vec![
                Op::Loop(loops),
                Op::Send {
                    ch: p1,
                    bytes: four(),
                },
                Op::Recv { ch: p2 },
                Op::EndLoop,
            ],
        );
        let mut b_side = TaskSpec::new(
            "sched-pipe",
            vec![
                Op::Loop(loops),
                Op::Recv { ch: p1 },
                Op::Send {
                    ch: p2,
                    bytes: four(),
                },
                Op::EndLoop,
            ],
        );
        a_side.affinity = pin_a.clone();
        b_side.affinity = pin_b.clone();
        if threads {
            a_side.mm = Some(i as u32);
            b_side.mm = Some(i as u32);
        }
        w.spawn(a_side);
        w.spawn(b_side);
    }
    Ok((w, Arc::new(PipeOut { loops, threads })))
}

struct PipeOut {
    loops: u64,
    threads: bool,
}

impl Report for PipeOut {
    fn headline(&self) -> (String, Better) {
        ("usecs_per_op".into(), Better::Lower)
    }
    fn duration_based(&self) -> bool {
        false
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let r = PipeReport {
            loops: self.loops,
            threads: self.threads,
            total_s: secs(sim.now()),
        };
        Ok((format_perf_pipe(&r), r.metrics()))
    }
}
