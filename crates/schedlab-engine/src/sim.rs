//! The discrete-event core: one event queue, one clock, the wakeup path, context switches,
//! ticks, idle states and the task interpreter.
//!
//! Events are ordered by `(time, sequence)`: equal times run in the order they were
//! scheduled, which makes every run a pure function of (topology, profile, config, policy,
//! balancer, workload, seed). Stale events (a segment that was preempted, a tick of a CPU
//! that went idle) are dropped on pop by generation counters.
//!
//! One wakeup, end to end (see ARCHITECTURE.md):
//! `Op` wakes `p` → [`Simulation::try_to_wake_up`] → policy `select_task_rq` (read-only view)
//! → search and wake costs charged to the waker → chosen CPU counts the task at once
//! (`pending`) → arrival after the IPI / wakelist delay → enqueue with `place_entity` →
//! idle exit latency or a wakeup-preemption check → the task runs, paying context-switch,
//! cache-refetch and data-transfer costs.

use crate::balance::{BalanceOut, Balancer};
use crate::config::{ClassKind, SchedConfig};
use crate::counters::Counters;
use crate::dist::Dist;
use crate::fair::RunQueue;
use crate::ipc::{Barrier, Channel, ChannelKind, Futex, Mutex, RecvOutcome, SendOutcome};
use crate::pelt::Signal;
use crate::policy::{
    Affine, Hints, LlcHints, PlacementPolicy, PlacementRecord, SchedView, Step, TaskHints, WakeCtx,
    wake_flags,
};
use crate::profile::{IdleState, MachineProfile};
use crate::rng::{SimRng, Stream, stream};
use crate::seg_timers::{self, SegTimers};
use crate::state::{Cpu, CpuMode, LoopStack, Task, TaskState, WaitOn};
use crate::task::{
    LockRef, Op, Slot, SpecId, TaskId, TaskSpec, WAKE_ALL, Workload, nice_to_weight,
};
use crate::time::Time;
use dary_heap::QuaternaryHeap as BinaryHeap;
use hdrhistogram::Histogram;
use schedlab_topo::{CpuId, CpuSet, DomainLevel, SchedDomains, Topology};
use schedlab_trace::{PrevState, ThreadInfo, Trace, TraceEvent};
use std::cmp::Ordering;
use std::sync::Arc;

// Active balancing (the stopper pushing a possibly running task), kept in its own module.
mod active;
// The initial utilisation of a forked task (post_init_entity_util_avg).
mod util_init;

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
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: 1,
            trace: false,
            check_invariants: false,
            max_events: None,
            time_limit_ns: None,
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// The running segment of `cpu` completes (from the CPU's timer slot, not the heap).
    SegDone { cpu: u32 },
    /// Scheduler tick of `cpu`.
    Tick { cpu: u32, g_n: u32 },
    /// A wakeup in flight reaches its CPU.
    Arrive { task: u32, cpu: u32, flags: u32 },
    /// `cpu` has left its idle state.
    CpuReady { cpu: u32, g_n: u32 },
    /// A sleep/timer of `task` expires.
    Timer { task: u32, g_n: u32 },
    /// The run's time is up.
    Stop,
}

impl Event {
    fn tag(&self) -> u64 {
        match *self {
            Event::SegDone { cpu, .. } => 1 << 40 | cpu as u64,
            Event::Tick { cpu, .. } => 2 << 40 | cpu as u64,
            Event::Arrive { task, cpu, .. } => 3 << 40 | (task as u64) << 16 | cpu as u64,
            Event::CpuReady { cpu, .. } => 4 << 40 | cpu as u64,
            Event::Timer { task, .. } => 5 << 40 | task as u64,
            Event::Stop => 6 << 40,
        }
    }
}

/// The total order of events: time, then the sequence number of scheduling.
#[inline]
fn event_key(time: Time, seq: u64) -> u128 {
    ((time as u128) << 64) | seq as u128
}

/// A queued event. `key` packs `(time, seq)` into one integer so the heap compares once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    key: u128,
    ev: Event,
}

impl Entry {
    fn new(time: Time, seq: u64, ev: Event) -> Self {
        Entry {
            key: event_key(time, seq),
            ev,
        }
    }
    fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
}

impl Ord for Entry {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        // The heap is a max-heap: reverse so the earliest (time, seq) pops first.
        other.key.cmp(&self.key)
    }
}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

enum StepOutcome {
    /// The task has work in `seg_left`.
    Run,
    /// The task blocked.
    Block(WaitOn),
    /// The task exited.
    Exit,
    /// The task yielded.
    Yield,
    /// A preemption is pending at an op boundary.
    Preempt,
    /// exec placement chose another CPU: the running task moves there.
    Migrate(CpuId),
}

/// The idle state a governor with perfect prediction picks after `idle_ns` of idleness.
pub fn idle_state_for(profile: &MachineProfile, idle_ns: u64) -> Option<&IdleState> {
    let states = &profile.wakeup.idle_states;
    states
        .iter()
        .rev()
        .find(|s| s.target_residency_ns <= idle_ns)
        .or(states.first())
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
    queue: BinaryHeap<Entry>,
    /// An event earlier than every event in `queue` (see `push`).
    next_cache: Option<Entry>,
    /// The segment-completion event of every CPU, outside the heap (see `seg_timers`).
    seg_timers: SegTimers,
    /// The CPU whose segment-completion event is being handled; its slot still holds the
    /// fired key until the handler arms the next segment or `run` clears it.
    fired_seg: Option<CpuId>,
    seq: u64,
    pub(crate) cpus: Vec<Cpu>,
    pub(crate) tasks: Vec<Task>,
    pub(crate) hints: Hints,
    workload: Workload,
    channels: Vec<Channel>,
    futexes: Vec<Futex>,
    mutexes: Vec<Mutex>,
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
    max_queue: usize,
    /// SMT siblings of each CPU, itself excluded.
    smt_sibs: Vec<Vec<CpuId>>,
    place_steps: [u64; 16],
    place_affine: [u64; 16],
    mig_levels: [u64; 16],
    iw_last: Time,
    executing: Option<CpuId>,
    op_extra_cost: f64,
    token: Vec<bool>,
    balance_out: BalanceOut,
    opts: SimOptions,
    end: Option<EndReason>,
    tgids: Vec<(u32, u32)>,
    ran: bool,
}

/// Per-byte (or per-line) costs by how far apart two CPUs are.
struct ByDistance {
    same: f64,
    smt: f64,
    llc: f64,
    cross_llc: f64,
    cross_node: f64,
}

/// How far apart two CPUs are, for the per-distance costs.
#[derive(Clone, Copy)]
enum Distance {
    Same,
    Smt,
    Llc,
    CrossLlc,
    /// Another node, at this SLIT distance.
    CrossNode(f64),
}

impl Distance {
    fn of(topo: &Topology, a: CpuId, b: CpuId) -> Distance {
        if a == b {
            Distance::Same
        } else if topo.cpus_share_core(a, b) {
            Distance::Smt
        } else if topo.cpus_share_cache(a, b) {
            Distance::Llc
        } else if topo.cpu(a).node == topo.cpu(b).node {
            Distance::CrossLlc
        } else {
            Distance::CrossNode(topo.cpu_distance(a, b) as f64)
        }
    }
}

impl ByDistance {
    /// The cost at distance `d` (cross-node scaled by the node distance / 20).
    fn at(&self, d: Distance) -> f64 {
        match d {
            Distance::Same => self.same,
            Distance::Smt => self.smt,
            Distance::Llc => self.llc,
            Distance::CrossLlc => self.cross_llc,
            Distance::CrossNode(slit) => self.cross_node * slit / 20.0,
        }
    }
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
                mode: CpuMode::Idle { since: 0 },
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
        let mut sim = Simulation {
            domains,
            profile,
            factor,
            policy,
            balancer,
            now: 0,
            queue: BinaryHeap::new(),
            next_cache: None,
            seg_timers: SegTimers::new(n),
            fired_seg: None,
            seq: 0,
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
            max_queue: 0,
            smt_sibs: (0..n)
                .map(|c| topo.smt_siblings(c).iter().filter(|&s| s != c).collect())
                .collect(),
            place_steps: [0; 16],
            place_affine: [0; 16],
            mig_levels: [0; 16],
            iw_last: 0,
            executing: None,
            op_extra_cost: 0.0,
            token: Vec::new(),
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
            sim.push(t, Event::Stop);
        }
        Ok(sim)
    }

    /// Schedules an event. The queue is a heap with a one-entry cache in front that holds an
    /// event earlier than everything in the heap: the common case of a CPU scheduling its own
    /// next segment then costs no heap operation. The order is exactly the heap's
    /// `(time, seq)` order.
    fn push(&mut self, time: Time, ev: Event) {
        self.seq += 1;
        let e = Entry::new(time, self.seq, ev);
        match self.next_cache {
            // `Entry`'s Ord is reversed for the max-heap: `a > b` means a comes first.
            Some(c) if e > c => {
                self.queue.push(c);
                self.next_cache = Some(e);
            }
            Some(_) => self.queue.push(e),
            None => {
                if self.queue.peek().is_none_or(|h| e > *h) {
                    self.next_cache = Some(e);
                } else {
                    self.queue.push(e);
                }
            }
        }
        self.max_queue = self
            .max_queue
            .max(self.queue.len() + usize::from(self.next_cache.is_some()));
    }

    /// Takes the earliest event: from the heap side, or a CPU's segment-completion slot.
    fn pop(&mut self) -> Option<Entry> {
        let (cpu, key) = self.seg_timers.earliest();
        if key != seg_timers::IDLE {
            let heap_first = match &self.next_cache {
                Some(c) => Some(c.key),
                None => self.queue.peek().map(|e| e.key),
            };
            if heap_first.is_none_or(|h| key < h) {
                let cpu = cpu as u32;
                return Some(Entry {
                    key,
                    ev: Event::SegDone { cpu },
                });
            }
        }
        self.next_cache.take().or_else(|| self.queue.pop())
    }

    /// Arms `cpu`'s segment-completion event at `due` (the old one is superseded).
    fn arm_seg_done(&mut self, cpu: CpuId, due: Time) {
        self.seq += 1;
        let key = event_key(due, self.seq);
        self.cpus[cpu].seg_key = key;
        if self.fired_seg == Some(cpu) {
            self.fired_seg = None;
            self.seg_timers.rearm_winner(key);
        } else if key < self.seg_timers.key(cpu) {
            self.seg_timers.lower(cpu, key);
        }
        // Otherwise the slot holds an earlier, superseded key: it fires as a no-op and
        // re-arms itself with this one.
    }

    fn view(&self) -> SchedView<'_> {
        SchedView {
            now: self.now,
            topo: &self.topo,
            domains: &self.domains,
            cpus: &self.cpus,
            tasks: &self.tasks,
            cfg: &self.cfg,
            profile: &self.profile,
            nr_overloaded: self.nr_overloaded,
        }
    }

    /// Runs to completion (all tasks exited, time up, deadlock or event limit).
    pub fn run(&mut self) -> EndReason {
        if !self.ran {
            self.ran = true;
            // Pre-NOHZ kernels tick on every CPU, idle or not, so idle CPUs balance too.
            if self.balancer.wants_idle_ticks() {
                for cpu in 0..self.cpus.len() {
                    self.arm_tick(cpu);
                }
            }
            let initial = self.workload.initial.clone();
            for spec in initial {
                self.create_task(spec, None, 0);
            }
        }
        while self.end.is_none() {
            let Some(e) = self.pop() else {
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
            if let Some(cpu) = self.fired_seg.take() {
                // The handler armed no new segment (the CPU idled or switched away).
                self.seg_timers.rearm_winner(self.cpus[cpu].seg_key);
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

    fn finish_accounting(&mut self) {
        for cpu in 0..self.cpus.len() {
            self.account_mode(cpu);
        }
        self.flush_iw();
        self.counters.elapsed_ns = self.now;
        self.counters.place_steps = Step::ALL
            .iter()
            .filter(|&&st| self.place_steps[st as usize] > 0)
            .map(|&st| {
                (
                    PlacementRecord::step_name(st).to_string(),
                    self.place_steps[st as usize],
                )
            })
            .collect();
        self.counters.place_affine = Affine::ALL
            .iter()
            .filter(|&&a| self.place_affine[a as usize] > 0)
            .map(|&a| {
                (
                    PlacementRecord::affine_name(a).to_string(),
                    self.place_affine[a as usize],
                )
            })
            .collect();
        self.counters.migrations_by_level = (0..16)
            .filter(|&i| self.mig_levels[i] > 0)
            .map(|i| (level_name(i), self.mig_levels[i]))
            .collect();
        self.counters.run_delay_ns = self.tasks.iter().map(|t| t.run_delay_ns).sum();
        self.counters.busy_ns = self.cpus.iter().map(|c| c.busy_ns).collect();
        self.counters.idle_ns = self.cpus.iter().map(|c| c.idle_ns).collect();
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::SegDone { cpu } => {
                let cpu = cpu as usize;
                let fired = self.seg_timers.key(cpu);
                if fired != self.cpus[cpu].seg_key || self.cpus[cpu].curr.is_none() {
                    // Superseded (the CPU idled, or started an earlier segment): put the
                    // live key, if any, in the slot.
                    self.seg_timers.rearm_winner(self.cpus[cpu].seg_key);
                    return;
                }
                if self.now < self.cpus[cpu].seg_due {
                    // Slowed down (or replaced by a later segment) since it was armed: fire
                    // again when really due.
                    self.seq += 1;
                    let key = event_key(self.cpus[cpu].seg_due, self.seq);
                    self.cpus[cpu].seg_key = key;
                    self.seg_timers.rearm_winner(key);
                    return;
                }
                self.cpus[cpu].seg_key = seg_timers::IDLE;
                self.fired_seg = Some(cpu);
                let t = self.cpus[cpu].curr.unwrap_or(0);
                self.tasks[t].seg_left = 0.0;
                self.cpus[cpu].seg_start = self.now;
                self.continue_task(cpu);
            }
            Event::Tick { cpu, g_n } => self.tick(cpu as usize, g_n),
            Event::Arrive { task, cpu, flags } => self.arrive(task as usize, cpu as usize, flags),
            Event::CpuReady { cpu, g_n } => {
                let cpu = cpu as usize;
                if self.cpus[cpu].exit_gen != g_n {
                    return;
                }
                if let CpuMode::Exiting { .. } = self.cpus[cpu].mode {
                    self.schedule(cpu, None);
                }
            }
            Event::Timer { task, g_n } => {
                let t = task as usize;
                if self.tasks[t].timer_gen == g_n
                    && self.tasks[t].state == TaskState::Sleeping(WaitOn::Timer)
                {
                    self.nr_timers -= 1;
                    self.token[t] = true;
                    let cpu = self.tasks[t].cpu;
                    self.try_to_wake_up(t, None, cpu, wake_flags::TTWU);
                }
            }
            Event::Stop => self.end = Some(EndReason::TimeUp),
        }
    }

    // ----------------------------------------------------------------------------------
    // Task creation and exit
    // ----------------------------------------------------------------------------------

    fn create_task(
        &mut self,
        spec_id: SpecId,
        parent: Option<TaskId>,
        parent_cpu: CpuId,
    ) -> TaskId {
        let spec: &TaskSpec = &self.workload.specs[spec_id];
        let id = self.tasks.len();
        let n = self.topo.nr_cpus();
        let allowed = spec.affinity.clone().unwrap_or_else(|| CpuSet::full(n));
        let pid = id as u32 + 1;
        let mm = match spec.mm {
            None => pid,
            Some(m) => {
                let key = 0x8000_0000 | m;
                if !self.tgids.iter().any(|(k, _)| *k == key) {
                    self.tgids.push((key, pid));
                }
                key
            }
        };
        let (weight, nice) = (nice_to_weight(spec.nice), spec.nice);
        let prev = match parent {
            Some(p) => self.tasks[p].cpu,
            None => parent_cpu,
        };
        let mut vruntime = 0;
        if let Some(p) = parent {
            vruntime = self.tasks[p].vruntime;
        }
        let task = Task {
            spec: spec_id,
            program: spec.program.clone(),
            pc: 0,
            loops: LoopStack::default(),
            state: TaskState::Sleeping(WaitOn::Children),
            cpu: prev,
            weight,
            nice,
            mm,
            nr_allowed: allowed.count() as u32,
            allowed,
            parent,
            live_children: 0,
            waiting_children: false,
            vruntime,
            deadline: vruntime,
            slice: spec.slice_ns.unwrap_or(0),
            vlag: 0,
            protect_until_deadline: None,
            delayed: false,
            sum_exec: 0,
            prev_sum_exec: 0,
            exec_start: self.now,
            custom_slice: spec.slice_ns,
            o1_prio: 120 + nice,
            o1_timeslice_left: 0,
            o1_sleep_avg: 0.0,
            o1_seq: 0,
            load: Signal {
                sum: 0.0,
                last: self.now,
            },
            util: Signal {
                sum: 0.0,
                last: self.now,
            },
            ws_bytes: spec.ws_bytes,
            mem_intensity: spec.mem_intensity,
            home_node: spec.home_node,
            user_ns: 0.0,
            last_ran_cpu: None,
            last_ran_end: self.now,
            seg_left: 0.0,
            spin_left: 0,
            wake_time: None,
            runnable_since: self.now,
            run_delay_ns: 0,
            nr_voluntary: 0,
            nr_involuntary: 0,
            nr_migrations: 0,
            slots: [0; 8],
            last_recv_bytes: 0,
            self_posted: false,
            timer_gen: 0,
            started_at: self.now,
            ran_since_wake: 0,
            avg_overlap: 0,
            last_wakeup_ts: 0,
        };
        // New tasks start with a full load contribution (PELT init: load_avg = weight).
        let mut task = task;
        let full = crate::pelt::divider(self.now);
        task.load.sum = full;
        task.util.sum = full / 2.0;
        self.tasks.push(task);
        self.token.push(false);
        self.hints.task.push(TaskHints::default());
        self.live += 1;
        if let Some(p) = parent {
            self.tasks[p].live_children += 1;
        }
        if let Some(tr) = &mut self.trace {
            let tgid = self
                .tgids
                .iter()
                .find(|(k, _)| *k == mm)
                .map_or(pid, |x| x.1);
            tr.threads.push(ThreadInfo {
                pid,
                tgid,
                comm: spec.comm.clone(),
            });
            if let Some(p) = parent {
                tr.events.push(TraceEvent::ProcessFork {
                    ts_ns: self.now,
                    cpu: prev as u32,
                    parent_pid: p as u32 + 1,
                    child_pid: pid,
                });
            }
        }
        self.policy.task_created(id, parent, &mut self.hints);
        // The new task's CPU starts as the parent's, then wake_up_new_task places it.
        let flags = wake_flags::FORK;
        self.counters.forks += 1;
        let cpu = self.select_cpu(id, parent, prev, flags);
        // Its initial utilisation depends on where it landed (sim/util_init.rs).
        self.tasks[id].util.sum = self.initial_util_sum(id, cpu);
        // Attach the new task's initial load to its CPU.
        self.sync_cpu_pelt(cpu);
        let t = &mut self.tasks[id];
        t.cpu = cpu;
        let (ls, us, w) = (t.load.sum, t.util.sum, t.weight as f64);
        let c = &mut self.cpus[cpu];
        c.load.sum += ls * w;
        c.util.sum += us;
        if let Some(tr) = &mut self.trace {
            tr.events.push(TraceEvent::WakeupNew {
                ts_ns: self.now,
                cpu: prev as u32,
                pid,
                prio: 120 + nice,
                target_cpu: cpu as u32,
            });
        }
        self.tasks[id].state = TaskState::Waking(cpu);
        self.nr_active += 1;
        self.cpus[cpu].pending += 1;
        self.tasks[id].wake_time = Some(self.now);
        self.enqueue_arrival(id, cpu, flags, true);
        id
    }

    fn exit_current(&mut self, cpu: CpuId, t: TaskId) {
        self.update_curr(cpu);
        self.sync_task_pelt(t);
        self.sync_cpu_pelt(cpu);
        self.leave_runnable(cpu, t);
        let w = self.tasks[t].weight;
        let (ls, us) = (self.tasks[t].load.sum, self.tasks[t].util.sum);
        let c = &mut self.cpus[cpu];
        c.load.sum = (c.load.sum - ls * w as f64).max(0.0);
        c.util.sum = (c.util.sum - us).max(0.0);
        self.tasks[t].state = TaskState::Dead;
        self.nr_active -= 1;
        self.live -= 1;
        if let Some(p) = self.tasks[t].parent {
            self.tasks[p].live_children -= 1;
            if self.tasks[p].live_children == 0 && self.tasks[p].waiting_children {
                self.tasks[p].waiting_children = false;
                if self.tasks[p].state == TaskState::Sleeping(WaitOn::Children) {
                    self.token[p] = true;
                    self.try_to_wake_up(p, Some(t), cpu, wake_flags::TTWU | wake_flags::SYNC);
                }
            }
        }
        if let Some(tr) = &mut self.trace {
            tr.events.push(TraceEvent::ProcessExit {
                ts_ns: self.now,
                cpu: cpu as u32,
                pid: t as u32 + 1,
            });
        }
    }

    // ----------------------------------------------------------------------------------
    // PELT bookkeeping
    // ----------------------------------------------------------------------------------

    fn sync_cpu_pelt(&mut self, cpu: CpuId) {
        let now = self.now;
        let c = &mut self.cpus[cpu];
        c.load.advance(now, c.runnable_weight as f64);
        c.util
            .advance(now, if c.curr.is_some() { 1.0 } else { 0.0 });
        c.runnable.advance(now, c.runnable_weight as f64);
    }

    fn sync_task_pelt(&mut self, t: TaskId) {
        let now = self.now;
        let task = &mut self.tasks[t];
        let (runnable, running) = match task.state {
            TaskState::Running(_) => (1.0, 1.0),
            TaskState::Queued(_) => (1.0, 0.0),
            _ if task.delayed => (1.0, 0.0),
            _ => (0.0, 0.0),
        };
        task.load.advance(now, runnable);
        task.util.advance(now, running);
    }

    /// `t` becomes runnable on `cpu`: counts, the instantaneous load and the runnable-load
    /// PELT sum (task and CPU signals must be synced to now).
    fn join_runnable(&mut self, cpu: CpuId, t: TaskId) {
        let w = self.tasks[t].weight;
        let rl = self.tasks[t].load.sum * w as f64;
        let c = &mut self.cpus[cpu];
        c.nr_running += 1;
        if c.nr_running == 2 {
            self.nr_overloaded += 1;
        }
        c.runnable_weight += w;
        c.runnable.sum += rl;
    }

    /// `t` stops being runnable on `cpu` (the reverse of [`Self::join_runnable`]).
    fn leave_runnable(&mut self, cpu: CpuId, t: TaskId) {
        let w = self.tasks[t].weight;
        let rl = self.tasks[t].load.sum * w as f64;
        let c = &mut self.cpus[cpu];
        c.nr_running -= 1;
        if c.nr_running == 1 {
            self.nr_overloaded -= 1;
        }
        c.runnable_weight -= w;
        c.runnable.sum = (c.runnable.sum - rl).max(0.0);
    }

    /// Moves a task's attachment (CPU, PELT contribution, relative vruntime) to `to`.
    fn migrate_task(&mut self, t: TaskId, to: CpuId, by_balance: bool) {
        let from = self.tasks[t].cpu;
        if from == to {
            return;
        }
        self.sync_task_pelt(t);
        self.sync_cpu_pelt(from);
        self.sync_cpu_pelt(to);
        let w = self.tasks[t].weight as f64;
        let (ls, us) = (self.tasks[t].load.sum, self.tasks[t].util.sum);
        {
            let c = &mut self.cpus[from];
            c.load.sum = (c.load.sum - ls * w).max(0.0);
            c.util.sum = (c.util.sum - us).max(0.0);
        }
        {
            let c = &mut self.cpus[to];
            c.load.sum += ls * w;
            c.util.sum += us;
        }
        if self.cfg.class == ClassKind::Cfs {
            // Pre-6.6: vruntime travels relative to min_vruntime.
            let task = &mut self.tasks[t];
            task.vruntime =
                task.vruntime - self.cpus[from].rq.min_vruntime + self.cpus[to].rq.min_vruntime;
        }
        self.tasks[t].cpu = to;
        self.tasks[t].nr_migrations += 1;
        if by_balance {
            self.counters.migrations_balance += 1;
        } else {
            self.counters.migrations_wake += 1;
        }
        let level = self
            .domains
            .lowest_spanning(from, to)
            .map_or(15, |d| level_index(d.level));
        self.mig_levels[level] += 1;
        if let Some(tr) = &mut self.trace {
            tr.events.push(TraceEvent::MigrateTask {
                ts_ns: self.now,
                cpu: self.executing.unwrap_or(from) as u32,
                pid: t as u32 + 1,
                prio: 120 + self.tasks[t].nice,
                orig_cpu: from as u32,
                dest_cpu: to as u32,
            });
        }
    }

    // ----------------------------------------------------------------------------------
    // CPU mode accounting
    // ----------------------------------------------------------------------------------

    fn account_mode(&mut self, cpu: CpuId) {
        let now = self.now;
        let c = &mut self.cpus[cpu];
        let d = now - c.last_mode_change;
        if c.curr.is_some() {
            c.busy_ns += d;
        } else {
            c.idle_ns += d;
        }
        c.last_mode_change = now;
    }

    fn flush_iw(&mut self) {
        if self.nr_waiting > 0 {
            self.counters.idle_while_waiting_ns +=
                (self.now - self.iw_last) * self.nr_idle_cpus as u64;
        }
        self.iw_last = self.now;
    }

    fn set_waiting(&mut self, delta: isize) {
        self.flush_iw();
        self.nr_waiting = (self.nr_waiting as isize + delta) as usize;
    }

    /// Sets `curr` of a CPU, keeping busy/idle accounting and SMT speeds right.
    fn set_curr(&mut self, cpu: CpuId, curr: Option<TaskId>) {
        let was_busy = self.cpus[cpu].curr.is_some();
        let busy = curr.is_some();
        if was_busy != busy {
            self.account_mode(cpu);
            self.flush_iw();
            let core = self.topo.cpu(cpu).core;
            if busy {
                self.nr_idle_cpus -= 1;
                self.core_busy[core] += 1;
            } else {
                self.nr_idle_cpus += 1;
                self.core_busy[core] -= 1;
            }
            // Utilisation accrues while busy: close the interval before the level changes.
            self.sync_cpu_pelt(cpu);
        }
        self.cpus[cpu].curr = curr;
        if was_busy != busy && self.smt {
            for i in 0..self.smt_sibs[cpu].len() {
                let s = self.smt_sibs[cpu][i];
                if self.cpus[s].curr.is_some() && self.executing != Some(s) {
                    self.settle(s);
                    self.start_segment(s);
                }
            }
        }
    }

    fn smt_speed(&self, cpu: CpuId) -> f64 {
        let busy = self.core_busy[self.topo.cpu(cpu).core] as usize;
        let v = &self.profile.cpu.smt_speed;
        v[busy.clamp(1, v.len()) - 1]
    }

    /// Folds the progress of the running segment into `seg_left`.
    fn settle(&mut self, cpu: CpuId) {
        let Some(t) = self.cpus[cpu].curr else { return };
        let c = &self.cpus[cpu];
        let done = (self.now - c.seg_start) as f64 * c.speed;
        let task = &mut self.tasks[t];
        task.seg_left = (task.seg_left - done).max(0.0);
        self.cpus[cpu].seg_start = self.now;
    }

    /// (Re)times the running segment of `cpu` at the current speed.
    fn start_segment(&mut self, cpu: CpuId) {
        let Some(t) = self.cpus[cpu].curr else { return };
        let speed = self.smt_speed(cpu);
        let left = self.tasks[t].seg_left;
        let due = self.now + crate::time::ceil_u64(left / speed);
        let c = &mut self.cpus[cpu];
        c.speed = speed;
        c.seg_start = self.now;
        c.seg_due = due;
        // A completion event already armed no later than the new due time can serve this
        // segment too: it re-arms itself when it fires early. Only an earlier due time needs
        // a new one.
        if c.seg_key != seg_timers::IDLE && due >= (c.seg_key >> 64) as Time {
            return;
        }
        self.arm_seg_done(cpu, due);
    }

    fn arm_tick(&mut self, cpu: CpuId) {
        if self.cpus[cpu].tick_armed {
            return;
        }
        let tick = self.cfg.tunables.tick_ns();
        let next = (self.now / tick + 1) * tick;
        let c = &mut self.cpus[cpu];
        c.tick_armed = true;
        c.tick_gen = c.tick_gen.wrapping_add(1);
        let g_n = c.tick_gen;
        self.push(
            next,
            Event::Tick {
                cpu: cpu as u32,
                g_n,
            },
        );
    }

    // ----------------------------------------------------------------------------------
    // Scheduling: pick, switch, idle
    // ----------------------------------------------------------------------------------

    /// Picks and switches to the next task on `cpu`. `prev_state` says how the previous
    /// task left (None: it is still runnable and was preempted, or the CPU was idle).
    fn schedule(&mut self, cpu: CpuId, prev_state: Option<PrevState>) {
        let prev = self.cpus[cpu].curr;
        self.cpus[cpu].need_resched = false;
        if let Some(p) = prev {
            self.update_curr(cpu);
            self.settle(cpu);
            if self.tasks[p].state == TaskState::Running(cpu) {
                // Preempted or yielding: back into the tree.
                self.sync_task_pelt(p);
                self.tasks[p].state = TaskState::Queued(cpu);
                self.tasks[p].runnable_since = self.now;
                self.rq_insert(cpu, p);
                self.set_waiting(1);
            }
            let t = &mut self.tasks[p];
            t.last_ran_cpu = Some(cpu);
            t.last_ran_end = self.now;
        }
        let mut next = self.pick_next_and_dequeue(cpu);
        if next.is_none() {
            // About to go idle: newidle balance may pull work.
            if prev.is_some() || matches!(self.cpus[cpu].mode, CpuMode::Exiting { .. }) {
                self.set_curr_none_for_balance(cpu, prev, prev_state);
                self.newidle_balance(cpu);
                next = self.pick_next_and_dequeue(cpu);
                if next.is_none() {
                    self.go_idle(cpu);
                    return;
                }
                self.switch_to(cpu, None, None, next.unwrap_or(0));
                return;
            }
            self.go_idle(cpu);
            return;
        }
        let next = next.unwrap_or(0);
        self.switch_to(cpu, prev, prev_state, next);
    }

    /// Records the switch-out of `prev` to idle before a newidle balance.
    fn set_curr_none_for_balance(
        &mut self,
        cpu: CpuId,
        prev: Option<TaskId>,
        prev_state: Option<PrevState>,
    ) {
        if let Some(p) = prev {
            self.record_switch(cpu, Some(p), prev_state, None);
            self.cpus[cpu].prev_mm = Some(self.tasks[p].mm);
        }
        self.set_curr(cpu, None);
        self.cpus[cpu].mode = CpuMode::Busy;
    }

    fn pick_next_and_dequeue(&mut self, cpu: CpuId) -> Option<TaskId> {
        loop {
            // curr (if any) was put back in the tree by the caller.
            let saved = self.cpus[cpu].curr.take();
            let next = self.pick_next(cpu);
            self.cpus[cpu].curr = saved;
            let next = next?;
            self.rq_remove(cpu, next);
            if self.tasks[next].delayed {
                // DELAY_DEQUEUE: a delayed task picked is finally dequeued, not run.
                self.sync_task_pelt(next);
                self.sync_cpu_pelt(cpu);
                self.tasks[next].delayed = false;
                self.cpus[cpu].nr_delayed -= 1;
                self.leave_runnable(cpu, next);
                self.save_lag(cpu, next);
                continue;
            }
            self.set_waiting(-1);
            return Some(next);
        }
    }

    fn record_switch(
        &mut self,
        cpu: CpuId,
        prev: Option<TaskId>,
        prev_state: Option<PrevState>,
        next: Option<TaskId>,
    ) {
        self.counters.ctx_switches += 1;
        match prev_state {
            Some(PrevState::Runnable) | None if prev.is_some() => {
                self.counters.ctx_involuntary += 1;
                if let Some(p) = prev {
                    self.tasks[p].nr_involuntary += 1;
                }
            }
            Some(_) => {
                self.counters.ctx_voluntary += 1;
                if let Some(p) = prev {
                    self.tasks[p].nr_voluntary += 1;
                }
            }
            None => {}
        }
        if let Some(tr) = &mut self.trace {
            let prio = |t: Option<TaskId>| t.map_or(120, |t| 120 + self.tasks[t].nice);
            tr.events.push(TraceEvent::Switch {
                ts_ns: self.now,
                cpu: cpu as u32,
                prev_pid: prev.map_or(0, |p| p as u32 + 1),
                prev_prio: prio(prev),
                prev_state: if prev.is_none() {
                    PrevState::Runnable
                } else {
                    prev_state.unwrap_or(PrevState::Runnable)
                },
                next_pid: next.map_or(0, |n| n as u32 + 1),
                next_prio: prio(next),
            });
        }
    }

    fn switch_to(
        &mut self,
        cpu: CpuId,
        prev: Option<TaskId>,
        prev_state: Option<PrevState>,
        next: TaskId,
    ) {
        if prev != Some(next) {
            self.record_switch(cpu, prev, prev_state, Some(next));
        }
        let prev_mm = prev.map(|p| self.tasks[p].mm).or(self.cpus[cpu].prev_mm);
        self.cpus[cpu].mode = CpuMode::Busy;
        self.cpus[cpu].nr_switches += 1;
        // Costs of running `next` here: the switch itself and its working set.
        let mut overhead = 0.0;
        if prev != Some(next) {
            let sw = if prev_mm == Some(self.tasks[next].mm) {
                self.profile.cpu.ctx_switch_ns
            } else {
                self.profile.cpu.ctx_switch_mm_ns
            };
            overhead += sw as f64;
            self.counters.ctx_switch_cost_ns += sw;
            let refetch = self.refetch_cost(next, cpu);
            overhead += refetch;
            self.counters.refetch_cost_ns += refetch as u64;
            // User/system split: refetching one's own working set stalls user code.
            self.tasks[next].user_ns += refetch;
        }
        self.cpus[cpu].prev_mm = Some(self.tasks[next].mm);
        // Run delay and wakeup latency.
        let now = self.now;
        {
            let t = &mut self.tasks[next];
            t.run_delay_ns += now - t.runnable_since;
            if let Some(w) = t.wake_time.take() {
                let _ = self.counters.wakeup_latency.record((now - w).max(1));
            }
            if t.home_node.is_none() {
                t.home_node = Some(self.topo.cpu(cpu).node);
            }
        }
        self.sync_task_pelt(next);
        self.tasks[next].state = TaskState::Running(cpu);
        // A task preempted in the middle of a segment (user work or the tail of a syscall)
        // must finish it before its next op runs.
        let interrupted = self.tasks[next].seg_left > 0.0;
        self.tasks[next].seg_left += overhead;
        self.set_next_entity(next, now);
        self.set_curr(cpu, Some(next));
        self.arm_tick(cpu);
        if interrupted {
            self.start_segment(cpu);
        } else {
            // The first op runs now; its cost adds to the switch overhead in one segment (a
            // wakeup it issues is delayed by the pending overhead, see `try_to_wake_up`).
            self.continue_task(cpu);
        }
    }

    /// The profile's cost of fetching one cache line from a CPU at each distance.
    fn refetch_per_line(&self) -> ByDistance {
        let c = &self.profile.cache;
        ByDistance {
            same: 0.0,
            smt: c.refetch_smt_ns,
            llc: c.refetch_llc_ns,
            cross_llc: c.refetch_cross_llc_ns,
            cross_node: c.refetch_cross_node_ns,
        }
    }

    /// Per-byte cost of reading data written on another CPU, by distance.
    fn transfer_per_byte(&self) -> ByDistance {
        let t = &self.profile.transfer;
        ByDistance {
            same: t.same_cpu_ns_per_byte,
            smt: t.smt_ns_per_byte,
            llc: t.llc_ns_per_byte,
            cross_llc: t.cross_llc_ns_per_byte,
            cross_node: t.cross_node_ns_per_byte,
        }
    }

    fn refetch_cost(&self, t: TaskId, cpu: CpuId) -> f64 {
        let task = &self.tasks[t];
        let c = &self.profile.cache;
        let lines = task.ws_bytes as f64 / c.line_bytes as f64;
        if lines == 0.0 {
            return 0.0;
        }
        let Some(last) = task.last_ran_cpu else {
            return 0.0;
        };
        let off_us = (self.now - task.last_ran_end) as f64 / 1e3;
        let hot = libm::exp2(-off_us / c.hot_half_life_us);
        // What is still hot near the CPU is cheap to refetch only on this CPU or an SMT
        // sibling; beyond, the whole working set moves at the distance's per-line cost.
        let per_line = if last == cpu {
            (1.0 - hot) * c.refetch_llc_ns
        } else if self.topo.cpus_share_core(last, cpu) {
            hot * c.refetch_smt_ns + (1.0 - hot) * c.refetch_llc_ns
        } else {
            self.refetch_per_line()
                .at(Distance::of(&self.topo, last, cpu))
        };
        lines * per_line
    }

    fn go_idle(&mut self, cpu: CpuId) {
        if let Some(p) = self.cpus[cpu].curr {
            // (prev already recorded by set_curr_none_for_balance when it balanced)
            self.cpus[cpu].prev_mm = Some(self.tasks[p].mm);
            self.set_curr(cpu, None);
        }
        if self.cpus[cpu].mode == CpuMode::Busy
            || matches!(self.cpus[cpu].mode, CpuMode::Exiting { .. })
        {
            self.cpus[cpu].mode = CpuMode::Idle { since: self.now };
            self.cpus[cpu].idle_stamp = Some(self.now);
        }
        self.cpus[cpu].seg_key = seg_timers::IDLE;
        // has_idle_cores: set when a CPU goes idle and all of its siblings are idle.
        if self.smt {
            let view = self.view();
            if view.core_idle(cpu) {
                let llc = self.topo.cpu(cpu).llc;
                self.hints.llc[llc].has_idle_cores = true;
            }
        }
        // NOHZ: a tick already in flight is left to fire once and then not re-armed, which
        // keeps the queue free of stale ticks when CPUs idle many times per jiffy.
        if self.balancer.wants_idle_ticks() {
            self.arm_tick(cpu);
        }
    }

    /// Wakes an idle CPU for a task that was just enqueued on it.
    fn kick_idle(&mut self, cpu: CpuId) {
        let CpuMode::Idle { since } = self.cpus[cpu].mode else {
            return;
        };
        let idle_for = self.now - since;
        let exit = idle_state_for(&self.profile, idle_for).map_or(0, |s| s.exit_ns);
        // avg_idle: fold the idle period just ended.
        let c = &mut self.cpus[cpu];
        if let Some(stamp) = c.idle_stamp.take() {
            let d = self.now - stamp;
            let avg = c.avg_idle as i64 + (d as i64 - c.avg_idle as i64) / 8;
            c.avg_idle = (avg.max(0) as u64).min(2 * c.max_idle_balance_cost);
            let jiffies = self.now / self.cfg.tunables.tick_ns();
            self.hints.cpu[cpu].wake_avg_idle = c.avg_idle / 2;
            self.hints.cpu[cpu].wake_stamp = jiffies;
        }
        self.counters.idle_exits += 1;
        self.counters.idle_exit_ns += exit;
        let c = &mut self.cpus[cpu];
        c.mode = CpuMode::Exiting {
            until: self.now + exit,
        };
        c.exit_gen = c.exit_gen.wrapping_add(1);
        let g_n = c.exit_gen;
        self.push(
            self.now + exit,
            Event::CpuReady {
                cpu: cpu as u32,
                g_n,
            },
        );
    }

    /// Immediate preemption of `cpu`'s running task.
    fn resched_now(&mut self, cpu: CpuId) {
        if self.cpus[cpu].curr.is_none() {
            return;
        }
        if self.executing == Some(cpu) {
            self.cpus[cpu].need_resched = true;
            return;
        }
        self.schedule(cpu, None);
    }

    // ----------------------------------------------------------------------------------
    // Ticks and balancing
    // ----------------------------------------------------------------------------------

    fn tick(&mut self, cpu: CpuId, g_n: u32) {
        if self.cpus[cpu].tick_gen != g_n || !self.cpus[cpu].tick_armed {
            return;
        }
        self.cpus[cpu].tick_armed = false;
        let busy = self.cpus[cpu].curr.is_some();
        if !busy && !self.balancer.wants_idle_ticks() {
            return;
        }
        self.sync_cpu_pelt(cpu);
        if busy && self.check_preempt_tick(cpu) {
            self.counters.preempt_tick += 1;
            self.cpus[cpu].need_resched = true;
        }
        self.run_balancer(cpu, false);
        if self.cpus[cpu].need_resched && self.cpus[cpu].curr.is_some() {
            self.schedule(cpu, None);
        }
        if self.cpus[cpu].curr.is_some() || self.balancer.wants_idle_ticks() {
            self.arm_tick(cpu);
        }
    }

    fn run_balancer(&mut self, cpu: CpuId, newidle: bool) {
        let mut out = std::mem::take(&mut self.balance_out);
        out.migrations.clear();
        out.active.clear();
        out.cost_ns = 0;
        out.passes = 0;
        {
            let view = SchedView {
                now: self.now,
                topo: &self.topo,
                domains: &self.domains,
                cpus: &self.cpus,
                tasks: &self.tasks,
                cfg: &self.cfg,
                profile: &self.profile,
                nr_overloaded: self.nr_overloaded,
            };
            if newidle {
                self.balancer.newidle(cpu, &view, &mut self.hints, &mut out);
            } else {
                self.balancer.tick(cpu, &view, &mut self.hints, &mut out);
            }
        }
        if out.cost_ns > 0 {
            self.counters.balance_cost_ns += out.cost_ns;
            if let Some(t) = self.cpus[cpu].curr
                && self.executing != Some(cpu)
            {
                self.settle(cpu);
                self.tasks[t].seg_left += out.cost_ns as f64;
                self.start_segment(cpu);
            }
        }
        if newidle {
            self.counters.newidle_passes += u64::from(out.passes > 0);
        }
        self.counters.balance_passes += out.passes as u64;
        let migs = std::mem::take(&mut out.migrations);
        for m in &migs {
            self.apply_migration(m.task, m.from, m.to);
        }
        out.migrations = migs;
        // Active balances run after the ordinary moves (their own module: sim/active.rs).
        let pushes = std::mem::take(&mut out.active);
        for m in &pushes {
            self.active_balance(m.task, m.from, m.to);
        }
        out.active = pushes;
        self.balance_out = out;
    }

    fn newidle_balance(&mut self, cpu: CpuId) {
        self.cpus[cpu].idle_stamp = Some(self.now);
        self.run_balancer(cpu, true);
    }

    fn apply_migration(&mut self, t: TaskId, from: CpuId, to: CpuId) {
        if self.tasks[t].state != TaskState::Queued(from)
            || !self.tasks[t].allowed.contains(to)
            || from == to
        {
            return;
        }
        if self.tasks[t].delayed {
            return;
        }
        self.sync_task_pelt(t);
        self.sync_cpu_pelt(from);
        self.sync_cpu_pelt(to);
        self.rq_remove(from, t);
        self.save_lag(from, t);
        self.leave_runnable(from, t);
        self.migrate_task(t, to, true);
        self.join_runnable(to, t);
        if self.cfg.class == ClassKind::Eevdf {
            self.place_entity(to, t, false);
        }
        self.tasks[t].state = TaskState::Queued(to);
        self.rq_insert(to, t);
        match self.cpus[to].mode {
            CpuMode::Idle { .. } => self.kick_idle(to),
            CpuMode::Exiting { .. } => {}
            CpuMode::Busy => {
                if self.cpus[to].curr.is_some() && self.check_preempt_wakeup(to, t, false, false) {
                    self.counters.preempt_wakeup += 1;
                    self.resched_now(to);
                }
            }
        }
    }

    // ----------------------------------------------------------------------------------
    // The wakeup path
    // ----------------------------------------------------------------------------------

    /// Asks the policy for a CPU and validates the answer.
    fn select_cpu(
        &mut self,
        p: TaskId,
        waker: Option<TaskId>,
        waker_cpu: CpuId,
        flags: u32,
    ) -> CpuId {
        let prev = self.tasks[p].cpu;
        let mut rec = PlacementRecord::default();
        let ctx = WakeCtx {
            now: self.now,
            wakee: p,
            waker,
            waker_cpu,
            prev_cpu: prev,
            flags,
        };
        let cpu = if self.tasks[p].nr_allowed == 1 {
            rec.step = Step::Pinned;
            self.tasks[p].allowed.first().unwrap_or(prev)
        } else {
            let view = SchedView {
                now: self.now,
                topo: &self.topo,
                domains: &self.domains,
                cpus: &self.cpus,
                tasks: &self.tasks,
                cfg: &self.cfg,
                profile: &self.profile,
                nr_overloaded: self.nr_overloaded,
            };
            self.policy
                .select_task_rq(&ctx, &view, &mut self.hints, &mut rec)
        };
        let cpu = if cpu < self.cpus.len() && self.tasks[p].allowed.contains(cpu) {
            cpu
        } else {
            self.fallback_cpu(p, prev)
        };
        // Cost of deciding, charged to the waker.
        let s = &self.profile.search;
        let search = rec.examined as u64 * s.scan_per_cpu_ns
            + rec.examined_remote as u64 * s.scan_per_cpu_remote_ns;
        self.counters.searches += 1;
        self.counters.cpus_examined += (rec.examined + rec.examined_remote) as u64;
        self.counters.search_cost_ns += search;
        if waker.is_some() {
            self.op_extra_cost += search as f64;
        }
        self.place_steps[rec.step as usize] += 1;
        self.place_affine[rec.affine as usize] += 1;
        if rec.pulled() {
            self.counters.wakeups_affine += u64::from(flags & wake_flags::TTWU != 0);
        }
        if let Some(tr) = &mut self.trace {
            tr.events.push(TraceEvent::Placement {
                ts_ns: self.now,
                cpu: waker_cpu as u32,
                waker_pid: waker.map_or(0, |w| w as u32 + 1),
                wakee_pid: p as u32 + 1,
                prev_cpu: prev as u32,
                target_cpu: cpu as u32,
                path: rec.to_string(),
                examined: rec.examined + rec.examined_remote,
            });
        }
        cpu
    }

    /// `select_fallback_rq`: prev if allowed, else an allowed CPU on prev's node, else any.
    fn fallback_cpu(&self, p: TaskId, prev: CpuId) -> CpuId {
        let allowed = &self.tasks[p].allowed;
        if allowed.contains(prev) {
            return prev;
        }
        let node = self.topo.node_span(prev);
        node.iter()
            .find(|&c| allowed.contains(c))
            .or(allowed.first())
            .unwrap_or(prev)
    }

    /// `try_to_wake_up`: places a sleeping task and sends it on its way to the chosen CPU.
    pub(crate) fn try_to_wake_up(
        &mut self,
        p: TaskId,
        waker: Option<TaskId>,
        waker_cpu: CpuId,
        flags: u32,
    ) {
        let TaskState::Sleeping(_) = self.tasks[p].state else {
            debug_assert!(false, "waking task {p} in state {:?}", self.tasks[p].state);
            return;
        };
        let sync = flags & wake_flags::SYNC != 0 && waker.is_some();
        // 2.6.2x avg_overlap: how long the waker keeps running after a wakeup.
        if let Some(w) = waker {
            self.tasks[w].ran_since_wake = 0;
            self.tasks[w].last_wakeup_ts = self.now;
        }
        if self.tasks[p].delayed {
            // Still queued (DELAY_DEQUEUE): just runnable again, no placement.
            let cpu = self.tasks[p].cpu;
            self.sync_task_pelt(p);
            self.tasks[p].delayed = false;
            self.cpus[cpu].nr_delayed -= 1;
            self.tasks[p].state = TaskState::Queued(cpu);
            self.tasks[p].runnable_since = self.now;
            self.tasks[p].wake_time = Some(self.now);
            self.nr_active += 1;
            self.set_waiting(1);
            self.counters.wakeups += 1;
            if self.cpus[cpu].curr.is_some() && self.check_preempt_wakeup(cpu, p, sync, false) {
                self.counters.preempt_wakeup += 1;
                self.resched_now(cpu);
            }
            return;
        }
        self.counters.wakeups += 1;
        if sync {
            self.counters.wakeups_sync += 1;
        }
        if waker.is_none() {
            self.counters.wakeups_irq += 1;
        }
        if self.cfg.class == ClassKind::O1 {
            let slept = (self.now - self.tasks[p].last_ran_end) as f64 / 1e9;
            let t = &mut self.tasks[p];
            t.o1_sleep_avg = (t.o1_sleep_avg + slept).min(1.0);
        }
        let cpu = self.select_cpu(p, waker, waker_cpu, flags);
        let view_idle = {
            let v = self.view();
            v.idle(cpu)
        };
        if view_idle {
            self.counters.wakeups_to_idle += 1;
        }
        let remote = cpu != waker_cpu || waker.is_none();
        if cpu == waker_cpu {
            self.counters.wakeups_local += 1;
        } else {
            self.counters.wakeups_remote += 1;
        }
        if waker.is_some() {
            self.op_extra_cost += if remote {
                self.profile.wakeup.remote_wake_ns
            } else {
                self.profile.wakeup.local_wake_ns
            } as f64;
        }
        if let Some(tr) = &mut self.trace {
            tr.events.push(TraceEvent::Waking {
                ts_ns: self.now,
                cpu: waker_cpu as u32,
                pid: p as u32 + 1,
                prio: 120 + self.tasks[p].nice,
                target_cpu: cpu as u32,
            });
        }
        if cpu != self.tasks[p].cpu {
            self.migrate_task(p, cpu, false);
        }
        self.tasks[p].state = TaskState::Waking(cpu);
        self.tasks[p].wake_time = Some(self.now);
        self.nr_active += 1;
        self.cpus[cpu].pending += 1;
        // A remote wakee cannot arrive before the waker has finished the work that precedes
        // the IPI or the remote enqueue: its syscall so far, the search and the wake itself
        // (and, for a batch of wakeups in one op, the wakeups before it).
        let lead = match waker {
            Some(w) => crate::time::round_u64(self.tasks[w].seg_left + self.op_extra_cost),
            None => 0,
        };
        let delay = if !remote {
            0
        } else if self.cpus[cpu].curr.is_none()
            && matches!(self.cpus[cpu].mode, CpuMode::Idle { .. })
        {
            self.counters.ipis += 1;
            if waker.is_none() {
                0
            } else {
                lead + self.profile.wakeup.ipi_ns
            }
        } else if self.cfg.features.ttwu_queue && !self.topo.cpus_share_cache(waker_cpu, cpu) {
            self.counters.ipis += 1;
            lead + self.profile.wakeup.ttwu_queue_delay_ns
        } else {
            lead
        };
        if delay == 0 {
            self.enqueue_arrival(p, cpu, flags, false);
        } else {
            self.push(
                self.now + delay,
                Event::Arrive {
                    task: p as u32,
                    cpu: cpu as u32,
                    flags,
                },
            );
        }
    }

    fn arrive(&mut self, p: TaskId, cpu: CpuId, flags: u32) {
        if self.tasks[p].state != TaskState::Waking(cpu) {
            return;
        }
        self.enqueue_arrival(p, cpu, flags, false);
    }

    /// The wakee lands on `cpu`'s runqueue: placement of its vruntime, then idle exit or
    /// the preemption check.
    fn enqueue_arrival(&mut self, p: TaskId, cpu: CpuId, flags: u32, initial: bool) {
        self.cpus[cpu].pending -= 1;
        self.sync_task_pelt(p);
        self.sync_cpu_pelt(cpu);
        self.place_entity(cpu, p, initial);
        self.join_runnable(cpu, p);
        self.tasks[p].state = TaskState::Queued(cpu);
        self.tasks[p].runnable_since = self.now;
        self.rq_insert(cpu, p);
        self.set_waiting(1);
        if let Some(tr) = &mut self.trace
            && !initial
        {
            tr.events.push(TraceEvent::Wakeup {
                ts_ns: self.now,
                cpu: cpu as u32,
                pid: p as u32 + 1,
                prio: 120 + self.tasks[p].nice,
                target_cpu: cpu as u32,
            });
        }
        match self.cpus[cpu].mode {
            CpuMode::Idle { .. } => self.kick_idle(cpu),
            CpuMode::Exiting { .. } => {}
            CpuMode::Busy => {
                if self.cpus[cpu].curr.is_none() {
                    // A CPU in the middle of newidle balancing: it will pick this task.
                    return;
                }
                let sync = flags & wake_flags::SYNC != 0;
                let fork = flags & wake_flags::FORK != 0;
                if self.check_preempt_wakeup(cpu, p, sync, fork) {
                    self.counters.preempt_wakeup += 1;
                    self.resched_now(cpu);
                }
            }
        }
    }

    // ----------------------------------------------------------------------------------
    // The task interpreter
    // ----------------------------------------------------------------------------------

    fn continue_task(&mut self, cpu: CpuId) {
        let Some(t) = self.cpus[cpu].curr else { return };
        self.executing = Some(cpu);
        let outcome = self.step_task(t, cpu);
        self.executing = None;
        match outcome {
            StepOutcome::Run => {
                if self.cpus[cpu].need_resched {
                    self.schedule(cpu, None);
                } else {
                    self.start_segment(cpu);
                }
            }
            StepOutcome::Preempt | StepOutcome::Yield => self.schedule(cpu, None),
            StepOutcome::Migrate(target) => {
                // sched_exec: the running task leaves this CPU (as if preempted) and is queued
                // on the chosen one, like a wakeup that needs no IPI delay.
                self.update_curr(cpu);
                self.settle(cpu);
                self.sync_task_pelt(t);
                self.sync_cpu_pelt(cpu);
                self.save_lag(cpu, t);
                self.leave_runnable(cpu, t);
                self.tasks[t].state = TaskState::Waking(target);
                self.schedule(cpu, Some(PrevState::Runnable));
                // The exec replaced the image: no old working set to refetch on `target`.
                self.tasks[t].last_ran_cpu = None;
                self.migrate_task(t, target, false);
                self.cpus[target].pending += 1;
                self.enqueue_arrival(t, target, wake_flags::EXEC, false);
            }
            StepOutcome::Block(w) => {
                self.block_current(cpu, t, w);
                self.schedule(cpu, Some(PrevState::Sleeping));
            }
            StepOutcome::Exit => {
                self.exit_current(cpu, t);
                self.schedule(cpu, Some(PrevState::Dead));
            }
        }
    }

    fn block_current(&mut self, cpu: CpuId, t: TaskId, w: WaitOn) {
        self.update_curr(cpu);
        self.sync_task_pelt(t);
        self.sync_cpu_pelt(cpu);
        self.nr_active -= 1;
        if w == WaitOn::Timer {
            self.nr_timers += 1;
        }
        // 2.6.2x avg_overlap: EWMA (1/8) of run time since the task last woke someone.
        {
            let task = &mut self.tasks[t];
            let ov = task.ran_since_wake;
            task.avg_overlap =
                (task.avg_overlap as i64 + (ov as i64 - task.avg_overlap as i64) / 8) as u64;
        }
        if self.should_delay_dequeue(cpu, t) {
            self.tasks[t].state = TaskState::Sleeping(w);
            self.tasks[t].delayed = true;
            self.cpus[cpu].nr_delayed += 1;
            self.rq_insert(cpu, t);
            return;
        }
        self.save_lag(cpu, t);
        self.leave_runnable(cpu, t);
        self.tasks[t].state = TaskState::Sleeping(w);
    }

    fn resolve_lock(&self, lock: LockRef, cpu: CpuId) -> usize {
        match lock {
            LockRef::Fixed(m) => m,
            LockRef::PerCpu(base) => base + cpu,
        }
    }

    /// Executes ops of the running task `t` until it needs CPU time, blocks or exits.
    fn step_task(&mut self, t: TaskId, cpu: CpuId) -> StepOutcome {
        // SAFETY: the program is an `Arc<[Op]>` held by the task for its whole life and never
        // replaced; the slice's heap allocation does not move when `self.tasks` grows, so the
        // pointer stays valid while ops run (avoids an atomic refcount per step).
        let prog: &[Op] = unsafe { &*std::sync::Arc::as_ptr(&self.tasks[t].program) };
        let syscall = self.profile.cpu.syscall_ns as f64;
        loop {
            if self.cpus[cpu].need_resched {
                return StepOutcome::Preempt;
            }
            let pc = self.tasks[t].pc;
            let Some(op) = prog.get(pc) else {
                return StepOutcome::Exit;
            };
            self.op_extra_cost = 0.0;
            let mut cost = 0.0;
            let mut user = 0.0;
            match op {
                Op::Compute(d) => {
                    let mut work = self.sample(d) as f64;
                    let task = &self.tasks[t];
                    if task.mem_intensity > 0.0
                        && let Some(home) = task.home_node
                    {
                        let dist = self.topo.node_distance(home, self.topo.cpu(cpu).node) as f64;
                        let steps = (dist / 10.0 - 1.0).max(0.0);
                        work *= 1.0
                            + self.profile.cpu.remote_memory_slowdown * task.mem_intensity * steps;
                    }
                    self.tasks[t].pc += 1;
                    // User/system split: compute ops are user time.
                    user = work;
                    cost += work;
                }
                Op::Send { ch, bytes } => {
                    let n = self.sample(bytes);
                    match self.channels[*ch].try_send(n, cpu, self.now) {
                        SendOutcome::Sent { wake_reader } => {
                            self.tasks[t].pc += 1;
                            // Pre-wake work goes into op_extra_cost so a remote wakee's
                            // arrival is delayed by it (the IPI leaves at the end of it).
                            self.op_extra_cost += syscall
                                + self.channel_op_ns(*ch, true)
                                + n as f64 * self.profile.transfer.copy_ns_per_byte;
                            if wake_reader && let Some(r) = self.channels[*ch].readers.pop_front() {
                                self.try_to_wake_up(
                                    r,
                                    Some(t),
                                    cpu,
                                    wake_flags::TTWU | wake_flags::SYNC,
                                );
                            }
                        }
                        SendOutcome::Full => {
                            self.channels[*ch].writers.push_back(t);
                            return StepOutcome::Block(WaitOn::ChannelWrite(*ch));
                        }
                    }
                }
                Op::Recv { ch } => match self.channels[*ch].try_recv() {
                    RecvOutcome::Got { msg, wake_writers } => {
                        self.tasks[t].pc += 1;
                        self.tasks[t].last_recv_bytes = msg.bytes;
                        let tr = &self.profile.transfer;
                        let d = Distance::of(&self.topo, msg.cpu as CpuId, cpu);
                        let meta = self.refetch_per_line().at(d) * tr.message_lines;
                        let extra = self.transfer_per_byte().at(d) * msg.bytes as f64 + meta;
                        self.counters.transfer_cost_ns += extra as u64;
                        self.op_extra_cost += syscall
                            + msg.bytes as f64 * tr.copy_ns_per_byte
                            + extra
                            + self.channel_op_ns(*ch, false);
                        let n = wake_writers.min(self.channels[*ch].writers.len());
                        for _ in 0..n {
                            if let Some(w) = self.channels[*ch].writers.pop_front() {
                                self.try_to_wake_up(
                                    w,
                                    Some(t),
                                    cpu,
                                    wake_flags::TTWU | wake_flags::SYNC,
                                );
                            }
                        }
                    }
                    RecvOutcome::Empty => {
                        self.channels[*ch].readers.push_back(t);
                        return StepOutcome::Block(WaitOn::ChannelRead(*ch));
                    }
                },
                Op::FutexWait(f) => {
                    if std::mem::take(&mut self.token[t])
                        || std::mem::take(&mut self.futexes[*f].posted)
                    {
                        self.tasks[t].pc += 1;
                        cost += syscall;
                    } else {
                        self.futexes[*f].waiters.push_back(t);
                        return StepOutcome::Block(WaitOn::Futex(*f));
                    }
                }
                Op::FutexWake { f, n } => {
                    self.tasks[t].pc += 1;
                    self.op_extra_cost += syscall;
                    if self.futexes[*f].waiters.is_empty() {
                        self.futexes[*f].posted = true;
                    }
                    let mut left = *n;
                    while left > 0 {
                        let Some(w) = self.futexes[*f].waiters.pop_front() else {
                            break;
                        };
                        self.token[w] = true;
                        self.try_to_wake_up(w, Some(t), cpu, wake_flags::TTWU);
                        if left != WAKE_ALL {
                            left -= 1;
                        }
                    }
                }
                Op::ListAdd(l) => {
                    self.tasks[t].pc += 1;
                    self.lists[*l].push(t);
                }
                Op::WakeList(l) => {
                    self.tasks[t].pc += 1;
                    let list = std::mem::take(&mut self.lists[*l]);
                    for &w in &list {
                        self.op_extra_cost += syscall;
                        if self.tasks[w].state == TaskState::Sleeping(WaitOn::SelfEvent) {
                            self.token[w] = true;
                            self.try_to_wake_up(w, Some(t), cpu, wake_flags::TTWU);
                        } else {
                            self.tasks[w].self_posted = true;
                        }
                    }
                    let mut list = list;
                    list.clear();
                    if self.lists[*l].is_empty() {
                        self.lists[*l] = list;
                    }
                }
                Op::WaitSelf => {
                    if std::mem::take(&mut self.token[t])
                        || std::mem::take(&mut self.tasks[t].self_posted)
                    {
                        self.tasks[t].pc += 1;
                        cost += syscall;
                    } else {
                        return StepOutcome::Block(WaitOn::SelfEvent);
                    }
                }
                Op::Sleep(d) => {
                    if std::mem::take(&mut self.token[t]) {
                        self.tasks[t].pc += 1;
                    } else {
                        let dur = self.sample(d);
                        self.arm_timer(t, self.now + dur);
                        return StepOutcome::Block(WaitOn::Timer);
                    }
                }
                Op::Timer { period_ns } => {
                    if std::mem::take(&mut self.token[t]) {
                        self.tasks[t].pc += 1;
                    } else {
                        let p = (*period_ns).max(1);
                        let start = self.tasks[t].started_at;
                        let k = (self.now - start) / p + 1;
                        self.arm_timer(t, start + k * p);
                        return StepOutcome::Block(WaitOn::Timer);
                    }
                }
                Op::Lock { lock, spin_ns } => {
                    let m = self.resolve_lock(*lock, cpu);
                    if m >= self.mutexes.len() {
                        // PerCpu locks beyond the declared range: treat as uncontended.
                        self.tasks[t].pc += 1;
                        continue;
                    }
                    let owner = self.mutexes[m].owner;
                    if owner.is_none() || owner == Some(t) {
                        self.mutexes[m].owner = Some(t);
                        self.token[t] = false;
                        self.tasks[t].pc += 1;
                        self.tasks[t].spin_left = 0;
                    } else {
                        let o = owner.unwrap_or(t);
                        let pure_spin = *spin_ns == u64::MAX;
                        if self.tasks[t].spin_left == 0 {
                            self.tasks[t].spin_left = (*spin_ns).max(1);
                        }
                        let owner_running = matches!(self.tasks[o].state, TaskState::Running(_));
                        if pure_spin || (owner_running && self.tasks[t].spin_left > 1) {
                            let q = 500u64.min(self.tasks[t].spin_left);
                            if !pure_spin {
                                self.tasks[t].spin_left -= q.min(self.tasks[t].spin_left - 1);
                            }
                            cost += q as f64;
                        } else {
                            self.tasks[t].spin_left = 0;
                            self.mutexes[m].waiters.push_back(t);
                            return StepOutcome::Block(WaitOn::Mutex(m));
                        }
                    }
                }
                Op::Unlock(lock) => {
                    let m = self.resolve_lock(*lock, cpu);
                    self.tasks[t].pc += 1;
                    if m < self.mutexes.len() {
                        // The owner may have migrated since locking a per-CPU lock: find it.
                        let m = if self.mutexes[m].owner == Some(t) {
                            m
                        } else {
                            self.mutexes
                                .iter()
                                .position(|x| x.owner == Some(t))
                                .unwrap_or(m)
                        };
                        if self.mutexes[m].owner == Some(t) {
                            self.mutexes[m].owner = None;
                            if let Some(w) = self.mutexes[m].waiters.pop_front() {
                                self.mutexes[m].owner = Some(w);
                                self.token[w] = true;
                                self.op_extra_cost += syscall;
                                self.try_to_wake_up(w, Some(t), cpu, wake_flags::TTWU);
                            }
                        }
                    }
                }
                Op::Fork(spec) => {
                    self.tasks[t].pc += 1;
                    cost += self.profile.cpu.fork_ns as f64;
                    self.create_task(*spec, Some(t), cpu);
                }
                Op::WaitChildren => {
                    if self.tasks[t].live_children == 0 {
                        self.token[t] = false;
                        self.tasks[t].pc += 1;
                        cost += syscall;
                    } else {
                        self.tasks[t].waiting_children = true;
                        return StepOutcome::Block(WaitOn::Children);
                    }
                }
                Op::Barrier(b) => {
                    if std::mem::take(&mut self.token[t]) {
                        self.tasks[t].pc += 1;
                    } else {
                        self.barriers[*b].waiting.push(t);
                        if self.barriers[*b].waiting.len() as u32 >= self.barriers[*b].parties {
                            let waiting = std::mem::take(&mut self.barriers[*b].waiting);
                            self.tasks[t].pc += 1;
                            self.op_extra_cost += syscall;
                            for &w in waiting.iter().filter(|&&w| w != t) {
                                self.token[w] = true;
                                self.try_to_wake_up(w, Some(t), cpu, wake_flags::TTWU);
                            }
                        } else {
                            return StepOutcome::Block(WaitOn::Barrier(*b));
                        }
                    }
                }
                Op::Yield => {
                    self.tasks[t].pc += 1;
                    return StepOutcome::Yield;
                }
                Op::Exec => {
                    self.tasks[t].pc += 1;
                    // The exec work runs on whichever CPU the task ends up on.
                    self.tasks[t].seg_left += self.profile.cpu.exec_ns as f64;
                    let target = self.select_cpu(t, Some(t), cpu, wake_flags::EXEC);
                    // First touch after exec: the new image's memory is allocated where the
                    // task runs after the exec (here, or on `target` at its next switch-in).
                    if self.workload.specs[self.tasks[t].spec].home_node.is_none() {
                        self.tasks[t].home_node = (target == cpu).then(|| self.topo.cpu(cpu).node);
                    }
                    if target != cpu {
                        return StepOutcome::Migrate(target);
                    }
                }
                Op::Loop(n) => {
                    if *n == 0 {
                        self.tasks[t].pc = matching_end(prog, pc) + 1;
                    } else {
                        self.tasks[t].loops.push(pc + 1, *n);
                        self.tasks[t].pc += 1;
                    }
                }
                Op::EndLoop => {
                    let task = &mut self.tasks[t];
                    match task.loops.last_mut() {
                        Some((start, left)) => {
                            if *left != u64::MAX {
                                *left -= 1;
                            }
                            if *left > 0 {
                                task.pc = *start;
                            } else {
                                task.loops.pop();
                                task.pc += 1;
                            }
                        }
                        None => task.pc += 1,
                    }
                }
                Op::Stamp(slot) => {
                    self.tasks[t].pc += 1;
                    match slot {
                        Slot::Task(i) => self.tasks[t].slots[*i as usize % 8] = self.now,
                        Slot::Global(g) => self.global_slots[*g] = self.now,
                    }
                }
                Op::RecordSince { hist, slot } => {
                    self.tasks[t].pc += 1;
                    let start = match slot {
                        Slot::Task(i) => self.tasks[t].slots[*i as usize % 8],
                        Slot::Global(g) => self.global_slots[*g],
                    };
                    let _ = self.hists[*hist].record(self.now.saturating_sub(start).max(1));
                }
                Op::Count { counter, amount } => {
                    self.tasks[t].pc += 1;
                    let a = self.sample(amount) as f64;
                    self.user_counters[*counter] += a;
                }
                Op::CountLastRecv(counter) => {
                    self.tasks[t].pc += 1;
                    self.user_counters[*counter] += self.tasks[t].last_recv_bytes as f64;
                }
                Op::Exit => return StepOutcome::Exit,
            }
            cost += self.op_extra_cost;
            self.op_extra_cost = 0.0;
            if cost > 0.0 {
                let j = self.profile.cpu.jitter;
                if j > 0.0 {
                    let f = 1.0 + j * (2.0 * crate::rng::unit_f64(&mut self.noise) - 1.0);
                    cost *= f;
                    user *= f;
                }
                self.tasks[t].user_ns += user;
                self.tasks[t].seg_left += cost;
                return StepOutcome::Run;
            }
        }
    }

    /// Kernel work of one channel operation beyond the syscall and the copy; a TCP send
    /// also runs the loopback delivery on the sender's CPU.
    fn channel_op_ns(&self, ch: usize, send: bool) -> f64 {
        let t = &self.profile.transfer;
        (match self.channels[ch].kind {
            ChannelKind::Pipe { .. } => t.pipe_op_ns,
            ChannelKind::Unix { .. } => t.unix_op_ns,
            ChannelKind::Tcp { .. } => t.tcp_op_ns + if send { t.tcp_delivery_ns } else { 0 },
        }) as f64
    }

    fn sample(&mut self, d: &Dist) -> u64 {
        d.sample(&mut self.rng)
    }

    fn arm_timer(&mut self, t: TaskId, at: Time) {
        self.tasks[t].timer_gen = self.tasks[t].timer_gen.wrapping_add(1);
        let g_n = self.tasks[t].timer_gen;
        self.push(
            at,
            Event::Timer {
                task: t as u32,
                g_n,
            },
        );
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
        self.max_queue
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
    /// Per-task statistics: (comm, cpu time, run delay, voluntary, involuntary, migrations).
    pub fn task_stats(&self) -> Vec<TaskStat> {
        self.tasks
            .iter()
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

    // ----------------------------------------------------------------------------------
    // Invariants
    // ----------------------------------------------------------------------------------

    /// Checks the machine's invariants; `Err` says which one broke.
    pub fn check_invariants(&self) -> Result<(), String> {
        let n = self.cpus.len();
        let mut running_on = vec![None; n];
        let mut nr_run = vec![0u32; n];
        let mut pending = vec![0u32; n];
        let mut active = 0;
        let mut waiting = 0;
        for (i, t) in self.tasks.iter().enumerate() {
            match t.state {
                TaskState::Running(c) => {
                    if self.cpus[c].curr != Some(i) {
                        return Err(format!(
                            "task {i} Running on {c} but curr is {:?}",
                            self.cpus[c].curr
                        ));
                    }
                    if running_on[c].replace(i).is_some() {
                        return Err(format!("two tasks running on cpu {c}"));
                    }
                    if self.cpus[c].rq.tree.iter().any(|&(_, x)| x == i) {
                        return Err(format!("running task {i} also queued on {c}"));
                    }
                    nr_run[c] += 1;
                    active += 1;
                }
                TaskState::Queued(c) => {
                    let in_rq = self
                        .cpus
                        .iter()
                        .enumerate()
                        .filter(|(_, cpu)| cpu.rq.tree.iter().any(|&(_, x)| x == i))
                        .map(|(k, _)| k)
                        .collect::<Vec<_>>();
                    if in_rq != vec![c] {
                        return Err(format!("task {i} Queued({c}) but found in rqs {in_rq:?}"));
                    }
                    if t.cpu != c {
                        return Err(format!("task {i} Queued({c}) but task_cpu {}", t.cpu));
                    }
                    nr_run[c] += 1;
                    active += 1;
                    waiting += 1;
                }
                TaskState::Waking(c) => {
                    pending[c] += 1;
                    active += 1;
                }
                TaskState::Sleeping(_) => {
                    if t.delayed {
                        nr_run[t.cpu] += 1;
                    } else if self
                        .cpus
                        .iter()
                        .any(|cpu| cpu.rq.tree.iter().any(|&(_, x)| x == i))
                    {
                        return Err(format!("sleeping task {i} is on a runqueue"));
                    }
                }
                TaskState::Dead => {}
            }
        }
        for c in 0..n {
            if self.cpus[c].nr_running != nr_run[c] {
                return Err(format!(
                    "cpu {c} nr_running {} but counted {}",
                    self.cpus[c].nr_running, nr_run[c]
                ));
            }
            if self.cpus[c].pending != pending[c] {
                return Err(format!(
                    "cpu {c} pending {} but counted {}",
                    self.cpus[c].pending, pending[c]
                ));
            }
            if let Some(t) = self.cpus[c].curr
                && self.tasks[t].state != TaskState::Running(c)
            {
                return Err(format!("cpu {c} curr {t} is {:?}", self.tasks[t].state));
            }
            let keys_sorted = self.cpus[c].rq.tree.iter().all(|&(k, t)| {
                let task = &self.tasks[t];
                match self.cfg.class {
                    ClassKind::Cfs => k == task.vruntime,
                    ClassKind::Eevdf => k == task.deadline,
                    ClassKind::O1 => true,
                }
            });
            if !keys_sorted {
                return Err(format!("cpu {c}: runqueue key out of date"));
            }
            let rq = &self.cpus[c].rq;
            if self.cfg.class == ClassKind::Eevdf {
                // The running sums match the queue, and the zero-lag point they give equals
                // the weighted average of the absolute vruntimes (whatever the reference).
                let (mut sum, mut load) = (0i128, 0i128);
                for &(_, t) in rq.tree.iter() {
                    let task = &self.tasks[t];
                    sum += task.vruntime as i128 * task.weight as i128;
                    load += task.weight as i128;
                }
                let rel = sum - load * rq.min_vruntime as i128;
                if rel != rq.avg_vruntime || load != rq.avg_load as i128 {
                    return Err(format!("cpu {c}: EEVDF sums differ from the queue"));
                }
                if let Some(t) = self.cpus[c].curr
                    && self.tasks[t].state == TaskState::Running(c)
                {
                    sum += self.tasks[t].vruntime as i128 * self.tasks[t].weight as i128;
                    load += self.tasks[t].weight as i128;
                }
                if load > 0 {
                    let (got, want) = (self.avg_vruntime(c) as i128, sum.div_euclid(load));
                    if got != want {
                        return Err(format!(
                            "cpu {c}: avg_vruntime {got} is not the weighted average {want}"
                        ));
                    }
                }
            }
            // The balancer's order is kept (with current keys) exactly while the queue is
            // long, and what the balancer reads, kept or sorted on demand, is the queue,
            // least recently run first.
            let kept_ok = if rq.lru_kept() {
                rq.tree.len() >= crate::fair::LRU_SHORT
                    && (rq.lru.iter()).all(|&(k, t)| k == self.tasks[t].exec_start as i64)
            } else {
                rq.tree.len() <= crate::fair::LRU_LONG
            };
            let mut coldest: Vec<(i64, TaskId)> = (rq.tree.iter())
                .map(|&(_, t)| (self.tasks[t].exec_start as i64, t))
                .collect();
            coldest.sort_unstable();
            if !kept_ok || !rq.coldest(&self.tasks).eq(coldest.iter().map(|&(_, t)| t)) {
                return Err(format!(
                    "cpu {c}: cfs_tasks order differs from the runqueue"
                ));
            }
            // The segment timer: a running CPU's segment end is armed (or it would never be
            // handled), and the CPU's slot never holds a key later than the live one.
            let live = self.cpus[c].seg_key;
            if self.cpus[c].curr.is_some() && live == seg_timers::IDLE {
                return Err(format!("cpu {c} runs a task with no segment end armed"));
            }
            if self.seg_timers.key(c) > live {
                return Err(format!(
                    "cpu {c}: timer slot later than its live segment end"
                ));
            }
            if live != seg_timers::IDLE && ((live >> 64) as Time) < self.now {
                return Err(format!("cpu {c}: segment end armed in the past"));
            }
            let c_ = &self.cpus[c];
            let accounted = c_.busy_ns + c_.idle_ns + (self.now - c_.last_mode_change);
            if accounted != self.now {
                return Err(format!(
                    "cpu {c}: busy+idle {accounted} != elapsed {}",
                    self.now
                ));
            }
        }
        // PELT: a CPU's sums are exactly the sums of its tasks' (up to float rounding).
        for c in 0..n {
            let (mut load, mut rload, mut util) = (0.0, 0.0, 0.0);
            for t in self
                .tasks
                .iter()
                .filter(|t| t.cpu == c && t.state != TaskState::Dead)
            {
                let (runnable, running) = match t.state {
                    TaskState::Running(_) => (1.0, 1.0),
                    TaskState::Queued(_) => (1.0, 0.0),
                    _ if t.delayed => (1.0, 0.0),
                    _ => (0.0, 0.0),
                };
                let (mut l, mut u) = (t.load, t.util);
                l.advance(self.now, runnable);
                u.advance(self.now, running);
                load += l.sum * t.weight as f64;
                util += u.sum;
                if runnable > 0.0 {
                    rload += l.sum * t.weight as f64;
                }
            }
            let cpu = &self.cpus[c];
            let (mut cl, mut cu, mut cr) = (cpu.load, cpu.util, cpu.runnable);
            cl.advance(self.now, cpu.runnable_weight as f64);
            cu.advance(self.now, if cpu.curr.is_some() { 1.0 } else { 0.0 });
            cr.advance(self.now, cpu.runnable_weight as f64);
            // Sums are in weight·ns (a busy nice-0 task reaches ~5e10); rounding and the clamp
            // at zero leave absolute drift far below 1, i.e. below 1e-7 of a task's load.
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1e6);
            if !close(load, cl.sum) || !close(util, cu.sum) || !close(rload, cr.sum) {
                return Err(format!(
                    "cpu {c}: PELT sums (load {:.1}, util {:.1}, runnable {:.1}) != sums of its tasks ({load:.1}, {util:.1}, {rload:.1})",
                    cl.sum, cu.sum, cr.sum
                ));
            }
        }
        if active != self.nr_active {
            return Err(format!("nr_active {} but counted {active}", self.nr_active));
        }
        if waiting != self.nr_waiting {
            return Err(format!(
                "nr_waiting {} but counted {waiting}",
                self.nr_waiting
            ));
        }
        // No lost wakeup: every sleeping task waits on something that can still wake it.
        for (i, t) in self.tasks.iter().enumerate() {
            if let TaskState::Sleeping(w) = t.state {
                let ok = match w {
                    WaitOn::ChannelRead(c) => self.channels[c].readers.contains(&i),
                    WaitOn::ChannelWrite(c) => self.channels[c].writers.contains(&i),
                    WaitOn::Futex(f) => self.futexes[f].waiters.contains(&i),
                    WaitOn::Mutex(m) => self.mutexes[m].waiters.contains(&i),
                    WaitOn::Barrier(b) => self.barriers[b].waiting.contains(&i),
                    WaitOn::SelfEvent => !t.self_posted,
                    WaitOn::Children => t.live_children > 0 || t.delayed,
                    WaitOn::Timer => true,
                };
                if !ok && !t.delayed {
                    return Err(format!(
                        "task {i} sleeps on {w:?} but nothing will wake it (lost wakeup)"
                    ));
                }
            }
        }
        Ok(())
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

fn level_index(l: DomainLevel) -> usize {
    match l {
        DomainLevel::Smt => 0,
        DomainLevel::Cls => 1,
        DomainLevel::Mc => 2,
        DomainLevel::Pkg => 3,
        DomainLevel::Node => 4,
        DomainLevel::Numa(k) => (5 + k as usize).min(14),
    }
}

fn level_name(i: usize) -> String {
    match i {
        0 => "SMT".into(),
        1 => "CLS".into(),
        2 => "MC".into(),
        3 => "PKG".into(),
        4 => "NODE".into(),
        15 => "NONE".into(),
        k => format!("NUMA{}", k - 5),
    }
}

fn matching_end(prog: &[Op], loop_pc: usize) -> usize {
    let mut depth = 0;
    for (i, op) in prog.iter().enumerate().skip(loop_pc) {
        match op {
            Op::Loop(_) => depth += 1,
            Op::EndLoop => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    prog.len()
}

/// The experiment runner moves simulations across rayon threads: keep `Simulation: Send`.
#[allow(dead_code)]
fn _assert_send() {
    fn is_send<T: Send>() {}
    is_send::<Simulation>();
}
