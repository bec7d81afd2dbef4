//! hackbench on real tasks, after rt-tests' `hackbench.c` (rt-tests 2.x; the same groups,
//! messages and timing as `perf bench sched messaging`).
//!
//! G groups of F receivers and F senders. Each receiver owns one channel (a pipe, an AF_UNIX
//! stream socketpair, or with `ipc=inet` a TCP connection over 127.0.0.1); the F senders of a group share one write descriptor per
//! receiver and write `loops` rounds of one `datasize`-byte message to every receiver in turn.
//! Every worker writes a byte to a "ready" pipe and polls a "wake" pipe; the clock starts when
//! all are ready and the wake byte is written, and stops when every worker has been reaped
//! (processes) or joined (threads), so exit and reap time count, as in rt-tests.

use crate::control::{Children, ChildrenGuard, Deadline, Threads, Watchdog};
use crate::error::HostError;
use crate::spec::Params;
use crate::sys::{self, NEVER, Stop};
use schedlab_metrics::native::HackbenchReport;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// hackbench parameters (the simulator's names and defaults).
#[derive(Clone, Debug)]
pub(crate) struct HackbenchParams {
    pub groups: u64,
    pub loops: u64,
    pub fds: u64,
    pub datasize: u64,
    /// `pipe`, `socket` (AF_UNIX stream) or `inet` (TCP on 127.0.0.1).
    pub ipc: &'static str,
    pub threads: bool,
}

impl HackbenchParams {
    pub(crate) fn read(p: &mut Params) -> Result<Self, HostError> {
        Ok(HackbenchParams {
            groups: p.u64("groups", 10, 1, 1000)?,
            loops: p.u64("loops", 100, 1, 1_000_000_000)?,
            fds: p.u64("fds", 20, 1, 1000)?,
            datasize: p.bytes("datasize", 100, 1, 1 << 20)?,
            ipc: p.choice("ipc", "socket", &["socket", "pipe", "inet"])?,
            threads: p.choice("mode", "process", &["process", "thread"])? == "thread",
        })
    }
}

struct Chan {
    rd: OwnedFd,
    wr: OwnedFd,
}

/// Descriptors a stuck run is unblocked through.
struct PokeFds {
    wake: (RawFd, RawFd),
    ready: (RawFd, RawFd),
    chans: Vec<(RawFd, RawFd)>,
    socket: bool,
}

impl PokeFds {
    fn poke(&self) {
        sys::poke_pipe(-1, self.wake.1);
        sys::poke_pipe(-1, self.ready.1);
        for &(rd, wr) in &self.chans {
            if self.socket {
                sys::shutdown(rd);
                sys::shutdown(wr);
            } else {
                sys::poke_pipe(rd, wr);
            }
        }
    }
}

/// A connected TCP pair over 127.0.0.1: (receiving end, sending end).
fn tcp_pair(l: &std::net::TcpListener) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let tx = std::net::TcpStream::connect(l.local_addr()?)?;
    let (rx, _) = l.accept()?;
    Ok((OwnedFd::from(rx), OwnedFd::from(tx)))
}

fn sender(
    out: &[RawFd],
    loops: u64,
    msg: &[u8],
    ready: RawFd,
    wake: RawFd,
    stop: &AtomicBool,
) -> Result<(), Stop> {
    sys::write_all(ready, &[1], stop)?;
    sys::wait_readable(wake, stop)?;
    for _ in 0..loops {
        for &fd in out {
            sys::write_all(fd, msg, stop)?;
        }
    }
    Ok(())
}

fn receiver(
    inp: RawFd,
    messages: u64,
    buf: &mut [u8],
    ready: RawFd,
    wake: RawFd,
    stop: &AtomicBool,
) -> Result<(), Stop> {
    sys::write_all(ready, &[1], stop)?;
    sys::wait_readable(wake, stop)?;
    for _ in 0..messages {
        sys::read_exact(inp, buf, stop)?;
    }
    Ok(())
}

fn exit_code(r: Result<(), Stop>) -> i32 {
    match r {
        Ok(()) => 0,
        Err(Stop::Eof) => 2,
        Err(Stop::Errno(_)) => 3,
        Err(Stop::Asked) => 4,
    }
}

/// Runs hackbench with real tasks; the report carries the measured time.
pub(crate) fn run(hp: &HackbenchParams, limit: Duration) -> Result<HackbenchReport, HostError> {
    let deadline = Deadline::new(limit);
    let what = "hackbench";
    let (ready_rd, ready_wr) = sys::pipe().map_err(|e| HostError::io("hackbench: pipe", e))?;
    let (wake_rd, wake_wr) = sys::pipe().map_err(|e| HostError::io("hackbench: pipe", e))?;
    let mut groups: Vec<Vec<Chan>> = Vec::new();
    let listener = if hp.ipc == "inet" {
        Some(
            std::net::TcpListener::bind("127.0.0.1:0")
                .map_err(|e| HostError::io("hackbench: binding 127.0.0.1", e))?,
        )
    } else {
        None
    };
    for _ in 0..hp.groups {
        let mut g = Vec::new();
        for _ in 0..hp.fds {
            let (rd, wr) = match &listener {
                Some(l) => tcp_pair(l),
                None if hp.ipc == "pipe" => sys::pipe(),
                None => sys::socketpair(),
            }
            .map_err(|e| HostError::io("hackbench: creating channels (raise `ulimit -n`?)", e))?;
            g.push(Chan { rd, wr });
        }
        groups.push(g);
    }
    drop(listener);
    let out_fds: Vec<Vec<RawFd>> = groups
        .iter()
        .map(|g| g.iter().map(|c| c.wr.as_raw_fd()).collect())
        .collect();
    let poke = Arc::new(PokeFds {
        wake: (wake_rd.as_raw_fd(), wake_wr.as_raw_fd()),
        ready: (ready_rd.as_raw_fd(), ready_wr.as_raw_fd()),
        chans: groups
            .iter()
            .flatten()
            .map(|c| (c.rd.as_raw_fd(), c.wr.as_raw_fd()))
            .collect(),
        socket: hp.ipc != "pipe",
    });
    let msg = vec![0x5au8; hp.datasize as usize];
    let tasks = 2 * hp.fds * hp.groups;
    let (ready_r, ready_w, wake_r) = (
        ready_rd.as_raw_fd(),
        ready_wr.as_raw_fd(),
        wake_rd.as_raw_fd(),
    );
    let messages = hp.fds * hp.loops;

    let elapsed = if hp.threads {
        let stop = Arc::new(AtomicBool::new(false));
        let pk = poke.clone();
        let mut threads: Threads<Result<(), Stop>> = Threads::new(stop.clone(), move || pk.poke());
        let out_fds = Arc::new(out_fds);
        let msg = Arc::new(msg);
        for (gi, g) in groups.iter().enumerate() {
            for c in g {
                let (inp, stop) = (c.rd.as_raw_fd(), stop.clone());
                let size = hp.datasize as usize;
                let h = std::thread::Builder::new()
                    .name("receiver".into())
                    .stack_size(256 << 10)
                    .spawn(move || {
                        let mut buf = vec![0u8; size];
                        receiver(inp, messages, &mut buf, ready_w, wake_r, &stop)
                    })
                    .map_err(|e| HostError::io("hackbench: spawning a thread", e))?;
                threads.push(h);
            }
            for _ in 0..hp.fds {
                let (out, msg, stop) = (out_fds.clone(), msg.clone(), stop.clone());
                let loops = hp.loops;
                let h = std::thread::Builder::new()
                    .name("sender".into())
                    .stack_size(256 << 10)
                    .spawn(move || sender(&out[gi], loops, &msg, ready_w, wake_r, &stop))
                    .map_err(|e| HostError::io("hackbench: spawning a thread", e))?;
                threads.push(h);
            }
        }
        wait_ready(ready_r, tasks, &deadline, what)?;
        let (pk, st) = (poke.clone(), stop.clone());
        let dog = Watchdog::start(&deadline, move || {
            st.store(true, Ordering::SeqCst);
            pk.poke()
        });
        let start = Instant::now();
        sys::write_all(wake_wr.as_raw_fd(), &[1], &NEVER).map_err(|e| HostError::WorkerFailed {
            what: what.into(),
            detail: format!("writing the wake byte: {}", e.describe()),
        })?;
        let results = threads.join_all();
        let elapsed = start.elapsed();
        dog.finish(what)?;
        for r in results {
            match r {
                Some(Ok(())) => {}
                Some(Err(e)) => {
                    return Err(HostError::WorkerFailed {
                        what: what.into(),
                        detail: e.describe(),
                    });
                }
                None => {
                    return Err(HostError::WorkerFailed {
                        what: what.into(),
                        detail: "a worker thread panicked".into(),
                    });
                }
            }
        }
        elapsed
    } else {
        let children = Children::default();
        let guard = ChildrenGuard(children.clone());
        let mut rbuf = vec![0u8; hp.datasize as usize];
        for (gi, g) in groups.iter().enumerate() {
            for c in g {
                let inp = c.rd.as_raw_fd();
                let buf = &mut rbuf[..];
                let pid = sys::fork_child(c"receiver", || {
                    exit_code(receiver(inp, messages, buf, ready_w, wake_r, &NEVER))
                })
                .map_err(|e| HostError::io("hackbench: fork", e))?;
                children.push(pid);
            }
            for _ in 0..hp.fds {
                let out = &out_fds[gi][..];
                let pid = sys::fork_child(c"sender", || {
                    exit_code(sender(out, hp.loops, &msg, ready_w, wake_r, &NEVER))
                })
                .map_err(|e| HostError::io("hackbench: fork", e))?;
                children.push(pid);
            }
        }
        wait_ready(ready_r, tasks, &deadline, what)?;
        let killer = children.clone();
        let dog = Watchdog::start(&deadline, move || killer.kill_all());
        let start = Instant::now();
        sys::write_all(wake_wr.as_raw_fd(), &[1], &NEVER).map_err(|e| HostError::WorkerFailed {
            what: what.into(),
            detail: format!("writing the wake byte: {}", e.describe()),
        })?;
        let reaped = children.reap_all();
        let elapsed = start.elapsed();
        dog.finish(what)?;
        drop(guard);
        reaped.map_err(|e| HostError::WorkerFailed {
            what: what.into(),
            detail: e.to_string(),
        })?;
        elapsed
    };
    Ok(HackbenchReport {
        threads: hp.threads,
        groups: hp.groups,
        fds: hp.fds,
        loops: hp.loops,
        datasize: hp.datasize,
        time_s: elapsed.as_secs_f64(),
    })
}

/// Reads one ready byte per task, polling so the deadline and Ctrl-C are honoured.
pub(crate) fn wait_ready(
    ready: RawFd,
    mut tasks: u64,
    deadline: &Deadline,
    what: &str,
) -> Result<(), HostError> {
    let mut buf = [0u8; 512];
    while tasks > 0 {
        deadline.check(what)?;
        if !sys::poll_one(ready, libc::POLLIN, 10) {
            continue;
        }
        let want = (tasks as usize).min(buf.len());
        // SAFETY: buf is a valid writable buffer of at least `want` bytes.
        let n = unsafe { libc::read(ready, buf.as_mut_ptr().cast(), want) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(HostError::io(format!("{what}: reading ready bytes"), e));
            }
            continue;
        }
        tasks -= n as u64;
    }
    Ok(())
}
