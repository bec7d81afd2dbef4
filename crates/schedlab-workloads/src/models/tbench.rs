//! tbench (dbench 4.0 `tbench` + `tbench_srv`) driven by the operation sequence of dbench's
//! standard `client.txt` load file: each client runs the load file's operations in order,
//! each one request and its own reply, over one TCP loopback connection to the
//! `tbench_srv` child forked for it. Documented in `docs/workloads/tbench-netperf.md`.
//!
//! ```text
//!   tbench client_i ──connect──▶ tbench_srv ──fork──▶ tbench_srv child_i
//!   client_i: loop over the load file { compute; send(op's request); recv(op's reply); count op's payload }
//!   child_i:  loop { recv(request); compute(server work); send(reply) }
//! ```
//!
//! A reply belongs to its request (a 64 KiB WriteX gets a 55 B reply, a 60 KiB ReadX a
//! 60 KiB one), the operations come in a fixed order, and the payload counted toward MB/sec
//! is the operation's own. The op mix ([`TBENCH_MIX`]) reproduces the load file's published
//! means: 2,280 B per request, 3,290 B per reply, 5,428 B of ReadX/WriteX payload.

use super::{Built, MAX_TASKS, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::{Report, metric, no_samples};
use crate::spec::Args;
use schedlab_engine::task::{CounterId, HistId, Op, Slot};
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{TbenchReport, format_tbench};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

/// One line of the op mix: name, operations per 1,000, request bytes, reply bytes, counted
/// payload bytes. Built from an analysis of dbench 4.0's `client.txt` load file (op
/// shares; ReadX mostly 4 KiB and 60 KiB, WriteX 64 KiB, 4 KiB and 1 B; SMB headers of
/// 40-110 B); the sizes of the small-ReadX and mid-WriteX classes are set so that the mix
/// reproduces the published means (2,280 B request, 3,290 B reply, 5,428 B payload per op).
const TBENCH_MIX: &[(&str, u32, u64, u64, u64)] = &[
    ("NTCreateX", 173, 80, 90, 0),
    ("Close", 127, 45, 40, 0),
    ("Qpathinfo", 157, 70, 100, 0),
    ("Qfileinfo", 40, 50, 100, 0),
    ("Sfileinfo", 20, 80, 45, 0),
    ("Find", 61, 90, 219, 0),
    ("Unlink", 35, 80, 40, 0),
    ("Flush", 15, 45, 40, 0),
    ("Rename", 10, 110, 40, 0),
    ("Qfsinfo", 5, 50, 60, 0),
    ("ReadX", 182, 59, 59 + 4096, 4096),
    ("ReadX", 39, 59, 59 + 61_440, 61_440),
    ("ReadX", 50, 59, 59 + 1407, 1407),
    ("WriteX", 32, 59 + 65_536, 55, 65_536),
    ("WriteX", 34, 59 + 3450, 55, 3450),
    ("WriteX", 20, 60, 55, 1),
];

/// The catalog entry of `tbench`.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "tbench",
    mirrors: "dbench 4.0 tbench NPROCS 127.0.0.1 with tbench_srv, client.txt load file",
    follows: "dbench 4.0 tbench + tbench_srv (Debian 4.0 binary) with its client.txt load file",
    reconstructed: "the order of the 1,000-operation cycle (from the load file's op shares), the small-ReadX and mid-WriteX sizes (set to the published means) and the per-operation CPU",
    about: "N clients each replay the client.txt operation sequence (NTCreateX, ReadX, WriteX, \
            Close, path/file info, Find, Unlink, Flush, ...) over TCP loopback to their own \
            tbench_srv child: one request and its own reply per operation.",
    params: &[
        param("clients", "1", "count", "client processes (NPROCS)"),
        param(
            "duration",
            "1s",
            "duration",
            "run time (-t; tbench's default 600s shrunk to keep runs short)",
        ),
        param(
            "client_work",
            "2us",
            "duration",
            "client work per operation (parsing the load file line, building the request)",
        ),
        param(
            "server_work",
            "3us",
            "duration",
            "tbench_srv work per operation (it only reads the request and writes the reply)",
        ),
    ],
    build,
};

/// The load file as one cycle of 1,000 operations: each line of [`TBENCH_MIX`] appears its
/// share of times, spread evenly (largest remaining share first, ties by table order), so
/// the sequence is fixed and the shares exact.
pub(crate) fn sequence() -> Vec<usize> {
    let total: u32 = TBENCH_MIX.iter().map(|e| e.1).sum();
    let mut credit = vec![0i64; TBENCH_MIX.len()];
    let mut out = Vec::with_capacity(total as usize);
    for _ in 0..total {
        for (c, e) in credit.iter_mut().zip(TBENCH_MIX) {
            *c += i64::from(e.1);
        }
        let mut best = 0;
        for i in 1..credit.len() {
            if credit[i] > credit[best] {
                best = i;
            }
        }
        credit[best] -= i64::from(total);
        out.push(best);
    }
    out
}

pub(crate) fn build(a: &mut Args, _topo: &Topology) -> Result<Built, WorkloadError> {
    let clients = a.int("clients", 1, MAX_TASKS / 2)?;
    let duration = a.int("duration", 1_000, 3_600_000_000_000)?;
    let client_work = a.int("client_work", 0, 1_000_000_000)?;
    let server_work = a.int("server_work", 0, 1_000_000_000)?;
    let mut w = Workload::new("tbench");
    let payload = w.counter("payload_bytes");
    let lat = w.hist("op_latency");
    let seq = sequence();
    let listen = w.channel(ChannelKind::tcp(), "listen");
    let mut listener = Vec::new();
    for i in 0..clients {
        let req = w.channel(ChannelKind::tcp(), format!("conn{i}.req"));
        let resp = w.channel(ChannelKind::tcp(), format!("conn{i}.resp"));
        let mut c = vec![
            Op::Send {
                ch: listen,
                bytes: Dist::Const(60),
            },
            Op::Loop(u64::MAX),
        ];
        for &k in &seq {
            let (_, _, rq, _, pay) = TBENCH_MIX[k];
            c.push(Op::Stamp(Slot::Task(0)));
            if client_work > 0 {
                c.push(Op::Compute(Dist::Const(client_work)));
            }
            c.extend([
                Op::Send {
                    ch: req,
                    bytes: Dist::Const(rq),
                },
                Op::Recv { ch: resp },
                Op::RecordSince {
                    hist: lat,
                    slot: Slot::Task(0),
                },
            ]);
            if pay > 0 {
                c.push(Op::Count {
                    counter: payload,
                    amount: Dist::Const(pay),
                });
            }
        }
        c.push(Op::EndLoop);
        w.spawn(TaskSpec::new("tbench", c));
        // The child answers each request with the reply of the same operation, in order.
        let mut s = vec![Op::Loop(u64::MAX)];
        for &k in &seq {
            s.push(Op::Recv { ch: req });
            if server_work > 0 {
                s.push(Op::Compute(Dist::Const(server_work)));
            }
            s.push(Op::Send {
                ch: resp,
                bytes: Dist::Const(TBENCH_MIX[k].3),
            });
        }
        s.push(Op::EndLoop);
        let server = w.spec(TaskSpec::new("tbench_srv", s));
        listener.extend([Op::Recv { ch: listen }, Op::Fork(server)]);
    }
    w.spawn(TaskSpec::new("tbench_srv", listener));
    w.duration_ns = Some(duration);
    Ok((
        w,
        Arc::new(TbenchOut {
            clients,
            payload,
            lat,
        }),
    ))
}

/// tbench's report (MB/s of counted payload, per-op latency).
struct TbenchOut {
    clients: u64,
    payload: CounterId,
    lat: HistId,
}

impl Report for TbenchOut {
    fn headline(&self) -> (String, Better) {
        ("throughput_mb_s".into(), Better::Higher)
    }
    fn duration_based(&self) -> bool {
        true
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let h = sim.user_hist(self.lat);
        if h.is_empty() {
            return Err(no_samples("tbench", "completed operation"));
        }
        let t = secs(sim.now());
        let r = TbenchReport {
            ops: Vec::new(),
            throughput_mb_s: sim.user_counter(self.payload) / 1e6 / t,
            clients: self.clients,
            procs: self.clients,
            max_latency_ms: h.median_equivalent(h.max()) as f64 / 1e6,
        };
        let mut m = r.metrics();
        m.push(metric(
            "avg_latency_ms",
            h.mean() / 1e6,
            "ms",
            Better::Lower,
        ));
        m.push(metric(
            "ops_per_sec",
            h.len() as f64 / t,
            "ops/s",
            Better::Higher,
        ));
        Ok((format_tbench(&r), m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_holds_each_operation_its_share_and_spreads_it() {
        let seq = sequence();
        assert_eq!(seq.len(), 1000);
        for (i, e) in TBENCH_MIX.iter().enumerate() {
            assert_eq!(
                seq.iter().filter(|&&k| k == i).count() as u32,
                e.1,
                "{}",
                e.0
            );
        }
        // The most frequent line (ReadX 4 KiB, 182 per 1,000) never waits more than
        // 1000/182 + 1 operations for its next turn.
        let pos: Vec<usize> = (0..seq.len()).filter(|&p| seq[p] == 10).collect();
        assert!(pos.windows(2).all(|w| w[1] - w[0] <= 7), "{pos:?}");
    }

    #[test]
    fn tbench_mix_matches_the_loadfile_means() {
        let total: u32 = TBENCH_MIX.iter().map(|e| e.1).sum();
        assert_eq!(total, 1000);
        let mean = |col: fn(&(&str, u32, u64, u64, u64)) -> u64| {
            TBENCH_MIX
                .iter()
                .map(|e| e.1 as f64 * col(e) as f64)
                .sum::<f64>()
                / 1000.0
        };
        let (req, rep, pay) = (mean(|e| e.2), mean(|e| e.3), mean(|e| e.4));
        assert!((req - 2280.0).abs() < 2280.0 * 0.01, "request mean {req}");
        assert!((rep - 3290.0).abs() < 3290.0 * 0.01, "reply mean {rep}");
        assert!((pay - 5428.0).abs() < 5428.0 * 0.01, "payload mean {pay}");
        // Op shares of dbench 4.0's client.txt: ReadX 27.1 %, WriteX 8.6 %.
        let share = |n: &str| {
            TBENCH_MIX
                .iter()
                .filter(|e| e.0 == n)
                .map(|e| e.1)
                .sum::<u32>()
        };
        assert_eq!(share("ReadX"), 271);
        assert_eq!(share("WriteX"), 86);
        assert_eq!(share("NTCreateX"), 173);
    }
}
