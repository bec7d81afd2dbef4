//! `--external`: runs the real tools where they are installed and reads their output with the
//! shared parsers of `schedlab_metrics::native`, so schedlab's implementations can be checked
//! against the originals.
//!
//! | workload | tool (Debian package) |
//! |---|---|
//! | hackbench | `hackbench` (rt-tests) |
//! | pipe | `perf bench sched pipe` (linux-perf) |
//! | tbench | `tbench_srv` + `tbench` (dbench), on 127.0.0.1:7003; whole seconds, at least 2 |
//! | pgbench | `pgbench` against a throwaway PostgreSQL started on 127.0.0.1 (postgresql) |
//! | schbench | none: not packaged for Debian |
//!
//! Every tool runs in its own process group, which is SIGKILLed on timeout, Ctrl-C or error;
//! the PostgreSQL server is stopped and its directory removed however the run ends.

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

/// A running tool in its own process group; killed (the whole group) on drop.
pub(crate) struct Tool {
    child: std::process::Child,
    name: String,
    out: Option<std::thread::JoinHandle<String>>,
    err: Option<std::thread::JoinHandle<String>>,
}

impl Tool {
    pub(crate) fn spawn(cmd: &mut Command) -> Result<Tool, HostError> {
        let name = format!(
            "{} {}",
            cmd.get_program().to_string_lossy(),
            cmd.get_args()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        );
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        crate::sys::die_with_parent(cmd);
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
/// cost-model keys (`query_work`, `hub_work`, `wal_flush`) are accepted and ignored.
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
        p.model_only(&["query_work", "hub_work", "wal_flush"]);
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
pub(crate) struct PgServer {
    dir: PathBuf,
    pg_ctl: PathBuf,
    as_postgres: bool,
    /// The port it listens on (127.0.0.1 only).
    pub port: u16,
}

fn as_user(as_postgres: bool, prog: &Path) -> Command {
    if as_postgres {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(prog);
        c
    } else {
        Command::new(prog)
    }
}

impl PgServer {
    /// initdb into a fresh temporary directory and start the server on a free loopback port.
    /// PostgreSQL refuses to run as root, so as root it runs as the `postgres` user.
    pub(crate) fn start(deadline: &Deadline) -> Result<PgServer, HostError> {
        let extra = pg_bin_dirs();
        let unavailable = |tool: &str| HostError::ExternalUnavailable {
            tool: tool.into(),
            hint: "install the Debian package `postgresql`".into(),
        };
        let initdb = which("initdb", &extra).ok_or_else(|| unavailable("initdb"))?;
        let pg_ctl = which("pg_ctl", &extra).ok_or_else(|| unavailable("pg_ctl"))?;
        let as_postgres = crate::sys::is_root();
        let dir = std::env::temp_dir().join(format!(
            "schedlab-pg-{}-{}",
            std::process::id(),
            crate::sys::monotonic_ns()
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| HostError::io(format!("creating {}", dir.display()), e))?;
        // From here on the guard removes the directory whatever happens.
        let port = free_port()?;
        let srv = PgServer {
            dir,
            pg_ctl,
            as_postgres,
            port,
        };
        if as_postgres {
            let st = Command::new("chown")
                .args(["postgres:"])
                .arg(&srv.dir)
                .status()
                .map_err(|e| HostError::io("chown postgres", e))?;
            if !st.success() {
                return Err(HostError::ExternalUnavailable {
                    tool: "postgres".into(),
                    hint: "running as root needs a `postgres` user to run the server as".into(),
                });
            }
        }
        let data = srv.dir.join("data");
        run_tool(
            as_user(as_postgres, &initdb).arg("-D").arg(&data).args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ]),
            deadline,
        )?;
        let opts = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={} -c fsync=off",
            srv.dir.display()
        );
        run_tool(
            as_user(as_postgres, &srv.pg_ctl)
                .arg("-D")
                .arg(&data)
                .args(["-o", &opts, "-l"])
                .arg(srv.dir.join("log"))
                .args(["-w", "-t", "30", "start"]),
            deadline,
        )?;
        Ok(srv)
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = as_user(self.as_postgres, &self.pg_ctl)
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "immediate", "-w", "-t", "20", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
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
