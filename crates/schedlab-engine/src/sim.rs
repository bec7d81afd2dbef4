//! The discrete-event core: the [`Simulation`] struct, its construction, the run loop and
//! the dispatch of events, and the results API. The machinery lives in child modules, each
//! adding methods to `Simulation`:
//!
//! * `queue` — `EventQueue`, the one order of all pending events: `(time, seq)`, the heap with
//!   its one-entry cache, the per-CPU segment-completion slots (`crate::seg_timers`);
//! * `wakeup` — `try_to_wake_up` through `enqueue_arrival`, and `wakeup_preempt`;
//! * `switch` — `schedule` .. `switch_to`, idle entry and exit;
//! * `interp` — the op interpreter (`step_task`) and what a step's outcome does;
//! * `tick` — the scheduler tick and the balancer's calls; `active` — active balancing;
//! * `lifecycle` — fork and exit; `util_init` — a new task's initial utilisation;
//! * `accounting` — PELT bookkeeping, busy/idle time, segment timing, final counters;
//! * `cost` — the per-distance cost arithmetic; `invariants` — the invariant checker.
//!
//! Events are ordered by `(time, sequence)`: equal times run in the order they were
//! scheduled, which makes every run a pure function of (topology, profile, config, policy,
//! balancer, workload, seed). Stale events (a segment that was preempted, a tick of a CPU
//! that went idle) are dropped on pop by generation counters.
//!
//! One wakeup, end to end (see ARCHITECTURE.md):
//! `Op` wakes `p` → `Simulation::try_to_wake_up` → policy `select_task_rq` (read-only view)
//! → search and wake costs charged to the waker → chosen CPU counts the task at once
//! (`pending`) → arrival after the IPI / wakelist delay → enqueue with `place_entity` →
//! idle exit latency or a wakeup-preemption check → the task runs, paying context-switch,
//! cache-refetch and data-transfer costs.

use crate::balance::{BalanceOut, Balancer};
use crate::config::SchedConfig;
use crate::counters::Counters;
use crate::ipc::{Barrier, Channel, Futex, Mutex};
use crate::pelt::Signal;
use crate::policy::{Hints, LlcHints, PlacementPolicy, SchedView, WakeFlags, wake_flags};
use crate::profile::MachineProfile;
use crate::rng::{SimRng, Stream, stream};
use crate::rq::RunQueue;
use crate::seg_timers;
use crate::state::{Cpu, CpuMode, Task, TaskState, WaitOn};
use crate::task::{TaskId, Workload};
use crate::time::Time;
use hdrhistogram::Histogram;
use schedlab_topo::{CpuId, SchedDomains, Topology};
use schedlab_trace::Trace;
use std::sync::Arc;

/// The read-only view a policy or balancer gets, borrowing only the fields it reads. A macro,
/// not a method, so a caller can hold it while it borrows `self.policy` or `self.balancer`
/// mutably (a method would borrow all of `self`).
macro_rules! sched_view {
    ($sim:expr) => {
        SchedView {
            now: $sim.now,
            topo: &$sim.topo,
            domains: &$sim.domains,
            cpus: &$sim.cpus,
            tasks: &$sim.tasks,
            cfg: &$sim.cfg,
            profile: &$sim.profile,
            nr_overloaded: $sim.nr_overloaded,
        }
    };
}

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
mod queue;
mod softirq;
mod switch;
mod tcp_ack;
mod tick;
// The initial utilisation of a forked task (post_init_entity_util_avg).
mod util_init;
pub mod wakegraph;
mod wakeup;

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

/// A simulated machine running one workload under one policy.
pub struct Simulation {
    pub(crate) topo: Arc<Topology>,
    pub(crate) domains: Arc<SchedDomains>,
    pub(crate) profile: MachineProfile,
    pub(crate) cfg: SchedConfig,
    pub(crate) factor: u64,
    policy: Box<dyn PlacementPolicy>,
    balancer: Box<dyn Balancer>,
    pub(crate) now: Time,
    /// Every pending event, in `(time, seq)` order (`queue.rs`).
    events: EventQueue,
    pub(crate) cpus: Vec<Cpu>,
    pub(crate) tasks: Vec<Task>,
    pub(crate) hints: Hints,
    workload: Workload,
    channels: Vec<Channel>,
    futexes: Vec<Futex>,
    mutexes: Vec<Mutex>,
    rwlocks: Vec<crate::rwlock::RwLock>,
    barriers: Vec<Barrier>,
    lists: Vec<Vec<TaskId>>,
    user_counters: Vec<f64>,
    hists: Vec<Histogram<u64>>,
    global_slots: Vec<Time>,
    rng: SimRng,
    noise: SimRng,
    counters: Counters,
    trace: Option<Trace>,
    hash: u64,
    live: usize,
    nr_active: usize,
    nr_timers: usize,
    nr_idle_cpus: usize,
    nr_waiting: usize,
    pub(crate) nr_overloaded: usize,
    core_busy: Vec<u8>,
    smt: bool,
    /// SMT siblings of each CPU, itself excluded.
    smt_sibs: Vec<Vec<CpuId>>,
    place_steps: [u64; 16],
    place_affine: [u64; 16],
    mig_levels: [u64; 16],
    iw_last: Time,
    executing: Option<CpuId>,
    /// A wakeup is being issued from NET_RX softirq context (`in_serving_softirq()`).
    in_softirq: bool,
    /// Softirq backlogs and `ksoftirqd` threads (`sim/softirq.rs`).
    softirq: softirq::Softirqs,
    /// Each CPU's cpuidle governor data (`idle.rs`).
    idle_gov: Vec<crate::idle::IdleGov>,
    /// Idle exits by state index.
    idle_state_exits: Vec<u64>,
    /// Sleep timers armed on each CPU, `(expiry, task, timer_gen)`, earliest first; stale
    /// entries are dropped when they surface (`next_timer_ns`).
    cpu_timers: Vec<std::collections::BinaryHeap<std::cmp::Reverse<(Time, u32, u32)>>>,
    /// ACK state of each TCP channel's receiving socket (`sim/tcp_ack.rs`).
    tcp_ack: Vec<tcp_ack::AckState>,
    token: Vec<bool>,
    /// Ops started so far: a wakeup or fork whose wakee preempts another CPU at once runs
    /// that CPU's next op inside the current one, which this count reveals (`wake_from`).
    ops_started: u64,
    /// Wake costs incurred outside an op (an exit's wakeup of its parent, the search of an
    /// exec that moves the task): the next op drops them, the next `ksoftirqd` step pays
    /// them, and an exit's wakee waits behind them.
    unpaid: f64,
    balance_out: BalanceOut,
    opts: SimOptions,
    end: Option<EndReason>,
    tgids: Vec<(u32, u32)>,
    ran: bool,
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
    ) -> Result<Self, String> {
        workload.validate()?;
        for s in &workload.specs {
            if let Some(a) = &s.affinity
                && (a.nr_cpus() != topo.nr_cpus() || a.is_empty())
            {
                return Err(format!(
                    "task '{}': affinity {a} is empty or sized for another machine",
                    s.comm
                ));
            }
            if let Some(n) = s.home_node
                && n >= topo.nr_nodes()
            {
                return Err(format!(
                    "task '{}': home node {n} does not exist ({} nodes)",
                    s.comm,
                    topo.nr_nodes()
                ));
            }
        }
        let n = topo.nr_cpus();
        let domains = Arc::new(SchedDomains::build(&topo, cfg.domain_era));
        let factor = cfg.tunables.factor(n);
        let migration_cost = cfg.tunables.migration_cost_ns;
        let cpus = (0..n)
            .map(|_| Cpu {
                curr: None,
                mode: CpuMode::Idle {
                    since: 0,
                    state: 0,
                    hold: 0,
                },
                rq: RunQueue::default(),
                nr_running: 0,
                pending: 0,
                need_resched: false,
                seg_key: seg_timers::IDLE,
                seg_start: 0,
                seg_due: 0,
                speed: 1.0,
                tick_armed: false,
                tick_gen: 0,
                exit_gen: 0,
                last_mode_change: 0,
                busy_ns: 0,
                idle_ns: 0,
                prev_mm: None,
                load: Signal::default(),
                util: Signal::default(),
                runnable: Signal::default(),
                runnable_weight: 0,
                avg_idle: 2 * migration_cost,
                idle_stamp: Some(0),
                max_idle_balance_cost: migration_cost,
                cpu_load_avg: Default::default(),
                nr_switches: 0,
                nr_delayed: 0,
            })
            .collect();
        let hints = Hints {
            task: Vec::new(),
            llc: vec![
                LlcHints {
                    has_idle_cores: true,
                    nr_idle_scan: 0,
                    avg_scan_cost: 0.0
                };
                topo.nr_llcs()
            ]
            .into_iter()
            .enumerate()
            .map(|(i, mut h)| {
                h.nr_idle_scan = topo.llcs()[i].count() as u32;
                h
            })
            .collect(),
            cpu: vec![Default::default(); n],
        };
        let counters = Counters {
            busy_ns: vec![0; n],
            idle_ns: vec![0; n],
            ..Default::default()
        };
        let trace = opts.trace.then(|| Trace {
            nr_cpus: n as u32,
            threads: Vec::new(),
            events: Vec::new(),
        });
        let hist = || Histogram::new_with_bounds(1, 600_000_000_000, 3).expect("static bounds");
        let profile_states = profile.wakeup.idle_states.len();
        let mut sim = Simulation {
            domains,
            profile,
            factor,
            policy,
            balancer,
            now: 0,
            events: EventQueue::new(n),
            cpus,
            tasks: Vec::new(),
            hints,
            channels: workload
                .channels
                .iter()
                .map(|c| Channel::new(c.kind))
                .collect(),
            futexes: vec![Futex::default(); workload.futexes],
            mutexes: vec![Mutex::default(); workload.mutexes],
            rwlocks: workload
                .rwlocks
                .iter()
                .map(|&w| crate::rwlock::RwLock::new(w))
                .collect(),
            barriers: workload
                .barriers
                .iter()
                .map(|&p| Barrier {
                    parties: p,
                    waiting: Vec::new(),
                })
                .collect(),
            lists: vec![Vec::new(); workload.lists],
            user_counters: vec![0.0; workload.counters.len()],
            hists: (0..workload.hists.len()).map(|_| hist()).collect(),
            global_slots: vec![0; workload.global_slots],
            rng: stream(opts.seed, Stream::Workload),
            noise: stream(opts.seed, Stream::Machine),
            counters,
            trace,
            hash: 0xcbf2_9ce4_8422_2325,
            live: 0,
            nr_active: 0,
            nr_timers: 0,
            nr_idle_cpus: n,
            nr_waiting: 0,
            nr_overloaded: 0,
            core_busy: vec![0; topo.nr_cores()],
            smt: topo.smt_present(),
            smt_sibs: topo
                .cpu_ids()
                .map(|c| topo.smt_siblings(c).iter().filter(|&s| s != c).collect())
                .collect(),
            place_steps: [0; 16],
            place_affine: [0; 16],
            mig_levels: [0; 16],
            iw_last: 0,
            executing: None,
            in_softirq: false,
            softirq: softirq::Softirqs::new(n, workload.specs.len()),
            idle_gov: vec![Default::default(); n],
            idle_state_exits: vec![0; profile_states],
            cpu_timers: vec![Default::default(); n],
            tcp_ack: Vec::new(),
            token: Vec::new(),
            ops_started: 0,
            unpaid: 0.0,
            balance_out: BalanceOut::default(),
            opts,
            end: None,
            tgids: Vec::new(),
            ran: false,
            workload,
            topo,
            cfg,
        };
        let limit = match (sim.workload.duration_ns, sim.opts.time_limit_ns) {
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
        self.cpus[cpu].seg_key = self.events.arm_seg_done(cpu, due);
    }

    fn view(&self) -> SchedView<'_> {
        sched_view!(self)
    }

    /// Runs to completion (all tasks exited, time up, deadlock or event limit).
    pub fn run(&mut self) -> EndReason {
        if !self.ran {
            self.ran = true;
            // Pre-NOHZ kernels tick on every CPU, idle or not, so idle CPUs balance too.
            if self.balancer.wants_idle_ticks() {
                for cpu in CpuId::range(self.cpus.len()) {
                    self.arm_tick(cpu);
                }
            }
            let initial = self.workload.initial.clone();
            for spec in initial {
                self.create_task(spec, None, CpuId::new(0));
            }
        }
        while self.end.is_none() {
            let Some(e) = self.events.pop() else {
                self.end = Some(if self.live == 0 {
                    EndReason::AllExited
                } else {
                    self.deadlock_report()
                });
                break;
            };
            debug_assert!(e.time() >= self.now, "time went backwards");
            self.now = e.time();
            self.counters.events += 1;
            self.hash =
                (self.hash ^ e.time() ^ e.ev.tag().rotate_left(17)).wrapping_mul(0x0100_0000_01b3);
            self.dispatch(e.ev);
            if self.counters.events & 0xffff == 0
                && let Some(p) = self.opts.progress
            {
                p.store(self.now, std::sync::atomic::Ordering::Relaxed);
            }
            if let Some(cpu) = self.events.take_fired() {
                // The handler armed no new segment (the CPU idled or switched away).
                self.events.rearm_fired(self.cpus[cpu].seg_key);
            }
            if self.opts.check_invariants
                && let Err(msg) = self.check_invariants()
            {
                panic!(
                    "invariant violated at t={} after {:?}: {msg}",
                    self.now, e.ev
                );
            }
            if self.live == 0 && self.end.is_none() {
                self.end = Some(EndReason::AllExited);
            } else if self.end.is_none()
                && self.nr_active == 0
                && self.nr_timers == 0
                && self.live > 0
            {
                self.end = Some(self.deadlock_report());
            }
            if let Some(m) = self.opts.max_events
                && self.counters.events >= m
                && self.end.is_none()
            {
                self.end = Some(EndReason::EventLimit);
            }
        }
        self.finish_accounting();
        self.end.clone().unwrap_or(EndReason::AllExited)
    }

    fn deadlock_report(&self) -> EndReason {
        let names: Vec<String> = self
            .workload
            .channels
            .iter()
            .map(|c| c.name.clone())
            .collect();
        let mut v = Vec::new();
        for (i, t) in self.tasks.iter().enumerate() {
            if t.spec >= self.softirq.kthread_base {
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
                if fired != self.cpus[cpu].seg_key || self.cpus[cpu].curr.is_none() {
                    // Superseded (the CPU idled, or started an earlier segment): put the
                    // live key, if any, in the slot.
                    self.events.rearm_fired(self.cpus[cpu].seg_key);
                    return;
                }
                if self.now < self.cpus[cpu].seg_due {
                    // Slowed down (or replaced by a later segment) since it was armed: fire
                    // again when really due.
                    let key = self.events.seg_key_at(self.cpus[cpu].seg_due);
                    self.cpus[cpu].seg_key = key;
                    self.events.rearm_fired(key);
                    return;
                }
                self.cpus[cpu].seg_key = seg_timers::IDLE;
                self.events.set_fired(cpu);
                let t = self.cpus[cpu].curr.unwrap_or_default();
                self.tasks[t].seg_left = 0.0;
                self.cpus[cpu].seg_start = self.now;
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
                if self.cpus[cpu].exit_gen != g_n {
                    return;
                }
                if let CpuMode::Exiting { .. } = self.cpus[cpu].mode {
                    self.schedule(cpu, None);
                }
            }
            Event::Timer { task, g_n } => {
                let t = TaskId::new(task as usize);
                if self.tasks[t].timer_gen == g_n
                    && self.tasks[t].state == TaskState::Sleeping(WaitOn::Timer)
                {
                    self.nr_timers -= 1;
                    self.token[t] = true;
                    let cpu = self.tasks[t].cpu;
                    // A timer wakeup has no waker task to charge.
                    let _ = self.try_to_wake_up(t, None, cpu, wake_flags::TTWU, 0.0);
                }
            }
            Event::DelayedAck { ch, g_n } => self.tcp_delack_timer(ch as usize, g_n),
            Event::Stop => self.end = Some(EndReason::TimeUp),
        }
    }

    // ----------------------------------------------------------------------------------
    // Results
    // ----------------------------------------------------------------------------------

    /// Counters of the run (final after [`Simulation::run`]).
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }
    /// Value of a workload counter by index.
    pub fn user_counter(&self, id: usize) -> f64 {
        self.user_counters[id]
    }
    /// A workload histogram by index.
    pub fn user_hist(&self, id: usize) -> &Histogram<u64> {
        &self.hists[id]
    }
    /// Messages delivered so far on each declared channel.
    pub fn channel_delivered(&self, ch: usize) -> u64 {
        self.channels[ch].delivered
    }
    /// Messages still queued on a channel.
    pub fn channel_backlog(&self, ch: usize) -> usize {
        self.channels[ch].queue.len()
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
        self.hash
    }
    /// Takes the recorded trace (when `SimOptions::trace` was set).
    pub fn take_trace(&mut self) -> Option<Trace> {
        self.trace.take()
    }
    /// The policy's display name.
    pub fn policy_name(&self) -> String {
        self.policy.name()
    }
    /// Number of tasks ever created.
    pub fn nr_tasks(&self) -> usize {
        self.tasks.len()
    }
    /// Per-task statistics: (comm, cpu time, run delay, voluntary, involuntary, migrations),
    /// of the workload's tasks (kernel threads such as `ksoftirqd` are left out).
    pub fn task_stats(&self) -> Vec<TaskStat> {
        self.tasks
            .iter()
            .filter(|t| t.spec < self.softirq.kthread_base)
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
