//! The load-based balancer of 2.6.32-5.4 end to end (`LbRules`, balance/fbg_load.rs): a
//! newly idle CPU asks for the load that evens it with the busiest CPU and, without
//! `CONFIG_PREEMPT`, keeps pulling until that load is moved (`move_tasks()` of 3.10,
//! `detach_tasks()` of 4.x); with it, and in every era from 5.5 here, it stops after one
//! task.

mod common;

use schedlab_engine::{Dist, LbRules, Op, TaskSpec, Workload};
use schedlab_topo::{CpuId, CpuSet, Topology};

/// Two CPUs in two LLCs.
fn two_cpus() -> Topology {
    schedlab_topo::regular("2x1", "test", 1, 2, 1, 1, false).unwrap()
}

/// Four 5 ms burners start on CPU 0 (PrevCpu keeps them there); a task pinned to CPU 1
/// computes 50 µs and exits, so CPU 1 goes newly idle with three burners queued on CPU 0
/// and one running, long before any tick.
fn pile_beside_a_short_task() -> Workload {
    let mut w = Workload::new("pile");
    let mut short = TaskSpec::new("short", vec![Op::Compute(Dist::Const(50_000))]);
    short.affinity = Some(CpuSet::from_cpus(2, [CpuId::new(1)]));
    w.spawn(short);
    for i in 0..4 {
        w.spawn(TaskSpec::new(
            format!("burn{i}"),
            vec![Op::Compute(Dist::Const(5_000_000))],
        ));
    }
    w
}

/// How many tasks the first balancing move of the run took to CPU 1 at once.
fn first_pull(rules: LbRules, preempt_full: bool) -> usize {
    let mut bal = common::balancer();
    bal.lb_rules = rules;
    bal.preempt_full = preempt_full;
    // Burners that have not run yet must not look cache hot.
    bal.migration_cost_ns = 0;
    let mut sim = common::run_to_exit(two_cpus(), bal, pile_beside_a_short_task(), true);
    let moves = common::moves(&mut sim);
    let first = moves.first().expect("the balancer moved something").0;
    assert!(
        first < 1_000_000,
        "first move at {first} ns: not the newly idle pass"
    );
    moves
        .iter()
        .filter(|&&(t, cpu)| t == first && cpu == 1)
        .count()
}

#[test]
fn before_5_5_a_newly_idle_cpu_pulls_the_load_that_evens_it() {
    // CPU 0: load 4 x 1024; CPU 1: 0. The domain average is 2048 a CPU, so the imbalance
    // is 2048: two burners.
    assert_eq!(first_pull(LbRules::Capacity, false), 2);
    assert_eq!(first_pull(LbRules::Util, false), 2);
}

#[test]
fn under_config_preempt_and_from_5_5_a_newly_idle_pass_takes_one_task() {
    assert_eq!(first_pull(LbRules::Capacity, true), 1);
    assert_eq!(first_pull(LbRules::GroupTypes, false), 1);
}
