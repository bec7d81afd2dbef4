//! sysbench OLTP read/write against MySQL/MariaDB (sysbench 1.0 `oltp_read_write`).
//!
//! ```text
//!   pool = 0 (thread per connection):  client_i ⇄ server thread_i   (1:1 pairs over unix sockets)
//!   pool = P:                           clients ──▶ Q ──▶ P pool threads ──▶ R ──▶ clients
//!   client: loop { stamp; 20 × (compute; send query; recv result); record latency; count }
//! ```
//!
//! The accept thread creates a server thread per connection (fork placement); with a pool,
//! the P threads take queries from one shared queue and answer on one shared reply channel,
//! read by whichever client has waited longest (every waiting client has exactly one query
//! outstanding, so the counts and the wake graph match).

use super::{Built, MAX_TASKS, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::{Report, no_samples};
use crate::spec::Args;
use schedlab_engine::task::{CounterId, HistId, Op, Slot};
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{SysbenchReport, format_sysbench};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

/// Queries per transaction: 14 reads, 4 writes, 2 other (BEGIN/COMMIT).
pub(crate) const QUERIES: u64 = 20;
const SYSBENCH_MM: u32 = 1;
const MYSQLD_MM: u32 = 2;

/// The catalog entry of `sysbench-oltp`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "sysbench-oltp",
    mirrors: "sysbench oltp_read_write --threads=T --time=SECS against MySQL/MariaDB",
    about: "T client threads, each with one connection, 20 queries per transaction \
            (14 reads, 4 writes, 2 other). pool=0: one server thread per connection; \
            pool=P: a pool of P server threads serves all connections.",
    params: &[
        param("threads", "1", "count", "client threads (--threads)"),
        param(
            "pool",
            "0",
            "count",
            "server thread pool size (0 = one thread per connection)",
        ),
        param(
            "duration",
            "1s",
            "duration",
            "run time (--time; sysbench's default 10s shrunk)",
        ),
        param("query_work", "30us", "duration", "server CPU per query"),
        param("client_work", "5us", "duration", "client CPU per query"),
    ],
    build,
};

pub(crate) fn build(a: &mut Args, _topo: &Topology) -> Result<Built, WorkloadError> {
    let threads = a.int("threads", 1, MAX_TASKS / 2)?;
    let pool = a.int("pool", 0, MAX_TASKS / 2)?;
    let duration = a.int("duration", 1_000, 3_600_000_000_000)?;
    let q = a.int("query_work", 0, 1_000_000_000)?;
    let cw = a.int("client_work", 0, 1_000_000_000)?;
    let mut w = Workload::new("sysbench-oltp");
    let txns = w.counter("transactions");
    let lat = w.hist("transaction_latency");
    let client = |qc: usize, rc: usize| {
        let mut c = vec![
            Op::Loop(u64::MAX),
            Op::Stamp(Slot::Task(0)),
            Op::Loop(QUERIES),
        ];
        if cw > 0 {
            c.push(Op::Compute(Dist::Const(cw)));
        }
        c.extend([
            Op::Send {
                ch: qc,
                bytes: Dist::Const(200),
            },
            Op::Recv { ch: rc },
            Op::EndLoop,
            Op::RecordSince {
                hist: lat,
                slot: Slot::Task(0),
            },
            Op::Count {
                counter: txns,
                amount: Dist::Const(1),
            },
            Op::EndLoop,
        ]);
        let mut t = TaskSpec::new("sysbench", c);
        t.mm = Some(SYSBENCH_MM);
        t
    };
    let server = |qc: usize, rc: usize| {
        let mut t = TaskSpec::new(
            "mysqld",
            vec![
                Op::Loop(u64::MAX),
                Op::Recv { ch: qc },
                Op::Compute(Dist::Const(q)),
                Op::Send {
                    ch: rc,
                    bytes: Dist::Const(300),
                },
                Op::EndLoop,
            ],
        );
        t.mm = Some(MYSQLD_MM);
        t
    };
    if pool == 0 || pool >= threads {
        let listen = w.channel(ChannelKind::unix(), "listen");
        let mut accept = Vec::new();
        for i in 0..threads {
            let qc = w.channel(ChannelKind::unix(), format!("conn{i}.query"));
            let rc = w.channel(ChannelKind::unix(), format!("conn{i}.result"));
            let mut c = client(qc, rc);
            let mut prog = vec![Op::Send {
                ch: listen,
                bytes: Dist::Const(60),
            }];
            prog.extend(c.program.iter().cloned());
            c.program = prog.into();
            w.spawn(c);
            let s = w.spec(server(qc, rc));
            accept.extend([Op::Recv { ch: listen }, Op::Fork(s)]);
        }
        let mut acc = TaskSpec::new("mysqld", accept);
        acc.mm = Some(MYSQLD_MM);
        w.spawn(acc);
    } else {
        let qc = w.channel(ChannelKind::unix(), "pool.queries");
        let rc = w.channel(ChannelKind::unix(), "pool.results");
        for _ in 0..pool {
            w.spawn(server(qc, rc));
        }
        for _ in 0..threads {
            w.spawn(client(qc, rc));
        }
    }
    w.duration_ns = Some(duration);
    Ok((w, Arc::new(SysbenchOut { txns, lat })))
}

struct SysbenchOut {
    txns: CounterId,
    lat: HistId,
}

impl Report for SysbenchOut {
    fn headline(&self) -> (String, Better) {
        ("transactions_per_sec".into(), Better::Higher)
    }
    fn duration_based(&self) -> bool {
        true
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let n = sim.user_counter(self.txns) as u64;
        let h = sim.user_hist(self.lat);
        if n == 0 || h.is_empty() {
            return Err(no_samples("sysbench-oltp", "completed transaction"));
        }
        let r = SysbenchReport {
            reads: n * 14,
            writes: n * 4,
            other: n * 2,
            transactions: n,
            transactions_per_sec: n as f64 / secs(sim.now()),
            latency_avg_ms: h.mean() / 1e6,
            latency_p95_ms: h.median_equivalent(h.value_at_quantile(0.95)) as f64 / 1e6,
        };
        Ok((format_sysbench(&r), r.metrics()))
    }
}
