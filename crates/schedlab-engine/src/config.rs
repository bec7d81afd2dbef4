//! What kind of kernel the simulated machine runs: the fair-class flavour, tunables and
//! sched_feat-style features. A policy preset (schedlab-policies) builds one of these per era;
//! the engine only interprets it.

use crate::time::{NSEC_PER_MSEC, Time};

/// The pick/preemption model of the fair class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassKind {
    /// O(1)-era approximation (2.5.59): round robin with timeslices and a sleep bonus.
    O1,
    /// CFS (2.6.23 – 6.5): vruntime, wakeup granularity, buddies.
    Cfs,
    /// EEVDF (6.6+): lag, eligibility, virtual deadlines.
    Eevdf,
}

/// Which load signal `cpu_load()` and `task_h_load()` return (by era: the instantaneous
/// weights until 3.10, PELT's `runnable_load_avg` from 3.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadSignal {
    /// 2.6.23 – 3.10: instantaneous sum of runnable weights (`rq->load.weight`).
    Instant,
    /// 3.11 – 5.4: PELT, runnable tasks only (`cfs.runnable_load_avg`).
    PeltRunnable,
    /// 5.5+: PELT including the decaying load of blocked tasks.
    PeltBlocked,
}

/// How `sched_tunable_scaling` multiplies the base tunables by the CPU count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunableScaling {
    /// Factor 1.
    None,
    /// `1 + ilog2(min(ncpus, 8))` (the default).
    Log,
    /// `min(ncpus, 8)`.
    Linear,
}

/// The kernel's preemption model (`CONFIG_PREEMPT_*`, or `preempt=` under PREEMPT_DYNAMIC,
/// 5.12+): when a set need_resched takes effect (`kernel/Kconfig.preempt`; the 6.13 static-call
/// table of `kernel/sched/core.c`; `exit_to_user_mode_loop()` of `kernel/entry/common.c`).
///
/// Every modelled wakee and running task is a fair-class task, so "a fair request" is every
/// request the simulator makes. Reconstructed \[M\]: the modelled syscalls are short, so a
/// kernel-mode task reaches its return to user at the end of its current op (the
/// `cond_resched()`/`might_sleep()` points inside long kernel work are not modelled, which
/// makes `None` and `Voluntary` alike here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreemptModel {
    /// PREEMPT_NONE: a kernel-mode task is rescheduled only when it returns to user (or
    /// blocks); a user-mode task at once (the IPI's or the tick's return to user).
    None,
    /// PREEMPT_VOLUNTARY: as `None`, plus the `might_sleep()` points inside the kernel.
    Voluntary,
    /// PREEMPT (full): at once, in kernel mode too (`preempt_enable()`, IRQ exit).
    Full,
    /// PREEMPT_LAZY (6.13+): a fair-class request sets the lazy bit, which sends no IPI and
    /// is acted on at the next return to user or at the next tick (`sched_tick()` upgrades
    /// it to a full request, then full-preemption rules apply).
    Lazy,
}

/// Scheduler tunables (unscaled base values, as in the kernel's normalized sysctls).
#[derive(Clone, Debug, PartialEq)]
pub struct Tunables {
    /// `sched_latency_ns` (CFS period target).
    pub latency_ns: u64,
    /// `sched_min_granularity_ns` (CFS) / `sched_base_slice_ns` (EEVDF).
    pub min_granularity_ns: u64,
    /// `sched_wakeup_granularity_ns`.
    pub wakeup_granularity_ns: u64,
    /// `sched_migration_cost_ns` (task_hot, newidle gate; not scaled).
    pub migration_cost_ns: u64,
    /// Scaling mode.
    pub scaling: TunableScaling,
    /// Timer frequency (jiffies per second).
    pub hz: u64,
    /// O(1): timeslice of a nice-0 task.
    pub o1_timeslice_ns: u64,
    /// `sysctl_sched_nr_migrate`: most tasks moved per balance.
    pub nr_migrate: u32,
}

impl Default for Tunables {
    fn default() -> Self {
        Tunables {
            latency_ns: 6 * NSEC_PER_MSEC,
            min_granularity_ns: 750_000,
            wakeup_granularity_ns: NSEC_PER_MSEC,
            migration_cost_ns: 500_000,
            scaling: TunableScaling::Log,
            hz: 1000,
            o1_timeslice_ns: 100 * NSEC_PER_MSEC,
            nr_migrate: 32,
        }
    }
}

impl Tunables {
    /// The boot-time multiplier for `ncpus` online CPUs.
    pub fn factor(&self, ncpus: usize) -> u64 {
        let n = ncpus.clamp(1, 8) as u64;
        match self.scaling {
            TunableScaling::None => 1,
            TunableScaling::Log => 1 + (63 - n.leading_zeros() as u64),
            TunableScaling::Linear => n,
        }
    }

    /// One jiffy in ns.
    pub fn tick_ns(&self) -> Time {
        1_000_000_000 / self.hz.max(1)
    }
}

/// sched_feat-style switches the engine itself interprets (placement switches belong to the
/// policy).
#[derive(Clone, Debug, PartialEq)]
pub struct Features {
    /// Wakeups may preempt the running task at all.
    pub wakeup_preemption: bool,
    /// CFS: bias the next pick to the wakee.
    pub next_buddy: bool,
    /// CFS: bias the next pick back to the preempted task.
    pub last_buddy: bool,
    /// Buddies count as cache hot for the balancer.
    pub cache_hot_buddy: bool,
    /// CFS: halve the sleeper credit.
    pub gentle_fair_sleepers: bool,
    /// CFS: new tasks start one slice in the future.
    pub start_debit: bool,
    /// EEVDF: keep lag across sleep.
    pub place_lag: bool,
    /// EEVDF: new tasks get half a slice of deadline.
    pub place_deadline_initial: bool,
    /// EEVDF: do not preempt curr before it reaches its deadline.
    pub run_to_parity: bool,
    /// EEVDF: a wakee with a shorter slice may preempt under RUN_TO_PARITY.
    pub preempt_short: bool,
    /// EEVDF: tasks that block while ineligible stay queued until picked.
    pub delay_dequeue: bool,
    /// EEVDF (6.12+ DELAY_ZERO): a delayed task's positive lag is zeroed when it is finally
    /// dequeued at a pick, and when it is woken in place it is re-placed at the average
    /// with zero lag if its lag turned positive meanwhile (`requeue_delayed_entity()`).
    pub delay_zero: bool,
    /// Remote wakeups go through the target's wakelist (IPI) rather than a remote enqueue.
    pub ttwu_queue: bool,
    /// A CPU chosen for a pending wakeup looks busy at once (`ttwu_pending`, 5.x+ after the
    /// Nov-2022 fix); when false, wakers deciding at nearly the same time can all
    /// pick the same still-idle-looking CPU during the IPI or wakelist delay and stack there.
    pub ttwu_pending_visible: bool,
    /// 5.10-era `BASE_SLICE`: slices are at least min_granularity.
    pub base_slice: bool,
    /// 4.7+: a new task's initial utilisation is bounded by half the spare capacity of its
    /// CPU (`post_init_entity_util_avg`); before, half a CPU wherever it lands.
    pub util_init_bounded: bool,
    /// Bookkeeping for SIS_CACHE (Chen Yu, 2023; not mainline): each task's average short
    /// sleep, and a CPU left idle by a short sleeper reserved for that long
    /// ([`crate::policy::TaskHints::sleep_avg`], [`crate::policy::CpuHints::cache_hot_until`]).
    /// Off unless the switch asks for it, so other runs do no extra work.
    pub track_short_sleep: bool,
    /// Bookkeeping for migration damping (Desnoyers, 2023; not mainline): when each task
    /// last changed CPU ([`crate::policy::TaskHints::last_migration`]).
    pub track_migrations: bool,
    /// The per-LLC idle cpumask of Aubrey Li's 2020 and Abel Wu's 2022 scan filters (not
    /// mainline): a CPU is set when it enters idle and cleared by its tick while busy
    /// ([`crate::policy::LlcHints::idle_cpus`]).
    pub idle_cpumask: bool,
    /// SIS_UTIL (70fb5ccf2ebb, 6.0): the balancer computes the LLC's `nr_idle_scan` at
    /// LLC-level periodic balancing, and the placement's idle-CPU scan is bounded by it.
    pub sis_util: bool,
    /// An ablation no kernel has: `ttwu_runnable` charges the running task (`update_curr`)
    /// before `requeue_delayed_entity()` measures the delayed wakee's lag. Every release
    /// from 6.12 through 7.1 requeues against the waker's stale vruntime and updates it only
    /// in the preemption check; this order was the engine's until it was found to keep
    /// every overtaken delayed wakee from preempting. Kept for the test that shows the
    /// order decides the regime.
    pub requeue_update_curr: bool,
    /// The wakeup-preemption pick finishes the delayed dequeue of a delayed entity it
    /// meets and picks again (ac8e69e69363 "Fix wakeup_preempt_fair vs delayed dequeue",
    /// 7.1; in 6.18.y from 6.18.33).
    pub wakeup_pick_dequeues_delayed: bool,
    /// The lag clamp is the longest queued slice plus a tick (6e3c0a4e1ad1 "Fix lag clamp",
    /// 7.0; in 6.18.y by 6.18.33) instead of twice the task's slice or a tick.
    pub lag_clamp_max_slice: bool,
    /// PREEMPT_SHORT as 6.17 reworked it (9de74a9850b9, 9cdb4fe20cd2): a wakee with a
    /// shorter slice is tested by a pick without the waker's protection. Before (6.12-6.16)
    /// the protection is cancelled only when the wakee is eligible and its deadline earlier
    /// (or the waker ineligible).
    pub preempt_short_unprotected: bool,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            wakeup_preemption: true,
            next_buddy: false,
            last_buddy: true,
            cache_hot_buddy: true,
            gentle_fair_sleepers: true,
            start_debit: true,
            place_lag: true,
            place_deadline_initial: true,
            run_to_parity: true,
            preempt_short: false,
            delay_dequeue: false,
            delay_zero: false,
            ttwu_queue: true,
            ttwu_pending_visible: true,
            base_slice: false,
            util_init_bounded: true,
            track_short_sleep: false,
            track_migrations: false,
            idle_cpumask: false,
            sis_util: true,
            requeue_update_curr: false,
            wakeup_pick_dequeues_delayed: false,
            lag_clamp_max_slice: false,
            preempt_short_unprotected: false,
        }
    }
}

/// Everything about the simulated kernel that is not the placement policy or balancer.
#[derive(Clone, Debug, PartialEq)]
pub struct SchedConfig {
    /// Human label, e.g. `linux-6.6`.
    pub label: String,
    /// Pick/preemption model.
    pub class: ClassKind,
    /// Tunables.
    pub tunables: Tunables,
    /// Features.
    pub features: Features,
    /// Load signal the policies and balancer see.
    pub load_signal: LoadSignal,
    /// Sched-domain parameters era.
    pub domain_era: schedlab_topo::DomainEra,
    /// How the shared objects issue their wakeups in this kernel.
    pub wake: crate::wake_rules::WakeRules,
    /// When a requested reschedule takes effect.
    pub preempt: PreemptModel,
}

impl Default for SchedConfig {
    fn default() -> Self {
        SchedConfig {
            label: "default (CFS 5.x shape)".into(),
            class: ClassKind::Cfs,
            tunables: Tunables::default(),
            features: Features::default(),
            load_signal: LoadSignal::PeltBlocked,
            domain_era: schedlab_topo::DomainEra::Linux510,
            wake: crate::wake_rules::WakeRules::default(),
            preempt: PreemptModel::Voluntary,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_factor_matches_spec() {
        let t = Tunables::default();
        assert_eq!(t.factor(1), 1);
        assert_eq!(t.factor(2), 2);
        assert_eq!(t.factor(3), 2);
        assert_eq!(t.factor(4), 3);
        assert_eq!(t.factor(8), 4);
        assert_eq!(t.factor(80), 4);
    }
}
