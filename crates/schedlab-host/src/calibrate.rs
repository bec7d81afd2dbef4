//! `schedlab host calibrate`: measures the machine's costs and writes them as a machine profile
//! (`schedlab.profile/1`, the simulator's format, written through `schedlab_profile`).
//!
//! What is measured, and how (all timestamps CLOCK_MONOTONIC):
//!
//! * `syscall_ns`: a raw `getppid` system call in a loop.
//! * `ctx_switch_ns` / `ctx_switch_mm_ns`: 4-byte pipe ping-pong with both sides pinned to one
//!   CPU (threads / processes); a round trip is two switches plus two pipe write+read pairs, so
//!   `(round trip - 2 × write+read) / 2`, the write+read pair measured without blocking.
//! * pipe round trips, stacked and across one CPU pair of each class present (SMT sibling,
//!   same LLC, other LLC, other node; classes from /sys topology): reported, and the base of:
//! * `copy_ns_per_byte`: 64 KiB vs 4 B ping-pong stacked, per byte moved each way;
//!   `<class>_ns_per_byte`: the same across a pair of that class, minus the stacked cost.
//! * `refetch_<class>_ns`: a 256 KiB buffer written on one CPU, then read on a CPU of that
//!   class, minus the same read once hot, per 64-byte line.
//! * `local_wake_ns` / `remote_wake_ns`: the waker's FUTEX_WAKE time with the wakee blocked on
//!   the waker's CPU / on an idle CPU, minus `syscall_ns`.
//! * wake-up latency to an idle CPU (futex wake to the wakee running there): the waker's
//!   syscall and `remote_wake_ns`, then the IPI, then the idle exit, as the simulator charges
//!   them; the IPI cannot be split from the exit from user space, so `ipi_ns` keeps its default
//!   and the C1 `exit_ns` gets the rest.
//! * `smt_speed[1]`: per-thread speed of a busy loop with its SMT sibling busy too.
//!
//! Each measurement runs in batches until the last 5 batch values lie within 5 % of their
//! median, or until its share of the time budget or a batch cap is used up; the profile
//! records the median, the number of batches and the spread. Keys this machine cannot measure
//! keep the simulator's defaults, with a comment saying why.

use crate::control::Deadline;
use crate::error::HostError;
use crate::sys::{self, NEVER};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long and how hard to measure.
#[derive(Clone, Debug)]
pub struct CalibrateOptions {
    /// Total time to spend, roughly.
    pub budget: Duration,
    /// Most batches per measurement.
    pub max_batches: usize,
    /// Batches whose values must agree for a measurement to count as stable.
    pub stable_batches: usize,
    /// Relative spread (max-min)/median under which those batches agree.
    pub tolerance: f64,
}

impl Default for CalibrateOptions {
    fn default() -> Self {
        CalibrateOptions {
            budget: Duration::from_secs(18),
            max_batches: 15,
            stable_batches: 5,
            tolerance: 0.05,
        }
    }
}

impl CalibrateOptions {
    /// A short run (about 2 s) for tests and smoke checks: fewer, shorter batches.
    pub fn quick() -> Self {
        CalibrateOptions {
            budget: Duration::from_secs(2),
            max_batches: 6,
            stable_batches: 3,
            tolerance: 0.10,
        }
    }
}

/// A repeated measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// Median of the final batches, in the key's unit.
    pub value: f64,
    /// Batches run.
    pub runs: usize,
    /// (max - min) / median of the final batches.
    pub spread: f64,
    /// Whether the final batches agreed within the tolerance.
    pub stable: bool,
}

impl Measurement {
    fn scaled(&self, value: f64) -> Measurement {
        Measurement {
            value,
            ..self.clone()
        }
    }
}

/// Kinds of CPU pairs, nearest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PairClass {
    /// SMT siblings of one core.
    Smt,
    /// Different cores sharing the last-level cache.
    Llc,
    /// Different LLCs of one NUMA node.
    CrossLlc,
    /// Different NUMA nodes.
    CrossNode,
}

impl PairClass {
    /// All classes, nearest first.
    pub const ALL: [PairClass; 4] = [
        PairClass::Smt,
        PairClass::Llc,
        PairClass::CrossLlc,
        PairClass::CrossNode,
    ];

    /// Short name, as used in profile keys (`smt`, `llc`, `cross_llc`, `cross_node`).
    pub fn key(self) -> &'static str {
        match self {
            PairClass::Smt => "smt",
            PairClass::Llc => "llc",
            PairClass::CrossLlc => "cross_llc",
            PairClass::CrossNode => "cross_node",
        }
    }

    fn absent_reason(self) -> &'static str {
        match self {
            PairClass::Smt => "no SMT",
            PairClass::Llc => "one CPU per LLC",
            PairClass::CrossLlc => "one LLC",
            PairClass::CrossNode => "one node",
        }
    }
}

/// The host's CPUs as the kernel describes them in /sys.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTopology {
    /// CPUs this process may use.
    pub cpus: Vec<usize>,
    /// Per CPU (index = CPU id): SMT sibling list, LLC id, node id.
    smt: BTreeMap<usize, Vec<usize>>,
    llc: BTreeMap<usize, String>,
    node: BTreeMap<usize, usize>,
    /// Cache line size, bytes (sysfs coherency_line_size).
    pub line_bytes: Option<u64>,
}

/// Parses a kernel CPU list like `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut v = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                v.extend(a..=b);
            }
            None => v.push(part.trim().parse().ok()?),
        }
    }
    Some(v)
}

impl HostTopology {
    /// Reads `root` (normally `/sys/devices/system`) for the CPUs in `cpus`.
    pub fn from_sysfs(root: &Path, cpus: Vec<usize>) -> HostTopology {
        let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
        let mut t = HostTopology {
            cpus,
            smt: BTreeMap::new(),
            llc: BTreeMap::new(),
            node: BTreeMap::new(),
            line_bytes: None,
        };
        for &c in &t.cpus {
            let cdir = root.join(format!("cpu/cpu{c}"));
            let sib = read(cdir.join("topology/thread_siblings_list"))
                .and_then(|s| parse_cpu_list(&s))
                .unwrap_or_else(|| vec![c]);
            t.smt.insert(c, sib);
            // The highest-level unified or data cache is the LLC.
            let mut best: Option<(u32, String)> = None;
            if let Ok(dir) = std::fs::read_dir(cdir.join("cache")) {
                for e in dir.flatten() {
                    let p = e.path();
                    let level: Option<u32> =
                        read(p.join("level")).and_then(|s| s.trim().parse().ok());
                    let kind = read(p.join("type")).unwrap_or_default();
                    if let (Some(level), false) = (level, kind.trim() == "Instruction") {
                        let shared = read(p.join("shared_cpu_list")).unwrap_or_default();
                        if best.as_ref().is_none_or(|(l, _)| level > *l) {
                            best = Some((level, shared.trim().to_string()));
                        }
                        if t.line_bytes.is_none() {
                            t.line_bytes = read(p.join("coherency_line_size"))
                                .and_then(|s| s.trim().parse().ok());
                        }
                    }
                }
            }
            t.llc
                .insert(c, best.map(|b| b.1).unwrap_or_else(|| "all".into()));
            let node = std::fs::read_dir(&cdir)
                .ok()
                .and_then(|d| {
                    d.flatten().find_map(|e| {
                        e.file_name()
                            .to_str()
                            .and_then(|n| n.strip_prefix("node"))
                            .and_then(|n| n.parse().ok())
                    })
                })
                .unwrap_or(0);
            t.node.insert(c, node);
        }
        t
    }

    /// The class of the pair (a, b), a ≠ b.
    pub fn classify(&self, a: usize, b: usize) -> PairClass {
        if self.smt.get(&a).is_some_and(|s| s.contains(&b)) {
            PairClass::Smt
        } else if self.llc.get(&a) == self.llc.get(&b) {
            PairClass::Llc
        } else if self.node.get(&a) == self.node.get(&b) {
            PairClass::CrossLlc
        } else {
            PairClass::CrossNode
        }
    }

    /// One CPU pair per class present, the first CPU being the lowest allowed one when it can.
    pub fn representative_pairs(&self) -> BTreeMap<PairClass, (usize, usize)> {
        let mut m = BTreeMap::new();
        for (i, &a) in self.cpus.iter().enumerate() {
            for &b in &self.cpus[i + 1..] {
                m.entry(self.classify(a, b)).or_insert((a, b));
            }
        }
        m
    }
}

/// What `calibrate` measured.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// CPU model name (/proc/cpuinfo).
    pub cpu_model: String,
    /// `uname -r`.
    pub kernel: String,
    /// Date of the measurement, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// The topology the pairs were chosen from.
    pub topology: HostTopology,
    /// CPU pairs measured, per class.
    pub pairs: BTreeMap<PairClass, (usize, usize)>,
    /// Profile values measured, by `section.key` (e.g. `cpu.ctx_switch_ns`).
    pub measured: BTreeMap<String, Measurement>,
    /// Pipe round trip (4 B), ns: `stacked` and one entry per pair class measured.
    pub round_trips: BTreeMap<String, Measurement>,
    /// Wake-up latency to an idle CPU, ns, if a second CPU was available.
    pub idle_wakeup: Option<Measurement>,
}

/// Measures with `f(n)` returning one batch's value for `n` units, as described in the module
/// docs.
fn measure(
    budget: Duration,
    opts: &CalibrateOptions,
    deadline: &Deadline,
    mut f: impl FnMut(u64) -> Result<f64, HostError>,
) -> Result<Measurement, HostError> {
    let probe = 16;
    let t = Instant::now();
    f(probe)?;
    let per_unit = (t.elapsed().as_secs_f64() / probe as f64).max(1e-8);
    let batch_target = budget.as_secs_f64() / opts.max_batches as f64;
    let n = ((batch_target / per_unit) as u64).clamp(16, 20_000_000);
    let start = Instant::now();
    let mut values: Vec<f64> = Vec::new();
    let mut stable = false;
    loop {
        deadline.check("calibrate")?;
        values.push(f(n)?);
        if values.len() >= opts.stable_batches {
            let (med, spread) = med_spread(&values[values.len() - opts.stable_batches..]);
            if med > 0.0 && spread <= opts.tolerance {
                stable = true;
                break;
            }
        }
        if values.len() >= opts.max_batches || start.elapsed() >= budget {
            break;
        }
    }
    let window = &values[values.len().saturating_sub(opts.stable_batches)..];
    let (value, spread) = med_spread(window);
    Ok(Measurement {
        value,
        runs: values.len(),
        spread,
        stable,
    })
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn med_spread(v: &[f64]) -> (f64, f64) {
    let mut w = v.to_vec();
    let med = median(&mut w);
    let (lo, hi) = (
        w.first().copied().unwrap_or(0.0),
        w.last().copied().unwrap_or(0.0),
    );
    (med, if med > 0.0 { (hi - lo) / med } else { 0.0 })
}

fn ns_since(t: Instant, n: u64) -> f64 {
    t.elapsed().as_nanos() as f64 / n as f64
}

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
    fn start(cpu: usize, size: usize, process: bool) -> Result<Partner, HostError> {
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
            let pid = sys::fork_child(|| {
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
    cpu: usize,
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
fn ping_pong(
    a: usize,
    b: usize,
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
fn refetch_per_line(a: usize, b: usize, line: usize) -> Result<f64, HostError> {
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
/// waker-side FUTEX_WAKE time; with `a == b` only the waker side is meaningful.
fn futex_wakes(a: usize, b: usize, n: u64) -> Result<(f64, f64), HostError> {
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
            std::thread::sleep(Duration::from_micros(200));
            let t0 = sys::monotonic_ns();
            sm.stamp.store(t0, Ordering::Release);
            sm.word.store(1, Ordering::Release);
            sys::futex_wake(&sm.word, 1);
            wakes.push((sys::monotonic_ns() - t0) as f64);
            let give_up = Instant::now() + Duration::from_secs(1);
            while sm.acks.load(Ordering::Acquire) <= i && Instant::now() < give_up {
                std::hint::spin_loop();
                if a == b {
                    std::thread::yield_now();
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

/// Busy-loop work per ns on `cpus` at once, per thread.
fn spin_rate(cpus: &[usize], dur: Duration) -> Result<f64, HostError> {
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

/// The profile's default `tcp_delivery_ns` (engine `profile.rs`), kept as written: the
/// calibration cannot measure it, so the op cost is what a write+read leaves after it.
const TCP_DELIVERY_NS: u64 = 800;

/// A connected loopback TCP pair with Nagle off (tbench-style small messages).
fn tcp_pair() -> std::io::Result<(std::net::TcpStream, std::net::TcpStream)> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    let a = std::net::TcpStream::connect(listener.local_addr()?)?;
    let (b, _) = listener.accept()?;
    a.set_nodelay(true)?;
    b.set_nodelay(true)?;
    Ok((a, b))
}

/// Measures the host (see the module docs). Takes about `opts.budget`.
pub fn calibrate(opts: &CalibrateOptions) -> Result<Calibration, HostError> {
    let deadline = Deadline::new(opts.budget * 3 + Duration::from_secs(30));
    let topology = HostTopology::from_sysfs(Path::new("/sys/devices/system"), sys::allowed_cpus());
    let pairs = topology.representative_pairs();
    let a = topology.cpus.first().copied().unwrap_or(0);
    // Measurements: syscall and pipe/unix/TCP write+read (half a share each), 2 stacked
    // ping-pongs, 64 KiB stacked, and per class a 4 B and a 64 KiB ping-pong; plus the short
    // fixed-size ones.
    let slots = 6 + 2 * pairs.len() as u32;
    let share = opts.budget / slots.max(1);
    let mut measured = BTreeMap::new();
    let mut round_trips = BTreeMap::new();

    let syscall = measure(share / 2, opts, &deadline, |n| {
        let t = Instant::now();
        for _ in 0..n {
            // SAFETY: getppid has no arguments or side effects.
            unsafe { libc::syscall(libc::SYS_getppid) };
        }
        Ok(ns_since(t, n))
    })?;
    measured.insert("cpu.syscall_ns".to_string(), syscall.clone());

    // 4 bytes written to `w` and read back from `r` by this thread, per round.
    let write_read = |w: RawFd, r: RawFd| {
        measure(share / 2, opts, &deadline, |n| {
            let mut b = [0u8; 4];
            let t = Instant::now();
            for _ in 0..n {
                let _ = sys::write_all(w, &b, &NEVER);
                let _ = sys::read_exact(r, &mut b, &NEVER);
            }
            Ok(ns_since(t, n))
        })
    };
    let (pr, pw) = sys::pipe().map_err(|e| HostError::io("calibrate: pipe", e))?;
    let rw = write_read(pw.as_raw_fd(), pr.as_raw_fd())?;
    drop((pr, pw));
    // One write plus one read in the same thread: two syscalls and the channel's own kernel
    // work twice (the 4-byte copy is negligible).
    let op = |m: &Measurement| m.scaled(((m.value - 2.0 * syscall.value) / 2.0).max(0.0));
    measured.insert("transfer.pipe_op_ns".into(), op(&rw));
    let (ua, ub) = sys::socketpair().map_err(|e| HostError::io("calibrate: socketpair", e))?;
    let unix_rw = write_read(ua.as_raw_fd(), ub.as_raw_fd())?;
    drop((ua, ub));
    measured.insert("transfer.unix_op_ns".into(), op(&unix_rw));
    // Loopback TCP: the send delivers into the peer's socket in the sender's context, so one
    // write plus one read is two syscalls, two socket ops and one delivery. User space cannot
    // split the op from the delivery: the delivery keeps the profile's default and the op
    // takes the rest.
    let (ta, tb) = tcp_pair().map_err(|e| HostError::io("calibrate: loopback TCP", e))?;
    let tcp_rw = write_read(ta.as_raw_fd(), tb.as_raw_fd())?;
    drop((ta, tb));
    let delivery = TCP_DELIVERY_NS as f64;
    measured.insert(
        "transfer.tcp_op_ns".into(),
        tcp_rw.scaled(((tcp_rw.value - 2.0 * syscall.value - delivery) / 2.0).max(0.0)),
    );

    let stacked = ping_pong(a, a, 4, false, share, opts, &deadline)?;
    let stacked_mm = ping_pong(a, a, 4, true, share, opts, &deadline)?;
    let ctx = |m: &Measurement| m.scaled(((m.value - 2.0 * rw.value) / 2.0).max(0.0));
    measured.insert("cpu.ctx_switch_ns".into(), ctx(&stacked));
    measured.insert("cpu.ctx_switch_mm_ns".into(), ctx(&stacked_mm));
    round_trips.insert("stacked".to_string(), stacked.clone());
    round_trips.insert("stacked_processes".to_string(), stacked_mm);

    let big = 64 << 10;
    let per_byte = |big_rt: &Measurement, small_rt: &Measurement| {
        big_rt.scaled(((big_rt.value - small_rt.value) / (2.0 * big as f64)).max(0.0))
    };
    let stacked_big = ping_pong(a, a, big, false, share, opts, &deadline)?;
    let copy = per_byte(&stacked_big, &stacked);
    measured.insert("transfer.copy_ns_per_byte".into(), copy.clone());

    let line = topology.line_bytes.unwrap_or(64) as usize;
    for (&class, &(x, y)) in &pairs {
        let small = ping_pong(x, y, 4, false, share, opts, &deadline)?;
        let large = ping_pong(x, y, big, false, share, opts, &deadline)?;
        let pb = per_byte(&large, &small);
        measured.insert(
            format!("transfer.{}_ns_per_byte", class.key()),
            pb.scaled((pb.value - copy.value).max(0.0)),
        );
        round_trips.insert(class.key().to_string(), small);
        let refetch = measure(share / 4, opts, &deadline, |_| refetch_per_line(x, y, line))?;
        measured.insert(format!("cache.refetch_{}_ns", class.key()), refetch);
        if class == PairClass::Smt {
            let alone = spin_rate(&[x], Duration::from_millis(50))?;
            let both = measure(share / 4, opts, &deadline, |_| {
                Ok(spin_rate(&[x, y], Duration::from_millis(30))? / alone)
            })?;
            measured.insert("cpu.smt_speed".into(), both);
        }
    }

    // Wake-ups: local (wakee on the waker's CPU) and to an idle remote CPU.
    let local = measure(share / 4, opts, &deadline, |n| {
        Ok(futex_wakes(a, a, n.min(200))?.1)
    })?;
    measured.insert(
        "wakeup.local_wake_ns".into(),
        local.scaled((local.value - syscall.value).max(0.0)),
    );
    let mut idle_wakeup = None;
    if let Some(&b) = topology.cpus.iter().find(|&&c| c != a) {
        let mut wakes = Vec::new();
        let lat = measure(share, opts, &deadline, |n| {
            let (lat, wake) = futex_wakes(a, b, n.min(500))?;
            wakes.push(wake);
            Ok(lat)
        })?;
        let wake_m = lat.scaled((median(&mut wakes) - syscall.value).max(0.0));
        // The simulator delays a remote wakee by the waker's work before the IPI (its syscall
        // and `remote_wake_ns`), then `ipi_ns`, then the idle exit: the exit is what remains
        // of the measured latency once those are taken out.
        let exit = lat.value - DEFAULT_IPI_NS - wake_m.value - syscall.value;
        measured.insert("wakeup.remote_wake_ns".into(), wake_m);
        measured.insert("wakeup.c1_exit_ns".into(), lat.scaled(exit.max(0.0)));
        idle_wakeup = Some(lat);
    }

    Ok(Calibration {
        cpu_model: cpu_model(),
        kernel: kernel_release(),
        date: today(),
        topology,
        pairs,
        measured,
        round_trips,
        idle_wakeup,
    })
}

const DEFAULT_IPI_NS: f64 = 1500.0;

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn kernel_release() -> String {
    // SAFETY: an all-zero utsname is valid; uname fills it with NUL-terminated strings.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is valid.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".into();
    }
    // SAFETY: release is NUL-terminated by uname.
    unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Today's UTC date as `YYYY-MM-DD` (days-from-civil inverse, proleptic Gregorian).
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil_date(secs / 86_400)
}

fn civil_date(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// How a profile value is written: an integer, a float, or a TOML array literal.
enum Val {
    Int(f64),
    Float(f64),
    Raw(String),
}

impl Val {
    fn render(&self) -> String {
        match self {
            Val::Int(v) => format!("{}", v.round().max(0.0) as u64),
            Val::Float(v) => {
                let s = format!("{v:.4}");
                let s = s.trim_end_matches('0');
                if s.ends_with('.') {
                    format!("{s}0")
                } else {
                    s.to_string()
                }
            }
            Val::Raw(s) => s.clone(),
        }
    }
}

impl Calibration {
    fn class_present(&self, c: PairClass) -> bool {
        self.pairs.contains_key(&c)
    }

    /// Why a class-dependent key is not measured here.
    fn absent(&self, c: PairClass) -> String {
        if self.topology.cpus.len() < 2 {
            "not measurable here (one CPU available)".into()
        } else {
            format!("not measurable here ({})", c.absent_reason())
        }
    }

    /// One `key = value  # comment` line: measured if `id` was measured, else the default
    /// with `why`.
    fn line(&self, out: &mut String, id: &str, key: &str, default: Val, why: &str) {
        let (val, comment) = match self.measured.get(id) {
            Some(m) => {
                let v = match default {
                    Val::Int(_) => Val::Int(m.value),
                    Val::Float(_) => Val::Float(m.value),
                    Val::Raw(_) => Val::Raw(format!("[1.0, {}]", Val::Float(m.value).render())),
                };
                let shown = match v {
                    Val::Raw(_) => Val::Float(m.value).render(),
                    ref v => v.render(),
                };
                let c = format!(
                    "# measured: median {shown} over {} runs, spread {:.1}%{}",
                    m.runs,
                    m.spread * 100.0,
                    if m.stable { "" } else { " (not stable)" }
                );
                (v, c)
            }
            None => (default, format!("# default: {why}")),
        };
        let _ = writeln!(out, "{key} = {}  {comment}", val.render());
    }

    /// The machine profile in the simulator's format: every key, measured values with their
    /// median, runs and spread, the others at their defaults with the reason.
    pub fn to_profile_toml(&self) -> String {
        use PairClass::*;
        let mut s = String::new();
        let _ = writeln!(s, "schema = \"schedlab.profile/1\"");
        let _ = writeln!(s, "name = \"host\"");
        let _ = writeln!(
            s,
            "source = \"measured by `schedlab host calibrate` on {}, {}, kernel {}\"",
            self.date,
            self.cpu_model.replace('"', "'"),
            self.kernel
        );
        let _ = writeln!(
            s,
            "# CPUs {}; pairs measured: {}",
            list(&self.topology.cpus),
            if self.pairs.is_empty() {
                "none".to_string()
            } else {
                self.pairs
                    .iter()
                    .map(|(c, (a, b))| format!("{} {a}-{b}", c.key()))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
        for (k, m) in &self.round_trips {
            let _ = writeln!(
                s,
                "# pipe round trip (4 B), {k}: {:.0} ns (median over {} runs, spread {:.1}%)",
                m.value,
                m.runs,
                m.spread * 100.0
            );
        }
        if let Some(w) = &self.idle_wakeup {
            let _ = writeln!(
                s,
                "# wake-up latency to an idle CPU: {:.0} ns (median over {} runs, spread {:.1}%)",
                w.value,
                w.runs,
                w.spread * 100.0
            );
        }
        let user = "not measurable from user space";
        s.push_str("\n[cpu]\n");
        self.line(
            &mut s,
            "cpu.smt_speed",
            "smt_speed",
            Val::Raw("[1.0, 0.62]".into()),
            &self.absent(Smt),
        );
        self.line(
            &mut s,
            "cpu.ctx_switch_ns",
            "ctx_switch_ns",
            Val::Int(1200.0),
            user,
        );
        self.line(
            &mut s,
            "cpu.ctx_switch_mm_ns",
            "ctx_switch_mm_ns",
            Val::Int(1800.0),
            user,
        );
        self.line(
            &mut s,
            "cpu.syscall_ns",
            "syscall_ns",
            Val::Int(150.0),
            user,
        );
        let numa_why = if self.class_present(CrossNode) {
            "not measured by this version".to_string()
        } else {
            self.absent(CrossNode)
        };
        self.line(
            &mut s,
            "cpu.remote_memory_slowdown",
            "remote_memory_slowdown",
            Val::Float(0.5),
            &numa_why,
        );

        s.push_str("\n[cache]\n");
        match self.topology.line_bytes {
            Some(b) => {
                let _ = writeln!(
                    s,
                    "line_bytes = {b}  # measured: read from sysfs coherency_line_size"
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "line_bytes = 64  # default: sysfs has no coherency_line_size"
                );
            }
        }
        for (class, key, def) in [
            (Smt, "refetch_smt_ns", 2.0),
            (Llc, "refetch_llc_ns", 15.0),
            (CrossLlc, "refetch_cross_llc_ns", 60.0),
            (CrossNode, "refetch_cross_node_ns", 120.0),
        ] {
            self.line(
                &mut s,
                &format!("cache.{key}"),
                key,
                Val::Int(def),
                &self.absent(class),
            );
        }
        self.line(
            &mut s,
            "cache.hot_half_life_us",
            "hot_half_life_us",
            Val::Int(2000.0),
            "not measured by this version",
        );

        s.push_str("\n[transfer]\n");
        self.line(
            &mut s,
            "transfer.copy_ns_per_byte",
            "copy_ns_per_byte",
            Val::Float(0.1),
            user,
        );
        let _ = writeln!(
            s,
            "same_cpu_ns_per_byte = 0.0  # measured: 0 by definition (the stacked cost is copy_ns_per_byte)"
        );
        for (class, def) in [(Smt, 0.02), (Llc, 0.08), (CrossLlc, 0.25), (CrossNode, 0.4)] {
            let key = format!("{}_ns_per_byte", class.key());
            self.line(
                &mut s,
                &format!("transfer.{key}"),
                &key,
                Val::Float(def),
                &self.absent(class),
            );
        }

        self.line(
            &mut s,
            "transfer.pipe_op_ns",
            "pipe_op_ns",
            Val::Int(300.0),
            user,
        );
        self.line(
            &mut s,
            "transfer.unix_op_ns",
            "unix_op_ns",
            Val::Int(1200.0),
            user,
        );
        self.line(
            &mut s,
            "transfer.tcp_op_ns",
            "tcp_op_ns",
            Val::Int(1000.0),
            user,
        );
        let _ = writeln!(
            s,
            "tcp_delivery_ns = {TCP_DELIVERY_NS}  # default: not separable from tcp_op_ns from user space (tcp_op_ns takes the rest of a measured write+read)"
        );
        let _ = writeln!(
            s,
            "message_lines = 8.0  # default: kernel metadata lines per message, not measurable from user space"
        );

        s.push_str("\n[wakeup]\n");
        let one_cpu = "not measurable here (one CPU available)";
        let _ = writeln!(
            s,
            "ipi_ns = {}  # default: not separable from the idle exit from user space (C1 exit_ns holds the rest)",
            DEFAULT_IPI_NS as u64
        );
        self.line(
            &mut s,
            "wakeup.ttwu_queue_delay_ns",
            "ttwu_queue_delay_ns",
            Val::Int(2000.0),
            user,
        );
        self.line(
            &mut s,
            "wakeup.local_wake_ns",
            "local_wake_ns",
            Val::Int(300.0),
            user,
        );
        self.line(
            &mut s,
            "wakeup.remote_wake_ns",
            "remote_wake_ns",
            Val::Int(1000.0),
            one_cpu,
        );
        s.push_str("[[wakeup.idle_states]]\nname = \"C1\"\n");
        self.line(
            &mut s,
            "wakeup.c1_exit_ns",
            "exit_ns",
            Val::Int(2000.0),
            one_cpu,
        );
        self.line(
            &mut s,
            "wakeup.c1_target_residency_ns",
            "target_residency_ns",
            Val::Int(2000.0),
            user,
        );
        s.push_str("[[wakeup.idle_states]]\nname = \"C6\"\n");
        let deep = "not measurable here (deep idle states are not selected on demand)";
        self.line(
            &mut s,
            "wakeup.c6_exit_ns",
            "exit_ns",
            Val::Int(80000.0),
            deep,
        );
        self.line(
            &mut s,
            "wakeup.c6_target_residency_ns",
            "target_residency_ns",
            Val::Int(600000.0),
            deep,
        );

        s.push_str("\n[search]\n");
        for (key, def) in [
            ("scan_per_cpu_ns", 40.0),
            ("scan_per_cpu_remote_ns", 100.0),
            ("lb_per_cpu_ns", 50.0),
            ("lb_per_task_ns", 100.0),
        ] {
            self.line(&mut s, &format!("search.{key}"), key, Val::Int(def), user);
        }
        s
    }

    /// A human-readable table of every measurement with its spread.
    pub fn report(&self) -> String {
        let mut s = format!(
            "host: {}, kernel {}, CPUs {}\n",
            self.cpu_model,
            self.kernel,
            list(&self.topology.cpus)
        );
        let _ = writeln!(
            s,
            "{:<34} {:>12} {:>5} {:>8}  stable",
            "measurement", "median", "runs", "spread"
        );
        let rows = self
            .round_trips
            .iter()
            .map(|(k, m)| (format!("pipe round trip {k} (ns)"), m))
            .chain(
                self.idle_wakeup
                    .iter()
                    .map(|m| ("idle wake-up latency (ns)".to_string(), m)),
            )
            .chain(self.measured.iter().map(|(k, m)| (k.clone(), m)));
        for (k, m) in rows {
            let _ = writeln!(
                s,
                "{k:<34} {:>12.3} {:>5} {:>7.1}%  {}",
                m.value,
                m.runs,
                m.spread * 100.0,
                if m.stable { "yes" } else { "no" }
            );
        }
        s
    }
}

fn list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty_calibration(cpus: Vec<usize>) -> Calibration {
        Calibration {
            cpu_model: "Test CPU \"X\"".into(),
            kernel: "6.1.0".into(),
            date: "2026-01-02".into(),
            topology: HostTopology {
                cpus,
                smt: BTreeMap::new(),
                llc: BTreeMap::new(),
                node: BTreeMap::new(),
                line_bytes: None,
            },
            pairs: BTreeMap::new(),
            measured: BTreeMap::new(),
            round_trips: BTreeMap::new(),
            idle_wakeup: None,
        }
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("5"), Some(vec![5]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(19_723), "2024-01-01");
        assert_eq!(civil_date(19_782), "2024-02-29");
    }

    #[test]
    fn default_profile_has_every_key_with_defaults() {
        let toml_text = empty_calibration(vec![0]).to_profile_toml();
        let v: toml::Value = toml::from_str(&toml_text).expect(&toml_text);
        assert_eq!(v["schema"].as_str(), Some("schedlab.profile/1"));
        assert_eq!(v["cpu"]["ctx_switch_ns"].as_integer(), Some(1200));
        assert_eq!(v["cpu"]["smt_speed"].as_array().map(|a| a.len()), Some(2));
        assert_eq!(v["cache"]["line_bytes"].as_integer(), Some(64));
        assert_eq!(v["transfer"]["llc_ns_per_byte"].as_float(), Some(0.08));
        let states = v["wakeup"]["idle_states"].as_array().unwrap();
        assert_eq!(states.len(), 2);
        assert_eq!(states[1]["exit_ns"].as_integer(), Some(80000));
        assert_eq!(v["search"]["lb_per_task_ns"].as_integer(), Some(100));
        assert!(toml_text.contains(
            "smt_speed = [1.0, 0.62]  # default: not measurable here (one CPU available)"
        ));
    }

    #[test]
    fn measured_values_replace_defaults_with_their_statistics() {
        let mut c = empty_calibration(vec![0, 1]);
        c.pairs.insert(PairClass::Llc, (0, 1));
        let m = |value| Measurement {
            value,
            runs: 7,
            spread: 0.031,
            stable: true,
        };
        c.measured.insert("cpu.ctx_switch_ns".into(), m(2345.6));
        c.measured
            .insert("transfer.llc_ns_per_byte".into(), m(0.123));
        let text = c.to_profile_toml();
        assert!(
            text.contains("ctx_switch_ns = 2346  # measured: median 2346 over 7 runs, spread 3.1%"),
            "{text}"
        );
        assert!(
            text.contains("llc_ns_per_byte = 0.123  # measured"),
            "{text}"
        );
        assert!(
            text.contains("smt_ns_per_byte = 0.02  # default: not measurable here (no SMT)"),
            "{text}"
        );
        assert!(
            text.contains("refetch_cross_node_ns = 120  # default: not measurable here (one node)")
        );
        let v: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(v["cpu"]["ctx_switch_ns"].as_integer(), Some(2346));
    }

    #[test]
    fn classifies_pairs_from_a_fake_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // 4 CPUs: 0,1 SMT siblings; 2 in the same LLC; 3 in another LLC on node 1.
        let w = |p: &str, s: &str| {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, s).unwrap();
        };
        for c in 0..4 {
            let sib = if c < 2 {
                "0-1"
            } else if c == 2 {
                "2"
            } else {
                "3"
            };
            w(&format!("cpu/cpu{c}/topology/thread_siblings_list"), sib);
            w(&format!("cpu/cpu{c}/cache/index3/level"), "3");
            w(&format!("cpu/cpu{c}/cache/index3/type"), "Unified");
            w(
                &format!("cpu/cpu{c}/cache/index3/shared_cpu_list"),
                if c < 3 { "0-2" } else { "3" },
            );
            w(
                &format!("cpu/cpu{c}/cache/index3/coherency_line_size"),
                "64",
            );
            std::fs::create_dir_all(root.join(format!("cpu/cpu{c}/node{}", usize::from(c == 3))))
                .unwrap();
        }
        let t = HostTopology::from_sysfs(root, vec![0, 1, 2, 3]);
        assert_eq!(t.classify(0, 1), PairClass::Smt);
        assert_eq!(t.classify(0, 2), PairClass::Llc);
        assert_eq!(t.classify(2, 3), PairClass::CrossNode);
        assert_eq!(t.line_bytes, Some(64));
        let pairs = t.representative_pairs();
        assert_eq!(pairs.get(&PairClass::Smt), Some(&(0, 1)));
        assert_eq!(pairs.get(&PairClass::Llc), Some(&(0, 2)));
        assert_eq!(pairs.get(&PairClass::CrossLlc), None);
        assert_eq!(pairs.get(&PairClass::CrossNode), Some(&(0, 3)));
    }
}
