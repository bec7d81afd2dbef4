//! SIGINT, SIGTERM and SIGHUP: one signal stops any command within a second, and it exits
//! 128 + the signal. For every command but `host` the watcher below ends the process.
//! `host` keeps its own clean-up path ([`install_host`]): the signal asks the harness to
//! cancel, which kills the benchmark's threads and processes, restores tracefs and removes
//! its temporaries within a fraction of a second, and the command then exits 128 + the
//! signal like the others. A simulation can run for minutes
//! and the engine has no stop hook, so waiting for the runs in progress is no answer: no
//! new run starts (`runner::INTERRUPTED`), a moment is left for the command to end on its
//! own (a `compare` whose runs were all done prints its report), then the process exits
//! 128 + the signal (130 for SIGINT, 143 for SIGTERM). Runs already appended to an `--out`
//! file are whole (the exit waits for a line being written, `runner::OUT_WRITE`), so
//! `--resume` continues from them. A second signal exits at once.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// The first signal received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// How long a command has after the signal to end by itself.
const GRACE: Duration = Duration::from_millis(300);
/// How often the watcher looks for a signal.
const POLL: Duration = Duration::from_millis(20);

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe only: atomics and `_exit`.
    if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        // SAFETY: `_exit` is async-signal-safe.
        unsafe { libc::_exit(128 + sig) }
    }
    schedlab_experiment::runner::INTERRUPTED.store(true, Ordering::SeqCst);
    // What a host run watches (one atomic store; nothing reads it in other commands).
    schedlab_host::request_cancel();
}

/// Points `sigs` at [`on_signal`].
fn handle(sigs: &[libc::c_int]) {
    for &sig in sigs {
        // SAFETY: the handler only stores atomics (or calls `_exit`).
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
}

/// Installs the handlers and the thread that ends the process after a signal.
pub fn install() {
    handle(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP]);
    std::thread::spawn(|| {
        loop {
            std::thread::sleep(POLL);
            let sig = SIGNAL.load(Ordering::SeqCst);
            if sig == 0 {
                continue;
            }
            eprintln!(
                "\ninterrupted ({}): stopping; runs already written are kept",
                name(sig)
            );
            std::thread::sleep(GRACE);
            // No run line is half written when the process ends.
            let _whole = schedlab_experiment::runner::OUT_WRITE
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let _ = std::io::Write::flush(&mut std::io::stdout());
            std::process::exit(128 + sig);
        }
    });
}

/// The handlers of `host` commands: the first SIGINT, SIGTERM, SIGHUP or SIGQUIT asks the
/// harness to cancel ([`schedlab_host::request_cancel`]: children killed, tracefs restored);
/// a second exits at once.
pub fn install_host() {
    handle(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT]);
}

/// The exit status owed to a signal received during the command, if one was.
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(128 + s),
    }
}

/// The exit status of a command that stopped early on a signal: 128 + the signal, 130 when
/// none was received (an interruption set another way).
pub fn exit_code() -> i32 {
    received().unwrap_or(130)
}

fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "signal",
    }
}
