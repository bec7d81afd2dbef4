//! Reader-writer locks whose release wakes waiters that then retry (no hand-off), with the
//! wake rule of the server that uses them: InnoDB's `rw_lock_t` and its event mutexes, and
//! PostgreSQL's LWLocks.
//!
//! * [`RwWake::InnoDb`] — InnoDB (MySQL 5.5-8.0, `storage/innobase/sync/sync0rw.cc`,
//!   `include/sync0rw.ic`, `include/ut0mutex.ic`): a waiter spins first (the caller's spin
//!   budget), then sleeps on the lock's event. The X release (`rw_lock_x_unlock`) and a
//!   mutex's `exit()` call `os_event_set()`: **every** waiter wakes and retries. An X request
//!   that finds readers reserves the lock at once (the `wait_ex` state: new readers are
//!   refused) and waits for them to drain; the last reader's S release wakes **only** that
//!   writer (`wait_ex_event`).
//! * [`RwWake::LwLock`] — PostgreSQL 9.5+ `LWLockRelease()` → `LWLockWakeup()`
//!   (`src/backend/storage/lmgr/lwlock.c`): it walks the wait queue, waking every shared
//!   waiter and the first exclusive one if no one was woken before it (an exclusive waiter
//!   woken first ends the walk); each woken backend's semaphore is posted and it retries.
//!   `LW_FLAG_RELEASE_OK` is cleared by a wakeup and set again when a woken backend retries,
//!   so a second release before that wakes no one. There is no spinning on the lock itself.
//!
//! Reconstructed \[M\]: only the wait rules; the lock words, the sync array cells and the
//! memory barriers are not modelled, and a shared holder is not remembered by name (a
//! program releases what it took).

use crate::task::TaskId;
use std::collections::VecDeque;

/// Which waiters a release wakes (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwWake {
    /// InnoDB: X release and mutex exit wake all waiters; the last S release wakes the
    /// reserving X waiter.
    InnoDb,
    /// PostgreSQL LWLock: the shared waiters and at most one exclusive waiter, gated by
    /// `RELEASE_OK`.
    LwLock,
}

/// The state of one reader-writer lock.
#[derive(Clone, Debug)]
pub struct RwLock {
    /// Wake rule.
    pub wake: RwWake,
    /// Shared holders.
    pub readers: u32,
    /// Exclusive holder, or (InnoDB, with `wait_ex`) the writer that reserved the lock and
    /// waits for the readers to leave.
    pub writer: Option<TaskId>,
    /// The writer holds a reservation only (InnoDB `RW_LOCK_X_WAIT`).
    pub wait_ex: bool,
    /// The reserving writer, when it sleeps.
    pub ex_sleeper: Option<TaskId>,
    /// Sleepers in arrival order, with whether each wants the lock exclusively.
    pub waiters: VecDeque<(TaskId, bool)>,
    /// LWLock `LW_FLAG_RELEASE_OK`.
    pub release_ok: bool,
    /// LWLock waiters woken and not yet retried.
    woken: Vec<TaskId>,
}

impl RwLock {
    /// A free lock with the given wake rule.
    pub fn new(wake: RwWake) -> Self {
        RwLock {
            wake,
            readers: 0,
            writer: None,
            wait_ex: false,
            ex_sleeper: None,
            waiters: VecDeque::new(),
            release_ok: true,
            woken: Vec::new(),
        }
    }

    /// One acquisition attempt by `t`; true when it now holds the lock.
    pub fn try_acquire(&mut self, t: TaskId, exclusive: bool) -> bool {
        // A woken LWLock waiter retrying lets releases wake again.
        if let Some(i) = self.woken.iter().position(|&w| w == t) {
            self.woken.swap_remove(i);
            self.release_ok = true;
        }
        if !exclusive {
            if self.writer.is_none() {
                self.readers += 1;
                return true;
            }
            return false;
        }
        match self.writer {
            Some(w) if w == t && self.wait_ex => {
                if self.readers == 0 {
                    self.wait_ex = false;
                    return true;
                }
                false
            }
            Some(_) => false,
            None if self.readers == 0 => {
                self.writer = Some(t);
                true
            }
            None => {
                if self.wake == RwWake::InnoDb {
                    self.writer = Some(t);
                    self.wait_ex = true;
                }
                false
            }
        }
    }

    /// `t` goes to sleep after a failed attempt.
    pub fn sleep(&mut self, t: TaskId, exclusive: bool) {
        if exclusive && self.wait_ex && self.writer == Some(t) {
            self.ex_sleeper = Some(t);
        } else {
            self.waiters.push_back((t, exclusive));
        }
    }

    /// Whether `t` sleeps on this lock.
    pub fn is_sleeping(&self, t: TaskId) -> bool {
        self.ex_sleeper == Some(t) || self.waiters.iter().any(|&(w, _)| w == t)
    }

    /// `t` releases its hold; the tasks to wake are appended to `wake`, in order.
    pub fn release(&mut self, t: TaskId, wake: &mut Vec<TaskId>) {
        if self.writer == Some(t) && !self.wait_ex {
            self.writer = None;
            self.wake_waiters(wake);
        } else if self.readers > 0 {
            self.readers -= 1;
            if self.readers > 0 {
                return;
            }
            match self.wake {
                // The last reader signals wait_ex_event only.
                RwWake::InnoDb => wake.extend(self.ex_sleeper.take()),
                RwWake::LwLock => self.wake_waiters(wake),
            }
        }
    }

    fn wake_waiters(&mut self, wake: &mut Vec<TaskId>) {
        match self.wake {
            RwWake::InnoDb => wake.extend(self.waiters.drain(..).map(|(w, _)| w)),
            RwWake::LwLock => {
                if !self.release_ok {
                    return;
                }
                let mut woke = false;
                let mut keep = VecDeque::new();
                while let Some((w, ex)) = self.waiters.pop_front() {
                    if woke && ex {
                        keep.push_back((w, ex));
                        continue;
                    }
                    wake.push(w);
                    self.woken.push(w);
                    woke = true;
                    if ex {
                        break;
                    }
                }
                keep.extend(self.waiters.drain(..));
                self.waiters = keep;
                if woke {
                    self.release_ok = false;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(i: usize) -> TaskId {
        TaskId::new(i)
    }

    #[test]
    fn innodb_x_release_wakes_every_waiter() {
        let mut l = RwLock::new(RwWake::InnoDb);
        assert!(l.try_acquire(t(0), true));
        for i in 1..4 {
            assert!(!l.try_acquire(t(i), i % 2 == 0));
            l.sleep(t(i), i % 2 == 0);
        }
        let mut w = Vec::new();
        l.release(t(0), &mut w);
        assert_eq!(w, vec![t(1), t(2), t(3)]);
        assert!(l.waiters.is_empty());
    }

    #[test]
    fn innodb_writer_reserves_and_the_last_reader_wakes_only_it() {
        let mut l = RwLock::new(RwWake::InnoDb);
        assert!(l.try_acquire(t(0), false));
        assert!(l.try_acquire(t(1), false));
        assert!(!l.try_acquire(t(2), true));
        l.sleep(t(2), true);
        // New readers are refused while the writer holds the reservation.
        assert!(!l.try_acquire(t(3), false));
        l.sleep(t(3), false);
        let mut w = Vec::new();
        l.release(t(0), &mut w);
        assert!(w.is_empty());
        l.release(t(1), &mut w);
        assert_eq!(w, vec![t(2)]);
        assert!(l.try_acquire(t(2), true));
        w.clear();
        l.release(t(2), &mut w);
        assert_eq!(w, vec![t(3)]);
    }

    #[test]
    fn lwlock_wakes_shared_waiters_and_one_exclusive_then_waits_for_a_retry() {
        let mut l = RwLock::new(RwWake::LwLock);
        assert!(l.try_acquire(t(0), true));
        for (i, ex) in [(1, false), (2, true), (3, false), (4, true)] {
            assert!(!l.try_acquire(t(i), ex));
            l.sleep(t(i), ex);
        }
        let mut w = Vec::new();
        l.release(t(0), &mut w);
        // Shared 1 and 3 wake; exclusive 2 and 4 are skipped once someone was woken.
        assert_eq!(w, vec![t(1), t(3)]);
        assert_eq!(l.waiters, VecDeque::from(vec![(t(2), true), (t(4), true)]));
        assert!(!l.release_ok);
        // Readers that retry take it; the last one's release wakes the first writer alone.
        assert!(l.try_acquire(t(1), false));
        assert!(l.try_acquire(t(3), false));
        w.clear();
        l.release(t(1), &mut w);
        l.release(t(3), &mut w);
        assert_eq!(w, vec![t(2)]);
    }

    #[test]
    fn lwlock_release_before_the_woken_retry_wakes_no_one() {
        let mut l = RwLock::new(RwWake::LwLock);
        assert!(l.try_acquire(t(0), true));
        for i in 1..3 {
            assert!(!l.try_acquire(t(i), true));
            l.sleep(t(i), true);
        }
        let mut w = Vec::new();
        l.release(t(0), &mut w);
        assert_eq!(w, vec![t(1)]);
        // Task 0 takes it again before task 1 ran: its next release wakes nobody.
        assert!(l.try_acquire(t(0), true));
        w.clear();
        l.release(t(0), &mut w);
        assert!(w.is_empty());
        // Task 1 retries (and takes the free lock): releases wake again.
        assert!(l.try_acquire(t(1), true));
        l.release(t(1), &mut w);
        assert_eq!(w, vec![t(2)]);
    }
}
