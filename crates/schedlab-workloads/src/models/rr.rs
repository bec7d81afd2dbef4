//! Request/response pairs over TCP loopback: dbench 4.0's tbench (with tbench_srv) and
//! netperf 2.x TCP_RR.
//!
//! ```text
//!   client_i ──connect──▶ listener ──fork (WF_FORK)──▶ server_i
//!   client_i: loop { stamp; compute(c_client); send(req_i, request); recv(resp_i); record latency; count }
//!   server_i: loop { recv(req_i); compute(c_server); send(resp_i, reply) }
//! ```
//!
//! Delivery (softirq) is charged to the sender's CPU and wakes the reader with WF_SYNC, as
//! the engine's `ChannelKind::tcp()` does. The listener (tbench_srv, netserver) forks one
//! server per accepted connection, so servers get the fork placement near the listener.
//!
//! tbench's sizes: the dbench 4.0 `client.txt` op mix ([`TBENCH_MIX`]) gives the request and
//! reply [`Dist::Choice`]s (means 2,280 B and 3,290 B); each operation counts 5,428 B of
//! ReadX/WriteX payload toward MB/sec, the loadfile's average.

use super::{Built, MAX_TASKS, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::{Report, metric, no_samples};
use crate::spec::Args;
use schedlab_engine::task::{CounterId, HistId, Op, Slot};
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{NetperfRrReport, TbenchReport, format_netperf_rr, format_tbench};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

/// One line of the op mix: name, operations per 1,000, request bytes, reply bytes, counted
/// payload bytes. Built from an analysis of dbench 4.0's `client.txt` load file (op
/// shares; ReadX mostly 4 KiB and 60 KiB, WriteX 64 KiB, 4 KiB and 1 B; SMB headers of
/// 40-110 B); the sizes of the small-ReadX and mid-WriteX classes are set so that the mix
/// reproduces the published means (2,280 B request, 3,290 B reply, 5,428 B payload per op).
pub(crate) const TBENCH_MIX: &[(&str, u32, u64, u64, u64)] = &[
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

/// Counted payload per operation, bytes (dbench client.txt average).
pub(crate) const TBENCH_PAYLOAD: u64 = 5428;

fn mix(col: impl Fn(&(&str, u32, u64, u64, u64)) -> u64) -> Dist {
    let mut v: Vec<(u32, u64)> = Vec::new();
    for e in TBENCH_MIX {
        let x = col(e);
        match v.iter_mut().find(|(_, val)| *val == x) {
            Some(slot) => slot.0 += e.1,
            None => v.push((e.1, x)),
        }
    }
    Dist::Choice(v)
}

/// tbench's request size distribution.
pub(crate) fn tbench_request() -> Dist {
    mix(|e| e.2)
}

/// tbench's reply size distribution.
pub(crate) fn tbench_reply() -> Dist {
    mix(|e| e.3)
}

struct Pairs {
    n: u64,
    request: Dist,
    response: Dist,
    client_work: u64,
    server_work: u64,
    client_comm: &'static str,
    server_comm: &'static str,
    listener_comm: &'static str,
}

/// Declares `n` client/server pairs; `per_op` are the client ops after each reply (counting).
fn add_pairs(w: &mut Workload, p: &Pairs, lat: Option<HistId>, per_op: impl Fn(usize) -> Vec<Op>) {
    let listen = w.channel(ChannelKind::tcp(), "listen");
    let mut listener = Vec::new();
    for i in 0..p.n as usize {
        let req = w.channel(ChannelKind::tcp(), format!("conn{i}.req"));
        let resp = w.channel(ChannelKind::tcp(), format!("conn{i}.resp"));
        let mut c = vec![
            Op::Send {
                ch: listen,
                bytes: Dist::Const(60),
            },
            Op::Loop(u64::MAX),
        ];
        if lat.is_some() {
            c.push(Op::Stamp(Slot::Task(0)));
        }
        if p.client_work > 0 {
            c.push(Op::Compute(Dist::Const(p.client_work)));
        }
        c.push(Op::Send {
            ch: req,
            bytes: p.request.clone(),
        });
        c.push(Op::Recv { ch: resp });
        if let Some(h) = lat {
            c.push(Op::RecordSince {
                hist: h,
                slot: Slot::Task(0),
            });
        }
        c.extend(per_op(i));
        c.push(Op::EndLoop);
        w.spawn(TaskSpec::new(p.client_comm, c));
        let mut s = vec![Op::Loop(u64::MAX), Op::Recv { ch: req }];
        if p.server_work > 0 {
            s.push(Op::Compute(Dist::Const(p.server_work)));
        }
        s.extend([
            Op::Send {
                ch: resp,
                bytes: p.response.clone(),
            },
            Op::EndLoop,
        ]);
        let server = w.spec(TaskSpec::new(p.server_comm, s));
        listener.extend([Op::Recv { ch: listen }, Op::Fork(server)]);
    }
    w.spawn(TaskSpec::new(p.listener_comm, listener));
}

/// The catalog entry of `tbench`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const TBENCH: WorkloadInfo = WorkloadInfo {
    name: "tbench",
    mirrors: "dbench tbench NPROCS 127.0.0.1 (-t) with tbench_srv",
    about: "N client/server pairs over TCP loopback; request/reply sizes drawn from the dbench \
            client.txt mix (mean 2,280 B / 3,290 B, 5,428 B counted per op); tbench_srv forks \
            one server per accepted connection.",
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
            "client user-space work per operation",
        ),
        param(
            "server_work",
            "3us",
            "duration",
            "server user-space work per operation",
        ),
    ],
    build: build_tbench,
};

pub(crate) fn build_tbench(a: &mut Args, _topo: &Topology) -> Result<Built, WorkloadError> {
    let clients = a.int("clients", 1, MAX_TASKS / 2)?;
    let duration = a.int("duration", 1_000, 3_600_000_000_000)?;
    let client_work = a.int("client_work", 0, 1_000_000_000)?;
    let server_work = a.int("server_work", 0, 1_000_000_000)?;
    let mut w = Workload::new("tbench");
    let payload = w.counter("payload_bytes");
    let lat = w.hist("op_latency");
    let p = Pairs {
        n: clients,
        request: tbench_request(),
        response: tbench_reply(),
        client_work,
        server_work,
        client_comm: "tbench",
        server_comm: "tbench_srv",
        listener_comm: "tbench_srv",
    };
    add_pairs(&mut w, &p, Some(lat), |_| {
        vec![Op::Count {
            counter: payload,
            amount: Dist::Const(TBENCH_PAYLOAD),
        }]
    });
    w.duration_ns = Some(duration);
    Ok((
        w,
        Arc::new(TbenchOut {
            workload: "tbench",
            clients,
            payload,
            lat,
        }),
    ))
}

/// tbench's report (MB/s of counted payload, per-op latency), shared by both tbench models.
pub(crate) struct TbenchOut {
    /// The model's name, for the "no samples" error.
    pub(crate) workload: &'static str,
    pub(crate) clients: u64,
    pub(crate) payload: CounterId,
    pub(crate) lat: HistId,
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
            return Err(no_samples(self.workload, "completed operation"));
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

/// The catalog entry of `netperf-rr`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const NETPERF_RR: WorkloadInfo = WorkloadInfo {
    name: "netperf-rr",
    mirrors: "netperf -t TCP_RR -r 1,1 -l SECS, N instances in parallel",
    about: "N request/response pairs over TCP loopback (netserver forks a child per test); \
            transactions per second summed over the instances.",
    params: &[
        param("pairs", "1", "count", "parallel netperf instances"),
        param(
            "duration",
            "1s",
            "duration",
            "run time (-l; netperf's default 10s shrunk)",
        ),
        param("request", "1", "bytes", "request size (-r R,_)"),
        param("response", "1", "bytes", "response size (-r _,R)"),
        param(
            "client_work",
            "500ns",
            "duration",
            "netperf user-space work per transaction",
        ),
        param(
            "server_work",
            "500ns",
            "duration",
            "netserver user-space work per transaction",
        ),
    ],
    build: build_netperf,
};

pub(crate) fn build_netperf(a: &mut Args, _topo: &Topology) -> Result<Built, WorkloadError> {
    let pairs = a.int("pairs", 1, MAX_TASKS / 2)?;
    let duration = a.int("duration", 1_000, 3_600_000_000_000)?;
    let request = a.int("request", 1, 1 << 24)?;
    let response = a.int("response", 1, 1 << 24)?;
    let client_work = a.int("client_work", 0, 1_000_000_000)?;
    let server_work = a.int("server_work", 0, 1_000_000_000)?;
    let mut w = Workload::new("netperf-rr");
    let counters: Vec<CounterId> = (0..pairs).map(|i| w.counter(format!("trans{i}"))).collect();
    let p = Pairs {
        n: pairs,
        request: Dist::Const(request),
        response: Dist::Const(response),
        client_work,
        server_work,
        client_comm: "netperf",
        server_comm: "netserver",
        listener_comm: "netserver",
    };
    let cs = counters.clone();
    add_pairs(&mut w, &p, None, move |i| {
        vec![Op::Count {
            counter: cs[i],
            amount: Dist::Const(1),
        }]
    });
    w.duration_ns = Some(duration);
    Ok((
        w,
        Arc::new(NetperfOut {
            counters,
            request,
            response,
        }),
    ))
}

struct NetperfOut {
    counters: Vec<CounterId>,
    request: u64,
    response: u64,
}

impl Report for NetperfOut {
    fn headline(&self) -> (String, Better) {
        ("trans_per_sec".into(), Better::Higher)
    }
    fn duration_based(&self) -> bool {
        true
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let t = secs(sim.now());
        let mut native = String::new();
        let mut total = 0.0;
        let mut min_rate = f64::INFINITY;
        for &c in &self.counters {
            let r = NetperfRrReport {
                send_socket: 16384,
                recv_socket: 131_072,
                request: self.request,
                response: self.response,
                elapsed_s: t,
                trans_per_sec: sim.user_counter(c) / t,
            };
            total += r.trans_per_sec;
            min_rate = min_rate.min(r.trans_per_sec);
            native.push_str(&format_netperf_rr(&r));
        }
        if total == 0.0 {
            return Err(no_samples("netperf-rr", "transaction"));
        }
        let n = self.counters.len() as f64;
        let m = vec![
            metric("trans_per_sec", total, "trans/s", Better::Higher),
            metric(
                "trans_per_sec_per_pair",
                total / n,
                "trans/s",
                Better::Higher,
            ),
            metric(
                "trans_per_sec_min_pair",
                min_rate,
                "trans/s",
                Better::Higher,
            ),
        ];
        Ok((native, m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tbench_mix_matches_the_loadfile_means() {
        let total: u32 = TBENCH_MIX.iter().map(|e| e.1).sum();
        assert_eq!(total, 1000);
        let req = tbench_request().mean();
        let rep = tbench_reply().mean();
        let pay: f64 = TBENCH_MIX
            .iter()
            .map(|e| e.1 as f64 * e.4 as f64)
            .sum::<f64>()
            / 1000.0;
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
