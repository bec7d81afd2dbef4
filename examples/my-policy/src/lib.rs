//! An example placement policy written outside schedlab's built-ins: **SyncLocal**.
//!
//! The rule, in three steps (each recorded in the [`PlacementRecord`] so traces explain it):
//!
//! 1. the *target* is the waker's CPU for a sync wakeup (the waker is about to sleep), else
//!    the task's previous CPU; forks start from the parent's CPU;
//! 2. if the target is idle, take it (`target_idle`);
//! 3. otherwise take the first idle allowed CPU of the target's LLC, scanning from the target
//!    (`idle_cpu`); if there is none, stay on the target (`fallback`).
//!
//! Every CPU whose state the scan reads goes through the engine's scan helper,
//! [`SchedView::idle_counted`], which counts it in `rec.examined` (inside the waker's LLC) or
//! `rec.examined_remote`; the engine charges the waker the machine profile's scan cost for
//! each, exactly as it does for the built-in kernel policies.
//!
//! Plug it in with [`schedlab_engine::Simulation::new`], next to any `SchedConfig` and
//! balancer (see `tests/run.rs`).

use schedlab_engine::policy::{Affine, Hints, Step};
use schedlab_engine::{PlacementPolicy, PlacementRecord, SchedView, WakeCtx};
use schedlab_topo::CpuId;

/// Sync wakeups go to the waker's CPU or an idle CPU sharing its cache; others stay near prev.
#[derive(Clone, Debug, Default)]
pub struct SyncLocal;

impl PlacementPolicy for SyncLocal {
    fn name(&self) -> String {
        "sync-local".into()
    }

    fn select_task_rq(
        &mut self,
        ctx: &WakeCtx,
        view: &SchedView<'_>,
        _hints: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId {
        let allowed = view.allowed(ctx.wakee);
        let pull = ctx.is_ttwu() && ctx.sync() && allowed.contains(ctx.waker_cpu);
        let target = if pull { ctx.waker_cpu } else { ctx.prev_cpu };
        rec.affine = if pull {
            Affine::PulledSync
        } else {
            Affine::NotAsked
        };
        rec.target = Some(target);
        let topo = view.topo();
        // Every read of another CPU is counted (and charged to the waker) by the engine's
        // scan helper.
        let probe = |c: CpuId, rec: &mut PlacementRecord| view.idle_counted(ctx.waker_cpu, c, rec);
        if probe(target, rec) {
            rec.step = Step::TargetIdle;
            return target;
        }
        for c in topo.llc_span(target).iter_wrap(target) {
            if c != target && allowed.contains(c) && probe(c, rec) {
                rec.step = Step::IdleCpu;
                return c;
            }
        }
        rec.step = Step::Fallback;
        target
    }
}
