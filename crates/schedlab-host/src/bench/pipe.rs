//! `perf bench sched pipe` on real tasks (perf's `tools/perf/bench/sched-pipe.c`): two
//! processes (or threads) and
//! two pipes; one side does `write(p1); read(p2)`, the other `read(p1); write(p2)`, 4 bytes
//! each, `loops` round trips. The clock runs from the start gate until both sides have ended.
//!
//! With `pairs` > 1 that many independent pairs run at once (will-it-scale context_switch1);
//! the time is until the last pair is done, and usecs/op is that time over `loops`.
//!
//! `cpu_a` / `cpu_b` pin side A / side B to one CPU (as `taskset` would; `auto`, the default,
//! leaves them unpinned); the host fidelity suite uses them for its pinned cases.
//!
//! Host default: 100,000 loops instead of perf's 1,000,000, so a default run takes seconds, not
//! a minute, on a VM where a cross-CPU round trip costs 35-75 µs.

use crate::bench::hackbench::wait_ready;
use crate::control::{Children, ChildrenGuard, Deadline, Threads, Watchdog};
use crate::error::HostError;
use crate::spec::Params;
use crate::sys::{self, NEVER, Stop};
use schedlab_metrics::native::PipeReport;
use schedlab_topo::CpuId;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Host default for `loops` (perf's own default is 1,000,000).
pub const HOST_DEFAULT_LOOPS: u64 = 100_000;

/// Pipe ping-pong parameters.
#[derive(Clone, Debug)]
pub(crate) struct PipeParams {
    pub loops: u64,
    pub threads: bool,
    pub pairs: u64,
    /// CPUs side A and side B are pinned to (`None`: unpinned).
    pub pin: [Option<CpuId>; 2],
}

impl PipeParams {
    pub(crate) fn read(p: &mut Params) -> Result<Self, HostError> {
        Ok(PipeParams {
            loops: p.u64("loops", HOST_DEFAULT_LOOPS, 1, 1_000_000_000)?,
            threads: p.bool("threads", false)?,
            pairs: p.u64("pairs", 1, 1, 1024)?,
            pin: [pin_cpu(p, "cpu_a")?, pin_cpu(p, "cpu_b")?],
        })
    }
}

/// An `auto` (unpinned) or CPU-number parameter, checked against this process's affinity.
fn pin_cpu(p: &mut Params, key: &'static str) -> Result<Option<CpuId>, HostError> {
    let Some(cpu) = p.auto_u64(key, 0, 4095)? else {
        return Ok(None);
    };
    let cpu = CpuId::new(cpu as usize);
    if !sys::allowed_cpus().contains(&cpu) {
        return Err(HostError::BadValue {
            workload: "pipe".into(),
            key: key.into(),
            value: cpu.to_string(),
            expected: format!(
                "a CPU this process may run on ({:?}) or auto",
                sys::allowed_cpus()
            ),
        });
    }
    Ok(Some(cpu))
}

/// Pins the calling task to `cpu` if one is given.
fn pin(cpu: Option<CpuId>) -> Result<(), Stop> {
    match cpu {
        Some(c) => {
            sys::pin_to_cpu(c).map_err(|e| Stop::Errno(e.raw_os_error().unwrap_or(libc::EINVAL)))
        }
        None => Ok(()),
    }
}

#[allow(clippy::too_many_arguments)]
fn side(
    first_write: bool,
    rd: RawFd,
    wr: RawFd,
    loops: u64,
    ready: RawFd,
    wake: RawFd,
    stop: &AtomicBool,
) -> Result<(), Stop> {
    sys::write_all(ready, &[1], stop)?;
    sys::wait_readable(wake, stop)?;
    let mut buf = [0u8; 4];
    for i in 0..loops {
        let tok = (i as u32).to_ne_bytes();
        if first_write {
            sys::write_all(wr, &tok, stop)?;
            sys::read_exact(rd, &mut buf, stop)?;
        } else {
            sys::read_exact(rd, &mut buf, stop)?;
            sys::write_all(wr, &buf, stop)?;
        }
    }
    Ok(())
}

/// Runs the ping-pong; the report carries the measured total time.
pub(crate) fn run(pp: &PipeParams, limit: Duration) -> Result<PipeReport, HostError> {
    let what = "pipe";
    let deadline = Deadline::new(limit);
    let io = |e| HostError::io("pipe: creating pipes", e);
    let (ready_r, ready_w) = sys::pipe().map_err(io)?;
    let (wake_r, wake_w) = sys::pipe().map_err(io)?;
    let mut owned = Vec::new();
    // Side A writes p1 and reads p2; side B reads p1 and writes p2.
    let mut sides = Vec::new();
    for _ in 0..pp.pairs {
        let (p1r, p1w) = sys::pipe().map_err(io)?;
        let (p2r, p2w) = sys::pipe().map_err(io)?;
        sides.push((true, p2r.as_raw_fd(), p1w.as_raw_fd()));
        sides.push((false, p1r.as_raw_fd(), p2w.as_raw_fd()));
        owned.push((p1r, p1w));
        owned.push((p2r, p2w));
    }
    let mut fds: Vec<(RawFd, RawFd)> = owned
        .iter()
        .map(|(r, w)| (r.as_raw_fd(), w.as_raw_fd()))
        .collect();
    fds.push((wake_r.as_raw_fd(), wake_w.as_raw_fd()));
    let fds = Arc::new(fds);
    let (rw, wr) = (ready_w.as_raw_fd(), wake_r.as_raw_fd());
    let loops = pp.loops;
    let nsides = sides.len() as u64;
    let poke = move || {
        for &(r, w) in fds.iter() {
            sys::poke_pipe(r, w);
        }
    };
    let start;
    let elapsed = if pp.threads {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads: Threads<Result<(), Stop>> = Threads::new(stop.clone(), poke.clone());
        for &(first, r, w) in &sides {
            let stop = stop.clone();
            let cpu = pp.pin[usize::from(!first)];
            let h = std::thread::Builder::new()
                .name("sched-pipe".into())
                .spawn(move || pin(cpu).and_then(|()| side(first, r, w, loops, rw, wr, &stop)))
                .map_err(|e| HostError::io("pipe: spawning a thread", e))?;
            threads.push(h);
        }
        wait_ready(ready_r.as_raw_fd(), nsides, &deadline, what)?;
        let st = stop.clone();
        let dog = Watchdog::start(&deadline, move || {
            st.store(true, Ordering::SeqCst);
            poke()
        });
        start = Instant::now();
        sys::poke_pipe(-1, wake_w.as_raw_fd());
        let results = threads.join_all();
        let elapsed = start.elapsed();
        dog.finish(what)?;
        for r in results {
            let r = r.ok_or_else(|| HostError::WorkerFailed {
                what: what.into(),
                detail: "a thread panicked".into(),
            })?;
            r.map_err(|e| HostError::WorkerFailed {
                what: what.into(),
                detail: e.describe(),
            })?;
        }
        elapsed
    } else {
        let children = Children::default();
        let guard = ChildrenGuard(children.clone());
        for &(first, r, w) in &sides {
            let cpu = pp.pin[usize::from(!first)];
            let pid = sys::fork_child(c"sched-pipe", || {
                match pin(cpu).and_then(|()| side(first, r, w, loops, rw, wr, &NEVER)) {
                    Ok(()) => 0,
                    Err(_) => 3,
                }
            })
            .map_err(|e| HostError::io("pipe: fork", e))?;
            children.push(pid);
        }
        wait_ready(ready_r.as_raw_fd(), nsides, &deadline, what)?;
        let killer = children.clone();
        let dog = Watchdog::start(&deadline, move || killer.kill_all());
        start = Instant::now();
        sys::poke_pipe(-1, wake_w.as_raw_fd());
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
    Ok(PipeReport {
        loops: pp.loops,
        threads: pp.threads,
        total_s: elapsed.as_secs_f64(),
    })
}
