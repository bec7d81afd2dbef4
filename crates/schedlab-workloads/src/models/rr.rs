//! Request/response pairs over TCP loopback: netperf 2.x TCP_RR (tbench, whose pairs replay
//! a load file, has its own module).
//!
//! ```text
//!   client_i ──connect──▶ netserver ──fork (WF_FORK)──▶ server_i
//!   client_i: loop { compute(c_client); send(req_i, request); recv(resp_i); count }
//!   server_i: loop { recv(req_i); compute(c_server); send(resp_i, reply) }
//! ```
//!
//! Delivery (softirq) is charged to the sender's CPU and wakes the reader with WF_SYNC, as
//! the engine's `ChannelKind::tcp()` does. netserver forks one server per accepted
//! connection, so servers get the fork placement near the listener.

use super::{Built, MAX_TASKS, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::{Report, metric, no_samples};
use crate::spec::Args;
use schedlab_engine::task::{CounterId, Op};
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{NetperfRrReport, format_netperf_rr};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

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
fn add_pairs(w: &mut Workload, p: &Pairs, per_op: impl Fn(usize) -> Vec<Op>) {
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
        if p.client_work > 0 {
            c.push(Op::Compute(Dist::Const(p.client_work)));
        }
        c.push(Op::Send {
            ch: req,
            bytes: p.request.clone(),
        });
        c.push(Op::Recv { ch: resp });
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

/// The catalog entry of `netperf-rr`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const NETPERF_RR: WorkloadInfo = WorkloadInfo {
    name: "netperf-rr",
    mirrors: "netperf -t TCP_RR -r 1,1 -l SECS, N instances in parallel",
    follows: "netperf 2.x -t TCP_RR (netserver forks a child per test)",
    reconstructed: "the per-transaction user-space work (client_work, server_work)",
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
    add_pairs(&mut w, &p, move |i| {
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
