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
//! Unlike the `tbench` model (independent request and reply sizes drawn from the mix), a
//! reply here belongs to its request (a 64 KiB WriteX gets a 55 B reply, a 60 KiB ReadX a
//! 60 KiB one), the operations come in a fixed order, and the payload counted toward MB/sec
//! is the operation's own.

use super::rr::TBENCH_MIX;
use super::{Built, MAX_TASKS};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::spec::Args;
use schedlab_engine::task::{Op, Slot};
use schedlab_engine::{ChannelKind, Dist, TaskSpec, Workload};
use schedlab_topo::Topology;
use std::sync::Arc;

/// The catalog entry of `tbench-loadfile`.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "tbench-loadfile",
    mirrors: "dbench 4.0 tbench NPROCS 127.0.0.1 with tbench_srv, client.txt load file",
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
    let mut w = Workload::new("tbench-loadfile");
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
        Arc::new(super::rr::TbenchOut {
            workload: "tbench-loadfile",
            clients,
            payload,
            lat,
        }),
    ))
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
}
