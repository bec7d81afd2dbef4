//! Shared set-up of the engine's integration tests: one simulation with the default
//! configuration, a profile without run-to-run noise and the prev-CPU policy (tasks stay
//! where they were unless the balancer moves them).

use schedlab_engine::policy::PrevCpu;
use schedlab_engine::{
    CfsBalancer, EndReason, MachineProfile, SchedConfig, SimOptions, Simulation, Workload,
};
use schedlab_topo::Topology;
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
