//! Runs SyncLocal on a small machine through the engine API: a pipe ping-pong pair and a
//! few CPU hogs on a 4-CPU box with two LLCs (a Core 2 Quad).

use my_policy::SyncLocal;
use schedlab_engine::{
    CfsBalancer, ChannelKind, Dist, EndReason, MachineProfile, Op, SchedConfig, SimOptions,
    Simulation, TaskSpec, Workload,
};
use std::sync::Arc;

fn workload() -> Workload {
    let mut w = Workload::new("pingpong+hogs");
    let a = w.channel(ChannelKind::pipe(), "a");
    let b = w.channel(ChannelKind::pipe(), "b");
    w.spawn(TaskSpec::new(
        "ping",
        vec![
            Op::Loop(500),
            Op::Send {
                ch: a,
                bytes: Dist::Const(64),
            },
            Op::Recv { ch: b },
            Op::EndLoop,
        ],
    ));
    w.spawn(TaskSpec::new(
        "pong",
        vec![
            Op::Loop(500),
            Op::Recv { ch: a },
            Op::Send {
                ch: b,
                bytes: Dist::Const(64),
            },
            Op::EndLoop,
        ],
    ));
    for i in 0..2 {
        w.spawn(TaskSpec::new(
            format!("hog{i}"),
            vec![Op::Loop(20), Op::Compute(Dist::Const(100_000)), Op::EndLoop],
        ));
    }
    w
}

#[test]
fn sync_local_runs_and_explains_itself() {
    let topo = Arc::new(schedlab_topo::regular("core2quad", "example", 1, 2, 2, 1, false).unwrap());
    let cfg = SchedConfig::default();
    let balancer = CfsBalancer::new(cfg.tunables.migration_cost_ns, cfg.tunables.tick_ns());
    let opts = SimOptions {
        seed: 1,
        check_invariants: true,
        ..Default::default()
    };
    let mut sim = Simulation::new(
        topo,
        MachineProfile::default(),
        cfg,
        Box::new(SyncLocal),
        Box::new(balancer),
        workload(),
        opts,
    )
    .expect("valid workload");
    assert_eq!(sim.run(), EndReason::AllExited);
    assert_eq!(sim.policy_name(), "sync-local");
    let c = sim.counters();
    // Pipe wakeups are sync: every one of them was pulled toward the waker.
    assert!(c.wakeups_sync > 100, "{}", c.to_text());
    let pulled = c
        .place_affine
        .iter()
        .find(|(k, _)| k == "pulled_sync")
        .map_or(0, |(_, n)| *n);
    assert!(pulled >= c.wakeups_sync, "{}", c.to_text());
    // Only the two documented steps and the fallback ever decide.
    for (step, _) in &c.place_steps {
        assert!(
            ["target_idle", "idle_cpu", "fallback"].contains(&step.as_str()),
            "unexpected step {step}"
        );
    }
    // The scans were paid for.
    assert!(
        c.cpus_examined > 0 && c.search_cost_ns > 0,
        "{}",
        c.to_text()
    );
}
