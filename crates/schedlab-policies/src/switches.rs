//! sched_feat-style switches: `NAME` turns a feature on, `NO_NAME` off, `name=value` sets a
//! tunable, and `orig`/`ingo`/`ingofix`/`ingoB0` pick the 2.5.59 balancer.
//!
//! One table (`SWITCHES`) says, for every switch, which kernel versions have it, whether the
//! engine or only the placement reads it, what it means and whether it is mainline code
//! re-expressed, a reconstruction of a mailing-list patch, or a tunable (with its unit and
//! range). Defaults are not written in the table: they are read from [`Settings::defaults`],
//! so the listing can never disagree with what a build does. Era applicability (see
//! docs/policies/switches.md): a switch applies where that era's kernel has the feature, or
//! where it is a debated variant proposed against that era. What a row is (provenance,
//! scope, kind) and the macros that write rows are in `switch_def.rs`.

use crate::era::Era;
use crate::rules;
pub use crate::settings::Settings;
pub(crate) use crate::switch_def::{Kind, SwitchDef};
pub use crate::switch_def::{Provenance, Scope};
use crate::tunables::{GRANULARITY_NS, MULT, Range, TICKS, count};
use crate::version::{Versions, only, since, span, v, v25, v26};
use schedlab_engine::PreemptModel;
use schedlab_engine::balance_o1::O1Variant;
use schedlab_engine::config::TunableScaling;

/// CFS (2.6.23) and EEVDF: every fair-class kernel.
const ALL_CFS: Versions = since(v26(23));
/// CFS until EEVDF replaced it in 6.6.
const CFS_ONLY: Versions = span(v26(23), v(6, 6));
/// EEVDF, 6.6 on.
const EEVDF: Versions = since(v(6, 6));
/// The 2.5.59 O(1) scheduler with its first NUMA balancer (our only O(1) kernel).
const O1: Versions = only(v25(59));

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
/// The September 2023 postings against tip for 6.6 (SIS_CACHE, Desnoyers' two patches).
const AGAINST_6_6: Versions = only(v(6, 6));
/// The merged scan's idle candidate (Gorman, Dec 2020 series, merged for 5.12 \[M\]).
const SIS_IDLE_CANDIDATE: Versions = since(v(5, 12));
/// `recent_used_cpu` (32e839dda3ba, 4.16).
const RECENT_USED_CPU: Versions = since(v(4, 16));
/// A value already checked against a range whose maximum fits `u32`.
fn u32_of(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Every switch, in listing order.
pub(crate) const SWITCHES: &[SwitchDef] = &[
    // --- bisect switches for the three main heuristics -------------------------------------
    feature!(
        Scope::Placement,
        "WAKE_AFFINE",
        ALL_CFS,
        Provenance::Mainline,
        wake_affine,
        "consider pulling the wakee to the waker's CPU (wake_affine and the domain walk's affine \
         step); NO_WAKE_AFFINE never takes the affine path (schedlab bisect switch)"
    ),
    feature!(
        Scope::Placement,
        "WAKE_WIDE",
        rules::RECORD_WAKEE,
        Provenance::Mainline,
        wake_wide,
        "evaluate wake_wide() (wakee_flips against the LLC size); NO_WAKE_WIDE treats every wakeup \
         as not wide (schedlab bisect switch)"
    ),
    feature!(
        Scope::Placement,
        "SELECT_IDLE_SIBLING",
        ALL_CFS,
        Provenance::Mainline,
        select_idle_sibling,
        "search for an idle CPU around the target (2.6.30: wake_idle); NO_SELECT_IDLE_SIBLING \
         returns the target without searching (schedlab bisect switch)"
    ),
    feature!(
        Scope::Placement,
        "AFFINE_WAKEUPS",
        rules::AFFINE_WAKEUPS,
        Provenance::Mainline,
        affine_wakeups,
        "allow affine wakeups at all (2.6.2x-2.6.32 sched_feat)"
    ),
    // 2.6.32-2.6.33: the wake_affine of those releases (2.6.34 has its successor).
    feature!(
        Scope::Placement,
        "SYNC_LESS",
        span(v26(32), v26(34)),
        Provenance::Mainline,
        sync_less,
        "wake_affine drops the sync hint when waker or wakee avg_overlap exceeds migration_cost"
    ),
    feature!(
        Scope::Placement,
        "SYNC_MORE",
        span(v26(32), v26(34)),
        Provenance::Mainline,
        sync_more,
        "wake_affine treats a wakeup as sync when both avg_overlaps are below migration_cost"
    ),
    feature!(
        Scope::Placement,
        "WA_IDLE",
        rules::WA_SPLIT,
        Provenance::Mainline,
        wa_idle,
        "wake_affine_idle: an idle waker CPU sharing the LLC with prev, or a sync wakeup onto a CPU \
         running only the waker, decides the affine question"
    ),
    feature!(
        Scope::Placement,
        "WA_WEIGHT",
        rules::WA_SPLIT,
        Provenance::Mainline,
        wa_weight,
        "wake_affine_weight: compare the waker CPU's load plus the wakee with prev's load minus it"
    ),
    feature!(
        Scope::Placement,
        "WA_BIAS",
        rules::WA_SPLIT,
        Provenance::Mainline,
        wa_bias,
        "wake_affine_weight biases toward prev by half the domain's imbalance_pct (108 for 117)"
    ),
    // 1ad3aaf3fcd2 (4.13) until 5.12 removed it.
    feature!(
        Scope::Placement,
        "SIS_AVG_CPU",
        span(v(4, 13), v(5, 12)),
        Provenance::Mainline,
        sis_avg_cpu,
        "skip select_idle_cpu when avg_idle/512 is below the average scan cost (the 4.9 rule)"
    ),
    // 1ad3aaf3fcd2 (4.13) until 6.7 removed it.
    feature!(
        Scope::Placement,
        "SIS_PROP",
        span(v(4, 13), v(6, 7)),
        Provenance::Mainline,
        sis_prop,
        "limit the idle-CPU scan to span * avg_idle / avg_scan_cost CPUs (at least 4); 5.13+: aged \
         wake_avg_idle"
    ),
    // 70fb5ccf2ebb (6.0).
    feature!(
        Scope::Engine,
        "SIS_UTIL",
        since(v(6, 0)),
        Provenance::Mainline,
        sis_util,
        "limit the idle-CPU scan to nr_idle_scan, computed from LLC utilisation at LLC-level \
         periodic balancing; skip it when the LLC is ~85 % busy"
    ),
    // 3.0: the second half of a remote wakeup runs on the target CPU.
    engine_feature!(
        "TTWU_QUEUE",
        since(v(3, 0)),
        ttwu_queue,
        "wakeups onto another LLC are queued to the target by IPI (wakelist) instead of a remote enqueue"
    ),
    engine_feature!(
        "WAKEUP_PREEMPTION",
        ALL_CFS,
        wakeup_preemption,
        "a wakee may preempt the running task (CFS: vruntime ahead by wakeup_granularity; EEVDF: \
         picked first)"
    ),
    engine_feature!(
        "NEXT_BUDDY",
        ALL_CFS,
        next_buddy,
        "bias the next pick toward the wakee"
    ),
    engine_feature!(
        "LAST_BUDDY",
        CFS_ONLY,
        last_buddy,
        "bias the next pick back to the task the wakee preempted"
    ),
    engine_feature!(
        "CACHE_HOT_BUDDY",
        ALL_CFS,
        cache_hot_buddy,
        "the load balancer treats next/last buddies as cache hot"
    ),
    // 2.6.32 until EEVDF replaced the sleeper credit in 6.6.
    engine_feature!(
        "GENTLE_FAIR_SLEEPERS",
        span(v26(32), v(6, 6)),
        gentle_fair_sleepers,
        "halve the sleeper credit (half a latency period of vruntime) given on wakeup"
    ),
    engine_feature!(
        "START_DEBIT",
        CFS_ONLY,
        start_debit,
        "new tasks start one slice of vruntime in the future"
    ),
    // 5.13's alternative sched_slice, until EEVDF in 6.6.
    engine_feature!(
        "BASE_SLICE",
        span(v(5, 13), v(6, 6)),
        base_slice,
        "a task's slice is at least sched_min_granularity (5.13-6.5)"
    ),
    engine_feature!(
        "PLACE_LAG",
        EEVDF,
        place_lag,
        "EEVDF: keep a task's lag across sleep and migration"
    ),
    engine_feature!(
        "PLACE_DEADLINE_INITIAL",
        EEVDF,
        place_deadline_initial,
        "EEVDF: new tasks start with half a slice of deadline"
    ),
    engine_feature!(
        "RUN_TO_PARITY",
        EEVDF,
        run_to_parity,
        "EEVDF: do not preempt the running task before it reaches the deadline it was picked with"
    ),
    // Both 6.12, with EEVDF completed.
    engine_feature!(
        "PREEMPT_SHORT",
        since(v(6, 12)),
        preempt_short,
        "EEVDF: a wakee with a shorter slice may preempt despite RUN_TO_PARITY"
    ),
    engine_feature!(
        "DELAY_DEQUEUE",
        since(v(6, 12)),
        delay_dequeue,
        "EEVDF: a task blocking with negative lag stays queued (delayed) until picked or woken"
    ),
    engine_feature!(
        "DELAY_ZERO",
        since(v(6, 12)),
        delay_zero,
        "EEVDF: a delayed task's positive lag is zeroed when it is dequeued at a pick or woken in place"
    ),
    // --- debated variants -----------------------------------------------------------------
    // Both proposed against 2.6.33-rc (January 2010): offered on the 2.6.32-2.6.33 code.
    feature!(
        Scope::Placement,
        "RAMP",
        span(v26(32), v26(34)),
        Provenance::Reconstruction,
        ramp,
        "Galbraith, Jan 2010: search for an idle shared-cache sibling only while the waker's CPU \
         runs nothing but the waker; an idle sibling found makes the wakeup affine at once"
    ),
    feature!(
        Scope::Placement,
        "AFFINE_TARGET",
        span(v26(32), v26(34)),
        Provenance::Reconstruction,
        affine_target,
        "Lin Ming, Jan 2010: wake_affine weighs the target chosen by select_idle_sibling instead \
         of the waker's CPU"
    ),
    // Proposed in 2013 against 3.9/3.10: offered on the 3.6-3.10 code.
    feature!(
        Scope::Placement,
        "WAKEUP_BUDDY",
        span(v(3, 6), v(3, 11)),
        Provenance::Reconstruction,
        wakeup_buddy,
        "Michael Wang, 2013: take the affine path only between buddies (each the other's last \
         wakee, woken wakeup_buddy_ref times in a row); otherwise place around prev"
    ),
    tunable!(
        Scope::Placement,
        "wakeup_buddy_ref",
        span(v(3, 6), v(3, 11)),
        count("wakeups"),
        get: |s| u64::from(s.wakeup_buddy_ref),
        set: |s, v| s.wakeup_buddy_ref = u32_of(v),
        "WAKEUP_BUDDY: consecutive wakeups of the same task needed to be buddies (reconstruction)"
    ),
    // The three 2015 proposals against 4.2.
    feature!(
        Scope::Placement,
        "PREFER_IDLE_CPU",
        rules::AGAINST_4_2,
        Provenance::Reconstruction,
        prefer_idle_cpu,
        "Josef Bacik, 2015: a non-affine wakeup whose LLC search finds no idle CPU continues into \
         find_idlest_group/cpu over the wake-balance span, preferring any idle CPU"
    ),
    feature!(
        Scope::Placement,
        "WAKE_WIDE_IDLE",
        rules::AGAINST_4_2,
        Provenance::Reconstruction,
        wake_wide_idle,
        "Galbraith, 2015: when wake_wide() says wide, look for an idle CPU beyond the LLC (the \
         wake-balance span, else prev's node) from prev before stacking"
    ),
    feature!(
        Scope::Placement,
        "WAKE_WIDE_IDLE_BOTH",
        rules::AGAINST_4_2,
        Provenance::Reconstruction,
        wake_wide_idle_both,
        "WAKE_WIDE_IDLE for both directions of the 1:N relation (clients as well as the server)"
    ),
    // The five 2016 RFC bits, replayed on 4.6 and 4.9.
    feature!(
        Scope::Placement,
        "OLD_IDLE",
        RFC_2016,
        Provenance::Reconstruction,
        old_idle,
        "2016 RFC bit: the pre-4.9 search, a fully idle sched group from the LLC down"
    ),
    feature!(
        Scope::Placement,
        "ORDER_IDLE",
        RFC_2016,
        Provenance::Reconstruction,
        order_idle,
        "2016 RFC bit: visit groups in ring order from the target's group, not from the domain's first"
    ),
    feature!(
        Scope::Placement,
        "IDLE_CORE",
        RFC_2016,
        Provenance::Reconstruction,
        idle_core,
        "2016 RFC bit: look for a fully idle core in the LLC (guarded by has_idle_cores)"
    ),
    feature!(
        Scope::Placement,
        "IDLE_CPU",
        RFC_2016,
        Provenance::Reconstruction,
        idle_cpu,
        "2016 RFC bit: scan the LLC for any idle CPU, skipped when avg_idle/512 < avg_scan_cost"
    ),
    feature!(
        Scope::Placement,
        "IDLE_SMT",
        RFC_2016,
        Provenance::Reconstruction,
        idle_smt,
        "2016 RFC bit: try the idle SMT siblings of the target"
    ),
    // 2023, reverted before release: offered on 6.0-6.6.
    feature!(
        Scope::Placement,
        "SIS_NODE",
        span(v(6, 0), v(6, 7)),
        Provenance::Reconstruction,
        sis_node,
        "2023 multi-LLC select_idle_sibling: when the LLC has no idle CPU, scan the other LLCs of \
         the node with the same budget rules (reverted before release)"
    ),
    // 2019-2023: the debated wake-placement patches since SIS_UTIL's predecessors.
    feature!(
        Scope::Placement,
        "WA_IDLE_PREV",
        rules::AFFINE_IDLE_PREV,
        Provenance::Mainline,
        wa_idle_prev,
        "wake_affine_idle returns prev when prev is idle, after the sync test (Lawall, \
         d8fcb81f1acf, 5.10); NO_WA_IDLE_PREV drops the clause"
    ),
    feature!(
        Scope::Placement,
        "SIS_IDLE_CANDIDATE",
        SIS_IDLE_CANDIDATE,
        Provenance::Mainline,
        sis_idle_candidate,
        "the merged scan's idle-core pass remembers an idle CPU and returns it when no core is \
         idle (Gorman, 20201208153501.1467-5); NO_SIS_IDLE_CANDIDATE returns nothing instead"
    ),
    feature!(
        Scope::Placement,
        "RECENT_USED_CPU",
        RECENT_USED_CPU,
        Provenance::Mainline,
        recent_used_cpu,
        "select_idle_sibling tries the task's recent_used_cpu after prev (32e839dda3ba; its \
         update debated in 20201207091516.24683-3); NO_RECENT_USED_CPU drops it and its bookkeeping"
    ),
    feature!(
        Scope::Placement,
        "SIS_ROTATE",
        MAZUMDAR_2019,
        Provenance::Reconstruction,
        sis_rotate,
        "Mazumdar, Jun 2019: select_idle_cpu scans between max(2, SMT width) and twice that CPUs \
         (SIS_PROP's proportion between), starting where the last scan from that target stopped"
    ),
    feature!(
        Scope::Placement,
        "SIS_CORE",
        MAZUMDAR_2019,
        Provenance::Reconstruction,
        sis_core,
        "Mazumdar, Jun 2019: select_idle_sibling runs select_idle_core; NO_SIS_CORE skips the \
         idle-core search"
    ),
    feature!(
        Scope::Placement,
        "IDLE_CPUMASK",
        IDLE_CPUMASK_2020,
        Provenance::Reconstruction,
        idle_cpumask,
        "Aubrey Li, Sep 2020: select_idle_cpu walks the LLC's idle cpumask (set at idle entry, \
         cleared by the tick of a busy CPU) instead of the whole LLC",
        idle_cpumask
    ),
    feature!(
        Scope::Placement,
        "SIS_FILTER",
        SIS_FILTER_2022,
        Provenance::Reconstruction,
        sis_filter,
        "Abel Wu, v5 Sep 2022: select_idle_cpu walks the LLC's mask of unoccupied CPUs (set at \
         idle entry, cleared by the tick of a busy CPU) instead of the whole LLC",
        idle_cpumask
    ),
    feature!(
        Scope::Placement,
        "SIS_CACHE",
        AGAINST_6_6,
        Provenance::Reconstruction,
        sis_cache,
        "Chen Yu, Sep 2023: a short sleeper's idle CPU is reserved for its average short sleep; \
         select_idle_cpu passes reserved CPUs over (the first one if nothing else is idle)",
        track_short_sleep
    ),
    feature!(
        Scope::Placement,
        "MIGRATION_RATELIMIT",
        AGAINST_6_6,
        Provenance::Reconstruction,
        migration_ratelimit,
        "Desnoyers, Sep 2023: a task that changed CPU less than migration_ratelimit_ns ago stays \
         on prev at wakeup",
        track_migrations
    ),
    tunable!(
        Scope::Placement,
        "migration_ratelimit_ns",
        AGAINST_6_6,
        Range {
            min: 1,
            max: 1_000_000_000,
            unit: "ns",
            source: "stated bound: 1 ns to 1 s",
        },
        get: |s| s.migration_ratelimit_ns,
        set: |s, v| s.migration_ratelimit_ns = v,
        "MIGRATION_RATELIMIT: the period, ns (2 ms in the patch)"
    ),
    feature!(
        Scope::Placement,
        "WAKEUP_BIAS_PREV_IDLE",
        AGAINST_6_6,
        Provenance::Reconstruction,
        bias_prev_idle,
        "Desnoyers, Sep 2023: a prev whose load without the wakee is at most prev_idle_load \
         counts as idle (select_idle_sibling's and wake_affine_idle's prev tests)"
    ),
    tunable!(
        Scope::Placement,
        "prev_idle_load",
        AGAINST_6_6,
        Range {
            min: 0,
            max: 1 << 20,
            unit: "load (nice-0 task = 1024)",
            source: "stated bound: up to 1024 nice-0 tasks",
        },
        get: |s| s.prev_idle_load,
        set: |s, v| s.prev_idle_load = v,
        "WAKEUP_BIAS_PREV_IDLE: the load threshold (default LOAD_AVG_MAX / 1000 = 47, as we read \
         the patch)"
    ),
    // --- 2.5.59 balancer -----------------------------------------------------------------
    SwitchDef {
        name: "orig",
        versions: O1,
        scope: Scope::Engine,
        kind: Kind::Balancer(O1Variant::Orig),
        provenance: Provenance::Mainline,
        meaning: "2.5.59 as released: node-local balancing on ticks and when idle; every \
                  NODE_BALANCE_RATE-th call balances with the busiest node",
    },
    SwitchDef {
        name: "ingo",
        versions: O1,
        scope: Scope::Engine,
        kind: Kind::Balancer(O1Variant::Ingo),
        provenance: Provenance::Reconstruction,
        meaning: "Ingo's sched-2.5.59-A2: node balancing on its own 400 ms tick, with the two bugs \
                  Erich reported (idle path balances only with itself; busy path passes idle=1)",
    },
    SwitchDef {
        name: "ingofix",
        versions: O1,
        scope: Scope::Engine,
        kind: Kind::Balancer(O1Variant::IngoFix),
        provenance: Provenance::Reconstruction,
        meaning: "Ingo's sched-2.5.59-A2 with both bugs fixed",
    },
    SwitchDef {
        name: "ingoB0",
        versions: O1,
        scope: Scope::Engine,
        kind: Kind::Balancer(O1Variant::IngoB0),
        provenance: Provenance::Reconstruction,
        meaning: "Ingo's -B0: separate IDLE_NODE_REBALANCE_TICK (2 ms) and BUSY_NODE_REBALANCE_TICK \
                  (400 ms); the 2.6.0 structure",
    },
    tunable!(
        Scope::Engine,
        "idle_rebalance_tick",
        O1,
        TICKS,
        get: |s| s.o1.idle_rebalance_tick,
        set: |s, v| s.o1.idle_rebalance_tick = v,
        "IDLE_REBALANCE_TICK, jiffies"
    ),
    tunable!(
        Scope::Engine,
        "busy_rebalance_tick",
        O1,
        TICKS,
        get: |s| s.o1.busy_rebalance_tick,
        set: |s, v| s.o1.busy_rebalance_tick = v,
        "BUSY_REBALANCE_TICK, jiffies"
    ),
    tunable!(
        Scope::Engine,
        "node_balance_rate",
        O1,
        count("balancing calls"),
        get: |s| u64::from(s.o1.node_balance_rate),
        set: |s, v| s.o1.node_balance_rate = u32_of(v),
        "NODE_BALANCE_RATE: every Nth balancing call looks at other nodes (orig)"
    ),
    tunable!(
        Scope::Engine,
        "idle_node_rebalance_tick",
        O1,
        TICKS,
        get: |s| s.o1.idle_node_rebalance_tick,
        set: |s, v| s.o1.idle_node_rebalance_tick = v,
        "IDLE_NODE_REBALANCE_TICK, jiffies (ingo*)"
    ),
    tunable!(
        Scope::Engine,
        "busy_node_rebalance_tick",
        O1,
        TICKS,
        get: |s| s.o1.busy_node_rebalance_tick,
        set: |s, v| s.o1.busy_node_rebalance_tick = v,
        "BUSY_NODE_REBALANCE_TICK, jiffies (ingo*)"
    ),
    tunable!(
        Scope::Engine,
        "idle_node_rebalance_mult",
        O1,
        MULT,
        get: |s| s.o1.idle_node_rebalance_tick / s.o1.idle_rebalance_tick.max(1),
        set: |s, v| s.o1.idle_node_rebalance_tick = v.saturating_mul(s.o1.idle_rebalance_tick),
        "sets IDLE_NODE_REBALANCE_TICK = N x IDLE_REBALANCE_TICK (the sweep of Erich Focht's NEC TX7 tests, January 2003)"
    ),
    tunable!(
        Scope::Engine,
        "busy_node_rebalance_mult",
        O1,
        MULT,
        get: |s| s.o1.busy_node_rebalance_tick / s.o1.busy_rebalance_tick.max(1),
        set: |s, v| s.o1.busy_node_rebalance_tick = v.saturating_mul(s.o1.busy_rebalance_tick),
        "sets BUSY_NODE_REBALANCE_TICK = N x BUSY_REBALANCE_TICK (the sweep of Erich Focht's NEC TX7 tests, January 2003)"
    ),
    tunable!(
        Scope::Engine,
        "node_threshold",
        O1,
        Range {
            min: 1,
            max: 10_000,
            unit: "percent",
            source: "stated bound: a busiest node at most 100 times as loaded",
        },
        get: |s| u64::from(s.o1.node_threshold),
        set: |s, v| s.o1.node_threshold = u32_of(v),
        "NODE_THRESHOLD, percent"
    ),
    tunable!(
        Scope::Engine,
        "cache_decay_ticks",
        O1,
        TICKS,
        get: |s| s.o1.cache_decay_ticks,
        set: |s, v| s.o1.cache_decay_ticks = v,
        "cache_decay_ticks: recently run tasks are not moved"
    ),
    tunable!(
        Scope::Engine,
        "timeslice_ns",
        O1,
        Range {
            min: 100_000,
            max: 10_000_000_000,
            unit: "ns",
            source: "stated bound: 100 us to 10 s",
        },
        get: |s| s.config.tunables.o1_timeslice_ns,
        set: |s, v| s.config.tunables.o1_timeslice_ns = v,
        "O(1) timeslice of a nice-0 task, ns"
    ),
    // --- CFS/EEVDF tunables --------------------------------------------------------------
    tunable!(
        Scope::Engine,
        "sched_migration_cost_ns",
        ALL_CFS,
        Range {
            min: 0,
            max: u32::MAX as u64,
            unit: "ns",
            source: "the kernel's unsigned int (no other limit)",
        },
        get: |s| s.config.tunables.migration_cost_ns,
        set: |s, v| s.config.tunables.migration_cost_ns = v,
        "task_hot threshold, avg_overlap limit, newidle gate (not scaled)"
    ),
    tunable!(
        Scope::Engine,
        "sched_latency_ns",
        CFS_ONLY,
        GRANULARITY_NS,
        get: |s| s.config.tunables.latency_ns,
        set: |s, v| s.config.tunables.latency_ns = v,
        "CFS period target, unscaled (x 1+ilog2(min(ncpus,8)))"
    ),
    tunable!(
        Scope::Engine,
        "sched_min_granularity_ns",
        CFS_ONLY,
        GRANULARITY_NS,
        get: |s| s.config.tunables.min_granularity_ns,
        set: |s, v| s.config.tunables.min_granularity_ns = v,
        "CFS minimum slice, unscaled"
    ),
    // EEVDF's base_slice_ns is a debugfs u32 without limits; it replaced min_granularity,
    // so it keeps that sysctl's bounds.
    tunable!(
        Scope::Engine,
        "sched_base_slice_ns",
        EEVDF,
        Range {
            source: "stated bound: the sysctl limits of the min_granularity it replaced \
                     (100 us to 1 s)",
            ..GRANULARITY_NS
        },
        get: |s| s.config.tunables.min_granularity_ns,
        set: |s, v| s.config.tunables.min_granularity_ns = v,
        "EEVDF request size (slice), unscaled"
    ),
    tunable!(
        Scope::Engine,
        "sched_wakeup_granularity_ns",
        CFS_ONLY,
        Range {
            min: 0,
            max: 1_000_000_000,
            unit: "ns",
            source: "the kernel's sysctl limits (0 to 1 s)",
        },
        get: |s| s.config.tunables.wakeup_granularity_ns,
        set: |s, v| s.config.tunables.wakeup_granularity_ns = v,
        "CFS wakeup preemption granularity, unscaled"
    ),
    tunable!(
        Scope::Engine,
        "sched_nr_migrate",
        ALL_CFS,
        count("tasks"),
        get: |s| u64::from(s.config.tunables.nr_migrate),
        set: |s, v| s.config.tunables.nr_migrate = u32_of(v),
        "most tasks one balancing pass moves"
    ),
    tunable!(
        Scope::Engine,
        "sched_tunable_scaling",
        ALL_CFS,
        Range {
            min: 0,
            max: 2,
            unit: "(0 none, 1 log, 2 linear)",
            source: "the kernel's sysctl limits (SCHED_TUNABLESCALING_END - 1)",
        },
        get: |s| match s.config.tunables.scaling {
            TunableScaling::None => 0,
            TunableScaling::Log => 1,
            TunableScaling::Linear => 2,
        },
        set: |s, v| {
            s.config.tunables.scaling = match v {
                0 => TunableScaling::None,
                1 => TunableScaling::Log,
                _ => TunableScaling::Linear,
            }
        },
        "0 none, 1 log (1+ilog2(min(ncpus,8))), 2 linear"
    ),
    tunable!(
        Scope::Engine,
        "hz",
        since(v25(59)),
        Range {
            min: 10,
            max: 10_000,
            unit: "ticks per second",
            source: "stated bound (CONFIG_HZ offers 100, 250, 300 and 1000)",
        },
        get: |s| s.config.tunables.hz,
        set: |s, v| s.config.tunables.hz = v,
        "CONFIG_HZ: timer ticks per second (jiffy length)"
    ),
    // --- the preemption model (CONFIG_PREEMPT_*, `preempt=` under PREEMPT_DYNAMIC) --------
    preempt_model!(
        "PREEMPT_NONE",
        since(v25(59)),
        None,
        "preemption model none: a wakeup preemption of a task in a syscall waits for its return to user"
    ),
    preempt_model!(
        "PREEMPT_VOLUNTARY",
        since(v26(13)),
        Voluntary,
        "preemption model voluntary (the presets' default): as none, plus might_sleep() points"
    ),
    preempt_model!(
        "PREEMPT_FULL",
        since(v25(59)),
        Full,
        "preemption model full (CONFIG_PREEMPT): a wakeup preempts at once, in kernel mode too"
    ),
    preempt_model!(
        "PREEMPT_LAZY",
        since(v(6, 13)),
        Lazy,
        "preemption model lazy (6.13+): a fair wakeup preemption waits for the return to user or the next tick"
    ),
];

/// The definition of `name` (case-insensitive), if any.
pub(crate) fn find(name: &str) -> Option<&'static SwitchDef> {
    SWITCHES.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}

/// Whether `name` (case-insensitive) is one of the 2.5.59 balancer variants (`orig`, `ingo`,
/// `ingofix`, `ingoB0`), which replace each other rather than switch something on or off.
pub fn is_balancer_variant(name: &str) -> bool {
    find(name).is_some_and(|d| matches!(d.kind, Kind::Balancer(_)))
}

/// The switches valid for `era`, in listing order.
pub(crate) fn valid_for(era: Era) -> impl Iterator<Item = &'static SwitchDef> {
    SWITCHES.iter().filter(move |d| d.applies(era))
}

#[cfg(test)]
mod tests;
