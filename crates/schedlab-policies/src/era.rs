//! The kernel eras schedlab models and the presets named after them. Every fact of an era
//! lives in one row of [`ERAS`]: its preset name, kernel version, label, fair class,
//! placement flow, idle search, balancer, what it models and what is reconstructed. The
//! kernel configuration ([`Era::config`]) is derived from the row and from rules written
//! against kernel versions ("from 4.7 on": [`Era::since`], [`Era::before`]), so adding an
//! era is one enum variant, one row and the code that is new in it, and the rules place it
//! by its own version rather than by its neighbours.

use crate::version::{KernelVersion, Versions, stable, v, v25, v26};
use schedlab_engine::ClassKind;
use schedlab_engine::balance::{ActiveBalance, LbRules, NewidleGate};
use schedlab_engine::cpu_load::LoadIdx;

/// A modelled kernel version. Ordered oldest first; each variant has its row in [`ERAS`]
/// (at the index of its discriminant). Rules compare the row's [`KernelVersion`], never two
/// variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Era {
    /// 2.5.59: O(1) scheduler with the first NUMA balancer.
    V2_5_59,
    /// 2.6.30: CFS-1 (`wake_idle`, avg_overlap wake_affine).
    V2_6_30,
    /// 2.6.32: CFS-2, merged domain walk, first select_idle_sibling (package-wide).
    V2_6_32,
    /// 2.6.33: CFS-2 with the SIS enabler moved to SHARE_PKG_RESOURCES.
    V2_6_33,
    /// 2.6.35: CFS-3, wake_affine first then SIS around the choice.
    V2_6_35,
    /// 3.6: CFS-3 with idle_buddy SIS.
    V3_6,
    /// 3.10: CFS-3 with the LLC group scan and PELT loads.
    V3_10,
    /// 3.12: CFS-3 with the first wake_wide inside wake_affine.
    V3_12,
    /// 4.2: capacity-aware wake_affine, halving wakee_flips decay.
    V4_2,
    /// 4.6: CFS-4, the beefed-up wake_wide gates want_affine.
    V4_6,
    /// 4.9: CFS-5, select_idle_sibling rewrite (idle core / cpu / smt).
    V4_9,
    /// 4.14: WA_IDLE/WA_WEIGHT/WA_BIAS and SIS_PROP.
    V4_14,
    /// 5.13: merged idle scan, aged avg_idle, recent_used_cpu, PELT with blocked load.
    V5_13,
    /// 6.0: SIS_UTIL.
    V6_0,
    /// 6.6: EEVDF.
    V6_6,
    /// 6.12: EEVDF with delayed dequeue, PREEMPT_SHORT, cluster-first scan.
    V6_12,
    /// 6.18: 6.12 with the 0.70 ms base slice, PREEMPT_LAZY and the 6.17 slice protection.
    V6_18,
    /// 6.18.33-6.18.44: 6.18 with the stable backports of early 2026 (lag clamp, the
    /// wakeup pick that dequeues delayed entities).
    V6_18_33,
    /// 6.19: 6.18 with NEXT_BUDDY reimplemented and left off.
    V6_19,
    /// 7.0: the lag clamp fix; PREEMPT_NONE and PREEMPT_VOLUNTARY gone (x86, arm64).
    V7_0,
    /// 7.1: the wakeup pick dequeues the delayed entities it meets.
    V7_1,
}

/// Which `select_task_rq_fair` (or O(1) rule) an era runs; see [`crate::select_task_rq`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// 2.5.59 `try_to_wake_up` / `sched_best_cpu` ([`crate::select_task_rq`],
    /// [`crate::sched_best_cpu`]).
    O1,
    /// 2.6.23-2.6.31 ([`crate::select_task_rq_fair`]'s `select_task_rq_fair_2_6_23`).
    Cfs1,
    /// 2.6.32-2.6.34 (`select_task_rq_fair_2_6_32`).
    Cfs2,
    /// 2.6.35-4.2 (`select_task_rq_fair_2_6_35`).
    Cfs3,
    /// 4.3 onwards: CFS-4's `select_task_rq_fair` (63b0e9edceec, the symmetric `wake_wide`
    /// gating want_affine), which CFS-5 and EEVDF keep while changing what it calls
    /// (`select_task_rq_fair_4_3`; what it calls is read from the other columns and rules).
    Cfs4,
}

/// Which idle-CPU search (`select_idle_sibling` and the `select_idle_cpu` it calls) an era
/// runs: a column of [`ERAS`], so the dispatch is read from the table and not spread over
/// the policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleSearch {
    /// No wake-time search (2.5.59's O(1) `try_to_wake_up`).
    None,
    /// 2.6.23-2.6.31 `wake_idle`: an idle SMT sibling ([`crate::wake_idle`]).
    WakeIdle,
    /// 2.6.32-2.6.34 `select_idle_sibling(p, sd, target)` inside the domain walk
    /// ([`crate::select_idle_sibling`]'s `select_idle_sibling_2_6_32`); `package`: enabled at the package level (2.6.32's
    /// PREFER_SIBLING) instead of on the SHARE_PKG_RESOURCES levels (2.6.33 on) \[M\].
    InWalk {
        /// 2.6.32's package-level enabler.
        package: bool,
    },
    /// 2.6.35-3.1: the first idle CPU per level up to the LLC (99bd5e2f245d).
    PerLevel,
    /// 3.6-~3.8: one idle buddy per level (970e178985ca).
    IdleBuddy,
    /// ~3.9-5.11 (`select_idle_sibling_3_9`): the fully-idle group scan, or the 4.9 rewrite
    /// (10e2f1acd010: idle core, idle CPU, idle SMT), as the 2016 RFC bits select.
    Llc {
        /// `select_idle_cpu` bounded by SIS_PROP/SIS_AVG_CPU (1ad3aaf3fcd2, 4.13) instead
        /// of skipped when `avg_idle / 512` is below the scan cost (4.9).
        sis_prop: bool,
    },
    /// 5.12 on (`select_idle_sibling_5_12`): target, prev, recent_used_cpu, then one merged
    /// idle-core/idle-CPU scan of the LLC.
    Merged {
        /// 6.7's cluster-first scan order.
        cluster_first: bool,
    },
}

/// The ~3.9-4.12 LLC search with 4.9's `avg_idle` skip.
const LLC_AVG_IDLE: IdleSearch = IdleSearch::Llc { sis_prop: false };
/// The 5.12-6.6 merged scan.
const MERGED: IdleSearch = IdleSearch::Merged {
    cluster_first: false,
};

/// The load balancer an era runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalancerKind {
    /// The 2.5.59 node balancer (variants: the `orig`/`ingo*` switches).
    O1Node,
    /// The sched-domain balancer with the era's newidle gate, active-balance rule and load
    /// indices.
    Cfs {
        /// `idle_balance`'s gate: always until 2.6.31, `avg_idle` against migration_cost from
        /// 2.6.32, plus the per-domain cost from 3.13 and `rd->overload` from 3.17; 5.16+
        /// against `max_newidle_lb_cost` (see [`NewidleGate`]).
        newidle: NewidleGate,
        /// `need_active_balance`: 5.10 limited the failure-count escalation to passes that
        /// move tasks (our nearest era: 5.13) \[M\].
        active: ActiveBalance,
        /// Which `cpu_load[]` average a pass reads (until 4.18, with `LB_BIAS`).
        load_idx: LoadIdx,
        /// `find_busiest_group()`: load-based with capacity in tasks until 4.0, with
        /// `group_no_capacity` from utilisation 4.1-5.4, group types from 5.5.
        rules: LbRules,
    },
}

/// One era: everything a preset bundles that is not a switch.
#[derive(Clone, Copy, Debug)]
pub struct EraDef {
    /// The era.
    pub era: Era,
    /// The kernel release it models; every era rule compares this.
    pub version: KernelVersion,
    /// Preset name, e.g. `linux-3.10`.
    pub name: &'static str,
    /// Short description for the preset list.
    pub label: &'static str,
    /// Pick/preemption model.
    pub class: ClassKind,
    /// The placement flow.
    pub flow: Flow,
    /// The idle-CPU search `select_idle_sibling` runs.
    pub idle_search: IdleSearch,
    /// The load balancer.
    pub balancer: BalancerKind,
    /// What the preset models (shown by `schedlab policies`).
    pub models: &'static str,
    /// What is reconstructed or dated by us (\[M\]: modelled, not verified against the source).
    pub notes: &'static [&'static str],
}

const O1: ClassKind = ClassKind::O1;
const CFS: ClassKind = ClassKind::Cfs;
const EEVDF: ClassKind = ClassKind::Eevdf;
/// 2.6.2x-2.6.31: no newidle gate; the 2.6.31 load indices.
const BAL_2631: BalancerKind = BalancerKind::Cfs {
    newidle: NewidleGate::Always,
    active: ActiveBalance::Failed,
    load_idx: LoadIdx::V2_6_31,
    rules: LbRules::Capacity,
};
/// 2.6.32-3.12: newidle rate-limited by `avg_idle`; the 2.6.32 load indices.
const BAL_2632: BalancerKind = BalancerKind::Cfs {
    newidle: NewidleGate::MigrationCost,
    active: ActiveBalance::Failed,
    load_idx: LoadIdx::V2_6_32,
    rules: LbRules::Capacity,
};
/// 3.17-4.18: newidle also gated by the per-domain cost and `rd->overload`.
const BAL_317: BalancerKind = BalancerKind::Cfs {
    newidle: NewidleGate::Overload,
    active: ActiveBalance::Failed,
    load_idx: LoadIdx::V2_6_32,
    rules: LbRules::Util,
};
/// 5.10-5.15: no `cpu_load[]` (5.0), the task-moving active balance (5.10).
const BAL_510: BalancerKind = BalancerKind::Cfs {
    newidle: NewidleGate::Overload,
    active: ActiveBalance::FailedTasks,
    load_idx: LoadIdx::None,
    rules: LbRules::GroupTypes,
};
/// 5.16 on: newidle gated by `max_newidle_lb_cost`.
const BAL_516: BalancerKind = BalancerKind::Cfs {
    newidle: NewidleGate::LbCost,
    active: ActiveBalance::FailedTasks,
    load_idx: LoadIdx::None,
    rules: LbRules::GroupTypes,
};

/// Every era, oldest first (row `i` is the era with discriminant `i`).
pub const ERAS: &[EraDef] = &[
    EraDef {
        era: Era::V2_5_59,
        version: v25(59),
        name: "linux-2.5.59",
        label: "O(1)+NUMA (Jan 2003)",
        class: O1,
        flow: Flow::O1,
        idle_search: IdleSearch::None,
        balancer: BalancerKind::O1Node,
        models: "O(1) scheduler (try_to_wake_up, sched_best_cpu of 2.5.59): no wake-time search; \
                 a sync wakeup pulls to the waker's CPU, otherwise prev; forks stay on the \
                 parent's CPU; the 2.5.59 node balancer (variants orig, ingo, ingofix, ingofixboth, ingoB0, \
                 ingoB0fix)",
        notes: &[
            "the O(1) pick is an approximation (priority order with a sleep bonus), not the arrays",
            "cache_decay_ticks = 10 and the balancer's candidate order are reconstructions [M]",
            "ingoB0 and ingoB0fix follow the B0 patch's posted text (Ingo Molnar, 17 Jan 2003); \
             ingo, ingofix and ingofixboth follow Erich Focht's and Ingo's mails quoting A2, whose \
             own text is lost: its node passes are reconstructed [M]",
        ],
    },
    EraDef {
        era: Era::V2_6_30,
        version: v26(30),
        name: "linux-2.6.30",
        label: "CFS-1 (2009)",
        class: CFS,
        flow: Flow::Cfs1,
        idle_search: IdleSearch::WakeIdle,
        balancer: BAL_2631,
        models: "CFS-1 (select_task_rq_fair of 2.6.23-2.6.31): lowest domain spanning waker and \
                 prev; wake_affine with avg_overlap (2.6.25-2.6.31); passive balancing; wake_idle \
                 on SMT siblings; 20/4/5 ms tunables",
        notes: &[
            "SD_WAKE_BALANCE (passive balancing) assumed on every non-NUMA level [M]",
            "wake_idle on the SMT level only [M]",
            "forkexec_idx 1 of 2.6.31 not modelled: fork balancing reads the current load [M]",
        ],
    },
    EraDef {
        era: Era::V2_6_32,
        version: v26(32),
        name: "linux-2.6.32",
        label: "CFS-2 (2009-2010)",
        class: CFS,
        flow: Flow::Cfs2,
        idle_search: IdleSearch::InWalk { package: true },
        balancer: BAL_2632,
        models: "CFS-2 (select_task_rq_fair of 2.6.32-2.6.34): merged domain walk; \
                 select_idle_sibling inside the walk (a1f84a3ab8e0), enabled at the package \
                 level (PREFER_SIBLING); wake_affine with SYNC_LESS/SYNC_MORE; cfs_rq-empty idle \
                 test; 5/1/1 ms tunables",
        notes: &[
            "the PREFER_SIBLING enabler is taken as the lowest level covering the package [M]",
        ],
    },
    EraDef {
        era: Era::V2_6_33,
        version: v26(33),
        name: "linux-2.6.33",
        label: "CFS-2 (2009-2010)",
        class: CFS,
        flow: Flow::Cfs2,
        idle_search: IdleSearch::InWalk { package: false },
        balancer: BAL_2632,
        models: "CFS-2 (select_task_rq_fair of 2.6.32-2.6.34) with the select_idle_sibling \
                 enabler on SHARE_PKG_RESOURCES levels (SMT, LLC); wake_affine of 2.6.32-2.6.33; \
                 cfs_rq-empty idle test; 6/0.75/1 ms tunables",
        notes: &["the enabler move to SHARE_PKG_RESOURCES (vmark fix) dated 2.6.33 [M]"],
    },
    EraDef {
        era: Era::V2_6_35,
        version: v26(35),
        name: "linux-2.6.35",
        label: "CFS-3 (2010-2015)",
        class: CFS,
        flow: Flow::Cfs3,
        idle_search: IdleSearch::PerLevel,
        balancer: BAL_2632,
        models: "CFS-3 (select_task_rq_fair of 2.6.35-4.2): wake_affine (2.6.34-3.15) picks waker \
                 or prev, then select_idle_sibling around the choice, first idle CPU per level up \
                 to the LLC (99bd5e2f245d, 2.6.35-3.1)",
        notes: &[],
    },
    EraDef {
        era: Era::V3_6,
        version: v(3, 6),
        name: "linux-3.6",
        label: "CFS-3 (2010-2015)",
        class: CFS,
        flow: Flow::Cfs3,
        idle_search: IdleSearch::IdleBuddy,
        balancer: BAL_2632,
        models: "CFS-3 (select_task_rq_fair of 2.6.35-4.2), wake_affine of 2.6.34-3.15, \
                 select_idle_sibling tests one idle_buddy per level (970e178985ca, 3.6-3.8)",
        notes: &["idle_buddy pairing of groups by first CPU, as described in 970e178985ca [S]"],
    },
    EraDef {
        era: Era::V3_10,
        version: v(3, 10),
        name: "linux-3.10",
        label: "CFS-3 (2010-2015)",
        class: CFS,
        flow: Flow::Cfs3,
        idle_search: LLC_AVG_IDLE,
        balancer: BAL_2632,
        models: "CFS-3 (select_task_rq_fair of 2.6.35-4.2), wake_affine of 2.6.34-3.15 on PELT \
                 runnable loads, select_idle_sibling's LLC scan for a fully idle group (~3.9-4.8)",
        notes: &["the LLC group scan dated ~3.9 [M]"],
    },
    EraDef {
        era: Era::V3_12,
        version: v(3, 12),
        name: "linux-3.12",
        label: "CFS-3 (2010-2015)",
        class: CFS,
        flow: Flow::Cfs3,
        idle_search: LLC_AVG_IDLE,
        balancer: BAL_2632,
        models: "CFS-3 (select_task_rq_fair of 2.6.35-4.2), wake_affine of 2.6.34-3.15 with the \
                 first wake_wide (62470419e993, flips wiped each second) inside, LLC group scan",
        notes: &[],
    },
    EraDef {
        era: Era::V4_2,
        version: v(4, 2),
        name: "linux-4.2",
        label: "CFS-3 (2010-2015)",
        class: CFS,
        flow: Flow::Cfs3,
        idle_search: LLC_AVG_IDLE,
        balancer: BAL_317,
        models: "CFS-3 (select_task_rq_fair of 2.6.35-4.2), capacity-aware wake_affine \
                 (3.16-4.12) with the 3.12 wake_wide inside and halving wakee_flips decay (~3.16), \
                 LLC group scan",
        notes: &["wakee_flips halving decay dated ~3.16 [M]"],
    },
    EraDef {
        era: Era::V4_6,
        version: v(4, 6),
        name: "linux-4.6",
        label: "CFS-4 (2016)",
        class: CFS,
        flow: Flow::Cfs4,
        idle_search: LLC_AVG_IDLE,
        balancer: BAL_317,
        models: "CFS-4 (select_task_rq_fair of 4.3-4.8): the symmetric wake_wide (63b0e9edceec) \
                 gates want_affine; capacity-aware wake_affine; the OLD group scan by default, \
                 with the 2016 select_idle_sibling RFC bits to select the NEW one",
        notes: &["the five RFC bits are reconstructions of an RFC not available to us [M]"],
    },
    EraDef {
        era: Era::V4_9,
        version: v(4, 9),
        name: "linux-4.9",
        label: "CFS-5 (2016-2022)",
        class: CFS,
        flow: Flow::Cfs4,
        idle_search: LLC_AVG_IDLE,
        balancer: BAL_317,
        models: "CFS-5 (select_task_rq_fair of 4.9 on): capacity-aware wake_affine, symmetric \
                 wake_wide, the select_idle_sibling rewrite (10e2f1acd010): idle core, idle CPU \
                 (avg_idle/512 bound), idle SMT sibling",
        notes: &["the RFC bits (OLD_IDLE ... IDLE_SMT) are reconstructions [M]"],
    },
    EraDef {
        era: Era::V4_14,
        version: v(4, 14),
        name: "linux-4.14",
        label: "CFS-5 (2016-2022)",
        class: CFS,
        flow: Flow::Cfs4,
        idle_search: IdleSearch::Llc { sis_prop: true },
        balancer: BAL_317,
        models: "CFS-5: wake_affine_idle + wake_affine_weight (WA_*, 4.14 on), symmetric \
                 wake_wide, select_idle_sibling with the SIS_PROP scan budget (1ad3aaf3fcd2, \
                 4.13-5.11)",
        notes: &[],
    },
    EraDef {
        era: Era::V5_13,
        version: v(5, 13),
        name: "linux-5.13",
        label: "CFS-5 (2016-2022)",
        class: CFS,
        flow: Flow::Cfs4,
        idle_search: MERGED,
        balancer: BAL_510,
        models: "CFS-5: WA_* wake_affine, merged idle-core/idle-CPU scan from target+1, SIS_PROP \
                 with aged wake_avg_idle, prev's idle SMT siblings, recent_used_cpu \
                 (select_idle_sibling of 5.12-5.19); PELT load with blocked tasks; BASE_SLICE",
        notes: &[
            "recent_used_cpu in its 4.16-5.15 form (waker records its CPU) [M]",
            "wake_affine_idle's final prev-idle clause from d8fcb81f1acf (5.10)",
        ],
    },
    EraDef {
        era: Era::V6_0,
        version: v(6, 0),
        name: "linux-6.0",
        label: "CFS-5 (2016-2022)",
        class: CFS,
        flow: Flow::Cfs4,
        idle_search: MERGED,
        balancer: BAL_516,
        models: "CFS-5 with the SIS_UTIL scan budget from LLC utilisation (70fb5ccf2ebb, 6.0); \
                 SIS_PROP off",
        notes: &[],
    },
    EraDef {
        era: Era::V6_6,
        version: v(6, 6),
        name: "linux-6.6",
        label: "EEVDF (2023-2024)",
        class: EEVDF,
        flow: Flow::Cfs4,
        idle_search: MERGED,
        balancer: BAL_516,
        models: "EEVDF pick and preemption (6.6, in the engine); placement as 6.0 (SIS_UTIL)",
        notes: &[],
    },
    EraDef {
        era: Era::V6_12,
        version: v(6, 12),
        name: "linux-6.12",
        label: "EEVDF (2023-2024)",
        class: EEVDF,
        flow: Flow::Cfs4,
        idle_search: IdleSearch::Merged {
            cluster_first: true,
        },
        balancer: BAL_516,
        models: "EEVDF with DELAY_DEQUEUE and PREEMPT_SHORT; cluster-first idle scan, SIS_PROP \
                 removed (select_idle_sibling of 6.7 on); the sync affine test ignores delayed \
                 tasks",
        notes: &["cluster-first scan from 6.7; SIS_PROP removed in 6.7"],
    },
    EraDef {
        era: Era::V6_18,
        version: v(6, 18),
        name: "linux-6.18",
        label: "EEVDF (2023-2025)",
        class: EEVDF,
        flow: Flow::Cfs4,
        idle_search: IdleSearch::Merged {
            cluster_first: true,
        },
        balancer: BAL_516,
        models: "EEVDF as 6.12 with the 0.70 ms base slice (2ae891b82695, 6.15), PREEMPT_LAZY \
                 selectable (6.13), DELAY_ZERO; placement and balancing as 6.12",
        notes: &[
            "6.17's slice protection (vprot, 052c3d87c82e: the smallest queued slice) is \
             RUN_TO_PARITY's for tasks of one slice, which is every modelled task without a \
             custom slice; a custom slice is protected to its deadline [M]",
            "6.17's newidle cost bump (155213a2aed4, reverted in 6.18.y) and 6.18.y's \
             proportional newidle balance are not modelled",
        ],
    },
    EraDef {
        era: Era::V6_18_33,
        version: stable(6, 18, 33),
        name: "linux-6.18.33",
        label: "EEVDF (6.18.y, 2026)",
        class: EEVDF,
        flow: Flow::Cfs4,
        idle_search: IdleSearch::Merged {
            cluster_first: true,
        },
        balancer: BAL_516,
        models: "6.18.33 through 6.18.44: 6.18 with the stable backports of early 2026: the lag \
                 clamp at the longest slice plus a tick (6e3c0a4e1ad1), the wakeup pick that \
                 dequeues the delayed entities it meets (ac8e69e69363), Mel Gorman's \
                 restructured preemption check without NEXT_BUDDY (e837456fdca8 less \
                 aceccac58ad7, with 15257cc2f905), slice protection set only at pick \
                 (bcd74b2ffdd0)",
        notes: &[
            "the early-2026 batch (zero_vruntime fixes, protection at pick, lag clamp) reached \
             6.18.y before 6.18.33 at a point release not pinned; this preset starts where \
             every listed backport is in [M]",
            "6.18.45's vlag/vprot split (6b6d09f274bd) and the revert of 6d71a9c61604 are not \
             in it; the zero_vruntime fixes concern the kernel's fixed-point average, which \
             the engine computes exactly",
        ],
    },
    EraDef {
        era: Era::V6_19,
        version: v(6, 19),
        name: "linux-6.19",
        label: "EEVDF (2026)",
        class: EEVDF,
        flow: Flow::Cfs4,
        idle_search: IdleSearch::Merged {
            cluster_first: true,
        },
        balancer: BAL_516,
        models: "EEVDF as 6.18: Mel Gorman's reimplemented NEXT_BUDDY (e837456fdca8) merged and \
                 disabled again in 6.19-rc7 (4f70f106bca1, 15257cc2f905), so the wakeup test \
                 is 6.18's; placement as 6.12 with 6.16's sync test (delayed tasks not counted)",
        notes: &["6.19 final taken as the 6.18.33+ preemption logic without ac8e69e69363 [M]"],
    },
    EraDef {
        era: Era::V7_0,
        version: v(7, 0),
        name: "linux-7.0",
        label: "EEVDF (2026)",
        class: EEVDF,
        flow: Flow::Cfs4,
        idle_search: IdleSearch::Merged {
            cluster_first: true,
        },
        balancer: BAL_516,
        models: "EEVDF as 6.19 with the lag clamp at the longest slice plus a tick (6e3c0a4e1ad1) \
                 and slice protection set only at pick (bcd74b2ffdd0); PREEMPT_NONE and \
                 PREEMPT_VOLUNTARY gone on x86 and arm64 (7dadeaa6e851): PREEMPT_LAZY",
        notes: &[
            "PREEMPT_LAZY as the preset's model, the remaining mode nearest the presets' \
             voluntary (a fair wakeup preemption waits for the return to user or the tick) [M]",
        ],
    },
    EraDef {
        era: Era::V7_1,
        version: v(7, 1),
        name: "linux-7.1",
        label: "EEVDF (2026)",
        class: EEVDF,
        flow: Flow::Cfs4,
        idle_search: IdleSearch::Merged {
            cluster_first: true,
        },
        balancer: BAL_516,
        models: "EEVDF as 7.0 with the wakeup pick that dequeues the delayed entities it meets \
                 (ac8e69e69363); PREEMPT_LAZY",
        notes: &[
            "HRTICK on with CONFIG_HRTIMER_REARM_DEFERRED (9213aa4784cf) is not modelled: its \
             release is not verified [M]",
        ],
    },
];

impl Era {
    /// Every era, oldest first (the `era` column of [`ERAS`]).
    pub const ALL: [Era; ERAS.len()] = {
        let mut all = [Era::V2_5_59; ERAS.len()];
        let mut i = 0;
        while i < ERAS.len() {
            all[i] = ERAS[i].era;
            i += 1;
        }
        all
    };

    /// The era's row of [`ERAS`].
    pub fn def(self) -> &'static EraDef {
        &ERAS[self as usize]
    }

    /// The kernel release the era models.
    pub fn version(self) -> KernelVersion {
        self.def().version
    }

    /// Whether the era's kernel is `k` or later: a rule for a mechanism `k` introduced.
    pub fn since(self, k: KernelVersion) -> bool {
        self.version() >= k
    }

    /// Whether the era's kernel predates `k`: a rule for a mechanism `k` removed.
    pub fn before(self, k: KernelVersion) -> bool {
        self.version() < k
    }

    /// Whether the era's kernel has a mechanism of those versions (the named rules of `rules.rs`).
    pub fn has(self, r: Versions) -> bool {
        r.contains(self.version())
    }

    /// Whether the era's kernel lies in `since..before` (introduced, then removed).
    pub fn within(self, since: KernelVersion, before: KernelVersion) -> bool {
        self.since(since) && self.before(before)
    }

    /// The era's idle-CPU search (its [`ERAS`] column).
    pub fn idle_search(self) -> IdleSearch {
        self.def().idle_search
    }

    /// The preset name, e.g. `linux-3.10`.
    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// The era of a preset name.
    pub fn from_name(s: &str) -> Option<Era> {
        ERAS.iter()
            .find(|d| d.name.eq_ignore_ascii_case(s))
            .map(|d| d.era)
    }

    /// The `cpu_load[]` indices of the era's domains ([`LoadIdx::None`] without them).
    pub fn load_idx(self) -> LoadIdx {
        match self.def().balancer {
            BalancerKind::Cfs { load_idx, .. } => load_idx,
            BalancerKind::O1Node => LoadIdx::None,
        }
    }

    /// Pick/preemption model.
    pub fn class(self) -> ClassKind {
        self.def().class
    }

    /// What the preset bundles (shown by `schedlab policies NAME`).
    pub fn models(self) -> &'static str {
        self.def().models
    }

    /// Short era description for the preset list.
    pub fn era_label(self) -> &'static str {
        self.def().label
    }
}

/// Whether a preset models a kernel era or is a reference policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PresetKind {
    /// A kernel version's placement, configuration and balancer.
    Era,
    /// A simple rule to compare against (prev, waker, idlest, random).
    Reference,
}

/// One preset, as `schedlab policies` lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PresetInfo {
    /// Name used in variant strings.
    pub name: &'static str,
    /// Era description.
    pub era: &'static str,
    /// What it models.
    pub models: &'static str,
    /// Era or reference.
    pub kind: PresetKind,
}

/// The reference policies: their name and what they do.
pub(crate) const REFERENCES: [(&str, &str); 4] = [
    (
        "prev",
        "keep every task on its previous CPU (forks stay on the parent's CPU): no placement at all",
    ),
    (
        "waker",
        "always the waker's CPU (forks: the parent's): maximal stacking",
    ),
    (
        "idlest",
        "prev if idle, else the first idle allowed CPU scanning the whole machine from prev, else the \
         least loaded (fewest runnable, then lowest load); examines every CPU it reads",
    ),
    (
        "random",
        "a uniformly random allowed CPU from the seeded policy stream",
    ),
];

/// Kernel configuration used under the reference policies (their placement is their own).
pub(crate) const REFERENCE_BASE: Era = Era::V6_6;

static PRESETS: std::sync::OnceLock<Vec<PresetInfo>> = std::sync::OnceLock::new();

/// Every preset: the eras oldest first, then the reference policies.
pub fn presets() -> &'static [PresetInfo] {
    PRESETS.get_or_init(|| {
        let mut v: Vec<PresetInfo> = ERAS
            .iter()
            .map(|d| PresetInfo {
                name: d.name,
                era: d.label,
                models: d.models,
                kind: PresetKind::Era,
            })
            .collect();
        for (name, models) in REFERENCES {
            v.push(PresetInfo {
                name,
                era: "reference (kernel model: linux-6.6 config and balancer)",
                models,
                kind: PresetKind::Reference,
            });
        }
        v
    })
}

mod config;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_discriminant_order() {
        for (i, d) in ERAS.iter().enumerate() {
            assert_eq!(
                d.era as usize, i,
                "{} is not at its discriminant's row",
                d.name
            );
        }
        assert!(Era::ALL.windows(2).all(|w| w[0] < w[1]));
        assert!(ERAS.windows(2).all(|w| w[0].version < w[1].version));
    }
}
