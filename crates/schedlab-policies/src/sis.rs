//! `select_idle_sibling` of every era (linux-wakeup.md §6), plus 2.6.30's `wake_idle` (§3.1)
//! and the debated search variants (§15.4-15.5, SIS_NODE of §6.10).
//!
//! | function            | era            | what it looks at                                        |
//! |---------------------|----------------|---------------------------------------------------------|
//! | [`wake_idle`]       | 2.6.30         | SMT siblings of an idle-looking target                  |
//! | [`sis_v2`]          | 2.6.32-2.6.33  | prev if empty, then the first empty CPU of the domain   |
//! | [`sis_v3`]          | 2.6.35-3.1     | first idle CPU per level up to the LLC                  |
//! | [`sis_buddy`]       | 3.6-3.8        | one pre-assigned `idle_buddy` per level                 |
//! | [`sis_v5`]          | 3.9-4.14       | fully idle group scan (OLD_IDLE) and/or idle core / CPU / SMT |
//! | [`sis_v6`]          | 5.13-6.12      | merged idle-core/idle-CPU scan with SIS_PROP/SIS_UTIL budgets |
//!
//! Every idle test of a CPU other than the waker's is counted in the record.

use crate::era::Era;
use crate::machine::Machine;
use crate::scan::Scan;
use crate::switches::Settings;
use schedlab_engine::policy::{Hints, Step};
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, CpuSet, SchedDomain};

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

/// 2.6.32-2.6.33 (§6.1): called inside the domain walk with `target` = the waker's CPU when
/// the domain spans prev, else none; tests `cfs_rq` emptiness, ignoring wakeups in flight.
/// Returns the new target and the step when it found an empty CPU.
pub(crate) fn sis_v2<M: Machine>(
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

/// 2.6.35-3.1 (§6.2): target or prev if idle, else for each level of target's domains up to
/// the LLC the first idle CPU (the walk stops at the level spanning waker and prev).
pub(crate) fn sis_v3<M: Machine>(
    sc: &mut Scan<'_, M>,
    prev: CpuId,
    target: CpuId,
) -> (CpuId, Step) {
    let cpu = sc.this;
    if target == cpu && sc.idle(cpu) {
        return (cpu, Step::TargetIdle);
    }
    if target == prev && sc.idle(prev) {
        return (prev, Step::TargetIdle);
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

/// The `idle_buddy` of `cpu` in `sd` (3.6, §6.4): groups in order of their first CPU are
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

/// 3.6-3.8 (§6.4): target/prev as in 3.2, then one idle_buddy per level from the LLC down.
pub(crate) fn sis_buddy<M: Machine>(
    sc: &mut Scan<'_, M>,
    prev: CpuId,
    target: CpuId,
) -> (CpuId, Step) {
    let cpu = sc.this;
    if target == cpu && sc.idle(cpu) {
        return (cpu, Step::TargetIdle);
    }
    if target == prev && sc.idle(prev) {
        return (prev, Step::TargetIdle);
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

/// 3.9-4.14 (§6.5-6.7, §15.5): target idle, prev idle in the same LLC, then the searches the
/// switches enable, in order: the fully-idle group scan (OLD_IDLE, ORDER_IDLE), an idle core
/// (IDLE_CORE), an idle CPU (IDLE_CPU; 4.14: SIS_PROP/SIS_AVG_CPU), an idle SMT sibling of
/// the target (IDLE_SMT).
pub(crate) fn sis_v5<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    hints: &mut Hints,
    prev: CpuId,
    target: CpuId,
) -> (CpuId, Step) {
    let m = sc.m;
    let topo = m.topo();
    if sc.idle(target) {
        return (target, Step::TargetIdle);
    }
    if prev != target && topo.cpus_share_cache(prev, target) && sc.idle(prev) {
        return (prev, Step::PrevIdle);
    }
    let chain = m.domains().of(target);
    let Some(llc_idx) = chain.iter().rposition(|d| d.has(flags::SHARE_LLC)) else {
        return (target, Step::Fallback);
    };
    if s.old_idle
        && let Some(c) = group_scan(sc, chain, llc_idx, target, s.order_idle)
    {
        return (c, Step::IdleGroup);
    }
    let span = &chain[llc_idx].span;
    if s.idle_core
        && let Some(c) = select_idle_core_v5(sc, hints, span, target)
    {
        return (c, Step::IdleCore);
    }
    if s.idle_cpu {
        let c = if s.era >= Era::V4_14 {
            select_idle_cpu_prop(sc, s, hints, &chain[llc_idx], target)
        } else {
            select_idle_cpu_avg(sc, hints, span, target)
        };
        if let Some(c) = c {
            return (c, Step::IdleCpu);
        }
    }
    if s.idle_smt
        && let Some(c) = select_idle_smt(sc, target)
    {
        return (c, Step::IdleSmt);
    }
    (target, Step::Fallback)
}

/// The pre-4.9 search (§6.5): from the LLC domain down, the first group (other than the
/// target's) whose CPUs are all idle; its first allowed CPU.
fn group_scan<M: Machine>(
    sc: &mut Scan<'_, M>,
    chain: &[SchedDomain],
    llc_idx: usize,
    target: CpuId,
    ring_order: bool,
) -> Option<CpuId> {
    let allowed = sc.m.allowed(sc.p).clone();
    for sd in chain[..=llc_idx].iter().rev() {
        let mut groups: Vec<&CpuSet> = sd.groups.iter().collect();
        if !ring_order {
            groups.sort_by_key(|g| g.first());
        }
        'group: for g in groups {
            if !g.intersects(&allowed) {
                continue;
            }
            for i in g.iter() {
                if i == target || !sc.idle(i) {
                    continue 'group;
                }
            }
            return g.and(&allowed).first();
        }
    }
    None
}

/// 4.9 `select_idle_core`: a core of the LLC whose threads are all idle, scanning from the
/// target; only while `has_idle_cores`, which a failed scan clears.
fn select_idle_core_v5<M: Machine>(
    sc: &mut Scan<'_, M>,
    hints: &mut Hints,
    span: &CpuSet,
    target: CpuId,
) -> Option<CpuId> {
    let topo = sc.m.topo();
    let llc = topo.cpu(target).llc;
    if !topo.smt_present() || !hints.llc[llc].has_idle_cores {
        return None;
    }
    let mut cand = span.and(sc.m.allowed(sc.p));
    for core in span.iter_wrap(target) {
        if !cand.contains(core) {
            continue;
        }
        let sibs = topo.smt_siblings(core);
        let mut all = true;
        for c in sibs.iter() {
            all &= sc.idle(c);
        }
        if all {
            return Some(core);
        }
        cand.andnot_assign(sibs);
    }
    hints.llc[llc].has_idle_cores = false;
    None
}

fn ewma_scan_cost(hints: &mut Hints, llc: usize, cost: u64) {
    let a = &mut hints.llc[llc].avg_scan_cost;
    *a += (cost as f64 - *a) / 8.0;
}

/// 4.9 `select_idle_cpu`: skipped when `avg_idle / 512` of the waker's CPU is below the
/// LLC's average scan cost; otherwise the first idle allowed CPU from the target.
fn select_idle_cpu_avg<M: Machine>(
    sc: &mut Scan<'_, M>,
    hints: &mut Hints,
    span: &CpuSet,
    target: CpuId,
) -> Option<CpuId> {
    let this_llc = sc.m.topo().cpu(sc.this).llc;
    let avg_idle = (sc.m.avg_idle(sc.this) / 512) as f64;
    if avg_idle < hints.llc[this_llc].avg_scan_cost {
        return None;
    }
    let t0 = sc.probes();
    let mut found = None;
    for c in span.iter_wrap(target) {
        if sc.allowed(c) && sc.idle(c) {
            found = Some(c);
            break;
        }
    }
    let cost = sc.cost_since(t0);
    ewma_scan_cost(hints, this_llc, cost);
    found
}

/// 4.13-5.11 `select_idle_cpu` (§6.7): SIS_AVG_CPU and SIS_PROP bound the scan; an exhausted
/// budget returns without updating the scan cost.
fn select_idle_cpu_prop<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    hints: &mut Hints,
    sd: &SchedDomain,
    target: CpuId,
) -> Option<CpuId> {
    let this_llc = sc.m.topo().cpu(sc.this).llc;
    let avg_idle = sc.m.avg_idle(sc.this) / 512;
    let avg_cost = hints.llc[this_llc].avg_scan_cost as u64 + 1;
    if s.sis_avg_cpu && avg_idle < avg_cost {
        return None;
    }
    let mut nr = u64::MAX;
    if s.sis_prop {
        let span_avg = sd.span_weight as u64 * avg_idle;
        nr = if span_avg > 4 * avg_cost {
            span_avg / avg_cost
        } else {
            4
        };
    }
    let t0 = sc.probes();
    let mut found = None;
    for c in sd.span.iter_wrap(target) {
        nr -= 1;
        if nr == 0 {
            return None;
        }
        if !sc.allowed(c) {
            continue;
        }
        if sc.idle(c) {
            found = Some(c);
            break;
        }
    }
    let cost = sc.cost_since(t0);
    ewma_scan_cost(hints, this_llc, cost);
    found
}

/// 4.9-5.11 `select_idle_smt`: an idle allowed SMT sibling of the target.
fn select_idle_smt<M: Machine>(sc: &mut Scan<'_, M>, target: CpuId) -> Option<CpuId> {
    let topo = sc.m.topo();
    if !topo.smt_present() {
        return None;
    }
    topo.smt_siblings(target)
        .iter()
        .find(|&c| c != target && sc.allowed(c) && sc.idle(c))
}

/// 5.13-6.12 (§6.8-6.10): target, prev, recent_used_cpu, prev's idle SMT siblings when no
/// idle core is known, then the merged idle-core / idle-CPU scan of the LLC (6.12:
/// cluster first, prev/recent outside target's cluster kept as fallbacks). SIS_NODE then
/// scans the node's other LLCs.
pub(crate) fn sis_v6<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    hints: &mut Hints,
    prev: CpuId,
    target: CpuId,
) -> (CpuId, Step) {
    let m = sc.m;
    let topo = m.topo();
    let clusters = s.era >= Era::V6_12 && topo.has_clusters();
    if sc.idle(target) {
        return (target, Step::TargetIdle);
    }
    let mut prev_aff = None;
    if prev != target && topo.cpus_share_cache(prev, target) && sc.idle(prev) {
        if !clusters || topo.cpus_share_resources(prev, target) {
            return (prev, Step::PrevIdle);
        }
        prev_aff = Some(prev);
    }
    // recent_used_cpu: until ~5.15 swapped with prev only on success (the waker side records
    // its own CPU); from then on always replaced by prev here.
    let p = sc.p;
    let recent = hints.task[p].recent_used_cpu;
    if s.era >= Era::V6_0 {
        hints.task[p].recent_used_cpu = Some(prev);
    }
    let mut recent_fb = None;
    if let Some(r) = recent
        && r != prev
        && r != target
        && topo.cpus_share_cache(r, target)
        && sc.idle(r)
        && sc.allowed(r)
    {
        if s.era < Era::V6_0 {
            hints.task[p].recent_used_cpu = Some(prev);
        }
        if !clusters || topo.cpus_share_resources(r, target) {
            return (r, Step::Recent);
        }
        recent_fb = Some(r);
    }
    let chain = m.domains().of(target);
    let Some(llc_idx) = chain.iter().rposition(|d| d.has(flags::SHARE_LLC)) else {
        return (target, Step::Fallback);
    };
    let sd = &chain[llc_idx];
    let mut has_idle_core = false;
    if topo.smt_present() {
        has_idle_core = hints.llc[topo.cpu(target).llc].has_idle_cores;
        if !has_idle_core && topo.cpus_share_cache(prev, target) {
            for c in topo.smt_siblings(prev).iter() {
                if c != prev && sc.allowed(c) && sd.span.contains(c) && sc.idle(c) {
                    return (c, Step::IdleSmt);
                }
            }
        }
    }
    // The scan order is an iterator, not a collected list: no allocation per wakeup.
    let found = if clusters {
        let cl = topo.cluster_span(target).and(&sd.span);
        let order = cl
            .iter_wrap(target + 1)
            .chain(sd.span.iter_wrap(target + 1).filter(|c| !cl.contains(*c)));
        select_idle_cpu_v6(sc, s, hints, sd, target, order, has_idle_core)
    } else {
        let order = sd.span.iter_wrap(target + 1);
        select_idle_cpu_v6(sc, s, hints, sd, target, order, has_idle_core)
    };
    if let Some(found) = found {
        return found;
    }
    if s.sis_node
        && let Some(c) = sis_node(sc, s, hints, target, sd)
    {
        return (c, Step::WideIdle);
    }
    if let Some(c) = prev_aff
        && sc.idle(c)
    {
        return (c, Step::PrevIdle);
    }
    if let Some(c) = recent_fb
        && sc.idle(c)
    {
        return (c, Step::Recent);
    }
    (target, Step::Fallback)
}

/// The merged scan of 5.12+ over `order` (CPUs of `sd`), with the era's budget.
fn select_idle_cpu_v6<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    hints: &mut Hints,
    sd: &SchedDomain,
    target: CpuId,
    order: impl Iterator<Item = CpuId>,
    has_idle_core: bool,
) -> Option<(CpuId, Step)> {
    let topo = sc.m.topo();
    let this = sc.this;
    let this_llc = topo.cpu(this).llc;
    let target_llc = topo.cpu(target).llc;
    // `order` only yields CPUs of `sd`, so outside the idle-core pass the allowed mask alone
    // filters it; the idle-core pass needs a copy to strike out scanned cores (a `CpuSet` is
    // 136 bytes: not copied on every wakeup).
    let allowed = sc.m.allowed(sc.p);
    let mut cpus = has_idle_core.then(|| sd.span.and(allowed));
    let mut nr = u64::MAX;
    let prop = s.sis_prop && !has_idle_core;
    let t0 = sc.probes();
    if prop {
        let jiffies = sc.m.jiffies();
        let h = &mut hints.cpu[this];
        while h.wake_stamp < jiffies && h.wake_avg_idle > 0 {
            h.wake_stamp += 1;
            h.wake_avg_idle >>= 1;
        }
        let avg_idle = h.wake_avg_idle;
        let avg_cost = hints.llc[this_llc].avg_scan_cost as u64 + 1;
        let span_avg = sd.span_weight as u64 * avg_idle;
        nr = if span_avg > 4 * avg_cost {
            span_avg / avg_cost
        } else {
            4
        };
    }
    if s.sis_util {
        nr = hints.llc[target_llc].nr_idle_scan as u64 + 1;
        if nr == 1 {
            return None;
        }
    }
    let mut idle_cpu = None;
    for c in order {
        if let Some(cpus) = cpus.as_mut() {
            if !cpus.contains(c) {
                continue;
            }
            let sibs = topo.smt_siblings(c);
            let mut core_idle = true;
            for t in sibs.iter() {
                if !sc.idle(t) {
                    core_idle = false;
                    if idle_cpu.is_none() {
                        continue;
                    }
                    break;
                }
                if idle_cpu.is_none() && sc.allowed(t) {
                    idle_cpu = Some(t);
                }
            }
            if core_idle {
                return Some((c, Step::IdleCore));
            }
            cpus.andnot_assign(sibs);
        } else {
            debug_assert!(sd.span.contains(c), "scan order left the domain");
            if !allowed.contains(c) {
                continue;
            }
            nr -= 1;
            if nr == 0 {
                return None;
            }
            if sc.idle(c) {
                idle_cpu = Some(c);
                break;
            }
        }
    }
    if has_idle_core {
        hints.llc[target_llc].has_idle_cores = false;
    }
    if prop {
        let cost = sc.cost_since(t0);
        let h = &mut hints.cpu[this];
        h.wake_avg_idle -= h.wake_avg_idle.min(cost);
        ewma_scan_cost(hints, this_llc, cost);
    }
    idle_cpu.map(|c| (c, Step::IdleCpu))
}

/// SIS_NODE (2023, reconstruction): the other LLCs of target's node, nearest-first in ring
/// order from target, each scanned for an idle CPU with the same budget rules as the local
/// scan (no idle-core pass: the hint belongs to the local LLC).
fn sis_node<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    hints: &mut Hints,
    target: CpuId,
    local: &SchedDomain,
) -> Option<CpuId> {
    let m = sc.m;
    let topo = m.topo();
    let node = topo.node_span(target);
    let mut seen = local.span.clone();
    for c in node.iter_wrap(target + 1) {
        if seen.contains(c) {
            continue;
        }
        let Some(sd) = m.domains().sd_llc(c) else {
            continue;
        };
        seen.or_assign(&sd.span);
        let order = sd.span.iter_wrap(target + 1);
        // Budget of that LLC: the same rule, read from its own shared state.
        if let Some((c, _)) = select_idle_cpu_v6(sc, s, hints, sd, c, order, false) {
            return Some(c);
        }
    }
    None
}
