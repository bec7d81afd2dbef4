//! [`Settings`]: everything a preset plus its switches decides (placement switches, the
//! 2.5.59 balancer constants, the engine configuration), with each era's defaults. The
//! switch table in [`crate::switches`] reads and writes these fields.

use crate::era::Era;
use crate::rules;
use schedlab_engine::SchedConfig;
use schedlab_engine::balance_o1::O1Params;

/// Everything a preset plus switches decides: placement switches, the 2.5.59 balancer
/// constants and the engine configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The era.
    pub era: Era,
    /// Take the affine path at all (bisect switch; NO_WAKE_AFFINE never pulls).
    pub wake_affine: bool,
    /// Evaluate wake_wide (NO_WAKE_WIDE: every wakeup is "not wide").
    pub wake_wide: bool,
    /// Search around the target (NO_SELECT_IDLE_SIBLING: return the target).
    pub select_idle_sibling: bool,
    /// 2.6.2x-2.6.32 AFFINE_WAKEUPS.
    pub affine_wakeups: bool,
    /// 2.6.32-33 SYNC_LESS.
    pub sync_less: bool,
    /// 2.6.32-33 SYNC_MORE.
    pub sync_more: bool,
    /// 4.14+ WA_IDLE.
    pub wa_idle: bool,
    /// 4.14+ WA_WEIGHT.
    pub wa_weight: bool,
    /// 4.14+ WA_BIAS.
    pub wa_bias: bool,
    /// 4.13-5.11 SIS_AVG_CPU.
    pub sis_avg_cpu: bool,
    /// SIS_PROP.
    pub sis_prop: bool,
    /// SIS_UTIL.
    pub sis_util: bool,
    /// RAMP (Galbraith, January 2010; reconstruction).
    pub ramp: bool,
    /// AFFINE_TARGET (Lin Ming, January 2010; reconstruction).
    pub affine_target: bool,
    /// WAKEUP_BUDDY (Michael Wang, 2013; reconstruction).
    pub wakeup_buddy: bool,
    /// WAKEUP_BUDDY's threshold.
    pub wakeup_buddy_ref: u32,
    /// PREFER_IDLE_CPU (Josef Bacik, 2015; reconstruction).
    pub prefer_idle_cpu: bool,
    /// WAKE_WIDE_IDLE (Galbraith, 2015; reconstruction).
    pub wake_wide_idle: bool,
    /// WAKE_WIDE_IDLE_BOTH (reconstruction).
    pub wake_wide_idle_both: bool,
    /// OLD_IDLE (2016 select_idle_sibling RFC bit; reconstruction).
    pub old_idle: bool,
    /// ORDER_IDLE (2016 RFC bit).
    pub order_idle: bool,
    /// IDLE_CORE (2016 RFC bit).
    pub idle_core: bool,
    /// IDLE_CPU (2016 RFC bit).
    pub idle_cpu: bool,
    /// IDLE_SMT (2016 RFC bit).
    pub idle_smt: bool,
    /// SIS_NODE (2023 multi-LLC select_idle_sibling, reverted; reconstruction).
    pub sis_node: bool,
    /// `wake_affine_idle`'s idle-prev clause (d8fcb81f1acf, 5.10; NO_WA_IDLE_PREV drops it).
    pub wa_idle_prev: bool,
    /// The idle candidate the merged scan keeps from a failed idle-core pass (Gorman, Dec
    /// 2020; NO_SIS_IDLE_CANDIDATE drops it).
    pub sis_idle_candidate: bool,
    /// `recent_used_cpu` (32e839dda3ba, 4.16; NO_RECENT_USED_CPU drops it).
    pub recent_used_cpu: bool,
    /// Mazumdar's 2019 bounded, rotating `select_idle_cpu` (reconstruction).
    pub sis_rotate: bool,
    /// Mazumdar's 2019 SIS_CORE: `select_idle_core` runs (NO_SIS_CORE skips it).
    pub sis_core: bool,
    /// SIS_CACHE (Chen Yu, Sep 2023; reconstruction).
    pub sis_cache: bool,
    /// Desnoyers' 2023 wakeup migration rate limit (reconstruction).
    pub migration_ratelimit: bool,
    /// Its period, ns.
    pub migration_ratelimit_ns: u64,
    /// Desnoyers' 2023 WAKEUP_BIAS_PREV_IDLE: an almost idle prev counts as idle.
    pub bias_prev_idle: bool,
    /// Its threshold: prev's load without the wakee, in the era's load units.
    pub prev_idle_load: u64,
    /// Aubrey Li's 2020 idle cpumask filter of `select_idle_cpu` (reconstruction).
    pub idle_cpumask: bool,
    /// Abel Wu's 2022 SIS_FILTER (reconstruction).
    pub sis_filter: bool,
    /// 2.5.59 balancer.
    pub o1: O1Params,
    /// Engine configuration.
    pub config: SchedConfig,
}

impl Settings {
    /// The era's defaults (R2: at 4.6 the OLD search, at 4.9 the NEW one).
    pub fn defaults(era: Era) -> Settings {
        let new_sis = era.has(rules::NEW_SIS);
        Settings {
            era,
            wake_affine: true,
            wake_wide: true,
            select_idle_sibling: true,
            affine_wakeups: true,
            sync_less: true,
            sync_more: false,
            wa_idle: true,
            wa_weight: true,
            wa_bias: true,
            sis_avg_cpu: false,
            sis_prop: era.has(rules::SIS_PROP_DEFAULT),
            sis_util: era.has(rules::SIS_UTIL_DEFAULT),
            ramp: false,
            affine_target: false,
            wakeup_buddy: false,
            wakeup_buddy_ref: 4,
            prefer_idle_cpu: false,
            wake_wide_idle: false,
            wake_wide_idle_both: false,
            old_idle: !new_sis,
            order_idle: !new_sis,
            idle_core: new_sis,
            idle_cpu: new_sis,
            idle_smt: new_sis,
            sis_node: false,
            wa_idle_prev: true,
            sis_idle_candidate: true,
            recent_used_cpu: true,
            sis_rotate: false,
            sis_core: true,
            sis_cache: false,
            migration_ratelimit: false,
            // "at most 1 migration per 2 ms per task" (20230905171105.1005672-2).
            migration_ratelimit_ns: 2_000_000,
            bias_prev_idle: false,
            // LOAD_AVG_MAX / 1000 as we read the patch (0.1 % of the PELT maximum) [M].
            prev_idle_load: 47,
            idle_cpumask: false,
            sis_filter: false,
            o1: O1Params::default(),
            config: era.config(),
        }
    }
}
