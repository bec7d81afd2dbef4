//! CFS-1, 2.6.23-2.6.31 (preset 2.6.30): `select_task_rq_fair` picks the lowest domain
//! spanning waker and prev, asks `wake_affine` (the avg_overlap version of 2.6.25-2.6.31),
//! falls back to passive balancing, and lets `wake_idle` prefer an idle SMT sibling.

use crate::linux::{fork_exec, half_imb, tl_per_task};
use crate::machine::Machine;
use crate::scan::Scan;
use crate::switches::Settings;
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::{Affine, Step};
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, SchedDomain};

/// `select_task_rq_fair` of 2.6.23-2.6.31 (CFS-1, until the merged walk of 2.6.32): forks
/// and execs take the slow path; a wakeup asks `wake_affine` on the lowest domain spanning
/// waker and prev, then passive balancing, then `wake_idle` around the chosen CPU.
/// Reconstructed \[M\]: SD_WAKE_BALANCE (passive balancing) assumed on every non-NUMA level.
pub(crate) fn select_task_rq_fair<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    ctx: &WakeCtx,
) -> CpuId {
    if !ctx.is_ttwu() {
        return fork_exec(sc, s.era, ctx, false);
    }
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    let idle_step = |sc: &mut Scan<'_, M>, c: CpuId| -> CpuId {
        sc.target(c);
        let r = if s.select_idle_sibling {
            wake_idle(sc, c)
        } else {
            (c, Step::Target)
        };
        sc.done(r)
    };
    if prev == this {
        return idle_step(sc, prev);
    }
    let m = sc.m;
    let this_sd = m.domains().lowest_spanning(this, prev);
    let Some(sd) = this_sd.filter(|_| sc.allowed(this) && s.wake_affine) else {
        sc.affine(if s.wake_affine {
            Affine::NoDomain
        } else {
            Affine::Declined
        });
        return idle_step(sc, prev);
    };
    if wake_affine(sc, s, ctx, sd) {
        sc.target(this);
        return sc.done((this, Step::Target));
    }
    // Passive balancing: pull when the waker's CPU is below prev by half the imbalance
    // (SD_WAKE_BALANCE assumed on every non-NUMA level [M]), on the same loads.
    if !sd.has(flags::NUMA) && s.affine_wakeups {
        let imb = half_imb(sd);
        let idx = s.era.load_idx().wake_index(sd);
        let (load, this_load) = (
            m.source_load(prev, idx) as i64,
            m.target_load(this, idx) as i64,
        );
        if imb * this_load <= 100 * load {
            sc.affine(Affine::PulledWeight);
            sc.loads(imb * this_load, 100 * load);
            sc.target(this);
            return sc.done((this, Step::Target));
        }
    }
    idle_step(sc, prev)
}

/// 2.6.25-2.6.31: sync is dropped when either avg_overlap exceeds migration_cost;
/// passes on "balanced" or on the `tl_per_task` clause. The loads are 2.6.31's
/// `source_load(prev, wake_idx)` and `target_load(this, wake_idx)` with `wake_idx` 1 above
/// SMT: the previous tick's load, biased against the move.
pub(crate) fn wake_affine<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    ctx: &WakeCtx,
    sd: &SchedDomain,
) -> bool {
    let m = sc.m;
    if !sd.has(flags::WAKE_AFFINE) || !s.affine_wakeups {
        sc.affine(Affine::Declined);
        return false;
    }
    let (this, prev, p) = (ctx.waker_cpu, ctx.prev_cpu, ctx.wakee);
    let mc = m.migration_cost_ns();
    let mut sync = ctx.sync();
    if let (true, Some(w)) = (sync, ctx.waker)
        && (m.avg_overlap(w) > mc || m.avg_overlap(p) > mc)
    {
        sync = false;
    }
    let idx = s.era.load_idx().wake_index(sd);
    let load = m.source_load(prev, idx) as i64;
    let mut tl = m.target_load(this, idx) as i64;
    if let (true, Some(w)) = (sync, ctx.waker) {
        tl -= m.weight(w) as i64;
    }
    let wp = m.weight(p) as i64;
    let imb = half_imb(sd);
    let (this_eff, prev_eff) = (100 * (tl + wp), imb * load);
    sc.loads(this_eff, prev_eff);
    let balanced = this_eff <= prev_eff;
    if sync && balanced {
        return sc.decide(true, Affine::PulledSync);
    }
    let pulled =
        balanced || (tl <= load && tl + m.target_load(prev, idx) as i64 <= tl_per_task(m, this));
    sc.decide(pulled, Affine::PulledWeight)
}

/// 2.6.30 `wake_idle`: a busy target (more than one task) is kept; otherwise an idle SMT
/// sibling is preferred (`SD_WAKE_IDLE` was set on the SMT level only).
pub(crate) fn wake_idle<M: Machine>(sc: &mut Scan<'_, M>, cpu: CpuId) -> (CpuId, Step) {
    if sc.idle(cpu) {
        return (cpu, Step::TargetIdle);
    }
    if sc.m.nr_running(cpu) > 1 {
        return (cpu, Step::Target);
    }
    let m = sc.m;
    for sd in m.domains().of(cpu) {
        if !sd.has(flags::SHARE_CPUCAPACITY) {
            break;
        }
        for i in sd.span.iter() {
            if i != cpu && sc.allowed(i) && sc.idle(i) {
                return (i, Step::IdleSmt);
            }
        }
    }
    (cpu, Step::Fallback)
}
