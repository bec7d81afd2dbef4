//! Shared set-up of the engine's integration tests: one simulation with the default
//! configuration, a profile without run-to-run noise and the prev-CPU policy (tasks stay
//! where they were unless the balancer moves them), and the pinned ping-pong pair several of
//! them time. Not every test binary uses every helper.
#![allow(dead_code)]

use schedlab_engine::policy::PrevCpu;
use schedlab_engine::{
    CfsBalancer, ChannelKind, Dist, EndReason, MachineProfile, Op, SchedConfig, SimOptions,
    Simulation, TaskSpec, Workload,
};
use schedlab_topo::{CpuId, CpuSet, Topology};
use std::sync::Arc;

/// The balancer of the default configuration, to adjust before [`run_to_exit`].
pub fn balancer() -> CfsBalancer {
    let cfg = SchedConfig::default();
    CfsBalancer::new(cfg.tunables.migration_cost_ns, cfg.tunables.tick_ns())
}

/// Runs `w` with invariant checks (and a trace when asked) and asserts every task exited.
pub fn run_to_exit(topo: Topology, bal: CfsBalancer, w: Workload, trace: bool) -> Simulation {
    let mut profile = MachineProfile::default();
    profile.cpu.jitter = 0.0;
    let mut sim = Simulation::new(
        Arc::new(topo),
        profile,
        SchedConfig::default(),
        Box::new(PrevCpu),
        Box::new(bal),
        w,
        SimOptions {
            check_invariants: true,
            trace,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(sim.run(), EndReason::AllExited);
    sim
}

/// 4 CPUs, 2 LLCs of 2 cores (no SMT).
pub fn core2quad() -> Arc<Topology> {
    Arc::new(schedlab_topo::regular("core2quad", "test", 1, 2, 2, 1, false).unwrap())
}

/// The default profile without run-to-run noise.
pub fn exact() -> MachineProfile {
    let mut p = MachineProfile::default();
    p.cpu.jitter = 0.0;
    p
}

/// A ping-pong of `loops` round trips over two channels of `kind` on [`core2quad`], A
/// pinned to `ca`, B to `cb`.
pub fn pingpong(kind: ChannelKind, loops: u64, ca: usize, cb: usize) -> Workload {
    let mut w = Workload::new("pair");
    let p1 = w.channel(kind, "p1");
    let p2 = w.channel(kind, "p2");
    let send = |ch| Op::Send {
        ch,
        bytes: Dist::Const(4),
    };
    let mut a = TaskSpec::new(
        "a",
        vec![Op::Loop(loops), send(p1), Op::Recv { ch: p2 }, Op::EndLoop],
    );
    let mut b = TaskSpec::new(
        "b",
        vec![Op::Loop(loops), Op::Recv { ch: p1 }, send(p2), Op::EndLoop],
    );
    a.affinity = Some(CpuSet::from_cpus(4, [ca].map(CpuId::new)));
    b.affinity = Some(CpuSet::from_cpus(4, [cb].map(CpuId::new)));
    w.spawn(a);
    w.spawn(b);
    w
}

/// Runs `w` on [`core2quad`] with `profile`, the default configuration and balancer, with
/// invariant checks, and asserts every task exited.
pub fn run_on_core2quad(profile: MachineProfile, w: Workload) -> Simulation {
    let cfg = SchedConfig::default();
    let bal = CfsBalancer::new(cfg.tunables.migration_cost_ns, cfg.tunables.tick_ns());
    let mut sim = Simulation::new(
        core2quad(),
        profile,
        cfg,
        Box::new(PrevCpu),
        Box::new(bal),
        w,
        SimOptions {
            seed: 1,
            check_invariants: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(sim.run(), EndReason::AllExited);
    sim
}

/// The `(time, destination CPU)` of every task move in the trace of a run made with
/// `trace: true` (wakeup and balancer moves alike).
pub fn moves(sim: &mut Simulation) -> Vec<(u64, u32)> {
    sim.take_trace()
        .expect("the run was traced")
        .events
        .iter()
        .filter_map(|e| match e {
            schedlab_trace::TraceEvent::MigrateTask {
                ts_ns, dest_cpu, ..
            } => Some((*ts_ns, *dest_cpu)),
            _ => None,
        })
        .collect()
}
