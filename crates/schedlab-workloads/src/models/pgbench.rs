//! pgbench against PostgreSQL 9.6-16, built like the server: a backend process per
//! connection; LWLocks (ProcArrayLock, the WAL insert locks, buffer mapping partitions,
//! buffer content locks) whose release wakes waiters through their semaphores; row locks
//! as PostgreSQL takes them (tuple lock, then a wait on the updater's transaction); the WAL
//! group flush; the background writer, WAL writer and checkpointer; and the pgbench side as
//! `-j` threads each multiplexing its clients. Documented in `docs/workloads/pgbench.md`.
//!
//! ```text
//!   pgbench thread j ──query──▶ q_j ──▶ backends of j      (poll over its sessions: 1:N hub)
//!                    ◀── r_j ◀──reply──
//!   backend: per statement: snapshot (ProcArrayLock S) · buffer lookups (partition S, X on
//!            a miss) · UPDATE: tuple lock → wait for the row's updater (xid) → content lock X
//!            → WAL insert lock X; END: commit record, group flush, ProcArrayLock X,
//!            release row locks (wakes the next updater)
//!   WAL flush leader: woken by committers, write + fsync, wakes every committer of the group
//!   bgwriter (bgwriter_delay), walwriter (wal_writer_delay), checkpointer (checkpoint_timeout)
//! ```

use super::{ABS, Built, MAX_TASKS, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::{Report, first_abs_time};
use crate::spec::Args;
use schedlab_engine::rng::splitmix64;
use schedlab_engine::rwlock::RwWake;
use schedlab_engine::task::{CounterId, HistId, LockRef, MutexId, Op, RwLockId};
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{PgbenchReport, format_pgbench};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

/// pgbench's own process id key (its threads share one address space).
const PGBENCH_MM: u32 = 1;
/// NUM_BUFFER_PARTITIONS (9.5+).
const BUFFER_PARTITIONS: u64 = 128;
/// NUM_XLOGINSERT_LOCKS (9.4+).
const WAL_INSERT_LOCKS: u64 = 8;
/// Database size per scale unit: 100,000 accounts of ~120 B plus indexes, ~15 MiB.
const BYTES_PER_SCALE: u64 = 15 << 20;
/// Transactions unrolled in a backend's program (the rows they touch differ).
const VARIANTS: u64 = 4;

/// The catalog entry of `pgbench`.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "pgbench",
    mirrors: "pgbench -c C -j J -T SECS [-S|-N] -s SCALE against PostgreSQL 9.6-16",
    follows: "pgbench of PostgreSQL 14+ (-j threads polling their sessions) against PostgreSQL 9.6-16 (postgres=)",
    reconstructed: "statement CPU, hold times, fsync time, the page-cache read of a miss and the leader's part of the WAL flush as one task; locks, processes and wake rules are read from the server",
    about: "J pgbench threads each poll over C/J sessions; a backend process per session runs \
            the script's statements taking LWLocks (ProcArrayLock, WAL insert locks, buffer \
            partitions and content locks; release wakes shared waiters or one exclusive), row \
            locks as tuple lock + transaction wait, and the WAL group flush; bgwriter, \
            walwriter and checkpointer run on their timers.",
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
            "scale factor (-s at -i): branch rows; 10 tellers and 100,000 accounts each",
        ),
        param("duration", "1s", "duration", "run time (-T)"),
        param(
            "postgres",
            "16",
            "9.6|10|11|12|13|14|15|16",
            "server version: before 14 GetSnapshotData scans every backend under \
             ProcArrayLock",
        ),
        param(
            "shared_buffers",
            "128M",
            "bytes",
            "shared_buffers: a page outside it is read in under an exclusive partition lock",
        ),
        param(
            "synchronous_commit",
            "on",
            "bool",
            "commits wait for the WAL flush (off: the walwriter flushes, woken by commits)",
        ),
        param(
            "query_work",
            "15us",
            "duration",
            "backend CPU per statement (BEGIN/END: a fifth)",
        ),
        param("hub_work", "3us", "duration", "pgbench CPU per statement"),
        param(
            "wal_fsync",
            "50us",
            "duration",
            "WAL fsync device time per flush",
        ),
        param("bgwriter_delay", "200ms", "duration", "bgwriter_delay"),
        param("wal_writer_delay", "200ms", "duration", "wal_writer_delay"),
        param("checkpoint_timeout", "5m", "duration", "checkpoint_timeout"),
    ],
    build,
};

struct Locks {
    proc_array: RwLockId,
    wal_insert: RwLockId,
    partitions: RwLockId,
    branch_page: RwLockId,
    teller_page: RwLockId,
    /// Per row: the tuple lock (heavyweight, FIFO grant) and the updater's transaction
    /// lock (held by the updating backend to its commit).
    branch_tuple: MutexId,
    branch_xid: MutexId,
    teller_tuple: MutexId,
    teller_xid: MutexId,
}

struct Backend<'a> {
    l: &'a Locks,
    snapshot_ns: u64,
    miss_share: u64,
    qw: u64,
    scale: u64,
    wal_lock: RwLockId,
    sync_commit: bool,
    flush_wake: usize,
    flush_list: usize,
    walwriter_wake: usize,
    key: u64,
}

impl Backend<'_> {
    fn next(&mut self) -> u64 {
        self.key = splitmix64(self.key);
        self.key
    }
    fn lw(v: &mut Vec<Op>, l: RwLockId, exclusive: bool, hold: u64) {
        v.extend([
            Op::RwLock {
                lock: l,
                exclusive,
                spin_ns: 0,
            },
            Op::Compute(Dist::Const(hold.max(1))),
            Op::RwUnlock(l),
        ]);
    }
    /// GetSnapshotData (READ COMMITTED: one per statement).
    fn snapshot(&self, v: &mut Vec<Op>) {
        Self::lw(v, self.l.proc_array, false, self.snapshot_ns);
    }
    /// ReadBuffer of one page: the partition lock S for the lookup, X to insert a page that
    /// was not in shared_buffers (then a read from the kernel's page cache).
    fn page(&mut self, v: &mut Vec<Op>) {
        let r = self.next();
        let part = self.l.partitions + (r % BUFFER_PARTITIONS) as usize;
        let miss = (r >> 32) % 1000 < self.miss_share;
        Self::lw(v, part, miss, if miss { 1_500 } else { 300 });
        if miss {
            v.push(Op::Compute(Dist::Const(8_000)));
        }
    }
    fn wal_insert(&self, v: &mut Vec<Op>) {
        Self::lw(v, self.wal_lock, true, 500);
    }
    /// UPDATE of a contended row (a teller or a branch): heap_update's tuple lock, the wait
    /// for the transaction that updated it last, then the page's content lock.
    fn update_row(&self, v: &mut Vec<Op>, tuple: MutexId, xid: MutexId, page: RwLockId) {
        v.extend([
            Op::Lock {
                lock: LockRef::Fixed(tuple),
                spin_ns: 0,
            },
            Op::Lock {
                lock: LockRef::Fixed(xid),
                spin_ns: 0,
            },
            Op::Unlock(LockRef::Fixed(tuple)),
        ]);
        Self::lw(v, page, true, 2_000);
        self.wal_insert(v);
    }
    /// One transaction of the script, statements after their queries were read.
    fn transaction(&mut self, builtin: &str, recv: &Op, reply: &Op) -> Vec<Op> {
        let mut v = Vec::new();
        let stmt = |v: &mut Vec<Op>, work: u64| {
            v.push(recv.clone());
            v.push(Op::Compute(Dist::Const(work.max(1))));
        };
        let qw = self.qw;
        if builtin == "select-only" {
            stmt(&mut v, qw / 2);
            self.snapshot(&mut v);
            self.page(&mut v);
            self.page(&mut v);
            v.push(Op::Compute(Dist::Const(qw / 2 + 1)));
            v.push(reply.clone());
            return v;
        }
        let mut held = Vec::new();
        stmt(&mut v, qw / 5); // BEGIN
        v.push(reply.clone());
        // UPDATE pgbench_accounts, SELECT abalance (rows spread: no row waits).
        for update in [true, false] {
            stmt(&mut v, qw / 2);
            self.snapshot(&mut v);
            self.page(&mut v);
            self.page(&mut v);
            if update {
                self.wal_insert(&mut v);
            }
            v.push(Op::Compute(Dist::Const(qw / 2 + 1)));
            v.push(reply.clone());
        }
        if builtin == "tpcb-like" {
            let teller = (self.next() % (10 * self.scale)) as usize;
            let branch = (self.next() % self.scale) as usize;
            for (tuple, xid, page) in [
                (
                    self.l.teller_tuple + teller,
                    self.l.teller_xid + teller,
                    self.l.teller_page,
                ),
                (
                    self.l.branch_tuple + branch,
                    self.l.branch_xid + branch,
                    self.l.branch_page,
                ),
            ] {
                stmt(&mut v, qw / 2);
                self.snapshot(&mut v);
                self.update_row(&mut v, tuple, xid, page);
                held.push(xid);
                v.push(Op::Compute(Dist::Const(qw / 2 + 1)));
                v.push(reply.clone());
            }
        }
        // INSERT pgbench_history.
        stmt(&mut v, qw / 2);
        self.snapshot(&mut v);
        self.page(&mut v);
        self.wal_insert(&mut v);
        v.push(Op::Compute(Dist::Const(qw / 2 + 1)));
        v.push(reply.clone());
        // END: the commit record, the flush (or a walwriter wakeup), ProcArrayEndTransaction,
        // then the release of the transaction lock wakes the backend waiting for our rows.
        stmt(&mut v, qw / 5);
        self.wal_insert(&mut v);
        if self.sync_commit {
            v.extend([
                Op::ListAdd(self.flush_list),
                Op::FutexWake {
                    f: self.flush_wake,
                    n: 1,
                },
                Op::WaitSelf,
            ]);
        } else {
            v.push(Op::FutexWake {
                f: self.walwriter_wake,
                n: 1,
            });
        }
        Self::lw(&mut v, self.l.proc_array, true, 500);
        for xid in held {
            v.push(Op::Unlock(LockRef::Fixed(xid)));
        }
        v.push(reply.clone());
        v
    }
}

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
    let scale = a.int("scale", 1, 100_000)?;
    let duration = a.int("duration", 1_000, 3_600_000_000_000)?;
    let version: u32 = a
        .choice("postgres")?
        .parse::<f64>()
        .map_or(16, |v| v as u32);
    let shared_buffers = a.int("shared_buffers", 1 << 20, 1 << 50)?;
    let sync_commit = a.flag("synchronous_commit")?;
    let qw = a.int("query_work", 0, 1_000_000_000)?;
    let hub_work = a.int("hub_work", 0, 1_000_000_000)?;
    let wal_fsync = a.int("wal_fsync", 0, 1_000_000_000)?;
    let bgwriter_delay = a.int("bgwriter_delay", 10_000_000, 10_000_000_000)?;
    let walwriter_delay = a.int("wal_writer_delay", 1_000_000, 10_000_000_000)?;
    let checkpoint_timeout = a.int("checkpoint_timeout", 30_000_000_000, 86_400_000_000_000)?;

    let mut w = Workload::new("pgbench");
    let txns = w.counter("transactions");
    let conn = w.hist("connections_done");
    let lw = |w: &mut Workload| w.rwlock(RwWake::LwLock);
    let wal_insert = lw(&mut w);
    for _ in 1..WAL_INSERT_LOCKS {
        lw(&mut w);
    }
    let partitions = lw(&mut w);
    for _ in 1..BUFFER_PARTITIONS {
        lw(&mut w);
    }
    let l = Locks {
        proc_array: lw(&mut w),
        wal_insert,
        partitions,
        branch_page: lw(&mut w),
        teller_page: lw(&mut w),
        branch_tuple: w.mutexes(scale as usize),
        branch_xid: w.mutexes(scale as usize),
        teller_tuple: w.mutexes(10 * scale as usize),
        teller_xid: w.mutexes(10 * scale as usize),
    };
    // Before 14, GetSnapshotData walks every backend's PGPROC/PGXACT under the lock; 14's
    // snapshot scalability work (Andres Freund) made it independent of the backend count.
    let snapshot_ns = if version < 14 {
        400 + 25 * clients
    } else {
        400
    };
    let db = BYTES_PER_SCALE * scale;
    let miss_share = if db > shared_buffers {
        1000 * (db - shared_buffers) / db
    } else {
        0
    };
    let (flush_wake, flush_list, walwriter_wake) = (w.futex(), w.list(), w.futex());
    let mut postmaster = Vec::new();
    let mut k = 0u64;
    for j in 0..jobs {
        let sessions = clients / jobs + u64::from(j < clients % jobs);
        let qc = w.channel(ChannelKind::unix(), format!("thread{j}.queries"));
        let rc = w.channel(ChannelKind::unix(), format!("thread{j}.replies"));
        let send_q = |v: &mut Vec<Op>| {
            if hub_work > 0 {
                v.push(Op::Compute(Dist::Const(hub_work)));
            }
            v.push(Op::Send {
                ch: qc,
                bytes: Dist::Const(100),
            });
        };
        // pgbench's threadRun: start every session's first command, then wait in poll for
        // any socket and answer each ready session with its next command.
        let mut hub = vec![Op::Loop(sessions)];
        send_q(&mut hub);
        hub.extend([Op::EndLoop, Op::Loop(u64::MAX), Op::Recv { ch: rc }]);
        send_q(&mut hub);
        hub.push(Op::EndLoop);
        let mut h = TaskSpec::new("pgbench", hub);
        h.mm = Some(PGBENCH_MM);
        w.spawn(h);
        let (recv, reply) = (
            Op::Recv { ch: qc },
            Op::Send {
                ch: rc,
                bytes: Dist::Const(100),
            },
        );
        for _ in 0..sessions {
            let mut b = Backend {
                l: &l,
                snapshot_ns,
                miss_share,
                qw,
                scale,
                // XLogInsert starts at MyProc->pgprocno % NUM_XLOGINSERT_LOCKS.
                wal_lock: l.wal_insert + (k % WAL_INSERT_LOCKS) as usize,
                sync_commit,
                flush_wake,
                flush_list,
                walwriter_wake,
                key: splitmix64(k ^ 0x9e37_79b9),
            };
            let mut prog = vec![Op::Loop(u64::MAX)];
            for _ in 0..VARIANTS {
                prog.extend(b.transaction(&builtin, &recv, &reply));
                prog.push(Op::Count {
                    counter: txns,
                    amount: Dist::Const(1),
                });
            }
            prog.push(Op::EndLoop);
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
    let aux = |comm: &str, prog: Vec<Op>| TaskSpec::new(comm, prog);
    if builtin != "select-only" {
        // XLogFlush: the backend that gets WALWriteLock writes and fsyncs for everyone
        // whose record is in; on release every LW_WAIT_UNTIL_FREE waiter wakes and finds
        // itself flushed. Its part runs here as one task woken by the committers.
        let mut leader = vec![
            Op::Loop(u64::MAX),
            Op::FutexWait(flush_wake),
            Op::Compute(Dist::Const(4_000)),
        ];
        if wal_fsync > 0 {
            leader.push(Op::Sleep(Dist::Const(wal_fsync)));
        }
        leader.extend([Op::WakeList(flush_list), Op::EndLoop]);
        w.spawn(aux("postgres", leader));
    }
    // The walwriter: every wal_writer_delay, or when an asynchronous commit sets its latch.
    let mut walwriter = vec![Op::Loop(u64::MAX)];
    if sync_commit {
        walwriter.push(Op::Sleep(Dist::Const(walwriter_delay)));
    } else {
        walwriter.push(Op::FutexWait(walwriter_wake));
    }
    walwriter.push(Op::Compute(Dist::Const(3_000)));
    if !sync_commit && wal_fsync > 0 {
        walwriter.push(Op::Sleep(Dist::Const(wal_fsync)));
    }
    walwriter.push(Op::EndLoop);
    w.spawn(aux("walwriter", walwriter));
    // bgwriter: up to bgwriter_lru_maxpages (100) buffers a round; checkpointer: its timeout.
    for (comm, every, work) in [
        ("bgwriter", bgwriter_delay, 100 * 5_000),
        ("checkpointer", checkpoint_timeout, 2_000_000),
    ] {
        w.spawn(aux(
            comm,
            vec![
                Op::Loop(u64::MAX),
                Op::Sleep(Dist::Const(every)),
                Op::Compute(Dist::Const(work)),
                Op::EndLoop,
            ],
        ));
    }
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

/// The pgbench client's report (tps, latency, initial connection time).
struct PgbenchOut {
    clients: u64,
    jobs: u64,
    scale: u64,
    duration: u64,
    txns: CounterId,
    conn: HistId,
    transaction_type: &'static str,
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
