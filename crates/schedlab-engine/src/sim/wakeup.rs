//! The wakeup path: `try_to_wake_up` (placement through the policy, the waker's costs, the
//! migration of the wakee's load), the wakee's arrival after the IPI or wakelist delay, and
//! `enqueue_arrival` (`ttwu_do_activate`: `place_entity`, the enqueue, then the idle kick or
//! the preemption check).
//!
//! State: reads and writes `core` (tasks, CPUs), `stats` (counters, placement steps, trace)
//! and the policy's hints; reads `net` (softirq context) and `run`; pushes events. The
//! waker's cost is not written here: `try_to_wake_up` returns it as a [`WakeCost`].

use super::Simulation;
use super::queue::Event;
use crate::config::ClassKind;
use crate::policy::{PlacementRecord, Step, WakeCtx, WakeFlags};
use crate::state::{CpuMode, TaskState};
use crate::task::TaskId;
use schedlab_topo::CpuId;
use schedlab_trace::TraceEvent;

impl Simulation {
    /// Asks the policy for a CPU and validates the answer; also returns the cost of the
    /// search, ns, which the waker (when there is one) pays.
    pub(super) fn select_cpu(
        &mut self,
        p: TaskId,
        waker: Option<TaskId>,
        waker_cpu: CpuId,
        flags: WakeFlags,
    ) -> (CpuId, f64) {
        let prev = self.core.tasks[p].cpu;
        let mut rec = PlacementRecord::default();
        let ctx = WakeCtx {
            now: self.core.now,
            wakee: p,
            waker,
            waker_cpu,
            prev_cpu: prev,
            flags,
        };
        let cpu = if self.core.tasks[p].nr_allowed == 1 {
            rec.step = Step::Pinned;
            self.core.tasks[p].allowed.first().unwrap_or(prev)
        } else {
            let view = self.core.view();
            self.policy
                .select_task_rq(&ctx, &view, &mut self.hints, &mut rec)
        };
        let cpu = if cpu.index() < self.core.cpus.len() && self.core.tasks[p].allowed.contains(cpu)
        {
            cpu
        } else {
            self.fallback_cpu(p, prev)
        };
        // Cost of deciding, charged to the waker.
        let s = &self.core.profile.search;
        let search = rec.examined as u64 * s.scan_per_cpu_ns
            + rec.examined_remote as u64 * s.scan_per_cpu_remote_ns;
        self.stats.counters.searches += 1;
        self.stats.counters.cpus_examined += (rec.examined + rec.examined_remote) as u64;
        self.stats.counters.search_cost_ns += search;
        self.stats.place_steps[rec.step as usize] += 1;
        self.stats.place_affine[rec.affine as usize] += 1;
        if rec.pulled() {
            self.stats.counters.wakeups_affine += u64::from(flags.contains(WakeFlags::TTWU));
        }
        if flags.contains(WakeFlags::TTWU) {
            self.ttwu_schedstat(waker_cpu, cpu, prev, &rec);
        }
        if let Some(tr) = &mut self.stats.trace {
            tr.events.push(TraceEvent::Placement {
                ts_ns: self.core.now,
                cpu: waker_cpu.index() as u32,
                waker_pid: waker.map_or(0, TaskId::pid),
                wakee_pid: p.pid(),
                prev_cpu: prev.index() as u32,
                target_cpu: cpu.index() as u32,
                path: rec.to_string(),
                examined: rec.examined + rec.examined_remote,
            });
        }
        (cpu, search as f64)
    }

    /// SIS_CACHE: folds the sleep just ended into the task's average when it was short
    /// (below `sysctl_sched_migration_cost`, our reading of "short" \[M\]), EWMA 1/8.
    fn note_short_sleep(&mut self, p: TaskId) {
        let now = self.core.now;
        let short = self.core.cfg.tunables.migration_cost_ns;
        let h = &mut self.hints.task[p];
        if let Some(start) = h.sleep_start.take() {
            let d = now.saturating_sub(start);
            if d < short {
                let avg = h.sleep_avg as i64 + (d as i64 - h.sleep_avg as i64) / 8;
                h.sleep_avg = avg.max(0) as u64;
            }
        }
    }

    /// `select_fallback_rq`: prev if allowed, else an allowed CPU on prev's node, else any.
    pub(super) fn fallback_cpu(&self, p: TaskId, prev: CpuId) -> CpuId {
        let allowed = &self.core.tasks[p].allowed;
        if allowed.contains(prev) {
            return prev;
        }
        let node = self.core.topo.node_span(prev);
        node.iter()
            .find(|&c| allowed.contains(c))
            .or(allowed.first())
            .unwrap_or(prev)
    }

    /// Models `try_to_wake_up()` (kernel/sched/core.c), whose shape is the same from 2.5.59
    /// to 6.12: places a sleeping task and sends it on its way to the chosen CPU.
    ///
    /// A task still on its runqueue (6.12's DELAY_DEQUEUE, `ttwu_runnable()`) is only made
    /// runnable again. Otherwise the policy picks the CPU ([`Simulation::select_cpu`]: the
    /// kernel's `select_task_rq()` → `select_task_rq_fair()` from 2.6.23, the era's
    /// placement code before; the policies crate holds them per era), the
    /// chosen CPU counts the task at once (`pending`, what `ttwu_pending_visible` eras let
    /// back-to-back wakeups see), and the wakee is enqueued at once (a local wakeup) or after
    /// the IPI to an idle CPU or the wakelist delay (`ttwu_queue_wakelist()`, TTWU_QUEUE, 3.0+,
    /// for CPUs that share no LLC) — see [`Simulation::enqueue_arrival`].
    ///
    /// `work` is what the waker's current op has done before this wakeup; the returned
    /// [`WakeCost`] is what the wakeup adds to it (nothing without a waker task).
    ///
    /// Reconstructed \[M\]: the search, wake, IPI and wakelist costs are the machine
    /// profile's numbers, charged to the waker (a remote wakee cannot arrive before the
    /// waker's work that precedes the IPI); the locks (`p->pi_lock`, the runqueue locks) and
    /// the `p->on_cpu` wait are not modelled; the O(1) era's sleep-average bonus is the
    /// simplified `o1_sleep_avg`.
    pub(crate) fn try_to_wake_up(
        &mut self,
        p: TaskId,
        waker: Option<TaskId>,
        waker_cpu: CpuId,
        flags: WakeFlags,
        work: f64,
    ) -> WakeCost {
        let TaskState::Sleeping(_) = self.core.tasks[p].state else {
            debug_assert!(
                false,
                "waking task {p} in state {:?}",
                self.core.tasks[p].state
            );
            return WakeCost::NONE;
        };
        self.note_wake_graph(p, waker, waker_cpu);
        let sync = flags.contains(WakeFlags::SYNC) && waker.is_some();
        // 2.6.2x avg_overlap: how long the waker keeps running after a wakeup.
        if let Some(w) = waker {
            self.core.tasks[w].ran_since_wake = 0;
            self.core.tasks[w].last_wakeup_ts = self.core.now;
        }
        if self.core.tasks[p].delayed {
            self.ttwu_runnable(p, waker_cpu, sync);
            return WakeCost::NONE;
        }
        self.ttwu_stat(waker, sync);
        if self.core.cfg.class == ClassKind::O1 {
            let slept = (self.core.now - self.core.tasks[p].last_ran_end) as f64 / 1e9;
            let t = &mut self.core.tasks[p];
            t.o1_sleep_avg = (t.o1_sleep_avg + slept).min(1.0);
        }
        if self.core.cfg.features.track_short_sleep {
            self.note_short_sleep(p);
        }
        let (cpu, search) = self.select_cpu(p, waker, waker_cpu, flags);
        let view_idle = {
            let v = self.view();
            v.idle(cpu)
        };
        if view_idle {
            self.stats.counters.wakeups_to_idle += 1;
        }
        let remote = cpu != waker_cpu || waker.is_none();
        if cpu == waker_cpu {
            self.stats.counters.wakeups_local += 1;
        } else {
            self.stats.counters.wakeups_remote += 1;
        }
        let via = self.wake_path(remote, waker_cpu, cpu);
        let mut cost = WakeCost::NONE;
        if waker.is_some() {
            cost.search = search;
            cost.wake = self.wake_cost_ns(via) as f64;
        }
        self.trace_waking(p, waker_cpu, cpu);
        if cpu != self.core.tasks[p].cpu {
            self.migrate_task(p, cpu, false);
        }
        self.core.tasks[p].state = TaskState::Waking(cpu);
        self.core.tasks[p].wake_time = Some(self.core.now);
        self.run.nr_active += 1;
        self.core.cpus[cpu].pending += 1;
        // The waker sends an IPI at the end of its wake work: the send itself (`ipi_send_ns`
        // of `remote_wake_ns`) runs while the IPI is delivered; a polling CPU needs no send.
        let send = self.core.profile.wakeup.ipi_send_ns as f64;
        let overlapped = match via {
            Via::IdleIpi | Via::Wakelist if waker.is_some() => send,
            Via::Polling if waker.is_some() => {
                cost.ipi_send_saved = Some(send);
                0.0
            }
            _ => 0.0,
        };
        if waker.is_some() {
            self.count_wake_cost(remote, via, cost.wake as u64);
        }
        // A remote wakee cannot arrive before the waker has finished the work that precedes
        // the IPI or the remote enqueue: its syscall so far, the search and the wake itself
        // (and, for a batch of wakeups in one op, the wakeups before it).
        let lead = match waker {
            Some(w) => {
                let mut before = work;
                cost.charge(&mut before);
                crate::time::round_u64((self.core.tasks[w].seg_left + before - overlapped).max(0.0))
            }
            None => 0,
        };
        if remote && let Some(w) = waker {
            self.open_overlap(w, self.core.now.saturating_add(lead));
        }
        self.ttwu_queue(p, cpu, flags, via, waker.is_some(), lead);
        cost
    }

    /// The waker's own work for a wakeup by the path it takes (`try_to_wake_up()` →
    /// `ttwu_queue()`): onto its own CPU; onto another CPU of its LLC that is running a task,
    /// under that runqueue's lock with no IPI (`remote_busy_wake_ns`, where the profile has
    /// it; the reschedule IPI of a wakee that preempts there is not split out); onto an idle
    /// CPU or through another LLC's wakelist, which ends in an IPI (`remote_wake_ns`).
    fn wake_cost_ns(&self, via: Via) -> u64 {
        let w = &self.core.profile.wakeup;
        match via {
            Via::Local => w.local_wake_ns,
            Via::Enqueue if w.remote_busy_wake_ns > 0 => w.remote_busy_wake_ns,
            Via::Enqueue | Via::Polling | Via::IdleIpi | Via::Wakelist => w.remote_wake_ns,
        }
    }

    /// The time budget's wakeup classes: the waker's local or remote wake work, the IPI
    /// send split out of a remote one (none to a polling CPU, which needs no send).
    fn count_wake_cost(&mut self, remote: bool, via: Via, wake: u64) {
        let c = &mut self.stats.counters;
        if !remote {
            c.wake_local_cost_ns += wake;
            return;
        }
        let send = self.core.profile.wakeup.ipi_send_ns.min(wake);
        match via {
            Via::IdleIpi | Via::Wakelist => {
                c.ipi_send_cost_ns += send;
                c.wake_remote_cost_ns += wake - send;
            }
            Via::Polling => c.wake_remote_cost_ns += wake - send,
            _ => c.wake_remote_cost_ns += wake,
        }
    }

    /// `ttwu_runnable()`: `p` is still queued (DELAY_DEQUEUE), so it is only made runnable
    /// again on its CPU: no CPU selection, only `requeue_delayed_entity()` and the
    /// preemption check (6.12 through 7.1: the rewrites that would dequeue it and take the
    /// full wakeup path never reached mainline). With DELAY_ZERO a lag that turned positive
    /// while it was delayed is dropped and the task is re-placed at the average. The
    /// requeue does not charge the running waker first (`requeue_delayed_entity()` calls no
    /// `update_curr()`): the lag and the re-placement see the waker at its vruntime as of
    /// its pick or last tick, and only `check_preempt_wakeup_fair()` brings it up to date.
    /// So a delayed wakee whose partner has run past its lead since the pick preempts. It emits `sched_waking` and `sched_wakeup` like any wakeup
    /// (`try_to_wake_up()` traces the waking before the on-runqueue test, and
    /// `ttwu_do_wakeup()` the wakeup).
    fn ttwu_runnable(&mut self, p: TaskId, waker_cpu: CpuId, sync: bool) {
        let cpu = self.core.tasks[p].cpu;
        self.sync_task_pelt(p);
        self.core.tasks[p].delayed = false;
        self.core.cpus[cpu].nr_delayed -= 1;
        self.trace_waking(p, waker_cpu, cpu);
        self.trace_wakeup(p, cpu);
        if self.core.cfg.features.delay_zero {
            if self.core.cfg.features.requeue_update_curr {
                self.update_curr(cpu);
            }
            self.save_lag(cpu, p);
            if self.core.tasks[p].vlag > 0 {
                self.rq_remove(cpu, p);
                self.core.tasks[p].vlag = 0;
                self.place_entity(cpu, p, false);
                self.rq_insert(cpu, p);
            }
        }
        self.core.tasks[p].state = TaskState::Queued(cpu);
        self.core.tasks[p].runnable_since = self.core.now;
        self.core.tasks[p].wake_time = Some(self.core.now);
        self.run.nr_active += 1;
        self.set_waiting(1);
        self.stats.counters.wakeups += 1;
        self.wakeup_preempt(cpu, p, sync, false);
    }

    /// `sched_waking` of `p`, on the waker's CPU, for `target` (a traced run only).
    fn trace_waking(&mut self, p: TaskId, waker_cpu: CpuId, target: CpuId) {
        if let Some(tr) = &mut self.stats.trace {
            tr.events.push(TraceEvent::Waking {
                ts_ns: self.core.now,
                cpu: waker_cpu.index() as u32,
                pid: p.pid(),
                prio: 120 + self.core.tasks[p].nice,
                target_cpu: target.index() as u32,
            });
        }
    }

    /// `sched_wakeup` of `p`, enqueued on `cpu` (a traced run only).
    fn trace_wakeup(&mut self, p: TaskId, cpu: CpuId) {
        if let Some(tr) = &mut self.stats.trace {
            tr.events.push(TraceEvent::Wakeup {
                ts_ns: self.core.now,
                cpu: cpu.index() as u32,
                pid: p.pid(),
                prio: 120 + self.core.tasks[p].nice,
                target_cpu: cpu.index() as u32,
            });
        }
    }

    /// `ttwu_stat()`: counts a wakeup that places its task, by kind.
    fn ttwu_stat(&mut self, waker: Option<TaskId>, sync: bool) {
        self.stats.counters.wakeups += 1;
        if sync {
            self.stats.counters.wakeups_sync += 1;
        }
        if waker.is_none() {
            self.stats.counters.wakeups_irq += 1;
        } else if !sync {
            self.stats.counters.wakeups_nonsync += 1;
        }
        if self.net.in_softirq {
            self.stats.counters.wakeups_softirq += 1;
        }
    }

    /// How the wakee reaches `cpu`: a local enqueue; an idle CPU polling in idle
    /// (TIF_POLLING_NRFLAG), which sees need_resched set and needs no IPI (resched_task()'s
    /// tsk_is_polling() test in 2.6.x, set_nr_and_not_polling() and ttwu_queue_remote()'s
    /// set_nr_if_polling() from 3.16); an IPI to an idle CPU; the wakelist IPI across LLCs;
    /// or a remote enqueue under the target's lock.
    fn wake_path(&self, remote: bool, waker_cpu: CpuId, cpu: CpuId) -> Via {
        if !remote {
            Via::Local
        } else if let CpuMode::Idle { since, state, hold } = self.core.cpus[cpu].mode
            && self.core.cpus[cpu].curr.is_none()
        {
            let polling =
                crate::idle::state_at(&self.core.profile, state, since, hold, self.core.now)
                    .is_some_and(|s| s.polling);
            if polling { Via::Polling } else { Via::IdleIpi }
        } else if self.core.cfg.features.ttwu_queue
            && !self.core.topo.cpus_share_cache(waker_cpu, cpu)
        {
            Via::Wakelist
        } else {
            Via::Enqueue
        }
    }

    /// `ttwu_queue()`: enqueues `p` on `cpu` now (a local wakeup) or schedules its arrival
    /// `lead` ns (the waker's work before the IPI) plus the path's delay from now.
    fn ttwu_queue(
        &mut self,
        p: TaskId,
        cpu: CpuId,
        flags: WakeFlags,
        via: Via,
        has_waker: bool,
        lead: u64,
    ) {
        let delay = match via {
            Via::Local => 0,
            Via::Polling => {
                self.stats.counters.wakeups_polling += 1;
                lead
            }
            Via::IdleIpi => {
                self.stats.counters.ipis += 1;
                if has_waker {
                    lead + self.core.profile.wakeup.ipi_ns
                } else {
                    0
                }
            }
            Via::Wakelist => {
                self.stats.counters.ipis += 1;
                lead + self.core.profile.wakeup.ttwu_queue_delay_ns
            }
            Via::Enqueue => lead,
        };
        if delay == 0 {
            self.enqueue_arrival(p, cpu, flags, false);
        } else {
            self.events.push(
                self.core.now + delay,
                Event::Arrive {
                    task: p.index() as u32,
                    cpu: cpu.index() as u32,
                    flags: flags.bits(),
                },
            );
        }
    }

    pub(super) fn arrive(&mut self, p: TaskId, cpu: CpuId, flags: WakeFlags) {
        if self.core.tasks[p].state != TaskState::Waking(cpu) {
            return;
        }
        self.enqueue_arrival(p, cpu, flags, false);
    }

    /// The wakee lands on `cpu`'s runqueue (`ttwu_do_activate()`, and `wake_up_new_task()`
    /// for a fork with `initial`): placement of its vruntime (`place_entity`), the enqueue,
    /// then [`Simulation::wakeup_preempt`].
    pub(super) fn enqueue_arrival(
        &mut self,
        p: TaskId,
        cpu: CpuId,
        flags: WakeFlags,
        initial: bool,
    ) {
        self.core.cpus[cpu].pending -= 1;
        self.sync_task_pelt(p);
        self.sync_cpu_pelt(cpu);
        // `enqueue_entity()` brings the running task's vruntime up to date before placing
        // the newcomer (2.6.24+): the average (EEVDF) or min_vruntime (CFS) it is placed
        // against includes what curr ran since its last update.
        self.update_curr(cpu);
        self.place_entity(cpu, p, initial);
        self.join_runnable(cpu, p);
        self.core.tasks[p].state = TaskState::Queued(cpu);
        self.core.tasks[p].runnable_since = self.core.now;
        self.rq_insert(cpu, p);
        self.set_waiting(1);
        if !initial {
            self.trace_wakeup(p, cpu);
        }
        let sync = flags.contains(WakeFlags::SYNC);
        let fork = flags.contains(WakeFlags::FORK);
        self.wakeup_preempt(cpu, p, sync, fork);
    }

    /// `p` was just made runnable on `cpu`'s queue (a wakeup, a fork, an exec or a balancer
    /// move): an idle CPU is woken, a busy one asks its class whether `p` preempts the running
    /// task. Models the kernel's `wakeup_preempt()` (6.7+; `check_preempt_curr()` from 2.6.23
    /// to 6.6, `TASK_PREEMPTS_CURR()` → `resched_task()` in the O(1) scheduler), called from
    /// `ttwu_do_activate()` (`ttwu_do_wakeup()` before 5.x), `wake_up_new_task()` and
    /// `attach_task()`. For an idle CPU the kernel's check ends in `resched_curr()` of the
    /// idle task; here that is [`Simulation::kick_idle`], which charges the idle state's exit
    /// latency. A CPU already leaving idle, or between tasks in a newly-idle balance, picks
    /// the task by itself.
    pub(super) fn wakeup_preempt(&mut self, cpu: CpuId, p: TaskId, sync: bool, fork: bool) {
        match self.core.cpus[cpu].mode {
            CpuMode::Idle { .. } => self.kick_idle(cpu),
            CpuMode::Exiting { .. } => {}
            CpuMode::Busy => {
                if self.core.cpus[cpu].curr.is_some()
                    && self.check_preempt_wakeup(cpu, p, sync, fork)
                {
                    self.stats.counters.preempt_wakeup += 1;
                    self.resched_curr(cpu);
                }
            }
        }
    }
}

/// How a wakee reaches its chosen CPU (see `try_to_wake_up`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Via {
    Local,
    Polling,
    IdleIpi,
    Wakelist,
    Enqueue,
}

/// What one wakeup costs its waker, in the order the waker pays it: the search for a CPU,
/// the wake itself (local or remote), and, for a CPU polling in idle, the IPI send it
/// needs not make (`ipi_send_ns` is part of `remote_wake_ns`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[must_use]
pub(crate) struct WakeCost {
    /// The placement search, ns.
    pub search: f64,
    /// The wake, ns.
    pub wake: f64,
    /// The IPI send saved on a polling CPU, ns.
    pub ipi_send_saved: Option<f64>,
}

impl WakeCost {
    /// No cost: no waker task, or a wakee still on its queue.
    pub(crate) const NONE: WakeCost = WakeCost {
        search: 0.0,
        wake: 0.0,
        ipi_send_saved: None,
    };

    /// Adds this wakeup to `work`, the waker's work so far, in the order the waker pays it
    /// (so a batch of wakeups sums exactly as they happen).
    #[inline]
    pub(crate) fn charge(self, work: &mut f64) {
        *work += self.search;
        *work += self.wake;
        if let Some(send) = self.ipi_send_saved {
            *work = (*work - send).max(0.0);
        }
    }
}
