//! The load-based `find_busiest_group()` of 2.6.32–5.4: which group and CPU a pass pulls
//! from and how much load, before 5.5's rework (0b0695f2b34a, "sched/fair: Rework
//! load_balance()") classified groups by spare capacity and moved task counts.
//!
//! In these kernels a pass moves *load*: `calculate_imbalance()` asks for the load that
//! brings the busiest group down to, and the local group up to, the domain's average, capped
//! by what the busiest group runs above its capacity; when that is less than one task's load,
//! `fix_small_imbalance()` moves one task only if doing so raises throughput. Two shapes,
//! gated by era ([`LbRules`]): until 4.0 a group's capacity is its power rounded to a number
//! of tasks (`DIV_ROUND_CLOSEST(sgp->power, SCHED_POWER_SCALE)`, 3.10) and only a group
//! running more tasks than that, or imbalanced, can be the busiest; from 4.1
//! (ea67821b9a3e, "sched: Replace capacity_factor by usage") a group has no capacity when it
//! runs more tasks than CPUs and its utilisation exceeds its capacity, and the busiest is
//! the group of the highest type (`group_type`, 3.18) with the highest average load. Until
//! 4.18 an SMT thread's power is `smt_gain / weight` (1178 per core; `smt_gain` removed in
//! 4.19, 765d0af19f5f), so a core counts as about one task and a 10-core node as 12.
//! Function names and steps follow kernel/sched/fair.c of 3.10 and 4.6; reconstructed \[M\]:
//! asym packing, NUMA-balancing's `fbq_type`, and the affinity-driven `sg_imbalanced()`
//! (3.12+; no workload here pins a task a pass would move) are not modelled.

use super::lb::At;
use super::{CfsBalancer, IdleType, Mode};
use crate::policy::SchedView;
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, CpuSet, SchedDomain};

/// Which shape of the load balancer's group rules an era runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbRules {
    /// 2.6.32–4.0: capacity in tasks; `group_imb` from the spread of the CPUs' loads
    /// (3.10's `update_sg_lb_stats()`; 3.12 tied it to affinity instead, not modelled).
    Capacity,
    /// 4.1–5.4: `group_no_capacity` from utilisation, `group_type` ordering.
    Util,
    /// 5.5+: group types by spare capacity, migration types (the rest of this module's
    /// parent).
    GroupTypes,
}

/// `SCHED_POWER_SCALE` / `SCHED_CAPACITY_SCALE`.
const SCALE: u64 = 1024;
/// `sd->smt_gain` of the SMT level until 4.18.
const SMT_GAIN: u64 = 1178;

/// `struct sg_lb_stats` of the load-based balancer.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LoadStats {
    /// `group_load`: source or target load of each CPU at the pass's index.
    load: u64,
    /// `sum_weighted_load`: current loads.
    weighted: u64,
    nr: u32,
    idle_cpus: u32,
    weight: u32,
    /// `sgp->power` / `sgc->capacity`.
    power: u64,
    util: u64,
    avg_load: u64,
    load_per_task: u64,
    /// 3.10's `group_capacity` (tasks).
    cap_tasks: u32,
    /// `group_has_capacity`.
    has_capacity: bool,
    /// 4.x `group_no_capacity`.
    no_capacity: bool,
    /// `group_imb` (3.10) / `group_imbalanced` type.
    imb: bool,
}

/// `enum group_type` of 3.18–5.4, in the order `update_sd_pick_busiest()` compares them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum LoadGroupType {
    Other,
    Imbalanced,
    Overloaded,
}

impl LoadStats {
    /// `group_classify()`.
    fn group_type(&self) -> LoadGroupType {
        if self.no_capacity {
            LoadGroupType::Overloaded
        } else if self.imb {
            LoadGroupType::Imbalanced
        } else {
            LoadGroupType::Other
        }
    }
}

impl CfsBalancer {
    /// The power of `c` (`power_of()` / `capacity_of()`): an SMT thread's share of
    /// `smt_gain` until 4.18, else its capacity.
    fn power_of(&self, view: &SchedView<'_>, c: CpuId) -> u64 {
        let threads = view.topo().smt_siblings(c).count() as u64;
        if threads > 1 {
            SMT_GAIN / threads
        } else {
            view.capacity(c)
        }
    }

    /// `update_sg_lb_stats()` of the load-based balancer.
    fn load_stats(
        &self,
        group: &CpuSet,
        view: &SchedView<'_>,
        sd: &SchedDomain,
        idx: usize,
        local: bool,
    ) -> LoadStats {
        let mut g = LoadStats::default();
        let (mut max_load, mut min_load) = (0u64, u64::MAX);
        let (mut max_nr, mut min_nr) = (0u32, u32::MAX);
        for c in group.iter() {
            let load = self.load_idx_at(view, c, idx, local);
            let nr = self.nr_at(view, c);
            max_load = max_load.max(load);
            min_load = min_load.min(load);
            max_nr = max_nr.max(nr);
            min_nr = min_nr.min(nr);
            g.load += load;
            g.weighted += self.load_at(view, c);
            g.nr += nr;
            // `cpu_util()` is capped at the CPU's original capacity, an SMT thread's share of
            // `smt_gain` until 4.18 (`capacity_orig_of()`).
            let power = self.power_of(view, c);
            g.util += self.util_at(view, c).min(power);
            g.power += power;
            g.idle_cpus += u32::from(self.idle_at(view, c));
            g.weight += 1;
        }
        g.avg_load = g.load * SCALE / g.power.max(1);
        if g.nr > 0 {
            g.load_per_task = g.weighted / g.nr as u64;
        }
        let pct = sd.imbalance_pct as u64;
        match self.lb_rules {
            LbRules::Capacity => {
                // 3.10: `(max_cpu_load - min_cpu_load) >= avg_load_per_task &&
                // (max_nr_running - min_nr_running) > 1`.
                g.imb = g.weight > 1
                    && max_load - min_load >= g.load_per_task
                    && max_nr.saturating_sub(min_nr) > 1;
                // DIV_ROUND_CLOSEST; fix_small_capacity() gives an SMT group one task.
                g.cap_tasks = ((g.power + SCALE / 2) / SCALE).max(1) as u32;
                g.has_capacity = g.cap_tasks > g.nr;
            }
            LbRules::Util | LbRules::GroupTypes => {
                g.no_capacity = g.nr > g.weight && g.power * 100 < g.util * pct;
                g.has_capacity = g.nr < g.weight || g.power * 100 > g.util * pct;
            }
        }
        g
    }

    /// `update_sd_pick_busiest()`: whether `g` replaces `b` as the busiest group.
    fn pick_busiest(&self, g: &LoadStats, b: Option<&LoadStats>) -> bool {
        let b_avg = b.map_or(0, |b| b.avg_load);
        match self.lb_rules {
            LbRules::Capacity => g.avg_load > b_avg && (g.nr > g.cap_tasks || g.imb),
            _ => {
                let bt = b.map_or(LoadGroupType::Other, LoadStats::group_type);
                match g.group_type().cmp(&bt) {
                    std::cmp::Ordering::Greater => true,
                    std::cmp::Ordering::Less => false,
                    std::cmp::Ordering::Equal => g.avg_load > b_avg,
                }
            }
        }
    }

    /// `find_busiest_group()` + `calculate_imbalance()` + `find_busiest_queue()` of the
    /// load-based eras: the CPU to pull from and the load to move; `Err` holds the
    /// `lb_nobusyg`/`lb_nobusyq` counts of a balanced domain.
    pub(super) fn busiest_by_load(
        &self,
        at: At<'_>,
        view: &SchedView<'_>,
    ) -> Result<(CpuId, Mode), [u64; 2]> {
        let At {
            dst,
            sd_idx,
            sd,
            idle,
            idx,
        } = at;
        let mut stats: Vec<LoadStats> = sd
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| self.load_stats(g, view, sd, idx, i == 0))
            .collect();
        // SD_PREFER_SIBLING of the child domain: while the local group has room, a
        // sibling group running more than one task counts as full.
        let prefer_sibling =
            sd_idx > 0 && view.domains().of(dst)[sd_idx - 1].has(flags::PREFER_SIBLING);
        let local_room = stats[0].has_capacity;
        let mut busiest: Option<usize> = None;
        for i in 1..stats.len() {
            if prefer_sibling && local_room {
                match self.lb_rules {
                    LbRules::Capacity => stats[i].cap_tasks = stats[i].cap_tasks.min(1),
                    _ => stats[i].no_capacity |= stats[i].nr > 1,
                }
            }
            if self.pick_busiest(&stats[i], busiest.map(|b| &stats[b])) {
                busiest = Some(i);
            }
        }
        let imbalance = busiest.filter(|&b| stats[b].nr > 0).and_then(|b| {
            self.load_imbalance(&stats, b, idle, sd.imbalance_pct)
                .map(|imb| (b, imb))
        });
        let Some((b, imb)) = imbalance else {
            return Err([1, 0]);
        };
        self.busiest_queue_by_load(sd, b, imb, view)
            .map(|src| (src, Mode::Load(imb)))
            .ok_or([0, 1])
    }

    /// `find_busiest_group()`'s tests after the statistics, then `calculate_imbalance()`:
    /// the load to move from group `b`, or `None` when balanced.
    fn load_imbalance(
        &self,
        stats: &[LoadStats],
        b: usize,
        idle: IdleType,
        imbalance_pct: u32,
    ) -> Option<u64> {
        let (local, bg) = (&stats[0], &stats[b]);
        let total_load: u64 = stats.iter().map(|s| s.load).sum();
        let total_power: u64 = stats.iter().map(|s| s.power).sum();
        let avg = SCALE * total_load / total_power.max(1);
        let force = bg.imb
            || (idle == IdleType::NewlyIdle
                && local.has_capacity
                && match self.lb_rules {
                    LbRules::Capacity => !bg.has_capacity,
                    _ => bg.no_capacity,
                });
        if !force {
            if local.avg_load >= bg.avg_load || local.avg_load >= avg {
                return None;
            }
            if idle == IdleType::Idle {
                let overloaded = match self.lb_rules {
                    LbRules::Capacity => bg.nr > bg.weight,
                    _ => bg.no_capacity,
                };
                if !overloaded && local.idle_cpus <= bg.idle_cpus + 1 {
                    return None;
                }
            } else if 100 * bg.avg_load <= imbalance_pct as u64 * local.avg_load {
                return None;
            }
        }
        let imb = self.calculate_imbalance_load(local, bg, avg);
        (imb > 0).then_some(imb)
    }

    /// `calculate_imbalance()` of the load-based eras.
    fn calculate_imbalance_load(&self, local: &LoadStats, bg: &LoadStats, avg: u64) -> u64 {
        let mut bg = *bg;
        if bg.imb {
            bg.load_per_task = bg.load_per_task.min(avg);
        }
        if bg.avg_load <= avg || local.avg_load >= avg {
            return fix_small_imbalance(local, &bg);
        }
        let above_capacity = match self.lb_rules {
            LbRules::Capacity if !bg.imb => {
                u64::from(bg.nr.saturating_sub(bg.cap_tasks)) * SCALE * SCALE / bg.power.max(1)
            }
            LbRules::Util | LbRules::GroupTypes
                if bg.group_type() == LoadGroupType::Overloaded
                    && local.group_type() == LoadGroupType::Overloaded =>
            {
                let over = u64::from(bg.nr) * SCALE;
                if over > bg.power {
                    (over - bg.power) * SCALE / bg.power.max(1)
                } else {
                    u64::MAX
                }
            }
            _ => u64::MAX,
        };
        let max_pull = (bg.avg_load - avg).min(above_capacity);
        let imb =
            (max_pull.saturating_mul(bg.power)).min((avg - local.avg_load) * local.power) / SCALE;
        if imb < bg.load_per_task {
            return fix_small_imbalance(local, &bg);
        }
        imb
    }

    /// `find_busiest_queue()` of the load-based eras: the CPU of group `b` with the highest
    /// load per power, skipping a CPU whose one task alone outweighs the imbalance.
    fn busiest_queue_by_load(
        &self,
        sd: &SchedDomain,
        b: usize,
        imbalance: u64,
        view: &SchedView<'_>,
    ) -> Option<CpuId> {
        let mut best: Option<(CpuId, u64, u64)> = None;
        for c in sd.groups[b].iter() {
            let wl = self.load_at(view, c);
            let power = self.power_of(view, c).max(1);
            if self.nr_at(view, c) == 1 && wl > imbalance {
                continue;
            }
            // wl / power > best_wl / best_power, without the division.
            if best.is_none_or(|(_, bl, bp)| wl * bp > bl * power) {
                best = Some((c, wl, power));
            }
        }
        best.filter(|&(_, wl, _)| wl > 0).map(|(c, _, _)| c)
    }
}

/// `fix_small_imbalance()`: the imbalance is less than one task's load; move one task's load
/// only if that raises the two groups' combined throughput (`capa_move > capa_now`) or the
/// busiest stays above the local group after the move.
fn fix_small_imbalance(local: &LoadStats, bg: &LoadStats) -> u64 {
    let mut local = *local;
    let mut imbn = 2;
    if local.nr == 0 {
        // cpu_avg_load_per_task(dst) of an idle CPU.
        local.load_per_task = 0;
    } else if bg.load_per_task > local.load_per_task {
        imbn = 1;
    }
    let (bp, lp) = (bg.power.max(1), local.power.max(1));
    let scaled = bg.load_per_task * SCALE / bp;
    if bg.avg_load + scaled >= local.avg_load + scaled * imbn {
        return bg.load_per_task;
    }
    let mut capa_now = bp * bg.load_per_task.min(bg.avg_load);
    capa_now += lp * local.load_per_task.min(local.avg_load);
    capa_now /= SCALE;
    let mut capa_move = 0;
    if bg.avg_load > scaled {
        capa_move += bp * bg.load_per_task.min(bg.avg_load - scaled);
    }
    let tmp = if bg.avg_load * bp < bg.load_per_task * SCALE {
        bg.avg_load * bp / lp
    } else {
        bg.load_per_task * SCALE / lp
    };
    capa_move += lp * local.load_per_task.min(local.avg_load + tmp);
    capa_move /= SCALE;
    if capa_move > capa_now {
        bg.load_per_task
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group of `weight` CPUs of `power` each running `nr` nice-0 tasks (load 1024 each).
    fn group(rules: LbRules, nr: u32, weight: u32, power: u64) -> LoadStats {
        let load = 1024 * nr as u64;
        let mut g = LoadStats {
            load,
            weighted: load,
            nr,
            weight,
            power: power * weight as u64,
            util: (1024 * nr.min(weight)) as u64,
            idle_cpus: weight.saturating_sub(nr),
            ..LoadStats::default()
        };
        g.avg_load = g.load * SCALE / g.power;
        g.load_per_task = if nr > 0 { g.load / nr as u64 } else { 0 };
        g.cap_tasks = ((g.power + SCALE / 2) / SCALE).max(1) as u32;
        g.has_capacity = match rules {
            LbRules::Capacity => g.cap_tasks > g.nr,
            _ => g.nr < g.weight || g.power * 100 > g.util * 125,
        };
        g.no_capacity = g.nr > g.weight && g.power * 100 < g.util * 125;
        g
    }

    fn balancer(rules: LbRules) -> CfsBalancer {
        let mut b = CfsBalancer::new(500_000, 4_000_000);
        b.lb_rules = rules;
        b
    }

    #[test]
    fn a_newly_idle_cpu_asks_for_the_load_that_evens_the_two_cpus() {
        // One CPU with four tasks, the other newly idle: 3.10 and 4.x ask for half the
        // load (two tasks), where 5.5+ moves a task count.
        for rules in [LbRules::Capacity, LbRules::Util] {
            let b = balancer(rules);
            let stats = [group(rules, 0, 1, 1024), group(rules, 4, 1, 1024)];
            assert_eq!(
                b.load_imbalance(&stats, 1, IdleType::NewlyIdle, 125),
                Some(2048),
                "{rules:?}"
            );
        }
    }

    #[test]
    fn a_busy_pass_leaves_an_imbalance_below_imbalance_pct() {
        // Nodes of 10 CPUs with 110 and 100 tasks: 10 % apart, under the NUMA level's 25 %.
        for rules in [LbRules::Capacity, LbRules::Util] {
            let b = balancer(rules);
            let stats = [group(rules, 100, 10, 1024), group(rules, 110, 10, 1024)];
            assert_eq!(b.load_imbalance(&stats, 1, IdleType::NotIdle, 125), None);
            let stats = [group(rules, 100, 10, 1024), group(rules, 130, 10, 1024)];
            assert!(
                b.load_imbalance(&stats, 1, IdleType::NotIdle, 125)
                    .is_some()
            );
        }
    }

    #[test]
    fn until_4_0_an_smt_core_counts_as_one_task() {
        // A core of two SMT threads (smt_gain 1178) running two tasks is over its capacity
        // of one task, so it can be the busiest group; from 4.1 it is not over capacity
        // (two tasks on two CPUs) and another group of equal type with a higher average
        // load wins.
        let b = balancer(LbRules::Capacity);
        let core = group(LbRules::Capacity, 2, 2, SMT_GAIN / 2);
        assert_eq!(core.cap_tasks, 1);
        assert!(b.pick_busiest(&core, None));
        let b = balancer(LbRules::Util);
        let core = group(LbRules::Util, 2, 2, SMT_GAIN / 2);
        assert!(!core.no_capacity);
        assert!(b.pick_busiest(&core, None));
        let heavier = group(LbRules::Util, 2, 2, 1024);
        assert!(!b.pick_busiest(&heavier, Some(&core)));
    }

    #[test]
    fn a_small_imbalance_moves_one_task_when_the_busiest_stays_busier() {
        let rules = LbRules::Capacity;
        // Busiest: 3 tasks on a core; local: 1 task.
        let bg = group(rules, 3, 1, 1024);
        let local = group(rules, 1, 1, 1024);
        assert_eq!(fix_small_imbalance(&local, &bg), 1024);
        // Equal groups: moving a task would only swap the imbalance.
        let even = group(rules, 2, 1, 1024);
        assert_eq!(fix_small_imbalance(&even, &even), 0);
    }
}
