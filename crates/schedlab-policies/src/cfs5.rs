//! What CFS-5 and EEVDF change under CFS-4's `select_task_rq_fair` ([`crate::cfs4`]): the
//! `wake_affine_idle` + `wake_affine_weight` split (4.14 on) and the merged
//! idle-core/idle-CPU `select_idle_sibling` of 5.12 on (SIS_PROP with aged idle time until
//! 6.6, SIS_UTIL from 70fb5ccf2ebb in 6.0, the cluster-first scan from 6.7). The 4.9
//! rewrite of `select_idle_sibling` stays in [`crate::cfs4`] with the 2016 RFC bits it grew
//! from. SIS_NODE (the 2023 multi-LLC search, reverted before release) is a reconstruction.

use crate::cfs4::ewma_scan_cost;
use crate::debated;
use crate::linux::half_imb;
use crate::machine::Machine;
use crate::rules;
use crate::scan::Scan;
use crate::switches::Settings;
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::{Affine, Hints, Step};
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, SchedDomain};

/// 4.14 on (WA_IDLE, WA_WEIGHT, WA_BIAS: d153b153446f, f2cdd9cc6c97): `wake_affine_idle` then `wake_affine_weight`; returns the chosen CPU.
pub(crate) fn wake_affine<M: Machine>(
    s: &Settings,
    sc: &mut Scan<'_, M>,
    ctx: &WakeCtx,
    sd: &SchedDomain,
) -> CpuId {
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    if s.wa_idle
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
    if s.wa_weight {
        if wake_affine_weight(s, sc, ctx, sd) {
            return this;
        }
        return prev;
    }
    sc.affine(Affine::Declined);
    prev
}

/// `wake_affine_idle` (WA_IDLE, 4.14 on): an idle waker CPU sharing prev's LLC answers
/// (prev if it is idle too), a sync wakeup onto a CPU running only the waker pulls; from 5.10
/// an idle prev answers (d8fcb81f1acf; NO_WA_IDLE_PREV drops it); 6.12 counts runnable tasks
/// (delayed ones left out). WAKEUP_BIAS_PREV_IDLE counts an almost idle prev as idle.
pub(crate) fn wake_affine_idle<M: Machine>(
    s: &Settings,
    sc: &mut Scan<'_, M>,
    ctx: &WakeCtx,
) -> Option<CpuId> {
    let era = s.era;
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    let m = sc.m;
    if m.idle(this) && m.topo().cpus_share_cache(this, prev) {
        let prev_idle = sc.idle(prev) || debated::almost_idle(s, sc, prev);
        return Some(if prev_idle { prev } else { this });
    }
    // A delayed-dequeue task does not keep the waker's CPU busy.
    let nr = if era.has(rules::AFFINE_NR_RUNNABLE) {
        m.nr_runnable(this)
    } else {
        m.nr_running(this)
    };
    if ctx.sync() && nr == 1 {
        sc.affine(Affine::PulledSync);
        return Some(this);
    }
    if era.has(rules::AFFINE_IDLE_PREV)
        && s.wa_idle_prev
        && (sc.idle(prev) || debated::almost_idle(s, sc, prev))
    {
        return Some(prev);
    }
    None
}

/// `wake_affine_weight` (WA_WEIGHT, WA_BIAS; 4.14 on): the waker CPU's load plus the wakee,
/// against prev's load minus it, capacity-scaled, prev biased by half the imbalance_pct.
pub(crate) fn wake_affine_weight<M: Machine>(
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
            sc.affine(Affine::PulledSync);
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
    sc.loads(this_eff, prev_eff);
    sc.decide(this_eff < prev_eff, Affine::PulledWeight)
}

/// 5.12-6.12 (the merged scan of 5.12, SIS_UTIL from 70fb5ccf2ebb in 6.0, the cluster-first
/// scan of 6.7, 8881e1639f1f and 22165f61d0c4): target, prev, recent_used_cpu, prev's idle
/// SMT siblings when no idle core is known, then the merged idle-core / idle-CPU scan of the
/// LLC (`cluster_first`, 6.7 on: cluster first, prev/recent outside target's cluster kept
/// as fallbacks). SIS_NODE then scans the node's other LLCs.
pub(crate) fn select_idle_sibling<M: Machine>(
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
    let recent = hints.task[p].recent_used_cpu.filter(|_| s.recent_used_cpu);
    let replaced_always = s.era.has(rules::RECENT_USED_REPLACED);
    if replaced_always && s.recent_used_cpu {
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
        select_idle_cpu(sc, s, hints, sd, target, order.filter(keep), has_idle_core)
    } else {
        let order = sd.span.iter_wrap(target.after()).filter(keep);
        select_idle_cpu(sc, s, hints, sd, target, order, has_idle_core)
    };
    if let Some(found) = found {
        return found;
    }
    if s.sis_node
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

/// The merged scan of 5.12+ over `order` (CPUs of `sd`), with the era's budget.
pub(crate) fn select_idle_cpu<M: Machine>(
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
    let mut first_hot = None;
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
                // Gorman, Dec 2020: remember an idle thread for a failed idle-core pass.
                if idle_cpu.is_none() && s.sis_idle_candidate && sc.allowed(t) {
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
                return first_hot.map(|c| (c, Step::IdleCpu));
            }
            if sc.idle(c) {
                // SIS_CACHE: a CPU reserved by a short sleeper is passed over; the first
                // one seen is the answer when no other idle CPU turns up.
                if debated::cache_hot(s, sc.m, hints, c) {
                    first_hot.get_or_insert(c);
                    continue;
                }
                idle_cpu = Some(c);
                break;
            }
        }
    }
    let idle_cpu = idle_cpu.or(first_hot);
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
pub(crate) fn select_idle_node<M: Machine>(
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
        if let Some((c, _)) = select_idle_cpu(sc, s, hints, sd, c, order, false) {
            return Some(c);
        }
    }
    None
}
