//! CFS-3, 2.6.35-4.2: `select_task_rq_fair` asks `wake_affine` for waker or prev first and
//! then searches around the choice with `select_idle_sibling(p, target)`: Suresh Siddha's
//! per-level scan (99bd5e2f245d, 2.6.35-3.1), Galbraith's idle buddies (970e178985ca,
//! 3.6-~3.8), then the LLC group scan of ~3.9 (in [`crate::cfs4`]). 3.12 adds
//! `record_wakee` and Michael Wang's `wake_wide` (62470419e993, 3.12-4.2). The 2015
//! WAKE_WIDE_IDLE / PREFER_IDLE_CPU variants (against 4.2) are reconstructions.

use crate::linux::{fork_exec, highest_with};
use crate::machine::Machine;
use crate::rules;
use crate::scan::Scan;
use crate::slow::find_idlest_cpu;
use crate::switches::Settings;
use crate::wakee::{buddies, flips, record_streak, record_wakee};
use crate::{cfs2, cfs4};
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::{Affine, Hints, Step};
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, CpuSet, SchedDomain};

/// `select_task_rq_fair` of 2.6.35-4.2 (CFS-3: Suresh Siddha's 99bd5e2f245d of 2.6.35, until
/// 4.3's beefed-up `wake_wide`, 63b0e9edceec, moved the wide test out of `wake_affine`):
/// `wake_affine` picks waker or prev (from 3.12 after `record_wakee` and the first
/// `wake_wide`, 62470419e993), then `select_idle_sibling` searches around the choice.
/// WAKEUP_BUDDY (2013), WAKE_WIDE_IDLE and PREFER_IDLE_CPU (2015) are reconstructions.
pub(crate) fn select_task_rq_fair<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    ctx: &WakeCtx,
    hints: &mut Hints,
) -> CpuId {
    if !ctx.is_ttwu() {
        return fork_exec(sc, s.era, ctx, false);
    }
    let m = sc.m;
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    if s.era.has(rules::RECORD_WAKEE) {
        record_wakee(s.era, ctx, m, hints);
    } else if s.wakeup_buddy {
        record_streak(ctx, hints);
    }
    let want_affine = s.wake_affine && sc.allowed(this);
    let chain = m.domains().of(this);
    let affine_sd = if want_affine {
        chain
            .iter()
            .find(|d| d.has(flags::WAKE_AFFINE) && d.span.contains(prev))
    } else {
        None
    };
    let against_4_2 = s.era.has(rules::AGAINST_4_2);
    let wide_idle = against_4_2 && (s.wake_wide_idle || s.wake_wide_idle_both);
    let mut wide = false;
    let mut target = prev;
    let mut pulled = false;
    match affine_sd {
        None => sc.affine(if want_affine {
            Affine::NoDomain
        } else {
            Affine::Declined
        }),
        Some(_) if this == prev => sc.affine(Affine::NotAsked),
        Some(sd) => {
            if s.era.has(rules::RECORD_WAKEE) && s.wake_wide {
                wide = wake_wide(ctx, m, hints)
                    || (s.wake_wide_idle_both && wake_wide_mirror(ctx, m, hints));
                sc.wide(wide);
            }
            if wide {
                sc.affine(Affine::WakeWide);
            } else if s.wakeup_buddy && !buddies(ctx, hints, s.wakeup_buddy_ref) {
                sc.affine(Affine::Declined);
            } else {
                pulled = if s.era.has(rules::CAPACITY_WAKE_AFFINE) {
                    cfs4::wake_affine(sc, ctx, sd)
                } else {
                    cfs2::wake_affine(sc, s, ctx, sd, this, false)
                };
                if pulled {
                    target = this;
                    if s.wakeup_buddy {
                        sc.affine(Affine::PulledBuddy);
                    }
                }
            }
        }
    }
    let (cpu, step) = crate::linux::select_idle_sibling(sc, s, hints, prev, target);
    if wide_idle && wide && !m.idle(cpu) {
        // WAKE_WIDE_IDLE: before stacking, any idle CPU of the wide span, from prev.
        let span = match wake_balance_domain(m, prev) {
            Some(i) => m.domains().of(prev)[i].span.clone(),
            None => m.topo().node_span(prev).clone(),
        };
        for c in span.iter_wrap(prev) {
            if sc.allowed(c) && sc.idle(c) {
                return sc.done((c, Step::WideIdle));
            }
        }
    }
    if against_4_2 && s.prefer_idle_cpu && !pulled && !m.idle(cpu) {
        // PREFER_IDLE_CPU: continue into find_idlest_group/cpu over the wake-balance span.
        let (idx, flag) = match wake_balance_domain(m, this) {
            Some(i) => (Some(i), flags::BALANCE_WAKE),
            None => (
                highest_with(chain, flags::BALANCE_FORK),
                flags::BALANCE_FORK,
            ),
        };
        if let Some(i) = idx {
            let c = find_idlest_cpu(sc, s.era, this, i, prev, flag);
            return sc.done((c, Step::SlowPath));
        }
    }
    sc.done((cpu, step))
}

/// The span searched beyond the LLC by WAKE_WIDE_IDLE / PREFER_IDLE_CPU: the highest
/// domain with BALANCE_WAKE; without one (the default), the span Facebook enabled it on —
/// the highest BALANCE_FORK domain (PREFER_IDLE_CPU) or prev's node (WAKE_WIDE_IDLE).
pub(crate) fn wake_balance_domain<M: Machine>(m: &M, cpu: CpuId) -> Option<usize> {
    highest_with(m.domains().of(cpu), flags::BALANCE_WAKE)
}

/// The opening both 2.6.35-3.8 variants share: the target, when it is the waker's CPU or
/// prev, is taken if idle.
fn target_if_idle<M: Machine>(
    sc: &mut Scan<'_, M>,
    prev: CpuId,
    target: CpuId,
) -> Option<(CpuId, Step)> {
    let cpu = sc.this;
    if target == cpu && sc.idle(cpu) {
        return Some((cpu, Step::TargetIdle));
    }
    if target == prev && sc.idle(prev) {
        return Some((prev, Step::TargetIdle));
    }
    None
}

/// 2.6.35-3.1 (Suresh Siddha, 99bd5e2f245d): target or prev if idle, else for each level of target's domains up to
/// the LLC the first idle CPU (the walk stops at the level spanning waker and prev).
pub(crate) fn select_idle_sibling<M: Machine>(
    sc: &mut Scan<'_, M>,
    prev: CpuId,
    target: CpuId,
) -> (CpuId, Step) {
    let cpu = sc.this;
    if let Some(hit) = target_if_idle(sc, prev, target) {
        return hit;
    }
    let m = sc.m;
    let mut t = target;
    for sd in m.domains().of(target) {
        if !sd.has(flags::SHARE_LLC) {
            break;
        }
        for i in sd.span.iter() {
            if sc.allowed(i) && sc.idle(i) {
                t = i;
                break;
            }
        }
        if sd.span.contains(cpu) && sd.span.contains(prev) {
            break;
        }
    }
    (
        t,
        if t != target {
            Step::IdleCpu
        } else {
            Step::Fallback
        },
    )
}

/// The `idle_buddy` of `cpu` in `sd` (3.6, Galbraith's CPU buddies, 970e178985ca): groups in order of their first CPU are
/// paired (0,1), (2,3), ...; an unpaired last group points back to its left neighbour.
pub(crate) fn idle_buddy(sd: &SchedDomain, cpu: CpuId) -> CpuId {
    let mut groups: Vec<&CpuSet> = sd.groups.iter().collect();
    groups.sort_by_key(|g| g.first());
    let Some(k) = groups.iter().position(|g| g.contains(cpu)) else {
        return cpu;
    };
    let other = if k % 2 == 0 {
        if k + 1 < groups.len() {
            Some(k + 1)
        } else {
            k.checked_sub(1)
        }
    } else {
        Some(k - 1)
    };
    other.and_then(|o| groups[o].first()).unwrap_or(cpu)
}

/// 3.6-~3.8 (970e178985ca): target/prev as in 3.2, then one idle_buddy per level from the LLC down.
pub(crate) fn select_idle_sibling_buddy<M: Machine>(
    sc: &mut Scan<'_, M>,
    prev: CpuId,
    target: CpuId,
) -> (CpuId, Step) {
    if let Some(hit) = target_if_idle(sc, prev, target) {
        return hit;
    }
    let m = sc.m;
    let chain = m.domains().of(target);
    let Some(llc) = chain.iter().rposition(|d| d.has(flags::SHARE_LLC)) else {
        return (target, Step::Fallback);
    };
    for sd in chain[..=llc].iter().rev() {
        let b = idle_buddy(sd, target);
        if b != target && sc.allowed(b) && sc.idle(b) {
            return (b, Step::IdleBuddy);
        }
    }
    (target, Step::Fallback)
}

/// 3.12-4.2 `wake_wide`: the waker is the busier flipper by a factor of the LLC size.
pub(crate) fn wake_wide<M: Machine>(ctx: &WakeCtx, m: &M, hints: &Hints) -> bool {
    let factor = m.topo().llc_size(ctx.waker_cpu) as u64;
    let (w, p) = flips(ctx, hints);
    p > factor && w > factor * p
}

/// The mirror of [`wake_wide_v1`]: the wakee is the busier flipper (the other direction of a
/// 1:N relation, for WAKE_WIDE_IDLE_BOTH).
pub(crate) fn wake_wide_mirror<M: Machine>(ctx: &WakeCtx, m: &M, hints: &Hints) -> bool {
    let factor = m.topo().llc_size(ctx.waker_cpu) as u64;
    let (w, p) = flips(ctx, hints);
    w > factor && p > factor * w
}
