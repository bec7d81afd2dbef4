//! The bookkeeping every search shares: reading another CPU's state is counted in the
//! [`PlacementRecord`] (`examined` inside the waker's LLC, `examined_remote` outside), which
//! is what the engine charges the waker for the decision.

use crate::machine::Machine;
use schedlab_engine::PlacementRecord;
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
}
