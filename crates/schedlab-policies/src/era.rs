//! The kernel eras schedlab models and the presets named after them
//! (linux-wakeup.md §0, §12.1): which flow, wake_affine, wake_wide and select_idle_sibling
//! each preset bundles, and the kernel configuration (class, tunables, engine features, load
//! signal, domain parameters) of that era (§1.3, §8, §12.2).

use schedlab_engine::config::TunableScaling;
use schedlab_engine::{ClassKind, Features, LoadSignal, SchedConfig, Tunables};
use schedlab_topo::DomainEra;

/// A modelled kernel version. Ordered oldest first.
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
}

impl Era {
    /// Every era, oldest first.
    pub const ALL: [Era; 16] = [
        Era::V2_5_59,
        Era::V2_6_30,
        Era::V2_6_32,
        Era::V2_6_33,
        Era::V2_6_35,
        Era::V3_6,
        Era::V3_10,
        Era::V3_12,
        Era::V4_2,
        Era::V4_6,
        Era::V4_9,
        Era::V4_14,
        Era::V5_13,
        Era::V6_0,
        Era::V6_6,
        Era::V6_12,
    ];

    /// The preset name, e.g. `linux-3.10`.
    pub fn name(self) -> &'static str {
        match self {
            Era::V2_5_59 => "linux-2.5.59",
            Era::V2_6_30 => "linux-2.6.30",
            Era::V2_6_32 => "linux-2.6.32",
            Era::V2_6_33 => "linux-2.6.33",
            Era::V2_6_35 => "linux-2.6.35",
            Era::V3_6 => "linux-3.6",
            Era::V3_10 => "linux-3.10",
            Era::V3_12 => "linux-3.12",
            Era::V4_2 => "linux-4.2",
            Era::V4_6 => "linux-4.6",
            Era::V4_9 => "linux-4.9",
            Era::V4_14 => "linux-4.14",
            Era::V5_13 => "linux-5.13",
            Era::V6_0 => "linux-6.0",
            Era::V6_6 => "linux-6.6",
            Era::V6_12 => "linux-6.12",
        }
    }

    /// The era of a preset name.
    pub fn from_name(s: &str) -> Option<Era> {
        Era::ALL
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(s))
    }

    /// Pick/preemption model.
    pub fn class(self) -> ClassKind {
        match self {
            Era::V2_5_59 => ClassKind::O1,
            Era::V6_6 | Era::V6_12 => ClassKind::Eevdf,
            _ => ClassKind::Cfs,
        }
    }

    /// Which `cpu_load()` the era's heuristics read (§1.6).
    pub fn load_signal(self) -> LoadSignal {
        if self <= Era::V3_6 {
            LoadSignal::Instant
        } else if self <= Era::V4_14 {
            LoadSignal::PeltRunnable
        } else {
            LoadSignal::PeltBlocked
        }
    }

    /// Domain parameters of the era (2.6.x → Linux26, 3.x–5.9 → Linux3, 5.10+ → Linux510).
    pub fn domain_era(self) -> DomainEra {
        if self <= Era::V2_6_35 {
            DomainEra::Linux26
        } else if self <= Era::V4_14 {
            DomainEra::Linux3
        } else {
            DomainEra::Linux510
        }
    }

    /// Base (unscaled) tunables of the era (§1.3).
    pub fn tunables(self) -> Tunables {
        let mut t = Tunables {
            scaling: TunableScaling::Log,
            hz: 1000,
            ..Tunables::default()
        };
        match self {
            Era::V2_5_59 => {}
            Era::V2_6_30 => {
                t.latency_ns = 20_000_000;
                t.min_granularity_ns = 4_000_000;
                t.wakeup_granularity_ns = 5_000_000;
            }
            Era::V2_6_32 => {
                t.latency_ns = 5_000_000;
                t.min_granularity_ns = 1_000_000;
                t.wakeup_granularity_ns = 1_000_000;
            }
            _ => {
                t.latency_ns = 6_000_000;
                t.min_granularity_ns = 750_000;
                t.wakeup_granularity_ns = 1_000_000;
            }
        }
        t.migration_cost_ns = 500_000;
        t
    }

    /// Engine-interpreted feature defaults of the era (§8, §12.2).
    pub fn features(self) -> Features {
        let cfs = self.class() == ClassKind::Cfs;
        let eevdf = self.class() == ClassKind::Eevdf;
        Features {
            wakeup_preemption: true,
            next_buddy: false,
            last_buddy: cfs,
            cache_hot_buddy: self >= Era::V2_6_30,
            gentle_fair_sleepers: cfs && self >= Era::V2_6_32,
            start_debit: cfs,
            place_lag: eevdf,
            place_deadline_initial: eevdf,
            run_to_parity: eevdf,
            preempt_short: self >= Era::V6_12,
            delay_dequeue: self >= Era::V6_12,
            ttwu_queue: self >= Era::V3_6,
            // Pre-3.0 wakeups enqueue under the remote lock (nr_running visible at once);
            // 3.x–5.7 idle_cpu() tests the wake list; 5.8–6.1 cleared ttwu_pending before the
            // enqueue (the window of benchmarks.md §1.5); fixed from 6.2.
            ttwu_pending_visible: !matches!(self, Era::V5_13 | Era::V6_0),
            base_slice: matches!(self, Era::V5_13 | Era::V6_0),
            util_init_bounded: self >= Era::V4_9,
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
        }
    }

    /// What the preset bundles, in one line per part (shown by `schedlab policies NAME`).
    pub fn models(self) -> &'static str {
        match self {
            Era::V2_5_59 => {
                "O(1) scheduler (§10): no wake-time search; a sync wakeup pulls to the waker's CPU, \
                 otherwise prev; forks stay on the parent's CPU; the 2.5.59 node balancer \
                 (variants orig, ingo, ingofix, ingoB0)"
            }
            Era::V2_6_30 => {
                "CFS-1 (§3.1): lowest domain spanning waker and prev; wake_affine with avg_overlap \
                 (§4.1); passive balancing; wake_idle on SMT siblings; 20/4/5 ms tunables"
            }
            Era::V2_6_32 => {
                "CFS-2 (§3.2): merged domain walk; select_idle_sibling inside the walk, enabled at \
                 the package level (PREFER_SIBLING); wake_affine with SYNC_LESS/SYNC_MORE (§4.2); \
                 cfs_rq-empty idle test (§6.1); 5/1/1 ms tunables"
            }
            Era::V2_6_33 => {
                "CFS-2 (§3.2) with the SIS enabler on SHARE_PKG_RESOURCES levels (SMT, LLC); \
                 wake_affine §4.2; §6.1 search; 6/0.75/1 ms tunables"
            }
            Era::V2_6_35 => {
                "CFS-3 (§3.3): wake_affine (§4.3) picks waker or prev, then select_idle_sibling \
                 around the choice, first idle CPU per level up to the LLC (§6.2)"
            }
            Era::V3_6 => {
                "CFS-3 (§3.3), wake_affine §4.3, select_idle_sibling tests one idle_buddy per level (§6.4)"
            }
            Era::V3_10 => {
                "CFS-3 (§3.3), wake_affine §4.3 on PELT runnable loads, LLC group scan for a fully \
                 idle group (§6.5)"
            }
            Era::V3_12 => {
                "CFS-3 (§3.3), wake_affine §4.3 with the first wake_wide (§5.1, flips wiped each \
                 second) inside, LLC group scan (§6.5)"
            }
            Era::V4_2 => {
                "CFS-3 (§3.3), capacity-aware wake_affine (§4.4) with wake_wide §5.1 inside and \
                 halving decay (§5.2), LLC group scan (§6.5)"
            }
            Era::V4_6 => {
                "CFS-4 (§3.4): symmetric wake_wide (§5.3) gates want_affine; wake_affine §4.4; \
                 the OLD group scan by default, with the 2016 RFC bits to select the NEW one (§15.5)"
            }
            Era::V4_9 => {
                "CFS-5 (§3.5): wake_affine §4.4, wake_wide §5.3, select_idle_sibling rewrite: \
                 idle core, idle CPU (avg_idle/512 bound), idle SMT sibling (§6.6)"
            }
            Era::V4_14 => {
                "CFS-5 (§3.5): wake_affine_idle + wake_affine_weight (WA_*, §4.5), wake_wide §5.3, \
                 SIS with SIS_PROP scan budget (§6.7)"
            }
            Era::V5_13 => {
                "CFS-5 (§3.5): WA_* wake_affine, merged idle-core/idle-CPU scan from target+1, \
                 SIS_PROP with aged wake_avg_idle, prev's idle SMT siblings, recent_used_cpu (§6.8); \
                 PELT load with blocked tasks; BASE_SLICE"
            }
            Era::V6_0 => {
                "CFS-5 (§3.5) with SIS_UTIL scan budget from LLC utilisation (§6.9); SIS_PROP off"
            }
            Era::V6_6 => "EEVDF pick and preemption (§8.2); placement as 6.0 (SIS_UTIL)",
            Era::V6_12 => {
                "EEVDF with DELAY_DEQUEUE and PREEMPT_SHORT; cluster-first idle scan, SIS_PROP \
                 removed (§6.10); the sync affine test ignores delayed tasks"
            }
        }
    }

    /// Short era description for the preset list.
    pub fn era_label(self) -> &'static str {
        match self {
            Era::V2_5_59 => "O(1)+NUMA (Jan 2003)",
            Era::V2_6_30 => "CFS-1 (2009)",
            Era::V2_6_32 | Era::V2_6_33 => "CFS-2 (2009-2010)",
            Era::V2_6_35 | Era::V3_6 | Era::V3_10 | Era::V3_12 | Era::V4_2 => "CFS-3 (2010-2015)",
            Era::V4_6 => "CFS-4 (2016)",
            Era::V4_9 | Era::V4_14 | Era::V5_13 | Era::V6_0 => "CFS-5 (2016-2022)",
            Era::V6_6 | Era::V6_12 => "EEVDF (2023-2024)",
        }
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
        let mut v: Vec<PresetInfo> = Era::ALL
            .iter()
            .map(|&e| PresetInfo {
                name: e.name(),
                era: e.era_label(),
                models: e.models(),
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
