//! [`LinuxPolicy`]: core.c's `select_task_rq()` of every modelled era, the top of the
//! placement call graph. It hands a CFS-era placement to the fair class
//! ([`crate::select_task_rq_fair`]) and places a 2.5.59 one by the O(1) rules, which had no
//! `select_task_rq` yet. Every other placement file is called from here down:
//!
//! ```text
//! select_task_rq ─▶ select_task_rq_fair ─▶ record_wakee, wake_wide, wake_affine
//!       │                  │                 (─▶ wake_affine_idle, wake_affine_weight),
//!       │                  │                 select_idle_sibling (─▶ select_idle_core,
//!       │                  │                 select_idle_cpu, select_idle_smt), wake_idle,
//!       │                  │                 find_idlest_cpu
//!       └─▶ sched_best_cpu (2.5.59 exec)
//! ```
//!
//! Which version of each function an era runs is read from its row of [`crate::ERAS`] (the
//! [`Flow`] and [`crate::IdleSearch`] columns) and the version rules of `rules.rs`.

#[allow(unused_imports)]
use crate::era::ERAS as _;
use crate::era::Flow;
use crate::machine::Machine;
use crate::scan::Scan;
use crate::sched_best_cpu::sched_best_cpu;
use crate::select_task_rq_fair::{
    select_task_rq_fair_2_6_23, select_task_rq_fair_2_6_32, select_task_rq_fair_2_6_35,
    select_task_rq_fair_4_3,
};
use crate::settings::Settings;
use schedlab_engine::policy::{Affine, Hints, Step};
use schedlab_engine::{PlacementPolicy, PlacementRecord, SchedView, WakeCtx};
use schedlab_topo::CpuId;

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
            Flow::O1 => select_task_rq_2_5_59(&mut sc, ctx),
            Flow::Cfs1 => select_task_rq_fair_2_6_23(&mut sc, s, ctx),
            Flow::Cfs2 => select_task_rq_fair_2_6_32(&mut sc, s, ctx),
            Flow::Cfs3 => select_task_rq_fair_2_6_35(&mut sc, s, ctx, hints),
            Flow::Cfs4 => select_task_rq_fair_4_3(&mut sc, s, ctx, hints),
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

/// 2.5.59 (the O(1) scheduler with the first NUMA balancer, January 2003) had no
/// `select_task_rq`: `try_to_wake_up` pulled a sync wakeup onto another CPU to the waker
/// and otherwise left the task on prev, `wake_up_forked_process` kept a child on the
/// parent's CPU, and `sched_exec` moved an exec'ing task by [`sched_best_cpu`]. As
/// released and as kept by the `ingo*` balancer variants; nothing is reconstructed here
/// (the balancer variants are, in the engine).
fn select_task_rq_2_5_59<M: Machine>(sc: &mut Scan<'_, M>, ctx: &WakeCtx) -> CpuId {
    let (this, prev) = (ctx.waker_cpu, ctx.prev_cpu);
    sc.step(Step::O1Rule);
    if ctx.is_exec() {
        return sched_best_cpu(sc, prev);
    }
    if ctx.is_fork() {
        sc.target(prev);
        return prev;
    }
    if ctx.sync() && prev != this && sc.allowed(this) {
        sc.affine(Affine::PulledSync);
        sc.target(this);
        return this;
    }
    sc.target(prev);
    prev
}
