//! The interpreter arms of the reader-writer lock ops ([`Op::RwLock`], [`Op::RwUnlock`]),
//! called from the one arm of `step_task` that names them; the wake rules are in
//! [`crate::rwlock`].
//!
//! Acquire: one attempt; on failure the task spins in 500 ns steps while its spin budget
//! lasts (InnoDB's `innodb_sync_spin_loops` × `ut_delay()` rounds, charged as CPU time) and
//! then sleeps on the lock. A woken task runs the same op again (it retries; nothing is
//! handed to it), with a fresh spin budget, as InnoDB's `goto lock_loop` and
//! `LWLockAcquire()`'s retry loop do. Release: the lock's rule picks the wakees; each costs
//! the releaser a syscall (`os_event_set()` → futex wake, `PGSemaphoreUnlock()`) and goes
//! through `try_to_wake_up` without WF_SYNC.

use super::Simulation;
use super::interp::StepOutcome;
use crate::policy::wake_flags;
use crate::state::WaitOn;
use crate::task::{Op, TaskId};
use schedlab_topo::CpuId;

/// Spin granularity, ns (the existing mutex spin uses the same step).
const SPIN_STEP_NS: u64 = 500;

impl Simulation {
    /// Runs one reader-writer lock op of `t`; `None` when the op is done or spinning (its CPU
    /// time is in `cost`), or the outcome that ends the step (a sleep).
    pub(super) fn step_sync(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        op: &Op,
        cost: &mut f64,
    ) -> Option<StepOutcome> {
        let syscall = self.profile.cpu.syscall_ns as f64;
        match *op {
            Op::RwLock {
                lock,
                exclusive,
                spin_ns,
            } => {
                if self.rwlocks[lock].try_acquire(t, exclusive) {
                    self.tasks[t].pc += 1;
                    self.tasks[t].spin_left = 0;
                    return None;
                }
                if self.tasks[t].spin_left == 0 {
                    // The budget plus one: 1 means "spent", so that 0 can mean "fresh".
                    self.tasks[t].spin_left = spin_ns.saturating_add(1);
                }
                if self.tasks[t].spin_left > 1 {
                    let q = SPIN_STEP_NS.min(self.tasks[t].spin_left - 1);
                    self.tasks[t].spin_left -= q;
                    *cost += q as f64;
                    return None;
                }
                self.tasks[t].spin_left = 0;
                self.rwlocks[lock].sleep(t, exclusive);
                Some(StepOutcome::Block(WaitOn::RwLock(lock)))
            }
            Op::RwUnlock(lock) => {
                self.tasks[t].pc += 1;
                let mut wake = Vec::new();
                self.rwlocks[lock].release(t, &mut wake);
                for w in wake {
                    self.op_extra_cost += syscall;
                    self.try_to_wake_up(w, Some(t), cpu, wake_flags::TTWU);
                }
                None
            }
            _ => None,
        }
    }
}
