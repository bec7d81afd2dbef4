//! The switch: `schedule` (put the previous task back, pick the next, newidle balance before
//! going idle), `switch_to` (the context-switch and working-set refetch costs), idle entry
//! and exit (`kick_idle`: the idle state's exit latency) and immediate rescheduling.
//!
//! State: reads and writes `core` (CPUs, tasks, runqueues), `stats` (counters, trace),
//! `idle` (the governor's data) and the policy's hints; pushes events; calls the balancer.

use super::Simulation;
use super::queue::Event;
use crate::config::PreemptModel;
use crate::idle::state_index_at;
use crate::seg_timers;
use crate::state::{CpuMode, TaskState};
use crate::task::TaskId;
use schedlab_topo::CpuId;
use schedlab_trace::{PrevState, TraceEvent};

impl Simulation {
    pub(super) fn schedule(&mut self, cpu: CpuId, prev_state: Option<PrevState>) {
        let prev = self.core.cpus[cpu].curr;
        self.core.cpus[cpu].need_resched = false;
        self.core.cpus[cpu].resched_lazy = false;
        self.stats.sched[cpu].sched_count += 1;
        if let Some(p) = prev {
            self.update_curr(cpu);
            self.settle(cpu);
            if self.core.tasks[p].state == TaskState::Running(cpu) {
                // Preempted or yielding: back into the tree.
                self.sync_task_pelt(p);
                self.core.tasks[p].state = TaskState::Queued(cpu);
                self.core.tasks[p].runnable_since = self.core.now;
                self.rq_insert(cpu, p);
                self.set_waiting(1);
            }
            let t = &mut self.core.tasks[p];
            t.last_ran_cpu = Some(cpu);
            t.last_ran_end = self.core.now;
        }
        let mut next = self.pick_next_and_dequeue(cpu);
        if next.is_none() {
            // About to go idle: newidle balance may pull work.
            if prev.is_some() || matches!(self.core.cpus[cpu].mode, CpuMode::Exiting { .. }) {
                self.set_curr_none_for_balance(cpu, prev, prev_state);
                self.newidle_balance(cpu);
                next = self.pick_next_and_dequeue(cpu);
                if next.is_none() {
                    self.stats.sched[cpu].sched_goidle += 1;
                    self.go_idle(cpu);
                    return;
                }
                self.switch_to(cpu, None, None, next.unwrap_or_default());
                return;
            }
            self.stats.sched[cpu].sched_goidle += 1;
            self.go_idle(cpu);
            return;
        }
        let next = next.unwrap_or_default();
        self.switch_to(cpu, prev, prev_state, next);
    }

    /// Records the switch-out of `prev` to idle before a newidle balance.
    pub(super) fn set_curr_none_for_balance(
        &mut self,
        cpu: CpuId,
        prev: Option<TaskId>,
        prev_state: Option<PrevState>,
    ) {
        if let Some(p) = prev {
            self.record_switch(cpu, Some(p), prev_state, None);
            self.core.cpus[cpu].prev_mm = Some(self.core.tasks[p].mm);
        }
        self.set_curr(cpu, None);
        self.core.cpus[cpu].mode = CpuMode::Busy;
    }

    pub(super) fn pick_next_and_dequeue(&mut self, cpu: CpuId) -> Option<TaskId> {
        loop {
            // curr (if any) was put back in the tree by the caller.
            let saved = self.core.cpus[cpu].curr.take();
            let next = self.pick_next(cpu);
            self.core.cpus[cpu].curr = saved;
            let next = next?;
            if self.core.tasks[next].delayed {
                // DELAY_DEQUEUE: a delayed task picked is finally dequeued, not run.
                self.finish_delayed_dequeue(cpu, next);
                continue;
            }
            self.rq_remove(cpu, next);
            self.set_waiting(-1);
            return Some(next);
        }
    }

    /// The end of a delayed dequeue (`dequeue_entity(DEQUEUE_DELAYED)` and
    /// `finish_delayed_dequeue_entity()`): the lag is taken while the task still counts in
    /// the average (`update_entity_lag()` before `__dequeue_entity()`), then it leaves the
    /// runqueue; with DELAY_ZERO (6.12) no positive lag is kept.
    pub(crate) fn finish_delayed_dequeue(&mut self, cpu: CpuId, t: TaskId) {
        self.save_lag(cpu, t);
        self.rq_remove(cpu, t);
        self.sync_task_pelt(t);
        self.sync_cpu_pelt(cpu);
        self.core.tasks[t].delayed = false;
        self.core.cpus[cpu].nr_delayed -= 1;
        self.leave_runnable(cpu, t);
        if self.core.cfg.features.delay_zero {
            let task = &mut self.core.tasks[t];
            task.vlag = task.vlag.min(0);
        }
    }

    pub(super) fn record_switch(
        &mut self,
        cpu: CpuId,
        prev: Option<TaskId>,
        prev_state: Option<PrevState>,
        next: Option<TaskId>,
    ) {
        self.stats.counters.ctx_switches += 1;
        match prev_state {
            Some(PrevState::Runnable) | None if prev.is_some() => {
                self.stats.counters.ctx_involuntary += 1;
                if let Some(p) = prev {
                    self.core.tasks[p].nr_involuntary += 1;
                }
            }
            Some(_) => {
                self.stats.counters.ctx_voluntary += 1;
                if let Some(p) = prev {
                    self.core.tasks[p].nr_voluntary += 1;
                }
            }
            None => {}
        }
        if let Some(tr) = &mut self.stats.trace {
            let prio = |t: Option<TaskId>| t.map_or(120, |t| 120 + self.core.tasks[t].nice);
            tr.events.push(TraceEvent::Switch {
                ts_ns: self.core.now,
                cpu: cpu.index() as u32,
                prev_pid: prev.map_or(0, TaskId::pid),
                prev_prio: prio(prev),
                prev_state: if prev.is_none() {
                    PrevState::Runnable
                } else {
                    prev_state.unwrap_or(PrevState::Runnable)
                },
                next_pid: next.map_or(0, TaskId::pid),
                next_prio: prio(next),
            });
        }
    }

    pub(super) fn switch_to(
        &mut self,
        cpu: CpuId,
        prev: Option<TaskId>,
        prev_state: Option<PrevState>,
        next: TaskId,
    ) {
        if prev != Some(next) {
            self.record_switch(cpu, prev, prev_state, Some(next));
        }
        let prev_mm = prev
            .map(|p| self.core.tasks[p].mm)
            .or(self.core.cpus[cpu].prev_mm);
        self.core.cpus[cpu].mode = CpuMode::Busy;
        self.core.cpus[cpu].nr_switches += 1;
        // Costs of running `next` here: the switch itself and its working set.
        let mut overhead = 0.0;
        if prev != Some(next) {
            let sw = if prev_mm == Some(self.core.tasks[next].mm) {
                self.core.profile.cpu.ctx_switch_ns
            } else {
                self.core.profile.cpu.ctx_switch_mm_ns
            };
            overhead += sw as f64;
            self.stats.counters.ctx_switch_cost_ns += sw;
            let refetch = self.refetch_cost(next, cpu);
            overhead += refetch;
            self.stats.counters.refetch_cost_ns += refetch as u64;
            // User/system split: refetching one's own working set stalls user code.
            self.core.tasks[next].user_ns += refetch;
        }
        self.core.cpus[cpu].prev_mm = Some(self.core.tasks[next].mm);
        // Run delay and wakeup latency.
        let now = self.core.now;
        {
            let t = &mut self.core.tasks[next];
            t.run_delay_ns += now - t.runnable_since;
            let st = &mut self.stats.sched[cpu];
            st.run_delay_ns += now - t.runnable_since;
            st.timeslices += u64::from(prev != Some(next));
            if let Some(w) = t.wake_time.take() {
                let stats = &mut self.stats;
                stats
                    .short_latency
                    .record(&mut stats.counters.wakeup_latency, (now - w).max(1));
            }
            if t.home_node.is_none() {
                t.home_node = Some(self.core.topo.cpu(cpu).node);
            }
        }
        self.sync_task_pelt(next);
        self.core.tasks[next].state = TaskState::Running(cpu);
        // A task preempted in the middle of a segment (user work or the tail of a syscall)
        // must finish it before its next op runs.
        let interrupted = self.core.tasks[next].seg_left > 0.0;
        self.core.tasks[next].seg_left += overhead;
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

    pub(super) fn go_idle(&mut self, cpu: CpuId) {
        if let Some(p) = self.core.cpus[cpu].curr {
            // (prev already recorded by set_curr_none_for_balance when it balanced)
            self.core.cpus[cpu].prev_mm = Some(self.core.tasks[p].mm);
            self.set_curr(cpu, None);
        }
        if self.core.cpus[cpu].mode == CpuMode::Busy
            || matches!(self.core.cpus[cpu].mode, CpuMode::Exiting { .. })
        {
            // cpuidle_select(): the governor picks the state from what it expects.
            let tick = self.core.cfg.tunables.tick_ns();
            let mut sleep_length = self.next_timer_ns(cpu).unwrap_or(crate::idle::NO_TIMER_NS);
            if self.balancer.wants_idle_ticks() {
                sleep_length = sleep_length.min(tick);
            }
            let (state, hold) = self.idle.idle_gov[cpu.index()].select(
                &self.core.profile,
                self.core.now,
                sleep_length,
                tick,
            );
            self.core.cpus[cpu].mode = CpuMode::Idle {
                since: self.core.now,
                state,
                hold,
            };
            self.core.cpus[cpu].idle_stamp = Some(self.core.now);
        }
        self.core.cpus[cpu].seg_key = seg_timers::IDLE;
        // has_idle_cores: set when a CPU goes idle and all of its siblings are idle.
        if self.core.smt {
            let view = self.view();
            if view.core_idle(cpu) {
                let llc = self.core.topo.cpu(cpu).llc;
                self.hints.llc[llc].has_idle_cores = true;
            }
        }
        // The 2020/2022 idle cpumask: a CPU entering idle sets its bit.
        if self.core.cfg.features.idle_cpumask {
            let llc = self.core.topo.cpu(cpu).llc;
            self.hints.llc[llc].idle_cpus.insert(cpu);
        }
        // NOHZ: a tick already in flight is left to fire once and then not re-armed, which
        // keeps the queue free of stale ticks when CPUs idle many times per jiffy.
        if self.balancer.wants_idle_ticks() {
            self.arm_tick(cpu);
        }
    }

    /// Wakes an idle CPU for a task that was just enqueued on it.
    pub(super) fn kick_idle(&mut self, cpu: CpuId) {
        let CpuMode::Idle { since, state, hold } = self.core.cpus[cpu].mode else {
            return;
        };
        let idle_for = self.core.now - since;
        let exit = match state_index_at(&self.core.profile, state, since, hold, self.core.now) {
            Some(i) => {
                self.idle.idle_state_exits[i] += 1;
                self.core.profile.wakeup.idle_states[i].exit_ns
            }
            None => 0,
        };
        // cpuidle_reflect(): the governor learns from the period just ended.
        self.idle.idle_gov[cpu.index()].reflect(&self.core.profile, idle_for);
        // avg_idle: fold the idle period just ended.
        let c = &mut self.core.cpus[cpu];
        if let Some(stamp) = c.idle_stamp.take() {
            let d = self.core.now - stamp;
            let avg = c.avg_idle as i64 + (d as i64 - c.avg_idle as i64) / 8;
            c.avg_idle = (avg.max(0) as u64).min(2 * c.max_idle_balance_cost);
            let jiffies = self.core.now / self.core.cfg.tunables.tick_ns();
            self.hints.cpu[cpu].wake_avg_idle = c.avg_idle / 2;
            self.hints.cpu[cpu].wake_stamp = jiffies;
        }
        self.stats.counters.idle_exits += 1;
        self.stats.counters.idle_exit_ns += exit;
        let c = &mut self.core.cpus[cpu];
        c.mode = CpuMode::Exiting {
            until: self.core.now + exit,
        };
        c.exit_gen = c.exit_gen.wrapping_add(1);
        let g_n = c.exit_gen;
        self.events.push(
            self.core.now + exit,
            Event::CpuReady {
                cpu: cpu.index() as u32,
                g_n,
            },
        );
    }

    /// `resched_curr()` of `cpu` for a fair-class request (a wakeup preemption): sets
    /// need_resched (the lazy bit under PREEMPT_LAZY, 6.13's `resched_curr_lazy()`) and
    /// reschedules at once where the preemption model lets the request take effect now
    /// ([`Simulation::resched_takes_effect`]); otherwise the running task goes on to its
    /// next preemption point: the end of its current op (its return to user, checked at the
    /// top of `step_task`) or, for a lazy request, the next tick.
    pub(super) fn resched_curr(&mut self, cpu: CpuId) {
        if self.core.cpus[cpu].curr.is_none() {
            return;
        }
        self.request_resched(cpu);
        if self.run.executing == Some(cpu) {
            // The waker itself, inside its syscall: `continue_task` decides at the op's end.
            return;
        }
        if self.resched_takes_effect(cpu) {
            self.schedule(cpu, None);
        }
    }

    /// Sets `cpu`'s need_resched for a fair-class request: the lazy bit under PREEMPT_LAZY
    /// (6.13 `resched_curr_lazy()`), the full one otherwise; a full request already pending
    /// stays full.
    pub(super) fn request_resched(&mut self, cpu: CpuId) {
        let lazy = self.core.cfg.preempt == PreemptModel::Lazy;
        let c = &mut self.core.cpus[cpu];
        c.resched_lazy = lazy && (!c.need_resched || c.resched_lazy);
        c.need_resched = true;
    }

    /// Whether a pending reschedule of `cpu` takes effect now, at an interrupt (the IPI of
    /// a remote wakeup, the tick) or right after the running task's own wakeup call: under
    /// PREEMPT_NONE/VOLUNTARY only when its task runs user code (the interrupt returns to
    /// user); under full preemption always; under PREEMPT_LAZY when the request is a full
    /// one (the lazy bit sends no IPI and waits for a return to user or the tick's upgrade).
    pub(super) fn resched_takes_effect(&self, cpu: CpuId) -> bool {
        let c = &self.core.cpus[cpu];
        let Some(t) = c.curr else {
            return false;
        };
        match self.core.cfg.preempt {
            PreemptModel::Full => true,
            PreemptModel::None | PreemptModel::Voluntary => !self.core.tasks[t].in_syscall,
            PreemptModel::Lazy => !c.resched_lazy,
        }
    }
}
