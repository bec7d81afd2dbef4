//! The 2.5.59 node balancer variants on the NEC TX7 shape (4 nodes x 2 CPUs), run through
//! the engine: eight CPU-bound tasks all start on CPU 0 (2.5.59 forks stay on the parent's
//! CPU) and only the balancer can spread them. Timings follow from the 2.5.59 balancer's mechanisms:
//!
//! * `orig`: idle CPUs balance every 1 ms tick; every 10th call looks at the busiest node,
//!   so all CPUs are busy within a few tens of ms (after cache_decay_ticks = 10 ms);
//! * `ingoB0`: idle CPUs balance across nodes every 2 ms: as fast;
//! * `ingo` / `ingofix`: cross-node balancing only on the 400 ms node tick: the other nodes
//!   stay idle for 400 ms, so 8 x 300 ms of work cannot finish before ~600 ms.
//!
//! Each CPU first runs a tiny pinned "boot" task, because the engine arms the tick of a CPU
//! only once it has run something (a pre-NOHZ kernel ticks every CPU from boot).

mod common;

use schedlab_engine::{Dist, Op, TaskSpec, Workload};
use schedlab_topo::CpuId;
use schedlab_topo::CpuSet;
use std::sync::Arc;

fn spread_test(cpus: usize) -> Workload {
    let mut w = Workload::new("spread");
    for c in 1..cpus {
        let mut boot = TaskSpec::new(format!("boot{c}"), vec![Op::Compute(Dist::Const(10_000))]);
        boot.affinity = Some(CpuSet::from_cpus(cpus, [c].map(CpuId::new)));
        w.spawn(boot);
    }
    for i in 0..8 {
        // 300 x 1 ms rather than one 300 ms op: a preempted task resumes op by op.
        let prog = vec![
            Op::Loop(300),
            Op::Compute(Dist::Const(1_000_000)),
            Op::EndLoop,
        ];
        w.spawn(TaskSpec::new(format!("burn{i}"), prog));
    }
    w
}

fn elapsed_ms(variant: &str) -> (f64, u64) {
    let topo = Arc::new(schedlab_topo::preset("tx7-4n2c").unwrap());
    let sim = common::run(variant, &topo, spread_test(8), false, 3);
    let c = sim.counters();
    (sim.now() as f64 / 1e6, c.migrations_balance)
}

#[test]
fn eager_node_balancing_spreads_fast_ingo_waits_for_the_node_tick() {
    let (orig, m_orig) = elapsed_ms("linux-2.5.59,orig");
    let (b0, m_b0) = elapsed_ms("linux-2.5.59,ingoB0");
    let (ingo, _) = elapsed_ms("linux-2.5.59,ingo");
    let (fix, _) = elapsed_ms("linux-2.5.59,ingofix");
    assert!(orig < 420.0, "orig took {orig} ms");
    assert!(b0 < 420.0, "ingoB0 took {b0} ms");
    assert!(ingo > 550.0, "ingo took {ingo} ms");
    assert!(fix > 550.0, "ingofix took {fix} ms");
    assert!(
        m_orig >= 7 && m_b0 >= 7,
        "every other CPU must pull a task: {m_orig} {m_b0}"
    );
}

#[test]
fn tick_parameters_change_the_outcome() {
    // B0 with a working node mask and the idle node tick slowed to 500 ms behaves like A2.
    let (slow, _) = elapsed_ms("linux-2.5.59,ingoB0fix,idle_node_rebalance_tick=500");
    assert!(slow > 550.0, "{slow}");
    // B0 as posted does not need its node tick: its 1 ms "intra-node" idle pass is over
    // every online CPU (`__cpu_to_node_mask` = `cpu_online_map`).
    let (posted, _) = elapsed_ms("linux-2.5.59,ingoB0,idle_node_rebalance_tick=500");
    assert!(posted < 420.0, "{posted}");
    // A2 with a 2 ms idle node tick spreads fast.
    let (fast, _) = elapsed_ms("linux-2.5.59,ingofix,idle_node_rebalance_mult=2");
    assert!(fast < 420.0, "{fast}");
    // orig never looking at other nodes (rate larger than any call count) keeps node 0 only.
    let (local, _) = elapsed_ms("linux-2.5.59,node_balance_rate=1000000");
    assert!(local > 1100.0, "{local}");
    // Tasks stay cache hot for 1 s: nothing may move before they finish their first slices.
    let (hot, _) = elapsed_ms("linux-2.5.59,cache_decay_ticks=1000");
    assert!(hot > orig_bound(), "{hot}");
}

fn orig_bound() -> f64 {
    420.0
}

/// Erich Focht's "ingofix" fixed only bug 1: its busy CPUs still pass idle=1 (current
/// lengths, no 25 % threshold, one task a pass), so they balance differently from A2 with
/// both bugs fixed; the other A2 switches are unaffected by the difference.
#[test]
fn erichs_ingofix_keeps_bug_two() {
    let topo = Arc::new(schedlab_topo::preset("tx7-4n2c").unwrap());
    let run = |v: &str| {
        // 13 burners on 8 CPUs: busy CPUs stay unequal and the 200 ms busy pass acts.
        let mut w = spread_test(8);
        for i in 0..5 {
            let prog = vec![
                Op::Loop(600),
                Op::Compute(Dist::Const(1_000_000)),
                Op::EndLoop,
            ];
            w.spawn(TaskSpec::new(format!("extra{i}"), prog));
        }
        let sim = common::run(v, &topo, w, false, 1);
        (sim.event_hash(), sim.counters().migrations_balance)
    };
    let (fix, m_fix) = run("linux-2.5.59,ingofix");
    let (both, m_both) = run("linux-2.5.59,ingofixboth");
    assert_ne!(fix, both, "busy idle=1 changes nothing: {m_fix} / {m_both}");
}
