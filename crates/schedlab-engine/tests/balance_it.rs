//! Integration tests of the sched-domain balancer's escalation mechanisms: active balancing
//! pushes a running task off a packed SMT core, and one nohz kick spreads a pile of tasks
//! over several idle CPUs (each pass sees the moves of the previous ones).

mod common;

use schedlab_engine::balance::ActiveBalance;
use schedlab_engine::{Dist, Op, Simulation, TaskSpec, Workload};
use schedlab_topo::Topology;

/// `n` CPU-bound tasks of `ms` x 1 ms, all started on CPU 0 (PrevCpu keeps them there).
fn burners(n: usize, ms: u64) -> Workload {
    let mut w = Workload::new("burn");
    for i in 0..n {
        w.spawn(TaskSpec::new(
            format!("burn{i}"),
            vec![
                Op::Loop(ms),
                Op::Compute(Dist::Const(1_000_000)),
                Op::EndLoop,
            ],
        ));
    }
    w
}

fn run(topo: Topology, w: Workload, active: ActiveBalance, trace: bool) -> Simulation {
    let mut bal = common::balancer();
    bal.active_balance = active;
    common::run_to_exit(topo, bal, w, trace)
}

/// One LLC of two SMT-2 cores.
fn two_smt_cores() -> Topology {
    schedlab_topo::regular("2c2t", "test", 1, 1, 2, 2, false).unwrap()
}

#[test]
fn active_balance_pushes_a_running_task_off_a_packed_core() {
    // Two 200 ms burners start on CPU 0; SMT-level balancing moves one to the sibling (SMT
    // siblings are never cache hot). Then each CPU of core 0 runs exactly one task: nothing
    // can be detached, MC-level passes from the idle core fail, and only an active balance
    // (the stopper pushing the running task) spreads them. Packed, both run at the SMT speed
    // (0.62): about 320 ms; spread, about 200 ms plus the failures before the push.
    let sim = run(
        two_smt_cores(),
        burners(2, 200),
        ActiveBalance::Failed,
        true,
    );
    let c = sim.counters();
    assert!(c.migrations_active >= 1, "{}", c.to_text());
    assert!(sim.now() < 260_000_000, "finished at {} ns", sim.now());

    let off = run(two_smt_cores(), burners(2, 200), ActiveBalance::Off, false);
    assert_eq!(off.counters().migrations_active, 0);
    assert!(
        off.now() > 300_000_000,
        "without active balancing the core stays packed; finished at {} ns",
        off.now()
    );
}

#[test]
fn one_nohz_kick_spreads_a_pile_over_several_idle_cpus() {
    // 16 burners on CPU 0 of an 8-CPU LLC: the first idle balancing kick must hand tasks to
    // more than one idle CPU (each pass of the kick sees what the previous passes took).
    let topo = schedlab_topo::regular("8c", "test", 1, 1, 8, 1, false).unwrap();
    let mut sim = run(topo, burners(16, 20), ActiveBalance::FailedTasks, true);
    let moves = common::moves(&mut sim);
    let first = moves.first().expect("the balancer moved something").0;
    let mut dests: Vec<u32> = moves
        .iter()
        .filter(|(t, _)| *t == first)
        .map(|m| m.1)
        .collect();
    dests.sort_unstable();
    dests.dedup();
    assert!(
        dests.len() >= 3,
        "first kick at {first} ns moved tasks to {dests:?} only"
    );
    // 16 x 20 ms on 8 CPUs: about 40 ms once spread.
    assert!(sim.now() < 60_000_000, "finished at {} ns", sim.now());
}
