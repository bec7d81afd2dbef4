//! `select_idle_sibling` of every era, oldest first: where around the target does the wakee
//! find an idle CPU? `select_idle_sibling` dispatches on the era's
//! [`crate::IdleSearch`] column:
//!
//! | function | kernels | search |
//! |---|---|---|
//! | `select_idle_sibling_2_6_32` | 2.6.32-2.6.34 | inside `select_task_rq_fair`'s walk: an empty CPU of the domain (Galbraith, a1f84a3ab8e0) |
//! | `select_idle_sibling_2_6_35` | 2.6.35-3.5 | target or prev if idle, then the first idle CPU per level up to the LLC (Siddha, 99bd5e2f245d) |
//! | `select_idle_sibling_3_6` | 3.6-~3.8 | one idle buddy per level (Galbraith, 970e178985ca) |
//! | `select_idle_sibling_3_9` | ~3.9-5.11 | a fully idle group from the LLC down; from 4.9 (10e2f1acd010) idle core, idle CPU, idle SMT sibling; the 2016 RFC bits as switches |
//! | `select_idle_sibling_5_12` | 5.12 on | target, prev, recent_used_cpu, prev's SMT siblings, then one merged idle-core/idle-CPU scan (SIS_UTIL from 6.0, cluster first from 6.7) |
//!
//! The scans themselves are [`crate::select_idle_core`], [`crate::select_idle_cpu`] and
//! [`crate::select_idle_smt`]. SIS_NODE (the 2023 multi-LLC search, reverted before
//! release) is a reconstruction.

use crate::debated;
use crate::era::IdleSearch;
use crate::machine::Machine;
use crate::rules;
use crate::scan::Scan;
use crate::select_idle_core::select_idle_core;
use crate::select_idle_cpu::{select_idle_cpu_4_9, select_idle_cpu_4_13, select_idle_cpu_5_12};
use crate::select_idle_smt::select_idle_smt;
use crate::settings::Settings;
use crate::switches::sw;
use schedlab_engine::policy::{Hints, Step};
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, CpuSet, SchedDomain};

/// `select_idle_sibling` as the era's [`IdleSearch`] column says (2.6.35 on; 2.6.23-2.6.34
/// search inside their own `select_task_rq_fair`).
pub(crate) fn select_idle_sibling<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    hints: &mut Hints,
    prev: CpuId,
    target: CpuId,
) -> (CpuId, Step) {
    sc.target(target);
    if !s.on(sw!("SELECT_IDLE_SIBLING")) {
        return (target, Step::Target);
    }
    match s.era.idle_search() {
        IdleSearch::PerLevel => select_idle_sibling_2_6_35(sc, prev, target),
        IdleSearch::IdleBuddy => select_idle_sibling_3_6(sc, prev, target),
        IdleSearch::Llc { sis_prop } => {
            select_idle_sibling_3_9(sc, s, hints, prev, target, sis_prop)
        }
        IdleSearch::Merged { cluster_first } => {
            select_idle_sibling_5_12(sc, s, hints, prev, target, cluster_first)
        }
        // The O(1), 2.6.23 and 2.6.32 flows search inside their own walk and never get here.
        IdleSearch::None | IdleSearch::WakeIdle | IdleSearch::InWalk { .. } => {
            (target, Step::Target)
        }
    }
}

/// 2.6.32-2.6.33 (Galbraith, a1f84a3ab8e0): called inside the domain walk with `target` =
/// the waker's CPU when the domain spans prev, else none; tests `cfs_rq` emptiness, ignoring
/// wakeups in flight. Returns the new target and the step when it found an empty CPU.
pub(crate) fn select_idle_sibling_2_6_32<M: Machine>(
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

/// The opening both 2.6.35-3.8 versions share: the target, when it is the waker's CPU or
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

/// 2.6.35-3.1 (Suresh Siddha, 99bd5e2f245d): target or prev if idle, else for each level of
/// target's domains up to the LLC the first idle CPU (the walk stops at the level spanning
/// waker and prev).
pub(crate) fn select_idle_sibling_2_6_35<M: Machine>(
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

/// The `idle_buddy` of `cpu` in `sd` (3.6, Galbraith's CPU buddies, 970e178985ca): groups
/// in order of their first CPU are paired (0,1), (2,3), ...; an unpaired last group points
/// back to its left neighbour.
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

/// 3.6-~3.8 (970e178985ca): target/prev as in 3.2, then one idle_buddy per level from the
/// LLC down.
pub(crate) fn select_idle_sibling_3_6<M: Machine>(
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

/// ~3.9-5.11 (the LLC group scan, 10e2f1acd010 in 4.9, 1ad3aaf3fcd2 in 4.13, the 2016 RFC
/// bits): target idle, prev idle in the same LLC, then the searches the switches enable, in
/// order: the fully-idle group scan (OLD_IDLE, ORDER_IDLE), an idle core (IDLE_CORE), an
/// idle CPU (IDLE_CPU; bounded by SIS_PROP/SIS_AVG_CPU when the era's search has
/// `sis_prop`), an idle SMT sibling of the target (IDLE_SMT).
pub(crate) fn select_idle_sibling_3_9<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    hints: &mut Hints,
    prev: CpuId,
    target: CpuId,
    sis_prop: bool,
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
    if s.on(sw!("OLD_IDLE"))
        && let Some(c) = select_idle_group(sc, chain, llc_idx, target, s.on(sw!("ORDER_IDLE")))
    {
        return (c, Step::IdleGroup);
    }
    let span = &chain[llc_idx].span;
    // Mazumdar 2019: NO_SIS_CORE skips the idle-core search.
    if s.on(sw!("IDLE_CORE"))
        && s.on(sw!("SIS_CORE"))
        && let Some(c) = select_idle_core(sc, hints, span, target)
    {
        return (c, Step::IdleCore);
    }
    if s.on(sw!("IDLE_CPU")) {
        let c = if sis_prop {
            select_idle_cpu_4_13(sc, s, hints, &chain[llc_idx], target)
        } else {
            select_idle_cpu_4_9(sc, s, hints, span, target)
        };
        if let Some(c) = c {
            return (c, Step::IdleCpu);
        }
    }
    if s.on(sw!("IDLE_SMT"))
        && let Some(c) = select_idle_smt(sc, target)
    {
        return (c, Step::IdleSmt);
    }
    (target, Step::Fallback)
}

/// The ~3.9-4.8 search (inline in that `select_idle_sibling`): from the LLC domain down,
/// the first group (other than the target's) whose CPUs are all idle; its first allowed CPU.
fn select_idle_group<M: Machine>(
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

/// 5.12 on (the merged scan of 5.12, SIS_UTIL from 70fb5ccf2ebb in 6.0, the cluster-first
/// scan of 6.7, 8881e1639f1f and 22165f61d0c4): target, prev, recent_used_cpu, prev's idle
/// SMT siblings when no idle core is known, then the merged idle-core / idle-CPU scan of the
/// LLC (`cluster_first`, 6.7 on: cluster first, prev/recent outside target's cluster kept
/// as fallbacks). SIS_NODE then scans the node's other LLCs.
pub(crate) fn select_idle_sibling_5_12<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    hints: &mut Hints,
    prev: CpuId,
    target: CpuId,
    cluster_first: bool,
) -> (CpuId, Step) {
    let m = sc.m;
    let topo = m.topo();
    let clusters = cluster_first && topo.has_clusters();
    if sc.idle(target) {
        return (target, Step::TargetIdle);
    }
    let mut prev_aff = None;
    if prev != target
        && topo.cpus_share_cache(prev, target)
        && (sc.idle(prev) || debated::almost_idle(s, sc, prev))
    {
        if !clusters || topo.cpus_share_resources(prev, target) {
            return (prev, Step::PrevIdle);
        }
        prev_aff = Some(prev);
    }
    // recent_used_cpu: until ~5.15 swapped with prev only on success (the waker side records
    // its own CPU); later always replaced by prev here. NO_RECENT_USED_CPU: neither.
    let p = sc.p;
    let recent = hints.task[p]
        .recent_used_cpu
        .filter(|_| s.on(sw!("RECENT_USED_CPU")));
    let replaced_always = s.era.has(rules::RECENT_USED_REPLACED);
    if replaced_always && s.on(sw!("RECENT_USED_CPU")) {
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
        if !replaced_always {
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
    // The scan order is an iterator, not a collected list: no allocation per wakeup. The
    // 2020/2022 filters walk only the LLC's idle cpumask.
    let filter = debated::scan_filter(s, hints, topo.cpu(target).llc);
    let keep = |c: &CpuId| filter.as_ref().is_none_or(|f| f.contains(*c));
    let found = if clusters {
        let cl = topo.cluster_span(target).and(&sd.span);
        let order = cl.iter_wrap(target.after()).chain(
            sd.span
                .iter_wrap(target.after())
                .filter(|c| !cl.contains(*c)),
        );
        select_idle_cpu_5_12(sc, s, hints, sd, target, order.filter(keep), has_idle_core)
    } else {
        let order = sd.span.iter_wrap(target.after()).filter(keep);
        select_idle_cpu_5_12(sc, s, hints, sd, target, order, has_idle_core)
    };
    if let Some(found) = found {
        return found;
    }
    if s.on(sw!("SIS_NODE"))
        && let Some(c) = select_idle_node(sc, s, hints, target, sd)
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

/// SIS_NODE (2023, reconstruction; the patch extended this function): the other LLCs of
/// target's node, nearest-first in ring order from target, each scanned for an idle CPU with
/// the same budget rules as the local scan (no idle-core pass: the hint belongs to the local
/// LLC).
fn select_idle_node<M: Machine>(
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
    for c in node.iter_wrap(target.after()) {
        if seen.contains(c) {
            continue;
        }
        let Some(sd) = m.domains().sd_llc(c) else {
            continue;
        };
        seen.or_assign(&sd.span);
        let order = sd.span.iter_wrap(target.after());
        // Budget of that LLC: the same rule, read from its own shared state.
        if let Some((c, _)) = select_idle_cpu_5_12(sc, s, hints, sd, c, order, false) {
            return Some(c);
        }
    }
    None
}
