//! The subsystems that own the simulation's state, one struct each; [`super::Simulation`]
//! holds one of each, and each file of `sim/` says in its module doc which it reads and
//! writes:
//!
//! * [`Core`] — the machine and its scheduler state: time, topology, domains, config,
//!   profile, CPUs, tasks (what a [`SchedView`] borrows), and the SMT sharing state;
//! * [`Objects`] — what a workload's tasks block on and record into: channels, futexes,
//!   locks, barriers, wait lists, time slots, counters, histograms and the wake tokens;
//! * [`Idle`] — the cpuidle governors, the sleep timers each CPU's governor sees, the
//!   exits by idle state and the count of idle CPUs;
//! * [`Net`] — the loopback softirq and `ksoftirqd` state and the TCP ACK state;
//! * [`Stats`] — what the run reports: counters, placement steps, migration levels, the
//!   `/proc/schedstat` counts, the event hash and the trace;
//! * [`RunState`] — the run itself: its options, random streams, liveness counts and end.

use super::interp::Syscall;
use super::softirq::Softirqs;
use super::tcp_ack::AckState;
use super::{EndReason, SimOptions};
use crate::config::SchedConfig;
use crate::counters::Counters;
use crate::idle::IdleGov;
use crate::ipc::{Barrier, Channel, Futex, Mutex};
use crate::pelt::Signal;
use crate::policy::SchedView;
use crate::profile::MachineProfile;
use crate::rng::{SimRng, Stream, stream};
use crate::rq::RunQueue;
use crate::rwlock::RwLock;
use crate::schedstat::CpuStat;
use crate::seg_timers;
use crate::state::{Cpu, CpuMode, Task};
use crate::task::{TaskId, Workload};
use crate::time::Time;
use hdrhistogram::Histogram;
use schedlab_topo::{CpuId, SchedDomains, Topology};
use schedlab_trace::Trace;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// The machine and its scheduler state.
pub(crate) struct Core {
    /// The machine's CPUs, cores, LLCs and nodes.
    pub topo: Arc<Topology>,
    /// The sched-domain hierarchy of the config's era.
    pub domains: Arc<SchedDomains>,
    /// Every cost the machine charges.
    pub profile: MachineProfile,
    /// The scheduler's class, features, tunables and wake rules.
    pub cfg: SchedConfig,
    /// The tunables' CPU-count scaling factor (`sysctl_sched_tunable_scaling`).
    pub factor: u64,
    /// Simulated time, ns.
    pub now: Time,
    /// Per-CPU state.
    pub cpus: Vec<Cpu>,
    /// Every task ever created, by id.
    pub tasks: Vec<Task>,
    /// CPUs with more than one runnable task (`rd->overload`).
    pub nr_overloaded: usize,
    /// Whether any core has SMT siblings.
    pub smt: bool,
    /// SMT siblings of each CPU, itself excluded.
    pub smt_sibs: Vec<Vec<CpuId>>,
    /// Busy CPUs of each core (the SMT slowdown).
    pub core_busy: Vec<u8>,
    /// Whether a task with memory intensity was ever created: until then no op needs the
    /// remote-memory factor (most workloads never set one), and the interpreter skips it
    /// without reading the task.
    pub mem_bound: bool,
}

impl Core {
    pub(super) fn new(topo: Arc<Topology>, profile: MachineProfile, cfg: SchedConfig) -> Core {
        let n = topo.nr_cpus();
        let domains = Arc::new(SchedDomains::build(&topo, cfg.domain_era));
        let factor = cfg.tunables.factor(n);
        let migration_cost = cfg.tunables.migration_cost_ns;
        Core {
            domains,
            profile,
            factor,
            now: 0,
            cpus: (0..n).map(|_| new_cpu(migration_cost)).collect(),
            tasks: Vec::new(),
            nr_overloaded: 0,
            smt: topo.smt_present(),
            smt_sibs: topo
                .cpu_ids()
                .map(|c| topo.smt_siblings(c).iter().filter(|&s| s != c).collect())
                .collect(),
            core_busy: vec![0; topo.nr_cores()],
            mem_bound: false,
            topo,
            cfg,
        }
    }

    /// The read-only view a policy or balancer gets. It borrows only the core, so a caller
    /// can hold it while it borrows the policy, the balancer or their hints mutably.
    #[inline]
    pub fn view(&self) -> SchedView<'_> {
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
}

/// An idle CPU at time 0, about to run its first task.
fn new_cpu(migration_cost: u64) -> Cpu {
    Cpu {
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
        resched_lazy: false,
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
    }
}

/// The workload's objects, by their ids in the workload.
pub(crate) struct Objects {
    /// Pipes and sockets.
    pub channels: Vec<Channel>,
    /// Futexes.
    pub futexes: Vec<Futex>,
    /// User-space locks.
    pub mutexes: Vec<Mutex>,
    /// Reader-writer locks.
    pub rwlocks: Vec<RwLock>,
    /// Barriers.
    pub barriers: Vec<Barrier>,
    /// Wait lists (`ListAdd` / `WakeList`).
    pub lists: Vec<Vec<TaskId>>,
    /// Workload counters (`Count`).
    pub user_counters: Vec<f64>,
    /// Workload histograms (`RecordSince`), ns.
    pub hists: Vec<Histogram<u64>>,
    /// Global time stamps (`Stamp(Slot::Global)`).
    pub global_slots: Vec<Time>,
    /// Per task: it was woken by the object it waits on, so its blocking op returns.
    pub token: Vec<bool>,
}

impl Objects {
    pub(super) fn new(workload: &Workload) -> Objects {
        let hist = || Histogram::new_with_bounds(1, 600_000_000_000, 3).expect("static bounds");
        Objects {
            channels: workload
                .channels
                .iter()
                .map(|c| Channel::new(c.kind))
                .collect(),
            futexes: vec![Futex::default(); workload.futexes],
            mutexes: vec![Mutex::default(); workload.mutexes],
            rwlocks: workload.rwlocks.iter().map(|&w| RwLock::new(w)).collect(),
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
            token: Vec::new(),
        }
    }
}

/// Idle CPUs: the cpuidle governors and what they see.
pub(crate) struct Idle {
    /// Each CPU's cpuidle governor data (`idle.rs`).
    pub idle_gov: Vec<IdleGov>,
    /// Idle exits by state index.
    pub idle_state_exits: Vec<u64>,
    /// Sleep timers armed on each CPU, `(expiry, task, timer_gen)`, earliest first; stale
    /// entries are dropped when they surface (`next_timer_ns`).
    pub cpu_timers: Vec<BinaryHeap<Reverse<(Time, u32, u32)>>>,
    /// CPUs without a task.
    pub nr_idle_cpus: usize,
}

impl Idle {
    pub(super) fn new(nr_cpus: usize, nr_idle_states: usize) -> Idle {
        Idle {
            idle_gov: vec![Default::default(); nr_cpus],
            idle_state_exits: vec![0; nr_idle_states],
            cpu_timers: vec![Default::default(); nr_cpus],
            nr_idle_cpus: nr_cpus,
        }
    }
}

/// The network receive path's state.
pub(crate) struct Net {
    /// Softirq backlogs and `ksoftirqd` threads (`sim/softirq.rs`).
    pub softirq: Softirqs,
    /// ACK state of each TCP channel's receiving socket (`sim/tcp_ack.rs`).
    pub tcp_ack: Vec<AckState>,
    /// A wakeup is being issued from NET_RX softirq context (`in_serving_softirq()`).
    pub in_softirq: bool,
}

/// What the run reports.
pub(crate) struct Stats {
    /// Schedstat-shaped counters.
    pub counters: Counters,
    /// Placements by the policy's last step.
    pub place_steps: [u64; 16],
    /// Placements by their wake-affine outcome.
    pub place_affine: [u64; 16],
    /// Migrations by the lowest domain level spanning both CPUs.
    pub mig_levels: [u64; 16],
    /// FNV-1a hash of the event stream (determinism checks).
    pub hash: u64,
    /// The trace, when recorded.
    pub trace: Option<Trace>,
    /// When idle-while-waiting time was last accumulated.
    pub iw_last: Time,
    /// Thread groups, `(mm key, leader pid)` (the trace's tgids).
    pub tgids: Vec<(u32, u32)>,
    /// Per CPU, the `/proc/schedstat` counts kept as the run goes (its domain lines are
    /// filled at the end from `ttwu_dom` and the balancer).
    pub sched: Vec<CpuStat>,
    /// Per CPU and domain index (`cpu * MAX_DOMAINS + k`): `[ttwu_wake_remote,
    /// ttwu_move_affine]`.
    pub ttwu_dom: Vec<[u64; 2]>,
    /// Busy time beyond the work done (SMT sharing), ns, summed as segments settle.
    pub smt_stretch: f64,
    /// Short wakeup latencies counted by value, folded into `counters.wakeup_latency` at
    /// the end of the run.
    pub short_latency: ShortValues,
}

/// Counts of values below [`ShortValues::LEN`] by value, for a histogram that is read only
/// after the run: one array increment where `Histogram::record` costs ~100 instructions, on
/// every switch to a woken task. [`ShortValues::flush`] leaves the histogram exactly as
/// recording each value would have (`record_n(v, n)` is `n` times `record(v)`: counts, total,
/// minimum and maximum are sums and extremes, independent of order).
pub(crate) struct ShortValues {
    counts: Vec<u32>,
}

impl ShortValues {
    /// Values counted here: below 32.8 µs, where most wakeup latencies of busy runs fall
    /// (128 KiB of counts; larger values go to the histogram at once).
    const LEN: usize = 1 << 15;

    fn new() -> ShortValues {
        ShortValues {
            counts: vec![0; Self::LEN],
        }
    }

    /// Records `v` into `hist`, now or at the next [`ShortValues::flush`].
    #[inline]
    pub fn record(&mut self, hist: &mut Histogram<u64>, v: u64) {
        match self.counts.get_mut(v as usize) {
            Some(c) => {
                *c += 1;
                if *c == u32::MAX {
                    let _ = hist.record_n(v, u64::from(*c));
                    *c = 0;
                }
            }
            None => {
                let _ = hist.record(v);
            }
        }
    }

    /// Moves the counts kept here into `hist`.
    pub fn flush(&mut self, hist: &mut Histogram<u64>) {
        for (v, c) in self.counts.iter_mut().enumerate() {
            if *c > 0 {
                let _ = hist.record_n(v as u64, u64::from(*c));
                *c = 0;
            }
        }
    }
}

/// The most domain levels one CPU's chain has that `ttwu_dom` keeps.
pub(crate) const MAX_DOMAINS: usize = 16;

impl Stats {
    pub(super) fn new(nr_cpus: usize, trace: bool) -> Stats {
        Stats {
            counters: Counters {
                busy_ns: vec![0; nr_cpus],
                idle_ns: vec![0; nr_cpus],
                ..Default::default()
            },
            place_steps: [0; 16],
            place_affine: [0; 16],
            mig_levels: [0; 16],
            hash: 0xcbf2_9ce4_8422_2325,
            trace: trace.then(|| Trace {
                nr_cpus: nr_cpus as u32,
                threads: Vec::new(),
                events: Vec::new(),
            }),
            iw_last: 0,
            tgids: Vec::new(),
            sched: vec![CpuStat::default(); nr_cpus],
            ttwu_dom: vec![[0; 2]; nr_cpus * MAX_DOMAINS],
            smt_stretch: 0.0,
            short_latency: ShortValues::new(),
        }
    }
}

/// The run: its options, random streams, liveness and end.
pub(crate) struct RunState {
    /// The run's options.
    pub opts: SimOptions,
    /// The workload's random stream (durations, sizes).
    pub rng: SimRng,
    /// The machine's random stream (cost jitter).
    pub noise: SimRng,
    /// Workload tasks not yet exited.
    pub live: usize,
    /// Tasks running, queued or on their way to a CPU.
    pub nr_active: usize,
    /// Tasks asleep on a timer.
    pub nr_timers: usize,
    /// Tasks queued and not running (idle-while-waiting time).
    pub nr_waiting: usize,
    /// The CPU whose task's op is being interpreted, while one is.
    pub executing: Option<CpuId>,
    /// Ops started so far: a wakeup or fork whose wakee preempts another CPU at once runs
    /// that CPU's next op inside the current one, which this count reveals (`wake_from`).
    pub ops_started: u64,
    /// Wake costs incurred outside an op (an exit's wakeup of its parent, the search of an
    /// exec that moves the task): the next op drops them, the next `ksoftirqd` step pays
    /// them, and an exit's wakee waits behind them.
    pub unpaid: f64,
    /// Whether the run has started (the initial tasks are created).
    pub ran: bool,
    /// Why the run ended, once it has.
    pub end: Option<EndReason>,
    /// The profile's syscall cost and its halves, as every op step reads them.
    pub sys: Syscall,
}

impl RunState {
    pub(super) fn new(opts: SimOptions, syscall_ns: u64) -> RunState {
        RunState {
            rng: stream(opts.seed, Stream::Workload),
            noise: stream(opts.seed, Stream::Machine),
            opts,
            live: 0,
            nr_active: 0,
            nr_timers: 0,
            nr_waiting: 0,
            executing: None,
            ops_started: 0,
            unpaid: 0.0,
            ran: false,
            end: None,
            sys: Syscall::of(syscall_ns),
        }
    }
}
