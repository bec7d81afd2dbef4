//! The discrete-event core: the [`Simulation`] struct, its construction, the run loop and
//! the dispatch of events, and the results API. Its state is owned by subsystems (`parts`:
//! `core`, `objects`, `idle`, `net`, `stats`, `run`); this file reads and writes all of
//! them. The machinery lives in child modules, each adding methods to `Simulation`:
//!
//! * `parts` — the subsystems, their fields and their construction;
//! * `queue` — `EventQueue`, the one order of all pending events: `(time, seq)`, the heap with
//!   its one-entry cache, the per-CPU segment-completion slots (`crate::seg_timers`);
//! * `wakeup` — `try_to_wake_up` through `enqueue_arrival`, and `wakeup_preempt`;
//! * `switch` — `schedule` .. `switch_to`, idle entry and exit;
//! * `interp` — the op interpreter (`step_task`) and what a step's outcome does, with the
//!   channel ops in `interp_chan` and the synchronisation ops in `interp_sync`;
//! * `tick` — the scheduler tick and the balancer's calls; `active` — active balancing;
//! * `lifecycle` — fork and exit; `util_init` — a new task's initial utilisation;
//! * `accounting` — PELT bookkeeping, busy/idle time, segment timing, final counters;
//! * `cost` — the per-distance cost arithmetic; `invariants` — the invariant checker;
//! * `schedstats` — the `/proc/schedstat` counters and the time budget's end-of-run counters.
//!
//! Events are ordered by `(time, sequence)`: equal times run in the order they were
//! scheduled, which makes every run a pure function of (topology, profile, config, policy,
//! balancer, workload, seed). Stale events (a segment that was preempted, a tick of a CPU
//! that went idle) are dropped on pop by generation counters.
//!
//! One wakeup, end to end (see ARCHITECTURE.md):
//! `Op` wakes `p` → `Simulation::try_to_wake_up` → policy `select_task_rq` (read-only view)
//! → the search and wake costs, returned as a `WakeCost` and charged to the waker's op → chosen CPU counts the task at once
//! (`pending`) → arrival after the IPI / wakelist delay → enqueue with `place_entity` →
//! idle exit latency or a wakeup-preemption check → the task runs, paying context-switch,
//! cache-refetch and data-transfer costs.

use crate::balance::{BalanceOut, Balancer};
use crate::config::SchedConfig;
use crate::counters::Counters;
use crate::policy::{Hints, LlcHints, PlacementPolicy, SchedView, WakeFlags, wake_flags};
use crate::profile::MachineProfile;
use crate::seg_timers;
use crate::state::{CpuMode, TaskState, WaitOn};
use crate::task::{TaskId, Workload};
use crate::time::Time;
use hdrhistogram::Histogram;
use schedlab_topo::{CpuId, Topology};
use schedlab_trace::Trace;
use std::sync::Arc;

mod accounting;
// Active balancing (the stopper pushing a possibly running task).
mod active;
pub(crate) mod contention;
mod cost;
mod interp;
mod interp_chan;
mod interp_sync;
mod invariants;
mod lifecycle;
// The subsystems that own the state.
mod parts;
mod queue;
// The /proc/schedstat counters and the time budget's end-of-run counters.
mod schedstats;
mod softirq;
mod switch;
mod tcp_ack;
mod tick;
// The initial utilisation of a forked task (post_init_entity_util_avg).
mod util_init;
pub(crate) mod wakegraph;
mod wakeup;

use parts::{Core, Idle, Net, Objects, RunState, Stats};
use queue::{Event, EventQueue};

/// Options of one run.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Run seed; every random stream derives from it.
    pub seed: u64,
    /// Record a trace of scheduler events.
    pub trace: bool,
    /// Check all invariants after every event (slow; tests).
    pub check_invariants: bool,
    /// Stop after this many events (a guard for runaway workloads).
    pub max_events: Option<u64>,
    /// Stop at this simulated time even if the workload wants to go on.
    pub time_limit_ns: Option<Time>,
    /// Where the run publishes its simulated time every 65,536 events, for a progress
    /// display; the simulation never reads it, so results do not depend on it.
    pub progress: Option<&'static std::sync::atomic::AtomicU64>,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: 1,
            trace: false,
            check_invariants: false,
            max_events: None,
            time_limit_ns: None,
            progress: None,
        }
    }
}

/// Why a workload cannot run on a machine ([`Simulation::new`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The workload itself is malformed (what `Workload::validate` found).
    #[error("{0}")]
    Workload(String),
    /// A task's affinity mask is empty or sized for another machine.
    #[error("task '{comm}': affinity {affinity} is empty or sized for another machine")]
    Affinity {
        /// The task's command name.
        comm: String,
        /// The mask, as written.
        affinity: String,
    },
    /// A task's home node does not exist on the machine.
    #[error("task '{comm}': home node {node} does not exist ({nr_nodes} nodes)")]
    HomeNode {
        /// The task's command name.
        comm: String,
        /// The node asked for.
        node: usize,
        /// The machine's nodes.
        nr_nodes: usize,
    },
}

/// For callers that report errors as text: the error's message.
impl From<SimError> for String {
    fn from(e: SimError) -> String {
        e.to_string()
    }
}

/// Why a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum EndReason {
    /// Every task exited.
    AllExited,
    /// The workload's duration (or the time limit) was reached.
    TimeUp,
    /// The event limit was reached.
    EventLimit,
    /// No task can make progress: each entry names a blocked task and what it waits for.
    Deadlock(Vec<String>),
}

/// A simulated machine running one workload under one policy. Its state is owned by
/// subsystems (`parts.rs`), each file of `sim/` naming those it reads and writes.
pub struct Simulation {
    /// The machine and its scheduler state (what a [`SchedView`] borrows).
    pub(crate) core: Core,
    /// The placement policy (`select_task_rq`).
    policy: Box<dyn PlacementPolicy>,
    /// The load balancer.
    balancer: Box<dyn Balancer>,
    /// The policy's and balancer's writable hints (per task, LLC and CPU).
    pub(crate) hints: Hints,
    /// The balancer's answer, reused across calls.
    balance_out: BalanceOut,
    /// Every pending event, in `(time, seq)` order (`queue.rs`).
    events: EventQueue,
    /// The workload being run (kernel threads' specs are appended to it).
    workload: Workload,
    /// What the tasks block on and record into.
    objects: Objects,
    /// The cpuidle governors and the sleep timers they see.
    idle: Idle,
    /// The loopback softirq and TCP ACK state.
    net: Net,
    /// What the run reports.
    stats: Stats,
    /// The run's options, random streams, liveness and end.
    run: RunState,
}

impl Simulation {
    /// Builds a machine ready to run `workload`. Errors name what is wrong with the workload.
    pub fn new(
        topo: Arc<Topology>,
        profile: MachineProfile,
        cfg: SchedConfig,
        policy: Box<dyn PlacementPolicy>,
        balancer: Box<dyn Balancer>,
        workload: Workload,
        opts: SimOptions,
    ) -> Result<Self, SimError> {
        workload.validate().map_err(SimError::Workload)?;
        for s in &workload.specs {
            if let Some(a) = &s.affinity
                && (a.nr_cpus() != topo.nr_cpus() || a.is_empty())
            {
                return Err(SimError::Affinity {
                    comm: s.comm.clone(),
                    affinity: a.to_string(),
                });
            }
            if let Some(n) = s.home_node
                && n >= topo.nr_nodes()
            {
                return Err(SimError::HomeNode {
                    comm: s.comm.clone(),
                    node: n,
                    nr_nodes: topo.nr_nodes(),
                });
            }
        }
        let n = topo.nr_cpus();
        let hints = Hints {
            task: Vec::new(),
            llc: (0..topo.nr_llcs())
                .map(|i| LlcHints {
                    has_idle_cores: true,
                    nr_idle_scan: topo.llcs()[i].count() as u32,
                    avg_scan_cost: 0.0,
                    // Every CPU starts idle.
                    idle_cpus: topo.llcs()[i].clone(),
                })
                .collect(),
            cpu: vec![Default::default(); n],
        };
        let nr_idle_states = profile.wakeup.idle_states.len();
        let syscall_ns = profile.cpu.syscall_ns;
        let mut sim = Simulation {
            core: Core::new(topo, profile, cfg),
            policy,
            balancer,
            hints,
            balance_out: BalanceOut::default(),
            events: EventQueue::new(n),
            objects: Objects::new(&workload),
            idle: Idle::new(n, nr_idle_states),
            net: Net {
                softirq: softirq::Softirqs::new(n, workload.specs.len()),
                tcp_ack: Vec::new(),
                in_softirq: false,
            },
            stats: Stats::new(n, opts.trace),
            run: RunState::new(opts, syscall_ns),
            workload,
        };
        let limit = match (sim.workload.duration_ns, sim.run.opts.time_limit_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(t) = limit {
            sim.events.push(t, Event::Stop);
        }
        Ok(sim)
    }

    /// Arms `cpu`'s segment-completion event at `due`; the CPU records the live key.
    fn arm_seg_done(&mut self, cpu: CpuId, due: Time) {
        self.core.cpus[cpu].seg_key = self.events.arm_seg_done(cpu, due);
    }

    #[inline]
    fn view(&self) -> SchedView<'_> {
        self.core.view()
    }

    /// Runs to completion (all tasks exited, time up, deadlock or event limit).
    pub fn run(&mut self) -> EndReason {
        if !self.run.ran {
            self.run.ran = true;
            // Pre-NOHZ kernels tick on every CPU, idle or not, so idle CPUs balance too.
            if self.balancer.wants_idle_ticks() {
                for cpu in CpuId::range(self.core.cpus.len()) {
                    self.arm_tick(cpu);
                }
            }
            let initial = self.workload.initial.clone();
            for spec in initial {
                self.create_task(spec, None, CpuId::new(0));
            }
        }
        while self.run.end.is_none() {
            let Some(e) = self.events.pop() else {
                self.run.end = Some(if self.run.live == 0 {
                    EndReason::AllExited
                } else {
                    self.deadlock_report()
                });
                break;
            };
            debug_assert!(e.time() >= self.core.now, "time went backwards");
            self.core.now = e.time();
            self.stats.counters.events += 1;
            self.stats.hash = (self.stats.hash ^ e.time() ^ e.ev.tag().rotate_left(17))
                .wrapping_mul(0x0100_0000_01b3);
            self.dispatch(e.ev);
            if self.stats.counters.events & 0xffff == 0
                && let Some(p) = self.run.opts.progress
            {
                p.store(self.core.now, std::sync::atomic::Ordering::Relaxed);
            }
            if let Some(cpu) = self.events.take_fired() {
                // The handler armed no new segment (the CPU idled or switched away).
                self.events.rearm_fired(self.core.cpus[cpu].seg_key);
            }
            if self.run.opts.check_invariants
                && let Err(msg) = self.check_invariants()
            {
                panic!(
                    "invariant violated at t={} after {:?}: {msg}",
                    self.core.now, e.ev
                );
            }
            if self.run.live == 0 && self.run.end.is_none() {
                self.run.end = Some(EndReason::AllExited);
            } else if self.run.end.is_none()
                && self.run.nr_active == 0
                && self.run.nr_timers == 0
                && self.run.live > 0
            {
                self.run.end = Some(self.deadlock_report());
            }
            if let Some(m) = self.run.opts.max_events
                && self.stats.counters.events >= m
                && self.run.end.is_none()
            {
                self.run.end = Some(EndReason::EventLimit);
            }
        }
        self.finish_accounting();
        self.finish_schedstat();
        self.run.end.clone().unwrap_or(EndReason::AllExited)
    }

    fn deadlock_report(&self) -> EndReason {
        let names: Vec<String> = self
            .workload
            .channels
            .iter()
            .map(|c| c.name.clone())
            .collect();
        let mut v = Vec::new();
        for (i, t) in self.core.tasks.iter().enumerate() {
            if t.spec >= self.net.softirq.kthread_base {
                continue;
            }
            if let TaskState::Sleeping(w) = t.state {
                v.push(format!(
                    "{} (task {i}) waits for {}",
                    self.workload.specs[t.spec].comm,
                    w.describe(&names)
                ));
            }
        }
        EndReason::Deadlock(v)
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::SegDone { cpu } => {
                let cpu = CpuId::new(cpu as usize);
                let fired = self.events.seg_slot(cpu);
                if fired != self.core.cpus[cpu].seg_key || self.core.cpus[cpu].curr.is_none() {
                    // Superseded (the CPU idled, or started an earlier segment): put the
                    // live key, if any, in the slot.
                    self.events.rearm_fired(self.core.cpus[cpu].seg_key);
                    return;
                }
                if self.core.now < self.core.cpus[cpu].seg_due {
                    // Slowed down (or replaced by a later segment) since it was armed: fire
                    // again when really due.
                    let key = self.events.seg_key_at(self.core.cpus[cpu].seg_due);
                    self.core.cpus[cpu].seg_key = key;
                    self.events.rearm_fired(key);
                    return;
                }
                self.core.cpus[cpu].seg_key = seg_timers::IDLE;
                self.events.set_fired(cpu);
                let t = self.core.cpus[cpu].curr.unwrap_or_default();
                let c = &self.core.cpus[cpu];
                self.stats.smt_stretch += (self.core.now - c.seg_start) as f64 * (1.0 - c.speed);
                self.core.tasks[t].seg_left = 0.0;
                self.core.cpus[cpu].seg_start = self.core.now;
                self.continue_task(cpu);
            }
            Event::Tick { cpu, g_n } => self.tick(CpuId::new(cpu as usize), g_n),
            Event::Arrive { task, cpu, flags } => self.arrive(
                TaskId::new(task as usize),
                CpuId::new(cpu as usize),
                WakeFlags::from_bits_retain(flags),
            ),
            Event::CpuReady { cpu, g_n } => {
                let cpu = CpuId::new(cpu as usize);
                if self.core.cpus[cpu].exit_gen != g_n {
                    return;
                }
                if let CpuMode::Exiting { .. } = self.core.cpus[cpu].mode {
                    self.schedule(cpu, None);
                }
            }
            Event::Timer { task, g_n } => {
                let t = TaskId::new(task as usize);
                if self.core.tasks[t].timer_gen == g_n
                    && self.core.tasks[t].state == TaskState::Sleeping(WaitOn::Timer)
                {
                    self.run.nr_timers -= 1;
                    self.objects.token[t] = true;
                    let cpu = self.core.tasks[t].cpu;
                    // A timer wakeup has no waker task to charge.
                    let _ = self.try_to_wake_up(t, None, cpu, wake_flags::TTWU, 0.0);
                }
            }
            Event::DelayedAck { ch, g_n } => self.tcp_delack_timer(ch as usize, g_n),
            Event::Stop => self.run.end = Some(EndReason::TimeUp),
        }
    }

    // ----------------------------------------------------------------------------------
    // Results
    // ----------------------------------------------------------------------------------

    /// Counters of the run (final after [`Simulation::run`]).
    pub fn counters(&self) -> &Counters {
        &self.stats.counters
    }
    /// The placement hints as the run left them (what the engine and the policy keep
    /// between decisions), for tests of the bookkeeping.
    pub fn hints(&self) -> &Hints {
        &self.hints
    }

    /// The run's `/proc/schedstat` text (version 15; the timestamp in jiffies of the
    /// config's tick).
    pub fn schedstat_text(&self) -> String {
        self.stats
            .counters
            .schedstat
            .to_proc(self.core.now, self.core.cfg.tunables.tick_ns())
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.core.now
    }
    /// Value of a workload counter by index.
    pub fn user_counter(&self, id: usize) -> f64 {
        self.objects.user_counters[id]
    }
    /// A workload histogram by index.
    pub fn user_hist(&self, id: usize) -> &Histogram<u64> {
        &self.objects.hists[id]
    }
    /// Messages delivered so far on each declared channel.
    pub fn channel_delivered(&self, ch: usize) -> u64 {
        self.objects.channels[ch].delivered
    }
    /// Messages still queued on a channel.
    pub fn channel_backlog(&self, ch: usize) -> usize {
        self.objects.channels[ch].queue.len()
    }
    /// The workload being run.
    pub fn workload(&self) -> &Workload {
        &self.workload
    }
    /// Largest number of pending events seen (a speed diagnostic).
    pub fn max_queue_len(&self) -> usize {
        self.events.max_len()
    }
    /// A hash of the whole event stream (determinism checks).
    pub fn event_hash(&self) -> u64 {
        self.stats.hash
    }
    /// Takes the recorded trace (when `SimOptions::trace` was set).
    pub fn take_trace(&mut self) -> Option<Trace> {
        self.stats.trace.take()
    }
    /// The policy's display name.
    pub fn policy_name(&self) -> String {
        self.policy.name()
    }
    /// Number of tasks ever created.
    pub fn nr_tasks(&self) -> usize {
        self.core.tasks.len()
    }
    /// Per-task statistics: (comm, cpu time, run delay, voluntary, involuntary, migrations),
    /// of the workload's tasks (kernel threads such as `ksoftirqd` are left out).
    pub fn task_stats(&self) -> Vec<TaskStat> {
        self.core
            .tasks
            .iter()
            .filter(|t| t.spec < self.net.softirq.kthread_base)
            .map(|t| TaskStat {
                comm: self.workload.specs[t.spec].comm.clone(),
                sum_exec_ns: t.sum_exec,
                user_ns: t.user_ns.round() as u64,
                run_delay_ns: t.run_delay_ns,
                nr_voluntary: t.nr_voluntary,
                nr_involuntary: t.nr_involuntary,
                nr_migrations: t.nr_migrations,
                exited: t.state == TaskState::Dead,
            })
            .collect()
    }
}

/// Per-task statistics at the end of a run.
#[derive(Clone, Debug)]
pub struct TaskStat {
    /// Command name.
    pub comm: String,
    /// CPU time consumed, ns.
    pub sum_exec_ns: u64,
    /// The user-mode part of `sum_exec_ns` (compute ops with their remote-memory slowdown,
    /// and working-set refetches; at full speed, so SMT sharing is not in it); the rest is
    /// system time.
    pub user_ns: u64,
    /// Time runnable but waiting, ns.
    pub run_delay_ns: u64,
    /// Voluntary context switches.
    pub nr_voluntary: u64,
    /// Involuntary context switches.
    pub nr_involuntary: u64,
    /// Migrations.
    pub nr_migrations: u64,
    /// Whether the task exited.
    pub exited: bool,
}

/// The experiment runner moves simulations across rayon threads: keep `Simulation: Send`.
#[allow(dead_code)]
fn _assert_send() {
    fn is_send<T: Send>() {}
    is_send::<Simulation>();
}
