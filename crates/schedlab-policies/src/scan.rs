//! The bookkeeping every decision shares, kept out of the kernel logic: reading another
//! CPU's state is counted in the [`PlacementRecord`] (`examined` inside the waker's LLC,
//! `examined_remote` outside, through the engine's scan helper), which is what the engine
//! charges the waker; and a small recorder API (`target`, `affine`, `loads`, `wide`,
//! `decide`, `done`) notes why the CPU was chosen.

use crate::machine::Machine;
use schedlab_engine::PlacementRecord;
use schedlab_engine::policy::{Affine, Step};
use schedlab_engine::task::TaskId;
use schedlab_topo::CpuId;

/// One placement decision in progress.
pub(crate) struct Scan<'a, M: Machine> {
    pub m: &'a M,
    /// `smp_processor_id()`: the waker's CPU.
    pub this: CpuId,
    /// The task being placed.
    pub p: TaskId,
    pub rec: &'a mut PlacementRecord,
}

impl<M: Machine> Scan<'_, M> {
    /// Counts a read of `c`'s runqueue state (the waker's own CPU is free).
    pub fn count(&mut self, c: CpuId) {
        self.rec.count_read(self.m.topo(), self.this, c);
    }
    /// `idle_cpu(c)`, counted.
    pub fn idle(&mut self, c: CpuId) -> bool {
        self.count(c);
        self.m.idle(c)
    }
    /// `cfs_rq.nr_running == 0`, counted.
    pub fn cfs_empty(&mut self, c: CpuId) -> bool {
        self.count(c);
        self.m.cfs_empty(c)
    }
    /// Whether the task may run on `c`.
    pub fn allowed(&self, c: CpuId) -> bool {
        self.m.allowed(self.p).contains(c)
    }
    /// CPUs examined so far (local, remote).
    pub fn probes(&self) -> (u32, u32) {
        self.rec.reads()
    }
    /// Simulated time spent on the probes made since `since`, ns.
    pub fn cost_since(&self, since: (u32, u32)) -> u64 {
        self.rec.scan_cost_since(since, self.m.scan_cost_ns())
    }

    /// Records where the search starts.
    pub fn target(&mut self, c: CpuId) {
        self.rec.target = Some(c);
    }
    /// Records the affine verdict.
    pub fn affine(&mut self, a: Affine) {
        self.rec.affine = a;
    }
    /// The affine verdict recorded so far.
    pub fn affine_so_far(&self) -> Affine {
        self.rec.affine
    }
    /// Records the two numbers wake_affine compared (`this_eff`, `prev_eff`).
    pub fn loads(&mut self, this_eff: i64, prev_eff: i64) {
        self.rec.affine_loads = Some((this_eff, prev_eff));
    }
    /// Records a wake_wide verdict and returns it.
    pub fn wide(&mut self, wide: bool) -> bool {
        self.rec.wake_wide = Some(wide);
        wide
    }
    /// Records a wake_affine load test's outcome (`how` when pulled, `KeptWeight` when not)
    /// and returns it.
    pub fn decide(&mut self, pulled: bool, how: Affine) -> bool {
        self.rec.affine = if pulled { how } else { Affine::KeptWeight };
        pulled
    }
    /// Records the step that produced the CPU.
    pub fn step(&mut self, step: Step) {
        self.rec.step = step;
    }
    /// Records the step and returns the CPU: the last word of a decision.
    pub fn done(&mut self, (cpu, step): (CpuId, Step)) -> CpuId {
        self.rec.step = step;
        cpu
    }
}
