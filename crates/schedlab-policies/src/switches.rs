//! sched_feat-style switches: `NAME` turns a feature on, `NO_NAME` off, `name=value` sets a
//! tunable, and `orig`/`ingo`/`ingofix`/`ingoB0` pick the 2.5.59 balancer.
//!
//! One table (`SWITCHES`) says, for every switch, which eras have it, what it means and
//! whether it is mainline code re-expressed, a reconstruction of a mailing-list patch, or a
//! tunable. Defaults are not written in the table: they are read from [`Settings::defaults`],
//! so the listing can never disagree with what a build does. Era applicability (see
//! docs/policies/switches.md): a switch applies where that era's code has the feature, or
//! where it is a debated variant proposed against that era (see docs/policies/switches.md).

use crate::era::Era;
pub use crate::settings::Settings;
use schedlab_engine::balance_o1::O1Variant;
use schedlab_engine::config::TunableScaling;

/// Where a switch's behaviour comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// Mainline kernel code of that era, described in our own words (or a bisect switch
    /// that turns a mainline heuristic off).
    Mainline,
    /// A reconstruction of a mailing-list patch from its description (marked \[M\]).
    Reconstruction,
    /// A numeric tunable.
    Tunable,
}

impl Provenance {
    /// Lower-case label.
    pub fn label(self) -> &'static str {
        match self {
            Provenance::Mainline => "mainline",
            Provenance::Reconstruction => "reconstruction",
            Provenance::Tunable => "tunable",
        }
    }
}

/// Kinds of switch.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// A boolean feature.
    Feature {
        get: fn(&Settings) -> bool,
        set: fn(&mut Settings, bool),
    },
    /// A numeric tunable.
    Tunable {
        get: fn(&Settings) -> u64,
        set: fn(&mut Settings, u64) -> Result<(), String>,
    },
    /// A 2.5.59 balancer variant.
    Balancer(O1Variant),
}

/// The eras a switch applies to: from one era on, open-ended unless the kernel removed the
/// feature (then `until`, the last modelled era that has it). A new era inherits every switch
/// that is still open, so adding one never edits this table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Applies {
    /// The first era with the switch.
    pub from: Era,
    /// The last era with it; `None`: every later era.
    pub until: Option<Era>,
}

/// From `e` on (open-ended).
pub(crate) const fn from(e: Era) -> Applies {
    Applies {
        from: e,
        until: None,
    }
}

/// From `a` until `b`, both included (a removed feature, or a variant debated against them).
pub(crate) const fn between(a: Era, b: Era) -> Applies {
    Applies {
        from: a,
        until: Some(b),
    }
}

/// In `e` only.
pub(crate) const fn only(e: Era) -> Applies {
    between(e, e)
}

impl Applies {
    /// Whether `era` has the switch.
    pub(crate) fn contains(self, era: Era) -> bool {
        self.from <= era && self.until.is_none_or(|u| era <= u)
    }
}

/// One switch definition.
#[derive(Clone, Copy)]
pub(crate) struct SwitchDef {
    pub name: &'static str,
    /// The eras where it applies.
    pub eras: Applies,
    pub kind: Kind,
    pub provenance: Provenance,
    pub meaning: &'static str,
}

impl SwitchDef {
    pub(crate) fn applies(&self, era: Era) -> bool {
        self.eras.contains(era)
    }
    /// Canonical spelling as it appears in the listing (`NAME`, `name=`, `ingoB0`).
    pub(crate) fn display(&self) -> String {
        match self.kind {
            Kind::Tunable { .. } => format!("{}=", self.name),
            _ => self.name.to_string(),
        }
    }
    pub(crate) fn default_text(&self, era: Era) -> String {
        let s = Settings::defaults(era);
        match self.kind {
            Kind::Feature { get, .. } => if get(&s) { "on" } else { "off" }.into(),
            Kind::Tunable { get, .. } => get(&s).to_string(),
            Kind::Balancer(v) => if s.o1.variant == v {
                "on (default variant)"
            } else {
                "off"
            }
            .into(),
        }
    }
}

use Era::*;

/// Every CFS and EEVDF era.
const ALL_CFS: Applies = from(V2_6_30);
/// CFS until EEVDF replaced it (6.6).
const CFS_ONLY: Applies = between(V2_6_30, V6_0);
/// EEVDF, 6.6 on.
const EEVDF: Applies = from(V6_6);
/// The O(1) era.
const O1: Applies = only(V2_5_59);

fn pos(v: u64) -> Result<(), String> {
    if v == 0 {
        Err("must be at least 1".into())
    } else {
        Ok(())
    }
}

fn to_u32(v: u64) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| "too large".to_string())
}

macro_rules! feature {
    ($name:expr, $eras:expr, $prov:expr, $field:ident, $meaning:expr) => {
        SwitchDef {
            name: $name,
            eras: $eras,
            kind: Kind::Feature {
                get: |s| s.$field,
                set: |s, v| s.$field = v,
            },
            provenance: $prov,
            meaning: $meaning,
        }
    };
}

macro_rules! engine_feature {
    ($name:expr, $eras:expr, $field:ident, $meaning:expr) => {
        SwitchDef {
            name: $name,
            eras: $eras,
            kind: Kind::Feature {
                get: |s| s.config.features.$field,
                set: |s, v| s.config.features.$field = v,
            },
            provenance: Provenance::Mainline,
            meaning: $meaning,
        }
    };
}

macro_rules! o1_tick {
    ($name:expr, $field:ident, $meaning:expr) => {
        SwitchDef {
            name: $name,
            eras: O1,
            kind: Kind::Tunable {
                get: |s| s.o1.$field,
                set: |s, v| {
                    pos(v)?;
                    s.o1.$field = v;
                    Ok(())
                },
            },
            provenance: Provenance::Tunable,
            meaning: $meaning,
        }
    };
}

macro_rules! o1_u32 {
    ($name:expr, $field:ident, $meaning:expr) => {
        SwitchDef {
            name: $name,
            eras: O1,
            kind: Kind::Tunable {
                get: |s| u64::from(s.o1.$field),
                set: |s, v| {
                    pos(v)?;
                    s.o1.$field = to_u32(v)?;
                    Ok(())
                },
            },
            provenance: Provenance::Tunable,
            meaning: $meaning,
        }
    };
}

/// Every switch, in listing order.
pub(crate) const SWITCHES: &[SwitchDef] = &[
    // --- bisect switches for the three main heuristics -------------------------------------
    feature!(
        "WAKE_AFFINE",
        ALL_CFS,
        Provenance::Mainline,
        wake_affine,
        "consider pulling the wakee to the waker's CPU (wake_affine and the domain walk's affine \
         step); NO_WAKE_AFFINE never takes the affine path (schedlab bisect switch)"
    ),
    feature!(
        "WAKE_WIDE",
        from(V3_12),
        Provenance::Mainline,
        wake_wide,
        "evaluate wake_wide() (wakee_flips against the LLC size); NO_WAKE_WIDE treats every wakeup \
         as not wide (schedlab bisect switch)"
    ),
    feature!(
        "SELECT_IDLE_SIBLING",
        ALL_CFS,
        Provenance::Mainline,
        select_idle_sibling,
        "search for an idle CPU around the target (2.6.30: wake_idle); NO_SELECT_IDLE_SIBLING \
         returns the target without searching (schedlab bisect switch)"
    ),
    feature!(
        "AFFINE_WAKEUPS",
        between(V2_6_30, V2_6_32),
        Provenance::Mainline,
        affine_wakeups,
        "allow affine wakeups at all (2.6.2x-2.6.32 sched_feat)"
    ),
    feature!(
        "SYNC_LESS",
        between(V2_6_32, V2_6_33),
        Provenance::Mainline,
        sync_less,
        "wake_affine drops the sync hint when waker or wakee avg_overlap exceeds migration_cost"
    ),
    feature!(
        "SYNC_MORE",
        between(V2_6_32, V2_6_33),
        Provenance::Mainline,
        sync_more,
        "wake_affine treats a wakeup as sync when both avg_overlaps are below migration_cost"
    ),
    feature!(
        "WA_IDLE",
        from(V4_14),
        Provenance::Mainline,
        wa_idle,
        "wake_affine_idle: an idle waker CPU sharing the LLC with prev, or a sync wakeup onto a CPU \
         running only the waker, decides the affine question"
    ),
    feature!(
        "WA_WEIGHT",
        from(V4_14),
        Provenance::Mainline,
        wa_weight,
        "wake_affine_weight: compare the waker CPU's load plus the wakee with prev's load minus it"
    ),
    feature!(
        "WA_BIAS",
        from(V4_14),
        Provenance::Mainline,
        wa_bias,
        "wake_affine_weight biases toward prev by half the domain's imbalance_pct (108 for 117)"
    ),
    feature!(
        "SIS_AVG_CPU",
        only(V4_14),
        Provenance::Mainline,
        sis_avg_cpu,
        "skip select_idle_cpu when avg_idle/512 is below the average scan cost (the 4.9 rule)"
    ),
    feature!(
        "SIS_PROP",
        between(V4_14, V6_6),
        Provenance::Mainline,
        sis_prop,
        "limit the idle-CPU scan to span * avg_idle / avg_scan_cost CPUs (at least 4); 5.13+: aged \
         wake_avg_idle"
    ),
    feature!(
        "SIS_UTIL",
        from(V6_0),
        Provenance::Mainline,
        sis_util,
        "limit the idle-CPU scan to nr_idle_scan, computed from LLC utilisation at LLC-level \
         periodic balancing; skip it when the LLC is ~85 % busy"
    ),
    engine_feature!(
        "TTWU_QUEUE",
        from(V3_6),
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
    engine_feature!(
        "GENTLE_FAIR_SLEEPERS",
        between(V2_6_32, V6_0),
        gentle_fair_sleepers,
        "halve the sleeper credit (half a latency period of vruntime) given on wakeup"
    ),
    engine_feature!(
        "START_DEBIT",
        CFS_ONLY,
        start_debit,
        "new tasks start one slice of vruntime in the future"
    ),
    engine_feature!(
        "BASE_SLICE",
        between(V5_13, V6_0),
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
    engine_feature!(
        "PREEMPT_SHORT",
        from(V6_12),
        preempt_short,
        "EEVDF: a wakee with a shorter slice may preempt despite RUN_TO_PARITY"
    ),
    engine_feature!(
        "DELAY_DEQUEUE",
        from(V6_12),
        delay_dequeue,
        "EEVDF: a task blocking with negative lag stays queued (delayed) until picked or woken"
    ),
    // --- debated variants -----------------------------------------------------------------
    feature!(
        "RAMP",
        between(V2_6_32, V2_6_33),
        Provenance::Reconstruction,
        ramp,
        "Galbraith, Jan 2010: search for an idle shared-cache sibling only while the waker's CPU \
         runs nothing but the waker; an idle sibling found makes the wakeup affine at once"
    ),
    feature!(
        "AFFINE_TARGET",
        between(V2_6_32, V2_6_33),
        Provenance::Reconstruction,
        affine_target,
        "Lin Ming, Jan 2010: wake_affine weighs the target chosen by select_idle_sibling instead \
         of the waker's CPU"
    ),
    feature!(
        "WAKEUP_BUDDY",
        between(V3_6, V3_10),
        Provenance::Reconstruction,
        wakeup_buddy,
        "Michael Wang, 2013: take the affine path only between buddies (each the other's last \
         wakee, woken wakeup_buddy_ref times in a row); otherwise place around prev"
    ),
    SwitchDef {
        name: "wakeup_buddy_ref",
        eras: between(V3_6, V3_10),
        kind: Kind::Tunable {
            get: |s| s.wakeup_buddy_ref as u64,
            set: |s, v| {
                pos(v)?;
                s.wakeup_buddy_ref = to_u32(v)?;
                Ok(())
            },
        },
        provenance: Provenance::Tunable,
        meaning: "WAKEUP_BUDDY: consecutive wakeups of the same task needed to be buddies (reconstruction)",
    },
    feature!(
        "PREFER_IDLE_CPU",
        only(V4_2),
        Provenance::Reconstruction,
        prefer_idle_cpu,
        "Josef Bacik, 2015: a non-affine wakeup whose LLC search finds no idle CPU continues into \
         find_idlest_group/cpu over the wake-balance span, preferring any idle CPU"
    ),
    feature!(
        "WAKE_WIDE_IDLE",
        only(V4_2),
        Provenance::Reconstruction,
        wake_wide_idle,
        "Galbraith, 2015: when wake_wide() says wide, look for an idle CPU beyond the LLC (the \
         wake-balance span, else prev's node) from prev before stacking"
    ),
    feature!(
        "WAKE_WIDE_IDLE_BOTH",
        only(V4_2),
        Provenance::Reconstruction,
        wake_wide_idle_both,
        "WAKE_WIDE_IDLE for both directions of the 1:N relation (clients as well as the server)"
    ),
    feature!(
        "OLD_IDLE",
        between(V4_6, V4_9),
        Provenance::Reconstruction,
        old_idle,
        "2016 RFC bit: the pre-4.9 search, a fully idle sched group from the LLC down"
    ),
    feature!(
        "ORDER_IDLE",
        between(V4_6, V4_9),
        Provenance::Reconstruction,
        order_idle,
        "2016 RFC bit: visit groups in ring order from the target's group, not from the domain's first"
    ),
    feature!(
        "IDLE_CORE",
        between(V4_6, V4_9),
        Provenance::Reconstruction,
        idle_core,
        "2016 RFC bit: look for a fully idle core in the LLC (guarded by has_idle_cores)"
    ),
    feature!(
        "IDLE_CPU",
        between(V4_6, V4_9),
        Provenance::Reconstruction,
        idle_cpu,
        "2016 RFC bit: scan the LLC for any idle CPU, skipped when avg_idle/512 < avg_scan_cost"
    ),
    feature!(
        "IDLE_SMT",
        between(V4_6, V4_9),
        Provenance::Reconstruction,
        idle_smt,
        "2016 RFC bit: try the idle SMT siblings of the target"
    ),
    feature!(
        "SIS_NODE",
        between(V6_0, V6_6),
        Provenance::Reconstruction,
        sis_node,
        "2023 multi-LLC select_idle_sibling: when the LLC has no idle CPU, scan the other LLCs of \
         the node with the same budget rules (reverted before release)"
    ),
    // --- 2.5.59 balancer -----------------------------------------------------------------
    SwitchDef {
        name: "orig",
        eras: O1,
        kind: Kind::Balancer(O1Variant::Orig),
        provenance: Provenance::Mainline,
        meaning: "2.5.59 as released: node-local balancing on ticks and when idle; every \
                  NODE_BALANCE_RATE-th call balances with the busiest node",
    },
    SwitchDef {
        name: "ingo",
        eras: O1,
        kind: Kind::Balancer(O1Variant::Ingo),
        provenance: Provenance::Reconstruction,
        meaning: "Ingo's sched-2.5.59-A2: node balancing on its own 400 ms tick, with the two bugs \
                  Erich reported (idle path balances only with itself; busy path passes idle=1)",
    },
    SwitchDef {
        name: "ingofix",
        eras: O1,
        kind: Kind::Balancer(O1Variant::IngoFix),
        provenance: Provenance::Reconstruction,
        meaning: "Ingo's sched-2.5.59-A2 with both bugs fixed",
    },
    SwitchDef {
        name: "ingoB0",
        eras: O1,
        kind: Kind::Balancer(O1Variant::IngoB0),
        provenance: Provenance::Reconstruction,
        meaning: "Ingo's -B0: separate IDLE_NODE_REBALANCE_TICK (2 ms) and BUSY_NODE_REBALANCE_TICK \
                  (400 ms); the 2.6.0 structure",
    },
    o1_tick!(
        "idle_rebalance_tick",
        idle_rebalance_tick,
        "IDLE_REBALANCE_TICK, jiffies"
    ),
    o1_tick!(
        "busy_rebalance_tick",
        busy_rebalance_tick,
        "BUSY_REBALANCE_TICK, jiffies"
    ),
    o1_u32!(
        "node_balance_rate",
        node_balance_rate,
        "NODE_BALANCE_RATE: every Nth balancing call looks at other nodes (orig)"
    ),
    o1_tick!(
        "idle_node_rebalance_tick",
        idle_node_rebalance_tick,
        "IDLE_NODE_REBALANCE_TICK, jiffies (ingo*)"
    ),
    o1_tick!(
        "busy_node_rebalance_tick",
        busy_node_rebalance_tick,
        "BUSY_NODE_REBALANCE_TICK, jiffies (ingo*)"
    ),
    SwitchDef {
        name: "idle_node_rebalance_mult",
        eras: O1,
        kind: Kind::Tunable {
            get: |s| s.o1.idle_node_rebalance_tick / s.o1.idle_rebalance_tick.max(1),
            set: |s, v| {
                pos(v)?;
                s.o1.idle_node_rebalance_tick = v.saturating_mul(s.o1.idle_rebalance_tick);
                Ok(())
            },
        },
        provenance: Provenance::Tunable,
        meaning: "sets IDLE_NODE_REBALANCE_TICK = N x IDLE_REBALANCE_TICK (the sweep of Erich Focht's NEC TX7 tests, January 2003)",
    },
    SwitchDef {
        name: "busy_node_rebalance_mult",
        eras: O1,
        kind: Kind::Tunable {
            get: |s| s.o1.busy_node_rebalance_tick / s.o1.busy_rebalance_tick.max(1),
            set: |s, v| {
                pos(v)?;
                s.o1.busy_node_rebalance_tick = v.saturating_mul(s.o1.busy_rebalance_tick);
                Ok(())
            },
        },
        provenance: Provenance::Tunable,
        meaning: "sets BUSY_NODE_REBALANCE_TICK = N x BUSY_REBALANCE_TICK (the sweep of Erich Focht's NEC TX7 tests, January 2003)",
    },
    o1_u32!("node_threshold", node_threshold, "NODE_THRESHOLD, percent"),
    o1_tick!(
        "cache_decay_ticks",
        cache_decay_ticks,
        "cache_decay_ticks: recently run tasks are not moved"
    ),
    SwitchDef {
        name: "timeslice_ns",
        eras: O1,
        kind: Kind::Tunable {
            get: |s| s.config.tunables.o1_timeslice_ns,
            set: |s, v| {
                pos(v)?;
                s.config.tunables.o1_timeslice_ns = v;
                Ok(())
            },
        },
        provenance: Provenance::Tunable,
        meaning: "O(1) timeslice of a nice-0 task, ns",
    },
    // --- CFS/EEVDF tunables --------------------------------------------------------------
    SwitchDef {
        name: "sched_migration_cost_ns",
        eras: ALL_CFS,
        kind: Kind::Tunable {
            get: |s| s.config.tunables.migration_cost_ns,
            set: |s, v| {
                s.config.tunables.migration_cost_ns = v;
                Ok(())
            },
        },
        provenance: Provenance::Tunable,
        meaning: "task_hot threshold, avg_overlap limit, newidle gate (not scaled)",
    },
    SwitchDef {
        name: "sched_latency_ns",
        eras: CFS_ONLY,
        kind: Kind::Tunable {
            get: |s| s.config.tunables.latency_ns,
            set: |s, v| {
                pos(v)?;
                s.config.tunables.latency_ns = v;
                Ok(())
            },
        },
        provenance: Provenance::Tunable,
        meaning: "CFS period target, unscaled (x 1+ilog2(min(ncpus,8)))",
    },
    SwitchDef {
        name: "sched_min_granularity_ns",
        eras: CFS_ONLY,
        kind: Kind::Tunable {
            get: |s| s.config.tunables.min_granularity_ns,
            set: |s, v| {
                pos(v)?;
                s.config.tunables.min_granularity_ns = v;
                Ok(())
            },
        },
        provenance: Provenance::Tunable,
        meaning: "CFS minimum slice, unscaled",
    },
    SwitchDef {
        name: "sched_base_slice_ns",
        eras: EEVDF,
        kind: Kind::Tunable {
            get: |s| s.config.tunables.min_granularity_ns,
            set: |s, v| {
                pos(v)?;
                s.config.tunables.min_granularity_ns = v;
                Ok(())
            },
        },
        provenance: Provenance::Tunable,
        meaning: "EEVDF request size (slice), unscaled",
    },
    SwitchDef {
        name: "sched_wakeup_granularity_ns",
        eras: CFS_ONLY,
        kind: Kind::Tunable {
            get: |s| s.config.tunables.wakeup_granularity_ns,
            set: |s, v| {
                s.config.tunables.wakeup_granularity_ns = v;
                Ok(())
            },
        },
        provenance: Provenance::Tunable,
        meaning: "CFS wakeup preemption granularity, unscaled",
    },
    SwitchDef {
        name: "sched_nr_migrate",
        eras: ALL_CFS,
        kind: Kind::Tunable {
            get: |s| s.config.tunables.nr_migrate as u64,
            set: |s, v| {
                pos(v)?;
                s.config.tunables.nr_migrate = to_u32(v)?;
                Ok(())
            },
        },
        provenance: Provenance::Tunable,
        meaning: "most tasks one balancing pass moves",
    },
    SwitchDef {
        name: "sched_tunable_scaling",
        eras: ALL_CFS,
        kind: Kind::Tunable {
            get: |s| match s.config.tunables.scaling {
                TunableScaling::None => 0,
                TunableScaling::Log => 1,
                TunableScaling::Linear => 2,
            },
            set: |s, v| {
                s.config.tunables.scaling = match v {
                    0 => TunableScaling::None,
                    1 => TunableScaling::Log,
                    2 => TunableScaling::Linear,
                    _ => return Err("must be 0 (none), 1 (log) or 2 (linear)".into()),
                };
                Ok(())
            },
        },
        provenance: Provenance::Tunable,
        meaning: "0 none, 1 log (1+ilog2(min(ncpus,8))), 2 linear",
    },
    SwitchDef {
        name: "hz",
        eras: from(V2_5_59),
        kind: Kind::Tunable {
            get: |s| s.config.tunables.hz,
            set: |s, v| {
                if !(10..=10_000).contains(&v) {
                    return Err("must be between 10 and 10000".into());
                }
                s.config.tunables.hz = v;
                Ok(())
            },
        },
        provenance: Provenance::Tunable,
        meaning: "CONFIG_HZ: timer ticks per second (jiffy length)",
    },
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
