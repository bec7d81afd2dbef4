//! Per-CPU and per-task runtime state of the simulated machine (crate-private; policies
//! read it through [`crate::policy::SchedView`]).

use crate::fair::RunQueue;
use crate::pelt::Signal;
use crate::task::{Op, SpecId, TaskId};
use crate::time::Time;
use schedlab_topo::{CpuId, CpuSet};
use std::sync::Arc;

/// What a sleeping task waits for (reported when a workload deadlocks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitOn {
    /// Data in a channel.
    ChannelRead(usize),
    /// Room in a channel.
    ChannelWrite(usize),
    /// A futex word.
    Futex(usize),
    /// Its personal futex (wait list).
    SelfEvent,
    /// A mutex.
    Mutex(usize),
    /// A timer.
    Timer,
    /// Its children's exit.
    Children,
    /// A barrier.
    Barrier(usize),
}

impl WaitOn {
    /// Human description.
    pub fn describe(&self, channel_names: &[String]) -> String {
        let ch = |i: &usize| {
            channel_names
                .get(*i)
                .cloned()
                .unwrap_or_else(|| format!("#{i}"))
        };
        match self {
            WaitOn::ChannelRead(c) => format!("data on channel {}", ch(c)),
            WaitOn::ChannelWrite(c) => format!("room on channel {}", ch(c)),
            WaitOn::Futex(f) => format!("futex {f}"),
            WaitOn::SelfEvent => "its own futex (a wait list post)".into(),
            WaitOn::Mutex(m) => format!("mutex {m}"),
            WaitOn::Timer => "a timer".into(),
            WaitOn::Children => "its children to exit".into(),
            WaitOn::Barrier(b) => format!("barrier {b}"),
        }
    }
}

/// Scheduling state of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// Running on this CPU.
    Running(CpuId),
    /// Queued on this CPU's runqueue.
    Queued(CpuId),
    /// Selected for this CPU, on its way there (wakelist/IPI in flight).
    Waking(CpuId),
    /// Blocked.
    Sleeping(WaitOn),
    /// Exited.
    Dead,
}

/// One task.
#[derive(Clone, Debug)]
pub struct Task {
    pub spec: SpecId,
    pub program: Arc<[Op]>,
    pub pc: usize,
    pub loops: Vec<(usize, u64)>,
    pub state: TaskState,
    /// `task_cpu(p)`: where it last ran or is queued.
    pub cpu: CpuId,
    pub weight: u64,
    pub nice: i32,
    pub mm: u32,
    pub allowed: CpuSet,
    pub nr_allowed: usize,
    pub parent: Option<TaskId>,
    pub live_children: u32,
    pub waiting_children: bool,
    // fair class
    pub vruntime: i64,
    pub deadline: i64,
    pub slice: u64,
    pub vlag: i64,
    pub protect_until_deadline: Option<i64>,
    pub delayed: bool,
    pub sum_exec: u64,
    pub prev_sum_exec: u64,
    pub exec_start: Time,
    pub custom_slice: Option<u64>,
    pub o1_prio: i32,
    pub o1_timeslice_left: u64,
    pub o1_sleep_avg: f64,
    pub o1_seq: u64,
    // PELT
    pub load: Signal,
    pub util: Signal,
    // costs
    pub ws_bytes: u64,
    pub mem_intensity: f64,
    pub home_node: Option<usize>,
    /// User-mode CPU work (compute ops with their remote-memory slowdown, and working-set
    /// refetches), ns at full speed: what `getrusage` reports as user time. The rest of
    /// `sum_exec` (syscalls, fork, exec, switches) is system time.
    pub user_ns: f64,
    pub last_ran_cpu: Option<CpuId>,
    pub last_ran_end: Time,
    /// Work (ns at full speed) left in the current segment.
    pub seg_left: f64,
    /// Remaining spin budget of a lock attempt in progress.
    pub spin_left: u64,
    // bookkeeping
    pub wake_time: Option<Time>,
    pub runnable_since: Time,
    pub run_delay_ns: u64,
    pub nr_voluntary: u64,
    pub nr_involuntary: u64,
    pub nr_migrations: u64,
    pub slots: [Time; 8],
    pub last_recv_bytes: u64,
    pub self_posted: bool,
    pub timer_gen: u32,
    pub started_at: Time,
    pub ran_since_wake: u64,
    pub avg_overlap: u64,
    pub last_wakeup_ts: Time,
}

/// Idle or not, from the CPU's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuMode {
    /// In an idle state since `since`.
    Idle { since: Time },
    /// Leaving idle; runs its first task at `until`.
    Exiting { until: Time },
    /// Running `curr`.
    Busy,
}

/// One CPU.
#[derive(Clone, Debug)]
pub struct Cpu {
    pub curr: Option<TaskId>,
    pub mode: CpuMode,
    pub rq: RunQueue,
    /// CFS tasks queued or running here (`cfs.h_nr_running`, delayed ones included).
    pub nr_running: u32,
    /// Wakeups selected for this CPU and not yet enqueued (`ttwu_pending`).
    pub pending: u32,
    pub need_resched: bool,
    pub seg_start: Time,
    /// When the running segment completes at the current speed.
    pub seg_due: Time,
    /// Order key of the live segment-completion event (`seg_timers::IDLE` when none): the
    /// CPU's timer slot may hold an earlier, superseded key, which then fires as a no-op.
    pub seg_key: u128,
    pub speed: f64,
    pub tick_armed: bool,
    pub tick_gen: u32,
    pub exit_gen: u32,
    pub last_mode_change: Time,
    pub busy_ns: u64,
    pub idle_ns: u64,
    pub prev_mm: Option<u32>,
    // PELT of the CPU: load incl. blocked tasks, running time, load of runnable tasks only.
    pub load: Signal,
    pub util: Signal,
    pub runnable: Signal,
    /// Σ weights of runnable tasks here (the instantaneous `rq.load.weight`).
    pub runnable_weight: u64,
    pub avg_idle: u64,
    pub idle_stamp: Option<Time>,
    pub max_idle_balance_cost: u64,
    pub nr_switches: u64,
    /// Tasks kept queued by DELAY_DEQUEUE.
    pub nr_delayed: u32,
}
