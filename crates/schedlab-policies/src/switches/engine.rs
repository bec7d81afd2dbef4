//! The engine's switches: sched_feat features the engine reads, the 2.5.59 balancer
//! variants and tunables, the CFS/EEVDF tunables and the preemption model. Each row writes
//! the engine's own configuration field (or the 2.5.59 balancer's parameter), which the
//! engine reads; its default is the era's configuration ([`crate::Era::config`]).

use crate::rules::{ALL_CFS, O1};
use crate::switch_def::{Kind, Provenance, Scope, Store, SwitchDef};
use crate::tunables::{GRANULARITY_NS, MULT, Range, TICKS, count};
use crate::version::{Versions, since, span, v, v25, v26};
use schedlab_engine::PreemptModel;
use schedlab_engine::balance_o1::O1Variant;
use schedlab_engine::config::TunableScaling;

/// CFS until EEVDF replaced it in 6.6.
const CFS_ONLY: Versions = span(v26(23), v(6, 6));
/// EEVDF, 6.6 on.
const EEVDF: Versions = since(v(6, 6));

/// A value already checked against a range whose maximum fits `u32`.
fn u32_of(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// sched_feat features the engine interprets.
pub(super) const FEATURES: &[SwitchDef] = &[
    // 70fb5ccf2ebb (6.0).
    engine_feature!(
        "SIS_UTIL",
        since(v(6, 0)),
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
];

/// The 2.5.59 balancer variants and their tunables.
pub(super) const O1_BALANCER: &[SwitchDef] = &[
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
        meaning: "A2 as Erich Focht ran it (17 Jan 2003): bug 1 fixed (the idle path balances over \
                  its node), bug 2 kept (he had not applied it: the busy path still passes idle=1)",
    },
    SwitchDef {
        name: "ingofixboth",
        versions: O1,
        scope: Scope::Engine,
        kind: Kind::Balancer(O1Variant::IngoFixBoth),
        provenance: Provenance::Reconstruction,
        meaning: "A2 with both bugs fixed (bug 2 as Ingo reported it with B0): not a kernel anyone \
                  measured",
    },
    SwitchDef {
        name: "ingoB0",
        versions: O1,
        scope: Scope::Engine,
        kind: Kind::Balancer(O1Variant::IngoB0),
        provenance: Provenance::Reconstruction,
        meaning: "Ingo's -B0 as posted (17 Jan 2003): separate IDLE_NODE_REBALANCE_TICK (2 ms) and \
                  BUSY_NODE_REBALANCE_TICK (400 ms); its 'intra-node' passes (1 ms idle, 200 ms \
                  busy, schedule() on an empty queue) over all online CPUs, as the fallback \
                  __cpu_to_node_mask = cpu_online_map of its topology.h makes them",
    },
    SwitchDef {
        name: "ingoB0fix",
        versions: O1,
        scope: Scope::Engine,
        kind: Kind::Balancer(O1Variant::IngoB0Fix),
        provenance: Provenance::Reconstruction,
        meaning: "B0 with a working __cpu_to_node_mask: its intra-node passes over the node (the \
                  2.6.0 structure)",
    },
    tunable!(
        "idle_rebalance_tick",
        O1,
        TICKS,
        o1,
        get: |o| o.idle_rebalance_tick,
        set: |o, v| o.idle_rebalance_tick = v,
        "IDLE_REBALANCE_TICK, jiffies"
    ),
    tunable!(
        "busy_rebalance_tick",
        O1,
        TICKS,
        o1,
        get: |o| o.busy_rebalance_tick,
        set: |o, v| o.busy_rebalance_tick = v,
        "BUSY_REBALANCE_TICK, jiffies"
    ),
    tunable!(
        "node_balance_rate",
        O1,
        count("balancing calls"),
        o1,
        get: |o| u64::from(o.node_balance_rate),
        set: |o, v| o.node_balance_rate = u32_of(v),
        "NODE_BALANCE_RATE: every Nth balancing call looks at other nodes (orig)"
    ),
    tunable!(
        "idle_node_rebalance_tick",
        O1,
        TICKS,
        o1,
        get: |o| o.idle_node_rebalance_tick,
        set: |o, v| o.idle_node_rebalance_tick = v,
        "IDLE_NODE_REBALANCE_TICK, jiffies (ingo*)"
    ),
    tunable!(
        "busy_node_rebalance_tick",
        O1,
        TICKS,
        o1,
        get: |o| o.busy_node_rebalance_tick,
        set: |o, v| o.busy_node_rebalance_tick = v,
        "BUSY_NODE_REBALANCE_TICK, jiffies (ingo*)"
    ),
    tunable!(
        "idle_node_rebalance_mult",
        O1,
        MULT,
        o1,
        get: |o| o.idle_node_rebalance_tick / o.idle_rebalance_tick.max(1),
        set: |o, v| o.idle_node_rebalance_tick = v.saturating_mul(o.idle_rebalance_tick),
        "sets IDLE_NODE_REBALANCE_TICK = N x IDLE_REBALANCE_TICK (the sweep of Erich Focht's NEC TX7 tests, January 2003)"
    ),
    tunable!(
        "busy_node_rebalance_mult",
        O1,
        MULT,
        o1,
        get: |o| o.busy_node_rebalance_tick / o.busy_rebalance_tick.max(1),
        set: |o, v| o.busy_node_rebalance_tick = v.saturating_mul(o.busy_rebalance_tick),
        "sets BUSY_NODE_REBALANCE_TICK = N x BUSY_REBALANCE_TICK (the sweep of Erich Focht's NEC TX7 tests, January 2003)"
    ),
    tunable!(
        "node_threshold",
        O1,
        Range {
            min: 1,
            max: 10_000,
            unit: "percent",
            source: "stated bound: a busiest node at most 100 times as loaded",
        },
        o1,
        get: |o| u64::from(o.node_threshold),
        set: |o, v| o.node_threshold = u32_of(v),
        "NODE_THRESHOLD, percent"
    ),
    tunable!(
        "cache_decay_ticks",
        O1,
        TICKS,
        o1,
        get: |o| o.cache_decay_ticks,
        set: |o, v| o.cache_decay_ticks = v,
        "cache_decay_ticks: recently run tasks are not moved"
    ),
    tunable!(
        "timeslice_ns",
        O1,
        Range {
            min: 100_000,
            max: 10_000_000_000,
            unit: "ns",
            source: "stated bound: 100 us to 10 s",
        },
        config,
        get: |c| c.tunables.o1_timeslice_ns,
        set: |c, v| c.tunables.o1_timeslice_ns = v,
        "O(1) timeslice of a nice-0 task, ns"
    ),
];

/// The CFS/EEVDF tunables.
pub(super) const TUNABLES: &[SwitchDef] = &[
    // --- CFS/EEVDF tunables --------------------------------------------------------------
    tunable!(
        "sched_migration_cost_ns",
        ALL_CFS,
        Range {
            min: 0,
            max: u32::MAX as u64,
            unit: "ns",
            source: "the kernel's unsigned int (no other limit)",
        },
        config,
        get: |c| c.tunables.migration_cost_ns,
        set: |c, v| c.tunables.migration_cost_ns = v,
        "task_hot threshold, avg_overlap limit, newidle gate (not scaled)"
    ),
    tunable!(
        "sched_latency_ns",
        CFS_ONLY,
        GRANULARITY_NS,
        config,
        get: |c| c.tunables.latency_ns,
        set: |c, v| c.tunables.latency_ns = v,
        "CFS period target, unscaled (x 1+ilog2(min(ncpus,8)))"
    ),
    tunable!(
        "sched_min_granularity_ns",
        CFS_ONLY,
        GRANULARITY_NS,
        config,
        get: |c| c.tunables.min_granularity_ns,
        set: |c, v| c.tunables.min_granularity_ns = v,
        "CFS minimum slice, unscaled"
    ),
    // EEVDF's base_slice_ns is a debugfs u32 without limits; it replaced min_granularity,
    // so it keeps that sysctl's bounds.
    tunable!(
        "sched_base_slice_ns",
        EEVDF,
        Range {
            source: "stated bound: the sysctl limits of the min_granularity it replaced \
                     (100 us to 1 s)",
            ..GRANULARITY_NS
        },
        config,
        get: |c| c.tunables.min_granularity_ns,
        set: |c, v| c.tunables.min_granularity_ns = v,
        "EEVDF request size (slice), unscaled"
    ),
    tunable!(
        "sched_wakeup_granularity_ns",
        CFS_ONLY,
        Range {
            min: 0,
            max: 1_000_000_000,
            unit: "ns",
            source: "the kernel's sysctl limits (0 to 1 s)",
        },
        config,
        get: |c| c.tunables.wakeup_granularity_ns,
        set: |c, v| c.tunables.wakeup_granularity_ns = v,
        "CFS wakeup preemption granularity, unscaled"
    ),
    tunable!(
        "sched_nr_migrate",
        ALL_CFS,
        count("tasks"),
        config,
        get: |c| u64::from(c.tunables.nr_migrate),
        set: |c, v| c.tunables.nr_migrate = u32_of(v),
        "most tasks one balancing pass moves"
    ),
    tunable!(
        "sched_tunable_scaling",
        ALL_CFS,
        Range {
            min: 0,
            max: 2,
            unit: "(0 none, 1 log, 2 linear)",
            source: "the kernel's sysctl limits (SCHED_TUNABLESCALING_END - 1)",
        },
        config,
        get: |c| match c.tunables.scaling {
            TunableScaling::None => 0,
            TunableScaling::Log => 1,
            TunableScaling::Linear => 2,
        },
        set: |c, v| {
            c.tunables.scaling = match v {
                0 => TunableScaling::None,
                1 => TunableScaling::Log,
                _ => TunableScaling::Linear,
            }
        },
        "0 none, 1 log (1+ilog2(min(ncpus,8))), 2 linear"
    ),
    tunable!(
        "hz",
        since(v25(59)),
        Range {
            min: 10,
            max: 10_000,
            unit: "ticks per second",
            source: "stated bound (CONFIG_HZ offers 100, 250, 300 and 1000)",
        },
        config,
        get: |c| c.tunables.hz,
        set: |c, v| c.tunables.hz = v,
        "CONFIG_HZ: timer ticks per second (jiffy length)"
    ),
];

/// The preemption model (CONFIG_PREEMPT_*, `preempt=` under PREEMPT_DYNAMIC).
pub(super) const PREEMPT: &[SwitchDef] = &[
    // --- the preemption model (CONFIG_PREEMPT_*, `preempt=` under PREEMPT_DYNAMIC) --------
    preempt_model!(
        "PREEMPT_NONE",
        // 7.0 kept only full and lazy on x86 and arm64 (7dadeaa6e851).
        span(v25(59), v(7, 0)),
        None,
        "preemption model none: a wakeup preemption of a task in a syscall waits for its return to user"
    ),
    preempt_model!(
        "PREEMPT_VOLUNTARY",
        span(v26(13), v(7, 0)),
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
