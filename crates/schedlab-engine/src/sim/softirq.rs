//! The loopback receive softirq and the per-CPU `ksoftirqd` threads.
//!
//! A loopback send raises NET_RX on the sending CPU, and `local_bh_enable()` at the end of
//! `__dev_queue_xmit()` runs it at once: `__do_softirq()` → `net_rx_action()` → the
//! receive path → the reader's wakeup, in the sender's context (`interp.rs` charges it to
//! the sender as `transfer.tcp_delivery_ns`). What the era's `__do_softirq()` does when more
//! softirqs are pending at the end of its loop decides whether `ksoftirqd` ever runs
//! ([`SoftirqThread`]):
//!
//! - a scheduler tick that fires while the softirq runs raises TIMER (2.6.x-4.7 raise it on
//!   every tick; later kernels when a timer, RCU or balance work is due — reconstructed
//!   \[M\]: every tick raises one), so it is pending when `net_rx_action()` returns;
//! - from 3.9 (c10d73671ad3, "softirq: reduce latencies") `__do_softirq()` stops restarting
//!   when `need_resched()` is set — here, when the reader's wakeup preempts the sender — and
//!   wakes the CPU's `ksoftirqd` to run the rest; before, it restarted (up to
//!   `MAX_SOFTIRQ_RESTART` times) and ran the TIMER softirq inline;
//! - from 4.10 to 6.4 (4cd13c21b207, "softirq: Let ksoftirqd do its job"; reverted in 6.5 by
//!   d15121be7485) `do_softirq()` leaves every new softirq to a runnable `ksoftirqd`: the
//!   send's receive processing waits in the CPU's backlog, and `ksoftirqd` runs it and issues
//!   the reader's wakeup as the waker `wake_affine()`, `wake_wide()` and the buddies see.
//!
//! `ksoftirqd/N` is a task pinned to CPU N (nice 0, CFS), created when first woken and
//! scheduled, preempted and accounted like any task; it is a kernel thread: it does not keep
//! a run alive and is not in [`crate::Simulation::task_stats`].
//!
//! State: reads and writes `net` (backlogs, `ksoftirqd` threads, softirq context),
//! `objects` (channels, wake tokens), `stats` (counters), `run` (liveness) and the workload
//! (a kernel thread's spec); reads `core`.

use super::Simulation;
use crate::policy::wake_flags;
use crate::state::{TaskState, WaitOn};
use crate::task::{TaskId, TaskSpec};
use crate::wake_rules::SoftirqThread;
use schedlab_topo::{CpuId, CpuSet};

use super::interp::StepOutcome;

/// Per-CPU softirq state.
#[derive(Clone, Debug, Default)]
pub(crate) struct Softirqs {
    /// Each CPU's `ksoftirqd`, once created.
    pub thread: Vec<Option<TaskId>>,
    /// Loopback deliveries left to `ksoftirqd` (channel indices), per CPU, in order.
    pub backlog: Vec<Vec<u32>>,
    /// A tick-raised softirq waits for `ksoftirqd`, per CPU.
    pub pending: Vec<bool>,
    /// The first spec index of the kernel threads (those after the workload's own).
    pub kthread_base: usize,
}

impl Softirqs {
    pub(crate) fn new(nr_cpus: usize, kthread_base: usize) -> Self {
        Softirqs {
            thread: vec![None; nr_cpus],
            backlog: vec![Vec::new(); nr_cpus],
            pending: vec![false; nr_cpus],
            kthread_base,
        }
    }
}

impl Simulation {
    /// Whether `t` is a kernel thread (`ksoftirqd`).
    #[inline]
    pub(super) fn is_kthread(&self, t: TaskId) -> bool {
        self.core.tasks[t].spec >= self.net.softirq.kthread_base
    }

    /// `ksoftirqd_running()` (4.10-6.4): the CPU's `ksoftirqd` is runnable, so new softirqs
    /// wait for it.
    pub(super) fn softirq_deferred(&self, cpu: CpuId) -> bool {
        self.core.cfg.wake.ksoftirqd == SoftirqThread::HandOver
            && self.net.softirq.thread[cpu]
                .is_some_and(|k| !matches!(self.core.tasks[k].state, TaskState::Sleeping(_)))
    }

    /// The end of an inline loopback softirq on `cpu` that ran over `[start, end)`: a tick
    /// inside it left a softirq pending, and with `need_resched()` set (3.9 on) the rest goes
    /// to `ksoftirqd`, woken by the interrupted task `t`.
    /// The wakeup is charged to `extra`, the work of `t`'s op.
    pub(super) fn softirq_exit(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        start: u64,
        end: u64,
        extra: &mut f64,
    ) {
        if self.core.cfg.wake.ksoftirqd == SoftirqThread::Inline
            || !self.core.cpus[cpu].need_resched
        {
            return;
        }
        let tick = self.core.cfg.tunables.tick_ns().max(1);
        if end / tick == start / tick {
            return;
        }
        self.net.softirq.pending[cpu] = true;
        self.wakeup_softirqd(t, cpu, extra);
    }

    /// `wakeup_softirqd()`: wakes (or first creates) `cpu`'s `ksoftirqd` on behalf of `t`,
    /// charging the wakeup to `extra`.
    pub(super) fn wakeup_softirqd(&mut self, t: TaskId, cpu: CpuId, extra: &mut f64) {
        let Some(k) = self.net.softirq.thread[cpu] else {
            self.stats.counters.ksoftirqd_wakeups += 1;
            self.spawn_ksoftirqd(cpu);
            return;
        };
        if self.core.tasks[k].state == TaskState::Sleeping(WaitOn::SelfEvent) {
            self.stats.counters.ksoftirqd_wakeups += 1;
            self.objects.token[k] = true;
            let was = std::mem::replace(&mut self.net.in_softirq, true);
            self.wake_from(k, t, cpu, wake_flags::TTWU, extra);
            self.net.in_softirq = was;
        }
    }

    fn spawn_ksoftirqd(&mut self, cpu: CpuId) {
        let n = self.core.topo.nr_cpus();
        // Its program is never read: `step_task` hands kernel threads to `step_ksoftirqd`.
        let mut spec = TaskSpec::new(format!("ksoftirqd/{cpu}"), Vec::new());
        spec.affinity = Some(CpuSet::from_cpus(n, [cpu]));
        let id = self.workload.specs.len();
        self.workload.specs.push(spec);
        let before = self.stats.counters.forks;
        let (k, _) = self.create_task(id, None, cpu);
        // A kernel thread: not a fork of the workload, and it does not keep the run alive.
        self.stats.counters.forks = before;
        self.run.live -= 1;
        self.net.softirq.thread[cpu] = Some(k);
    }

    /// One step of `ksoftirqd` (`run_ksoftirqd()`): run what is pending on its CPU (the
    /// deferred loopback deliveries, each waking its reader from here), else sleep.
    pub(super) fn step_ksoftirqd(&mut self, k: TaskId, cpu: CpuId) -> StepOutcome {
        if self.core.cpus[cpu].need_resched {
            return StepOutcome::Preempt;
        }
        self.objects.token[k] = false;
        let backlog = std::mem::take(&mut self.net.softirq.backlog[cpu]);
        let pending = std::mem::take(&mut self.net.softirq.pending[cpu]);
        if backlog.is_empty() && !pending {
            self.net.softirq.backlog[cpu] = backlog;
            return StepOutcome::Block(WaitOn::SelfEvent);
        }
        let delivery = self.core.profile.transfer.tcp_delivery_ns;
        let mut cost = 0.0;
        // The wakeups' share, as an op's `extra` (`interp.rs`), after the work left unpaid.
        let mut extra = self.run.unpaid;
        for &ch in &backlog {
            let ch = ch as usize;
            cost += delivery as f64;
            self.stats.counters.softirq_ns += delivery;
            // The message revealed is the oldest one still hidden.
            let q = &self.objects.channels[ch].queue;
            let bytes = q
                .get(q.len() - self.objects.channels[ch].hidden as usize)
                .map_or(0, |m| m.bytes);
            self.objects.channels[ch].hidden -= 1;
            cost += self.tcp_segment_received(ch, cpu, bytes) as f64;
            let kind = self.objects.channels[ch].kind;
            if let Some(r) = self.objects.channels[ch].readers.pop_front() {
                let rule = self.core.cfg.wake.reader(kind);
                self.stats.counters.wakeups_by_ksoftirqd += 1;
                self.wake_by_rule(r, k, cpu, rule, &mut extra);
            }
        }
        let mut backlog = backlog;
        backlog.clear();
        if self.net.softirq.backlog[cpu].is_empty() {
            self.net.softirq.backlog[cpu] = backlog;
        }
        // A step that ran its work: it counts as an op (`wake_from`) and pays the unpaid.
        self.run.ops_started += 1;
        self.run.unpaid = 0.0;
        self.core.tasks[k].seg_left += cost + extra;
        if self.core.tasks[k].seg_left > 0.0 {
            StepOutcome::Run
        } else {
            StepOutcome::Block(WaitOn::SelfEvent)
        }
    }
}
