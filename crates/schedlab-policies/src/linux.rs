//! [`LinuxPolicy`]: the kernel's `select_task_rq` of every modelled era, dispatching on the
//! era's [`Flow`] (its row of [`crate::ERAS`]) to one module per era family, each named and
//! structured like the kernel code it models, with the debated variants where the
//! [`Settings`] enable them:
//!
//! | module | kernels | `select_task_rq_fair` and what it calls |
//! |---|---|---|
//! | [`o1`] | 2.5.59 | `try_to_wake_up`: sync → waker's CPU, else prev; fork → parent; exec → `sched_best_cpu` |
//! | [`cfs1`] | 2.6.23-2.6.31 | `wake_affine` on the lowest common domain, passive balance, `wake_idle` |
//! | [`cfs2`] | 2.6.32-2.6.34 | merged walk, `select_idle_sibling(p, sd, target)` inside it, `wake_affine` |
//! | [`cfs3`] | 2.6.35-4.2 | `wake_affine` picks waker vs prev, then `select_idle_sibling(p, target)`; `wake_wide` from 3.12 |
//! | [`cfs4`] | 4.3 on; ~3.9-4.14 | CFS-4's `select_task_rq_fair` (symmetric `wake_wide` gates want_affine); the LLC group scan and the 4.9 rewrite of `select_idle_sibling`; capacity-aware `wake_affine` |
//! | [`cfs5`] | 4.14 on; 5.12 on | `wake_affine_idle/weight`; `select_idle_sibling(p, prev, target)` of 5.12 on |
//!
//! The flow picks `select_task_rq_fair`; the era's [`IdleSearch`] column picks the
//! `select_idle_sibling` it calls.
//!
//! Forks and execs take the slow path ([`crate::slow`], `find_idlest_cpu`) from the highest
//! domain with the matching balance flag.

#[allow(unused_imports)]
use crate::era::ERAS as _;
use crate::era::{Era, Flow, IdleSearch};
use crate::machine::Machine;
use crate::scan::Scan;
use crate::slow::{find_idlest_cpu, sd_flag};
use crate::switches::Settings;
use crate::{cfs1, cfs2, cfs3, cfs4, cfs5, o1};
use schedlab_engine::policy::{Hints, Step};
use schedlab_engine::{PlacementPolicy, PlacementRecord, SchedView, WakeCtx};
use schedlab_topo::domains::flags;
use schedlab_topo::{CpuId, SchedDomain, SdFlags};

/// The placement policy of one kernel era with its switches.
#[derive(Clone, Debug)]
pub struct LinuxPolicy {
    settings: Settings,
    name: String,
}

impl LinuxPolicy {
    /// A policy from resolved settings (see [`crate::build`]); `name` is the canonical
    /// variant string.
    pub fn new(settings: Settings, name: impl Into<String>) -> Self {
        LinuxPolicy {
            settings,
            name: name.into(),
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// `select_task_rq` on any [`Machine`] (the engine's view, or a hand-built state in tests).
    pub fn select<M: Machine>(
        &mut self,
        ctx: &WakeCtx,
        m: &M,
        hints: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId {
        let s = &self.settings;
        let mut sc = Scan {
            m,
            this: ctx.waker_cpu,
            p: ctx.wakee,
            rec,
        };
        match s.era.def().flow {
            Flow::O1 => o1::select_task_rq(&mut sc, ctx),
            Flow::Cfs1 => cfs1::select_task_rq_fair(&mut sc, s, ctx),
            Flow::Cfs2 => cfs2::select_task_rq_fair(&mut sc, s, ctx),
            Flow::Cfs3 => cfs3::select_task_rq_fair(&mut sc, s, ctx, hints),
            Flow::Cfs4 => cfs4::select_task_rq_fair(&mut sc, s, ctx, hints),
        }
    }
}

impl PlacementPolicy for LinuxPolicy {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn select_task_rq(
        &mut self,
        ctx: &WakeCtx,
        view: &SchedView<'_>,
        hints: &mut Hints,
        rec: &mut PlacementRecord,
    ) -> CpuId {
        self.select(ctx, view, hints, rec)
    }
}

/// Highest domain of `cpu` with `flag` (2.6.x-4.2 walk: every level).
pub(crate) fn highest_with(chain: &[SchedDomain], flag: SdFlags) -> Option<usize> {
    chain.iter().rposition(|d| d.has(flag))
}

/// Fork/exec placement of the CFS eras: the slow path from the highest flagged domain.
pub(crate) fn fork_exec<M: Machine>(
    sc: &mut Scan<'_, M>,
    era: Era,
    ctx: &WakeCtx,
    contiguous: bool,
) -> CpuId {
    let this = ctx.waker_cpu;
    let flag = sd_flag(ctx);
    let chain = sc.m.domains().of(this);
    let sd = if contiguous {
        chain
            .iter()
            .take_while(|d| d.has(flag) && d.has(flags::LOAD_BALANCE))
            .count()
            .checked_sub(1)
    } else {
        highest_with(chain, flag)
    };
    sc.target(this);
    match sd {
        Some(i) => {
            let c = find_idlest_cpu(sc, era, this, i, ctx.prev_cpu, flag);
            sc.done((c, Step::SlowPath))
        }
        None => sc.done((this, Step::Target)),
    }
}

/// Half of the domain's imbalance percentage above 100 (`100 + (pct - 100) / 2`).
pub(crate) fn half_imb(sd: &SchedDomain) -> i64 {
    100 + (sd.imbalance_pct as i64 - 100) / 2
}

pub(crate) fn tl_per_task<M: Machine>(m: &M, cpu: CpuId) -> i64 {
    let nr = m.nr_running(cpu) as i64;
    if nr > 0 {
        m.cpu_load(cpu) as i64 / nr
    } else {
        0
    }
}

/// `select_idle_sibling` as the era's [`IdleSearch`] column says (CFS-3 on; earlier flows
/// search inside their own walk).
pub(crate) fn select_idle_sibling<M: Machine>(
    sc: &mut Scan<'_, M>,
    s: &Settings,
    hints: &mut Hints,
    prev: CpuId,
    target: CpuId,
) -> (CpuId, Step) {
    sc.target(target);
    if !s.select_idle_sibling {
        return (target, Step::Target);
    }
    match s.era.idle_search() {
        IdleSearch::PerLevel => cfs3::select_idle_sibling(sc, prev, target),
        IdleSearch::IdleBuddy => cfs3::select_idle_sibling_buddy(sc, prev, target),
        IdleSearch::Llc { sis_prop } => {
            cfs4::select_idle_sibling(sc, s, hints, prev, target, sis_prop)
        }
        IdleSearch::Merged { cluster_first } => {
            cfs5::select_idle_sibling(sc, s, hints, prev, target, cluster_first)
        }
        // The O(1), CFS-1 and CFS-2 flows search inside their own walk and never get here.
        IdleSearch::None | IdleSearch::WakeIdle | IdleSearch::InWalk { .. } => {
            (target, Step::Target)
        }
    }
}
