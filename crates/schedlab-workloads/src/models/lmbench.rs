//! lmbench bandwidth (bw_pipe, bw_unix, bw_tcp) and context-switch latency (lat_ctx)
//! of lmbench 3 (`src/bw_pipe.c`, `bw_unix.c`, `bw_tcp.c`, `lat_ctx.c`).
//!
//! ```text
//!   bw:      writer: total/size × write(size)  ──channel──▶  reader: total/size × read
//!   lat_ctx: overhead task: rounds × { write own pipe; read it; sum size KB }   (no switch)
//!            ──barrier──▶ ring P_0 → P_1 → … → P_{N-1} → P_0: rounds × { read; sum; write next }
//! ```
//!
//! lat_ctx reports µs per switch: ring time per hop minus the overhead per hop that the
//! single-task loop measured first in the same run (as lat_ctx measures and subtracts it).
//! Bandwidth uses lmbench's MB = 2^20 bytes.

use super::{ABS, Built, MAX_TASKS, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::{Report, first_abs_time, no_samples};
use crate::spec::Args;
use schedlab_engine::task::{HistId, Op};
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{
    LatCtxReport, LmbenchBwKind, LmbenchBwReport, format_lat_ctx, format_lmbench_bw,
};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

/// Time to sum one byte of private data (lat_ctx's unrolled `sumit`), ns.
const SUM_NS_PER_BYTE: f64 = 0.1;

/// The catalog entry of `lmbench-bw`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const LMBENCH_BW: WorkloadInfo = WorkloadInfo {
    name: "lmbench-bw",
    mirrors: "lmbench bw_pipe / bw_unix / bw_tcp (-m SIZE)",
    follows: "lmbench 3 bw_pipe, bw_unix, bw_tcp",
    reconstructed: "nothing beyond the engine's per-byte copy and wakeup costs",
    about: "One writer streams `total` bytes in `size` writes to one reader.",
    params: &[
        param(
            "kind",
            "pipe",
            "pipe|unix|tcp",
            "bw_pipe, bw_unix or bw_tcp",
        ),
        param("size", "64K", "bytes", "bytes per write (-m)"),
        param("total", "10M", "bytes", "bytes moved"),
    ],
    build: build_bw,
};

pub(crate) fn build_bw(a: &mut Args, _topo: &Topology) -> Result<Built, WorkloadError> {
    let kind = a.choice("kind")?;
    let size = a.int("size", 1, 1 << 30)?;
    let total = a.int("total", 1, 1 << 40)?;
    if total < size {
        return Err(a.err(
            "total",
            total,
            format!("must be at least one write of size {size}"),
        ));
    }
    let writes = total / size;
    let ck = match kind.as_str() {
        "unix" => ChannelKind::unix(),
        "tcp" => ChannelKind::tcp(),
        _ => ChannelKind::pipe(),
    };
    let mut w = Workload::new("lmbench-bw");
    let ch = w.channel(ck, "data");
    let comm = format!("bw_{kind}");
    w.spawn(TaskSpec::new(
        comm.clone(),
        vec![
            Op::Loop(writes),
            Op::Send {
                ch,
                bytes: Dist::Const(size),
            },
            Op::EndLoop,
        ],
    ));
    w.spawn(TaskSpec::new(
        comm,
        vec![Op::Loop(writes), Op::Recv { ch }, Op::EndLoop],
    ));
    Ok((
        w,
        Arc::new(BwOut {
            kind,
            bytes: writes * size,
        }),
    ))
}

struct BwOut {
    kind: String,
    bytes: u64,
}

impl Report for BwOut {
    fn headline(&self) -> (String, Better) {
        ("bandwidth_mb_s".into(), Better::Higher)
    }
    fn duration_based(&self) -> bool {
        false
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let mb_per_sec = self.bytes as f64 / (1u64 << 20) as f64 / secs(sim.now()).max(1e-12);
        let (native, metrics) = match self.kind.as_str() {
            "tcp" => {
                // metrics::native has no bw_tcp format: this is lmbench's bw_tcp line (recalled).
                let r = LmbenchBwReport {
                    kind: LmbenchBwKind::Unix,
                    mb_per_sec,
                };
                (
                    format!("Socket bandwidth using localhost: {mb_per_sec:.2} MB/sec\n"),
                    r.metrics(),
                )
            }
            k => {
                let kind = if k == "unix" {
                    LmbenchBwKind::Unix
                } else {
                    LmbenchBwKind::Pipe
                };
                let r = LmbenchBwReport { kind, mb_per_sec };
                (format_lmbench_bw(&r), r.metrics())
            }
        };
        Ok((native, metrics))
    }
}

/// The catalog entry of `lat-ctx`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const LAT_CTX: WorkloadInfo = WorkloadInfo {
    name: "lat-ctx",
    mirrors: "lmbench lat_ctx -P PARALLEL -s SIZE N",
    follows: "lmbench 3 lat_ctx",
    reconstructed: "the cost of summing SIZE KB of private data (the engine's cache model)",
    about: "A ring of N processes passing a token through pipes, each summing SIZE KB of private \
            data before passing it on; microseconds per context switch (overhead subtracted). \
            With -P, that many copies run at once (each its own ring and overhead task, all \
            starting together); the time is each copy's ring time, averaged over the copies \
            [M: the mean stands for benchmp's combination of its children's results].",
    params: &[
        param("procs", "2", "count", "processes in the ring"),
        param("size", "0", "KB", "private data summed per hop (-s)"),
        param(
            "rounds",
            "10000",
            "count",
            "trips of the token around the ring",
        ),
        param(
            "parallel",
            "1",
            "count",
            "copies run at once, each with its own ring (-P; lmbench's benchmp)",
        ),
    ],
    build: build_ctx,
};

pub(crate) fn build_ctx(a: &mut Args, _topo: &Topology) -> Result<Built, WorkloadError> {
    let procs = a.int("procs", 2, MAX_TASKS)?;
    let size_kb = a.int("size", 0, 1 << 20)?;
    let rounds = a.int("rounds", 1, 1 << 40)?;
    let parallel = a.int("parallel", 1, MAX_TASKS)?;
    if parallel.saturating_mul(procs + 1) > MAX_TASKS {
        return Err(a.err(
            "parallel",
            parallel,
            format!(
                "{parallel} copies of a ring of {procs} processes and its overhead task are \
                 {} tasks, more than {MAX_TASKS}",
                parallel.saturating_mul(procs + 1)
            ),
        ));
    }
    let sum = (size_kb as f64 * 1024.0 * SUM_NS_PER_BYTE).round() as u64;
    let mut w = Workload::new("lat-ctx");
    let start = w.hist("ring_start");
    let end = w.hist("ring_end");
    // benchmp's -P: every copy measures its overhead, then all start their rings together:
    // the parent's start signal releases each copy's overhead task and the ring process that
    // holds the token. The ring's other processes are already blocked in read() on their
    // pipes (lat_ctx's `doit()` loops on read, then write), as they are from the moment
    // `initialize()` forked them; they do not wait at the start.
    let barrier = w.barrier((2 * parallel) as u32);
    for copy in 0..parallel {
        ring_copy(
            &mut w,
            copy,
            procs,
            rounds,
            size_kb,
            sum,
            barrier,
            (start, end),
        );
    }
    Ok((
        w,
        Arc::new(CtxOut {
            procs,
            size_kb,
            rounds,
            start,
            end,
        }),
    ))
}

/// One copy of lat_ctx: its overhead task and its ring of `procs` processes.
#[allow(clippy::too_many_arguments)]
fn ring_copy(
    w: &mut Workload,
    copy: u64,
    procs: u64,
    rounds: u64,
    size_kb: u64,
    sum: u64,
    barrier: usize,
    (start, end): (HistId, HistId),
) {
    let with_sum = |mut v: Vec<Op>| {
        if sum > 0 {
            v.push(Op::Compute(Dist::Const(sum)));
        }
        v
    };
    let own = w.channel(ChannelKind::pipe(), format!("overhead{copy}"));
    let mut ovr = vec![
        Op::Loop(rounds),
        Op::Send {
            ch: own,
            bytes: Dist::Const(4),
        },
        Op::Recv { ch: own },
    ];
    ovr = with_sum(ovr);
    ovr.extend([Op::EndLoop, Op::Barrier(barrier)]);
    let mut o = TaskSpec::new("lat_ctx-ovr", ovr);
    o.ws_bytes = size_kb * 1024;
    w.spawn(o);
    let chans: Vec<usize> = (0..procs)
        .map(|i| w.channel(ChannelKind::pipe(), format!("ring{copy}.{i}")))
        .collect();
    for i in 0..procs as usize {
        let (inp, out) = (chans[i], chans[(i + 1) % procs as usize]);
        // Only the token's first holder waits for the start; the others block on their pipe.
        let mut prog = if i == 0 {
            vec![
                Op::Barrier(barrier),
                Op::RecordSince {
                    hist: start,
                    slot: ABS,
                },
            ]
        } else {
            Vec::new()
        };
        let hop = |p: &mut Vec<Op>| {
            p.push(Op::Recv { ch: inp });
            if sum > 0 {
                p.push(Op::Compute(Dist::Const(sum)));
            }
            p.push(Op::Send {
                ch: out,
                bytes: Dist::Const(4),
            });
        };
        if i == 0 {
            // The first process starts the token and takes the last read.
            prog.push(Op::Send {
                ch: out,
                bytes: Dist::Const(4),
            });
            if rounds > 1 {
                prog.push(Op::Loop(rounds - 1));
                hop(&mut prog);
                prog.push(Op::EndLoop);
            }
            prog.push(Op::Recv { ch: inp });
            // The copy's ring is done when its token comes home for the last time.
            prog.push(Op::RecordSince {
                hist: end,
                slot: ABS,
            });
        } else {
            prog.push(Op::Loop(rounds));
            hop(&mut prog);
            prog.push(Op::EndLoop);
        }
        let mut t = TaskSpec::new("lat_ctx", prog);
        t.ws_bytes = size_kb * 1024;
        w.spawn(t);
    }
}

struct CtxOut {
    procs: u64,
    size_kb: u64,
    rounds: u64,
    start: HistId,
    /// When each copy's token came home for the last time.
    end: HistId,
}

impl Report for CtxOut {
    fn headline(&self) -> (String, Better) {
        (format!("ctx_us_{}", self.procs), Better::Lower)
    }
    fn duration_based(&self) -> bool {
        false
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let start = first_abs_time(sim.user_hist(self.start))
            .ok_or_else(|| no_samples("lat-ctx", "ring start"))?;
        let hops = (self.rounds * self.procs) as f64;
        let overhead_us = start as f64 / 1e3 / self.rounds as f64;
        // Each copy's ring time, averaged over the copies: benchmp's children time the same
        // benchmark side by side and their results are combined per copy, so one copy that
        // finishes late on an emptied machine does not stand for all [M: the mean].
        let ends = sim.user_hist(self.end);
        if ends.is_empty() {
            return Err(no_samples("lat-ctx", "ring end"));
        }
        let per_hop_us = (ends.mean() - start as f64).max(0.0) / 1e3 / hops;
        let r = LatCtxReport {
            size_kb: self.size_kb,
            overhead_us,
            points: vec![(self.procs, (per_hop_us - overhead_us).max(0.0))],
        };
        let mut m = r.metrics();
        m.push(crate::instance::metric(
            "overhead_us",
            overhead_us,
            "us",
            Better::Lower,
        ));
        Ok((format_lat_ctx(&r), m))
    }
}
