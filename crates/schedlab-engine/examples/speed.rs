//! Quick engine speed check with a minimal idle-sibling policy (the CLI's `schedlab bench`
//! uses the real era presets): `cargo run --release -p schedlab-engine --example speed`.

use schedlab_engine::bench::scenarios;
use schedlab_engine::policy::{Hints, PlacementRecord, Step};
use schedlab_engine::{
    CfsBalancer, MachineProfile, PlacementPolicy, SchedConfig, SchedView, SimOptions, Simulation,
    WakeCtx,
};
use schedlab_topo::CpuId;
use std::sync::Arc;
use std::time::Instant;

struct MiniSis;
impl PlacementPolicy for MiniSis {
    fn name(&self) -> String {
        "mini-sis".into()
    }
    fn select_task_rq(
        &mut self,
        ctx: &WakeCtx,
        v: &SchedView<'_>,
        _: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId {
        let target = if ctx.sync() && v.nr_running(ctx.waker_cpu) == 1 {
            ctx.waker_cpu
        } else {
            ctx.prev_cpu
        };
        if v.idle(target) {
            rec.step = Step::TargetIdle;
            return target;
        }
        for c in v.topo().llc_span(target).iter_wrap(target) {
            rec.examined += 1;
            if v.idle(c) {
                rec.step = Step::IdleCpu;
                return c;
            }
        }
        rec.step = Step::Fallback;
        target
    }
}

fn main() {
    let only = std::env::args().nth(1);
    for s in scenarios() {
        if let Some(o) = &only
            && !s.name.contains(o.as_str())
        {
            continue;
        }
        let cfg = SchedConfig::default();
        let bal = CfsBalancer::new(cfg.tunables.migration_cost_ns, cfg.tunables.tick_ns());
        let t0 = Instant::now();
        let mut sim = Simulation::new(
            Arc::new(s.topo),
            MachineProfile::default(),
            cfg,
            Box::new(MiniSis),
            Box::new(bal),
            s.workload,
            SimOptions::default(),
        )
        .unwrap();
        let end = sim.run();
        let wall = t0.elapsed().as_secs_f64();
        let c = sim.counters();
        println!(
            "{:<22} {:>10} events {:>8.2} M ev/s  {:>8.2} sim-s/s  {:?}  max queue {}",
            s.name,
            c.events,
            c.events as f64 / wall / 1e6,
            c.elapsed_ns as f64 / 1e9 / wall,
            end,
            sim.max_queue_len()
        );
    }
}
