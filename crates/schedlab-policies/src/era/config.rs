//! What an era's kernel configuration is, derived from its version: the load signal, the
//! domain parameters, the tunables, the `sched_feat` defaults and the preemption model, each
//! a rule written against kernel versions ("from 4.7 on"), so a preset placed between two
//! others gets its own kernel's configuration. The era's other facts are its row of
//! [`crate::ERAS`] (`era.rs`).

use super::Era;
use crate::version::{stable, v, v26};
use schedlab_engine::config::TunableScaling;
use schedlab_engine::{ClassKind, Features, LoadSignal, PreemptModel, SchedConfig, Tunables};
use schedlab_topo::DomainEra;

impl Era {
    /// Which `cpu_load()` the era's heuristics read: instantaneous load until 3.10, PELT's
    /// runnable average from 3.11, the average with blocked load from 5.5 (the load-balance
    /// rework, as docs/policies/cfs-5.md dates it \[M\]).
    /// PELT's per-entity sums exist from 3.8, but until 3.10 `weighted_cpuload()` still
    /// returned `rq->load.weight`; 3.11 switched it and `cpu_avg_load_per_task()` to
    /// `cfs.runnable_load_avg` (Alex Shi's runnable-load series, b92486cbf2aa).
    pub fn load_signal(self) -> LoadSignal {
        if self.before(v(3, 11)) {
            LoadSignal::Instant
        } else if self.before(v(5, 5)) {
            LoadSignal::PeltRunnable
        } else {
            LoadSignal::PeltBlocked
        }
    }

    /// Domain parameters of the era (2.6.x → Linux26, 3.x–5.9 → Linux3, 5.10+ → Linux510).
    pub fn domain_era(self) -> DomainEra {
        if self.before(v(3, 0)) {
            DomainEra::Linux26
        } else if self.before(v(5, 10)) {
            DomainEra::Linux3
        } else {
            DomainEra::Linux510
        }
    }

    /// Base (unscaled) tunables of the era: `sysctl_sched_latency`, `min_granularity`,
    /// `wakeup_granularity` as 2.6.30 (20/4/5 ms), 2.6.32 (5/1/1 ms) and 2.6.33 on
    /// (6/0.75/1 ms).
    pub fn tunables(self) -> Tunables {
        let mut t = Tunables {
            scaling: TunableScaling::Log,
            hz: 1000,
            ..Tunables::default()
        };
        if self.class() != ClassKind::O1 {
            let (lat, min, wake) = if self.before(v26(32)) {
                (20_000_000, 4_000_000, 5_000_000)
            } else if self.before(v26(33)) {
                (5_000_000, 1_000_000, 1_000_000)
            } else {
                (6_000_000, 750_000, 1_000_000)
            };
            // 6.15 cut the base slice to 0.70 ms so a slice ends before the tick that
            // would give it one more (2ae891b82695).
            let min = if self.since(v(6, 15)) { 700_000 } else { min };
            t.latency_ns = lat;
            t.min_granularity_ns = min;
            t.wakeup_granularity_ns = wake;
        }
        t.migration_cost_ns = 500_000;
        t
    }

    /// Engine-interpreted feature defaults of the era (the `sched_feat` defaults of each
    /// kernel, `kernel/sched/features.h`), as kernel-version rules.
    pub fn features(self) -> Features {
        let cfs = self.class() == ClassKind::Cfs;
        let eevdf = self.class() == ClassKind::Eevdf;
        Features {
            wakeup_preemption: true,
            next_buddy: false,
            last_buddy: cfs,
            // In CFS from its start (2.6.2x; the release is not pinned): 2.6.23.
            cache_hot_buddy: self.since(v26(23)),
            // 2.6.32 (the gentler fair-sleepers feature) until EEVDF replaced it in 6.6.
            gentle_fair_sleepers: self.within(v26(32), v(6, 6)),
            start_debit: cfs,
            place_lag: eevdf,
            place_deadline_initial: eevdf,
            run_to_parity: eevdf,
            // Both arrived with EEVDF's completion in 6.12.
            preempt_short: self.since(v(6, 12)),
            delay_dequeue: self.since(v(6, 12)),
            // DELAY_ZERO came with DELAY_DEQUEUE (6.12 features.h).
            delay_zero: self.since(v(6, 12)),
            // 3.0 moved the second half of a remote wakeup to the target CPU.
            ttwu_queue: self.since(v(3, 0)),
            // Pre-3.0 wakeups enqueue under the remote lock (nr_running visible at once);
            // 3.x–5.7 idle_cpu() tests the wake list; 5.8–6.1 cleared ttwu_pending before the
            // enqueue (see docs/policies/cfs-5.md); fixed from 6.2.
            ttwu_pending_visible: !self.within(v(5, 8), v(6, 2)),
            // 5.13-6.5: a slice is at least sched_min_granularity; EEVDF replaced it in 6.6.
            base_slice: self.within(v(5, 13), v(6, 6)),
            // 4.7 bounded a new task's initial utilisation.
            util_init_bounded: self.since(v(4, 7)),
            // Bookkeeping of debated patches: off until their switch asks for it.
            track_short_sleep: false,
            track_migrations: false,
            idle_cpumask: false,
            // SIS_UTIL (70fb5ccf2ebb, 6.0) on by default from its release.
            sis_util: self.since(v(6, 0)),
            requeue_update_curr: false,
            // 7.1 (ac8e69e69363), and 6.18.y from 6.18.33.
            wakeup_pick_dequeues_delayed: self.since(v(7, 1))
                || self.within(stable(6, 18, 33), v(6, 19)),
            // 7.0 (6e3c0a4e1ad1), and 6.18.y before 6.18.33.
            lag_clamp_max_slice: self.since(v(7, 0)) || self.within(stable(6, 18, 33), v(6, 19)),
            // 6.17's PREEMPT_SHORT rework (9de74a9850b9).
            preempt_short_unprotected: self.since(v(6, 17)),
        }
    }

    /// The whole kernel configuration of the era, before switches.
    pub fn config(self) -> SchedConfig {
        SchedConfig {
            label: self.name().to_string(),
            class: self.class(),
            tunables: self.tunables(),
            features: self.features(),
            load_signal: self.load_signal(),
            domain_era: self.domain_era(),
            wake: self.wake_rules(),
            preempt: self.preempt_model(),
        }
    }

    /// The preemption model a preset assumes: PREEMPT_VOLUNTARY, what x86_64's defconfig
    /// and the common distribution kernels of every modelled era build (Kconfig's own
    /// default is PREEMPT_NONE, which behaves alike here: a wakeup preemption waits for the
    /// waker's return to user). `schedlab host check` and `run -t host` read the machine's
    /// own model instead; the `PREEMPT_*` switches select another.
    pub fn preempt_model(self) -> PreemptModel {
        // 7.0 removed none and voluntary on x86 and arm64 (7dadeaa6e851); lazy is the
        // remaining mode nearest them [M].
        if self.since(v(7, 0)) {
            PreemptModel::Lazy
        } else {
            PreemptModel::Voluntary
        }
    }
}
