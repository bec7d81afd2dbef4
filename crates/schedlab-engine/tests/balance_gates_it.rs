//! The era gates of newidle balancing and the `cpu_load[]` indices of the balancer
//! (issue 16, point 5): each gate is checked against the kernel version that added it
//! (see `NewidleGate` and `schedlab_engine::cpu_load`).

mod common;

use schedlab_engine::balance::NewidleGate;
use schedlab_engine::cpu_load::LoadIdx;
use schedlab_engine::{Dist, Op, Simulation, TaskSpec, Workload};
use schedlab_topo::{CpuId, CpuSet, Topology};

/// Two CPUs in two LLCs (one package level above them).
fn two_cpus() -> Topology {
    schedlab_topo::regular("2x1", "test", 1, 2, 1, 1, false).unwrap()
}

fn pinned(mut t: TaskSpec, cpu: usize) -> TaskSpec {
    t.affinity = Some(CpuSet::from_cpus(2, [CpuId::new(cpu)]));
    t
}

/// `n` burners pinned to CPU 0 for `ms` ms, and on CPU 1 a task that sleeps `sleep_ns` and
/// computes 50 µs, `rounds` times: CPU 1 goes newly idle once per round.
fn sleeper_beside_burners(n: usize, ms: u64, sleep_ns: u64, rounds: u64) -> Workload {
    let mut w = Workload::new("gates");
    for i in 0..n {
        w.spawn(pinned(
            TaskSpec::new(
                format!("burn{i}"),
                vec![
                    Op::Loop(ms),
                    Op::Compute(Dist::Const(1_000_000)),
                    Op::EndLoop,
                ],
            ),
            0,
        ));
    }
    w.spawn(pinned(
        TaskSpec::new(
            "sleeper",
            vec![
                Op::Loop(rounds),
                Op::Sleep(Dist::Const(sleep_ns)),
                Op::Compute(Dist::Const(50_000)),
                Op::EndLoop,
            ],
        ),
        1,
    ));
    w
}

fn run(w: Workload, gate: NewidleGate, load_idx: LoadIdx) -> Simulation {
    let mut bal = common::balancer();
    bal.newidle_gate = gate;
    bal.load_idx = load_idx;
    common::run_to_exit(two_cpus(), bal, w, false)
}

fn newidle_passes(w: Workload, gate: NewidleGate) -> u64 {
    run(w, gate, LoadIdx::None).counters().newidle_passes
}

#[test]
fn before_2_6_32_every_newly_idle_cpu_balances() {
    // 200 idles of 100 µs beside an overloaded CPU: each one balances (nothing can move:
    // the burners are pinned).
    let passes = newidle_passes(
        sleeper_beside_burners(2, 30, 100_000, 200),
        NewidleGate::Always,
    );
    assert!(passes >= 190, "{passes} newidle passes for 200 idles");
}

#[test]
fn from_2_6_32_short_idles_skip_newidle_balancing() {
    // avg_idle starts at twice the migration cost and falls towards 100 µs: after the
    // first few idles it is below the 500 µs migration cost and balancing stops.
    let w = || sleeper_beside_burners(2, 30, 100_000, 200);
    let rate_limited = newidle_passes(w(), NewidleGate::MigrationCost);
    assert!(
        rate_limited <= 20,
        "{rate_limited} newidle passes with avg_idle ~100 µs"
    );
    // Long idles (2 ms) keep avg_idle above the migration cost: they balance.
    let long = newidle_passes(
        sleeper_beside_burners(2, 300, 2_000_000, 100),
        NewidleGate::MigrationCost,
    );
    assert!(long >= 95, "{long} newidle passes for 100 idles of 2 ms");
}

#[test]
fn from_3_17_nothing_overloaded_skips_newidle_balancing() {
    // One burner: no CPU has a second task, so rd->overload is clear.
    let w = || sleeper_beside_burners(1, 300, 2_000_000, 100);
    let before = newidle_passes(w(), NewidleGate::MigrationCost);
    let after = newidle_passes(w(), NewidleGate::Overload);
    assert!(before >= 95, "{before} newidle passes before 3.17");
    assert_eq!(after, 0, "newidle passes with nothing overloaded");
}

#[test]
fn load_indices_follow_the_domain_level_and_pass_kind() {
    use schedlab_engine::cpu_load::PassKind::{Busy, Idle, NewlyIdle};
    use schedlab_topo::{DomainEra, SchedDomains};
    // 2 nodes x 1 LLC x 2 cores x 2 threads: SMT, MC, NUMA.
    let t = schedlab_topo::regular("numa", "test", 2, 1, 2, 2, false).unwrap();
    let d = SchedDomains::build(&t, DomainEra::Linux3);
    let levels = d.of(CpuId::new(0));
    let names: Vec<String> = levels.iter().map(|sd| sd.level.name()).collect();
    let idx =
        |li: LoadIdx, kind| -> Vec<usize> { levels.iter().map(|sd| li.index(sd, kind)).collect() };
    assert_eq!(levels.len(), 3, "{names:?}");
    // 3.10 SD_SIBLING_INIT / SD_MC_INIT / sd_numa_init: busy 0/2/3, idle 0/0/2, newidle 0.
    assert_eq!(idx(LoadIdx::V2_6_32, Busy), [0, 2, 3], "{names:?}");
    assert_eq!(idx(LoadIdx::V2_6_32, Idle), [0, 0, 2]);
    assert_eq!(idx(LoadIdx::V2_6_32, NewlyIdle), [0, 0, 0]);
    // 2.6.31: the node level's newidle_idx is 2.
    assert_eq!(idx(LoadIdx::V2_6_31, NewlyIdle), [0, 0, 2]);
    // From 5.0 every pass reads the current load.
    assert_eq!(idx(LoadIdx::None, Busy), [0, 0, 0]);
}
