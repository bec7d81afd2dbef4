//! Helpers the CLI's tests share: the `schedlab` binary as a command with a clean
//! environment, the one success assertion (which shows what the command printed), temporary
//! directories; and for the host tests, where tracefs is (the place `host capture` uses, so a
//! test reads the settings the product changes) and a guard that ends a started process on
//! every exit path of a test, a failed assertion included.

// Each test binary uses only some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

/// The variable that points `-t host` (and calibrate) at another sysfs tree; a test sets it
/// itself where it wants one, so a value in the caller's environment never leaks in.
pub const SYSFS_ROOT_ENV: &str = "SCHEDLAB_SYSFS_ROOT";

/// The built `schedlab` binary, for a test that spawns it (to signal it or read its pipes).
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("schedlab")
}

/// The binary as a command, run in the crate's folder, without [`SYSFS_ROOT_ENV`].
pub fn schedlab() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(bin());
    c.env_remove(SYSFS_ROOT_ENV);
    c
}

/// The binary as a command that keeps the test's own [`SYSFS_ROOT_ENV`]: the host tests,
/// which `.ci/run` reruns on other machines' sysfs trees through that variable.
#[allow(dead_code)]
pub fn schedlab_host_env() -> assert_cmd::Command {
    let mut c = schedlab();
    if let Some(v) = std::env::var_os(SYSFS_ROOT_ENV) {
        c.env(SYSFS_ROOT_ENV, v);
    }
    c
}

/// The repository root (the docs' commands name paths relative to it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// [`schedlab`] run from the repository root.
pub fn schedlab_at_root() -> assert_cmd::Command {
    let mut c = schedlab();
    c.current_dir(root());
    c
}

/// Asserts that the command `what` exited 0, showing its exit status, stdout and stderr when
/// it did not; returns its stdout.
#[track_caller]
pub fn success(out: &Output, what: impl std::fmt::Display) -> String {
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "{what} failed ({})\nstdout:\n{so}\nstderr:\n{se}",
        out.status
    );
    so.into_owned()
}

/// A new temporary directory, removed when the value drops.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

/// The tracefs settings a capture changes and restores as they read (`buffer_size_kb` is
/// restored to its expanded size, which may read differently before the first use).
pub const CAPTURE_FILES: [&str; 7] = [
    "tracing_on",
    "current_tracer",
    "trace_clock",
    "events/sched/sched_switch/enable",
    "events/sched/sched_waking/enable",
    "events/sched/sched_wakeup/enable",
    "events/sched/sched_migrate_task/enable",
];

/// Where `host capture` reads and writes tracefs: the mounted one it finds (tracefs's own
/// mount point, else the one under debugfs), or the mount point it mounts when none is.
pub fn tracefs_root() -> PathBuf {
    schedlab_host::tracefs_root().unwrap_or_else(|| PathBuf::from("/sys/kernel/tracing"))
}

/// The values of `files` below [`tracefs_root`], or `None` when tracefs cannot be read.
pub fn tracefs_state_of(files: &[&str]) -> Option<Vec<String>> {
    let root = tracefs_root();
    files
        .iter()
        .map(|f| std::fs::read_to_string(root.join(f)).ok())
        .collect()
}

/// The values of [`CAPTURE_FILES`], or `None` when tracefs cannot be read.
pub fn tracefs_state() -> Option<Vec<String>> {
    tracefs_state_of(&CAPTURE_FILES)
}

/// Whether `pid` runs (a zombie does not: it only waits to be reaped).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

/// A started `schedlab` that is ended when the guard goes, however the test ends: SIGTERM
/// first (its handler restores tracefs and stops what it started), SIGKILL after a grace
/// period; the other pids it was given (a traced command) are killed too. A capture killed
/// this way leaves its record of tracefs settings, which `restore_with` then puts back.
pub struct Guard {
    pub child: Child,
    pub also: Vec<u32>,
    /// A `schedlab` binary to run `host capture -- true` with when a record of tracefs
    /// settings is left behind, so that a failed test leaves tracing as it found it.
    pub restore_with: Option<PathBuf>,
}

/// The record a killed capture leaves (`schedlab_host`'s, read back by the next capture).
pub const STATE_FILE: &str = "/tmp/schedlab-tracefs.state";

impl Guard {
    pub fn new(child: Child) -> Guard {
        Guard {
            child,
            also: Vec::new(),
            restore_with: None,
        }
    }

    /// The child's pid.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The test checked that everything ended: nothing is left to kill, and the pids of
    /// `also` may be reused by the time the guard drops.
    pub fn finished(mut self) {
        self.also.clear();
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            // SAFETY: signalling the child this test started.
            unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
            let t = Instant::now();
            while self.child.try_wait().ok().flatten().is_none() {
                if t.elapsed() > Duration::from_secs(10) {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        for &pid in &self.also {
            if alive(pid) {
                // SAFETY: a process this test's child started; its pid is still in use.
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            }
        }
        if let Some(bin) = &self.restore_with
            && Path::new(STATE_FILE).exists()
        {
            let out = std::env::temp_dir().join(format!("schedlab-guard-{}", std::process::id()));
            let _ = std::process::Command::new(bin)
                .args(["host", "capture", "--timeout", "10s", "-o"])
                .arg(&out)
                .args(["--", "true"])
                .output();
            for ext in [".txt", ".pftrace"] {
                let mut p = out.clone().into_os_string();
                p.push(ext);
                let _ = std::fs::remove_file(p);
            }
        }
    }
}
