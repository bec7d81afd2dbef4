//! Reader-writer locks in a running simulation (`Op::RwLock`, `Op::RwUnlock`): exclusive
//! sections never overlap, every waiter is eventually woken (invariants checked at every
//! event, the run ends with every task exited), and the wake rules show in the wake graph:
//! an InnoDB release wakes all waiters at once, an LWLock release one exclusive waiter.

mod common;

use schedlab_engine::rwlock::RwWake;
use schedlab_engine::{Dist, MachineProfile, Op, Simulation, TaskSpec, Workload};

const TASKS: u64 = 6;
const LOOPS: u64 = 200;
const HOLD: u64 = 10_000;

fn run(wake: RwWake, spin_ns: u64, readers: u64) -> Simulation {
    let mut w = Workload::new("rw");
    let l = w.rwlock(wake);
    for i in 0..TASKS {
        let exclusive = i >= readers;
        w.spawn(TaskSpec::new(
            if exclusive { "writer" } else { "reader" },
            vec![
                Op::Loop(LOOPS),
                Op::RwLock {
                    lock: l,
                    exclusive,
                    spin_ns,
                },
                Op::Compute(Dist::Const(HOLD)),
                Op::RwUnlock(l),
                Op::Compute(Dist::Const(2_000)),
                Op::EndLoop,
            ],
        ));
    }
    // Invariants are checked at every event, and every task must exit.
    common::run_on_core2quad(MachineProfile::default(), w)
}

#[test]
fn exclusive_sections_are_serialised_under_both_rules() {
    for wake in [RwWake::InnoDb, RwWake::LwLock] {
        let sim = run(wake, 0, 0);
        // Six writers × 200 sections of 10 µs can take no less than 12 ms on any machine.
        assert!(
            sim.now() >= TASKS * LOOPS * HOLD,
            "{wake:?}: finished at {} ns",
            sim.now()
        );
        assert!(sim.counters().wake_graph.lock_waits > 0, "{wake:?}");
    }
}

#[test]
fn innodb_release_wakes_every_waiter_and_lwlock_one_writer() {
    let innodb = run(RwWake::InnoDb, 0, 0);
    let g = &innodb.counters().wake_graph;
    assert!(g.multi_ops > 0 && g.max_fanout >= 3, "{}", g.to_text());
    let lw = run(RwWake::LwLock, 0, 0);
    let g = &lw.counters().wake_graph;
    assert_eq!(g.max_fanout, 1, "{}", g.to_text());
    // Wake-all: the woken writers that lose the race sleep again, so InnoDB sleeps more
    // often per section than the LWLock's one-at-a-time wakeups.
    assert!(
        innodb.counters().wake_graph.lock_waits > lw.counters().wake_graph.lock_waits,
        "innodb {} vs lwlock {}",
        innodb.counters().wake_graph.lock_waits,
        lw.counters().wake_graph.lock_waits
    );
}

#[test]
fn readers_share_the_lock_and_a_spin_budget_avoids_sleeps() {
    // Five readers and one writer: readers overlap, so the run is far shorter than the
    // serial sum of all sections.
    let mixed = run(RwWake::LwLock, 0, 5);
    assert!(mixed.now() < TASKS * LOOPS * HOLD, "{}", mixed.now());
    let innodb_mixed = run(RwWake::InnoDb, 0, 5);
    assert!(innodb_mixed.now() < TASKS * LOOPS * HOLD);
    // Spinning longer than a section lasts: waiters take the lock without sleeping more
    // often than with no spin at all.
    let spin = run(RwWake::InnoDb, 50_000, 0);
    let none = run(RwWake::InnoDb, 0, 0);
    assert!(
        spin.counters().wake_graph.lock_waits < none.counters().wake_graph.lock_waits,
        "spin {} vs none {}",
        spin.counters().wake_graph.lock_waits,
        none.counters().wake_graph.lock_waits
    );
}
