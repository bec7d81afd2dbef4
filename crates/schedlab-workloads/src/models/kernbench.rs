//! kernbench: a kernel build at one `make -j` load (kernbench, Con Kolivas / Martin Bligh).
//!
//! ```text
//!   make: put `jobs` tokens in the jobserver pipe;
//!         files × { take a token (sleeps while none); fork gcc }
//!         wait for every gcc; fork ld; wait
//!   gcc:  fork cc1 (its file's CPU: LogNormal, median 200 ms × scale, drawn once per
//!         tree); wait; fork as; wait;
//!         give the token back (wakes a sleeping make, WF_SYNC); exit
//! ```
//!
//! Every process is created by fork (WF_FORK slow-path placement) and its parent is woken
//! (WF_SYNC) by the last child's exit, as make and gcc are in wait4.
//!
//! **Memory footprint** (part of kernbench's task graph, not only its CPU time): cc1, as and ld allocate
//! their heap after exec, so it lives on the node where they first run after the exec
//! (first touch; the engine re-homes a first-touch task at exec). A job that a balancer
//! moves to another node keeps its memory behind and runs `1 + remote_memory_slowdown ×
//! mem_intensity × steps` slower there, which is what raises kernbench's user time when
//! cross-node balancing is more eager (case R3 of docs/validation.md).
//!
//! **User and system time** are counted the way kernbench reads them (`getrusage` of the
//! children): user time is every task's user-mode work (the engine's per-task `user_ns`:
//! compute with its remote slowdown, working-set refetches), system time the rest of the
//! CPU time (fork, exec, syscalls, pipe traffic, switches), over make, gcc, cc1, as and ld.

use super::{Built, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::Report;
use crate::spec::Args;
use schedlab_engine::rng::{Stream, stream};
use schedlab_engine::task::Op;
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{KernbenchReport, format_kernbench};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

/// cc1's CPU per file at scale 1: median 200 ms, log-normal shape 0.8.
const CC1_MEDIAN_NS: f64 = 200e6;
const CC1_SIGMA: f64 = 0.8;
/// as's CPU per file at scale 1.
const AS_NS: f64 = 10e6;
/// Compute granularity of a compile job (as numa-test's): the remote slowdown is priced
/// per chunk on the node the chunk runs on.
const CHUNK_NS: u64 = 1_000_000;
/// Seed of the source tree's per-file cc1 times (any fixed value: one tree).
const TREE_SEED: u64 = 0x6b65_726e_6265_6e63;

/// The catalog entry of `kernbench`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "kernbench",
    mirrors: "kernbench (a kernel make -j N), one load",
    follows: "kernbench (Con Kolivas / Martin Bligh) over a make -j kernel build with the GNU make jobserver",
    reconstructed: "the tree: file count, per-file CPU (LogNormal) and memory intensity stand in for a real kernel tree",
    about: "make forks at most `jobs` compile jobs at a time through a jobserver token pipe; \
            each job forks cc1 (LogNormal CPU, median 200ms x scale) and as; then a serial link.",
    params: &[
        param(
            "jobs",
            "auto",
            "count",
            "make -j (auto: 4 x CPUs, kernbench's optimal load; 0 = unbounded)",
        ),
        param("files", "400", "count", "compile jobs"),
        param(
            "scale",
            "0.01",
            "factor",
            "CPU time scale (1 = real compile times, median 200ms per file)",
        ),
        param(
            "link",
            "2s",
            "duration",
            "serial link step CPU at scale 1 (vmlinux link, sized to the 400-file default)",
        ),
        param(
            "mem_intensity",
            "0.25",
            "fraction",
            "how memory-bound cc1/as/ld are (remote-node slowdown off their first-touch node)",
        ),
    ],
    build,
};

pub(crate) fn build(a: &mut Args, topo: &Topology) -> Result<Built, WorkloadError> {
    let ncpus = topo.nr_cpus() as u64;
    let jobs = a.int_in("jobs", 0, 60_000)?.unwrap_or(4 * ncpus);
    a.resolve("jobs", jobs);
    let files = a.int("files", 1, 50_000)?;
    let scale = a.float("scale")?;
    if !(1e-6..=100.0).contains(&scale) {
        // Above 100 the compile and link times overflow any run (and at 1e300 the
        // nanosecond conversion itself).
        let given = a.text("scale").unwrap_or_default();
        return Err(a.err(
            "scale",
            given,
            "must be between 0.000001 and 100 (1 = real compile times)",
        ));
    }
    let link = a.int("link", 0, 3_600_000_000_000)?;
    // Memory intensity of a compile job (default 0.25, catalog): the fraction of its run
    // time that scales with memory latency. A compiler is neither a streaming kernel
    // (numa-test's 0.8) nor cache-resident: cc1 walks pointer-rich trees over a heap of tens
    // of MB, past a 2003 L3 of a few MB, with good locality. A quarter is a
    // [reconstruction] (no published figure); on the TX7 profile (remote memory ~2x
    // local) a job off its node runs 1.2x slower, inside the range a node distance of
    // 20 vs 10 gives: "little" (cache-resident) to 1.3-1.6x (memory-intensive). The slowdown is a fraction
    // of run time, so it survives `scale`; the working set (a refetch cost per migration,
    // which the time compression would inflate) stays at the engine's default.
    let mi = a.float("mem_intensity")?;
    let ns = |x: f64| (x * scale).round() as u64;
    let mut w = Workload::new("kernbench");
    // A compile job: exec, then its work on memory first touched after the exec, in
    // CHUNK_NS computes so that a job moved off its node pays the remote slowdown for the
    // time it spends there (the engine prices a compute op on the node it starts on).
    let job = |comm: &str, work: u64| {
        let mut prog = vec![Op::Exec];
        let (n, rest) = (work / CHUNK_NS, work % CHUNK_NS);
        if n > 0 {
            prog.extend([Op::Loop(n), Op::Compute(Dist::Const(CHUNK_NS)), Op::EndLoop]);
        }
        if rest > 0 || n == 0 {
            prog.push(Op::Compute(Dist::Const(rest)));
        }
        let mut t = TaskSpec::new(comm, prog);
        t.mem_intensity = mi;
        t.home_node = None;
        t
    };
    let asm = w.spec(job("as", ns(AS_NS)));
    let ld = w.spec(job("ld", ns(link as f64)));
    let tokens = w.channel(ChannelKind::pipe(), "jobserver");
    // The source tree: one cc1 CPU time per file, the same in every run and variant (a
    // build compiles the same files each time; run-to-run noise is the profile's jitter).
    let mut tree = stream(TREE_SEED, Stream::Workload);
    let cc1_dist = Dist::LogNormal {
        median: ns(CC1_MEDIAN_NS).max(1),
        sigma: CC1_SIGMA,
    };
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
    }
    for _ in 0..files {
        let cc1 = w.spec(job("cc1", cc1_dist.sample(&mut tree).max(1)));
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
            make.push(Op::Recv { ch: tokens });
        }
        make.push(Op::Fork(w.spec(TaskSpec::new("gcc", gcc))));
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
            let u = t.user_ns.min(t.sum_exec_ns);
            user += u;
            sys += t.sum_exec_ns - u;
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
