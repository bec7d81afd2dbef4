//! The wake rules of each era, seen in whole simulations: which wakeups carry WF_SYNC and
//! which are issued from the loopback receive softirq (`docs/wake-paths.md`).

mod common;

use common::run;
use schedlab_engine::{ChannelKind, Dist, Op, TaskSpec, Workload};
use schedlab_topo::regular;
use std::sync::Arc;

/// One request/response pair over channels of `kind`, `loops` round trips.
fn pair(kind: ChannelKind, loops: u64) -> Workload {
    let mut w = Workload::new("pair");
    let req = w.channel(kind, "req");
    let resp = w.channel(kind, "resp");
    w.spawn(TaskSpec::new(
        "client",
        vec![
            Op::Loop(loops),
            Op::Send {
                ch: req,
                bytes: Dist::Const(64),
            },
            Op::Recv { ch: resp },
            Op::EndLoop,
        ],
    ));
    w.spawn(TaskSpec::new(
        "server",
        vec![
            Op::Loop(loops),
            Op::Recv { ch: req },
            Op::Compute(Dist::Const(3_000)),
            Op::Send {
                ch: resp,
                bytes: Dist::Const(64),
            },
            Op::EndLoop,
        ],
    ));
    w
}

#[test]
fn loopback_wakeups_come_from_softirq_with_sync_and_local_sockets_from_the_task() {
    let topo = Arc::new(regular("wp-8", "test", 1, 1, 4, 2, true).unwrap());
    for era in ["linux-3.10", "linux-6.6"] {
        let tcp = run(era, &topo, pair(ChannelKind::tcp(), 200), true, 1);
        let c = tcp.counters();
        assert!(c.wakeups >= 398, "{era}: {}", c.to_text());
        assert_eq!(c.wakeups_softirq, c.wakeups, "{era}: {}", c.to_text());
        assert_eq!(c.wakeups_sync, c.wakeups, "{era}: {}", c.to_text());
        assert!(c.softirq_ns > 0, "{era}");
        for kind in [ChannelKind::unix(), ChannelKind::unix_dgram()] {
            let s = run(era, &topo, pair(kind, 200), true, 1);
            let c = s.counters();
            assert_eq!(c.wakeups_softirq, 0, "{era} {kind:?}");
            assert_eq!(c.softirq_ns, 0, "{era} {kind:?}");
            assert_eq!(c.wakeups_sync, c.wakeups, "{era} {kind:?}: {}", c.to_text());
        }
    }
}

#[test]
fn the_o1_era_wakes_socket_readers_without_sync_so_they_stay_where_they_slept() {
    // 2.5.59's try_to_wake_up() moves a wakee to the waker's CPU only for a sync wakeup:
    // with plain socket wakeups both tasks keep their CPUs; over a pipe (sync) they meet.
    let topo = Arc::new(regular("wp-4", "test", 1, 1, 4, 1, false).unwrap());
    let unix = run(
        "linux-2.5.59",
        &topo,
        pair(ChannelKind::unix(), 200),
        true,
        3,
    );
    let c = unix.counters();
    assert_eq!(c.wakeups_sync, 0, "{}", c.to_text());
    assert_eq!(c.wakeups_nonsync, c.wakeups, "{}", c.to_text());
    assert_eq!(c.migrations_wake, 0, "{}", c.to_text());
    let pipe = run(
        "linux-2.5.59",
        &topo,
        pair(ChannelKind::pipe(), 200),
        true,
        3,
    );
    let c = pipe.counters();
    assert_eq!(c.wakeups_sync, c.wakeups, "{}", c.to_text());
    assert_eq!(c.wakeups_nonsync, 0, "{}", c.to_text());
}

/// `pairs` loopback request/response pairs of `loops` round trips (more pairs than CPUs
/// keeps every CPU busy, so readers woken on the sender's CPU preempt it).
fn loopback_pairs(pairs: usize, loops: u64) -> Workload {
    let mut w = Workload::new("pairs");
    for i in 0..pairs {
        let req = w.channel(ChannelKind::tcp(), format!("req{i}"));
        let resp = w.channel(ChannelKind::tcp(), format!("resp{i}"));
        let send = |ch| Op::Send {
            ch,
            bytes: Dist::Const(512),
        };
        w.spawn(TaskSpec::new(
            format!("client{i}"),
            vec![
                Op::Loop(loops),
                Op::Compute(Dist::Const(2_000)),
                send(req),
                Op::Recv { ch: resp },
                Op::EndLoop,
            ],
        ));
        w.spawn(TaskSpec::new(
            format!("server{i}"),
            vec![
                Op::Loop(loops),
                Op::Recv { ch: req },
                Op::Compute(Dist::Const(3_000)),
                send(resp),
                Op::EndLoop,
            ],
        ));
    }
    w
}

#[test]
fn ksoftirqd_is_woken_from_3_10_and_takes_the_receive_path_only_from_4_10_to_6_4() {
    let topo = Arc::new(regular("wp-8", "test", 1, 1, 4, 2, true).unwrap());
    let counters = |era: &str| {
        let sim = run(era, &topo, loopback_pairs(12, 3000), true, 1);
        let stats = sim.task_stats();
        // ksoftirqd is a kernel thread: not among the workload's tasks, and the run ended
        // when the workload's tasks did.
        assert!(stats.iter().all(|t| !t.comm.starts_with("ksoftirqd")));
        assert_eq!(stats.len(), 24);
        sim.counters().clone()
    };
    // Before 3.9 __do_softirq() restarts and runs a tick-raised softirq inline.
    let c = counters("linux-3.6");
    assert_eq!(c.ksoftirqd_wakeups, 0, "{}", c.to_text());
    // 3.9 on (and again from 6.5): need_resched() at the end of the loop wakes ksoftirqd,
    // which finds only the tick's softirq; the sends still deliver inline.
    for era in ["linux-3.10", "linux-6.6"] {
        let c = counters(era);
        assert!(c.ksoftirqd_wakeups > 0, "{era}: {}", c.to_text());
        assert_eq!(c.wakeups_by_ksoftirqd, 0, "{era}: {}", c.to_text());
        assert_eq!(c.softirq_deferred, 0, "{era}");
        assert!(c.to_text().contains("ksoftirqd: woken"), "{}", c.to_text());
    }
    // 4.10-6.4: while ksoftirqd is runnable the sends leave their receive processing to it,
    // and it issues those readers' wakeups (from softirq, with WF_SYNC, as the waker).
    for era in ["linux-4.14", "linux-6.0"] {
        let c = counters(era);
        assert!(c.softirq_deferred > 0, "{era}: {}", c.to_text());
        assert!(c.wakeups_by_ksoftirqd > 0, "{era}: {}", c.to_text());
        assert!(c.wakeups_by_ksoftirqd <= c.softirq_deferred, "{era}");
        // Every wakeup is still issued in softirq; the only plain ones wake ksoftirqd.
        assert_eq!(c.wakeups_softirq, c.wakeups, "{era}: {}", c.to_text());
        assert!(
            c.wakeups_nonsync <= c.ksoftirqd_wakeups,
            "{era}: {}",
            c.to_text()
        );
    }
}
