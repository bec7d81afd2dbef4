//! `schedlab host capture`: records the kernel's own scheduling events while a command runs.
//!
//! Through tracefs (mounted at `/sys/kernel/tracing` if it is not mounted; root only) it
//! enables `sched_switch`, `sched_waking`, `sched_wakeup`, `sched_migrate_task`, and the
//! task lifecycle (`sched_wakeup_new`, `sched_process_fork`, `sched_process_exit`, which
//! `schedlab replay derive` turns into forks and exits), runs the
//! command as a child in its own process group (Ctrl-C is forwarded to it, and a timeout ends
//! it), then reads the `trace` file. The output is the raw ftrace text (which
//! `schedlab_trace::ftrace` parses), a Perfetto trace, and schedstat-shaped counters.
//!
//! Every tracefs setting touched (tracing_on, current_tracer, trace_clock, buffer_size_kb and
//! the events' enable files) is saved first and restored by a guard's `Drop`, so it is
//! restored on success, on error and on panic; a tracefs this module mounted is unmounted.
//! One capture runs at a time per machine (an exclusive lock on a file in /tmp).
//!
//! `buffer_size_kb` reads `N (expanded: M)` before the first use after boot; it is restored
//! to M, the size the kernel would expand to at the first use anyway.

use crate::control::{Deadline, cancel_requested};
use crate::error::HostError;
use crate::tracefs_state;
use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The events recorded.
pub const EVENTS: [&str; 7] = [
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_migrate_task",
    "sched_wakeup_new",
    "sched_process_fork",
    "sched_process_exit",
];

const MOUNT_POINT: &str = "/sys/kernel/tracing";
const DEBUGFS_TRACING: &str = "/sys/kernel/debug/tracing";
const LOCK_FILE: &str = "/tmp/schedlab-tracefs.lock";

/// How to capture.
#[derive(Clone, Debug)]
pub struct CaptureOptions {
    /// The command is ended (SIGTERM, then SIGKILL after 1 s) after this long.
    pub timeout: Duration,
    /// Per-CPU ring buffer size while capturing, KiB.
    pub buffer_size_kb: u64,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            timeout: Duration::from_secs(60),
            buffer_size_kb: 8192,
        }
    }
}

/// What a capture produced.
#[derive(Clone, Debug)]
pub struct CaptureSummary {
    /// How the command ended (`exit 0`, `signal 9`, ...).
    pub exit: String,
    /// The command's exit code, if it exited normally.
    pub exit_code: Option<i32>,
    /// How long the command ran.
    pub wall: Duration,
    /// Event lines captured, by event name.
    pub events: BTreeMap<String, u64>,
    /// Events the kernel dropped because a per-CPU buffer was full.
    pub overruns: u64,
    /// The files written.
    pub files: Vec<PathBuf>,
    /// schedstat-shaped counters of the run (from `schedlab_trace::analysis`).
    pub counters: String,
}

/// Captures with [`CaptureOptions::default`].
pub fn capture(out: &Path, command: &[String]) -> Result<CaptureSummary, HostError> {
    capture_with(out, command, &CaptureOptions::default())
}

/// Whether a capture can run here; the reason if not (not root, no tracefs, no sched events).
pub fn tracefs_available() -> Result<(), HostError> {
    if !crate::sys::is_root() {
        return Err(HostError::TracefsUnavailable {
            reason: "needs root".into(),
        });
    }
    let st = Tracefs::open()?;
    drop(st);
    Ok(())
}

/// The files a capture to `out` writes: `.pftrace` → Perfetto only, `.txt` → ftrace text
/// only, anything else → both, as `out.pftrace` and `out.txt`.
pub fn output_files(out: &Path) -> (Option<PathBuf>, Option<PathBuf>) {
    let with = |ext: &str| {
        let mut s = out.as_os_str().to_owned();
        s.push(ext);
        PathBuf::from(s)
    };
    match out.extension().and_then(|e| e.to_str()) {
        Some("pftrace") => (Some(out.to_path_buf()), None),
        Some("txt") => (None, Some(out.to_path_buf())),
        _ => (Some(with(".pftrace")), Some(with(".txt"))),
    }
}

/// Refuses an output that is a folder (`-o .` would write `..txt`) or sits in a folder that
/// does not exist, before any tracing starts.
fn check_output(out: &Path) -> Result<(), HostError> {
    let bad = |expected: &str| HostError::BadValue {
        workload: "capture".into(),
        key: "-o".into(),
        value: out.display().to_string(),
        expected: expected.into(),
    };
    let name = out.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if out.is_dir() || name.is_empty() || name == "." || name == ".." {
        return Err(bad(
            "a file name, not a folder (e.g. trace, trace.pftrace or trace.txt)",
        ));
    }
    let dir = out.parent().filter(|d| !d.as_os_str().is_empty());
    if dir.is_some_and(|d| !d.is_dir()) {
        return Err(bad("a file in an existing folder"));
    }
    // Each file must open for writing (`/proc/x` names a folder that exists but takes no
    // new files): found now, not after the command ran. A file the probe creates is removed.
    let (pf, txt) = output_files(out);
    for p in pf.iter().chain(&txt) {
        let existed = p.exists();
        match std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(p)
        {
            Ok(_) if !existed => {
                let _ = std::fs::remove_file(p);
            }
            Ok(_) => {}
            Err(e) => {
                return Err(bad(&format!(
                    "a file that can be written ({}: {e})",
                    p.display()
                )));
            }
        }
    }
    Ok(())
}

/// Runs `command` under tracing and writes the trace to `out` (see [`output_files`]).
///
/// A command that exits non-zero is not an error (its status is in the summary); a timeout
/// or Ctrl-C is, after the trace up to that point has been written.
pub fn capture_with(
    out: &Path,
    command: &[String],
    opts: &CaptureOptions,
) -> Result<CaptureSummary, HostError> {
    let Some((prog, args)) = command.split_first() else {
        return Err(HostError::BadValue {
            workload: "capture".into(),
            key: "COMMAND".into(),
            value: String::new(),
            expected: "a command to run after `--`".into(),
        });
    };
    check_output(out)?;
    if !crate::sys::is_root() {
        return Err(HostError::TracefsUnavailable {
            reason: "needs root".into(),
        });
    }
    let deadline = Deadline::new(opts.timeout + Duration::from_secs(10));
    let _lock = lock(&deadline)?;
    // A capture killed before its Drop left its settings: put the originals back first,
    // so they, not the leaked ones, are what this capture saves and restores.
    if let Some(note) = tracefs_state::undo_leftover(Path::new(tracefs_state::STATE_FILE)) {
        eprintln!("capture: {note}");
    }
    let mut fs = Tracefs::open()?;
    fs.save_and_set("tracing_on", "0")?;
    fs.save_and_set("current_tracer", "nop")?;
    fs.save_and_set("trace_clock", "mono")?;
    // The kernel refuses a size it cannot allocate per CPU: say which option asked for it.
    let kb = opts.buffer_size_kb.to_string();
    fs.save_and_set("buffer_size_kb", &kb)
        .map_err(|e| match e {
            HostError::Tracefs { source, .. } => HostError::BadValue {
                workload: "capture".into(),
                key: "--buffer-kb".into(),
                value: kb.clone(),
                expected: format!(
                    "a per-CPU buffer size the kernel can allocate (it answered: {source})"
                ),
            },
            e => e,
        })?;
    for e in EVENTS {
        fs.save_and_set(&format!("events/sched/{e}/enable"), "1")?;
    }
    // The tgid column gives each thread its process (threads vs processes in a replay);
    // kernels without the option still capture, without it.
    if fs.save_and_set("options/record-tgid", "1").is_err() {
        eprintln!("capture: no options/record-tgid; thread groups are not recorded");
    }
    fs.clear()?;
    fs.write("tracing_on", "1")?;

    let run = run_command(prog, args, opts.timeout);
    fs.write("tracing_on", "0")?;
    let text = fs.read("trace")?;
    let overruns = fs.overruns();
    drop(fs); // restore now, before the (slow) conversion
    let (status, wall, ended_early) = run?;

    let mut events = BTreeMap::new();
    for e in EVENTS {
        let tag = format!(" {e}:");
        let n = text.lines().filter(|l| l.contains(&tag)).count() as u64;
        events.insert(e.to_string(), n);
    }
    let (pf, txt) = output_files(out);
    let mut files = Vec::new();
    if let Some(p) = &txt {
        std::fs::write(p, &text)
            .map_err(|e| HostError::io(format!("writing {}", p.display()), e))?;
        files.push(p.clone());
    }
    let trace = schedlab_trace::ftrace::parse_ftrace_text(&text)
        .map_err(|e| HostError::Trace(format!("parsing the captured ftrace text: {e}")))?;
    if let Some(p) = &pf {
        let f = std::fs::File::create(p)
            .map_err(|e| HostError::io(format!("writing {}", p.display()), e))?;
        let mut w = std::io::BufWriter::new(f);
        schedlab_trace::perfetto::write_perfetto(&trace, &mut w)
            .and_then(|()| w.flush())
            .map_err(|e| HostError::io(format!("writing {}", p.display()), e))?;
        files.push(p.clone());
    }
    let counters = schedlab_trace::analysis::counters(&trace).to_text();
    if let Some(e) = ended_early {
        return Err(e);
    }
    Ok(CaptureSummary {
        exit: crate::sys::describe_status(status),
        exit_code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        wall,
        events,
        overruns,
        files,
        counters,
    })
}

/// Runs the command in its own process group; Ctrl-C is forwarded as SIGINT, a timeout
/// sends SIGTERM; either is followed by SIGKILL after a grace period. Returns the wait status,
/// the run time, and the error to report after writing the trace if it was ended early.
fn run_command(
    prog: &str,
    args: &[String],
    timeout: Duration,
) -> Result<(i32, Duration, Option<HostError>), HostError> {
    let start = Instant::now();
    let mut cmd = Command::new(prog);
    cmd.args(args).process_group(0);
    crate::sys::die_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| HostError::io(format!("starting `{prog}`"), e))?;
    let pgid = child.id() as libc::pid_t;
    let signal = |sig| {
        // SAFETY: signalling our own child's process group.
        unsafe { libc::kill(-pgid, sig) };
    };
    let mut ended_early: Option<(HostError, Instant)> = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => {
                use std::os::unix::process::ExitStatusExt;
                break st.into_raw();
            }
            Ok(None) => {}
            Err(e) => {
                signal(libc::SIGKILL);
                let _ = child.wait();
                return Err(HostError::io(format!("waiting for `{prog}`"), e));
            }
        }
        match &ended_early {
            None if cancel_requested() => {
                signal(libc::SIGINT);
                ended_early = Some((
                    HostError::Cancelled {
                        what: format!("capture of `{prog}`"),
                    },
                    Instant::now() + Duration::from_secs(2),
                ));
            }
            None if start.elapsed() >= timeout => {
                signal(libc::SIGTERM);
                ended_early = Some((
                    HostError::Timeout {
                        what: format!("capture of `{prog}`"),
                        after: timeout,
                    },
                    Instant::now() + Duration::from_secs(1),
                ));
            }
            Some((_, kill_at)) if Instant::now() >= *kill_at => signal(libc::SIGKILL),
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    // Whatever the command left in its group goes too.
    signal(libc::SIGKILL);
    Ok((status, start.elapsed(), ended_early.map(|(e, _)| e)))
}

/// The machine-wide capture lock (released when the file is closed).
fn lock(deadline: &Deadline) -> Result<std::fs::File, HostError> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(LOCK_FILE)
        .map_err(|e| HostError::io(format!("opening {LOCK_FILE}"), e))?;
    loop {
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(f);
        }
        deadline.check("waiting for another capture to finish")?;
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An open tracefs with the settings to restore on drop.
struct Tracefs {
    root: PathBuf,
    mounted_by_us: bool,
    saved: Vec<(String, String)>,
}

/// Whether `root` is a tracefs with the sched events.
fn usable(root: &Path) -> bool {
    root.join("events/sched/sched_switch/enable").exists()
}

/// Where a capture finds a mounted tracefs with the sched events: `/sys/kernel/tracing`,
/// else the debugfs one, `/sys/kernel/debug/tracing` (older setups mount only debugfs).
/// `None` when neither is mounted: a capture then mounts tracefs at `/sys/kernel/tracing`.
pub fn tracefs_root() -> Option<PathBuf> {
    [MOUNT_POINT, DEBUGFS_TRACING]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| usable(p))
}

impl Tracefs {
    fn open() -> Result<Tracefs, HostError> {
        if let Some(root) = tracefs_root() {
            return Ok(Tracefs {
                root,
                mounted_by_us: false,
                saved: Vec::new(),
            });
        }
        if !Path::new(MOUNT_POINT).is_dir() {
            return Err(HostError::TracefsUnavailable {
                reason: format!("{MOUNT_POINT} does not exist"),
            });
        }
        let c = |s: &str| std::ffi::CString::new(s).unwrap_or_default();
        let (src, dst, fstype) = (c("nodev"), c(MOUNT_POINT), c("tracefs"));
        // SAFETY: valid C strings; no mount data.
        let rc = unsafe {
            libc::mount(
                src.as_ptr(),
                dst.as_ptr(),
                fstype.as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if rc != 0 {
            return Err(HostError::TracefsUnavailable {
                reason: format!(
                    "mounting tracefs at {MOUNT_POINT}: {}",
                    std::io::Error::last_os_error()
                ),
            });
        }
        let fs = Tracefs {
            root: MOUNT_POINT.into(),
            mounted_by_us: true,
            saved: Vec::new(),
        };
        if !usable(&fs.root) {
            return Err(HostError::TracefsUnavailable {
                reason:
                    "tracefs has no events/sched/sched_switch (kernel without sched tracepoints?)"
                        .into(),
            });
        }
        Ok(fs)
    }

    fn read(&self, rel: &str) -> Result<String, HostError> {
        let p = self.root.join(rel);
        std::fs::read_to_string(&p).map_err(|source| HostError::Tracefs { path: p, source })
    }

    fn write(&self, rel: &str, value: &str) -> Result<(), HostError> {
        let p = self.root.join(rel);
        std::fs::write(&p, value).map_err(|source| HostError::Tracefs { path: p, source })
    }

    /// Saves the current value of `rel` (in a form that can be written back), then sets it.
    /// The value is recorded on disk ([`tracefs_state`]) before it is changed, so that the
    /// next capture restores it if this process is killed.
    fn save_and_set(&mut self, rel: &str, value: &str) -> Result<(), HostError> {
        let cur = restorable(rel, &self.read(rel)?);
        self.saved.push((rel.to_string(), cur));
        let st = tracefs_state::State {
            root: self.root.clone(),
            mounted_by_us: self.mounted_by_us,
            saved: self.saved.clone(),
        };
        tracefs_state::record(Path::new(tracefs_state::STATE_FILE), &st).map_err(|e| {
            HostError::io(
                format!(
                    "recording tracefs settings in {}",
                    tracefs_state::STATE_FILE
                ),
                e,
            )
        })?;
        self.write(rel, value)
    }

    /// Empties the ring buffers (opening `trace` for writing with truncation clears it).
    fn clear(&self) -> Result<(), HostError> {
        let p = self.root.join("trace");
        std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&p)
            .map(drop)
            .map_err(|source| HostError::Tracefs { path: p, source })
    }

    /// Events lost to full buffers, summed over CPUs.
    fn overruns(&self) -> u64 {
        let Ok(dir) = std::fs::read_dir(self.root.join("per_cpu")) else {
            return 0;
        };
        dir.flatten()
            .filter_map(|d| std::fs::read_to_string(d.path().join("stats")).ok())
            .flat_map(|s| {
                s.lines()
                    .filter_map(|l| l.strip_prefix("overrun:"))
                    .filter_map(|v| v.trim().parse::<u64>().ok())
                    .collect::<Vec<_>>()
            })
            .sum()
    }
}

/// The value to write back to restore a tracefs file read as `cur`.
fn restorable(rel: &str, cur: &str) -> String {
    let cur = cur.trim();
    match rel {
        // "[local] global counter ..." → "local"
        "trace_clock" => cur
            .split_whitespace()
            .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
            .unwrap_or("local")
            .to_string(),
        // "7 (expanded: 1408)" → "1408"
        "buffer_size_kb" => match cur.split_once("(expanded:") {
            Some((_, rest)) => rest.trim_end_matches(')').trim().to_string(),
            None => cur.split_whitespace().next().unwrap_or("1408").to_string(),
        },
        _ => cur.to_string(),
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        // tracing_on was saved first; restore in reverse so it is switched back on (if it
        // was on) only after everything else is as it was.
        let recorded = !self.saved.is_empty();
        for (rel, value) in self.saved.drain(..).rev() {
            let _ = std::fs::write(self.root.join(&rel), &value);
        }
        let mount_point = std::ffi::CString::new(MOUNT_POINT).ok();
        if let Some(p) = mount_point.filter(|_| self.mounted_by_us) {
            // SAFETY: a valid C string.
            unsafe { libc::umount2(p.as_ptr(), libc::MNT_DETACH) };
        }
        if recorded {
            let _ = std::fs::remove_file(tracefs_state::STATE_FILE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restorable_values() {
        assert_eq!(
            restorable("trace_clock", "[local] global counter uptime perf mono\n"),
            "local"
        );
        assert_eq!(
            restorable("trace_clock", "local global [mono] boot"),
            "mono"
        );
        assert_eq!(restorable("buffer_size_kb", "7 (expanded: 1408)\n"), "1408");
        assert_eq!(restorable("buffer_size_kb", "8192\n"), "8192");
        assert_eq!(restorable("tracing_on", "1\n"), "1");
    }

    #[test]
    fn folders_are_not_output_files() {
        for bad in [".", "..", "/tmp", "/nonexistent-dir/trace"] {
            let e = check_output(Path::new(bad)).unwrap_err().to_string();
            assert!(e.contains("-o"), "{bad}: {e}");
        }
        check_output(Path::new("trace")).unwrap();
        check_output(Path::new("/tmp/trace.pftrace")).unwrap();
    }

    #[test]
    fn output_file_names() {
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(
            output_files(Path::new("a/t.pftrace")),
            (p("a/t.pftrace"), None)
        );
        assert_eq!(output_files(Path::new("t.txt")), (None, p("t.txt")));
        assert_eq!(
            output_files(Path::new("run")),
            (p("run.pftrace"), p("run.txt"))
        );
        assert_eq!(
            output_files(Path::new("run.x")),
            (p("run.x.pftrace"), p("run.x.txt"))
        );
    }
}
