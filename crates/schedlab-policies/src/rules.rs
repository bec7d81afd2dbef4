//! The placement's era rules: each mechanism that appeared or went away inside one family's
//! code, as the kernel versions that have it. The policies ask `s.era.has(rules::X)`; the
//! version, not a neighbouring modelled era, decides, so a preset added between two
//! existing ones gets its own kernel's behaviour. What the kernel configuration derives
//! from the version is in [`crate::era`], the idle search per era is a column of
//! [`crate::ERAS`], and switch applicability is in [`crate::switches`].
//!
//! \[M\]: the version is dated by us, not read in the kernel's history.

use crate::version::{Versions, only, since, span, until, v, v25, v26};

/// CFS (2.6.23) and EEVDF: every fair-class kernel.
pub(crate) const ALL_CFS: Versions = since(v26(23));
/// The 2.5.59 O(1) scheduler with its first NUMA balancer (our only O(1) kernel).
pub(crate) const O1: Versions = only(v25(59));
/// The September 2023 postings against tip for 6.6 (SIS_CACHE, Desnoyers' two patches).
pub(crate) const AGAINST_6_6: Versions = only(v(6, 6));
/// `AFFINE_WAKEUPS` gates affine wakeups until 2.6.33 removed it.
pub(crate) const AFFINE_WAKEUPS: Versions = span(v26(23), v26(33));
/// `record_wakee` and the first `wake_wide` (62470419e993, 3.12).
pub(crate) const RECORD_WAKEE: Versions = since(v(3, 12));
/// `wakee_flips` halved once a second instead of wiped (~3.16 \[M\]).
pub(crate) const WAKEE_FLIPS_HALVED: Versions = since(v(3, 16));
/// The capacity-aware `wake_affine` (3.16-4.12; CFS-3 and CFS-4 call it).
pub(crate) const CAPACITY_WAKE_AFFINE: Versions = since(v(3, 16));
/// The 2015 variants proposed against 4.2 (WAKE_WIDE_IDLE, PREFER_IDLE_CPU).
pub(crate) const AGAINST_4_2: Versions = only(v(4, 2));
/// `SD_LOAD_BALANCE` stops the domain walk where a level lacks it, until 5.8 removed the flag.
pub(crate) const LOAD_BALANCE_FLAG: Versions = until(v(5, 8));
/// `wake_affine_idle` + `wake_affine_weight` (WA_*: d153b153446f, f2cdd9cc6c97; 4.14).
pub(crate) const WA_SPLIT: Versions = since(v(4, 14));
/// The waker records its own CPU as `recent_used_cpu` (4.16 to ~5.15 \[M\]).
pub(crate) const RECENT_USED_WAKER_SIDE: Versions = span(v(4, 16), v(5, 16));
/// `recent_used_cpu` always replaced by prev in `select_idle_sibling` (~5.16 \[M\]).
pub(crate) const RECENT_USED_REPLACED: Versions = since(v(5, 16));
/// `wake_affine_idle`'s final "prev is idle" clause, after the sync test (Julia Lawall,
/// d8fcb81f1acf "sched/fair: Check for idle core in wake_affine", v5.10).
pub(crate) const AFFINE_IDLE_PREV: Versions = since(v(5, 10));
/// `find_idlest_cpu` keeps prev when no CPU of the domain is allowed: present by 4.2 (the
/// release that added it is not pinned here) \[M\].
pub(crate) const SLOW_ALLOWED_TEST: Versions = since(v(4, 2));
/// `find_idlest_group` classifies groups by type (5.5's rework) instead of comparing loads.
pub(crate) const GROUP_TYPES: Versions = since(v(5, 5));
/// The NUMA imbalance allowance from the LLCs per node (`imb_numa_nr`, 5.18; simplified).
pub(crate) const NUMA_LLC_ALLOWANCE: Versions = since(v(5, 18));
/// `find_idlest_group_cpu` prefers the shallowest idle state (3.19).
pub(crate) const SHALLOWEST_IDLE: Versions = since(v(3, 19));
/// The 4.9 `select_idle_sibling` rewrite (10e2f1acd010) is the default search.
pub(crate) const NEW_SIS: Versions = since(v(4, 9));
/// SIS_PROP on by default, until 6.0's SIS_UTIL (70fb5ccf2ebb) turned it off.
pub(crate) const SIS_PROP_DEFAULT: Versions = until(v(6, 0));

/// Every rule above by name, for the test that pins each era's answers.
#[cfg(test)]
pub(crate) const ALL: &[(&str, Versions)] = &[
    ("AFFINE_WAKEUPS", AFFINE_WAKEUPS),
    ("RECORD_WAKEE", RECORD_WAKEE),
    ("WAKEE_FLIPS_HALVED", WAKEE_FLIPS_HALVED),
    ("CAPACITY_WAKE_AFFINE", CAPACITY_WAKE_AFFINE),
    ("AGAINST_4_2", AGAINST_4_2),
    ("LOAD_BALANCE_FLAG", LOAD_BALANCE_FLAG),
    ("WA_SPLIT", WA_SPLIT),
    ("RECENT_USED_WAKER_SIDE", RECENT_USED_WAKER_SIDE),
    ("RECENT_USED_REPLACED", RECENT_USED_REPLACED),
    ("AFFINE_IDLE_PREV", AFFINE_IDLE_PREV),
    ("SLOW_ALLOWED_TEST", SLOW_ALLOWED_TEST),
    ("GROUP_TYPES", GROUP_TYPES),
    ("NUMA_LLC_ALLOWANCE", NUMA_LLC_ALLOWANCE),
    ("SHALLOWEST_IDLE", SHALLOWEST_IDLE),
    ("NEW_SIS", NEW_SIS),
    ("SIS_PROP_DEFAULT", SIS_PROP_DEFAULT),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::era::{ERAS, Era, Flow, IdleSearch};
    use crate::version::v;
    use schedlab_engine::{Features, LoadSignal, Tunables};
    use schedlab_topo::DomainEra;

    /// Reads one engine feature.
    type Feature = fn(&Features) -> bool;

    /// Each rule's answer per era as the code before the rules were written against kernel
    /// versions decided it (one digit per era, oldest first: 2.5.59 2.6.30 2.6.32 2.6.33
    /// 2.6.35 3.6 3.10 3.12 4.2 4.6 4.9 4.14 5.13 6.0 6.6 6.12 6.18 6.18.33 6.19 7.0 7.1), copied by hand from its era
    /// comparisons. AFFINE_WAKEUPS is the old switch row (2.6.30-2.6.32); CFS-2, the only
    /// flow that reads it, asked `era <= 2.6.32`, the same on its eras.
    const OLD: &[(&str, &str)] = &[
        ("AFFINE_WAKEUPS", "011000000000000000000"),
        ("RECORD_WAKEE", "000000011111111111111"),
        ("WAKEE_FLIPS_HALVED", "000000001111111111111"),
        ("CAPACITY_WAKE_AFFINE", "000000001111111111111"),
        ("AGAINST_4_2", "000000001000000000000"),
        ("LOAD_BALANCE_FLAG", "111111111111000000000"),
        ("WA_SPLIT", "000000000001111111111"),
        ("RECENT_USED_WAKER_SIDE", "000000000000100000000"),
        ("RECENT_USED_REPLACED", "000000000000011111111"),
        ("AFFINE_IDLE_PREV", "000000000000111111111"),
        ("SLOW_ALLOWED_TEST", "000000001111111111111"),
        ("GROUP_TYPES", "000000000000111111111"),
        ("NUMA_LLC_ALLOWANCE", "000000000000011111111"),
        ("SHALLOWEST_IDLE", "000000001111111111111"),
        ("NEW_SIS", "000000000011111111111"),
        ("SIS_PROP_DEFAULT", "111111111111100000000"),
    ];

    #[test]
    fn every_era_decides_each_rule_as_before() {
        assert_eq!(
            Era::ALL.len(),
            21,
            "a new era needs its digit in OLD's header"
        );
        assert_eq!(OLD.len(), ALL.len(), "every rule has its row of answers");
        for (name, want) in OLD {
            let (_, rule) = ALL
                .iter()
                .find(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("no rule {name}"));
            let got: String = Era::ALL
                .iter()
                .map(|&e| if e.has(*rule) { '1' } else { '0' })
                .collect();
            assert_eq!(&got, want, "{name}");
        }
    }

    /// One digit per era, oldest first (2.5.59 2.6.30 2.6.32 2.6.33 2.6.35 3.6 3.10 3.12
    /// 4.2 4.6 4.9 4.14 5.13 6.0 6.6 6.12 6.18 6.18.33 6.19 7.0 7.1).
    fn digits(f: impl Fn(Era) -> bool) -> String {
        Era::ALL
            .iter()
            .map(|&e| if f(e) { '1' } else { '0' })
            .collect()
    }

    /// The configuration each era derives from its version, against a table copied by hand
    /// from the era comparisons the rules replaced.
    #[test]
    fn every_era_configures_the_kernel_as_before() {
        assert_eq!(
            Era::ALL.len(),
            21,
            "a new era needs its digit in each row below"
        );
        let features: [(&str, Feature, &str); 21] = [
            (
                "wakeup_preemption",
                |f| f.wakeup_preemption,
                "111111111111111111111",
            ),
            ("next_buddy", |f| f.next_buddy, "000000000000000000000"),
            ("last_buddy", |f| f.last_buddy, "011111111111110000000"),
            (
                "cache_hot_buddy",
                |f| f.cache_hot_buddy,
                "011111111111111111111",
            ),
            (
                "gentle_fair_sleepers",
                |f| f.gentle_fair_sleepers,
                "001111111111110000000",
            ),
            ("start_debit", |f| f.start_debit, "011111111111110000000"),
            ("place_lag", |f| f.place_lag, "000000000000001111111"),
            (
                "place_deadline_initial",
                |f| f.place_deadline_initial,
                "000000000000001111111",
            ),
            (
                "run_to_parity",
                |f| f.run_to_parity,
                "000000000000001111111",
            ),
            (
                "preempt_short",
                |f| f.preempt_short,
                "000000000000000111111",
            ),
            (
                "delay_dequeue",
                |f| f.delay_dequeue,
                "000000000000000111111",
            ),
            ("delay_zero", |f| f.delay_zero, "000000000000000111111"),
            ("ttwu_queue", |f| f.ttwu_queue, "000001111111111111111"),
            (
                "ttwu_pending_visible",
                |f| f.ttwu_pending_visible,
                "111111111111001111111",
            ),
            ("base_slice", |f| f.base_slice, "000000000000110000000"),
            (
                "util_init_bounded",
                |f| f.util_init_bounded,
                "000000000011111111111",
            ),
            // 6.0 (70fb5ccf2ebb).
            ("sis_util", |f| f.sis_util, "000000000000011111111"),
            // No kernel: the engine's old requeue order.
            (
                "requeue_update_curr",
                |f| f.requeue_update_curr,
                "000000000000000000000",
            ),
            // 6.17 (9de74a9850b9).
            (
                "preempt_short_unprotected",
                |f| f.preempt_short_unprotected,
                "000000000000000011111",
            ),
            // 7.0 and 6.18.y (6e3c0a4e1ad1).
            (
                "lag_clamp_max_slice",
                |f| f.lag_clamp_max_slice,
                "000000000000000001011",
            ),
            // 7.1 and 6.18.33+ (ac8e69e69363).
            (
                "wakeup_pick_dequeues_delayed",
                |f| f.wakeup_pick_dequeues_delayed,
                "000000000000000001001",
            ),
        ];
        for (name, get, want) in features {
            assert_eq!(digits(|e| get(&e.features())), want, "{name}");
        }
        use LoadSignal::*;
        let signal = [
            Instant,
            Instant,
            Instant,
            Instant,
            Instant,
            Instant,
            Instant,
            PeltRunnable,
            PeltRunnable,
            PeltRunnable,
            PeltRunnable,
            PeltRunnable,
            PeltBlocked,
            PeltBlocked,
            PeltBlocked,
            PeltBlocked,
            PeltBlocked,
            PeltBlocked,
            PeltBlocked,
            PeltBlocked,
            PeltBlocked,
        ];
        use DomainEra::*;
        let domains = [
            Linux26, Linux26, Linux26, Linux26, Linux26, Linux3, Linux3, Linux3, Linux3, Linux3,
            Linux3, Linux3, Linux510, Linux510, Linux510, Linux510, Linux510, Linux510, Linux510,
            Linux510, Linux510,
        ];
        use schedlab_engine::wake_rules::SoftirqThread::{HandOver, Inline, OnResched};
        let softirq = [
            Inline, Inline, Inline, Inline, Inline, Inline, OnResched, OnResched, OnResched,
            OnResched, OnResched, HandOver, HandOver, HandOver, OnResched, OnResched, OnResched,
            OnResched, OnResched, OnResched, OnResched,
        ];
        let o1 = Tunables::default();
        for (i, e) in Era::ALL.into_iter().enumerate() {
            assert_eq!(e.load_signal(), signal[i], "{}", e.name());
            assert_eq!(e.domain_era(), domains[i], "{}", e.name());
            assert_eq!(e.wake_rules().ksoftirqd, softirq[i], "{}", e.name());
            let t = e.tunables();
            let slices = (t.latency_ns, t.min_granularity_ns, t.wakeup_granularity_ns);
            let want = match i {
                0 => (
                    o1.latency_ns,
                    o1.min_granularity_ns,
                    o1.wakeup_granularity_ns,
                ),
                1 => (20_000_000, 4_000_000, 5_000_000),
                2 => (5_000_000, 1_000_000, 1_000_000),
                // 6.15's 0.70 ms base slice (2ae891b82695).
                16..=20 => (6_000_000, 700_000, 1_000_000),
                _ => (6_000_000, 750_000, 1_000_000),
            };
            assert_eq!(slices, want, "{}", e.name());
        }
    }

    /// The flow and idle search of each era, as the old dispatch on era comparisons chose
    /// them (2.6.35 per level, 3.6 idle buddy, up to 4.14 the LLC search with SIS_PROP from
    /// 4.14, then the merged scan with clusters first from 6.12; CFS-2's package enabler at
    /// 2.6.32 only).
    #[test]
    fn every_era_searches_as_before() {
        use IdleSearch::{IdleBuddy, InWalk, Llc, Merged, PerLevel, WakeIdle};
        let want = [
            (Flow::O1, IdleSearch::None),
            (Flow::Cfs1, WakeIdle),
            (Flow::Cfs2, InWalk { package: true }),
            (Flow::Cfs2, InWalk { package: false }),
            (Flow::Cfs3, PerLevel),
            (Flow::Cfs3, IdleBuddy),
            (Flow::Cfs3, Llc { sis_prop: false }),
            (Flow::Cfs3, Llc { sis_prop: false }),
            (Flow::Cfs3, Llc { sis_prop: false }),
            (Flow::Cfs4, Llc { sis_prop: false }),
            (Flow::Cfs4, Llc { sis_prop: false }),
            (Flow::Cfs4, Llc { sis_prop: true }),
            (
                Flow::Cfs4,
                Merged {
                    cluster_first: false,
                },
            ),
            (
                Flow::Cfs4,
                Merged {
                    cluster_first: false,
                },
            ),
            (
                Flow::Cfs4,
                Merged {
                    cluster_first: false,
                },
            ),
            (
                Flow::Cfs4,
                Merged {
                    cluster_first: true,
                },
            ),
            (
                Flow::Cfs4,
                Merged {
                    cluster_first: true,
                },
            ),
            (
                Flow::Cfs4,
                Merged {
                    cluster_first: true,
                },
            ),
            (
                Flow::Cfs4,
                Merged {
                    cluster_first: true,
                },
            ),
            (
                Flow::Cfs4,
                Merged {
                    cluster_first: true,
                },
            ),
            (
                Flow::Cfs4,
                Merged {
                    cluster_first: true,
                },
            ),
        ];
        assert_eq!(want.len(), Era::ALL.len());
        for (e, (flow, search)) in Era::ALL.into_iter().zip(want) {
            assert_eq!(
                (e.def().flow, e.idle_search()),
                (flow, search),
                "{}",
                e.name()
            );
        }
        // The label says CFS-4 exactly where CFS-4's select_task_rq_fair begins.
        assert_eq!(Era::V4_6.era_label(), "CFS-4 (2016)");
        assert!(
            ERAS.iter()
                .all(|d| (d.flow == Flow::Cfs4) == d.version.ge(&v(4, 3)))
        );
    }
}
