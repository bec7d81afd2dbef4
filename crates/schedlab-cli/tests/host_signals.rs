//! The host harness leaves the machine as it found it (a benchmark host is shared, so an
//! interrupted capture must not leave tracing on or a traced command behind): SIGINT, SIGTERM,
//! SIGHUP, SIGQUIT and SIGKILL sent to `host capture` while it traces a command. After each,
//! the traced command is gone and tracefs is as it was before; after SIGKILL (no handler
//! runs) the traced command dies with schedlab (its parent-death signal) and the next capture
//! restores the settings the killed one recorded. Skips with a message when not root or
//! tracefs is unavailable.
//!
//! Waits poll for a state with generous bounds (a noisy VM); nothing asserts on timings.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const STATE_FILE: &str = "/tmp/schedlab-tracefs.state";
const TRACEFS: &str = "/sys/kernel/tracing";

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("schedlab")
}

fn tracefs_state() -> Option<Vec<String>> {
    let files = [
        "tracing_on",
        "current_tracer",
        "trace_clock",
        "events/sched/sched_switch/enable",
        "events/sched/sched_waking/enable",
        "events/sched/sched_wakeup/enable",
        "events/sched/sched_migrate_task/enable",
    ];
    files
        .iter()
        .map(|f| std::fs::read_to_string(Path::new(TRACEFS).join(f)).ok())
        .collect()
}

fn wait_for(what: &str, bound: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < bound, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn alive(pid: u32) -> bool {
    // A zombie is dead for our purpose (its parent, the test, has not reaped it).
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
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
/// capture cannot run here.
fn start_capture(out: &Path) -> Option<(Child, u32)> {
    let mut c = Command::new(bin())
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
    let pid = c.id();
    let start = Instant::now();
    loop {
        if let Some(st) = c.try_wait().unwrap() {
            let mut e = String::new();
            use std::io::Read;
            c.stderr.take().unwrap().read_to_string(&mut e).unwrap();
            assert!(
                e.contains("tracefs unavailable"),
                "capture ended: {st}: {e}"
            );
            println!("skipped: {}", e.trim());
            return None;
        }
        let traced = children_of(pid);
        let on = std::fs::read_to_string(Path::new(TRACEFS).join("tracing_on"))
            .is_ok_and(|v| v.trim() == "1");
        if on && Path::new(STATE_FILE).exists() && traced.len() == 1 {
            return Some((c, traced[0]));
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "capture never started tracing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn every_signal_leaves_no_process_and_tracefs_as_it_was() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: needs root (tracefs)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let _ = std::fs::remove_file(STATE_FILE);
    for (name, sig) in [
        ("SIGINT", libc::SIGINT),
        ("SIGTERM", libc::SIGTERM),
        ("SIGHUP", libc::SIGHUP),
        ("SIGQUIT", libc::SIGQUIT),
        ("SIGKILL", libc::SIGKILL),
    ] {
        let before = tracefs_state();
        let Some((mut c, traced)) = start_capture(&dir.path().join(name)) else {
            return;
        };
        assert_ne!(
            tracefs_state(),
            before,
            "{name}: the capture changed nothing?"
        );
        // SAFETY: signalling the child this test started.
        unsafe { libc::kill(c.id() as libc::pid_t, sig) };
        let bound = Duration::from_secs(60);
        let start = Instant::now();
        while c.try_wait().unwrap().is_none() {
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
    }
}
