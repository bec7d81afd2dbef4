//! numa_test (Erich Focht's NUMA scheduler test, LKML 2002-2003, for 2.5.x): memory-bound tasks whose memory
//! lives where they first ran, disturbed by a short hackbench.
//!
//! ```text
//!   numa_test ──fork×N──▶ T_i: loop { compute(1 ms at mem_intensity, ws) }   (home = first-touch node)
//!   disturber: sleep(delay) ──▶ a complete `hackbench G` (main, fork, barrier, messages, reap)
//!   numa_test: wait for every T_i ──▶ elapsed
//! ```
//!
//! Work is cut into 1 ms computes so that a task moved off its home node pays the
//! remote-memory slowdown for the time it spends there. User time is the CPU time of the
//! memory tasks; system time that of the numa_test parent (its forks and waits).

use super::{ABS, Built, MAX_TASKS, hackbench, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::{Report, last_abs_time, no_samples};
use crate::spec::Args;
use schedlab_engine::task::{HistId, Op};
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{NumaTestReport, format_numa_test};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

const CHUNK_NS: u64 = 1_000_000;

/// The catalog entry of `numa-test`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "numa-test",
    mirrors: "numa_test N (Erich Focht, 2002-2003) with a hackbench 10 disturbance",
    follows: "numa_test (Erich Focht, LKML 2002-2003) with a hackbench disturbance",
    reconstructed: "the memory intensity and working set of the memory-bound tasks",
    about: "N memory-bound tasks (first-touch home node) disturbed by a short hackbench started \
            shortly after; elapsed, total user and system time.",
    params: &[
        param(
            "tasks",
            "auto",
            "count",
            "memory-bound tasks (auto: one per CPU)",
        ),
        param(
            "work",
            "100ms",
            "duration",
            "CPU work per task at home-node speed",
        ),
        param("ws", "4M", "bytes", "working set per task"),
        param(
            "mem_intensity",
            "0.8",
            "fraction",
            "how memory-bound the tasks are (remote-node slowdown)",
        ),
        param(
            "hackbench_groups",
            "10",
            "count",
            "groups of the disturbing hackbench (0 = none)",
        ),
        param(
            "hackbench_loops",
            "20",
            "count",
            "loops of the disturbing hackbench",
        ),
        param("delay", "10ms", "duration", "when the hackbench starts"),
    ],
    build,
};

pub(crate) fn build(a: &mut Args, topo: &Topology) -> Result<Built, WorkloadError> {
    let tasks = a
        .int_in("tasks", 1, MAX_TASKS / 2)?
        .unwrap_or(topo.nr_cpus() as u64);
    a.resolve("tasks", tasks);
    let work = a.int("work", 1_000, 3_600_000_000_000)?;
    let ws = a.int("ws", 0, 1 << 40)?;
    let mi = a.float("mem_intensity")?;
    let groups = a.int("hackbench_groups", 0, 10_000)?;
    let loops = a.int("hackbench_loops", 1, 1_000_000)?;
    let delay = a.int("delay", 0, 3_600_000_000_000)?;
    let mut w = Workload::new("numa-test");
    let done = w.hist("numa_done");
    let chunks = work.div_ceil(CHUNK_NS);
    let mut t = TaskSpec::new(
        "numa_test",
        vec![
            // Each numa_test task is its own program started by fork+exec: exec-time
            // placement (sched_balance_exec, SD_BALANCE_EXEC) spreads them over the nodes.
            Op::Exec,
            Op::Loop(chunks),
            Op::Compute(Dist::Const(work / chunks)),
            Op::EndLoop,
        ],
    );
    t.ws_bytes = ws;
    t.mem_intensity = mi;
    t.home_node = None;
    let tid = w.spec(t);
    w.spawn(TaskSpec::new(
        "numa_test-main",
        vec![
            Op::Loop(tasks),
            Op::Fork(tid),
            Op::EndLoop,
            Op::WaitChildren,
            Op::RecordSince {
                hist: done,
                slot: ABS,
            },
        ],
    ));
    if groups > 0 {
        let shape = hackbench::Shape {
            groups,
            loops,
            fds: 20,
            datasize: 100,
            kind: ChannelKind::unix(),
            threads: false,
            mem_intensity: 0.0,
        };
        let prefix = if delay > 0 {
            vec![Op::Sleep(Dist::Const(delay))]
        } else {
            Vec::new()
        };
        let parts = hackbench::add(&mut w, &shape, prefix, 0, "hb-");
        w.initial.push(parts.main);
    }
    Ok((w, Arc::new(NumaOut { tasks, done })))
}

struct NumaOut {
    tasks: u64,
    done: HistId,
}

impl Report for NumaOut {
    fn headline(&self) -> (String, Better) {
        ("elapsed_s".into(), Better::Lower)
    }
    fn duration_based(&self) -> bool {
        false
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let end = last_abs_time(sim.user_hist(self.done))
            .ok_or_else(|| no_samples("numa-test", "completion"))?;
        let (mut user, mut sys) = (0u64, 0u64);
        for t in sim.task_stats() {
            match t.comm.as_str() {
                "numa_test" => user += t.sum_exec_ns,
                "numa_test-main" => sys += t.sum_exec_ns,
                _ => {}
            }
        }
        let r = NumaTestReport {
            tasks: self.tasks,
            average_user_s: secs(user) / self.tasks as f64,
            elapsed_s: secs(end),
            total_user_s: secs(user),
            total_sys_s: secs(sys),
        };
        Ok((format_numa_test(&r), r.metrics()))
    }
}
