//! One pass of the sched-domain balancer, [`CfsBalancer::load_balance`], in the steps the
//! kernel's `load_balance()` takes: `should_we_balance()`, the group statistics and
//! `find_busiest_group()`, `calculate_imbalance()`, `find_busiest_queue()`,
//! `detach_tasks()`, and the failure accounting that escalates to an active balance.

use super::{
    ActiveBalance, BalanceOut, CfsBalancer, GroupStats, GroupType, IdleType, LbRules, Migration,
    Mode, find_busiest_group, planned_cpu,
};
use crate::cpu_load::PassKind;
use crate::policy::{Hints, SchedView};
use crate::task::TaskId;
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, SchedDomain};

impl CfsBalancer {
    /// One balancing pass of `dst` at domain level `sd_idx`: models `load_balance()`
    /// (kernel/sched/fair.c; `sched_balance_rq()` from 6.10), for the sched-domain eras
    /// 2.6.2x–6.12: `should_we_balance()` (one CPU per local group balances, a newly-idle CPU
    /// always may), the group statistics and [`find_busiest_group`], the imbalance
    /// ([`CfsBalancer::calculate_imbalance`]), `detach_tasks()` from the busiest CPU's
    /// `cfs_tasks` order with `can_migrate_task()`/`task_hot()`, and on failure
    /// `nr_balance_failed` and the escalation to an active balance (`need_active_balance()`).
    /// The SIS_UTIL `nr_idle_scan` refresh (6.0+, `update_idle_cpu_scan()`) is done here for
    /// the LLC level. Returns the number of tasks moved; `cont` is cleared when this CPU is
    /// not the one of its group that balances (the higher levels are not tried either).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn load_balance(
        &mut self,
        dst: CpuId,
        sd_idx: usize,
        sd: &SchedDomain,
        idle: IdleType,
        view: &SchedView<'_>,
        hints: &mut Hints,
        out: &mut BalanceOut,
        cont: &mut bool,
    ) -> usize {
        let ix = idle.schedstat_index();
        self.state[dst][sd_idx].stat.lb[ix].lb_count += 1;
        if idle != IdleType::NewlyIdle && !self.should_we_balance(dst, sd, view) {
            *cont = false;
            self.state[dst][sd_idx].stat.lb[ix].lb_balanced += 1;
            return 0;
        }
        out.passes += 1;
        out.cost_ns += sd.span_weight as u64 * view.profile().search.lb_per_cpu_ns;
        let kind = match idle {
            IdleType::NotIdle => PassKind::Busy,
            IdleType::Idle => PassKind::Idle,
            IdleType::NewlyIdle => PassKind::NewlyIdle,
        };
        let idx = self.load_idx.index(sd, kind);
        // SIS_UTIL: refresh the LLC's scan budget from its utilisation (periodic only).
        if self.sis_util && idle != IdleType::NewlyIdle && sd.has(flags::SHARE_LLC) {
            update_idle_cpu_scan(dst, sd, view, hints);
        }
        let st_failed = self.state[dst][sd_idx].nr_balance_failed;
        // lb_nobusyg: no busiest group (or it is balanced); lb_nobusyq: no busiest queue.
        let at = At {
            dst,
            sd_idx,
            sd,
            idle,
            idx,
        };
        let found = if self.lb_rules == LbRules::GroupTypes {
            self.busiest_by_group_type(at, view)
        } else {
            self.busiest_by_load(at, view)
        };
        let (src, mode) = match found {
            Ok(found) => found,
            Err(nobusy) => {
                // out_balanced
                let st = &mut self.state[dst][sd_idx];
                let lb = &mut st.stat.lb[ix];
                lb.lb_balanced += 1;
                lb.lb_nobusyg += nobusy[0];
                lb.lb_nobusyq += nobusy[1];
                st.nr_balance_failed = 0;
                if idle != IdleType::NewlyIdle && st.balance_interval_ms < sd.max_interval_ms {
                    st.balance_interval_ms = (st.balance_interval_ms * 2).min(sd.max_interval_ms);
                }
                return 0;
            }
        };
        let pass = Pass {
            dst,
            src,
            sd,
            idle,
            mode,
            failed: st_failed,
        };
        let (moved, hot) = self.detach_tasks(&pass, view, out);
        let lb = &mut self.state[dst][sd_idx].stat.lb[ix];
        lb.lb_imbalance += match mode {
            Mode::Tasks(n) => n as u64,
            Mode::Load(l) => l,
        };
        lb.lb_gained += moved as u64;
        lb.lb_hot_gained += hot;
        lb.lb_failed += u64::from(moved == 0);
        self.balance_done(&pass, sd_idx, moved, view, out);
        moved
    }

    /// The busiest CPU and what to move by the 5.5+ rules: the group statistics,
    /// [`find_busiest_group`], [`CfsBalancer::calculate_imbalance`] and
    /// `find_busiest_queue()`; `Err` holds the `lb_nobusyg`/`lb_nobusyq` counts of a
    /// balanced domain.
    fn busiest_by_group_type(
        &self,
        at: At<'_>,
        view: &SchedView<'_>,
    ) -> Result<(CpuId, Mode), [u64; 2]> {
        let At { sd, idx, .. } = at;
        let pct = sd.imbalance_pct;
        let stats: Vec<GroupStats> = sd
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| self.group_stats(g, view, pct, idx, i == 0))
            .collect();
        let mut nobusy = [0u64; 2];
        let busiest = find_busiest_group(&stats)
            .and_then(|b| {
                let mode = self.calculate_imbalance(at, view, &stats, b);
                Some((b, mode?))
            })
            .or_else(|| {
                nobusy[0] = 1;
                None
            })
            .and_then(|(b, mode)| {
                let src = self.find_busiest_queue(sd, b, mode, view);
                nobusy[1] = u64::from(src.is_none());
                Some((src?, mode))
            });
        busiest.ok_or(nobusy)
    }

    /// `should_we_balance()`: one CPU per local group balances, the first idle one, else the
    /// group's first CPU.
    fn should_we_balance(&self, dst: CpuId, sd: &SchedDomain, view: &SchedView<'_>) -> bool {
        let local_group = &sd.groups[0];
        let designated = local_group
            .iter()
            .find(|&c| self.idle_at(view, c))
            .or_else(|| local_group.first())
            .unwrap_or(dst);
        designated == dst
    }

    /// `calculate_imbalance()` for the busiest group `b` (`stats[0]` is the local group):
    /// how much to move, or `None` when the domain is balanced enough. Reconstructed \[M\]:
    /// reduced to the load, spare-capacity and task-count modes of [`Mode`].
    fn calculate_imbalance(
        &self,
        at: At<'_>,
        view: &SchedView<'_>,
        stats: &[GroupStats],
        b: usize,
    ) -> Option<Mode> {
        let At {
            dst,
            sd_idx,
            sd,
            idle,
            ..
        } = at;
        let local = &stats[0];
        let bg = &stats[b];
        let pct = sd.imbalance_pct;
        if local.kind > bg.kind {
            return None;
        }
        let prefer_sibling =
            sd_idx > 0 && view.domains().of(dst)[sd_idx - 1].has(flags::PREFER_SIBLING);
        let mode = if bg.kind == GroupType::Overloaded && local.kind == GroupType::Overloaded {
            if 100 * bg.avg_load <= pct as u64 * local.avg_load {
                return None;
            }
            let total_load: u64 = stats.iter().map(|s| s.load).sum();
            let total_cap: u64 = stats.iter().map(|s| s.capacity).sum();
            let dom_avg = total_load * 1024 / total_cap.max(1);
            if local.avg_load >= dom_avg {
                return None;
            }
            let imb = ((bg.avg_load.saturating_sub(dom_avg)) * bg.capacity)
                .min((dom_avg - local.avg_load) * local.capacity)
                / 1024;
            Mode::Load(imb.max(1))
        } else if bg.kind == GroupType::Overloaded {
            // Local has spare capacity: move tasks toward it.
            if local.weight == 1 || prefer_sibling || bg.weight == 1 {
                let diff = bg.nr_running.saturating_sub(local.nr_running);
                Mode::Tasks((diff / 2).max(1))
            } else {
                Mode::Tasks(((local.idle_cpus.saturating_sub(bg.idle_cpus)) / 2).max(1))
            }
        } else {
            // busiest is not overloaded.
            if idle == IdleType::NotIdle {
                return None;
            }
            if prefer_sibling && bg.nr_running > local.nr_running + 1 {
                Mode::Tasks((bg.nr_running - local.nr_running) / 2)
            } else {
                if bg.weight > 1 && local.idle_cpus <= bg.idle_cpus + 1 {
                    return None;
                }
                if bg.nr_running <= 1 {
                    return None;
                }
                Mode::Tasks(((local.idle_cpus - bg.idle_cpus) / 2).max(1))
            }
        };
        Some(mode)
    }

    /// `find_busiest_queue()`: the CPU of group `b` with the most to give. A CPU whose one
    /// task is running can be the busiest: nothing can be detached from it, so the pass fails
    /// (and repeated failures end in an active balance), as in the kernel; when moving load,
    /// such a CPU is skipped if its task alone outweighs the imbalance.
    fn find_busiest_queue(
        &self,
        sd: &SchedDomain,
        b: usize,
        mode: Mode,
        view: &SchedView<'_>,
    ) -> Option<CpuId> {
        sd.groups[b]
            .iter()
            .filter(|&c| {
                let n = self.nr_at(view, c);
                if n > 1 || (n == 1 && view.curr(c).is_none()) {
                    return true;
                }
                let lone_running = n == 1 && view.curr(c).is_some();
                match mode {
                    Mode::Tasks(_) => lone_running,
                    Mode::Load(imb) => lone_running && self.load_at(view, c) <= imb,
                }
            })
            .max_by_key(|&c| match mode {
                Mode::Load(_) => (self.load_at(view, c), self.nr_at(view, c) as u64),
                Mode::Tasks(_) => (self.nr_at(view, c) as u64, self.load_at(view, c)),
            })
    }

    /// `detach_tasks()`: walks the source's queue from its least favoured end and plans the
    /// moves `can_migrate_task()` allows, up to the imbalance; returns how many, and how
    /// many of them were cache-hot (`lb_hot_gained`).
    fn detach_tasks(
        &mut self,
        pass: &Pass<'_>,
        view: &SchedView<'_>,
        out: &mut BalanceOut,
    ) -> (usize, u64) {
        let Pass {
            dst,
            src,
            sd,
            idle,
            mode,
            failed: st_failed,
        } = *pass;
        let mut moved = 0usize;
        let mut hot_moved = 0u64;
        let mut tasks_left = match mode {
            Mode::Tasks(n) => n,
            Mode::Load(_) => u32::MAX,
        };
        let mut load_left = match mode {
            Mode::Load(l) => l,
            Mode::Tasks(_) => u64::MAX,
        };
        let queued = self.coldest_queued(src, view, out);
        let mut examined = 0u64;
        let mut src_runnable = self.nr_at(view, src);
        for &(_, t) in queued.iter() {
            if examined >= self.nr_migrate as u64 || tasks_left == 0 || load_left == 0 {
                break;
            }
            examined += 1;
            if view.is_delayed(t) || !view.allowed(t).contains(dst) {
                continue;
            }
            // Never empty the source when pulling for an idle CPU.
            if src_runnable <= 1 {
                break;
            }
            let hot = self.task_hot(t, dst, sd, view);
            if hot && st_failed <= sd.cache_nice_tries {
                continue;
            }
            let tl = view.task_load(t).max(1);
            if let Mode::Load(_) = mode {
                // 5.5+: `shr_bound(load, nr_balance_failed) > imbalance`; before, half the
                // task's load may exceed what is left (`(load / 2) > env->imbalance`).
                let too_big = if self.lb_rules == LbRules::GroupTypes {
                    (tl >> st_failed.min(63)) > load_left
                } else {
                    tl / 2 > load_left
                };
                if too_big {
                    continue;
                }
                load_left = load_left.saturating_sub(tl);
            } else {
                tasks_left -= 1;
            }
            out.migrations.push(Migration {
                task: t,
                from: src,
                to: dst,
            });
            self.plan(t, src, dst, view);
            src_runnable -= 1;
            moved += 1;
            hot_moved += u64::from(hot);
            // CONFIG_PREEMPT: a newly idle pass stops after one task. The load-based eras
            // honour the kernel's preemption model; the 5.5+ path always stops \[M\].
            if idle == IdleType::NewlyIdle
                && (self.lb_rules == LbRules::GroupTypes || self.preempt_full)
            {
                break;
            }
        }
        self.detach_scratch = queued;
        out.cost_ns += examined * view.profile().search.lb_per_task_ns;
        (moved, hot_moved)
    }

    /// The `nr_migrate` coldest tasks of the source's queue as earlier passes of this call
    /// left it: minus what they took, plus what they gave it, as `(exec_start, task)` in
    /// order. The kernel walks `cfs_tasks` from its tail: the task picked least recently
    /// first (a picked task moves to the head), i.e. the coldest.
    fn coldest_queued(
        &mut self,
        src: CpuId,
        view: &SchedView<'_>,
        out: &BalanceOut,
    ) -> Vec<(u64, TaskId)> {
        let here = |t: TaskId| planned_cpu(out, t).is_none_or(|c| c == src);
        let limit = (self.nr_migrate as usize).max(1);
        let mut queued = std::mem::take(&mut self.detach_scratch);
        queued.clear();
        queued.extend(
            view.queued_coldest(src)
                .filter(|&t| here(t))
                .take(limit)
                .map(|t| (view.exec_start(t), t)),
        );
        // Tasks given to `src` by earlier passes of this call (not yet in its queue).
        for m in &out.migrations {
            let t = m.task;
            if m.to == src
                && view.task_cpu(t) != src
                && planned_cpu(out, t) == Some(src)
                && !queued.iter().any(|&(_, q)| q == t)
            {
                queued.push((view.exec_start(t), t));
            }
        }
        // Only the `nr_migrate` coldest can be examined (thousands may be queued).
        queued.sort_unstable();
        queued.truncate(limit);
        queued
    }

    /// The end of a pass that found an imbalance: a pass that moved nothing counts as
    /// failed and, failing often enough, asks for an active balance (`need_active_balance()`);
    /// the interval drops to the minimum unless an active balance was kicked.
    fn balance_done(
        &mut self,
        pass: &Pass<'_>,
        sd_idx: usize,
        moved: usize,
        view: &SchedView<'_>,
        out: &mut BalanceOut,
    ) {
        let Pass {
            dst,
            src,
            sd,
            idle,
            mode,
            ..
        } = *pass;
        let cache_nice_tries = sd.cache_nice_tries;
        let mut kicked = false;
        if moved == 0 {
            // Only periodic passes count: newidle balancing runs far too often and would make
            // every task look movable (the kernel's rule since 2.6.37; none of our CFS eras
            // counted newidle failures). A newidle pass may still escalate on the count the
            // periodic passes left.
            if idle != IdleType::NewlyIdle {
                self.state[dst][sd_idx].nr_balance_failed += 1;
            }
            let wants_active = match self.active_balance {
                ActiveBalance::Off => false,
                ActiveBalance::Failed => true,
                ActiveBalance::FailedTasks => matches!(mode, Mode::Tasks(_)),
            };
            if wants_active
                && self.state[dst][sd_idx].nr_balance_failed > cache_nice_tries + 2
                && let Some(t) = Self::active_candidate(src, dst, view, out)
            {
                self.plan(t, src, dst, view);
                out.active.push(Migration {
                    task: t,
                    from: src,
                    to: dst,
                });
                // Kicked: leave the count where hot tasks stay movable but another active
                // balance needs two more failures.
                self.state[dst][sd_idx].nr_balance_failed = cache_nice_tries + 1;
                // alb_count, alb_pushed: the stopper always finds the candidate here.
                self.state[dst][sd_idx].stat.alb_count += 1;
                self.state[dst][sd_idx].stat.alb_pushed += 1;
                kicked = true;
            }
        } else {
            self.state[dst][sd_idx].nr_balance_failed = 0;
        }
        if !kicked {
            // We were unbalanced: balance again soon.
            self.state[dst][sd_idx].balance_interval_ms = sd.min_interval_ms;
        }
    }

    /// The task the stopper on `src` would push to `dst`: the least recently run queued task
    /// that may go there, else the running task (the classic case: one task running on the
    /// busiest CPU). `None` when the running task may not go to `dst` (the kernel's
    /// all-pinned exit) or `src` has nothing.
    fn active_candidate(
        src: CpuId,
        dst: CpuId,
        view: &SchedView<'_>,
        out: &BalanceOut,
    ) -> Option<TaskId> {
        let taken = |t: TaskId| {
            out.migrations.iter().any(|m| m.task == t) || out.active.iter().any(|m| m.task == t)
        };
        let curr = view.curr(src)?;
        if !view.allowed(curr).contains(dst) {
            return None;
        }
        view.queued_coldest(src)
            .find(|&t| !taken(t) && !view.is_delayed(t) && view.allowed(t).contains(dst))
            .or((!taken(curr)).then_some(curr))
    }

    /// `task_hot()`: `t` ran within the migration cost (or is a buddy while `dst` has work),
    /// so moving it would lose a warm cache.
    fn task_hot(&self, t: TaskId, dst: CpuId, sd: &SchedDomain, view: &SchedView<'_>) -> bool {
        if sd.has(flags::SHARE_CPUCAPACITY) {
            return false;
        }
        // CACHE_HOT_BUDDY: a buddy counts as hot only when the destination has work of its
        // own; an idle destination may take it.
        if self.cache_hot_buddy && view.nr_running(dst) > 0 && view.is_buddy(t) {
            return true;
        }
        view.now().saturating_sub(view.exec_start(t)) < self.migration_cost_ns
    }
}

/// `update_idle_cpu_scan()` (SIS_UTIL, 6.0+): the LLC's idle-scan budget shrinks as its
/// utilisation grows, refreshed by the periodic pass at the LLC level.
fn update_idle_cpu_scan(dst: CpuId, sd: &SchedDomain, view: &SchedView<'_>, hints: &mut Hints) {
    let llc_size = view.topo().llc_size(dst);
    if sd.span_weight == llc_size {
        let sum_util: u64 = sd.span.iter().map(|c| view.cpu_util(c)).sum();
        let x = sum_util / llc_size as u64;
        let p = sd.imbalance_pct as u64;
        let t = (x * x * p * p / (10000 * 1024)).min(1024);
        let y = 1024 - t;
        let llc = view.topo().cpu(dst).llc;
        hints.llc[llc].nr_idle_scan = (y * llc_size as u64 / 1024) as u32;
    }
}

/// Where a pass balances: the pulling CPU, its domain (and that domain's index in the
/// CPU's chain), the idle type and the `cpu_load[]` index the pass reads.
#[derive(Clone, Copy)]
pub(super) struct At<'a> {
    pub dst: CpuId,
    pub sd_idx: usize,
    pub sd: &'a SchedDomain,
    pub idle: IdleType,
    pub idx: usize,
}

/// What one pass balances: from `src` to `dst` in domain `sd`, how much (`mode`), and the
/// domain's failure count when the pass began.
#[derive(Clone, Copy)]
struct Pass<'a> {
    dst: CpuId,
    src: CpuId,
    sd: &'a SchedDomain,
    idle: IdleType,
    mode: Mode,
    failed: u32,
}
