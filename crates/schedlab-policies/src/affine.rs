//! `wake_affine`: should the wakee be pulled to the waker's CPU? One function per era
//! (linux-wakeup.md §4). Each records its verdict and, where there is arithmetic, the two
//! numbers it compared (`this_eff`, `prev_eff`) in the [`PlacementRecord`].
//!
//! Without group scheduling `effective_load(cpu, wl, wg)` is `wl`, so the kernel's
//! `effective_load` terms reduce to plain weights here.

use crate::era::Era;
use crate::machine::Machine;
use crate::scan::Scan;
use crate::switches::Settings;
use schedlab_engine::policy::Affine;
use schedlab_engine::{PlacementRecord, WakeCtx};
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, SchedDomain};

/// Half of the domain's imbalance percentage above 100 (`100 + (pct - 100) / 2`).
pub(crate) fn half_imb(sd: &SchedDomain) -> i64 {
    100 + (sd.imbalance_pct as i64 - 100) / 2
}

fn decide(rec: &mut PlacementRecord, pulled: bool, how: Affine) -> bool {
    rec.affine = if pulled { how } else { Affine::KeptWeight };
    pulled
}

fn tl_per_task<M: Machine>(m: &M, cpu: CpuId) -> i64 {
    let nr = m.nr_running(cpu) as i64;
    if nr > 0 {
        m.cpu_load(cpu) as i64 / nr
    } else {
        0
    }
}

/// 2.6.25-2.6.31 (§4.1): sync is dropped when either avg_overlap exceeds migration_cost;
/// passes on "balanced" or on the `tl_per_task` clause.
pub(crate) fn wake_affine_v1<M: Machine>(
    s: &Settings,
    ctx: &WakeCtx,
    m: &M,
    sd: &SchedDomain,
    rec: &mut PlacementRecord,
) -> bool {
    if !sd.has(flags::WAKE_AFFINE) || !s.affine_wakeups {
        rec.affine = Affine::Declined;
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
    let load = m.cpu_load(prev) as i64;
    let mut tl = m.cpu_load(this) as i64;
    if let (true, Some(w)) = (sync, ctx.waker) {
        tl -= m.weight(w) as i64;
    }
    let wp = m.weight(p) as i64;
    let imb = half_imb(sd);
    let (this_eff, prev_eff) = (100 * (tl + wp), imb * load);
    rec.affine_loads = Some((this_eff, prev_eff));
    let balanced = this_eff <= prev_eff;
    if sync && balanced {
        return decide(rec, true, Affine::PulledSync);
    }
    let pulled = balanced || (tl <= load && tl + load <= tl_per_task(m, this));
    decide(rec, pulled, Affine::PulledWeight)
}

/// 2.6.32-2.6.33 (§4.2) and, with `overlap = false`, 2.6.34-3.15 (§4.3): an empty "this"
/// runqueue is always balanced; SYNC_LESS/SYNC_MORE adjust the sync hint by avg_overlap.
/// `this_cpu` is the CPU whose load is weighed: the waker's CPU, or with AFFINE_TARGET
/// (§15.2, reconstruction) the target chosen by select_idle_sibling.
pub(crate) fn wake_affine_v2<M: Machine>(
    s: &Settings,
    ctx: &WakeCtx,
    m: &M,
    sd: &SchedDomain,
    this_cpu: CpuId,
    overlap: bool,
    rec: &mut PlacementRecord,
) -> bool {
    let (prev, p) = (ctx.prev_cpu, ctx.wakee);
    let mut sync = ctx.sync();
    if overlap && let Some(w) = ctx.waker {
        let mc = m.migration_cost_ns();
        let (ow, op) = (m.avg_overlap(w), m.avg_overlap(p));
        if sync && s.sync_less && (ow > mc || op > mc) {
            sync = false;
        }
        if !sync && s.sync_more && ow < mc && op < mc {
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
    rec.affine_loads = Some((this_eff, prev_eff));
    let balanced = tl <= 0 || this_eff <= prev_eff;
    if sync && balanced {
        return decide(rec, true, Affine::PulledSync);
    }
    let pulled = balanced || (tl <= load && tl + load <= tl_per_task(m, this_cpu));
    decide(rec, pulled, Affine::PulledWeight)
}

/// 3.16-4.12 (§4.4): capacity-scaled comparison, no per-task clause.
pub(crate) fn wake_affine_v4<M: Machine>(
    ctx: &WakeCtx,
    m: &M,
    sd: &SchedDomain,
    rec: &mut PlacementRecord,
) -> bool {
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
    rec.affine_loads = Some((this_eff, prev_eff));
    decide(rec, this_eff <= prev_eff, Affine::PulledWeight)
}

/// 4.14+ (§4.5): `wake_affine_idle` then `wake_affine_weight`; returns the chosen CPU.
pub(crate) fn wake_affine_v5<M: Machine>(
    s: &Settings,
    sc: &mut Scan<'_, M>,
    ctx: &WakeCtx,
    sd: &SchedDomain,
) -> CpuId {
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    if s.wa_idle
        && let Some(c) = wake_affine_idle(s.era, sc, ctx)
    {
        sc.rec.affine = if c == this {
            if sc.rec.affine == Affine::PulledSync {
                Affine::PulledSync
            } else {
                Affine::PulledIdle
            }
        } else {
            Affine::KeptIdle
        };
        return c;
    }
    if s.wa_weight {
        if wake_affine_weight(s, sc, ctx, sd) {
            return this;
        }
        return prev;
    }
    sc.rec.affine = Affine::Declined;
    prev
}

fn wake_affine_idle<M: Machine>(era: Era, sc: &mut Scan<'_, M>, ctx: &WakeCtx) -> Option<CpuId> {
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    let m = sc.m;
    if m.idle(this) && m.topo().cpus_share_cache(this, prev) {
        return Some(if sc.idle(prev) { prev } else { this });
    }
    let nr = if era >= Era::V6_12 {
        m.nr_runnable(this)
    } else {
        m.nr_running(this)
    };
    if ctx.sync() && nr == 1 {
        sc.rec.affine = Affine::PulledSync;
        return Some(this);
    }
    // The final "prev is idle" clause arrived in the 5.x series [M].
    if era >= Era::V5_13 && sc.idle(prev) {
        return Some(prev);
    }
    None
}

fn wake_affine_weight<M: Machine>(
    s: &Settings,
    sc: &mut Scan<'_, M>,
    ctx: &WakeCtx,
    sd: &SchedDomain,
) -> bool {
    let (this, prev, p) = (ctx.waker_cpu, ctx.prev_cpu, ctx.wakee);
    let m = sc.m;
    let mut this_eff = m.cpu_load(this) as i64;
    let sync = ctx.sync();
    if let (true, Some(w)) = (sync, ctx.waker) {
        let cur = m.task_load(w) as i64;
        if cur > this_eff {
            sc.rec.affine = Affine::PulledSync;
            return true;
        }
        this_eff -= cur;
    }
    let tl = m.task_load(p) as i64;
    this_eff += tl;
    if s.wa_bias {
        this_eff *= 100;
    }
    this_eff *= m.capacity(prev) as i64;
    let mut prev_eff = m.cpu_load(prev) as i64 - tl;
    if s.wa_bias {
        prev_eff *= half_imb(sd);
    }
    prev_eff *= m.capacity(this) as i64;
    if sync {
        prev_eff += 1;
    }
    sc.rec.affine_loads = Some((this_eff, prev_eff));
    decide(sc.rec, this_eff < prev_eff, Affine::PulledWeight)
}
