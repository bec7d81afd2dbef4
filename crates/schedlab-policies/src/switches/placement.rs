//! The placement switches: the bisect switches and mainline placement features, and the
//! debated variants as reconstructions. Each row is the whole switch: name, versions,
//! provenance, default per era, the files that read it (with `sw!("NAME")`), meaning.

use crate::rules;
use crate::rules::{AGAINST_6_6, ALL_CFS};
use crate::switch_def::{Kind, Provenance, Scope, Store, SwitchDef};
use crate::tunables::{Range, count};
use crate::version::{Versions, only, since, span, v, v26};
use schedlab_engine::Features;

/// The 2016 `select_idle_sibling` RFC, replayed against 4.6 and 4.9 (the kernels around it).
const RFC_2016: Versions = span(v(4, 6), v(4, 10));
/// Mazumdar's June 2019 series, posted against 5.2-rc: it rewrites the separate
/// `select_idle_core` / SIS_PROP `select_idle_cpu` of 4.13-5.11, so it is offered there (the
/// modelled era nearest to the 5.0-like code is linux-4.14).
const MAZUMDAR_2019: Versions = span(v(4, 13), v(5, 12));
/// Aubrey Li's September 2020 idle cpumask, posted against 5.9: offered on 5.9-5.13 (the
/// modelled era is linux-5.13, whose merged scan it filters).
const IDLE_CPUMASK_2020: Versions = span(v(5, 9), v(5, 14));
/// Abel Wu's SIS_FILTER v5, September 2022, against 6.0-rc.
const SIS_FILTER_2022: Versions = only(v(6, 0));
/// The merged scan's idle candidate (Gorman, Dec 2020 series, merged for 5.12 \[M\]).
const SIS_IDLE_CANDIDATE: Versions = since(v(5, 12));
/// `recent_used_cpu` (32e839dda3ba, 4.16).
const RECENT_USED_CPU: Versions = since(v(4, 16));

/// The bisect switches and the mainline placement features, in listing order.
pub(super) const MAINLINE: &[SwitchDef] = &[
    // --- bisect switches for the three main heuristics -------------------------------------
    placement!(
        "WAKE_AFFINE",
        ALL_CFS,
        Provenance::Mainline,
        default: |_| 1,
        read_in: &["select_task_rq_fair.rs"],
        "consider pulling the wakee to the waker's CPU (wake_affine and the domain walk's affine \
         step); NO_WAKE_AFFINE never takes the affine path (schedlab bisect switch)"
    ),
    placement!(
        "WAKE_WIDE",
        rules::RECORD_WAKEE,
        Provenance::Mainline,
        default: |_| 1,
        read_in: &["select_task_rq_fair.rs"],
        "evaluate wake_wide() (wakee_flips against the LLC size); NO_WAKE_WIDE treats every wakeup \
         as not wide (schedlab bisect switch)"
    ),
    placement!(
        "SELECT_IDLE_SIBLING",
        ALL_CFS,
        Provenance::Mainline,
        default: |_| 1,
        read_in: &["select_task_rq_fair.rs", "select_idle_sibling.rs"],
        "search for an idle CPU around the target (2.6.30: wake_idle); NO_SELECT_IDLE_SIBLING \
         returns the target without searching (schedlab bisect switch)"
    ),
    placement!(
        "AFFINE_WAKEUPS",
        rules::AFFINE_WAKEUPS,
        Provenance::Mainline,
        default: |_| 1,
        read_in: &["select_task_rq_fair.rs", "wake_affine.rs"],
        "allow affine wakeups at all (2.6.2x-2.6.32 sched_feat)"
    ),
    // 2.6.32-2.6.33: the wake_affine of those releases (2.6.34 has its successor).
    placement!(
        "SYNC_LESS",
        span(v26(32), v26(34)),
        Provenance::Mainline,
        default: |_| 1,
        read_in: &["wake_affine.rs"],
        "wake_affine drops the sync hint when waker or wakee avg_overlap exceeds migration_cost"
    ),
    placement!(
        "SYNC_MORE",
        span(v26(32), v26(34)),
        Provenance::Mainline,
        default: |_| 0,
        read_in: &["wake_affine.rs"],
        "wake_affine treats a wakeup as sync when both avg_overlaps are below migration_cost"
    ),
    placement!(
        "WA_IDLE",
        rules::WA_SPLIT,
        Provenance::Mainline,
        default: |_| 1,
        read_in: &["wake_affine.rs"],
        "wake_affine_idle: an idle waker CPU sharing the LLC with prev, or a sync wakeup onto a CPU \
         running only the waker, decides the affine question"
    ),
    placement!(
        "WA_WEIGHT",
        rules::WA_SPLIT,
        Provenance::Mainline,
        default: |_| 1,
        read_in: &["wake_affine.rs"],
        "wake_affine_weight: compare the waker CPU's load plus the wakee with prev's load minus it"
    ),
    placement!(
        "WA_BIAS",
        rules::WA_SPLIT,
        Provenance::Mainline,
        default: |_| 1,
        read_in: &["wake_affine_weight.rs"],
        "wake_affine_weight biases toward prev by half the domain's imbalance_pct (108 for 117)"
    ),
    // 1ad3aaf3fcd2 (4.13) until 5.12 removed it.
    placement!(
        "SIS_AVG_CPU",
        span(v(4, 13), v(5, 12)),
        Provenance::Mainline,
        default: |_| 0,
        read_in: &["select_idle_cpu.rs"],
        "skip select_idle_cpu when avg_idle/512 is below the average scan cost (the 4.9 rule)"
    ),
    // 1ad3aaf3fcd2 (4.13) until 6.7 removed it.
    placement!(
        "SIS_PROP",
        span(v(4, 13), v(6, 7)),
        Provenance::Mainline,
        default: |e| u64::from(e.has(rules::SIS_PROP_DEFAULT)),
        read_in: &["select_idle_cpu.rs"],
        "limit the idle-CPU scan to span * avg_idle / avg_scan_cost CPUs (at least 4); 5.13+: aged \
         wake_avg_idle"
    ),
];

/// The debated variants (reconstructions) and their tunables.
pub(super) const DEBATED: &[SwitchDef] = &[
    // --- debated variants -----------------------------------------------------------------
    // Both proposed against 2.6.33-rc (January 2010): offered on the 2.6.32-2.6.33 code.
    placement!(
        "RAMP",
        span(v26(32), v26(34)),
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_task_rq_fair.rs"],
        "Galbraith, Jan 2010: search for an idle shared-cache sibling only while the waker's CPU \
         runs nothing but the waker; an idle sibling found makes the wakeup affine at once"
    ),
    // The open reading of RAMP's gate: the seed thread's diff tests nr_running == 1 (the
    // default); the form that reached 2.6.34 (8b911acdf) searches unless the waker is idle.
    placement!(
        "RAMP_NOT_IDLE",
        span(v26(32), v26(34)),
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_task_rq_fair.rs"],
        "RAMP's gate as 2.6.34 merged it (8b911acdf): search unless the waker is the idle task \
         (an interrupt wakeup), instead of the posted diff's nr_running == 1"
    ),
    placement!(
        "AFFINE_TARGET",
        span(v26(32), v26(34)),
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_task_rq_fair.rs"],
        "Lin Ming, Jan 2010: wake_affine weighs the target chosen by select_idle_sibling instead \
         of the waker's CPU"
    ),
    // Proposed in 2013 against 3.9/3.10: offered on the 3.6-3.10 code.
    placement!(
        "WAKEUP_BUDDY",
        span(v(3, 6), v(3, 11)),
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_task_rq_fair.rs"],
        "Michael Wang, 2013: take the affine path only between buddies (each the other's last \
         wakee, woken wakeup_buddy_ref times in a row); otherwise place around prev"
    ),
    // The open reading of the lost patch: gating wake_affine() (the default: its merged
    // successor 62470419e993 by the same author gates inside wake_affine()) leaves
    // select_idle_sibling around prev; gating want_affine in 3.10's select_task_rq_fair
    // leaves no affine domain, and the wakee returns prev without a search.
    placement!(
        "WAKEUP_BUDDY_PREV",
        span(v(3, 6), v(3, 11)),
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_task_rq_fair.rs"],
        "WAKEUP_BUDDY read as clearing want_affine: a non-buddy wakee returns prev without \
         select_idle_sibling, also when the waker runs on prev"
    ),
    placement_tunable!(
        "wakeup_buddy_ref",
        span(v(3, 6), v(3, 11)),
        count("wakeups"),
        default: 4,
        read_in: &["select_task_rq_fair.rs"],
        "WAKEUP_BUDDY: consecutive wakeups of the same task needed to be buddies (reconstruction)"
    ),
    // The three 2015 proposals against 4.2.
    placement!(
        "PREFER_IDLE_CPU",
        rules::AGAINST_4_2,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_task_rq_fair.rs"],
        "Josef Bacik, 2015: a wakeup whose select_idle_sibling finds no idle CPU falls through \
         to find_idlest_group/cpu over the walk's BALANCE_WAKE domains below the affine domain, \
         from the waker's CPU (nothing where no domain has BALANCE_WAKE: see SD_BALANCE_WAKE)"
    ),
    // Facebook set SD_BALANCE_WAKE through /proc/sys/kernel/sched_domain/*/flags.
    placement!(
        "SD_BALANCE_WAKE",
        rules::AGAINST_4_2,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_task_rq_fair.rs"],
        "the domain flag Facebook set by sysctl for PREFER_IDLE_CPU: every domain counts as \
         having SD_BALANCE_WAKE in the wakeup walk"
    ),
    // schedlab's earlier reading of PREFER_IDLE_CPU, kept as the other reading.
    placement!(
        "PREFER_IDLE_CPU_WIDE",
        rules::AGAINST_4_2,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_task_rq_fair.rs"],
        "PREFER_IDLE_CPU read wide: only non-affine wakeups, over the waker's highest \
         BALANCE_WAKE domain, else its highest BALANCE_FORK domain (a span the 4.1 walk never \
         gives a wakeup)"
    ),
    placement!(
        "WAKE_WIDE_IDLE",
        rules::AGAINST_4_2,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_task_rq_fair.rs"],
        "Galbraith, 2015: when wake_wide() says wide, look for an idle CPU beyond the LLC (the \
         wake-balance span, else prev's node) from prev before stacking"
    ),
    placement!(
        "WAKE_WIDE_IDLE_BOTH",
        rules::AGAINST_4_2,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_task_rq_fair.rs"],
        "WAKE_WIDE_IDLE for both directions of the 1:N relation (clients as well as the server)"
    ),
    // The open readings of WAKE_WIDE_IDLE: its search and its wake_wide.
    placement!(
        "WAKE_WIDE_IDLE_SLOW",
        rules::AGAINST_4_2,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_task_rq_fair.rs"],
        "WAKE_WIDE_IDLE searches with the slow path (find_idlest_group/cpu from prev over the \
         wide span) instead of the first idle CPU from prev"
    ),
    placement!(
        "WAKE_WIDE_IDLE_SYM",
        rules::AGAINST_4_2,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_task_rq_fair.rs"],
        "WAKE_WIDE_IDLE tests the symmetric wake_wide Galbraith wrote in the same thread \
         (63b0e9edceec, merged in 4.3) instead of 4.2's"
    ),
    // The five 2016 RFC bits, replayed on 4.6 and 4.9.
    placement!(
        "OLD_IDLE",
        RFC_2016,
        Provenance::Reconstruction,
        default: |e| u64::from(!e.has(rules::NEW_SIS)),
        read_in: &["select_idle_sibling.rs"],
        "2016 RFC bit: the pre-4.9 search, a fully idle sched group from the LLC down"
    ),
    placement!(
        "ORDER_IDLE",
        RFC_2016,
        Provenance::Reconstruction,
        default: |e| u64::from(!e.has(rules::NEW_SIS)),
        read_in: &["select_idle_sibling.rs"],
        "2016 RFC bit: visit groups in ring order from the target's group, not from the domain's first"
    ),
    placement!(
        "IDLE_CORE",
        RFC_2016,
        Provenance::Reconstruction,
        default: |e| u64::from(e.has(rules::NEW_SIS)),
        read_in: &["select_idle_sibling.rs"],
        "2016 RFC bit: look for a fully idle core in the LLC (guarded by has_idle_cores)"
    ),
    placement!(
        "IDLE_CPU",
        RFC_2016,
        Provenance::Reconstruction,
        default: |e| u64::from(e.has(rules::NEW_SIS)),
        read_in: &["select_idle_sibling.rs"],
        "2016 RFC bit: scan the LLC for any idle CPU, skipped when avg_idle/512 < avg_scan_cost"
    ),
    // The open reading of the RFC's IDLE_CPU: the merged 4.9 code has the gate (the
    // default); the RFC's may not have.
    placement!(
        "IDLE_CPU_GATE",
        RFC_2016,
        Provenance::Reconstruction,
        default: |_| 1,
        read_in: &["select_idle_cpu.rs"],
        "IDLE_CPU skips its scan when the waker CPU's avg_idle/512 is below the LLC's average \
         scan cost (as merged in 4.9, 10e2f1acd010); NO_IDLE_CPU_GATE scans every time"
    ),
    placement!(
        "IDLE_SMT",
        RFC_2016,
        Provenance::Reconstruction,
        default: |e| u64::from(e.has(rules::NEW_SIS)),
        read_in: &["select_idle_sibling.rs"],
        "2016 RFC bit: try the idle SMT siblings of the target"
    ),
    // 2023, reverted before release: offered on 6.0-6.6.
    placement!(
        "SIS_NODE",
        span(v(6, 0), v(6, 7)),
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_idle_sibling.rs"],
        "2023 multi-LLC select_idle_sibling: when the LLC has no idle CPU, scan the other LLCs of \
         the node with the same budget rules (reverted before release)"
    ),
    // 2019-2023: the debated wake-placement patches since SIS_UTIL's predecessors.
    placement!(
        "SYNC_NR_RUNNABLE",
        since(v(6, 12)),
        Provenance::Mainline,
        default: |e| u64::from(e.since(v(6, 16))),
        read_in: &["wake_affine_idle.rs"],
        "wake_affine_idle's sync test counts the waker CPU's runnable tasks, leaving delayed \
         ones out (Xuewen Yan, aa3ee4f0b754, 6.16; in 6.12.y and 6.15.y stable); \
         NO_SYNC_NR_RUNNABLE counts them, as 6.12-6.15 did"
    ),
    placement!(
        "WA_IDLE_PREV",
        rules::AFFINE_IDLE_PREV,
        Provenance::Mainline,
        default: |_| 1,
        read_in: &["wake_affine_idle.rs"],
        "wake_affine_idle returns prev when prev is idle, after the sync test (Lawall, \
         d8fcb81f1acf, 5.10); NO_WA_IDLE_PREV drops the clause"
    ),
    placement!(
        "SIS_IDLE_CANDIDATE",
        SIS_IDLE_CANDIDATE,
        Provenance::Mainline,
        default: |_| 1,
        read_in: &["select_idle_cpu.rs"],
        "the merged scan's idle-core pass remembers an idle CPU and returns it when no core is \
         idle (Gorman, 20201208153501.1467-5); NO_SIS_IDLE_CANDIDATE returns nothing instead"
    ),
    placement!(
        "RECENT_USED_CPU",
        RECENT_USED_CPU,
        Provenance::Mainline,
        default: |_| 1,
        read_in: &["select_task_rq_fair.rs", "select_idle_sibling.rs"],
        "select_idle_sibling tries the task's recent_used_cpu after prev (32e839dda3ba; its \
         update debated in 20201207091516.24683-3); NO_RECENT_USED_CPU drops it and its bookkeeping"
    ),
    placement!(
        "SIS_ROTATE",
        MAZUMDAR_2019,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["select_idle_cpu.rs"],
        "Mazumdar, Jun 2019: select_idle_cpu scans between max(2, SMT width) and twice that CPUs \
         (SIS_PROP's proportion between), starting where the last scan from that target stopped"
    ),
    placement!(
        "SIS_CORE",
        MAZUMDAR_2019,
        Provenance::Reconstruction,
        default: |_| 1,
        read_in: &["select_idle_sibling.rs"],
        "Mazumdar, Jun 2019: select_idle_sibling runs select_idle_core; NO_SIS_CORE skips the \
         idle-core search"
    ),
    placement!(
        "IDLE_CPUMASK",
        IDLE_CPUMASK_2020,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["debated.rs"],
        "Aubrey Li, Sep 2020: select_idle_cpu walks the LLC's idle cpumask (set at idle entry, \
         cleared by the tick of a busy CPU) instead of the whole LLC",
        track: idle_cpumask
    ),
    placement!(
        "SIS_FILTER",
        SIS_FILTER_2022,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["debated.rs"],
        "Abel Wu, v5 Sep 2022: select_idle_cpu walks the LLC's mask of unoccupied CPUs (set at \
         idle entry, cleared by the tick of a busy CPU) instead of the whole LLC",
        track: idle_cpumask
    ),
    placement!(
        "SIS_CACHE",
        AGAINST_6_6,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["debated.rs"],
        "Chen Yu, Sep 2023: a short sleeper's idle CPU is reserved for its average short sleep; \
         select_idle_cpu passes reserved CPUs over (the first one if nothing else is idle)",
        track: track_short_sleep
    ),
    placement!(
        "MIGRATION_RATELIMIT",
        AGAINST_6_6,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["debated.rs"],
        "Desnoyers, Sep 2023: a task that changed CPU less than migration_ratelimit_ns ago stays \
         on prev at wakeup",
        track: track_migrations
    ),
    placement_tunable!(
        "migration_ratelimit_ns",
        AGAINST_6_6,
        Range {
            min: 1,
            max: 1_000_000_000,
            unit: "ns",
            source: "stated bound: 1 ns to 1 s",
        },
        // "at most 1 migration per 2 ms per task" (20230905171105.1005672-2).
        default: 2_000_000,
        read_in: &["debated.rs"],
        "MIGRATION_RATELIMIT: the period, ns (2 ms in the patch)"
    ),
    placement!(
        "WAKEUP_BIAS_PREV_IDLE",
        AGAINST_6_6,
        Provenance::Reconstruction,
        default: |_| 0,
        read_in: &["debated.rs"],
        "Desnoyers, Sep 2023: a prev whose load without the wakee is at most prev_idle_load \
         counts as idle (select_idle_sibling's and wake_affine_idle's prev tests)"
    ),
    placement_tunable!(
        "prev_idle_load",
        AGAINST_6_6,
        Range {
            min: 0,
            max: 1 << 20,
            unit: "load (nice-0 task = 1024)",
            source: "stated bound: up to 1024 nice-0 tasks",
        },
        // LOAD_AVG_MAX / 1000 as we read the patch (0.1 % of the PELT maximum) [M].
        default: 47,
        read_in: &["debated.rs"],
        "WAKEUP_BIAS_PREV_IDLE: the load threshold (default LOAD_AVG_MAX / 1000 = 47, as we read \
         the patch)"
    ),
];
