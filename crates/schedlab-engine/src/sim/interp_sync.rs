//! The interpreter arms of the synchronisation ops: futexes, wait lists and self events,
//! user-space locks, barriers, and the reader-writer locks.
//!
//! State: reads and writes `core` (tasks) and `objects` (futexes, lists, mutexes, barriers,
//! rwlocks, wake tokens); reads the profile. Each wakeup goes through
//! [`Simulation::wake_from`], which charges it to the op's [`OpCost`].
//!
//! Reader-writer locks ([`Op::RwLock`], [`Op::RwUnlock`]; the wake rules are in
//! [`crate::rwlock`]). Acquire: one attempt; on failure the task spins in 500 ns steps while
//! its spin budget lasts (InnoDB's `innodb_sync_spin_loops` × `ut_delay()` rounds, charged as
//! CPU time) and then sleeps on the lock. A woken task runs the same op again (it retries;
//! nothing is handed to it), with a fresh spin budget, as InnoDB's `goto lock_loop` and
//! `LWLockAcquire()`'s retry loop do. Release: the lock's rule picks the wakees; each costs
//! the releaser a syscall (`os_event_set()` → futex wake, `PGSemaphoreUnlock()`) and goes
//! through `try_to_wake_up` without WF_SYNC.

use super::Simulation;
use super::contention::Object;
use super::interp::{OpCost, StepOutcome, Syscall};
use crate::policy::wake_flags;
use crate::state::{TaskState, WaitOn};
use crate::task::{LockRef, Op, TaskId, WAKE_ALL};
use schedlab_topo::CpuId;

/// Spin granularity, ns (the mutex spin uses the same step).
const SPIN_STEP_NS: u64 = 500;

impl Simulation {
    /// `futex_wait()`: returns at once if woken or posted, else pays the entry (the bucket
    /// lock and the word check), then sleeps.
    pub(super) fn step_futex_wait(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        f: usize,
        sys: Syscall,
        c: &mut OpCost,
    ) -> Option<StepOutcome> {
        if std::mem::take(&mut self.objects.token[t])
            || std::mem::take(&mut self.objects.futexes[f].posted)
        {
            self.core.tasks[t].pc += 1;
            c.cost += if std::mem::take(&mut self.core.tasks[t].syscall_entered) {
                sys.exit
            } else {
                sys.full + self.touch(Object::Futex(f), cpu)
            };
        } else if !self.core.tasks[t].syscall_entered {
            // futex_wait(): the entry, the bucket lock and the word check run before the
            // sleep; the word is checked again after them.
            c.cost += self.enter_wait(t, Object::Futex(f), cpu, sys.entry);
        } else {
            self.objects.futexes[f].waiters.push_back(t);
            return Some(StepOutcome::Block(WaitOn::Futex(f)));
        }
        None
    }

    /// `futex_wake()` of up to `n` waiters (a post when there are none).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn step_futex_wake(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        prog: &[Op],
        f: usize,
        n: u32,
        sys: Syscall,
        c: &mut OpCost,
    ) {
        self.core.tasks[t].pc += 1;
        // The exit of the FUTEX_WAKE syscall runs after the wakeups.
        c.extra += sys.entry + self.touch(Object::Futex(f), cpu);
        if self.objects.futexes[f].waiters.is_empty() {
            self.objects.futexes[f].posted = true;
        }
        let mut left = n;
        while left > 0 {
            let Some(w) = self.objects.futexes[f].waiters.pop_front() else {
                break;
            };
            self.objects.token[w] = true;
            self.wake_from(w, t, cpu, wake_flags::TTWU, &mut c.extra);
            if left != WAKE_ALL {
                left -= 1;
            }
        }
        c.extra += sys.exit;
        self.enter_next_wait(t, prog, sys.entry, c);
    }

    /// Wakes every task on list `l` that sleeps on its self event (one syscall each); one
    /// not yet asleep finds its event posted.
    pub(super) fn step_wake_list(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        l: usize,
        sys: Syscall,
        c: &mut OpCost,
    ) {
        self.core.tasks[t].pc += 1;
        let list = std::mem::take(&mut self.objects.lists[l]);
        for &w in &list {
            c.extra += sys.full;
            if self.core.tasks[w].state == TaskState::Sleeping(WaitOn::SelfEvent) {
                self.objects.token[w] = true;
                self.wake_from(w, t, cpu, wake_flags::TTWU, &mut c.extra);
            } else {
                self.core.tasks[w].self_posted = true;
            }
        }
        let mut list = list;
        list.clear();
        if self.objects.lists[l].is_empty() {
            self.objects.lists[l] = list;
        }
    }

    /// Waits for the task's self event (a `WakeList` wakes it).
    pub(super) fn step_wait_self(
        &mut self,
        t: TaskId,
        sys: Syscall,
        c: &mut OpCost,
    ) -> Option<StepOutcome> {
        if std::mem::take(&mut self.objects.token[t])
            || std::mem::take(&mut self.core.tasks[t].self_posted)
        {
            self.core.tasks[t].pc += 1;
            c.cost += sys.full;
            return None;
        }
        Some(StepOutcome::Block(WaitOn::SelfEvent))
    }

    /// Takes a user-space lock, or spins while its owner runs (and the spin budget lasts),
    /// or sleeps on it.
    pub(super) fn step_lock(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        lock: LockRef,
        spin_ns: u64,
        c: &mut OpCost,
    ) -> Option<StepOutcome> {
        let m = self.resolve_lock(lock, cpu);
        if m >= self.objects.mutexes.len() {
            // PerCpu locks beyond the declared range: treat as uncontended.
            self.core.tasks[t].pc += 1;
            return None;
        }
        let owner = self.objects.mutexes[m].owner;
        if owner.is_none() || owner == Some(t) {
            self.objects.mutexes[m].owner = Some(t);
            self.objects.token[t] = false;
            self.core.tasks[t].pc += 1;
            self.core.tasks[t].spin_left = 0;
            c.cost += self.touch(Object::Mutex(m), cpu);
            return None;
        }
        let o = owner.unwrap_or(t);
        let pure_spin = spin_ns == u64::MAX;
        if self.core.tasks[t].spin_left == 0 {
            self.core.tasks[t].spin_left = spin_ns.max(1);
        }
        let owner_running = matches!(self.core.tasks[o].state, TaskState::Running(_));
        if pure_spin || (owner_running && self.core.tasks[t].spin_left > 1) {
            let q = SPIN_STEP_NS.min(self.core.tasks[t].spin_left);
            if !pure_spin {
                self.core.tasks[t].spin_left -= q.min(self.core.tasks[t].spin_left - 1);
            }
            c.cost += q as f64;
            return None;
        }
        self.core.tasks[t].spin_left = 0;
        self.objects.mutexes[m].waiters.push_back(t);
        Some(StepOutcome::Block(WaitOn::Mutex(m)))
    }

    /// Releases a user-space lock and hands it to its first waiter.
    pub(super) fn step_unlock(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        lock: LockRef,
        sys: Syscall,
        c: &mut OpCost,
    ) {
        let m = self.resolve_lock(lock, cpu);
        self.core.tasks[t].pc += 1;
        if m >= self.objects.mutexes.len() {
            return;
        }
        // The owner may have migrated since locking a per-CPU lock: find it.
        let m = if self.objects.mutexes[m].owner == Some(t) {
            m
        } else {
            self.objects
                .mutexes
                .iter()
                .position(|x| x.owner == Some(t))
                .unwrap_or(m)
        };
        if self.objects.mutexes[m].owner != Some(t) {
            return;
        }
        self.objects.mutexes[m].owner = None;
        c.extra += self.touch(Object::Mutex(m), cpu);
        if let Some(w) = self.objects.mutexes[m].waiters.pop_front() {
            self.objects.mutexes[m].owner = Some(w);
            self.objects.token[w] = true;
            // The FUTEX_WAKE that hands the lock over: its exit runs after the wakeup.
            c.extra += sys.entry;
            self.wake_from(w, t, cpu, wake_flags::TTWU, &mut c.extra);
            c.extra += sys.exit;
        }
    }

    /// Arrives at barrier `b`: the last of its parties wakes the others, the rest sleep.
    pub(super) fn step_barrier(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        b: usize,
        sys: Syscall,
        c: &mut OpCost,
    ) -> Option<StepOutcome> {
        if std::mem::take(&mut self.objects.token[t]) {
            self.core.tasks[t].pc += 1;
            return None;
        }
        self.objects.barriers[b].waiting.push(t);
        if (self.objects.barriers[b].waiting.len() as u32) < self.objects.barriers[b].parties {
            return Some(StepOutcome::Block(WaitOn::Barrier(b)));
        }
        let waiting = std::mem::take(&mut self.objects.barriers[b].waiting);
        self.core.tasks[t].pc += 1;
        c.extra += sys.full;
        for &w in waiting.iter().filter(|&&w| w != t) {
            self.objects.token[w] = true;
            self.wake_from(w, t, cpu, wake_flags::TTWU, &mut c.extra);
        }
        None
    }

    /// Runs one reader-writer lock op of `t`; `None` when the op is done or spinning (its CPU
    /// time is in `c`), or the outcome that ends the step (a sleep).
    pub(super) fn step_sync(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        op: &Op,
        sys: Syscall,
        c: &mut OpCost,
    ) -> Option<StepOutcome> {
        match *op {
            Op::RwLock {
                lock,
                exclusive,
                spin_ns,
            } => {
                if self.objects.rwlocks[lock].try_acquire(t, exclusive) {
                    self.core.tasks[t].pc += 1;
                    self.core.tasks[t].spin_left = 0;
                    return None;
                }
                if self.core.tasks[t].spin_left == 0 {
                    // The budget plus one: 1 means "spent", so that 0 can mean "fresh".
                    self.core.tasks[t].spin_left = spin_ns.saturating_add(1);
                }
                if self.core.tasks[t].spin_left > 1 {
                    let q = SPIN_STEP_NS.min(self.core.tasks[t].spin_left - 1);
                    self.core.tasks[t].spin_left -= q;
                    c.cost += q as f64;
                    return None;
                }
                self.core.tasks[t].spin_left = 0;
                self.objects.rwlocks[lock].sleep(t, exclusive);
                Some(StepOutcome::Block(WaitOn::RwLock(lock)))
            }
            Op::RwUnlock(lock) => {
                self.core.tasks[t].pc += 1;
                let mut wake = Vec::new();
                self.objects.rwlocks[lock].release(t, &mut wake);
                for w in wake {
                    c.extra += sys.full;
                    self.wake_from(w, t, cpu, wake_flags::TTWU, &mut c.extra);
                }
                None
            }
            _ => None,
        }
    }
}
