//! The measuring loops: pipe ping-pong against a pinned partner thread or process, a cache
//! refetch across a CPU pair, futex wake-ups to an idle CPU, an SMT busy loop, and a loopback
//! TCP pair. Each returns raw nanoseconds; `calibrate` turns them into profile keys.

use super::stats::{measure, median, ns_since};
use super::{CalibrateOptions, Measurement};
use crate::control::Deadline;
use crate::error::HostError;
use crate::sys::{self, NEVER};
use schedlab_topo::CpuId;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// An echo partner for ping-pong: reads `size` bytes and writes them back until EOF, pinned
/// to one CPU, as a thread or a forked process.
struct Partner {
    to: Option<OwnedFd>,
    from: OwnedFd,
    thread: Option<std::thread::JoinHandle<()>>,
    pid: Option<libc::pid_t>,
    buf: Vec<u8>,
}

fn echo(rd: RawFd, wr: RawFd, buf: &mut [u8]) {
    while sys::read_exact(rd, buf, &NEVER).is_ok() {
        if sys::write_all(wr, buf, &NEVER).is_err() {
            return;
        }
    }
}

impl Partner {
    fn start(cpu: CpuId, size: usize, process: bool) -> Result<Partner, HostError> {
        let io = |e| HostError::io("calibrate: pipe", e);
        let (ar, aw) = sys::pipe().map_err(io)?; // to partner
        let (br, bw) = sys::pipe().map_err(io)?; // from partner
        let mut p = Partner {
            to: Some(aw),
            from: br,
            thread: None,
            pid: None,
            buf: vec![0u8; size],
        };
        if process {
            let (rd, wr) = (ar.as_raw_fd(), bw.as_raw_fd());
            let (mine_to, mine_from) = (
                p.to.as_ref().map_or(-1, |f| f.as_raw_fd()),
                p.from.as_raw_fd(),
            );
            let mut cbuf = vec![0u8; size];
            let cb = &mut cbuf[..];
            let pid = sys::fork_child(c"schedlab-probe", || {
                // SAFETY: closing the parent's ends in the child so EOF can arrive.
                unsafe {
                    libc::close(mine_to);
                    libc::close(mine_from);
                }
                if sys::pin_to_cpu(cpu).is_err() {
                    return 5;
                }
                echo(rd, wr, cb);
                0
            })
            .map_err(|e| HostError::io("calibrate: fork", e))?;
            p.pid = Some(pid);
            drop((ar, bw));
        } else {
            let h = std::thread::Builder::new()
                .spawn(move || {
                    let _ = sys::pin_to_cpu(cpu);
                    let mut buf = vec![0u8; size];
                    echo(ar.as_raw_fd(), bw.as_raw_fd(), &mut buf);
                    drop((ar, bw));
                })
                .map_err(|e| HostError::io("calibrate: spawning a thread", e))?;
            p.thread = Some(h);
        }
        Ok(p)
    }

    /// Mean ns per round trip over `n` round trips.
    fn round_trips(&mut self, n: u64) -> Result<f64, HostError> {
        let to = self.to.as_ref().map_or(-1, |f| f.as_raw_fd());
        let from = self.from.as_raw_fd();
        let t = Instant::now();
        for _ in 0..n {
            sys::write_all(to, &self.buf, &NEVER)
                .and_then(|()| sys::read_exact(from, &mut self.buf, &NEVER))
                .map_err(|e| HostError::WorkerFailed {
                    what: "calibrate ping-pong".into(),
                    detail: e.describe(),
                })?;
        }
        Ok(ns_since(t, n))
    }
}

impl Drop for Partner {
    fn drop(&mut self) {
        self.to.take(); // EOF for the partner
        if let Some(h) = self.thread.take() {
            let _ = h.join();
        }
        let stuck = self
            .pid
            .take()
            .filter(|&pid| sys::waitpid_timeout(pid, Duration::from_secs(2)).is_none());
        if let Some(pid) = stuck {
            sys::kill(pid, libc::SIGKILL);
            let _ = sys::waitpid(pid);
        }
    }
}

/// Runs `f` on a thread pinned to `cpu` and returns its result.
fn on_cpu<T: Send + 'static>(
    cpu: CpuId,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, HostError> {
    std::thread::Builder::new()
        .spawn(move || {
            let _ = sys::pin_to_cpu(cpu);
            f()
        })
        .map_err(|e| HostError::io("calibrate: spawning a thread", e))?
        .join()
        .map_err(|_| HostError::WorkerFailed {
            what: "calibrate".into(),
            detail: "a measuring thread panicked".into(),
        })
}

/// Ping-pong round trip in ns with the caller on `a` and the partner on `b`.
pub(super) fn ping_pong(
    a: CpuId,
    b: CpuId,
    size: usize,
    process: bool,
    budget: Duration,
    opts: &CalibrateOptions,
    deadline: &Deadline,
) -> Result<Measurement, HostError> {
    let (opts, deadline) = (opts.clone(), *deadline);
    on_cpu(a, move || {
        let mut p = Partner::start(b, size, process)?;
        measure(budget, &opts, &deadline, |n| p.round_trips(n))
    })?
}

const REFETCH_BYTES: usize = 256 << 10;

/// ns per line to read a buffer last written on `a` from `b`, minus the hot read on `b`.
pub(super) fn refetch_per_line(a: CpuId, b: CpuId, line: usize) -> Result<f64, HostError> {
    let buf: Vec<u64> = vec![0; REFETCH_BYTES / 8];
    let mut buf = on_cpu(a, move || {
        let mut buf = buf;
        for (i, x) in buf.iter_mut().enumerate() {
            // SAFETY: x is a valid &mut u64; volatile keeps the stores.
            unsafe { std::ptr::write_volatile(x, i as u64) };
        }
        buf
    })?;
    let step = (line / 8).max(1);
    let (cold, hot) = on_cpu(b, move || {
        let read = |v: &[u64]| {
            let t = Instant::now();
            let mut s = 0u64;
            for x in v.iter().step_by(step) {
                // SAFETY: x is a valid &u64.
                s = s.wrapping_add(unsafe { std::ptr::read_volatile(x) });
            }
            std::hint::black_box(s);
            t.elapsed().as_nanos() as f64
        };
        let cold = read(&buf);
        let hot = read(&buf);
        buf.clear();
        (cold, hot)
    })?;
    let lines = (REFETCH_BYTES / line.max(8)) as f64;
    Ok(((cold - hot) / lines).max(0.0))
}

/// Median wake-up latency to an idle CPU `b` from `a` over `n` wake-ups, and the median
/// waker-side FUTEX_WAKE time; with `a == b` only the waker side is meaningful. With
/// `a == b` the wakee is `SCHED_IDLE`, so it does not preempt the waker on the way out of
/// FUTEX_WAKE (which would put two switches and the wakee's run into the waker's time), and
/// the waker sleeps instead of spinning until the wakee has answered.
pub(super) fn futex_wakes(
    a: CpuId,
    b: CpuId,
    n: u64,
    idle: Duration,
) -> Result<(f64, f64), HostError> {
    struct S {
        word: AtomicU32,
        stamp: AtomicU64,
        lat: AtomicU64,
        acks: AtomicU64,
        quit: AtomicBool,
    }
    let s = Arc::new(S {
        word: AtomicU32::new(0),
        stamp: AtomicU64::new(0),
        lat: AtomicU64::new(0),
        acks: AtomicU64::new(0),
        quit: AtomicBool::new(false),
    });
    let sw = s.clone();
    let wakee = std::thread::Builder::new()
        .spawn(move || {
            let _ = sys::pin_to_cpu(b);
            if a == b {
                let _ = sys::set_sched_idle();
            }
            while !sw.quit.load(Ordering::Acquire) {
                while sw.word.load(Ordering::Acquire) == 0 {
                    if sw.quit.load(Ordering::Acquire) {
                        return;
                    }
                    sys::futex_wait(&sw.word, 0, Duration::from_millis(50));
                }
                let now = sys::monotonic_ns();
                sw.lat.store(
                    now.saturating_sub(sw.stamp.load(Ordering::Acquire)),
                    Ordering::Release,
                );
                sw.word.store(0, Ordering::Release);
                sw.acks.fetch_add(1, Ordering::AcqRel);
            }
        })
        .map_err(|e| HostError::io("calibrate: spawning a thread", e))?;
    let sm = s.clone();
    let result = on_cpu(a, move || {
        let (mut lats, mut wakes) = (Vec::new(), Vec::new());
        for i in 0..n {
            // Let the wakee block (and its CPU go idle) before each wake-up.
            let give_up = Instant::now() + Duration::from_secs(1);
            while sm.acks.load(Ordering::Acquire) < i || sm.word.load(Ordering::Acquire) != 0 {
                if Instant::now() > give_up {
                    return (lats, wakes);
                }
                std::thread::sleep(Duration::from_micros(50));
            }
            // The wakee's CPU idles for `idle` before the wake-up. Short waits spin, so the
            // waker's own CPU does not go idle (and its exit is not in the latency).
            if idle >= Duration::from_micros(50) {
                std::thread::sleep(idle);
            } else {
                let until = Instant::now() + idle;
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
            }
            let t0 = sys::monotonic_ns();
            sm.stamp.store(t0, Ordering::Release);
            sm.word.store(1, Ordering::Release);
            sys::futex_wake(&sm.word, 1);
            wakes.push((sys::monotonic_ns() - t0) as f64);
            let give_up = Instant::now() + Duration::from_secs(1);
            while sm.acks.load(Ordering::Acquire) <= i && Instant::now() < give_up {
                if a == b {
                    std::thread::sleep(Duration::from_micros(50));
                } else {
                    std::hint::spin_loop();
                }
            }
            lats.push(sm.lat.load(Ordering::Acquire) as f64);
        }
        (lats, wakes)
    });
    s.quit.store(true, Ordering::Release);
    s.word.store(1, Ordering::Release);
    sys::futex_wake(&s.word, 1);
    let _ = wakee.join();
    let (mut lats, mut wakes) = result?;
    if lats.is_empty() {
        return Err(HostError::WorkerFailed {
            what: "calibrate wake-up".into(),
            detail: "the wakee did not answer within 1 s".into(),
        });
    }
    Ok((median(&mut lats), median(&mut wakes)))
}

/// The waker's FUTEX_WAKE time (median, ns, syscall included) with the wakee blocked on
/// CPU `b` while `b` runs another task: `try_to_wake_up()`'s remote path to a busy CPU of the
/// same LLC (`ttwu_queue()` locks the remote runqueue and enqueues there; no wakelist, since
/// `ttwu_queue_cond()` queues only to an idle CPU or across LLCs) without the reschedule IPI,
/// because the `SCHED_IDLE` wakee does not preempt the spinner (`check_preempt_wakeup_fair()`
/// lets an idle-policy task preempt nothing). The spinner pauses after each wake so that the
/// wakee can run, answer and block again; a wake is counted only when it found the wakee
/// asleep in the futex.
pub(super) fn futex_wakes_busy(a: CpuId, b: CpuId, n: u64) -> Result<f64, HostError> {
    struct S {
        word: AtomicU32,
        acks: AtomicU64,
        tid: AtomicI32,
        pause: AtomicBool,
        spinning: AtomicBool,
        quit: AtomicBool,
    }
    let s = Arc::new(S {
        word: AtomicU32::new(0),
        acks: AtomicU64::new(0),
        tid: AtomicI32::new(0),
        pause: AtomicBool::new(false),
        spinning: AtomicBool::new(false),
        quit: AtomicBool::new(false),
    });
    let spawn = |f: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .spawn(f)
            .map_err(|e| HostError::io("calibrate: spawning a thread", e))
    };
    let ss = s.clone();
    let spinner = spawn(Box::new(move || {
        let _ = sys::pin_to_cpu(b);
        while !ss.quit.load(Ordering::Acquire) {
            if ss.pause.load(Ordering::Acquire) {
                ss.spinning.store(false, Ordering::Release);
                while ss.pause.load(Ordering::Acquire) && !ss.quit.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_micros(20));
                }
            }
            ss.spinning.store(true, Ordering::Release);
            for _ in 0..200 {
                std::hint::spin_loop();
            }
        }
    }))?;
    let sw = s.clone();
    let wakee = spawn(Box::new(move || {
        let _ = sys::pin_to_cpu(b);
        let _ = sys::set_sched_idle();
        sw.tid.store(sys::gettid(), Ordering::Release);
        while !sw.quit.load(Ordering::Acquire) {
            if sw.word.load(Ordering::Acquire) == 0 {
                sys::futex_wait(&sw.word, 0, Duration::from_millis(50));
                continue;
            }
            sw.word.store(0, Ordering::Release);
            sw.acks.fetch_add(1, Ordering::AcqRel);
        }
    }));
    let wakee = match wakee {
        Ok(w) => w,
        Err(e) => {
            // Without its wakee the spinner would spin on CPU `b` for good.
            s.quit.store(true, Ordering::Release);
            let _ = spinner.join();
            return Err(e);
        }
    };
    let sm = s.clone();
    let result = on_cpu(a, move || {
        let mut wakes = Vec::new();
        let give_up = Instant::now() + Duration::from_secs(2);
        let mut acked = 0;
        while (wakes.len() as u64) < n && Instant::now() < give_up {
            // The wakee asleep in the futex, the spinner running on its CPU.
            let tid = sm.tid.load(Ordering::Acquire);
            let ready = tid != 0
                && sm.acks.load(Ordering::Acquire) == acked
                && sm.word.load(Ordering::Acquire) == 0
                && sm.spinning.load(Ordering::Acquire)
                && sys::thread_sleeping(tid);
            if !ready {
                std::thread::sleep(Duration::from_micros(50));
                continue;
            }
            sm.word.store(1, Ordering::Release);
            let t0 = sys::monotonic_ns();
            let woke = sys::futex_wake(&sm.word, 1);
            let dt = (sys::monotonic_ns() - t0) as f64;
            // Let the wakee run: the spinner sleeps until the answer.
            sm.pause.store(true, Ordering::Release);
            let until = Instant::now() + Duration::from_millis(200);
            while sm.acks.load(Ordering::Acquire) == acked && Instant::now() < until {
                std::thread::sleep(Duration::from_micros(50));
            }
            acked = sm.acks.load(Ordering::Acquire);
            sm.pause.store(false, Ordering::Release);
            if woke == 1 {
                wakes.push(dt);
            }
        }
        wakes
    });
    s.quit.store(true, Ordering::Release);
    s.pause.store(false, Ordering::Release);
    s.word.store(1, Ordering::Release);
    sys::futex_wake(&s.word, 1);
    let _ = wakee.join();
    let _ = spinner.join();
    let mut wakes = result?;
    if wakes.is_empty() {
        return Err(HostError::WorkerFailed {
            what: "calibrate wake-up to a busy CPU".into(),
            detail: "no FUTEX_WAKE found the wakee asleep within 2 s".into(),
        });
    }
    Ok(median(&mut wakes))
}

/// Busy-loop work per ns on `cpus` at once, per thread.
pub(super) fn spin_rate(cpus: &[CpuId], dur: Duration) -> Result<f64, HostError> {
    let handles: Vec<_> = cpus
        .iter()
        .map(|&c| {
            std::thread::Builder::new().spawn(move || {
                let _ = sys::pin_to_cpu(c);
                let t = Instant::now();
                let mut x = 1u64;
                let mut n = 0u64;
                while t.elapsed() < dur {
                    for _ in 0..1000 {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                    n += 1000;
                }
                n as f64 / t.elapsed().as_nanos() as f64
            })
        })
        .collect::<Result<_, _>>()
        .map_err(|e| HostError::io("calibrate: spawning a thread", e))?;
    let rates: Vec<f64> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
    Ok(rates.iter().sum::<f64>() / rates.len().max(1) as f64)
}

/// A connected loopback TCP pair with Nagle off (tbench-style small messages).
pub(super) fn tcp_pair() -> std::io::Result<(std::net::TcpStream, std::net::TcpStream)> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    let a = std::net::TcpStream::connect(listener.local_addr()?)?;
    let (b, _) = listener.accept()?;
    a.set_nodelay(true)?;
    b.set_nodelay(true)?;
    Ok((a, b))
}
