//! Per-CPU and per-task runtime state of the simulated machine (crate-private; policies
//! read it through [`crate::policy::SchedView`]).

use crate::pelt::Signal;
use crate::rq::RunQueue;
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
    /// A reader-writer lock.
    RwLock(usize),
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
            WaitOn::RwLock(l) => format!("reader-writer lock {l}"),
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

/// The open loops of a running program as `(first op, iterations left)`, innermost on top.
///
/// The innermost loop is kept inline: it is read at every `EndLoop`, and with a plain `Vec`
/// that read went through a separate heap allocation per task, a cache miss on most
/// iterations of a run with thousands of tasks. Outer loops (rare) spill to a `Vec`.
#[derive(Clone, Debug, Default)]
pub struct LoopStack {
    top: Option<(usize, u64)>,
    outer: Vec<(usize, u64)>,
}

impl LoopStack {
    /// Opens a loop starting at op `start`, running `n` times.
    #[inline]
    pub fn push(&mut self, start: usize, n: u64) {
        if let Some(t) = self.top.replace((start, n)) {
            self.outer.push(t);
        }
    }
    /// The innermost open loop: its first op and the iterations left.
    #[inline]
    pub fn last(&self) -> Option<(usize, u64)> {
        self.top
    }
    /// The innermost open loop.
    #[inline]
    pub fn last_mut(&mut self) -> Option<&mut (usize, u64)> {
        self.top.as_mut()
    }
    /// Closes the innermost loop.
    #[inline]
    pub fn pop(&mut self) {
        self.top = self.outer.pop();
    }
    /// Number of open loops.
    #[cfg(test)]
    pub fn depth(&self) -> usize {
        self.outer.len() + usize::from(self.top.is_some())
    }
}

/// One task.
///
/// Laid out by hand (`repr(C)`, cache-line aligned): the fields every simulated event touches
/// (the op interpreter and the running segment) share the first two cache lines; what waking
/// a sleeping task reads and writes the next two (with the affinity mask's first line); what
/// a switch adds the two after; the rarely read ones come last. Big runs hold tens of
/// thousands of tasks, far beyond the L1/L2 caches, and even 64 tasks overflow a 32 KiB L1, so
/// the number of lines an event touches is much of its cost.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Task {
    // --- line 0-1: the op interpreter and the running segment
    /// The program it runs (shared with its spec).
    pub program: Arc<[Op]>,
    /// Index of the next op to run.
    pub pc: usize,
    /// The program's open loops.
    pub loops: LoopStack,
    /// Work (ns at full speed) left in the current segment.
    pub seg_left: f64,
    /// User-mode CPU work (compute ops with their remote-memory slowdown, and working-set
    /// refetches), ns at full speed: what `getrusage` reports as user time. The rest of
    /// `sum_exec` (syscalls, fork, exec, switches) is system time.
    pub user_ns: f64,
    /// Size of the last message received (`CountLastRecv`).
    pub last_recv_bytes: u64,
    /// Share of its compute that is memory-bound (remote-node slowdown), 0..1.
    pub mem_intensity: f64,
    /// Scheduling state.
    pub state: TaskState,
    /// `task_cpu(p)`: where it last ran or is queued.
    pub cpu: CpuId,
    // --- line 2-3: waking a sleeping task (placement, enqueue, PELT sync)
    /// Load weight of its nice level.
    pub weight: u64,
    /// CFS/EEVDF virtual runtime, ns (the CFS queue key).
    pub vruntime: i64,
    /// EEVDF virtual deadline (the EEVDF queue key).
    pub deadline: i64,
    /// EEVDF request size, ns.
    pub slice: u64,
    /// Lag kept across a sleep or migration (`se->vlag`).
    pub vlag: i64,
    /// When it last started running (`se->exec_start`; the balancer's coldness).
    pub exec_start: Time,
    /// When it last became runnable (run-delay accounting).
    pub runnable_since: Time,
    /// Number of CPUs in `allowed` (`nr_cpus_allowed`).
    pub nr_allowed: u32,
    /// Asleep but still queued (DELAY_DEQUEUE, `se->sched_delayed`).
    pub delayed: bool,
    /// Its current segment is kernel work (a syscall op), not user compute: a reschedule
    /// requested meanwhile waits for its return to user unless the preemption model is full.
    pub in_syscall: bool,
    // PELT
    /// PELT load signal.
    pub load: Signal,
    /// PELT utilisation signal.
    pub util: Signal,
    /// When its pending wakeup was issued (wakeup latency), if one is.
    pub wake_time: Option<Time>,
    /// A slice set by its spec (`sched_attr.sched_runtime`), ns.
    pub custom_slice: Option<u64>,
    // --- line 4-5: switching in and out
    /// CPU time consumed, ns (`sum_exec_runtime`).
    pub sum_exec: u64,
    /// `sum_exec` when it was last picked (`prev_sum_exec_runtime`).
    pub prev_sum_exec: u64,
    /// RUN_TO_PARITY: the deadline its slice is protected until.
    pub protect_until_deadline: Option<i64>,
    /// Where its working set is warm (the last CPU it ran on).
    pub last_ran_cpu: Option<CpuId>,
    /// When it last stopped running.
    pub last_ran_end: Time,
    /// Working-set size, bytes (refetched after a migration).
    pub ws_bytes: u64,
    /// Time runnable but waiting, ns (`run_delay`).
    pub run_delay_ns: u64,
    /// Run time since it last woke a task, ns (2.6.2x `avg_overlap`).
    pub ran_since_wake: u64,
    /// EWMA of `ran_since_wake` at each block (2.6.2x `se->avg_overlap`), ns.
    pub avg_overlap: u64,
    /// When it last woke a task.
    pub last_wakeup_ts: Time,
    /// The NUMA node its memory is on, if placed.
    pub home_node: Option<usize>,
    /// Address-space key: tasks sharing it switch without an mm switch.
    pub mm: u32,
    /// Nice level.
    pub nice: i32,
    /// Its self event was posted while it was awake (the next `WaitSelf` returns).
    pub self_posted: bool,
    /// Blocked in `WaitChildren`: the last child's exit wakes it.
    pub waiting_children: bool,
    // --- line 6: the switch's counters and the affinity mask every placement reads (its
    // length and first words share this line)
    /// Voluntary context switches.
    pub nr_voluntary: u64,
    /// Involuntary context switches.
    pub nr_involuntary: u64,
    /// CPUs it may run on (`cpus_ptr`).
    pub allowed: CpuSet,
    // --- rarely read
    /// Generation of its sleep timer: an older timer event is stale.
    pub timer_gen: u32,
    /// Children not yet exited.
    pub live_children: u32,
    /// Index of its spec in the workload (kernel threads come after the workload's).
    pub spec: SpecId,
    /// The task that forked it.
    pub parent: Option<TaskId>,
    /// Migrations.
    pub nr_migrations: u64,
    /// Remaining spin budget of a lock attempt in progress.
    pub spin_left: u64,
    /// When it was created (the phase of its periodic `Timer`).
    pub started_at: Time,
    /// O(1) dynamic priority (its queue key's high bits).
    pub o1_prio: i32,
    /// O(1) timeslice left, ns.
    pub o1_timeslice_left: u64,
    /// O(1) sleep average, 0..1 (the interactivity bonus).
    pub o1_sleep_avg: f64,
    /// O(1) FIFO order within a priority (its queue key's low bits).
    pub o1_seq: u64,
    /// Its time stamps (`Stamp(Slot::Task)`).
    pub slots: [Time; 8],
    /// In a blocking syscall (a receive or a futex wait) whose entry half is paid: the task
    /// checked, found nothing, and sleeps at its next step unless something arrived.
    pub syscall_entered: bool,
    /// When the IPI of this task's last remote wakeup left ([`crate::time::NEVER`] when
    /// none is open): from then until this task blocks, both sides run at once (overlap).
    pub overlap_since: Time,
    /// The TCP channel this task last received from: its next TCP send carries that
    /// socket's ACK (`sim/tcp_ack.rs`).
    pub tcp_in: Option<u32>,
}

/// Idle or not, from the CPU's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuMode {
    /// Idle since `since`, in the idle state the governor chose (`state`, an index into the
    /// profile's states) until `hold`, then in the one the idle period has reached
    /// (`crate::idle::state_at`).
    Idle { since: Time, state: u8, hold: Time },
    /// Leaving idle; runs its first task at `until`.
    Exiting { until: Time },
    /// Running `curr`.
    Busy,
}

/// One CPU.
///
/// Laid out by hand like [`Task`]: the first cache line holds what every event reads (the
/// running task and its segment timing), the second what switches and wakeups read.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Cpu {
    /// Order key of the live segment-completion event (`seg_timers::IDLE` when none): the
    /// CPU's timer slot may hold an earlier, superseded key, which then fires as a no-op.
    pub seg_key: u128,
    /// The running task, if any.
    pub curr: Option<TaskId>,
    /// When the running segment completes at the current speed.
    pub seg_due: Time,
    /// When the running segment (or its current speed) started.
    pub seg_start: Time,
    /// Work done per ns (below 1 while its SMT sibling is busy).
    pub speed: f64,
    /// CFS tasks queued or running here (`cfs.h_nr_running`, delayed ones included).
    pub nr_running: u32,
    /// Wakeups selected for this CPU and not yet enqueued (`ttwu_pending`).
    pub pending: u32,
    /// Idle, leaving idle or busy.
    pub mode: CpuMode,
    /// A reschedule is pending (`TIF_NEED_RESCHED`, or the lazy bit).
    pub need_resched: bool,
    /// The pending reschedule is a lazy one (`TIF_NEED_RESCHED_LAZY`, PREEMPT_LAZY only): no
    /// IPI, acted on at the next return to user or upgraded at the next tick.
    pub resched_lazy: bool,
    /// Its scheduler tick is armed.
    pub tick_armed: bool,
    /// Generation of its tick: an older tick event is stale.
    pub tick_gen: u32,
    /// Generation of its idle exit: an older `CpuReady` event is stale.
    pub exit_gen: u32,
    /// Σ weights of runnable tasks here (the instantaneous `rq.load.weight`).
    pub runnable_weight: u64,
    /// Address space of the last task that ran here (`active_mm`).
    pub prev_mm: Option<u32>,
    /// Context switches here.
    pub nr_switches: u64,
    /// The runqueue.
    pub rq: RunQueue,
    /// Average idle period, ns (`rq->avg_idle`, the newidle gate).
    pub avg_idle: u64,
    /// Longest newidle balance, ns (`rq->max_idle_balance_cost`, caps `avg_idle`).
    pub max_idle_balance_cost: u64,
    // PELT of the CPU: load incl. blocked tasks, running time, load of runnable tasks only
    // (one cache line: the balancer reads them for every CPU it looks at).
    /// PELT load, blocked tasks included.
    pub load: Signal,
    /// PELT utilisation (running time).
    pub util: Signal,
    /// PELT load of runnable tasks only.
    pub runnable: Signal,
    /// When it went idle (`rq->idle_stamp`), while idle.
    pub idle_stamp: Option<Time>,
    /// When it last went busy or idle (busy/idle time accounting).
    pub last_mode_change: Time,
    /// Busy time accounted so far, ns.
    pub busy_ns: u64,
    /// Idle time accounted so far, ns.
    pub idle_ns: u64,
    /// Tasks kept queued by DELAY_DEQUEUE.
    pub nr_delayed: u32,
    /// `rq->cpu_load[]`, refreshed each tick while busy (read only by the eras up to 4.18;
    /// last, off the lines the wakeup path reads).
    pub cpu_load_avg: crate::cpu_load::CpuLoad,
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn loop_stack_behaves_as_a_stack() {
        let mut l = LoopStack::default();
        assert!(l.last_mut().is_none());
        l.push(1, 10);
        l.push(5, 3);
        l.push(9, 2);
        assert_eq!(l.depth(), 3);
        assert_eq!(l.last_mut().copied(), Some((9, 2)));
        l.last_mut().unwrap().1 -= 1;
        assert_eq!(l.last_mut().copied(), Some((9, 1)));
        l.pop();
        assert_eq!(l.last_mut().copied(), Some((5, 3)));
        l.pop();
        assert_eq!(l.last_mut().copied(), Some((1, 10)));
        l.pop();
        assert!(l.last_mut().is_none());
        l.pop();
        assert_eq!(l.depth(), 0);
        l.push(2, 4);
        assert_eq!(l.last_mut().copied(), Some((2, 4)));
    }

    #[test]
    fn per_event_fields_share_the_first_cache_lines() {
        // What the op interpreter and segment timing read on every event.
        for end in [
            offset_of!(Task, program) + size_of::<Arc<[Op]>>(),
            offset_of!(Task, pc) + 8,
            offset_of!(Task, loops) + size_of::<LoopStack>(),
            offset_of!(Task, seg_left) + 8,
            offset_of!(Task, user_ns) + 8,
            offset_of!(Task, state) + size_of::<TaskState>(),
            offset_of!(Task, cpu) + 8,
            offset_of!(Task, last_recv_bytes) + 8,
        ] {
            assert!(end <= 128, "task field ends at byte {end}");
        }
        for end in [
            offset_of!(Cpu, seg_key) + 16,
            offset_of!(Cpu, curr) + size_of::<Option<TaskId>>(),
            offset_of!(Cpu, seg_due) + 8,
            offset_of!(Cpu, seg_start) + 8,
            offset_of!(Cpu, speed) + 8,
            offset_of!(Cpu, nr_running) + 4,
            offset_of!(Cpu, pending) + 4,
        ] {
            assert!(end <= 64, "cpu field ends at byte {end}");
        }
        // A wakee's affinity test reads the mask's length and first word from one line,
        // and the task's other wakeup fields come before it.
        let allowed = offset_of!(Task, allowed);
        assert_eq!(
            allowed / 64,
            (allowed + 16) / 64,
            "mask length and first word split"
        );
        // Waking a sleeping task touches lines 1-3 and the mask's first line only.
        for (field, off) in [
            ("weight", offset_of!(Task, weight)),
            ("vlag", offset_of!(Task, vlag)),
            ("runnable_since", offset_of!(Task, runnable_since)),
            ("nr_allowed", offset_of!(Task, nr_allowed)),
            ("delayed", offset_of!(Task, delayed)),
            ("load", offset_of!(Task, load)),
            ("util", offset_of!(Task, util) + 15),
            ("wake_time", offset_of!(Task, wake_time) + 15),
            ("custom_slice", offset_of!(Task, custom_slice) + 15),
        ] {
            assert!((128..256).contains(&off), "{field} at byte {off}");
        }
        // The CPU's three PELT signals share a line; so do the runqueue fields every
        // enqueue, dequeue and pick reads.
        let line = |off: usize| off / 64;
        assert_eq!(
            line(offset_of!(Cpu, load)),
            line(offset_of!(Cpu, runnable) + 15)
        );
        let rq = offset_of!(Cpu, rq);
        assert_eq!(rq % 64, 0);
        for end in [
            offset_of!(RunQueue, tree) + size_of::<crate::rq::RqTree>(),
            offset_of!(RunQueue, avg_vruntime) + 16,
            offset_of!(RunQueue, min_vruntime) + 8,
            offset_of!(RunQueue, avg_load) + 8,
        ] {
            assert!(end <= 64, "runqueue field ends at byte {end}");
        }
        assert_eq!(std::mem::align_of::<Task>(), 64);
        assert_eq!(std::mem::align_of::<Cpu>(), 64);
        eprintln!(
            "Task {} bytes, Cpu {} bytes, Op {} bytes",
            size_of::<Task>(),
            size_of::<Cpu>(),
            size_of::<Op>()
        );
    }
}
