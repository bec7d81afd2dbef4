//! Active balancing: the stopper thread of the busiest CPU pushes a task away
//! (`need_active_balance()` → `active_load_balance_cpu_stop()`, kernel/sched/fair.c, 2.6.x–6.12).
//!
//! Ordinary balancing only detaches *queued* tasks, and refuses cache-hot ones while
//! `nr_balance_failed <= cache_nice_tries`. When a level keeps failing past
//! `cache_nice_tries + 2` the balancer asks for an active balance ([`BalanceOut::active`]):
//! in the kernel the stopper (a stop-class thread) preempts whatever runs on the busiest CPU
//! and, running there, detaches one task ignoring cache hotness: the least recently run
//! queued one, or the task it just preempted when that was the CPU's only task. That is how
//! a lone running task leaves a busy core for an idle one (SMT spreading, a CPU hog next to
//! an idle node).
//!
//! Simplifications \[M\]: the push happens at once (no IPI or stopper wakeup delay); the
//! source CPU pays one context switch to whatever it runs next and, if it has nothing left,
//! goes idle without a newly-idle pass of its own (its idle balancing follows on the tick).
//!
//! [`BalanceOut::active`]: crate::balance::BalanceOut::active
//!
//! State: reads and writes `core` (runqueues, tasks) and `stats` (counters); reads `run`
//! (which CPU is executing).

use super::Simulation;
use crate::state::TaskState;
use crate::task::TaskId;
use schedlab_topo::CpuId;
use schedlab_trace::PrevState;

impl Simulation {
    /// Pushes `t` from `from` to `to` as the stopper would. Returns whether it moved; a
    /// request that no longer fits the state (the task left, blocked, or the source CPU is
    /// in the middle of executing an op) is dropped, as the kernel's stopper re-checks under
    /// the runqueue lock.
    pub(super) fn active_balance(&mut self, t: TaskId, from: CpuId, to: CpuId) -> bool {
        if from == to
            || !self.core.tasks[t].allowed.contains(to)
            || self.core.tasks[t].delayed
            || self.run.executing == Some(from)
        {
            return false;
        }
        match self.core.tasks[t].state {
            TaskState::Queued(c) if c == from => {
                self.apply_migration(t, from, to);
            }
            TaskState::Running(c) if c == from && self.core.cpus[from].curr == Some(t) => {
                // The stopper preempts `t`: it goes back into `from`'s tree as a preempted
                // task would, is switched out, then detached and attached on `to`.
                self.update_curr(from);
                self.settle(from);
                self.sync_task_pelt(t);
                {
                    let task = &mut self.core.tasks[t];
                    task.state = TaskState::Queued(from);
                    task.runnable_since = self.core.now;
                    task.last_ran_cpu = Some(from);
                    task.last_ran_end = self.core.now;
                }
                self.rq_insert(from, t);
                self.set_waiting(1);
                self.core.cpus[from].need_resched = false;
                self.core.cpus[from].resched_lazy = false;
                self.set_curr_none_for_balance(from, Some(t), Some(PrevState::Runnable));
                self.apply_migration(t, from, to);
                match self.pick_next_and_dequeue(from) {
                    Some(n) => self.switch_to(from, None, None, n),
                    None => self.go_idle(from),
                }
            }
            _ => return false,
        }
        let moved = self.core.tasks[t].cpu == to;
        if moved {
            self.stats.counters.migrations_active += 1;
        }
        moved
    }
}
