//! Fork placement with the bounded initial utilisation of a new task (4.7+,
//! `post_init_entity_util_avg`): children that sleep at once still leave a utilisation
//! footprint below the CPU's capacity, so `find_idlest_group` (ties on idle CPUs broken by
//! utilisation) keeps choosing the least used core and forks spread. With an unbounded
//! initial utilisation every core that received two children saturated at its capacity, the
//! ties became exact and every later fork went to the first core (239 of 320 hackbench
//! children on one CPU).

mod common;

use schedlab_engine::{Op, SimOptions, TaskSpec, Workload};
use schedlab_trace::TraceEvent;
use std::sync::Arc;

#[test]
fn sleeping_children_spread_over_the_cores_of_the_parents_node() {
    let topo = Arc::new(schedlab_topo::preset("westmere-2s20c").unwrap());
    let n = 120u32;
    let mut w = Workload::new("forks");
    let barrier = w.barrier(n + 1);
    let child = w.spec(TaskSpec::new("child", vec![Op::Barrier(barrier)]));
    w.spawn(TaskSpec::new(
        "parent",
        vec![
            Op::Loop(n as u64),
            Op::Fork(child),
            Op::EndLoop,
            Op::Barrier(barrier),
            Op::WaitChildren,
        ],
    ));
    // The policy seed is the run's default seed (1), as before.
    let mut sim = common::simulation(
        "linux-6.6",
        &topo,
        w,
        SimOptions {
            trace: true,
            check_invariants: true,
            ..Default::default()
        },
    );
    sim.run();
    let trace = sim.take_trace().unwrap();
    let mut per_cpu = vec![0u32; topo.nr_cpus()];
    for e in &trace.events {
        if let TraceEvent::WakeupNew { target_cpu, .. } = e {
            per_cpu[*target_cpu as usize] += 1;
        }
    }
    // The parent runs on node 0; look at the children placed there.
    let node0: Vec<u32> = topo
        .cpu_ids()
        .filter(|&c| topo.cpu(c).node == 0)
        .map(|c| per_cpu[c])
        .collect();
    let total: u32 = node0.iter().sum();
    let used = node0.iter().filter(|&&x| x > 0).count() as u32;
    let max = *node0.iter().max().unwrap();
    assert!(total >= 20, "only {total} children on node 0: {per_cpu:?}");
    assert!(used >= 8, "node 0 children on {used} CPUs: {per_cpu:?}");
    assert!(
        max <= 2 * total.div_ceil(used),
        "one CPU of node 0 got {max} of {total} children: {per_cpu:?}"
    );
}
