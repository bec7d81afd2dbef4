//! The server-shaped models (`sysbench`, `pgbench`, `tbench`): the
//! wake graph they were built to have (several wakeups per operation, lock waits, hubs,
//! backend-to-backend wakeups), contention that grows with threads, and their output read
//! back by the real tools' parsers.

mod common;

use common::*;
use schedlab_metrics::native::{parse_pgbench, parse_sysbench, parse_tbench};

fn graph(spec: &str) -> schedlab_engine::WakeGraph {
    let (_, sim, _) = run_spec(spec, &quad()).unwrap_or_else(|e| panic!("{spec}: {e}"));
    sim.counters().wake_graph.clone()
}

#[test]
fn sysbench_has_group_commit_wakeups_and_lock_waits_that_grow_with_threads() {
    let topo = quad();
    let (r, sim, _) = run_spec("sysbench:threads=8,duration=100ms", &topo).unwrap();
    let p = parse_sysbench(&r.native).unwrap();
    assert!(p.transactions > 0);
    // 14 reads, 4 writes, 2 other per transaction with sysbench's defaults.
    assert_eq!(p.reads, 14 * p.transactions);
    assert_eq!(p.writes, 4 * p.transactions);
    let g = &sim.counters().wake_graph;
    // The log flush notifier wakes every committer of a group in one operation.
    assert!(g.multi_ops > 0 && g.max_fanout >= 2, "{}", g.to_text());
    assert!(
        g.woken_from[2] > 0,
        "no group-commit wakeup: {}",
        g.to_text()
    );
    // 1:1 client/server pairs alone would have no off-partner wakeups.
    assert!(g.off_partner > 0, "{}", g.to_text());
    // More threads on the same four CPUs: more sleeps on InnoDB latches and mutexes.
    let few = graph("sysbench:threads=2,duration=100ms,mysql=5.7");
    let many = graph("sysbench:threads=32,duration=100ms,mysql=5.7");
    assert!(
        many.lock_waits > few.lock_waits,
        "2 threads: {} lock waits, 32 threads: {}",
        few.lock_waits,
        many.lock_waits
    );
}

#[test]
fn sysbench_thread_pool_runs_fewer_server_threads() {
    let topo = quad();
    let (_, per_conn, _) = run_spec("sysbench:threads=16,duration=50ms", &topo).unwrap();
    let (r, pool, _) = run_spec(
        "sysbench:threads=16,duration=50ms,thread_handling=pool",
        &topo,
    )
    .unwrap();
    assert!(parse_sysbench(&r.native).unwrap().transactions > 0);
    // Per connection: 16 server threads forked by the acceptor; pool: 4 groups of 4 threads.
    assert!(per_conn.counters().forks >= 16);
    assert!(
        pool.nr_tasks() < per_conn.nr_tasks(),
        "pool must not add threads"
    );
}

#[test]
fn pgbench_scale_decides_the_row_lock_convoy() {
    let topo = quad();
    let (r, sim, _) = run_spec("pgbench:clients=16,jobs=2,duration=100ms", &topo).unwrap();
    let p = parse_pgbench(&r.native).unwrap();
    let txns = p.transactions.unwrap();
    assert!(txns > 0);
    assert_eq!(p.clients, Some(16));
    let one = sim.counters().wake_graph.clone();
    // scale=1: every transaction waits for the one branch row: backends wake backends.
    assert!(one.lock_waits > txns / 2, "{}", one.to_text());
    // scale=64: 64 branch rows and 640 tellers; what waits remain are LWLock waits
    // (ProcArrayLock at commit, the WAL insert locks), far fewer per transaction.
    let (r64, sim64, _) =
        run_spec("pgbench:clients=16,jobs=2,duration=100ms,scale=64", &topo).unwrap();
    let txns64 = parse_pgbench(&r64.native).unwrap().transactions.unwrap();
    let per = |w: u64, t: u64| w as f64 / t.max(1) as f64;
    let (w1, w64) = (
        per(one.lock_waits, txns),
        per(sim64.counters().wake_graph.lock_waits, txns64),
    );
    assert!(
        txns64 > txns,
        "scale=64: {txns64} transactions, scale=1: {txns}"
    );
    assert!(
        w64 * 3.0 < w1,
        "lock waits per transaction: scale=64 {w64:.3}, scale=1 {w1:.3}"
    );
    // A pgbench thread is a hub: it is woken by many backends (off-partner wakeups).
    assert!(one.off_partner > 0);
}

#[test]
fn pgbench_select_only_takes_no_row_locks_and_commits_nothing() {
    let g = graph("pgbench:clients=8,jobs=2,duration=50ms,builtin=select-only");
    assert_eq!(g.woken_from[2], 0, "select-only has no group commit");
    assert!(g.task_wakeups > 0);
}

#[test]
fn tbench_counts_each_operations_own_payload() {
    let topo = quad();
    let (r, sim, _) = run_spec("tbench:clients=2,duration=50ms", &topo).unwrap();
    let p = parse_tbench(&r.native).unwrap();
    assert!(p.throughput_mb_s > 0.0);
    // Request and reply channels carry one message per operation each way.
    let ops: u64 = (0..sim.workload().channels.len())
        .filter(|&i| sim.workload().channels[i].name.ends_with(".req"))
        .map(|i| sim.channel_delivered(i))
        .sum();
    let replies: u64 = (0..sim.workload().channels.len())
        .filter(|&i| sim.workload().channels[i].name.ends_with(".resp"))
        .map(|i| sim.channel_delivered(i))
        .sum();
    assert!(ops > 100);
    assert!(ops - replies <= 2, "{ops} requests, {replies} replies");
    // Each client and its server only wake each other.
    let g = &sim.counters().wake_graph;
    assert_eq!(g.multi_ops, 0);
    assert_eq!(g.lock_waits, 0);
}
