//! Shared helpers of the integration tests: small machines, a simple work-conserving
//! placement policy (the era policies live in schedlab-policies, which this crate must not
//! depend on), and a run-to-result helper.
#![allow(dead_code)]

use schedlab_engine::policy::{Hints, PlacementPolicy, PlacementRecord, SchedView, WakeCtx};
use schedlab_engine::{
    CfsBalancer, EndReason, MachineProfile, SchedConfig, SimOptions, Simulation,
};
use schedlab_metrics::BenchResult;
use schedlab_topo::{CpuId, Topology};
use schedlab_workloads::{Instance, WorkloadError, instantiate, parse_spec};
use std::sync::Arc;

/// 4 CPUs: 1 node, 2 LLCs of 2 cores, no SMT.
pub fn quad() -> Topology {
    schedlab_topo::regular("quad", "test", 1, 2, 2, 1, false).unwrap()
}

/// 8 CPUs: 2 nodes of one LLC of 4 cores each.
pub fn two_nodes() -> Topology {
    schedlab_topo::regular("2n8c", "test", 2, 1, 4, 1, false).unwrap()
}

/// Wakeups: prev if idle, else the waker's CPU if idle, else the first idle allowed CPU,
/// else prev. Forks: the allowed CPU with the fewest running and pending tasks.
#[derive(Clone, Debug, Default)]
pub struct IdleFirst;

impl PlacementPolicy for IdleFirst {
    fn name(&self) -> String {
        "idle-first".into()
    }
    fn select_task_rq(
        &mut self,
        ctx: &WakeCtx,
        view: &SchedView<'_>,
        _h: &mut Hints,
        _rec: &mut PlacementRecord,
    ) -> CpuId {
        let allowed = view.allowed(ctx.wakee);
        if ctx.is_fork() {
            return allowed
                .iter()
                .min_by_key(|&c| (view.nr_running(c) + u32::from(!view.available_idle(c)), c))
                .unwrap_or(ctx.prev_cpu);
        }
        for c in [ctx.prev_cpu, ctx.waker_cpu] {
            if allowed.contains(c) && view.available_idle(c) {
                return c;
            }
        }
        allowed
            .iter()
            .find(|&c| view.available_idle(c))
            .unwrap_or(ctx.prev_cpu)
    }
}

/// Runs an instance on `topo` with [`IdleFirst`] and the CFS balancer.
pub fn run_instance(inst: &Instance, topo: &Topology, seed: u64) -> (Simulation, EndReason) {
    let cfg = SchedConfig::default();
    let bal = CfsBalancer::new(cfg.tunables.migration_cost_ns, cfg.tunables.tick_ns());
    let mut sim = Simulation::new(
        Arc::new(topo.clone()),
        MachineProfile::default(),
        cfg,
        Box::new(IdleFirst),
        Box::new(bal),
        inst.workload.clone(),
        SimOptions {
            seed,
            max_events: Some(1_000_000_000),
            ..Default::default()
        },
    )
    .unwrap();
    let end = sim.run();
    (sim, end)
}

/// The run seed: `SCHEDLAB_TEST_SEED` or 1 (to check that the tests' bounds hold for others).
pub fn seed() -> u64 {
    std::env::var("SCHEDLAB_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// Parses, instantiates, runs and reads back one spec.
pub fn run_spec(
    spec: &str,
    topo: &Topology,
) -> Result<(BenchResult, Simulation, Instance), WorkloadError> {
    let inst = instantiate(&parse_spec(spec)?, topo)?;
    let (sim, end) = run_instance(&inst, topo, seed());
    let r = inst.result(&sim, &end)?;
    Ok((r, sim, inst))
}

/// The value of metric `name` (panics with the result if absent).
pub fn val(r: &BenchResult, name: &str) -> f64 {
    r.metric(name)
        .unwrap_or_else(|| panic!("no metric {name} in {r:?}"))
        .value
}
