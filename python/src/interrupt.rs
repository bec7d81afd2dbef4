//! Long work without the GIL, interruptible with Ctrl-C.
//!
//! The work runs on a thread of its own; the calling thread waits for it in short slices
//! with the GIL released and runs Python's signal handlers between them
//! (`Python::check_signals`). On Ctrl-C it sets the experiment runner's stop flag
//! (`runner::INTERRUPTED`, what the CLI's SIGINT handler sets): no new run starts, the runs
//! in progress finish, and the call raises `KeyboardInterrupt`. A second Ctrl-C while those
//! finish raises at once and leaves them to end on their own.

use pyo3::prelude::*;
use schedlab_experiment::runner::INTERRUPTED;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Held by the worker for its whole life: the stop flag is global, so one piece of work runs
/// at a time (a call after an abandoned one waits for it to end).
static BUSY: Mutex<()> = Mutex::new(());

/// How often signals are checked while the work runs.
const SLICE: Duration = Duration::from_millis(50);

/// Runs `work` on a thread, releasing the GIL; a panic in it becomes a `RuntimeError`, Ctrl-C
/// a `KeyboardInterrupt`. `Ok(Err(e))` is the work's own error.
pub fn run<T, E>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> PyResult<Result<T, E>>
where
    T: Send + 'static,
    E: Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("schedlab".into())
        .spawn(move || {
            let _busy = BUSY.lock().unwrap_or_else(PoisonError::into_inner);
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            // A stop asked of this work ends with it.
            INTERRUPTED.store(false, Ordering::SeqCst);
            let _ = tx.send(out);
        })
        .map_err(|e| {
            pyo3::exceptions::PyRuntimeError::new_err(format!("cannot start a thread: {e}"))
        })?;
    // A receiver is not `Sync`; the wait borrows it across `allow_threads` behind a lock.
    let rx = Mutex::new(rx);
    let mut stopping: Option<PyErr> = None;
    loop {
        let got = py.allow_threads(|| {
            rx.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .recv_timeout(SLICE)
        });
        match got {
            Ok(Ok(out)) => {
                return match stopping {
                    Some(e) => Err(e),
                    None => Ok(out),
                };
            }
            Ok(Err(panic)) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "schedlab: internal error (a bug, please report it): {what}"
                )));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    if stopping.is_some() {
                        // Second Ctrl-C: do not wait for the runs in progress.
                        return Err(e);
                    }
                    INTERRUPTED.store(true, Ordering::SeqCst);
                    stopping = Some(e);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "schedlab: internal error: the worker thread ended without a result",
                ));
            }
        }
    }
}
