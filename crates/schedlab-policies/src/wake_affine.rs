//! `wake_affine` of every era, oldest first: may the wakee be pulled to the waker's CPU?
//!
//! | function | kernels | test |
//! |---|---|---|
//! | `wake_affine_2_6_25` | 2.6.25-2.6.31 | avg_overlap drops sync; `source_load`/`target_load` at `wake_idx`, the `tl_per_task` clause |
//! | `wake_affine_2_6_32` | 2.6.32-3.15 | SYNC_LESS/SYNC_MORE on avg_overlap (2.6.32-2.6.33), an empty waker CPU always balanced |
//! | `wake_affine_3_16` | 3.16-4.13 | capacity-scaled comparison, no per-task clause |
//! | `wake_affine_4_14` | 4.14 on | [`crate::wake_affine_idle`] then [`crate::wake_affine_weight`] (WA_IDLE, WA_WEIGHT, WA_BIAS) |

use crate::load::{half_imb, tl_per_task};
use crate::machine::Machine;
use crate::scan::Scan;
use crate::settings::Settings;
use crate::switches::sw;
use crate::wake_affine_idle::wake_affine_idle;
use crate::wake_affine_weight::wake_affine_weight;
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::Affine;
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, SchedDomain};

/// 2.6.25-2.6.31: sync is dropped when either avg_overlap exceeds migration_cost;
/// passes on "balanced" or on the `tl_per_task` clause. The loads are 2.6.31's
/// `source_load(prev, wake_idx)` and `target_load(this, wake_idx)` with `wake_idx` 1 above
/// SMT: the previous tick's load, biased against the move.
pub(crate) fn wake_affine_2_6_25<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    ctx: &WakeCtx,
    sd: &SchedDomain,
) -> bool {
    let m = sc.m;
    if !sd.has(flags::WAKE_AFFINE) || !s.on(sw!("AFFINE_WAKEUPS")) {
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

/// 2.6.32-2.6.33 and, with `overlap = false`, 2.6.34-3.15: an empty "this"
/// runqueue is always balanced; SYNC_LESS/SYNC_MORE adjust the sync hint by avg_overlap.
/// `this_cpu` is the CPU whose load is weighed: the waker's CPU, or with AFFINE_TARGET
/// (Lin Ming, January 2010; a reconstruction) the target chosen by select_idle_sibling.
pub(crate) fn wake_affine_2_6_32<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    ctx: &WakeCtx,
    sd: &SchedDomain,
    this_cpu: CpuId,
    overlap: bool,
) -> bool {
    let m = sc.m;
    let (prev, p) = (ctx.prev_cpu, ctx.wakee);
    let mut sync = ctx.sync();
    if overlap && let Some(w) = ctx.waker {
        let mc = m.migration_cost_ns();
        let (ow, op) = (m.avg_overlap(w), m.avg_overlap(p));
        if sync && s.on(sw!("SYNC_LESS")) && (ow > mc || op > mc) {
            sync = false;
        }
        if !sync && s.on(sw!("SYNC_MORE")) && ow < mc && op < mc {
            sync = true;
        }
    }
    let load = m.cpu_load(prev) as i64;
    let mut tl = m.cpu_load(this_cpu) as i64;
    // The waker's weight leaves the CPU it runs on; with AFFINE_TARGET pointing elsewhere
    // there is nothing to subtract.
    if let (true, Some(w)) = (sync, ctx.waker)
        && this_cpu == ctx.waker_cpu
    {
        tl -= m.weight(w) as i64;
    }
    let wp = m.weight(p) as i64;
    let imb = half_imb(sd);
    let (this_eff, prev_eff) = (100 * (tl + wp), imb * load);
    sc.loads(this_eff, prev_eff);
    let balanced = tl <= 0 || this_eff <= prev_eff;
    if sync && balanced {
        return sc.decide(true, Affine::PulledSync);
    }
    let pulled = balanced || (tl <= load && tl + load <= tl_per_task(m, this_cpu));
    sc.decide(pulled, Affine::PulledWeight)
}

/// 3.16-4.13: capacity-scaled comparison, no per-task clause.
pub(crate) fn wake_affine_3_16<M: Machine>(
    sc: &mut Scan<'_, M>,
    ctx: &WakeCtx,
    sd: &SchedDomain,
) -> bool {
    let m = sc.m;
    let (this, prev, p) = (ctx.waker_cpu, ctx.prev_cpu, ctx.wakee);
    let load = m.cpu_load(prev) as i64;
    let mut this_load = m.cpu_load(this) as i64;
    if let (true, Some(w)) = (ctx.sync(), ctx.waker) {
        this_load -= m.weight(w) as i64;
    }
    let mut this_eff = 100 * m.capacity(prev) as i64;
    let mut prev_eff = half_imb(sd) * m.capacity(this) as i64;
    if this_load > 0 {
        this_eff *= this_load + m.weight(p) as i64;
        prev_eff *= load;
    }
    sc.loads(this_eff, prev_eff);
    sc.decide(this_eff <= prev_eff, Affine::PulledWeight)
}

/// 4.14 on (WA_IDLE, WA_WEIGHT, WA_BIAS: d153b153446f, f2cdd9cc6c97): `wake_affine_idle`
/// then `wake_affine_weight`; returns the chosen CPU.
pub(crate) fn wake_affine_4_14<M: Machine>(
    s: &Settings,
    sc: &mut Scan<'_, M>,
    ctx: &WakeCtx,
    sd: &SchedDomain,
) -> CpuId {
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    if s.on(sw!("WA_IDLE"))
        && let Some(c) = wake_affine_idle(s, sc, ctx)
    {
        let verdict = if c != this {
            Affine::KeptIdle
        } else if sc.affine_so_far() == Affine::PulledSync {
            Affine::PulledSync
        } else {
            Affine::PulledIdle
        };
        sc.affine(verdict);
        return c;
    }
    if s.on(sw!("WA_WEIGHT")) {
        if wake_affine_weight(s, sc, ctx, sd) {
            return this;
        }
        return prev;
    }
    sc.affine(Affine::Declined);
    prev
}
