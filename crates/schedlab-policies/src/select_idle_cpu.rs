//! `select_idle_cpu` of every era that has it, oldest first: the budgeted scan of the LLC for
//! an idle CPU, and the average scan cost it keeps.
//!
//! | function | kernels | budget |
//! |---|---|---|
//! | `select_idle_cpu_4_9` | 4.9-4.12 | none; skipped when `avg_idle / 512` is below the scan cost (10e2f1acd010) |
//! | `select_idle_cpu_4_13` | 4.13-5.11 | SIS_AVG_CPU and SIS_PROP (1ad3aaf3fcd2); Mazumdar's 2019 SIS_ROTATE |
//! | `select_idle_cpu_5_12` | 5.12 on | the merged idle-core/idle-CPU scan: SIS_PROP on aged `wake_avg_idle` until 6.6, SIS_UTIL's `nr_idle_scan` from 6.0 (70fb5ccf2ebb) |

use crate::debated;
use crate::machine::Machine;
use crate::scan::Scan;
use crate::settings::Settings;
use crate::switches::sw;
use schedlab_engine::policy::{Hints, Step};
use schedlab_topo::{CpuId, CpuSet, SchedDomain};

/// `update_avg` of the LLC's `avg_scan_cost`: an eighth of the way to the new cost.
fn update_avg_scan_cost(hints: &mut Hints, llc: usize, cost: u64) {
    let a = &mut hints.llc[llc].avg_scan_cost;
    *a += (cost as f64 - *a) / 8.0;
}

/// 4.9 `select_idle_cpu`: skipped when `avg_idle / 512` of the waker's CPU is below the
/// LLC's average scan cost (IDLE_CPU_GATE); otherwise the first idle allowed CPU from the
/// target.
pub(crate) fn select_idle_cpu_4_9<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    hints: &mut Hints,
    span: &CpuSet,
    target: CpuId,
) -> Option<CpuId> {
    let this_llc = sc.m.topo().cpu(sc.this).llc;
    let avg_idle = (sc.m.avg_idle(sc.this) / 512) as f64;
    // The 2016 RFC's IDLE_CPU may not have had this gate (NO_IDLE_CPU_GATE).
    if s.on(sw!("IDLE_CPU_GATE")) && avg_idle < hints.llc[this_llc].avg_scan_cost {
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
    update_avg_scan_cost(hints, this_llc, cost);
    found
}

/// 4.13-5.11 `select_idle_cpu` (1ad3aaf3fcd2): SIS_AVG_CPU and SIS_PROP bound the scan; an
/// exhausted budget returns without updating the scan cost.
pub(crate) fn select_idle_cpu_4_13<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    hints: &mut Hints,
    sd: &SchedDomain,
    target: CpuId,
) -> Option<CpuId> {
    let this_llc = sc.m.topo().cpu(sc.this).llc;
    let avg_idle = sc.m.avg_idle(sc.this) / 512;
    let avg_cost = hints.llc[this_llc].avg_scan_cost as u64 + 1;
    if s.on(sw!("SIS_AVG_CPU")) && avg_idle < avg_cost {
        return None;
    }
    let mut nr = u64::MAX;
    let mut start = target;
    if s.on(sw!("SIS_PROP")) {
        let span_avg = sd.span_weight as u64 * avg_idle;
        nr = if span_avg > 4 * avg_cost {
            span_avg / avg_cost
        } else {
            4
        };
        if s.on(sw!("SIS_ROTATE")) {
            (nr, start) = debated::rotate_budget(sc, hints, sd, target, span_avg, avg_cost);
        }
    }
    let t0 = sc.probes();
    let mut found = None;
    for c in sd.span.iter_wrap(start) {
        // Mazumdar 2019: the next scan from this target starts where this one stopped.
        if s.on(sw!("SIS_ROTATE")) {
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
    update_avg_scan_cost(hints, this_llc, cost);
    found
}

/// 5.12 on: the merged scan over `order` (CPUs of `sd`), with the era's budget: an idle
/// core while `has_idle_core` (remembering an idle thread, SIS_IDLE_CANDIDATE), else the
/// first idle CPU within SIS_PROP's or SIS_UTIL's budget.
pub(crate) fn select_idle_cpu_5_12<M: Machine>(
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
    let prop = s.on(sw!("SIS_PROP")) && !has_idle_core;
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
    if s.config.features.sis_util {
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
                if idle_cpu.is_none() && s.on(sw!("SIS_IDLE_CANDIDATE")) && sc.allowed(t) {
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
        update_avg_scan_cost(hints, this_llc, cost);
    }
    idle_cpu.map(|c| (c, Step::IdleCpu))
}
