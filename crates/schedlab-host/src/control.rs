//! Bounding and cleaning up real runs: the process-wide cancel flag (set from Ctrl-C), a
//! watchdog that fires on timeout or cancel, and guards that kill forked children and external
//! tools' process groups however a run ends.
//!
//! Every benchmark is built so that the watchdog can always unblock it: forked workers are
//! SIGKILLed, threads blocked on pipes are poked (drain and fill), threads blocked on sockets
//! are woken by `shutdown`, and futex waiters are woken after their word is changed.

use crate::error::HostError;
use crate::sys;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

static CANCEL: AtomicBool = AtomicBool::new(false);

/// Asks every run in this process to stop and clean up (what the CLI's Ctrl-C handler calls).
/// Runs in progress end with [`HostError::Cancelled`]; later runs are cancelled at once until
/// [`clear_cancel`].
pub fn request_cancel() {
    CANCEL.store(true, Ordering::SeqCst);
}

/// Clears a previous [`request_cancel`].
pub fn clear_cancel() {
    CANCEL.store(false, Ordering::SeqCst);
}

/// Whether [`request_cancel`] was called.
pub fn cancel_requested() -> bool {
    CANCEL.load(Ordering::SeqCst)
}

const NOT_FIRED: u8 = 0;
const TIMED_OUT: u8 = 1;
const CANCELLED: u8 = 2;

/// A start time plus a limit, checked by loops that poll.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    start: Instant,
    limit: Duration,
}

impl Deadline {
    pub(crate) fn new(limit: Duration) -> Self {
        Deadline {
            start: Instant::now(),
            limit,
        }
    }

    /// Ok while neither the limit has passed nor a cancel was requested.
    pub(crate) fn check(&self, what: &str) -> Result<(), HostError> {
        if cancel_requested() {
            return Err(HostError::Cancelled {
                what: what.to_string(),
            });
        }
        if self.start.elapsed() >= self.limit {
            return Err(HostError::Timeout {
                what: what.to_string(),
                after: self.limit,
            });
        }
        Ok(())
    }
}

/// Calls `poke` every few milliseconds once the deadline has passed or a cancel was requested,
/// until [`Watchdog::finish`]; `poke` must unblock whatever the run waits on.
pub(crate) struct Watchdog {
    done: Arc<AtomicBool>,
    fired: Arc<AtomicU8>,
    handle: Option<JoinHandle<()>>,
    limit: Duration,
}

impl Watchdog {
    pub(crate) fn start(deadline: &Deadline, mut poke: impl FnMut() + Send + 'static) -> Self {
        let (start, limit) = (deadline.start, deadline.limit);
        let done = Arc::new(AtomicBool::new(false));
        let fired = Arc::new(AtomicU8::new(NOT_FIRED));
        let (d, f) = (done.clone(), fired.clone());
        let handle = std::thread::Builder::new()
            .name("schedlab-watchdog".into())
            .spawn(move || {
                while !d.load(Ordering::SeqCst) {
                    let state = f.load(Ordering::SeqCst);
                    if state == NOT_FIRED {
                        if cancel_requested() {
                            f.store(CANCELLED, Ordering::SeqCst);
                        } else if start.elapsed() >= limit {
                            f.store(TIMED_OUT, Ordering::SeqCst);
                        }
                    }
                    if f.load(Ordering::SeqCst) != NOT_FIRED {
                        poke();
                        std::thread::sleep(Duration::from_millis(2));
                    } else {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            })
            .ok();
        Watchdog {
            done,
            fired,
            handle,
            limit,
        }
    }

    /// Stops the watchdog; an error if it had fired.
    pub(crate) fn finish(mut self, what: &str) -> Result<(), HostError> {
        self.stop();
        match self.fired.load(Ordering::SeqCst) {
            NOT_FIRED => Ok(()),
            TIMED_OUT => Err(HostError::Timeout {
                what: what.to_string(),
                after: self.limit,
            }),
            _ => Err(HostError::Cancelled {
                what: what.to_string(),
            }),
        }
    }

    fn stop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Why a forked benchmark child did not end well ([`Children::reap_all`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReapError {
    /// It exited non-zero or was killed by a signal.
    #[error("child {pid} ended with {status}")]
    Failed {
        /// The child.
        pid: libc::pid_t,
        /// How it ended (`exit 1`, `signal 9`).
        status: String,
    },
    /// `waitpid` itself failed.
    #[error("waitpid {pid}: {source}")]
    Wait {
        /// The child.
        pid: libc::pid_t,
        /// The error.
        source: std::io::Error,
    },
}

/// Forked benchmark children: SIGKILLed and reaped on drop unless reaped before. The pid list
/// is shared so a watchdog can kill the children that are not yet reaped.
#[derive(Default, Clone)]
pub(crate) struct Children {
    pids: Arc<Mutex<Vec<libc::pid_t>>>,
}

impl Children {
    pub(crate) fn push(&self, pid: libc::pid_t) {
        lock(&self.pids).push(pid);
    }

    /// SIGKILLs every child not yet reaped.
    pub(crate) fn kill_all(&self) {
        for &pid in lock(&self.pids).iter() {
            sys::kill(pid, libc::SIGKILL);
        }
    }

    /// Waits for every child (blocking); returns the first failure, if any.
    pub(crate) fn reap_all(&self) -> Result<(), ReapError> {
        let mut first_err = None;
        let pids: Vec<libc::pid_t> = lock(&self.pids).clone();
        for pid in pids {
            let r = sys::waitpid(pid);
            lock(&self.pids).retain(|&p| p != pid);
            match r {
                Ok(st) if sys::status_ok(st) => {}
                Ok(st) => {
                    first_err.get_or_insert_with(|| ReapError::Failed {
                        pid,
                        status: sys::describe_status(st),
                    });
                }
                Err(source) => {
                    first_err.get_or_insert(ReapError::Wait { pid, source });
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kills and reaps the children of a [`Children`] list when dropped (the run's owner holds
/// one; clones given to watchdogs only kill).
pub(crate) struct ChildrenGuard(pub(crate) Children);

impl Drop for ChildrenGuard {
    fn drop(&mut self) {
        self.0.kill_all();
        let pids: Vec<libc::pid_t> = std::mem::take(&mut *lock(&self.0.pids));
        for pid in pids {
            let _ = sys::waitpid(pid);
        }
    }
}

/// Benchmark threads: on drop, the stop flag is raised, `poke` is called until every thread
/// has ended, and all are joined, so no thread outlives its run.
pub(crate) struct Threads<T> {
    handles: Vec<JoinHandle<T>>,
    stop: Arc<AtomicBool>,
    poke: Box<dyn FnMut() + Send>,
}

impl<T> Threads<T> {
    pub(crate) fn new(stop: Arc<AtomicBool>, poke: impl FnMut() + Send + 'static) -> Self {
        Threads {
            handles: Vec::new(),
            stop,
            poke: Box::new(poke),
        }
    }

    pub(crate) fn push(&mut self, h: JoinHandle<T>) {
        self.handles.push(h);
    }

    /// Whether every thread has ended.
    pub(crate) fn all_finished(&self) -> bool {
        self.handles.iter().all(|h| h.is_finished())
    }

    /// Joins every thread in order (blocking); a panicked thread yields `None`.
    pub(crate) fn join_all(&mut self) -> Vec<Option<T>> {
        std::mem::take(&mut self.handles)
            .into_iter()
            .map(|h| h.join().ok())
            .collect()
    }
}

impl<T> Drop for Threads<T> {
    fn drop(&mut self) {
        if self.handles.is_empty() {
            return;
        }
        self.stop.store(true, Ordering::SeqCst);
        let give_up = Instant::now() + Duration::from_secs(10);
        while self.handles.iter().any(|h| !h.is_finished()) && Instant::now() < give_up {
            (self.poke)();
            std::thread::sleep(Duration::from_millis(1));
        }
        for h in std::mem::take(&mut self.handles) {
            if h.is_finished() {
                let _ = h.join();
            }
            // A thread still blocked after 10 s of poking is detached rather than hanging
            // the caller; every blocking call of the benchmarks is poked, so this is a bug.
        }
    }
}
