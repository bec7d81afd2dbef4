//! CFS-2, 2.6.32-2.6.34 (presets 2.6.32, 2.6.33): the merged domain walk of
//! `select_task_rq_fair`, with the first `select_idle_sibling(p, sd, target)` (Galbraith,
//! a1f84a3ab8e0, 2.6.32) run inside the walk, and `wake_affine` with SYNC_LESS/SYNC_MORE
//! (whose overlap-free form CFS-3 keeps until 3.15). The debated RAMP and AFFINE_TARGET
//! variants (January 2010, against 2.6.33-rc) are reconstructions from their descriptions.

use crate::cfs2;
use crate::era::IdleSearch;
use crate::linux::{fork_exec, half_imb, tl_per_task};
use crate::machine::Machine;
use crate::rules;
use crate::scan::Scan;
use crate::slow::find_idlest_cpu;
use crate::switches::Settings;
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::{Affine, Step};
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, SchedDomain};

/// `select_task_rq_fair` of 2.6.32-2.6.34 (CFS-2: Peter Zijlstra's merged domain walk of
/// 2.6.32, until CFS-3's wake_affine-first order in 2.6.35): one walk up the domains finds
/// the affine domain, runs `select_idle_sibling` inside it (a1f84a3ab8e0) and remembers the
/// highest BALANCE_WAKE domain for the slow path. RAMP and AFFINE_TARGET (January 2010
/// proposals against 2.6.33-rc) are reconstructions from their descriptions.
pub(crate) fn select_task_rq_fair<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    ctx: &WakeCtx,
) -> CpuId {
    if !ctx.is_ttwu() {
        return fork_exec(sc, s.era, ctx, false);
    }
    let m = sc.m;
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    let mut want_affine = sc.allowed(this)
        && s.wake_affine
        && (!s.era.has(rules::AFFINE_WAKEUPS) || s.affine_wakeups);
    let package = matches!(s.era.idle_search(), IdleSearch::InWalk { package: true });
    let ramp = s.ramp && m.nr_running(this) == 1;
    let chain = m.domains().of(this);
    let mut cpu = this;
    let mut affine_sd = None;
    let mut wake_sd = None;
    let mut found: Option<Step> = None;
    let asked = want_affine;
    for (idx, tmp) in chain.iter().enumerate() {
        if !tmp.has(flags::LOAD_BALANCE) {
            continue;
        }
        if want_affine {
            let mut target = tmp.span.contains(prev).then_some(this);
            let enabled = if s.ramp {
                ramp && tmp.has(flags::SHARE_LLC)
            } else if package {
                package_level(m, tmp, this)
            } else {
                tmp.has(flags::SHARE_LLC)
            };
            if enabled && s.select_idle_sibling {
                let (t, st) = select_idle_sibling(sc, tmp, target, prev);
                if st.is_some() {
                    found = st;
                }
                target = t;
            }
            if let Some(t) = target {
                if tmp.has(flags::WAKE_AFFINE) {
                    affine_sd = Some(idx);
                    want_affine = false;
                }
                cpu = t;
            }
        }
        if tmp.has(flags::BALANCE_WAKE) {
            wake_sd = Some(idx);
        }
    }
    sc.target(cpu);
    if let Some(ai) = affine_sd {
        let step = found.unwrap_or(Step::Target);
        if ramp && found.is_some() {
            sc.affine(Affine::PulledSibling);
            return sc.done((cpu, step));
        }
        if cpu == prev {
            sc.affine(if found.is_some() {
                Affine::KeptIdle
            } else {
                Affine::NotAsked
            });
            return sc.done((cpu, step));
        }
        let load_cpu = if s.affine_target { cpu } else { this };
        if cfs2::wake_affine(sc, s, ctx, &chain[ai], load_cpu, true) {
            return sc.done((cpu, step));
        }
    } else {
        sc.affine(if !asked {
            Affine::Declined
        } else {
            Affine::NoDomain
        });
    }
    sc.target(prev);
    if let Some(wi) = wake_sd {
        let c = find_idlest_cpu(sc, s.era, this, wi, prev, flags::BALANCE_WAKE);
        return sc.done((c, Step::SlowPath));
    }
    sc.done((prev, Step::Target))
}

/// 2.6.32's SIS enabler: `SD_PREFER_SIBLING`, set at the package (CPU) level — modelled as
/// the lowest non-SMT, non-NUMA level covering this CPU's package \[M\].
pub(crate) fn package_level<M: Machine>(m: &M, sd: &SchedDomain, cpu: CpuId) -> bool {
    let topo = m.topo();
    !sd.has(flags::NUMA)
        && !sd.has(flags::SHARE_CPUCAPACITY)
        && topo.packages()[topo.cpu(cpu).package].is_subset(&sd.span)
}

/// 2.6.32-2.6.33 and, with `overlap = false`, 2.6.34-3.15: an empty "this"
/// runqueue is always balanced; SYNC_LESS/SYNC_MORE adjust the sync hint by avg_overlap.
/// `this_cpu` is the CPU whose load is weighed: the waker's CPU, or with AFFINE_TARGET
/// (Lin Ming, January 2010; a reconstruction) the target chosen by select_idle_sibling.
pub(crate) fn wake_affine<M: Machine>(
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
    sc.loads(this_eff, prev_eff);
    let balanced = tl <= 0 || this_eff <= prev_eff;
    if sync && balanced {
        return sc.decide(true, Affine::PulledSync);
    }
    let pulled = balanced || (tl <= load && tl + load <= tl_per_task(m, this_cpu));
    sc.decide(pulled, Affine::PulledWeight)
}

/// 2.6.32-2.6.33 (Galbraith, a1f84a3ab8e0): called inside the domain walk with `target` = the waker's CPU when
/// the domain spans prev, else none; tests `cfs_rq` emptiness, ignoring wakeups in flight.
/// Returns the new target and the step when it found an empty CPU.
pub(crate) fn select_idle_sibling<M: Machine>(
    sc: &mut Scan<'_, M>,
    sd: &SchedDomain,
    target: Option<CpuId>,
    prev: CpuId,
) -> (Option<CpuId>, Option<Step>) {
    if target == Some(sc.this) && sc.cfs_empty(prev) {
        return (Some(prev), Some(Step::PrevIdle));
    }
    for i in sd.span.iter() {
        if sc.allowed(i) && sc.cfs_empty(i) {
            return (Some(i), Some(Step::IdleCpu));
        }
    }
    (target, None)
}
