//! `--external`: runs the real tools where they are installed and reads their output with the
//! shared parsers of `schedlab_metrics::native`, so schedlab's implementations can be checked
//! against the originals.
//!
//! | workload | tool (Debian package) |
//! |---|---|
//! | hackbench | `hackbench` (rt-tests) |
//! | pipe | `perf bench sched pipe` (linux-perf) |
//! | tbench | `tbench_srv` + `tbench` (dbench), on 127.0.0.1:7003; whole seconds, at least 2 |
//! | pgbench | `pgbench` against a throwaway PostgreSQL started on 127.0.0.1 (postgresql; `fsync=off`; the simulator's server keys such as `postgres=` are recorded as ignored) |
//! | schbench | none: not packaged for Debian |
//!
//! Every tool runs in its own process group, which is SIGKILLed on timeout, Ctrl-C (or SIGTERM,
//! SIGHUP, SIGQUIT) or error, and with a parent-death signal, so a SIGKILL of schedlab ends it
//! too. The PostgreSQL server is stopped and its directory removed however the run ends; after
//! a SIGKILL of schedlab the server shuts itself down and the next pgbench run removes the
//! directory.

use crate::control::Deadline;
use crate::error::HostError;
use crate::spec::{self, Params};
use std::io::Read;
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a finished tool printed.
pub(crate) struct ToolOutput {
    pub stdout: String,
}

/// Finds `tool` on PATH (or in `extra` directories).
pub(crate) fn which(tool: &str, extra: &[PathBuf]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra.iter().cloned())
        .map(|d| d.join(tool))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn require(tool: &str, package: &str) -> Result<PathBuf, HostError> {
    which(tool, &[]).ok_or_else(|| HostError::ExternalUnavailable {
        tool: tool.to_string(),
        hint: format!(
            "not on PATH; install the Debian package `{package}` (apt-get install {package})"
        ),
    })
}

/// The keeper shell of [`Tool::spawn`]: runs the tool (its arguments) in the background so
/// that a SIGTERM (its parent-death signal) interrupts `wait` at once, and then kills the
/// process group it leads, the tool and every worker the tool forked. The tool's exit status
/// is the keeper's (a signal shows as 128 + its number).
const KEEPER: &str = "trap 'kill -KILL 0' TERM; \"$@\" & wait $!";

/// `program arg ...` of a command, for messages.
fn command_line(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A running tool in its own process group; killed (the whole group) on drop.
pub(crate) struct Tool {
    child: std::process::Child,
    name: String,
    out: Option<std::thread::JoinHandle<String>>,
    err: Option<std::thread::JoinHandle<String>>,
}

impl Tool {
    ///
    /// The tool runs below a keeper shell that leads its process group: a parent-death
    /// signal reaches only the process schedlab started, and these tools fork workers
    /// (hackbench's senders and receivers, tbench's clients and tbench_srv's per-connection
    /// servers, perf's pipe partner) that would outlive a SIGKILLed schedlab, still running
    /// their loops. The keeper gets SIGTERM when schedlab dies and SIGKILLs the whole group.
    pub(crate) fn spawn(cmd: &mut Command) -> Result<Tool, HostError> {
        let mut keeper = Command::new("/bin/sh");
        keeper
            .args(["-c", KEEPER, "schedlab-keeper"])
            .arg(cmd.get_program())
            .args(cmd.get_args());
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => keeper.env(k, v),
                None => keeper.env_remove(k),
            };
        }
        if let Some(d) = cmd.get_current_dir() {
            keeper.current_dir(d);
        }
        let mut t = Tool::spawn_with(&mut keeper, libc::SIGTERM)?;
        t.name = command_line(cmd);
        Ok(t)
    }

    /// Starts `cmd` itself (no keeper: it keeps the credentials `Command::uid` gave it) with
    /// `pdeath` as the signal it gets when schedlab dies.
    pub(crate) fn spawn_with(cmd: &mut Command, pdeath: libc::c_int) -> Result<Tool, HostError> {
        let name = command_line(cmd);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        crate::sys::die_with_parent_by(cmd, pdeath);
        let mut child = cmd
            .spawn()
            .map_err(|e| HostError::io(format!("starting `{name}`"), e))?;
        let drain = |r: Option<Box<dyn Read + Send>>| {
            r.map(|mut r| {
                std::thread::spawn(move || {
                    let mut b = Vec::new();
                    let _ = r.read_to_end(&mut b);
                    String::from_utf8_lossy(&b).into_owned()
                })
            })
        };
        let out = drain(
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        );
        let err = drain(
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        );
        Ok(Tool {
            child,
            name,
            out,
            err,
        })
    }

    fn kill_group(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: signalling our own child's process group.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = self.child.wait();
    }

    /// The exit status if the tool has ended.
    fn exited(&mut self) -> Option<String> {
        self.child.try_wait().ok().flatten().map(|s| s.to_string())
    }

    /// Sends `sig` to the tool, waits up to `grace` for it to end, then SIGKILLs its group.
    fn stop(mut self, sig: libc::c_int, grace: Duration) {
        crate::sys::kill(self.child.id() as libc::pid_t, sig);
        let t0 = Instant::now();
        while self.exited().is_none() && t0.elapsed() < grace {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill_group();
    }

    /// Waits for the tool to exit within the deadline; fails on a non-zero exit.
    pub(crate) fn wait(mut self, deadline: &Deadline) -> Result<ToolOutput, HostError> {
        let status = loop {
            if let Err(e) = deadline.check(&self.name) {
                self.kill_group();
                return Err(e);
            }
            match self.child.try_wait() {
                Ok(Some(st)) => break st,
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(HostError::io(format!("waiting for `{}`", self.name), e)),
            }
        };
        // Stragglers of the group (forked workers) must not outlive the tool.
        // SAFETY: signalling our own child's process group.
        unsafe { libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL) };
        let stdout = self
            .out
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let stderr = self
            .err
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        if !status.success() {
            let all = format!("{stdout}{stderr}");
            let tail: String = all
                .lines()
                .rev()
                .take(6)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join(" | ");
            return Err(HostError::ExternalFailed {
                tool: self.name.clone(),
                status: status.to_string(),
                output: tail,
            });
        }
        Ok(ToolOutput { stdout })
    }
}

impl Drop for Tool {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill_group();
        }
    }
}

/// Runs `cmd` to completion within the deadline.
fn run_tool(cmd: &mut Command, deadline: &Deadline) -> Result<ToolOutput, HostError> {
    Tool::spawn(cmd)?.wait(deadline)
}

/// The result of an external run: the tool's own output and the parsed metrics.
pub(crate) struct ExternalRun {
    pub native: String,
    pub metrics: Vec<schedlab_metrics::Metric>,
    pub params: std::collections::BTreeMap<String, String>,
}

/// Runs the real tool for `spec`.
pub(crate) fn run(spec: &spec::WorkloadSpec, limit: Duration) -> Result<ExternalRun, HostError> {
    let deadline = Deadline::new(limit);
    let mut p = Params::new(spec);
    match spec.name.as_str() {
        "hackbench" => {
            let hp = crate::bench::hackbench::HackbenchParams::read(&mut p)?;
            let params = p.finish()?;
            let bin = require("hackbench", "rt-tests")?;
            let mut cmd = Command::new(bin);
            cmd.args(["-g", &hp.groups.to_string(), "-f", &hp.fds.to_string()])
                .args(["-l", &hp.loops.to_string(), "-s", &hp.datasize.to_string()]);
            match hp.ipc {
                "pipe" => {
                    cmd.arg("-p");
                }
                "inet" => {
                    cmd.arg("-i");
                }
                _ => {}
            }
            cmd.arg(if hp.threads { "-T" } else { "-P" });
            let out = run_tool(&mut cmd, &deadline)?;
            let r = schedlab_metrics::native::parse_hackbench(&out.stdout)?;
            Ok(ExternalRun {
                metrics: r.metrics(),
                native: out.stdout,
                params,
            })
        }
        "pipe" => {
            let pp = crate::bench::pipe::PipeParams::read(&mut p)?;
            let params = p.finish()?;
            if pp.pairs != 1 {
                return Err(HostError::ExternalUnavailable {
                    tool: "perf bench sched pipe".into(),
                    hint: "it runs one pair; use pairs=1 or the built-in implementation".into(),
                });
            }
            let bin = require("perf", "linux-perf")?;
            let mut cmd = Command::new(bin);
            cmd.args(["bench", "sched", "pipe", "-l", &pp.loops.to_string()]);
            if pp.threads {
                cmd.arg("-T");
            }
            let out = run_tool(&mut cmd, &deadline)?;
            let r = schedlab_metrics::native::parse_perf_pipe(&out.stdout)?;
            Ok(ExternalRun {
                metrics: r.metrics(),
                native: out.stdout,
                params,
            })
        }
        "tbench" => {
            let tp = crate::bench::tbench::TbenchParams::read(&mut p)?;
            let params = p.finish()?;
            run_tbench(tp.clients, tp.duration, params, &deadline)
        }
        "pgbench" => {
            let pg = PgbenchParams::read(&mut p)?;
            let params = p.finish()?;
            run_pgbench(&pg, params, &deadline)
        }
        "schbench" => Err(HostError::ExternalUnavailable {
            tool: "schbench".into(),
            hint: "it is not packaged for Debian; run `schedlab host run schbench` (the built-in \
                   implementation) instead"
                .into(),
        }),
        other => Err(HostError::ExternalUnavailable {
            tool: other.into(),
            hint: "no external tool is known for this workload".into(),
        }),
    }
}

/// tbench_srv's fixed port.
const TBENCH_PORT: u16 = 7003;

fn run_tbench(
    clients: u64,
    duration: Duration,
    params: std::collections::BTreeMap<String, String>,
    deadline: &Deadline,
) -> Result<ExternalRun, HostError> {
    let srv_bin = require("tbench_srv", "dbench")?;
    let cli_bin = require("tbench", "dbench")?;
    let addr = format!("127.0.0.1:{TBENCH_PORT}");
    if TcpStream::connect(&addr).is_ok() {
        return Err(HostError::ExternalUnavailable {
            tool: "tbench_srv".into(),
            hint: format!("port {TBENCH_PORT} on 127.0.0.1 is already in use"),
        });
    }
    let _srv = Tool::spawn(&mut Command::new(srv_bin))?;
    let t0 = Instant::now();
    while TcpStream::connect(&addr).is_err() {
        deadline.check("tbench_srv start")?;
        if t0.elapsed() > Duration::from_secs(5) {
            return Err(HostError::ExternalFailed {
                tool: "tbench_srv".into(),
                status: "running".into(),
                output: format!("not accepting on {addr} after 5 s"),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // tbench takes whole seconds and reports 0 MB/sec for a 1-second run (no measurement
    // window after its warm-up), so it runs at least 2 s.
    let secs = duration.as_secs_f64().ceil().max(2.0) as u64;
    let mut cmd = Command::new(cli_bin);
    cmd.args(["-t", &secs.to_string(), &clients.to_string(), "127.0.0.1"])
        .current_dir(std::env::temp_dir());
    let out = run_tool(&mut cmd, deadline)?;
    let r = schedlab_metrics::native::parse_tbench(&out.stdout)?;
    let mut params = params;
    params.insert("duration".into(), format!("{secs}s"));
    Ok(ExternalRun {
        metrics: r.metrics(),
        native: out.stdout,
        params,
    })
}

/// pgbench parameters (host only: pgbench has no built-in implementation). The simulator's
/// server and cost-model keys (`postgres`, `shared_buffers`, `query_work`, `wal_fsync`, ...)
/// are accepted and recorded as ignored: the host runs the installed PostgreSQL with the
/// settings of its throwaway server (`fsync=off`).
#[derive(Clone, Debug)]
pub(crate) struct PgbenchParams {
    pub clients: u64,
    pub jobs: u64,
    pub duration: Duration,
    pub scale: u64,
    /// `-b` builtin script: select-only (-S), simple-update (-N) or tpcb-like.
    pub builtin: &'static str,
}

impl PgbenchParams {
    pub(crate) fn read(p: &mut Params) -> Result<Self, HostError> {
        let r = PgbenchParams {
            clients: p.u64("clients", 1, 1, 1000)?,
            jobs: p.u64("jobs", 1, 1, 1000)?,
            builtin: p.choice(
                "builtin",
                "tpcb-like",
                &["select-only", "simple-update", "tpcb-like"],
            )?,
            scale: p.u64("scale", 1, 1, 100)?,
            duration: p.duration(
                "duration",
                Duration::from_secs(5),
                Duration::from_secs(1),
                Duration::from_secs(3600),
            )?,
        };
        p.model_only(&[
            "postgres",
            "shared_buffers",
            "synchronous_commit",
            "query_work",
            "hub_work",
            "wal_fsync",
            "bgwriter_delay",
            "wal_writer_delay",
            "checkpoint_timeout",
        ]);
        Ok(r)
    }
}

/// Directories where Debian keeps PostgreSQL's server binaries.
fn pg_bin_dirs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    v.sort();
    v.reverse();
    v
}

/// A throwaway PostgreSQL server on 127.0.0.1: stopped and its directory removed on drop.
///
/// The postmaster runs in the foreground as a [`Tool`] (not daemonized by `pg_ctl`, which
/// would put it in a session of its own, out of reach of schedlab's process group kill and
/// parent-death signal): in schedlab's care it is in its own process group with SIGQUIT as its
/// parent-death signal, so even a SIGKILL of schedlab ends it with an immediate shutdown
/// (backends stopped, shared memory removed). Only its directory outlives such a kill; the
/// next pgbench run removes it ([`remove_stale_dirs`]).
pub(crate) struct PgServer {
    dir: PathBuf,
    server: Option<Tool>,
    /// The port it listens on (127.0.0.1 only).
    pub port: u16,
}

/// The prefix of the servers' directories in the temporary directory:
/// `schedlab-pg-PID-NANOS`, PID being the schedlab process that made it.
const PG_DIR_PREFIX: &str = "schedlab-pg-";

/// Removes the server directories that schedlab processes which no longer exist left in
/// `tmp` (a SIGKILL runs no destructor), unless a server still runs in one.
fn remove_stale_dirs(tmp: &Path) {
    for e in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(owner) = name
            .strip_prefix(PG_DIR_PREFIX)
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let postmaster = std::fs::read_to_string(e.path().join("data/postmaster.pid"))
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()));
        if owner != std::process::id() as libc::pid_t
            && !crate::sys::pid_exists(owner)
            && !postmaster.is_some_and(crate::sys::pid_exists)
        {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// `prog` as the `postgres` user when schedlab is root (PostgreSQL refuses to run as root).
fn as_postgres(prog: &Path, ids: Option<(u32, u32)>, cwd: &Path) -> Command {
    use std::os::unix::process::CommandExt as _;
    let mut c = Command::new(prog);
    if let Some((uid, gid)) = ids {
        c.uid(uid).gid(gid);
    }
    c.current_dir(cwd);
    c
}

impl PgServer {
    /// initdb into a fresh temporary directory and start the server on a free loopback port.
    /// As root, initdb and the server run as the `postgres` user.
    pub(crate) fn start(deadline: &Deadline) -> Result<PgServer, HostError> {
        let extra = pg_bin_dirs();
        let unavailable = |tool: &str| HostError::ExternalUnavailable {
            tool: tool.into(),
            hint: "install the Debian package `postgresql`".into(),
        };
        let initdb = which("initdb", &extra).ok_or_else(|| unavailable("initdb"))?;
        let postgres = which("postgres", &extra).ok_or_else(|| unavailable("postgres"))?;
        let ids = if crate::sys::is_root() {
            Some(crate::sys::user_ids("postgres").ok_or_else(|| {
                HostError::ExternalUnavailable {
                    tool: "postgres".into(),
                    hint: "running as root needs a `postgres` user to run the server as".into(),
                }
            })?)
        } else {
            None
        };
        let tmp = std::env::temp_dir();
        remove_stale_dirs(&tmp);
        let dir = tmp.join(format!(
            "{PG_DIR_PREFIX}{}-{}",
            std::process::id(),
            crate::sys::monotonic_ns()
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| HostError::io(format!("creating {}", dir.display()), e))?;
        // From here on the guard removes the directory whatever happens.
        let port = free_port()?;
        let mut srv = PgServer {
            dir,
            server: None,
            port,
        };
        if let Some((uid, gid)) = ids {
            std::os::unix::fs::chown(&srv.dir, Some(uid), Some(gid))
                .map_err(|e| HostError::io(format!("chown postgres {}", srv.dir.display()), e))?;
        }
        let data = srv.dir.join("data");
        // Started directly: a keeper shell would run it as root, which initdb refuses.
        Tool::spawn_with(
            as_postgres(&initdb, ids, &srv.dir)
                .arg("-D")
                .arg(&data)
                .args(["-A", "trust", "-U", "postgres", "--no-sync"]),
            libc::SIGKILL,
        )?
        .wait(deadline)?;
        let mut cmd = as_postgres(&postgres, ids, &srv.dir);
        cmd.arg("-D").arg(&data).args([
            "-p",
            &port.to_string(),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
        ]);
        cmd.arg(format!("unix_socket_directories={}", srv.dir.display()))
            .args(["-c", "fsync=off"]);
        let server = srv
            .server
            .insert(Tool::spawn_with(&mut cmd, libc::SIGQUIT)?);
        // Ready when the postmaster writes `ready` on the 8th line of postmaster.pid (what
        // `pg_ctl -w` waits for, PostgreSQL 10 and later).
        let pidfile = data.join("postmaster.pid");
        let t0 = Instant::now();
        loop {
            deadline.check("postgres start")?;
            let ready = std::fs::read_to_string(&pidfile)
                .is_ok_and(|t| t.lines().nth(7).is_some_and(|l| l.trim() == "ready"));
            if ready {
                break;
            }
            if let Some(st) = server.exited() {
                return Err(HostError::ExternalFailed {
                    tool: "postgres".into(),
                    status: st,
                    output: "the server ended while starting".into(),
                });
            }
            if t0.elapsed() > Duration::from_secs(30) {
                return Err(HostError::ExternalFailed {
                    tool: "postgres".into(),
                    status: "running".into(),
                    output: "not ready after 30 s".into(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(srv)
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            // Immediate shutdown: the postmaster stops its backends and removes its shared
            // memory; whatever is left after 20 s is SIGKILLed with the group.
            server.stop(libc::SIGQUIT, Duration::from_secs(20));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
fn free_port() -> Result<u16, HostError> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| HostError::io("finding a free port on 127.0.0.1", e))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| HostError::io("finding a free port on 127.0.0.1", e))
}

fn run_pgbench(
    pg: &PgbenchParams,
    params: std::collections::BTreeMap<String, String>,
    deadline: &Deadline,
) -> Result<ExternalRun, HostError> {
    let pgbench =
        which("pgbench", &pg_bin_dirs()).ok_or_else(|| HostError::ExternalUnavailable {
            tool: "pgbench".into(),
            hint: "install the Debian package `postgresql`".into(),
        })?;
    let srv = PgServer::start(deadline)?;
    let port = srv.port.to_string();
    let conn = ["-h", "127.0.0.1", "-p", port.as_str(), "-U", "postgres"];
    run_tool(
        Command::new(&pgbench).args(conn).args([
            "-i",
            "-q",
            "-s",
            &pg.scale.to_string(),
            "postgres",
        ]),
        deadline,
    )?;
    let secs = pg.duration.as_secs().max(1);
    let mut cmd = Command::new(&pgbench);
    cmd.args(conn)
        .args(["-c", &pg.clients.to_string(), "-j", &pg.jobs.to_string()])
        .args(["-T", &secs.to_string()]);
    cmd.args(["-b", pg.builtin]);
    cmd.arg("postgres");
    let out = run_tool(&mut cmd, deadline)?;
    drop(srv);
    let r = schedlab_metrics::native::parse_pgbench(&out.stdout)?;
    Ok(ExternalRun {
        metrics: r.metrics(),
        native: out.stdout,
        params,
    })
}
