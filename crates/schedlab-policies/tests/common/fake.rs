//! `FakeMachine`: a hand-built machine state for the decision tests (all CPUs idle until
//! marked busy), implementing the crate's [`Machine`] trait so that the placement code runs
//! on it unchanged. It lives with the tests: the simulator never needs it.

#![allow(dead_code)]

use schedlab_engine::policy::{CpuHints, Hints, LlcHints, TaskHints};
use schedlab_engine::task::TaskId;
use schedlab_policies::machine::Machine;
use schedlab_topo::{CpuId, CpuSet, DomainEra, SchedDomains, Topology};

/// One CPU of a [`FakeMachine`].
#[derive(Clone, Debug, PartialEq)]
pub struct FakeCpu {
    /// Runnable tasks, the running one included (0 = idle).
    pub nr_running: u32,
    /// Of those, delayed-dequeue tasks.
    pub delayed: u32,
    /// A wakeup is on its way (counts as busy for `idle`, not for `cfs_empty`).
    pub pending: bool,
    /// `cpu_load()`.
    pub load: u64,
    /// `cpu_load[0]`, the load at the last tick (None: the same as `load`), read by
    /// `source_load`/`target_load` with an index above 0.
    pub last_tick_load: Option<u64>,
    /// `cpu_util()`.
    pub util: u64,
    /// Capacity.
    pub capacity: u64,
    /// `avg_idle`, ns.
    pub avg_idle: u64,
    /// Idle since (when idle).
    pub idle_since: u64,
    /// Idle-state exit latency (when idle).
    pub exit_latency: u64,
}

/// One task of a [`FakeMachine`].
#[derive(Clone, Debug, PartialEq)]
pub struct FakeTask {
    /// Static weight.
    pub weight: u64,
    /// `task_h_load`.
    pub load: u64,
    /// Allowed CPUs.
    pub allowed: CpuSet,
    /// `avg_overlap`, ns.
    pub avg_overlap: u64,
}

/// A hand-built machine state for decision tests: all CPUs idle until marked busy.
#[derive(Clone, Debug)]
pub struct FakeMachine {
    /// The machine.
    pub topo: Topology,
    /// Its domains.
    pub domains: SchedDomains,
    /// Now, ns.
    pub now: u64,
    /// Jiffy, ns.
    pub tick_ns: u64,
    /// Per CPU state.
    pub cpus: Vec<FakeCpu>,
    /// Per task state.
    pub tasks: Vec<FakeTask>,
    /// (local, remote) scan cost per CPU, ns.
    pub scan_cost: (u64, u64),
    /// Migration cost, ns.
    pub migration_cost: u64,
}

impl FakeMachine {
    /// An idle machine at t = 10 s, HZ 1000, with `nr_tasks` nice-0 tasks allowed
    /// everywhere whose load is 1024.
    pub fn new(topo: Topology, era: DomainEra, nr_tasks: usize) -> Self {
        let domains = SchedDomains::build(&topo, era);
        let n = topo.nr_cpus();
        let cpu = FakeCpu {
            nr_running: 0,
            delayed: 0,
            pending: false,
            load: 0,
            last_tick_load: None,
            util: 0,
            capacity: 1024,
            avg_idle: 1_000_000,
            idle_since: 0,
            exit_latency: 2000,
        };
        let task = FakeTask {
            weight: 1024,
            load: 1024,
            allowed: CpuSet::full(n),
            avg_overlap: 0,
        };
        FakeMachine {
            domains,
            now: 10_000_000_000,
            tick_ns: 1_000_000,
            cpus: vec![cpu; n],
            tasks: vec![task; nr_tasks],
            scan_cost: (50, 100),
            migration_cost: 500_000,
            topo,
        }
    }

    /// Marks `cpus` busy with `nr` nice-0 tasks each (load and util follow).
    pub fn busy(&mut self, cpus: impl IntoIterator<Item = CpuId>, nr: u32) -> &mut Self {
        for c in cpus {
            let s = &mut self.cpus[c];
            s.nr_running = nr;
            s.load = 1024 * nr as u64;
            s.util = if nr > 0 { 1024 } else { 0 };
        }
        self
    }

    /// Fresh shared hints for this machine, as the engine starts them: `has_idle_cores` set,
    /// `nr_idle_scan` = LLC size, no wakee history.
    pub fn hints(&self) -> Hints {
        Hints {
            task: vec![TaskHints::default(); self.tasks.len()],
            llc: self
                .topo
                .llcs()
                .iter()
                .map(|l| LlcHints {
                    has_idle_cores: true,
                    nr_idle_scan: l.count() as u32,
                    avg_scan_cost: 0.0,
                    idle_cpus: l.clone(),
                })
                .collect(),
            cpu: vec![CpuHints::default(); self.topo.nr_cpus()],
        }
    }

    /// Sets the load of one CPU (keeps nr_running).
    pub fn load(&mut self, cpu: CpuId, load: u64) -> &mut Self {
        self.cpus[cpu].load = load;
        self
    }
}

impl Machine for FakeMachine {
    fn topo(&self) -> &Topology {
        &self.topo
    }
    fn domains(&self) -> &SchedDomains {
        &self.domains
    }
    fn now(&self) -> u64 {
        self.now
    }
    fn jiffies(&self) -> u64 {
        self.now / self.tick_ns.max(1)
    }
    fn idle(&self, cpu: CpuId) -> bool {
        self.cpus[cpu].nr_running == 0 && !self.cpus[cpu].pending
    }
    fn cfs_empty(&self, cpu: CpuId) -> bool {
        self.cpus[cpu].nr_running == 0
    }
    fn nr_running(&self, cpu: CpuId) -> u32 {
        self.cpus[cpu].nr_running + u32::from(self.cpus[cpu].pending)
    }
    fn nr_runnable(&self, cpu: CpuId) -> u32 {
        self.nr_running(cpu) - self.cpus[cpu].delayed
    }
    fn capacity(&self, cpu: CpuId) -> u64 {
        self.cpus[cpu].capacity
    }
    fn cpu_load(&self, cpu: CpuId) -> u64 {
        self.cpus[cpu].load
    }
    fn source_load(&self, cpu: CpuId, idx: usize) -> u64 {
        let c = &self.cpus[cpu];
        match (idx, c.last_tick_load) {
            (1.., Some(avg)) => avg.min(c.load),
            _ => c.load,
        }
    }
    fn target_load(&self, cpu: CpuId, idx: usize) -> u64 {
        let c = &self.cpus[cpu];
        match (idx, c.last_tick_load) {
            (1.., Some(avg)) => avg.max(c.load),
            _ => c.load,
        }
    }
    fn cpu_util(&self, cpu: CpuId) -> u64 {
        self.cpus[cpu].util
    }
    fn task_load(&self, t: TaskId) -> u64 {
        self.tasks[t].load
    }
    fn weight(&self, t: TaskId) -> u64 {
        self.tasks[t].weight
    }
    fn allowed(&self, t: TaskId) -> &CpuSet {
        &self.tasks[t].allowed
    }
    fn avg_overlap(&self, t: TaskId) -> u64 {
        self.tasks[t].avg_overlap
    }
    fn avg_idle(&self, cpu: CpuId) -> u64 {
        self.cpus[cpu].avg_idle
    }
    fn idle_since(&self, cpu: CpuId) -> Option<u64> {
        self.idle(cpu).then_some(self.cpus[cpu].idle_since)
    }
    fn idle_exit_latency(&self, cpu: CpuId) -> u64 {
        if self.idle(cpu) {
            self.cpus[cpu].exit_latency
        } else {
            0
        }
    }
    fn scan_cost_ns(&self) -> (u64, u64) {
        self.scan_cost
    }
    fn migration_cost_ns(&self) -> u64 {
        self.migration_cost
    }
}
