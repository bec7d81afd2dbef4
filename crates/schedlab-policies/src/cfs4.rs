//! CFS-4, 4.3 onwards: the `select_task_rq_fair` built around Mike Galbraith's symmetric
//! `wake_wide` (63b0e9edceec, 4.3), which gates want_affine; CFS-5 and EEVDF keep it and
//! change what it calls ([`crate::cfs5`]). Also the search and affine test shared from ~3.9
//! to 4.14: `select_idle_sibling` with the LLC group scan (~3.9-4.8) and Peter Zijlstra's
//! rewrite (10e2f1acd010, 4.9: idle core, idle CPU, idle SMT sibling; SIS_PROP from
//! 1ad3aaf3fcd2, 4.13), with the 2016 RFC bits as switches at 4.6 and 4.9; and the
//! capacity-aware `wake_affine` of 3.16-4.12.

use crate::cfs5;
use crate::debated;
use crate::linux::half_imb;
use crate::machine::Machine;
use crate::rules;
use crate::scan::Scan;
use crate::slow::{find_idlest_cpu, sd_flag};
use crate::switches::Settings;
use crate::wakee::{flips, record_wakee};
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::{Affine, Hints, Step};
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, CpuSet, SchedDomain};

/// CFS-4's `select_task_rq_fair`, 4.3 onwards (63b0e9edceec in 4.3; CFS-5 from 4.9 passes
/// prev to `select_idle_sibling`, and EEVDF's 6.6-6.12 keep it):
/// `record_wakee` and the symmetric `wake_wide` decide want_affine; one walk finds the affine
/// domain or the highest domain with the placement's balance flag (the slow path); an
/// affine wakeup asks `wake_affine` between waker and prev, then `select_idle_sibling`.
/// 5.13 keeps the 4.16-5.15 `recent_used_cpu` bookkeeping on the waker's side \[M\].
pub(crate) fn select_task_rq_fair<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    ctx: &WakeCtx,
    hints: &mut Hints,
) -> CpuId {
    let m = sc.m;
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    let ttwu = ctx.is_ttwu();
    let flag = sd_flag(ctx);
    let mut want_affine = false;
    if ttwu {
        record_wakee(s.era, ctx, m, hints);
        let wide = s.wake_wide && sc.wide(wake_wide(ctx, m, hints));
        want_affine = !wide && sc.allowed(this) && s.wake_affine;
        if wide {
            sc.affine(Affine::WakeWide);
        } else if !want_affine {
            sc.affine(Affine::Declined);
        }
    }
    // Desnoyers 2023: a task that migrated within the period stays on prev.
    if ttwu && debated::ratelimited(s, sc, ctx, hints) {
        sc.target(prev);
        return sc.done((prev, Step::Target));
    }
    let chain = m.domains().of(this);
    let mut affine_sd = None;
    let mut sd = None;
    for (idx, tmp) in chain.iter().enumerate() {
        if s.era.has(rules::LOAD_BALANCE_FLAG) && !tmp.has(flags::LOAD_BALANCE) {
            break;
        }
        if want_affine && tmp.has(flags::WAKE_AFFINE) && tmp.span.contains(prev) {
            affine_sd = Some(tmp);
            break;
        }
        if tmp.has(flag) {
            sd = Some(idx);
        } else if !want_affine {
            break;
        }
    }
    let mut new = prev;
    if let Some(asd) = affine_sd {
        sd = None;
        if this != prev {
            new = if s.era.has(rules::WA_SPLIT) {
                cfs5::wake_affine(s, sc, ctx, asd)
            } else if wake_affine(sc, ctx, asd) {
                this
            } else {
                prev
            };
        } else {
            sc.affine(Affine::NotAsked);
        }
    } else if want_affine {
        sc.affine(Affine::NoDomain);
    }
    if let Some(i) = sd {
        sc.target(this);
        let c = find_idlest_cpu(sc, s.era, this, i, prev, flag);
        return sc.done((c, Step::SlowPath));
    }
    if !ttwu {
        sc.target(new);
        return sc.done((new, Step::Target));
    }
    let found = crate::linux::select_idle_sibling(sc, s, hints, prev, new);
    // The waker remembers its CPU for its own next wakeup.
    if want_affine
        && s.recent_used_cpu
        && s.era.has(rules::RECENT_USED_WAKER_SIDE)
        && let Some(w) = ctx.waker
    {
        hints.task[w].recent_used_cpu = Some(this);
    }
    sc.done(found)
}

/// 4.3+ `wake_wide` (Galbraith's "beef up"): symmetric in waker and wakee.
pub(crate) fn wake_wide<M: Machine>(ctx: &WakeCtx, m: &M, hints: &Hints) -> bool {
    let factor = m.topo().llc_size(ctx.waker_cpu) as u64;
    let (w, p) = flips(ctx, hints);
    let (master, slave) = if w >= p { (w, p) } else { (p, w) };
    !(slave < factor || master < slave * factor)
}

/// ~3.9-4.14 (the LLC group scan, 10e2f1acd010 in 4.9, 1ad3aaf3fcd2 in 4.13, the 2016 RFC
/// bits): target idle, prev idle in the same LLC, then the searches the switches enable, in
/// order: the fully-idle group scan (OLD_IDLE, ORDER_IDLE), an idle core (IDLE_CORE), an
/// idle CPU (IDLE_CPU; bounded by SIS_PROP/SIS_AVG_CPU when the era's search has
/// `sis_prop`), an idle SMT sibling of the target (IDLE_SMT).
pub(crate) fn select_idle_sibling<M: Machine>(
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
    if s.old_idle
        && let Some(c) = select_idle_group(sc, chain, llc_idx, target, s.order_idle)
    {
        return (c, Step::IdleGroup);
    }
    let span = &chain[llc_idx].span;
    // Mazumdar 2019: NO_SIS_CORE skips the idle-core search.
    if s.idle_core
        && s.sis_core
        && let Some(c) = select_idle_core(sc, hints, span, target)
    {
        return (c, Step::IdleCore);
    }
    if s.idle_cpu {
        let c = if sis_prop {
            select_idle_cpu_sis_prop(sc, s, hints, &chain[llc_idx], target)
        } else {
            select_idle_cpu(sc, hints, span, target)
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

/// The ~3.9-4.8 search: from the LLC domain down, the first group (other than the
/// target's) whose CPUs are all idle; its first allowed CPU.
pub(crate) fn select_idle_group<M: Machine>(
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
pub(crate) fn select_idle_core<M: Machine>(
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

pub(crate) fn ewma_scan_cost(hints: &mut Hints, llc: usize, cost: u64) {
    let a = &mut hints.llc[llc].avg_scan_cost;
    *a += (cost as f64 - *a) / 8.0;
}

/// 4.9 `select_idle_cpu`: skipped when `avg_idle / 512` of the waker's CPU is below the
/// LLC's average scan cost; otherwise the first idle allowed CPU from the target.
pub(crate) fn select_idle_cpu<M: Machine>(
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

/// 4.13-5.11 `select_idle_cpu` (1ad3aaf3fcd2): SIS_AVG_CPU and SIS_PROP bound the scan; an exhausted
/// budget returns without updating the scan cost.
pub(crate) fn select_idle_cpu_sis_prop<M: Machine>(
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
    let mut start = target;
    if s.sis_prop {
        let span_avg = sd.span_weight as u64 * avg_idle;
        nr = if span_avg > 4 * avg_cost {
            span_avg / avg_cost
        } else {
            4
        };
        if s.sis_rotate {
            (nr, start) = debated::rotate_budget(sc, hints, sd, target, span_avg, avg_cost);
        }
    }
    let t0 = sc.probes();
    let mut found = None;
    for c in sd.span.iter_wrap(start) {
        // Mazumdar 2019: the next scan from this target starts where this one stopped.
        if s.sis_rotate {
            hints.cpu[target].sis_next_cpu = Some(c);
        }
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
pub(crate) fn select_idle_smt<M: Machine>(sc: &mut Scan<'_, M>, target: CpuId) -> Option<CpuId> {
    let topo = sc.m.topo();
    if !topo.smt_present() {
        return None;
    }
    topo.smt_siblings(target)
        .iter()
        .find(|&c| c != target && sc.allowed(c) && sc.idle(c))
}

/// 3.16-4.12 `wake_affine`: capacity-scaled comparison, no per-task clause.
pub(crate) fn wake_affine<M: Machine>(
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
