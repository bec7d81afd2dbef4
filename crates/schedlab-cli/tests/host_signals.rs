//! The host harness leaves the machine as it found it (a benchmark host is shared, so an
//! interrupted capture must not leave tracing on or a traced command behind): SIGINT, SIGTERM,
//! SIGHUP, SIGQUIT and SIGKILL sent to `host capture` while it traces a command. After each,
//! the traced command is gone and tracefs is as it was before; after SIGKILL (no handler
//! runs) the traced command dies with schedlab (its parent-death signal) and the next capture
//! restores the settings the killed one recorded. A test that fails while a capture runs
//! leaves nothing either: the guard that started it ends it as the test unwinds. Skips with a
//! message when not root or tracefs is unavailable; tracefs is read where the capture finds it.
//!
//! Waits poll for a state with generous bounds (a noisy VM); nothing asserts on timings.

mod common;

use common::{Guard, STATE_FILE, alive, bin, tracefs_root, tracefs_state};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn wait_for(what: &str, bound: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < bound, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pids whose parent is `ppid`.
fn children_of(ppid: u32) -> Vec<u32> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let rest = stat.rsplit(')').next().unwrap_or("");
        let parent = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        if parent == Some(ppid) {
            v.push(pid);
        }
    }
    v
}

/// Starts a capture of `sleep 300` and waits until it traces; `None` (with a message) when
/// capture cannot run here. The guard ends both if the test fails.
fn start_capture(out: &Path) -> Option<Guard> {
    let c = Command::new(bin())
        .args([
            "host",
            "capture",
            "-o",
            out.to_str().unwrap(),
            "--timeout",
            "600",
            "--",
            "sleep",
            "300",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut g = Guard::new(c);
    g.restore_with = Some(bin());
    let pid = g.id();
    let start = Instant::now();
    loop {
        if let Some(st) = g.child.try_wait().unwrap() {
            let mut e = String::new();
            use std::io::Read;
            g.child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut e)
                .unwrap();
            assert!(
                e.contains("tracefs unavailable"),
                "capture ended: {st}: {e}"
            );
            println!("skipped: {}", e.trim());
            return None;
        }
        let traced = children_of(pid);
        g.also = traced.clone();
        let on = std::fs::read_to_string(tracefs_root().join("tracing_on"))
            .is_ok_and(|v| v.trim() == "1");
        if on && Path::new(STATE_FILE).exists() && traced.len() == 1 {
            return Some(g);
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "capture never started tracing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One capture at a time: the tests compare tracefs before and after theirs.
static ONE_CAPTURE: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn every_signal_leaves_no_process_and_tracefs_as_it_was() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: needs root (tracefs)");
        return;
    }
    let _one = ONE_CAPTURE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::tempdir();
    let _ = std::fs::remove_file(STATE_FILE);
    for (name, sig) in [
        ("SIGINT", libc::SIGINT),
        ("SIGTERM", libc::SIGTERM),
        ("SIGHUP", libc::SIGHUP),
        ("SIGQUIT", libc::SIGQUIT),
        ("SIGKILL", libc::SIGKILL),
    ] {
        let before = tracefs_state();
        let Some(mut g) = start_capture(&dir.path().join(name)) else {
            return;
        };
        let traced = g.also[0];
        assert_ne!(
            tracefs_state(),
            before,
            "{name}: the capture changed nothing?"
        );
        // SAFETY: signalling the child this test started.
        unsafe { libc::kill(g.id() as libc::pid_t, sig) };
        let bound = Duration::from_secs(60);
        let start = Instant::now();
        while g.child.try_wait().unwrap().is_none() {
            assert!(start.elapsed() < bound, "{name}: schedlab did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
        wait_for(&format!("{name}: the traced sleep to die"), bound, || {
            !alive(traced)
        });
        if sig == libc::SIGKILL {
            // No handler ran: the record is left for the next capture, which restores it.
            assert!(Path::new(STATE_FILE).exists(), "{name}: no record left");
            let out = Command::new(bin())
                .args(["host", "capture", "-o"])
                .arg(dir.path().join("after"))
                .args(["--", "true"])
                .output()
                .unwrap();
            let e = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{e}");
            assert!(
                e.contains("restored") && e.contains("left by a capture"),
                "{e}"
            );
        }
        assert_eq!(
            tracefs_state(),
            before,
            "{name}: tracefs settings not restored"
        );
        assert!(
            !Path::new(STATE_FILE).exists(),
            "{name}: record left behind"
        );
        g.finished();
    }
}

/// What a failed assertion in these tests leaves: nothing. Unwinding drops the guard, which
/// ends the capture and the command it traces, and tracing is as it was.
#[test]
fn a_failing_test_leaves_no_capture_running() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: needs root (tracefs)");
        return;
    }
    let _one = ONE_CAPTURE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::tempdir();
    let before = tracefs_state();
    let Some(g) = start_capture(&dir.path().join("guarded")) else {
        return;
    };
    let (pid, traced) = (g.id(), g.also[0]);
    // The panic is the test's own: keep its message out of the output.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _g = g;
        panic!("a check fails while the capture runs");
    }));
    std::panic::set_hook(hook);
    assert!(failed.is_err());
    let bound = Duration::from_secs(30);
    wait_for("schedlab to end", bound, || !alive(pid));
    wait_for("the traced sleep to end", bound, || !alive(traced));
    assert_eq!(tracefs_state(), before, "tracefs settings not restored");
    assert!(!Path::new(STATE_FILE).exists(), "record left behind");
}
