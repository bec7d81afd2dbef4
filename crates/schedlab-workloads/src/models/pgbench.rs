//! pgbench (PostgreSQL 14+, `src/bin/pgbench/pgbench.c`) against PostgreSQL: pgbench threads
//! are 1:N hubs over their sessions, one backend process per session.
//!
//! ```text
//!   hub_j (pgbench thread) ──query──▶ q_j ──▶ backends of hub j (any idle one takes it)
//!   hub_j ◀── r_j ◀──reply── backends          (one wakeup per ready batch, like poll)
//!   tpcb-like: BEGIN, UPDATE accounts, SELECT, UPDATE tellers,
//!              UPDATE branches (lock branch row k mod scale) , INSERT history,
//!              END (commit: join the WAL writer's list, wake it, wait; unlock the row)
//! ```
//!
//! The hub's poll is a `Recv` on one unix channel that all of its backends reply on, and its
//! queries go out on one channel its backends read: a query is taken by the backend that has
//! waited longest, which in steady state is the one whose reply the hub just handled. Each
//! backend runs whole transactions, so a backend holding a branch row keeps it across its
//! round trips (the lock convoy when clients > scale). Commits use group commit: the WAL
//! writer flushes (a device wait) and then wakes every backend that joined the list.

use super::{ABS, Built, MAX_TASKS, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::{Report, first_abs_time};
use crate::spec::Args;
use schedlab_engine::task::{CounterId, HistId, LockRef, Op};
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{PgbenchReport, format_pgbench};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

/// pgbench's own process id key (its threads share one address space).
const PGBENCH_MM: u32 = 1;

/// The catalog entry of `pgbench`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "pgbench",
    mirrors: "pgbench -c C -j J -T SECS [-S|-N] against PostgreSQL over a Unix socket",
    about: "J pgbench threads (hubs) each poll over C/J sessions; one backend process per \
            session. tpcb-like: 7 round trips per transaction, the branch row (scale rows) \
            locked from its update to commit, commit waits for the WAL writer.",
    params: &[
        param("clients", "1", "count", "client sessions (-c)"),
        param("jobs", "1", "count", "pgbench threads (-j)"),
        param(
            "builtin",
            "tpcb-like",
            "select-only|simple-update|tpcb-like",
            "transaction script (-b; -S = select-only, -N = simple-update)",
        ),
        param(
            "scale",
            "1",
            "count",
            "scale factor: number of branch rows (-s at -i)",
        ),
        param("duration", "1s", "duration", "run time (-T)"),
        param(
            "query_work",
            "15us",
            "duration",
            "backend CPU per statement",
        ),
        param("hub_work", "3us", "duration", "pgbench CPU per statement"),
        param(
            "wal_flush",
            "50us",
            "duration",
            "WAL flush (fsync) device time per commit group",
        ),
    ],
    build,
};

pub(crate) fn build(a: &mut Args, _topo: &Topology) -> Result<Built, WorkloadError> {
    let clients = a.int("clients", 1, MAX_TASKS / 2)?;
    let jobs = a.int("jobs", 1, 10_000)?;
    if jobs > clients {
        return Err(a.err(
            "jobs",
            jobs,
            format!("more pgbench threads than clients ({clients}); pgbench refuses this too"),
        ));
    }
    let builtin = a.choice("builtin")?;
    let scale = a.int("scale", 1, 1_000_000)?;
    let duration = a.int("duration", 1_000, 3_600_000_000_000)?;
    let q = a.int("query_work", 0, 1_000_000_000)?;
    let hub_work = a.int("hub_work", 0, 1_000_000_000)?;
    let wal_flush = a.int("wal_flush", 0, 1_000_000_000)?;

    let mut w = Workload::new("pgbench");
    let txns = w.counter("transactions");
    let conn = w.hist("connections_done");
    let commits = builtin != "select-only";
    let branch_locks = builtin == "tpcb-like";
    let (wal_f, wal_list) = (w.futex(), w.list());
    let branch_base = if branch_locks {
        w.mutexes(scale as usize)
    } else {
        0
    };
    if commits {
        let mut prog = vec![Op::Loop(u64::MAX), Op::FutexWait(wal_f)];
        if wal_flush > 0 {
            prog.push(Op::Sleep(Dist::Const(wal_flush)));
        }
        prog.extend([
            Op::Compute(Dist::Const(2_000)),
            Op::WakeList(wal_list),
            Op::EndLoop,
        ]);
        w.spawn(TaskSpec::new("walwriter", prog));
    }
    let light = Dist::Const(q / 5);
    let stmt = |ch_q: usize, ch_r: usize, work: Dist| {
        vec![
            Op::Recv { ch: ch_q },
            Op::Compute(work),
            Op::Send {
                ch: ch_r,
                bytes: Dist::Const(100),
            },
        ]
    };
    let mut postmaster = Vec::new();
    let mut k = 0u64;
    for j in 0..jobs {
        let sessions = clients / jobs + u64::from(j < clients % jobs);
        let qc = w.channel(ChannelKind::unix(), format!("hub{j}.queries"));
        let rc = w.channel(ChannelKind::unix(), format!("hub{j}.replies"));
        let send_q = |v: &mut Vec<Op>| {
            if hub_work > 0 {
                v.push(Op::Compute(Dist::Const(hub_work)));
            }
            v.push(Op::Send {
                ch: qc,
                bytes: Dist::Const(100),
            });
        };
        let mut hub = vec![Op::Loop(sessions)];
        send_q(&mut hub);
        hub.extend([Op::EndLoop, Op::Loop(u64::MAX), Op::Recv { ch: rc }]);
        send_q(&mut hub);
        hub.push(Op::EndLoop);
        let mut h = TaskSpec::new("pgbench", hub);
        h.mm = Some(PGBENCH_MM);
        w.spawn(h);
        for _ in 0..sessions {
            let mut prog = vec![Op::Loop(u64::MAX)];
            let qw = Dist::Const(q);
            match builtin.as_str() {
                "select-only" => prog.extend(stmt(qc, rc, qw)),
                _ => {
                    let branch = LockRef::Fixed(branch_base + (k % scale) as usize);
                    prog.extend(stmt(qc, rc, light.clone())); // BEGIN
                    prog.extend(stmt(qc, rc, qw.clone())); // UPDATE pgbench_accounts
                    prog.extend(stmt(qc, rc, qw.clone())); // SELECT abalance
                    if branch_locks {
                        prog.extend(stmt(qc, rc, qw.clone())); // UPDATE pgbench_tellers
                        prog.push(Op::Recv { ch: qc }); // UPDATE pgbench_branches
                        prog.push(Op::Lock {
                            lock: branch,
                            spin_ns: 0,
                        });
                        prog.push(Op::Compute(qw.clone()));
                        prog.push(Op::Send {
                            ch: rc,
                            bytes: Dist::Const(100),
                        });
                    }
                    prog.extend(stmt(qc, rc, qw.clone())); // INSERT pgbench_history
                    // END: commit waits for the WAL flush, then releases the row lock.
                    prog.extend([Op::Recv { ch: qc }, Op::Compute(light.clone())]);
                    prog.extend([
                        Op::ListAdd(wal_list),
                        Op::FutexWake { f: wal_f, n: 1 },
                        Op::WaitSelf,
                    ]);
                    if branch_locks {
                        prog.push(Op::Unlock(branch));
                    }
                    prog.push(Op::Send {
                        ch: rc,
                        bytes: Dist::Const(100),
                    });
                }
            }
            prog.extend([
                Op::Count {
                    counter: txns,
                    amount: Dist::Const(1),
                },
                Op::EndLoop,
            ]);
            let id = w.spec(TaskSpec::new("postgres", prog));
            postmaster.push(Op::Fork(id));
            k += 1;
        }
    }
    postmaster.push(Op::RecordSince {
        hist: conn,
        slot: ABS,
    });
    w.spawn(TaskSpec::new("postmaster", postmaster));
    w.duration_ns = Some(duration);
    let transaction_type = match builtin.as_str() {
        "select-only" => "<builtin: select only>",
        "simple-update" => "<builtin: simple update>",
        _ => "<builtin: TPC-B (sort of)>",
    };
    Ok((
        w,
        Arc::new(PgbenchOut {
            clients,
            jobs,
            scale,
            duration,
            txns,
            conn,
            transaction_type,
        }),
    ))
}

/// The pgbench client's report (tps, latency, initial connection time), shared by both
/// pgbench models.
pub(crate) struct PgbenchOut {
    pub(crate) clients: u64,
    pub(crate) jobs: u64,
    pub(crate) scale: u64,
    pub(crate) duration: u64,
    pub(crate) txns: CounterId,
    pub(crate) conn: HistId,
    pub(crate) transaction_type: &'static str,
}

impl Report for PgbenchOut {
    fn headline(&self) -> (String, Better) {
        ("tps".into(), Better::Higher)
    }
    fn duration_based(&self) -> bool {
        true
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let n = sim.user_counter(self.txns);
        let t = secs(sim.now());
        let conn_s = first_abs_time(sim.user_hist(self.conn)).map_or(0.0, secs);
        let tps = if t > conn_s { n / (t - conn_s) } else { 0.0 };
        let r = PgbenchReport {
            transaction_type: self.transaction_type.into(),
            scale: self.scale,
            clients: self.clients,
            threads: self.jobs,
            duration_s: (self.duration as f64 / 1e9).round() as u64,
            transactions: n as u64,
            // pgbench without per-transaction logging: duration × clients / transactions.
            latency_avg_ms: if n > 0.0 {
                1000.0 * t * self.clients as f64 / n
            } else {
                0.0
            },
            initial_connection_ms: conn_s * 1e3,
            tps,
        };
        Ok((format_pgbench(&r), r.metrics()))
    }
}
