//! hackbench (rt-tests `src/hackbench/hackbench.c`, Ingo Molnar's 2008 version of Rusty
//! Russell's benchmark) / perf bench sched messaging (`tools/perf/bench/sched-messaging.c`).
//!
//! ```text
//!   main ──fork×40G──▶ workers ──barrier(40G+1)──▶ start
//!   group g:  S_0..S_19 ──(every sender to every receiver, round robin)──▶ C_0..C_19 ──▶ R_0..R_19
//!   main: wait for all children (woken WF_SYNC by the last exit) ──▶ end
//! ```
//!
//! Senders share one write end per receiver (one channel per receiver, F writers). Time =
//! end − the barrier's release; fork time is excluded, exit and reap are included.

use super::{ABS, Built, MAX_TASKS, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::{Report, first_abs_time, no_samples};
use crate::spec::Args;
use schedlab_engine::task::{HistId, Op, SpecId};
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{HackbenchReport, format_hackbench};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

/// The shape of one hackbench run.
#[derive(Clone, Debug)]
pub(crate) struct Shape {
    pub groups: u64,
    pub loops: u64,
    pub fds: u64,
    pub datasize: u64,
    pub kind: ChannelKind,
    pub threads: bool,
    /// How memory-bound a worker's kernel work is away from the node it first ran on
    /// (`mem_intensity`; 0 = not modelled).
    pub mem_intensity: f64,
}

/// What [`add`] declared.
pub(crate) struct Parts {
    /// The main task's template (start it with `spawn` or fork it).
    pub main: SpecId,
    /// Absolute times at which workers passed the start barrier.
    pub start_hist: HistId,
}

/// Adds a complete hackbench (main + workers) to `w`; `prefix` runs in main before it forks
/// (numa-test delays its disturbing hackbench with a sleep there). `mm` is the address
/// space key used in thread mode.
/// A hackbench worker touches its message buffer, its stack and a little libc state between
/// syscalls: a few KiB, not the 32 KiB default of a generic task.
const WORKER_WS_BYTES: u64 = 8 * 1024;

pub(crate) fn add(w: &mut Workload, s: &Shape, prefix: Vec<Op>, mm: u32, tag: &str) -> Parts {
    let f = s.fds as usize;
    let parties = (2 * f as u64 * s.groups + 1) as u32;
    let barrier = w.barrier(parties);
    let start_hist = w.hist(format!("{tag}start"));
    let mm = s.threads.then_some(mm);
    let mut main = prefix;
    for g in 0..s.groups {
        let chans: Vec<usize> = (0..f)
            .map(|j| w.channel(s.kind, format!("{tag}g{g}.r{j}")))
            .collect();
        for &ch in &chans {
            let mut r = TaskSpec::new(
                format!("{tag}receiver"),
                vec![
                    Op::Barrier(barrier),
                    Op::RecordSince {
                        hist: start_hist,
                        slot: ABS,
                    },
                    Op::Loop(s.fds * s.loops),
                    Op::Recv { ch },
                    Op::EndLoop,
                ],
            );
            r.mm = mm;
            r.ws_bytes = WORKER_WS_BYTES;
            r.mem_intensity = s.mem_intensity;
            let id = w.spec(r);
            main.push(Op::Fork(id));
        }
        let mut prog = vec![
            Op::Barrier(barrier),
            Op::RecordSince {
                hist: start_hist,
                slot: ABS,
            },
            Op::Loop(s.loops),
        ];
        prog.extend(chans.iter().map(|&ch| Op::Send {
            ch,
            bytes: Dist::Const(s.datasize),
        }));
        prog.push(Op::EndLoop);
        let mut snd = TaskSpec::new(format!("{tag}sender"), prog);
        snd.mm = mm;
        snd.ws_bytes = WORKER_WS_BYTES;
        snd.mem_intensity = s.mem_intensity;
        let sid = w.spec(snd);
        main.extend([Op::Loop(s.fds), Op::Fork(sid), Op::EndLoop]);
    }
    main.extend([Op::Barrier(barrier), Op::WaitChildren]);
    let mut m = TaskSpec::new(format!("{tag}hackbench"), main);
    m.mm = mm;
    let main = w.spec(m);
    Parts { main, start_hist }
}

/// The catalog entry of `hackbench`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "hackbench",
    mirrors: "rt-tests hackbench (-g -l -f -s -p/-i -T/-P); perf bench sched messaging",
    follows: "rt-tests hackbench (src/hackbench/hackbench.c, 2008 rewrite); perf bench sched messaging",
    reconstructed: "the per-message CPU and copy costs (the engine's cost model); everything else (fork, barrier, all-to-all writes, reap) follows the program",
    about: "G groups of F senders and F receivers; every sender writes `loops` messages to every \
            receiver of its group. Workers are forked at t=0 and started through a barrier; the \
            time runs from the barrier to the reaping of the last worker (fork time excluded).",
    params: &[
        param("groups", "10", "count", "groups (-g)"),
        param(
            "loops",
            "100",
            "count",
            "messages each sender passes to each receiver (-l)",
        ),
        param("fds", "20", "count", "senders and receivers per group (-f)"),
        param("datasize", "100", "bytes", "bytes per message (-s)"),
        param(
            "ipc",
            "socket",
            "pipe|socket|inet",
            "channel: pipe (-p), AF_UNIX socket (default), TCP loopback (-i)",
        ),
        param(
            "mode",
            "process",
            "process|thread",
            "workers as processes (-P, default) or threads (-T)",
        ),
        param(
            "mem_intensity",
            "0",
            "fraction",
            "how memory-bound a worker's socket/pipe kernel work is off the node it first ran on \
             (its kernel stack, task_struct and the parent's sockets live there); 0 = not modelled",
        ),
    ],
    build,
};

pub(crate) fn build(a: &mut Args, _topo: &Topology) -> Result<Built, WorkloadError> {
    let groups = a.int("groups", 1, 100_000)?;
    let loops = a.int("loops", 1, u64::MAX / 1_000_000)?;
    let fds = a.int("fds", 1, 1000)?;
    let datasize = a.int("datasize", 1, 1 << 20)?;
    let ipc = a.choice("ipc")?;
    let threads = a.choice("mode")? == "thread";
    // Off by default: no published figure says how memory-bound the socket path of a
    // hackbench worker is on a given machine (docs/validation.md, R3's analysis); a value
    // is a what-if, like kernbench's and numa-test's intensities but without their basis.
    let mem_intensity = a.float("mem_intensity")?;
    if !(0.0..=1.0).contains(&mem_intensity) {
        let given = a.text("mem_intensity").unwrap_or_default();
        return Err(a.err("mem_intensity", given, "must be between 0 and 1"));
    }
    if groups * fds * 2 > MAX_TASKS {
        return Err(a.err(
            "groups",
            groups,
            format!(
                "{} tasks is more than the {MAX_TASKS} a model may create",
                groups * fds * 2
            ),
        ));
    }
    let kind = match ipc.as_str() {
        "pipe" => ChannelKind::pipe(),
        "inet" => ChannelKind::tcp(),
        _ => ChannelKind::unix(),
    };
    let shape = Shape {
        groups,
        loops,
        fds,
        datasize,
        kind,
        threads,
        mem_intensity,
    };
    let mut w = Workload::new("hackbench");
    let parts = add(&mut w, &shape, Vec::new(), 0, "");
    w.initial.push(parts.main);
    Ok((
        w,
        Arc::new(HackbenchOut {
            shape,
            start_hist: parts.start_hist,
        }),
    ))
}

struct HackbenchOut {
    shape: Shape,
    start_hist: HistId,
}

impl Report for HackbenchOut {
    fn headline(&self) -> (String, Better) {
        ("time_s".into(), Better::Lower)
    }
    fn duration_based(&self) -> bool {
        false
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let start = first_abs_time(sim.user_hist(self.start_hist))
            .ok_or_else(|| no_samples("hackbench", "start"))?;
        let s = &self.shape;
        let r = HackbenchReport {
            threads: s.threads,
            groups: s.groups,
            fds: s.fds,
            loops: s.loops,
            datasize: s.datasize,
            time_s: secs(sim.now().saturating_sub(start)),
        };
        Ok((format_hackbench(&r), r.metrics()))
    }
}
