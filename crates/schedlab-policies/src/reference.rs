//! Reference policies to compare the kernel eras against: `prev`, `waker` (the engine's
//! [`schedlab_engine::policy::PrevCpu`] and [`schedlab_engine::policy::WakerCpu`]),
//! [`Idlest`] and [`RandomCpu`].

use crate::machine::Machine;
use crate::scan::Scan;
use schedlab_engine::policy::{Hints, Step};
use schedlab_engine::rng::{SimRng, Stream, stream, unit_f64};
use schedlab_engine::{PlacementPolicy, PlacementRecord, SchedView, WakeCtx};
use schedlab_topo::CpuId;

/// prev if idle, else the first idle allowed CPU of the whole machine scanning from prev,
/// else the allowed CPU with the fewest runnable tasks (then the lowest load). Looks at
/// every CPU it needs to, and pays for it.
#[derive(Clone, Debug, Default)]
pub struct Idlest;

impl Idlest {
    /// The decision on any [`Machine`].
    pub fn select<M: Machine>(&mut self, ctx: &WakeCtx, m: &M, rec: &mut PlacementRecord) -> CpuId {
        let mut sc = Scan {
            m,
            this: ctx.waker_cpu,
            p: ctx.wakee,
            rec,
        };
        sc.step(Step::Reference);
        sc.target(ctx.prev_cpu);
        let allowed = m.allowed(ctx.wakee).clone();
        let mut least: Option<(u32, u64, CpuId)> = None;
        for c in allowed.iter_wrap(ctx.prev_cpu) {
            if sc.idle(c) {
                return c;
            }
            let key = (m.nr_running(c), m.cpu_load(c), c);
            if least.is_none_or(|(n, l, _)| (key.0, key.1) < (n, l)) {
                least = Some(key);
            }
        }
        least.map_or(ctx.prev_cpu, |(_, _, c)| c)
    }
}

impl PlacementPolicy for Idlest {
    fn name(&self) -> String {
        "idlest".into()
    }
    fn select_task_rq(
        &mut self,
        ctx: &WakeCtx,
        view: &SchedView<'_>,
        _: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId {
        self.select(ctx, view, rec)
    }
}

/// A uniformly random allowed CPU, from the run's seeded policy stream.
#[derive(Clone, Debug)]
pub struct RandomCpu {
    rng: SimRng,
}

impl RandomCpu {
    /// A policy drawing from `stream(seed, Stream::Policy)`.
    pub fn new(seed: u64) -> Self {
        RandomCpu {
            rng: stream(seed, Stream::Policy),
        }
    }

    /// The decision on any [`Machine`].
    pub fn select<M: Machine>(&mut self, ctx: &WakeCtx, m: &M, rec: &mut PlacementRecord) -> CpuId {
        rec.step = Step::Reference;
        let allowed = m.allowed(ctx.wakee);
        let n = allowed.count();
        if n == 0 {
            return ctx.prev_cpu;
        }
        let k = ((unit_f64(&mut self.rng) * n as f64) as usize).min(n - 1);
        allowed.iter().nth(k).unwrap_or(ctx.prev_cpu)
    }
}

impl PlacementPolicy for RandomCpu {
    fn name(&self) -> String {
        "random".into()
    }
    fn select_task_rq(
        &mut self,
        ctx: &WakeCtx,
        view: &SchedView<'_>,
        _: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId {
        self.select(ctx, view, rec)
    }
}
