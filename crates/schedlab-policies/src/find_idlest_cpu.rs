//! The slow path, `find_idlest_cpu` with the `find_idlest_group` and `find_idlest_group_cpu`
//! it calls: walking down from the highest domain carrying the balance flag of the placement
//! (before 4.x inline in `select_task_rq_fair`). Forks and execs
//! take it in every CFS era; wakeups only when a domain has `BALANCE_WAKE` (never by
//! default) or under the PREFER_IDLE_CPU variant.
//!
//! * up to 5.4: load-based group choice (`avg_load` per capacity, half the imbalance_pct);
//! * 5.5+: group types (has spare < fully busy < overloaded) with the spare-capacity and
//!   NUMA-imbalance rules (the NUMA allowance simplified: 5.11-5.17 25 % of the span, 5.18+
//!   `imb_numa_nr` from the LLCs per node).
//!
//! `find_idlest_group_cpu`: before 3.19 the least loaded CPU (ties to this CPU); from 3.19
//! an idle CPU in the shallowest idle state, most recently idled on ties.

use crate::era::Era;
use crate::load::half_imb;
use crate::machine::Machine;
use crate::rules;
use crate::scan::Scan;
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, CpuSet, SchedDomain, SdFlags};

/// `find_idlest_cpu`: runs the slow path from domain `sd_idx` of `cpu`'s chain.
pub(crate) fn find_idlest_cpu<M: Machine>(
    sc: &mut Scan<'_, M>,
    era: Era,
    cpu: CpuId,
    sd_idx: usize,
    prev: CpuId,
    flag: SdFlags,
) -> CpuId {
    let m = sc.m;
    let allowed = m.allowed(sc.p).clone();
    if era.has(rules::SLOW_ALLOWED_TEST) && !m.domains().of(cpu)[sd_idx].span.intersects(&allowed) {
        return prev;
    }
    let mut new = cpu;
    let mut cur = Some((cpu, sd_idx));
    while let Some((c, idx)) = cur {
        let chain = m.domains().of(c);
        let sd = &chain[idx];
        let child = idx.checked_sub(1).map(|i| (c, i));
        if !sd.has(flag) {
            cur = child;
            continue;
        }
        let group = if era.has(rules::GROUP_TYPES) {
            find_idlest_group_5_5(sc, era, sd, c, &allowed)
        } else {
            find_idlest_group_2_6_23(sc, sd, c, &allowed)
        };
        let Some(g) = group else {
            cur = child;
            continue;
        };
        new = find_idlest_group_cpu(sc, era, &g, c, &allowed);
        if new == c {
            cur = child;
            continue;
        }
        let w = sd.span_weight;
        cur = None;
        for (i, t) in m.domains().of(new).iter().enumerate() {
            if w <= t.span_weight {
                break;
            }
            if t.has(flag) {
                cur = Some((new, i));
            }
        }
    }
    new
}

/// `find_idlest_group` up to 5.4: the group of least `avg_load` per capacity, unless this
/// CPU's group is within half the imbalance_pct of it.
fn find_idlest_group_2_6_23<M: Machine>(
    sc: &mut Scan<'_, M>,
    sd: &SchedDomain,
    this: CpuId,
    allowed: &CpuSet,
) -> Option<CpuSet> {
    let imb = half_imb(sd) as u64;
    let mut idlest: Option<(u64, &CpuSet)> = None;
    let mut this_load = 0;
    for g in &sd.groups {
        if !g.intersects(allowed) {
            continue;
        }
        let mut load = 0u64;
        let mut cap = 0u64;
        for i in g.iter() {
            sc.count(i);
            load += sc.m.cpu_load(i);
            cap += sc.m.capacity(i);
        }
        let avg = load * 1024 / cap.max(1);
        if g.contains(this) {
            this_load = avg;
        } else if idlest.is_none_or(|(l, _)| avg < l) {
            idlest = Some((avg, g));
        }
    }
    let (min_load, g) = idlest?;
    if 100 * this_load < imb * min_load {
        return None;
    }
    Some(g.clone())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum GroupType {
    HasSpare,
    FullyBusy,
    Overloaded,
}

struct GroupStats {
    kind: GroupType,
    avg_load: u64,
    util: u64,
    idle_cpus: u32,
    nr_running: u32,
}

fn group_stats<M: Machine>(sc: &mut Scan<'_, M>, g: &CpuSet, pct: u64) -> GroupStats {
    let (mut load, mut util, mut cap, mut idle, mut nr, mut w) =
        (0u64, 0u64, 0u64, 0u32, 0u32, 0u32);
    for i in g.iter() {
        sc.count(i);
        let m = sc.m;
        load += m.cpu_load(i);
        util += m.cpu_util(i);
        cap += m.capacity(i);
        idle += u32::from(m.idle(i));
        nr += m.nr_runnable(i);
        w += 1;
    }
    let has_capacity = nr < w || cap * 100 > util * pct;
    let kind = if nr > w && cap * 100 < util * pct {
        GroupType::Overloaded
    } else if !has_capacity {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    };
    GroupStats {
        kind,
        avg_load: load * 1024 / cap.max(1),
        util,
        idle_cpus: idle,
        nr_running: nr,
    }
}

/// `find_idlest_group` from 5.5 (the load-balance rework): groups ranked by type, then by
/// idle CPUs or load, with the spare-capacity and NUMA-imbalance rules.
fn find_idlest_group_5_5<M: Machine>(
    sc: &mut Scan<'_, M>,
    era: Era,
    sd: &SchedDomain,
    this: CpuId,
    allowed: &CpuSet,
) -> Option<CpuSet> {
    let pct = sd.imbalance_pct as u64;
    let mut local: Option<GroupStats> = None;
    let mut idlest: Option<(GroupStats, &CpuSet)> = None;
    for g in &sd.groups {
        if !g.intersects(allowed) {
            continue;
        }
        let st = group_stats(sc, g, pct);
        if g.contains(this) {
            local = Some(st);
            continue;
        }
        let better = match &idlest {
            None => true,
            Some((b, _)) => match st.kind.cmp(&b.kind) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Greater => false,
                std::cmp::Ordering::Equal => match st.kind {
                    GroupType::HasSpare => {
                        st.idle_cpus > b.idle_cpus
                            || (st.idle_cpus == b.idle_cpus && st.util < b.util)
                    }
                    _ => st.avg_load < b.avg_load,
                },
            },
        };
        if better {
            idlest = Some((st, g));
        }
    }
    let (idl, g) = idlest?;
    let Some(loc) = local else {
        return Some(g.clone());
    };
    if loc.kind < idl.kind {
        return None;
    }
    if loc.kind > idl.kind {
        return Some(g.clone());
    }
    match loc.kind {
        GroupType::Overloaded | GroupType::FullyBusy => {
            let imb = 1024 * (pct - 100) / 100;
            if sd.has(flags::NUMA) && idl.avg_load + imb >= loc.avg_load {
                return None;
            }
            if idl.avg_load >= loc.avg_load + imb {
                return None;
            }
            if 100 * loc.avg_load <= pct * idl.avg_load {
                return None;
            }
        }
        GroupType::HasSpare => {
            if sd.has(flags::NUMA) {
                let topo = sc.m.topo();
                let allowance = if era.has(rules::NUMA_LLC_ALLOWANCE) {
                    let node = topo.node_span(this);
                    let llcs_in_node = topo
                        .llcs()
                        .iter()
                        .filter(|l| l.is_subset(node))
                        .count()
                        .max(1);
                    if llcs_in_node > 1 {
                        llcs_in_node as u32
                    } else {
                        (node.count() as u32 / 8).max(1)
                    }
                } else {
                    (sd.span_weight as u32 / 4).max(1)
                };
                if loc.nr_running < allowance {
                    return None;
                }
            }
            if loc.idle_cpus >= idl.idle_cpus {
                return None;
            }
        }
    }
    Some(g.clone())
}

/// `find_idlest_group_cpu`: before 3.19 the least loaded CPU, from 3.19 the idle CPU in the
/// shallowest state (most recently idled on ties).
fn find_idlest_group_cpu<M: Machine>(
    sc: &mut Scan<'_, M>,
    era: Era,
    g: &CpuSet,
    this: CpuId,
    allowed: &CpuSet,
) -> CpuId {
    if g.count() == 1 {
        return g.first().unwrap_or(this);
    }
    let m = sc.m;
    let prefer_shallow = era.has(rules::SHALLOWEST_IDLE);
    let mut best_idle: Option<(u64, u64, CpuId)> = None;
    let mut least: Option<(u64, CpuId)> = None;
    for i in g.iter().filter(|&i| allowed.contains(i)) {
        let idle = sc.idle(i);
        if prefer_shallow && idle {
            let exit = m.idle_exit_latency(i);
            let since = m.idle_since(i).unwrap_or(0);
            let better = match best_idle {
                None => true,
                Some((e, s, _)) => exit < e || (exit == e && since > s),
            };
            if better {
                best_idle = Some((exit, since, i));
            }
        } else if best_idle.is_none() {
            let load = m.cpu_load(i);
            let better = match least {
                None => true,
                Some((l, _)) => load < l || (load == l && i == this),
            };
            if better {
                least = Some((load, i));
            }
        }
    }
    best_idle
        .map(|(_, _, c)| c)
        .or(least.map(|(_, c)| c))
        .unwrap_or(this)
}
