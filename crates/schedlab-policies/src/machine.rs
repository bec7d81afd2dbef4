//! What a placement decision reads: the [`Machine`] trait, the engine's
//! [`schedlab_engine::SchedView`] seen as the kernel functions read it.
//!
//! Every decision function of this crate is generic over [`Machine`] for one reason: the
//! decision tests run the same code on a hand-built state (`FakeMachine` in the crate's
//! `tests/common/fake.rs`: a few CPUs marked busy with chosen loads), where the chosen CPU
//! and the recorded path can be checked exactly. In the simulator the trait is
//! [`schedlab_engine::SchedView`] itself: each method forwards to the view's method of the
//! same name, nothing is copied or cached.

use schedlab_engine::SchedView;
use schedlab_engine::task::TaskId;
use schedlab_topo::{CpuId, CpuSet, SchedDomains, Topology};

/// Read-only machine state used by placement (a subset of [`SchedView`]).
pub trait Machine {
    /// The machine.
    fn topo(&self) -> &Topology;
    /// The sched-domain tree.
    fn domains(&self) -> &SchedDomains;
    /// Now, ns.
    fn now(&self) -> u64;
    /// Jiffies at now.
    fn jiffies(&self) -> u64;
    /// `idle_cpu()` / `available_idle_cpu()`.
    fn idle(&self, cpu: CpuId) -> bool;
    /// 2.6.32-33 `cfs_rq.nr_running == 0` (ignores a wakeup in flight).
    fn cfs_empty(&self, cpu: CpuId) -> bool;
    /// `rq.nr_running`, the running task included.
    fn nr_running(&self, cpu: CpuId) -> u32;
    /// `nr_running` minus delayed-dequeue tasks (6.12).
    fn nr_runnable(&self, cpu: CpuId) -> u32;
    /// Capacity, 1024 = full.
    fn capacity(&self, cpu: CpuId) -> u64;
    /// `cpu_load()` in the era's load signal.
    fn cpu_load(&self, cpu: CpuId) -> u64;
    /// `source_load(cpu, idx)`: `cpu_load[idx-1]` biased low (see
    /// `schedlab_engine::cpu_load`); index 0 (the default here) is the current load.
    fn source_load(&self, cpu: CpuId, _idx: usize) -> u64 {
        self.cpu_load(cpu)
    }
    /// `target_load(cpu, idx)`: `cpu_load[idx-1]` biased high.
    fn target_load(&self, cpu: CpuId, _idx: usize) -> u64 {
        self.cpu_load(cpu)
    }
    /// `cpu_util()`.
    fn cpu_util(&self, cpu: CpuId) -> u64;
    /// `task_h_load(p)` in the era's load signal.
    fn task_load(&self, t: TaskId) -> u64;
    /// Static weight of a task.
    fn weight(&self, t: TaskId) -> u64;
    /// CPUs the task may run on.
    fn allowed(&self, t: TaskId) -> &CpuSet;
    /// 2.6.2x-2.6.33 `avg_overlap`.
    fn avg_overlap(&self, t: TaskId) -> u64;
    /// `rq.avg_idle`.
    fn avg_idle(&self, cpu: CpuId) -> u64;
    /// When the CPU went idle, if it is idle.
    fn idle_since(&self, cpu: CpuId) -> Option<u64>;
    /// Exit latency of the idle state the CPU is in (0 when busy).
    fn idle_exit_latency(&self, cpu: CpuId) -> u64;
    /// Cost of examining one CPU inside / outside the waker's LLC, ns (for SIS_PROP's
    /// measured scan cost).
    fn scan_cost_ns(&self) -> (u64, u64);
    /// `sysctl_sched_migration_cost`, ns.
    fn migration_cost_ns(&self) -> u64;
}

impl Machine for SchedView<'_> {
    fn topo(&self) -> &Topology {
        SchedView::topo(self)
    }
    fn domains(&self) -> &SchedDomains {
        SchedView::domains(self)
    }
    fn now(&self) -> u64 {
        SchedView::now(self)
    }
    fn jiffies(&self) -> u64 {
        SchedView::jiffies(self)
    }
    fn idle(&self, cpu: CpuId) -> bool {
        SchedView::available_idle(self, cpu)
    }
    fn cfs_empty(&self, cpu: CpuId) -> bool {
        SchedView::cfs_empty(self, cpu)
    }
    fn nr_running(&self, cpu: CpuId) -> u32 {
        SchedView::nr_running(self, cpu)
    }
    fn nr_runnable(&self, cpu: CpuId) -> u32 {
        SchedView::nr_runnable(self, cpu)
    }
    fn capacity(&self, cpu: CpuId) -> u64 {
        SchedView::capacity(self, cpu)
    }
    fn cpu_load(&self, cpu: CpuId) -> u64 {
        SchedView::cpu_load(self, cpu)
    }
    fn source_load(&self, cpu: CpuId, idx: usize) -> u64 {
        SchedView::source_load(self, cpu, idx)
    }
    fn target_load(&self, cpu: CpuId, idx: usize) -> u64 {
        SchedView::target_load(self, cpu, idx)
    }
    fn cpu_util(&self, cpu: CpuId) -> u64 {
        SchedView::cpu_util(self, cpu)
    }
    fn task_load(&self, t: TaskId) -> u64 {
        SchedView::task_load(self, t)
    }
    fn weight(&self, t: TaskId) -> u64 {
        SchedView::weight(self, t)
    }
    fn allowed(&self, t: TaskId) -> &CpuSet {
        SchedView::allowed(self, t)
    }
    fn avg_overlap(&self, t: TaskId) -> u64 {
        SchedView::avg_overlap(self, t)
    }
    fn avg_idle(&self, cpu: CpuId) -> u64 {
        SchedView::avg_idle(self, cpu)
    }
    fn idle_since(&self, cpu: CpuId) -> Option<u64> {
        SchedView::idle_since(self, cpu)
    }
    fn idle_exit_latency(&self, cpu: CpuId) -> u64 {
        SchedView::idle_exit_latency(self, cpu)
    }
    fn scan_cost_ns(&self) -> (u64, u64) {
        let s = &self.profile().search;
        (s.scan_per_cpu_ns, s.scan_per_cpu_remote_ns)
    }
    fn migration_cost_ns(&self) -> u64 {
        self.config().tunables.migration_cost_ns
    }
}
