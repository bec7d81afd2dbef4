//! What a wakeup costs its waker by the path `ttwu_queue()` takes: onto an idle CPU (an IPI
//! ends the idle) `remote_wake_ns`, onto a busy CPU of the same LLC (its runqueue lock, no
//! IPI) `remote_busy_wake_ns` where the profile has it.

mod common;

use common::{exact, pingpong, run_on_core2quad as run};
use schedlab_engine::{ChannelKind, Dist, Op, Simulation, TaskSpec, Workload};
use schedlab_topo::{CpuId, CpuSet};

const LOOPS: u64 = 1000;

/// The pipe pair on CPUs 0 and 1 (one LLC) with a spinner on CPU 1: B is always woken onto
/// a busy CPU, A onto its idle one.
fn pair_beside_a_spinner() -> Workload {
    let mut w = pingpong(ChannelKind::pipe(), LOOPS, 0, 1);
    let mut spin = TaskSpec::new("spin", vec![Op::Compute(Dist::Const(200_000_000))]);
    spin.affinity = Some(CpuSet::from_cpus(4, [CpuId::new(1)]));
    w.spawn(spin);
    w
}

fn with_busy_cost(busy: u64) -> Simulation {
    let mut p = exact();
    p.wakeup.remote_wake_ns = 9_000;
    p.wakeup.remote_busy_wake_ns = busy;
    run(p, pair_beside_a_spinner())
}

#[test]
fn a_wakeup_onto_a_busy_cpu_costs_the_waker_the_busy_path() {
    let measured = with_busy_cost(2_000);
    let c = measured.counters();
    let busy = c.wakeups_remote - c.wakeups_to_idle;
    assert!(
        busy >= LOOPS - 2 && c.wakeups_to_idle >= LOOPS - 2,
        "{}",
        c.to_text()
    );
    assert_eq!(
        c.wake_remote_cost_ns,
        c.wakeups_to_idle * 9_000 + busy * 2_000,
        "{}",
        c.to_text()
    );
    // Not measured (0): every remote wakeup costs remote_wake_ns, as before.
    let unmeasured = with_busy_cost(0);
    let u = unmeasured.counters();
    assert_eq!(
        u.wake_remote_cost_ns,
        u.wakeups_remote * 9_000,
        "{}",
        u.to_text()
    );
    // A's wake of B delays B's arrival by the waker's work: each round trip is shorter by
    // the difference once.
    let per_trip = |s: &Simulation| {
        let t = s.counters();
        t.busy_ns[0] as f64 / LOOPS as f64
    };
    let saved = per_trip(&unmeasured) - per_trip(&measured);
    assert!(
        (saved - 7_000.0).abs() < 700.0,
        "CPU 0 busy {saved:.0} ns less per round trip, expected 7000"
    );
}
