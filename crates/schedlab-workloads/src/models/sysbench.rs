//! sysbench 1.0 `oltp_read_write` against MySQL with InnoDB, built like the server: a thread
//! per connection (or the thread pool), the transaction's statements with their CPU work,
//! InnoDB's latches and mutexes (spin, then sleep; release wakes every waiter), the redo log
//! group commit and the background threads. Documented in `docs/workloads/sysbench.md`.
//!
//! ```text
//!   sysbench thread_i ──query──▶ mysqld connection thread_i (one-thread-per-connection)
//!                     ◀─result──
//!   connection thread: BEGIN · 10 point selects · 4 range selects · 2 updates · delete ·
//!                      insert · COMMIT; each: leaf page latch S/X (spin, sleep, wake-all),
//!                      trx_sys / lock_sys / (5.7) log_sys mutexes; COMMIT waits for redo
//!   5.7 redo:  committers ──▶ log flush leader ──fsync──▶ wake all committers of the group
//!   8.0 redo:  committers ──▶ log_writer ──▶ log_flusher ──fsync──▶ log_flush_notifier ──▶ all
//!   purge coordinator ──▶ purge workers (batch, barrier) · page cleaner, master thread (1 s)
//! ```

use super::{Built, MAX_TASKS, secs};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::{Report, no_samples};
use crate::spec::Args;
use schedlab_engine::rng::splitmix64;
use schedlab_engine::rwlock::RwWake;
use schedlab_engine::task::{CounterId, HistId, Op, RwLockId, Slot};
use schedlab_engine::{ChannelKind, Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{SysbenchReport, format_sysbench};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use std::sync::Arc;

const SYSBENCH_MM: u32 = 1;
const MYSQLD_MM: u32 = 2;
/// Rows of `sbtest` per 16 KiB leaf page (id, k, c CHAR(120), pad CHAR(60): ~190 B a row,
/// pages filled 15/16) [M].
const ROWS_PER_PAGE: u64 = 75;
/// Transactions unrolled in a connection's program (the leaf pages differ between them).
const VARIANTS: u64 = 3;

/// The catalog entry of `sysbench`.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "sysbench",
    mirrors: "sysbench oltp_read_write --threads=T --time=SECS against MySQL 5.7/8.0 with InnoDB",
    follows: "sysbench 1.0 oltp_read_write against MySQL 5.7 or 8.0 (mysql=) with InnoDB",
    reconstructed: "statement CPU weights, hold times, leaf choice, purge cadence, fsync time and the 5.7 flush leader as one task; threads, latches and wake rules are read from the server",
    about: "T sysbench threads, one connection each; mysqld runs a thread per connection (or \
            the thread pool) through the 20 statements of oltp_read_write, taking InnoDB leaf \
            page latches and the trx_sys/lock_sys (and 5.7 log_sys) mutexes with spin-then-\
            wait and wake-all release; COMMIT waits for the redo group flush; purge, page \
            cleaner and master threads run beside.",
    params: &[
        param("threads", "1", "count", "client threads (--threads)"),
        param(
            "duration",
            "1s",
            "duration",
            "run time (--time; sysbench's default 10s shrunk)",
        ),
        param(
            "mysql",
            "8.0",
            "5.7|8.0",
            "server shape: 5.7 (log_sys mutex per mini-transaction, leader flush) or 8.0 \
             (lock-free redo buffer, log writer/flusher/notifier threads, sharded lock_sys)",
        ),
        param(
            "thread_handling",
            "one-thread-per-connection",
            "one-thread-per-connection|pool",
            "mysqld thread_handling (pool: the thread pool plugin)",
        ),
        param(
            "thread_pool_size",
            "auto",
            "count",
            "thread groups of the pool (default: the number of CPUs)",
        ),
        param(
            "thread_pool_oversubscribe",
            "3",
            "count",
            "extra active threads a pool group may run",
        ),
        param(
            "table_size",
            "10000",
            "count",
            "rows per table (--table-size)",
        ),
        param("point_selects", "10", "count", "--point-selects"),
        param(
            "range_selects",
            "4",
            "count",
            "--simple-ranges + sum, order, distinct",
        ),
        param("index_updates", "1", "count", "--index-updates"),
        param("non_index_updates", "1", "count", "--non-index-updates"),
        param("delete_inserts", "1", "count", "--delete-inserts"),
        param(
            "range_size",
            "100",
            "count",
            "rows per range select (--range-size)",
        ),
        param(
            "spin_loops",
            "30",
            "count",
            "innodb_sync_spin_loops: spin rounds before a latch waiter sleeps",
        ),
        param(
            "spin_wait_delay",
            "6",
            "count",
            "innodb_spin_wait_delay: a round's random delay is up to this many ut_delay units",
        ),
        param(
            "pause",
            "5ns",
            "duration",
            "one PAUSE of ut_delay (50 per unit; ~140 cycles on Skylake, ~10 before)",
        ),
        param(
            "purge_threads",
            "4",
            "count",
            "innodb_purge_threads (coordinator included)",
        ),
        param(
            "purge_batch_size",
            "300",
            "count",
            "innodb_purge_batch_size: undo records per purge batch",
        ),
        param(
            "log_fsync",
            "50us",
            "duration",
            "redo fsync device time (innodb_flush_log_at_trx_commit=1)",
        ),
        param(
            "stmt_work",
            "15us",
            "duration",
            "mysqld CPU of a point select (other statements scale from it)",
        ),
        param(
            "client_work",
            "5us",
            "duration",
            "sysbench (Lua) CPU per statement",
        ),
    ],
    build,
};

/// One statement of the transaction: its kind, CPU in units of a point select, and reply
/// bytes. Weights are a reconstruction \[M\]: a range of 100 rows reads ~2 leaf pages and
/// sends ~19 KB.
#[derive(Clone, Copy, PartialEq)]
enum Stmt {
    Begin,
    Point,
    Range,
    Update,
    Delete,
    Insert,
    Commit,
}

impl Stmt {
    fn work_units(self, range_size: u64) -> f64 {
        match self {
            Stmt::Begin => 0.3,
            Stmt::Point => 1.0,
            Stmt::Range => 1.0 + range_size as f64 * 0.02,
            Stmt::Update | Stmt::Delete | Stmt::Insert => 1.6,
            Stmt::Commit => 0.6,
        }
    }
    fn reply_bytes(self, range_size: u64) -> u64 {
        match self {
            Stmt::Point => 250,
            Stmt::Range => 60 + 190 * range_size,
            _ => 11,
        }
    }
    fn writes(self) -> bool {
        matches!(self, Stmt::Update | Stmt::Delete | Stmt::Insert)
    }
}

struct Server {
    v8: bool,
    spin: u64,
    threads: u64,
    leaves: u64,
    leaf_base: RwLockId,
    trx_sys: RwLockId,
    lock_sys: RwLockId,
    log_sys: RwLockId,
    commit_list: usize,
    log_wake: usize,
    purge_wake: usize,
    work: u64,
    range_size: u64,
    purge_every: u64,
}

impl Server {
    fn lock(&self, v: &mut Vec<Op>, l: RwLockId, exclusive: bool) {
        v.push(Op::RwLock {
            lock: l,
            exclusive,
            spin_ns: self.spin,
        });
    }
    fn held(&self, v: &mut Vec<Op>, l: RwLockId, ns: u64) {
        self.lock(v, l, true);
        v.push(Op::Compute(Dist::Const(ns.max(1))));
        v.push(Op::RwUnlock(l));
    }

    /// The server side of one statement, after its query was read; `first_read` opens the
    /// transaction's read view.
    fn statement(&self, v: &mut Vec<Op>, s: Stmt, key: &mut u64, first_read: bool) {
        let work = (self.work as f64 * s.work_units(self.range_size)) as u64;
        match s {
            Stmt::Begin => v.push(Op::Compute(Dist::Const(work.max(1)))),
            Stmt::Commit => {
                // trx_commit: serialisation and removal from the rw list under trx_sys.
                v.push(Op::Compute(Dist::Const(work / 2 + 1)));
                self.held(v, self.trx_sys, 600 + 20 * self.threads);
                if !self.v8 {
                    // Row locks released under lock_sys->mutex (sharded from 8.0.21).
                    self.held(v, self.lock_sys, 800);
                }
                // innodb_flush_log_at_trx_commit=1: wait until the group's flush covers us.
                v.extend([
                    Op::ListAdd(self.commit_list),
                    Op::FutexWake {
                        f: self.log_wake,
                        n: 1,
                    },
                    Op::WaitSelf,
                ]);
                v.push(Op::Compute(Dist::Const(work / 2 + 1)));
            }
            _ => {
                // B-tree descent to the leaf: S for reads, X for modifications.
                *key = splitmix64(*key);
                let leaf = self.leaf_base + (*key % self.leaves) as usize;
                if s == Stmt::Point || s == Stmt::Range {
                    if first_read {
                        // The first consistent read opens the read view (MVCC::view_open
                        // under trx_sys->mutex, copying the ids of the active transactions).
                        self.held(v, self.trx_sys, 300 + 30 * self.threads);
                    }
                    v.push(Op::Compute(Dist::Const(work / 3 + 1)));
                    self.lock(v, leaf, false);
                    v.push(Op::Compute(Dist::Const(work - work / 3)));
                    v.push(Op::RwUnlock(leaf));
                } else {
                    v.push(Op::Compute(Dist::Const(work / 2 + 1)));
                    self.lock(v, leaf, true);
                    if !self.v8 {
                        self.held(v, self.lock_sys, 400);
                    }
                    v.push(Op::Compute(Dist::Const(work / 2)));
                    if !self.v8 {
                        // mtr_commit copies the redo records under log_sys->mutex.
                        self.held(v, self.log_sys, 300);
                    }
                    v.push(Op::RwUnlock(leaf));
                }
            }
        }
    }
}

pub(crate) fn build(a: &mut Args, topo: &Topology) -> Result<Built, WorkloadError> {
    let threads = a.int("threads", 1, MAX_TASKS / 3)?;
    let duration = a.int("duration", 1_000, 3_600_000_000_000)?;
    let v8 = a.choice("mysql")? == "8.0";
    let pool = a.choice("thread_handling")? == "pool";
    let groups = match a.int_in("thread_pool_size", 1, 100_000)? {
        Some(n) => n,
        None => {
            let n = topo.nr_cpus() as u64;
            a.resolve("thread_pool_size", n);
            n
        }
    };
    let oversub = a.int("thread_pool_oversubscribe", 0, 1000)?;
    let table_size = a.int("table_size", 1, 1_000_000_000)?;
    let points = a.int("point_selects", 0, 1000)?;
    let ranges = a.int("range_selects", 0, 1000)?;
    let idx_up = a.int("index_updates", 0, 1000)?;
    let nidx_up = a.int("non_index_updates", 0, 1000)?;
    let del_ins = a.int("delete_inserts", 0, 1000)?;
    let range_size = a.int("range_size", 1, 1_000_000)?;
    let spin_loops = a.int("spin_loops", 0, 1_000_000)?;
    let spin_delay = a.int("spin_wait_delay", 0, 1_000_000)?;
    let pause = a.int("pause", 0, 1_000_000)?;
    let purge_threads = a.int("purge_threads", 1, 32)?;
    let purge_batch = a.int("purge_batch_size", 1, 5000)?;
    let log_fsync = a.int("log_fsync", 0, 1_000_000_000)?;
    let work = a.int("stmt_work", 0, 1_000_000_000)?;
    let client_work = a.int("client_work", 0, 1_000_000_000)?;

    let mut stmts = vec![Stmt::Begin];
    stmts.extend((0..points).map(|_| Stmt::Point));
    stmts.extend((0..ranges).map(|_| Stmt::Range));
    stmts.extend((0..idx_up + nidx_up).map(|_| Stmt::Update));
    for _ in 0..del_ins {
        stmts.extend([Stmt::Delete, Stmt::Insert]);
    }
    stmts.push(Stmt::Commit);
    let undo = (idx_up + nidx_up + 2 * del_ins).max(1);

    let mut w = Workload::new("sysbench");
    let txns = w.counter("transactions");
    let lat = w.hist("transaction_latency");
    let leaves = table_size.div_ceil(ROWS_PER_PAGE);
    let leaf_base = w.rwlock(RwWake::InnoDb);
    for _ in 1..leaves {
        w.rwlock(RwWake::InnoDb);
    }
    let srv = Server {
        v8,
        // ut_delay(ut_rnd_interval(0, delay)) per round: on average delay/2 units of 50 PAUSEs.
        spin: spin_loops * spin_delay * 50 * pause / 2,
        threads,
        leaves,
        leaf_base,
        trx_sys: w.rwlock(RwWake::InnoDb),
        lock_sys: w.rwlock(RwWake::InnoDb),
        log_sys: w.rwlock(RwWake::InnoDb),
        commit_list: w.list(),
        log_wake: w.futex(),
        purge_wake: w.futex(),
        work,
        range_size,
        // Each connection wakes the purge coordinator once per batch's worth of its undo.
        purge_every: (purge_batch / undo).max(1),
    };
    // Statements of one transaction as the client sees them: (query bytes, reply bytes).
    let client = |qc: usize, rc: usize| {
        let mut c = vec![Op::Loop(u64::MAX), Op::Stamp(Slot::Task(0))];
        for s in &stmts {
            if client_work > 0 {
                c.push(Op::Compute(Dist::Const(client_work)));
            }
            c.push(Op::Send {
                ch: qc,
                bytes: Dist::Const(if s.writes() { 200 } else { 120 }),
            });
            c.push(Op::Recv { ch: rc });
        }
        c.extend([
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
    // A server thread's program: VARIANTS unrolled transactions, the last of every
    // `purge_every` also waking the purge coordinator (srv_wake_purge_thread_if_not_active).
    let server = |qc: usize, rc: usize, seed: u64| {
        let mut key = splitmix64(seed.wrapping_add(0x5eed));
        let mut one = |purge: bool| {
            let mut v = Vec::new();
            let first = stmts
                .iter()
                .position(|&s| s == Stmt::Point || s == Stmt::Range);
            for (i, &s) in stmts.iter().enumerate() {
                v.push(Op::Recv { ch: qc });
                srv.statement(&mut v, s, &mut key, Some(i) == first);
                if purge && s == Stmt::Commit {
                    v.push(Op::FutexWake {
                        f: srv.purge_wake,
                        n: 1,
                    });
                }
                v.push(Op::Send {
                    ch: rc,
                    bytes: Dist::Const(s.reply_bytes(range_size)),
                });
            }
            v
        };
        let reps = (srv.purge_every / VARIANTS).max(1);
        let mut p = vec![Op::Loop(u64::MAX), Op::Loop(reps)];
        for _ in 0..VARIANTS {
            p.extend(one(false));
        }
        p.push(Op::EndLoop);
        p.extend(one(true));
        p.push(Op::EndLoop);
        let mut t = TaskSpec::new("mysqld", p);
        t.mm = Some(MYSQLD_MM);
        t
    };
    if !pool {
        // The acceptor creates a thread per connection (fork placement near it).
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
            let s = w.spec(server(qc, rc, i));
            accept.extend([Op::Recv { ch: listen }, Op::Fork(s)]);
        }
        let mut acc = TaskSpec::new("mysqld", accept);
        acc.mm = Some(MYSQLD_MM);
        w.spawn(acc);
    } else {
        // Thread pool: connection i belongs to group i mod size; a group's active threads
        // (1 + oversubscribe, at most its connections) take its statements in turn.
        let groups = groups.min(threads);
        for g in 0..groups {
            let conns = threads / groups + u64::from(g < threads % groups);
            let qc = w.channel(ChannelKind::unix(), format!("group{g}.queries"));
            let rc = w.channel(ChannelKind::unix(), format!("group{g}.results"));
            for k in 0..(1 + oversub).min(conns) {
                w.spawn(server(qc, rc, g * 1000 + k));
            }
            for _ in 0..conns {
                w.spawn(client(qc, rc));
            }
        }
    }
    background(&mut w, &srv, v8, purge_threads, purge_batch, log_fsync);
    w.duration_ns = Some(duration);
    let reads = points + ranges;
    let writes = idx_up + nidx_up + 2 * del_ins;
    Ok((
        w,
        Arc::new(Out {
            txns,
            lat,
            reads,
            writes,
        }),
    ))
}

/// The redo log threads, purge, the page cleaner and the master thread.
fn background(
    w: &mut Workload,
    srv: &Server,
    v8: bool,
    purge_threads: u64,
    purge_batch: u64,
    log_fsync: u64,
) {
    let io = |v: &mut Vec<Op>| {
        if log_fsync > 0 {
            v.push(Op::Sleep(Dist::Const(log_fsync)));
        }
    };
    let mysqld = |comm: &str, prog: Vec<Op>| {
        let mut t = TaskSpec::new(comm, prog);
        t.mm = Some(MYSQLD_MM);
        t
    };
    if v8 {
        // 8.0.11+: log_writer writes the buffer and signals log_flusher, which fsyncs and
        // signals log_flush_notifier, which sets the events of every waiting committer.
        let (flusher_f, notifier_f) = (w.futex(), w.futex());
        let mut writer = vec![Op::Loop(u64::MAX), Op::FutexWait(srv.log_wake)];
        writer.extend([
            Op::Compute(Dist::Const(4_000)),
            Op::FutexWake { f: flusher_f, n: 1 },
            Op::EndLoop,
        ]);
        w.spawn(mysqld("ib_log_writer", writer));
        let mut flusher = vec![Op::Loop(u64::MAX), Op::FutexWait(flusher_f)];
        io(&mut flusher);
        flusher.extend([
            Op::Compute(Dist::Const(1_000)),
            Op::FutexWake {
                f: notifier_f,
                n: 1,
            },
            Op::EndLoop,
        ]);
        w.spawn(mysqld("ib_log_flush", flusher));
        w.spawn(mysqld(
            "ib_log_fl_notif",
            vec![
                Op::Loop(u64::MAX),
                Op::FutexWait(notifier_f),
                Op::Compute(Dist::Const(1_000)),
                Op::WakeList(srv.commit_list),
                Op::EndLoop,
            ],
        ));
    } else {
        // 5.x log_write_up_to(): the group's leader writes and fsyncs, then os_event_set()
        // on the flush event wakes every follower (the leader's part runs as one task).
        let mut leader = vec![
            Op::Loop(u64::MAX),
            Op::FutexWait(srv.log_wake),
            Op::Compute(Dist::Const(4_000)),
        ];
        io(&mut leader);
        leader.extend([Op::WakeList(srv.commit_list), Op::EndLoop]);
        w.spawn(mysqld("mysqld", leader));
    }
    // Purge: the coordinator takes a batch, hands the workers their share (srv_que_task
    // queue + srv_release_threads: one event each), purges its own share and waits.
    let workers = purge_threads - 1;
    let share = (purge_batch * 2_000 / purge_threads).max(1);
    let (work_f, done) = (w.futex(), w.barrier(purge_threads as u32));
    let mut coord = vec![
        Op::Loop(u64::MAX),
        Op::FutexWait(srv.purge_wake),
        Op::Compute(Dist::Const(20_000)),
    ];
    if workers > 0 {
        coord.push(Op::FutexWake {
            f: work_f,
            n: workers as u32,
        });
    }
    coord.extend([
        Op::Compute(Dist::Const(share)),
        Op::Barrier(done),
        Op::EndLoop,
    ]);
    w.spawn(mysqld("ib_pg_coord", coord));
    for _ in 0..workers {
        w.spawn(mysqld(
            "ib_pg_worker",
            vec![
                Op::Loop(u64::MAX),
                Op::FutexWait(work_f),
                Op::Compute(Dist::Const(share)),
                Op::Barrier(done),
                Op::EndLoop,
            ],
        ));
    }
    // The page cleaner (one per buffer pool instance; the default 128 MiB pool has one) and
    // the master thread both loop once a second.
    for (comm, work) in [("ib_pg_flush_co", 1_000_000), ("ib_src_main", 100_000)] {
        w.spawn(mysqld(
            comm,
            vec![
                Op::Loop(u64::MAX),
                Op::Sleep(Dist::Const(1_000_000_000)),
                Op::Compute(Dist::Const(work)),
                Op::EndLoop,
            ],
        ));
    }
}

struct Out {
    txns: CounterId,
    lat: HistId,
    reads: u64,
    writes: u64,
}

impl Report for Out {
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
            return Err(no_samples("sysbench", "completed transaction"));
        }
        let r = SysbenchReport {
            reads: n * self.reads,
            writes: n * self.writes,
            other: n * 2,
            transactions: n,
            transactions_per_sec: n as f64 / secs(sim.now()),
            latency_avg_ms: h.mean() / 1e6,
            latency_p95_ms: h.median_equivalent(h.value_at_quantile(0.95)) as f64 / 1e6,
        };
        Ok((format_sysbench(&r), r.metrics()))
    }
}
