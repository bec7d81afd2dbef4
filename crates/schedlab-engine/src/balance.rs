//! Load balancing behind a trait, so eras can differ.
//!
//! A [`Balancer`] looks at a read-only [`SchedView`] and answers with migrations; the engine
//! applies them (dequeue, move the task's load and vruntime, enqueue, preemption check).
//! [`CfsBalancer`] is the sched-domain balancer of 2.6.2x–7.x: periodic balancing per
//! domain with intervals and busy_factor, newly-idle balancing gated by `avg_idle`, nohz
//! idle balancing kicked from busy CPUs, `task_hot` with the migration cost, and the
//! SIS_UTIL `nr_idle_scan` refresh at LLC level. Group classification follows the era
//! ([`LbRules`]): the 5.5+ shape (has-spare / fully-busy / overloaded) here, the load-based
//! `find_busiest_group()` of 2.6.32-5.4 in `balance/fbg_load.rs`. When balancing keeps failing at a level
//! (`nr_balance_failed` counts periodic failures only, as since 2.6.37), hot tasks become movable once it
//! exceeds `cache_nice_tries`, and past `cache_nice_tries + 2` the pass asks for an **active
//! balance**: the engine's stopper pushes a task, possibly the one running, off the busiest CPU
//! ([`BalanceOut::active`], applied by the engine's `sim::active` module). The 2.5.59 node
//! balancer lives in [`crate::balance_o1`].

use crate::cpu_load::LoadIdx;
use crate::policy::{Hints, SchedView};
use crate::schedstat::LbDomain;
use crate::task::TaskId;
use crate::time::{NSEC_PER_MSEC, NSEC_PER_SEC, Time};
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, CpuSet, SchedDomain};

// The load-based `find_busiest_group()` of 2.6.32-5.4.
mod fbg_load;
// One pass of `load_balance()`, step by step.
mod lb;

pub use fbg_load::LbRules;

/// One task move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Migration {
    /// The task (queued, not running).
    pub task: TaskId,
    /// Its CPU now.
    pub from: CpuId,
    /// Where it goes.
    pub to: CpuId,
}

/// What a balancing pass asks the engine to do.
#[derive(Clone, Debug, Default)]
pub struct BalanceOut {
    /// Moves, applied in order.
    pub migrations: Vec<Migration>,
    /// Time the pass cost the CPU that ran it, ns.
    pub cost_ns: u64,
    /// Number of `load_balance` passes run.
    pub passes: u32,
    /// Active balances: the stopper on `from` pushes `task` to `to`. Unlike
    /// [`BalanceOut::migrations`] the task may be the one running on `from` (the stopper
    /// preempts it first); cache hotness no longer matters. Applied after the migrations.
    pub active: Vec<Migration>,
}

/// A load balancer. Implementations keep their own per-domain state.
pub trait Balancer: Send {
    /// Name for reports.
    fn name(&self) -> String;
    /// Called on each scheduler tick of `cpu` (busy CPUs; idle ones only if
    /// [`Balancer::wants_idle_ticks`]).
    fn tick(&mut self, cpu: CpuId, view: &SchedView<'_>, hints: &mut Hints, out: &mut BalanceOut);
    /// Called when `cpu` is about to go idle.
    fn newidle(
        &mut self,
        cpu: CpuId,
        view: &SchedView<'_>,
        hints: &mut Hints,
        out: &mut BalanceOut,
    );
    /// Whether idle CPUs keep ticking (pre-NOHZ kernels).
    fn wants_idle_ticks(&self) -> bool {
        false
    }
    /// The `/proc/schedstat` counts of `cpu` at its domain `sd_idx` (lowest first); none by
    /// default (a balancer that keeps no such counts).
    fn schedstat(&self, _cpu: CpuId, _sd_idx: usize) -> LbDomain {
        LbDomain::default()
    }
}

/// A balancer that never moves anything (for isolating placement effects).
#[derive(Clone, Debug, Default)]
pub struct NoBalance;

impl Balancer for NoBalance {
    fn name(&self) -> String {
        "none".into()
    }
    fn tick(&mut self, _: CpuId, _: &SchedView<'_>, _: &mut Hints, _: &mut BalanceOut) {}
    fn newidle(&mut self, _: CpuId, _: &SchedView<'_>, _: &mut Hints, _: &mut BalanceOut) {}
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IdleType {
    Idle,
    NotIdle,
    NewlyIdle,
}

impl IdleType {
    /// The index of the kind in a version-15 `domainN` line (`CPU_IDLE`, `CPU_NOT_IDLE`,
    /// `CPU_NEWLY_IDLE`).
    fn schedstat_index(self) -> usize {
        match self {
            IdleType::Idle => 0,
            IdleType::NotIdle => 1,
            IdleType::NewlyIdle => 2,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum GroupType {
    HasSpare,
    FullyBusy,
    Overloaded,
}

/// How much a balancing pass moves: a number of tasks or an amount of load.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Tasks(u32),
    Load(u64),
}

#[derive(Clone, Debug)]
struct GroupStats {
    nr_running: u32,
    load: u64,
    util: u64,
    capacity: u64,
    idle_cpus: u32,
    weight: u32,
    avg_load: u64,
    kind: GroupType,
}

#[derive(Clone, Debug)]
struct DomainState {
    last_balance: Time,
    balance_interval_ms: u64,
    nr_balance_failed: u32,
    max_newidle_lb_cost: u64,
    last_decay: Time,
    /// The `lb_*`/`alb_*` counts (observation only).
    stat: LbDomain,
}

/// The busiest group of a domain, as `find_busiest_group()` picks it (kernel/sched/fair.c,
/// `update_sd_lb_stats()` → `update_sd_pick_busiest()`): `stats[0]` is the local group and is
/// never chosen; among the others with a task, the highest group type wins (overloaded >
/// fully busy > has spare), then the higher `avg_load` (overloaded, fully busy) or the fewer
/// idle CPUs and then more tasks (has spare). Covers the 5.5+ group classification (commit
/// 0b0695f2b34a, "sched/fair: Rework load_balance()"), which [`CfsBalancer`] uses for the
/// eras of [`LbRules::GroupTypes`]; the group statistics are `update_sg_lb_stats()`'s ([`CfsBalancer::group_stats`]),
/// the imbalance is decided in [`CfsBalancer::load_balance`] (`calculate_imbalance()`).
/// Reconstructed \[M\]: the asym-packing, misfit and imbalanced group types are not
/// modelled.
fn find_busiest_group(stats: &[GroupStats]) -> Option<usize> {
    let mut busiest: Option<usize> = None;
    for (i, g) in stats.iter().enumerate().skip(1) {
        if g.nr_running == 0 {
            continue;
        }
        busiest = match busiest {
            None => Some(i),
            Some(b) => {
                let bg = &stats[b];
                let better = match g.kind.cmp(&bg.kind) {
                    std::cmp::Ordering::Greater => true,
                    std::cmp::Ordering::Less => false,
                    std::cmp::Ordering::Equal => match g.kind {
                        GroupType::Overloaded | GroupType::FullyBusy => g.avg_load > bg.avg_load,
                        GroupType::HasSpare => {
                            g.idle_cpus < bg.idle_cpus
                                || (g.idle_cpus == bg.idle_cpus && g.nr_running > bg.nr_running)
                        }
                    },
                };
                if better { Some(i) } else { Some(b) }
            }
        };
    }
    busiest
}

/// Where the moves already decided in this call put `t` (`None`: not moved).
fn planned_cpu(out: &BalanceOut, t: TaskId) -> Option<CpuId> {
    out.migrations
        .iter()
        .rev()
        .find(|m| m.task == t)
        .map(|m| m.to)
}

/// What the moves already decided in this balancer call change on one CPU.
#[derive(Clone, Copy, Debug, Default)]
struct Planned {
    nr: i64,
    load: i64,
    util: i64,
}

/// Which newidle gate the era uses (the `avg_idle` check at the top of `newidle_balance()`,
/// `sched_balance_newidle()` from 6.10).
///
/// Each step adds to the previous one (`idle_balance()`, from 5.x `newidle_balance()`, in
/// kernel/sched.c and later kernel/sched/fair.c; dates checked against the 2.6.31, 2.6.32,
/// 3.10, 3.12, 3.13, 3.16 and 3.17 sources).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NewidleGate {
    /// 2.6.2x – 2.6.31: always try.
    Always,
    /// 2.6.32 – 3.12: skip when `avg_idle < sysctl_sched_migration_cost` ("sched:
    /// Rate-limit newidle", 2.6.32).
    MigrationCost,
    /// 3.13 – 3.16: also stop at the domain whose `max_newidle_lb_cost`, added to the cost
    /// spent so far, exceeds `avg_idle` (9bd721c55c8a, 3.13).
    DomainCost,
    /// 3.17 – 5.15: also skip when no CPU of the root domain is overloaded (`rd->overload`,
    /// 4486edd12b5a, 3.17).
    Overload,
    /// 5.16+: the first test compares `avg_idle` with the lowest domain's
    /// `max_newidle_lb_cost` instead of the migration cost.
    LbCost,
}

/// When a failing balancing pass escalates to an active balance (`need_active_balance()`)
/// \[M\].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActiveBalance {
    /// Never (an ablation: the kernel always had active balancing).
    Off,
    /// 2.6.x – 5.9: any pass that moved nothing once `nr_balance_failed` exceeds
    /// `cache_nice_tries + 2`, whatever it was trying to move.
    Failed,
    /// 5.10+ ("imbalanced active balance"): the same count, but only for passes that were
    /// moving tasks (`migrate_task`), not load or utilisation.
    FailedTasks,
}

/// The sched-domain load balancer.
#[derive(Clone, Debug)]
pub struct CfsBalancer {
    /// Newidle gate of the era.
    pub newidle_gate: NewidleGate,
    /// `sysctl_sched_migration_cost` (task_hot).
    pub migration_cost_ns: u64,
    /// Buddies count as cache hot (`CACHE_HOT_BUDDY`).
    pub cache_hot_buddy: bool,
    /// `sysctl_sched_nr_migrate`.
    pub nr_migrate: u32,
    /// Compute the SIS_UTIL `nr_idle_scan` at LLC-level balancing.
    pub sis_util: bool,
    /// Jiffy length, ns.
    pub tick_ns: u64,
    /// When repeated failures escalate to an active balance (era rule).
    pub active_balance: ActiveBalance,
    /// Which `cpu_load[]` average each pass reads (era rule; [`LoadIdx::None`] from 5.0).
    pub load_idx: LoadIdx,
    /// Which `find_busiest_group()` the era runs: load-based before 5.5 (era rule).
    pub lb_rules: LbRules,
    /// `CONFIG_PREEMPT`: a newly idle pass of the load-based eras stops after one task.
    pub preempt_full: bool,
    state: Vec<Vec<DomainState>>,
    /// Per CPU, the effect of the moves decided earlier in the same call. The engine applies
    /// moves only after the call returns, but a nohz kick balances for every idle CPU in one
    /// call; in the kernel each of those passes sees the moves of the previous ones (they
    /// are applied at once under the runqueue locks). Without this overlay every idle CPU
    /// of a kick saw the same stale busiest queue and only the first could take anything.
    planned: Vec<Planned>,
    planned_dirty: bool,
    nohz_next: Time,
    /// Reused `detach_tasks` candidate list (no allocation per balance pass).
    detach_scratch: Vec<(Time, TaskId)>,
}

impl CfsBalancer {
    /// A balancer for a machine of `nr_cpus` whose domain chains have the given depths.
    pub fn new(migration_cost_ns: u64, tick_ns: u64) -> Self {
        CfsBalancer {
            newidle_gate: NewidleGate::LbCost,
            migration_cost_ns,
            cache_hot_buddy: true,
            nr_migrate: 32,
            sis_util: true,
            tick_ns,
            active_balance: ActiveBalance::FailedTasks,
            load_idx: LoadIdx::None,
            lb_rules: LbRules::GroupTypes,
            preempt_full: true,
            state: Vec::new(),
            planned: Vec::new(),
            planned_dirty: false,
            nohz_next: 0,
            detach_scratch: Vec::new(),
        }
    }

    /// A balancer reading every setting it shares with the kernel configuration from `cfg`
    /// (migration cost, jiffy, CACHE_HOT_BUDDY, nr_migrate, SIS_UTIL), so a caller copies
    /// none of them by hand; the era's gates are set by the caller.
    pub fn for_config(cfg: &crate::SchedConfig) -> Self {
        let mut b = CfsBalancer::new(cfg.tunables.migration_cost_ns, cfg.tunables.tick_ns());
        b.cache_hot_buddy = cfg.features.cache_hot_buddy;
        b.nr_migrate = cfg.tunables.nr_migrate;
        b.sis_util = cfg.features.sis_util;
        b.preempt_full = cfg.preempt == crate::config::PreemptModel::Full;
        b
    }

    fn ensure_state(&mut self, view: &SchedView<'_>) {
        if self.planned_dirty {
            self.planned.fill(Planned::default());
            self.planned_dirty = false;
        }
        if !self.state.is_empty() {
            return;
        }
        self.planned = vec![Planned::default(); view.nr_cpus()];
        self.state = CpuId::range(view.nr_cpus())
            .map(|c| {
                view.domains()
                    .of(c)
                    .iter()
                    .map(|sd| DomainState {
                        last_balance: 0,
                        balance_interval_ms: sd.min_interval_ms,
                        nr_balance_failed: 0,
                        max_newidle_lb_cost: 0,
                        last_decay: 0,
                        stat: LbDomain::default(),
                    })
                    .collect()
            })
            .collect();
    }

    /// `nohz_balancer_kick()`: this busy CPU has a task waiting, or more than one CPU of
    /// its LLC is busy (`nr_busy_cpus > 1`, 3.x+ \[M\]: packed SMT cores or a busy LLC may
    /// have a task an idle CPU could take, though no runqueue has two). Without the second
    /// rule, CPUs each running one task never let idle CPUs balance, and an active balance
    /// (which needs periodic idle passes to fail) could never happen.
    fn nohz_kick_needed(&self, cpu: CpuId, view: &SchedView<'_>) -> bool {
        if view.nr_running(cpu) >= 2 {
            return true;
        }
        let llc = view.topo().cpu(cpu).llc;
        view.topo().llcs()[llc]
            .iter()
            .filter(|&c| view.curr(c).is_some())
            .nth(1)
            .is_some()
    }

    /// Records a decided move in the overlay.
    fn plan(&mut self, t: TaskId, from: CpuId, to: CpuId, view: &SchedView<'_>) {
        let (l, u) = (view.task_load(t) as i64, view.task_util(t) as i64);
        let f = &mut self.planned[from];
        f.nr -= 1;
        f.load -= l;
        f.util -= u;
        let d = &mut self.planned[to];
        d.nr += 1;
        d.load += l;
        d.util += u;
        self.planned_dirty = true;
    }

    /// Runnable tasks on `c` once the moves decided in this call are done.
    fn nr_at(&self, view: &SchedView<'_>, c: CpuId) -> u32 {
        (view.nr_runnable(c) as i64 + self.planned[c].nr).max(0) as u32
    }

    /// The load of `c` once the moves decided in this call are done.
    fn load_at(&self, view: &SchedView<'_>, c: CpuId) -> u64 {
        (view.cpu_load(c) as i64 + self.planned[c].load).max(0) as u64
    }

    /// The utilisation of `c` once the moves decided in this call are done.
    fn util_at(&self, view: &SchedView<'_>, c: CpuId) -> u64 {
        (view.cpu_util(c) as i64 + self.planned[c].util).max(0) as u64
    }

    /// The load of `c` a pass reading load index `idx` sees (`source_load()` for a CPU of
    /// another group, `target_load()` for one of the local group), once the moves decided
    /// in this call are done. Index 0 is the current load.
    fn load_idx_at(&self, view: &SchedView<'_>, c: CpuId, idx: usize, local: bool) -> u64 {
        let load = if local {
            view.target_load(c, idx)
        } else {
            view.source_load(c, idx)
        };
        (load as i64 + self.planned[c].load).max(0) as u64
    }

    /// Whether `c` is idle and receives nothing from this call.
    fn idle_at(&self, view: &SchedView<'_>, c: CpuId) -> bool {
        view.idle(c) && self.planned[c].nr <= 0
    }

    fn interval_ns(&self, sd: &SchedDomain, st: &DomainState, busy: bool, nr_cpus: usize) -> u64 {
        let mut ms = st.balance_interval_ms;
        if busy {
            ms *= sd.busy_factor as u64;
        }
        let mut j = (ms * NSEC_PER_MSEC).div_ceil(self.tick_ns);
        if busy {
            j = j.saturating_sub(1);
        }
        let max_j = (NSEC_PER_SEC / self.tick_ns) * nr_cpus as u64 / 10;
        j.clamp(1, max_j.max(1)) * self.tick_ns
    }

    fn rebalance_domains(
        &mut self,
        cpu: CpuId,
        idle: bool,
        view: &SchedView<'_>,
        hints: &mut Hints,
        out: &mut BalanceOut,
    ) {
        let now = view.now();
        let doms = view.domains().of(cpu);
        for (i, sd) in doms.iter().enumerate() {
            {
                let st = &mut self.state[cpu][i];
                if now.saturating_sub(st.last_decay) >= NSEC_PER_SEC {
                    st.max_newidle_lb_cost = st.max_newidle_lb_cost * 253 / 256;
                    st.last_decay = now;
                }
            }
            let busy = !idle;
            let interval = self.interval_ns(sd, &self.state[cpu][i], busy, view.nr_cpus());
            if now >= self.state[cpu][i].last_balance + interval {
                let mut cont = true;
                let it = if idle {
                    IdleType::Idle
                } else {
                    IdleType::NotIdle
                };
                self.load_balance(cpu, i, sd, it, view, hints, out, &mut cont);
                self.state[cpu][i].last_balance = now;
                if !cont {
                    break;
                }
            }
        }
    }

    /// `update_sg_lb_stats()` of one group; `idx` is the pass's load index and `local`
    /// whether the group holds the balancing CPU.
    fn group_stats(
        &self,
        group: &CpuSet,
        view: &SchedView<'_>,
        pct: u32,
        idx: usize,
        local: bool,
    ) -> GroupStats {
        let mut g = GroupStats {
            nr_running: 0,
            load: 0,
            util: 0,
            capacity: 0,
            idle_cpus: 0,
            weight: 0,
            avg_load: 0,
            kind: GroupType::HasSpare,
        };
        for c in group.iter() {
            g.nr_running += self.nr_at(view, c);
            g.load += self.load_idx_at(view, c, idx, local);
            g.util += self.util_at(view, c);
            g.capacity += view.capacity(c);
            g.idle_cpus += u32::from(self.idle_at(view, c));
            g.weight += 1;
        }
        g.avg_load = g.load * 1024 / g.capacity.max(1);
        let pct = pct as u64;
        let has_capacity = (g.nr_running < g.weight)
            || (g.capacity * pct >= (g.util * 100) && g.capacity * 100 > g.util * pct);
        g.kind = if g.nr_running > g.weight && g.capacity * 100 < g.util * pct {
            GroupType::Overloaded
        } else if g.nr_running > g.weight {
            // More tasks than CPUs with low utilisation still counts as overloaded for
            // moving tasks (the runnable check of group_is_overloaded).
            GroupType::Overloaded
        } else if !has_capacity || g.nr_running >= g.weight {
            GroupType::FullyBusy
        } else {
            GroupType::HasSpare
        };
        g
    }
}

impl Balancer for CfsBalancer {
    fn name(&self) -> String {
        "cfs".into()
    }

    fn schedstat(&self, cpu: CpuId, sd_idx: usize) -> LbDomain {
        self.state
            .get(cpu.index())
            .and_then(|v| v.get(sd_idx))
            .map_or_else(LbDomain::default, |s| s.stat)
    }

    fn tick(&mut self, cpu: CpuId, view: &SchedView<'_>, hints: &mut Hints, out: &mut BalanceOut) {
        self.ensure_state(view);
        let idle = view.curr(cpu).is_none();
        self.rebalance_domains(cpu, idle, view, hints, out);
        // nohz: a busy CPU kicks balancing on behalf of the tickless idle CPUs.
        if !idle && view.now() >= self.nohz_next && self.nohz_kick_needed(cpu, view) {
            self.nohz_next = view.now() + self.tick_ns;
            // Each pass sees the moves of the previous ones (the overlay); a CPU that has
            // just been given work is no longer idle and is skipped, as the kernel's
            // nohz_idle_balance skips CPUs that stopped being idle.
            for c in CpuId::range(view.nr_cpus()) {
                if self.idle_at(view, c) {
                    self.rebalance_domains(c, true, view, hints, out);
                }
            }
        }
    }

    fn newidle(
        &mut self,
        cpu: CpuId,
        view: &SchedView<'_>,
        hints: &mut Hints,
        out: &mut BalanceOut,
    ) {
        self.ensure_state(view);
        if self.newidle_gate >= NewidleGate::Overload && !view.overloaded() {
            return;
        }
        let avg_idle = view.avg_idle(cpu);
        let doms = view.domains().of(cpu);
        if doms.is_empty() {
            return;
        }
        match self.newidle_gate {
            NewidleGate::Always => {}
            NewidleGate::MigrationCost | NewidleGate::DomainCost | NewidleGate::Overload => {
                if avg_idle < self.migration_cost_ns {
                    return;
                }
            }
            NewidleGate::LbCost => {
                if avg_idle < self.state[cpu][0].max_newidle_lb_cost {
                    return;
                }
            }
        }
        let mut cost = 0u64;
        for (i, sd) in doms.iter().enumerate() {
            if self.newidle_gate >= NewidleGate::DomainCost
                && avg_idle < cost + self.state[cpu][i].max_newidle_lb_cost
            {
                break;
            }
            if !sd.has(flags::BALANCE_NEWIDLE) {
                continue;
            }
            let before = out.cost_ns;
            let mut cont = true;
            let pulled =
                self.load_balance(cpu, i, sd, IdleType::NewlyIdle, view, hints, out, &mut cont);
            let d = out.cost_ns - before;
            let st = &mut self.state[cpu][i];
            st.max_newidle_lb_cost = st.max_newidle_lb_cost.max(d);
            cost += d;
            if pulled > 0 {
                break;
            }
        }
    }
}
