//! The wake-placement patches debated from 2019 to 2023, as the pieces the era code calls
//! when their switch is on. None of them is mainline; each is rebuilt from its posting
//! (the Message-ID is on each function) and described in our own words; what the posting
//! did not fix for us is marked \[M\]. The bookkeeping some of them need (a task's short
//! sleeps, its last migration, the per-LLC idle cpumask) is kept by the engine only when
//! the switch asks for it ([`schedlab_engine::Features`]).
//!
//! * Mazumdar, Jun 2019 (`20190609014954.1033-1-subhra.mazumdar@oracle.com`): a bounded
//!   `select_idle_cpu` budget with a per-CPU rotating start ([`rotate_budget`]), and
//!   SIS_CORE to skip `select_idle_core` (read in [`crate::select_idle_sibling`]).
//! * Aubrey Li, Sep 2020 (`20200910054203.525420-1-aubrey.li@intel.com`) and Abel Wu's
//!   SIS_FILTER, v5 Sep 2022 (`20220909055304.25171-1-wuyun.abel@bytedance.com`): the scan
//!   walks a per-LLC mask of idle CPUs ([`scan_filter`]).
//! * Chen Yu's SIS_CACHE, Sep 2023 (`cover.1695704179.git.yu.c.chen@intel.com`): an idle
//!   CPU reserved by a short sleeper is skipped by `select_idle_cpu` ([`cache_hot`]).
//! * Desnoyers, Sep 2023 (`20230905171105.1005672-2-mathieu.desnoyers@efficios.com`,
//!   `20230929183350.239721-1-mathieu.desnoyers@efficios.com`): at most one wakeup
//!   migration per period ([`ratelimited`]) and an almost idle prev counted as idle
//!   ([`almost_idle`]).

use crate::machine::Machine;
use crate::scan::Scan;
use crate::settings::Settings;
use crate::switches::sw;
use schedlab_engine::WakeCtx;
use schedlab_engine::policy::Hints;
use schedlab_topo::{CpuId, CpuSet, SchedDomain};

/// Desnoyers' rate limit (`20230905171105.1005672-2`): a task that changed CPU less than
/// `migration_ratelimit_ns` ago stays on prev at wakeup. The patch arms the window in
/// `migrate_task_rq_fair`, so balancer moves count as well as wakeup moves.
pub(crate) fn ratelimited<M: Machine>(
    s: &Settings,
    sc: &Scan<'_, M>,
    ctx: &WakeCtx,
    hints: &Hints,
) -> bool {
    s.on(sw!("MIGRATION_RATELIMIT"))
        && sc.allowed(ctx.prev_cpu)
        && hints.task[ctx.wakee]
            .last_migration
            .is_some_and(|t| sc.m.now() < t.saturating_add(s.value(sw!("migration_ratelimit_ns"))))
}

/// WAKEUP_BIAS_PREV_IDLE (`20230929183350.239721-1`): prev counts as idle when its load
/// without the wakee (`cpu_load_without`) is at most `prev_idle_load`. Counted as a read
/// of prev.
pub(crate) fn almost_idle<M: Machine>(s: &Settings, sc: &mut Scan<'_, M>, prev: CpuId) -> bool {
    if !s.on(sw!("WAKEUP_BIAS_PREV_IDLE")) {
        return false;
    }
    sc.count(prev);
    let load = sc.m.cpu_load(prev).saturating_sub(sc.m.task_load(sc.p));
    load <= s.value(sw!("prev_idle_load"))
}

/// SIS_CACHE: `c` is reserved by the short sleeper that left it idle (`cache_hot_cpu()`:
/// now before `rq->cache_hot_timeout`).
pub(crate) fn cache_hot<M: Machine>(s: &Settings, m: &M, hints: &Hints, c: CpuId) -> bool {
    s.on(sw!("SIS_CACHE")) && m.now() < hints.cpu[c].cache_hot_until
}

/// The idle cpumask a scan walks when Aubrey Li's filter or SIS_FILTER is on (a copy: the
/// scan updates the hints it lives in). `None`: no filter, the whole LLC.
pub(crate) fn scan_filter(s: &Settings, hints: &Hints, llc: usize) -> Option<CpuSet> {
    (s.on(sw!("IDLE_CPUMASK")) || s.on(sw!("SIS_FILTER"))).then(|| hints.llc[llc].idle_cpus.clone())
}

/// Mazumdar's bounded budget (patch 1 of the 2019 series): at least `floor` CPUs (the
/// target's SMT siblings, at least 2), at most twice that, SIS_PROP's proportion between;
/// and the rotating start (patches 2-3): the scan from `target` resumes after where the
/// last one stopped (`next_cpu`, per target CPU). Returns (budget, start).
pub(crate) fn rotate_budget<M: Machine>(
    sc: &Scan<'_, M>,
    hints: &Hints,
    sd: &SchedDomain,
    target: CpuId,
    span_avg: u64,
    avg_cost: u64,
) -> (u64, CpuId) {
    let floor = (sc.m.topo().smt_siblings(target).count() as u64).max(2);
    let limit = 2 * floor;
    let nr = if span_avg > floor * avg_cost {
        (span_avg / avg_cost).min(limit)
    } else {
        floor
    };
    let start = hints.cpu[target]
        .sis_next_cpu
        .filter(|c| sd.span.contains(*c))
        .unwrap_or(target);
    (nr, start)
}
