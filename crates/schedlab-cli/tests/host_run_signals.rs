//! `host run` and `host run --external` leave the machine as they found it (a shared benchmark
//! host must not keep stray benchmark processes, temporary files or tracing settings):
//! SIGKILL, SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to schedlab while a benchmark runs. After
//! each, no process that the run started is left (by pid, by process group, and by a marker in
//! the environment, which catches processes started after the snapshot), the temporary
//! directory the run was given (`TMPDIR`) is empty, and tracefs is as it was. A caught signal
//! must end schedlab through its own clean-up (it exits; it is not killed by the signal).
//!
//! SIGKILL runs no handler: the children die of their parent-death signal, and the only thing
//! allowed to outlive it is a PostgreSQL directory (`schedlab-pg-*`), which the next pgbench
//! run removes — checked by the run that follows it in the same `TMPDIR`.
//!
//! The suite sends PostgreSQL only SIGKILL and SIGINT (each start takes seconds);
//! `SCHEDLAB_SIGNAL_TEST_FULL=1` sends it all five. External tools that are not installed (rt-tests `hackbench`, dbench's `tbench` and
//! `tbench_srv`, PostgreSQL's `pgbench`/`initdb`/`postgres`) are skipped with a message, as is
//! the tracefs comparison when tracefs cannot be read. Waits poll for a state with generous
//! bounds (a noisy VM); nothing asserts on timings.

mod common;

use common::{Guard, bin};
use std::collections::BTreeSet;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MARK: &str = "SCHEDLAB_SIGNAL_TEST_MARK";

/// The tracefs settings a run could change (buffer size included: a host run must not
/// touch it at all), where `host capture` finds tracefs.
fn tracefs_state() -> Option<Vec<String>> {
    let mut files = common::CAPTURE_FILES.to_vec();
    files.push("buffer_size_kb");
    common::tracefs_state_of(&files)
}

/// One process as /proc shows it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Proc {
    pid: u32,
    ppid: u32,
    pgid: u32,
    /// Start time in clock ticks since boot: a pid reused later has another.
    start: u64,
    comm: String,
    zombie: bool,
}

fn read_proc(pid: u32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (head, rest) = stat.rsplit_once(')')?;
    let comm = head.split_once('(')?.1.to_string();
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields after the command: state(3) ppid(4) pgrp(5) ... starttime(22), 1-based in proc(5).
    Some(Proc {
        pid,
        ppid: f.get(1)?.parse().ok()?,
        pgid: f.get(2)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
        comm,
        zombie: f.first() == Some(&"Z"),
    })
}

fn all_procs() -> Vec<Proc> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter_map(read_proc)
        .collect()
}

/// Every live process below `root` (children, grandchildren, ...).
fn descendants(root: u32) -> Vec<Proc> {
    let procs = all_procs();
    let mut found = vec![root];
    let mut out = Vec::new();
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        for p in procs.iter().filter(|p| p.ppid == parent && !p.zombie) {
            found.push(p.pid);
            out.push(p.clone());
        }
        i += 1;
    }
    out
}

/// Whether `pid`'s environment carries `mark` (PostgreSQL rewrites that area for its process
/// titles, which the process-group check covers).
fn has_mark(pid: u32, mark: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
        env.split(|&b| b == 0)
            .any(|kv| kv == format!("{MARK}={mark}").as_bytes())
    })
}

/// What is left of a run: processes that were seen (same pid and start time) or are in one of
/// their process groups or carry the run's marker, other than `except`.
fn leftovers(seen: &[Proc], mark: &str, except: u32) -> Vec<Proc> {
    // The test's own group is not the run's: schedlab and its forked workers inherit it.
    // SAFETY: getpgrp has no preconditions.
    let own = unsafe { libc::getpgrp() } as u32;
    let groups: BTreeSet<u32> = seen.iter().map(|p| p.pgid).filter(|&g| g != own).collect();
    all_procs()
        .into_iter()
        .filter(|p| p.pid != except && !p.zombie)
        .filter(|p| {
            seen.iter().any(|s| s.pid == p.pid && s.start == p.start)
                || groups.contains(&p.pgid)
                || has_mark(p.pid, mark)
        })
        .collect()
}

fn wait_for(what: &str, bound: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < bound, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One way to run a benchmark under `host run`.
struct Case {
    label: &'static str,
    args: &'static [&'static str],
    /// Programs that must be on PATH (or in PostgreSQL's directories) for the case to run.
    tools: &'static [&'static str],
    /// Running for real: these commands are among schedlab's descendants (or, with none, it
    /// has more than two threads: the built-in threaded benchmarks).
    running: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        label: "built-in hackbench (processes)",
        args: &["hackbench:groups=2,loops=100000000,mode=process"],
        tools: &[],
        // The harness names its forked workers as the simulator's model does.
        running: &["sender", "receiver"],
    },
    Case {
        label: "built-in tbench (threads, loopback TCP)",
        args: &["tbench:clients=2,duration=300s"],
        tools: &[],
        running: &[],
    },
    Case {
        label: "--external hackbench",
        args: &["--external", "hackbench:groups=2,loops=100000000"],
        tools: &["hackbench"],
        running: &["hackbench"],
    },
    Case {
        label: "--external tbench",
        args: &["--external", "tbench:clients=2,duration=300s"],
        tools: &["tbench", "tbench_srv"],
        running: &["tbench", "tbench_srv"],
    },
    Case {
        label: "--external pgbench",
        args: &["--external", "pgbench:clients=2,duration=300s"],
        tools: &["pgbench", "initdb", "postgres"],
        running: &["pgbench", "postgres"],
    },
];

fn installed(tool: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let pg = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"));
    std::env::split_paths(&path)
        .chain(pg)
        .any(|d| d.join(tool).is_file())
}

fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count())
}

/// Starts `case` and waits until its benchmark runs; the child and the processes below it.
fn start(case: &Case, tmp: &Path, mark: &str) -> Result<(Guard, Vec<Proc>), String> {
    let c = Command::new(bin())
        .args(["host", "run", "--timeout", "600"])
        .args(case.args)
        .env("TMPDIR", tmp)
        .env(MARK, mark)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Ends the run and what it started if the test fails from here on.
    let mut c = Guard::new(c);
    let pid = c.id();
    let t0 = Instant::now();
    loop {
        if let Some(st) = c.child.try_wait().unwrap() {
            let mut e = String::new();
            use std::io::Read;
            c.child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut e)
                .unwrap();
            return Err(format!("ended before the signal ({st}): {}", e.trim()));
        }
        let below = descendants(pid);
        let ready = if case.running.is_empty() {
            threads(pid) > 2
        } else {
            case.running
                .iter()
                .all(|name| below.iter().any(|p| p.comm == *name))
        };
        if ready {
            // Let the run settle into its steady state (workers forked, clients connected).
            std::thread::sleep(Duration::from_millis(300));
            let seen = descendants(pid);
            c.also = seen.iter().map(|p| p.pid).collect();
            return Ok((c, seen));
        }
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "{}: never started running: {below:?}",
            case.label
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn tmp_entries(tmp: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn every_signal_to_host_run_leaves_no_process_no_file_and_tracefs_as_it_was() {
    let tracefs_before = tracefs_state();
    if tracefs_before.is_none() {
        println!(
            "tracefs comparison skipped: {} not readable (needs root and tracefs)",
            common::tracefs_root().display()
        );
    }
    let signals = [
        // SIGKILL first: the run after it checks that the next run cleans what it left.
        ("SIGKILL", libc::SIGKILL),
        ("SIGINT", libc::SIGINT),
        ("SIGTERM", libc::SIGTERM),
        ("SIGHUP", libc::SIGHUP),
        ("SIGQUIT", libc::SIGQUIT),
    ];
    let mut ran = 0;
    for case in CASES {
        if let Some(t) = case.tools.iter().find(|t| !installed(t)) {
            println!("skipped {}: `{t}` is not installed", case.label);
            continue;
        }
        let tmp = common::tempdir();
        // PostgreSQL runs as the `postgres` user when the test is root: it must reach its
        // directory below TMPDIR.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        // PostgreSQL takes seconds to initdb and start: the suite sends it SIGKILL and the
        // SIGINT whose run removes what the SIGKILL left; SCHEDLAB_SIGNAL_TEST_FULL=1 sends
        // it every signal.
        let full = std::env::var_os("SCHEDLAB_SIGNAL_TEST_FULL").is_some();
        for (name, sig) in signals {
            if case.label.contains("pgbench")
                && !full
                && ![libc::SIGKILL, libc::SIGINT].contains(&sig)
            {
                println!(
                    "{} / {name}: skipped (SCHEDLAB_SIGNAL_TEST_FULL=1 runs it)",
                    case.label
                );
                continue;
            }
            let t_case = Instant::now();
            let what = format!("{} / {name}", case.label);
            let mark = format!("{}-{name}-{}", std::process::id(), case.label.len());
            let (mut c, seen) = match start(case, tmp.path(), &mark) {
                Ok(r) => r,
                Err(e) if e.contains("already in use") => {
                    println!("skipped {what}: {e}");
                    continue;
                }
                Err(e) => panic!("{what}: {e}"),
            };
            // SAFETY: signalling the child this test started.
            unsafe { libc::kill(c.id() as libc::pid_t, sig) };
            let bound = Duration::from_secs(60);
            let t0 = Instant::now();
            let status = loop {
                if let Some(st) = c.child.try_wait().unwrap() {
                    break st;
                }
                assert!(t0.elapsed() < bound, "{what}: schedlab did not exit");
                std::thread::sleep(Duration::from_millis(20));
            };
            if sig == libc::SIGKILL {
                assert_eq!(status.signal(), Some(libc::SIGKILL), "{what}: {status}");
            } else {
                assert_eq!(
                    status.signal(),
                    None,
                    "{what}: schedlab died of the signal instead of cleaning up ({status})"
                );
                // Like every command, a host run a signal stops exits 128 + the signal.
                assert_eq!(status.code(), Some(128 + sig), "{what}: {status}");
            }
            wait_for(&format!("{what}: every process to end"), bound, || {
                leftovers(&seen, &mark, c.id()).is_empty()
            });
            let left = tmp_entries(tmp.path());
            if sig == libc::SIGKILL {
                assert!(
                    left.iter().all(|f| f.starts_with("schedlab-pg-")),
                    "{what}: temporary files left: {left:?}"
                );
            } else {
                assert!(left.is_empty(), "{what}: temporary files left: {left:?}");
            }
            if tracefs_before.is_some() {
                assert_eq!(tracefs_state(), tracefs_before, "{what}: tracefs changed");
            }
            println!(
                "{what}: {} processes, all gone; TMPDIR {left:?} ({:.1} s)",
                seen.len(),
                t_case.elapsed().as_secs_f64()
            );
            c.finished();
            ran += 1;
        }
    }
    println!("{ran} interrupted runs checked");
}
