//! The switch: `schedule` (put the previous task back, pick the next, newidle balance before
//! going idle), `switch_to` (the context-switch and working-set refetch costs), idle entry
//! and exit (`kick_idle`: the idle state's exit latency) and immediate rescheduling.

use super::Simulation;
use super::queue::Event;
use crate::idle::state_index_at;
use crate::seg_timers;
use crate::state::{CpuMode, TaskState};
use crate::task::TaskId;
use schedlab_topo::CpuId;
use schedlab_trace::{PrevState, TraceEvent};

impl Simulation {
    pub(super) fn schedule(&mut self, cpu: CpuId, prev_state: Option<PrevState>) {
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
                self.switch_to(cpu, None, None, next.unwrap_or_default());
                return;
            }
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
            self.cpus[cpu].prev_mm = Some(self.tasks[p].mm);
        }
        self.set_curr(cpu, None);
        self.cpus[cpu].mode = CpuMode::Busy;
    }

    pub(super) fn pick_next_and_dequeue(&mut self, cpu: CpuId) -> Option<TaskId> {
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

    pub(super) fn record_switch(
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

    pub(super) fn go_idle(&mut self, cpu: CpuId) {
        if let Some(p) = self.cpus[cpu].curr {
            // (prev already recorded by set_curr_none_for_balance when it balanced)
            self.cpus[cpu].prev_mm = Some(self.tasks[p].mm);
            self.set_curr(cpu, None);
        }
        if self.cpus[cpu].mode == CpuMode::Busy
            || matches!(self.cpus[cpu].mode, CpuMode::Exiting { .. })
        {
            // cpuidle_select(): the governor picks the state from what it expects.
            let tick = self.cfg.tunables.tick_ns();
            let mut sleep_length = self.next_timer_ns(cpu).unwrap_or(crate::idle::NO_TIMER_NS);
            if self.balancer.wants_idle_ticks() {
                sleep_length = sleep_length.min(tick);
            }
            let (state, hold) =
                self.idle_gov[cpu.index()].select(&self.profile, self.now, sleep_length, tick);
            self.cpus[cpu].mode = CpuMode::Idle {
                since: self.now,
                state,
                hold,
            };
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
    pub(super) fn kick_idle(&mut self, cpu: CpuId) {
        let CpuMode::Idle { since, state, hold } = self.cpus[cpu].mode else {
            return;
        };
        let idle_for = self.now - since;
        let exit = match state_index_at(&self.profile, state, since, hold, self.now) {
            Some(i) => {
                self.idle_state_exits[i] += 1;
                self.profile.wakeup.idle_states[i].exit_ns
            }
            None => 0,
        };
        // cpuidle_reflect(): the governor learns from the period just ended.
        self.idle_gov[cpu.index()].reflect(&self.profile, idle_for);
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
        self.events.push(
            self.now + exit,
            Event::CpuReady {
                cpu: cpu.index() as u32,
                g_n,
            },
        );
    }

    /// Immediate preemption of `cpu`'s running task.
    pub(super) fn resched_now(&mut self, cpu: CpuId) {
        if self.cpus[cpu].curr.is_none() {
            return;
        }
        if self.executing == Some(cpu) {
            self.cpus[cpu].need_resched = true;
            return;
        }
        self.schedule(cpu, None);
    }
}
