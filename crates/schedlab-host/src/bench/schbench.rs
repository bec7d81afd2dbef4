//! schbench-like message/worker wake-ups on real threads and futexes (Chris Mason's
//! `schbench.c`, the pre-v1 design and v1's request mode).
//!
//! `message_threads` message threads each own `threads` workers. A worker puts itself on its
//! message thread's list (a lock-free stack), sets the message thread's futex word and wakes
//! it, then waits on its own futex word. Wake-up latency is taken from CLOCK_MONOTONIC
//! timestamps: the message thread stamps the time once before walking its list, and each
//! worker subtracts it from the time it runs again (so the time spent waking the others
//! counts, as in schbench). No wake-up here is a sync wake-up (futexes).
//!
//! * `version=old` (2016-2023): the message thread sleeps `sleeptime` + up to 25 % more
//!   before each walk; workers spin `cputime` between wake-ups.
//! * `version=v1`: the message thread answers at once; after waking, a worker sleeps
//!   `sleeptime` (100 µs), takes its current CPU's spin lock (`locking`), does `operations`
//!   naive multiplies of three f64 matrices filling `footprint` KiB (or spins `cputime` if
//!   that is given), and unlocks; request latency is sleep plus work, and requests per second
//!   are sampled every second.
//!
//! Defaults as in the simulator (`auto`: 2 message threads and 30 ms sleep/spin for old; 1
//! message thread, CPUs/m workers and 100 µs sleep for v1), except 4 workers per message
//! thread for old (schbench: 16) and a 5 s runtime; no warm-up.

use crate::control::{Deadline, Threads};
use crate::error::HostError;
use crate::spec::Params;
use crate::sys;
use schedlab_metrics::native::{PctBlock, PctRow, SchbenchOldReport, SchbenchV1Report};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// schbench parameters.
#[derive(Clone, Debug)]
pub(crate) struct SchbenchParams {
    pub message_threads: u64,
    pub threads: u64,
    pub runtime: Duration,
    pub sleeptime: Duration,
    /// Old: the worker's spin. v1: spin instead of the matrix work when given.
    pub cputime: Option<Duration>,
    pub footprint_kb: u64,
    pub operations: u64,
    pub locking: bool,
    pub v1: bool,
}

impl SchbenchParams {
    pub(crate) fn read(p: &mut Params) -> Result<Self, HostError> {
        let v1 = p.choice("version", "old", &["old", "v1"])? == "v1";
        let message_threads = p.auto_u64("message_threads", 1, 256)?;
        let message_threads = message_threads.unwrap_or(if v1 { 1 } else { 2 });
        p.set_used("message_threads", message_threads.to_string());
        // Host default: 4 workers per message thread for old (schbench: 16), CPUs/m for v1.
        let threads = p.auto_u64("threads", 1, 1024)?.unwrap_or(if v1 {
            (sys::allowed_cpus().len() as u64 / message_threads).max(1)
        } else {
            4
        });
        p.set_used("threads", threads.to_string());
        let runtime = p.duration(
            "runtime",
            Duration::from_secs(5),
            Duration::from_millis(10),
            Duration::from_secs(3600),
        )?;
        let max = Duration::from_secs(10);
        let sleeptime = p
            .auto_duration("sleeptime", Duration::ZERO, max)?
            .unwrap_or(if v1 {
                Duration::from_micros(100)
            } else {
                Duration::from_millis(30)
            });
        p.set_used("sleeptime", crate::spec::format_duration(sleeptime));
        let mut cputime = p.auto_duration("cputime", Duration::ZERO, max)?;
        if !v1 && cputime.is_none() {
            cputime = Some(Duration::from_millis(30));
        }
        p.set_used(
            "cputime",
            cputime.map_or("auto (matrix work)".into(), crate::spec::format_duration),
        );
        Ok(SchbenchParams {
            message_threads,
            threads,
            runtime,
            sleeptime,
            cputime,
            footprint_kb: p.u64("footprint", 256, 1, 1 << 20)?,
            operations: p.u64("operations", 5, 1, 1000)?,
            locking: p.bool("locking", true)?,
            v1,
        })
    }

    /// Side of the three square f64 matrices of the v1 work: sqrt(F·1024/3/8), as schbench.
    fn matrix_side(&self) -> usize {
        (((self.footprint_kb * 1024 / 3 / 8) as f64).sqrt() as usize).max(1)
    }
}

/// One worker's v1 matrices (a × b → c).
struct Matrices {
    n: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
}

impl Matrices {
    fn new(n: usize) -> Self {
        let fill = |k: usize| (0..n * n).map(|i| ((i * k) % 7) as f64 + 1.0).collect();
        Matrices {
            n,
            a: fill(3),
            b: fill(5),
            c: vec![0.0; n * n],
        }
    }

    /// One naive multiply, as schbench's `do_some_math`.
    fn multiply(&mut self) {
        let n = self.n;
        for i in 0..n {
            for j in 0..n {
                let mut acc = 0.0;
                for k in 0..n {
                    acc += self.a[i * n + k] * self.b[k * n + j];
                }
                self.c[i * n + j] = acc;
            }
        }
        std::hint::black_box(&self.c);
    }
}

/// Futex states of a worker.
const BLOCKED: u32 = 0;
const RUNNING: u32 = 1;
/// End of a message thread's list.
const EMPTY: usize = usize::MAX;

struct Worker {
    state: AtomicU32,
    next: AtomicUsize,
    /// CLOCK_MONOTONIC ns when the message thread started walking the list that woke us.
    wake_ts: AtomicU64,
}

struct Message {
    posted: AtomicU32,
    head: AtomicUsize,
}

struct Shared {
    workers: Vec<Worker>,
    messages: Vec<Message>,
    per_cpu_lock: Vec<AtomicBool>,
    requests: AtomicU64,
    stop: Arc<AtomicBool>,
    p: SchbenchParams,
}

/// How long a futex wait may last before re-checking the stop flag.
const WAIT_SLICE: Duration = Duration::from_millis(100);

impl Shared {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn message_thread(&self, m: usize, seed: u64) {
        let msg = &self.messages[m];
        let mut x = seed | 1;
        while !self.stopped() {
            // Wait until some worker posts.
            while msg.posted.swap(0, Ordering::AcqRel) == 0 {
                if self.stopped() {
                    return;
                }
                sys::futex_wait(&msg.posted, 0, WAIT_SLICE);
            }
            if !self.p.v1 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let s = self.p.sleeptime.as_micros() as u64;
                let extra = if s >= 4 { x % (s / 4) } else { 0 };
                sys::sleep(Duration::from_micros(s + extra));
            }
            let t0 = sys::monotonic_ns();
            let mut w = msg.head.swap(EMPTY, Ordering::AcqRel);
            while w != EMPTY {
                let wk = &self.workers[w];
                let next = wk.next.load(Ordering::Acquire);
                wk.wake_ts.store(t0, Ordering::Relaxed);
                wk.state.store(RUNNING, Ordering::Release);
                sys::futex_wake(&wk.state, 1);
                w = next;
            }
        }
    }

    /// Puts worker `w` on its message thread's list, posts, and waits to be woken; returns the
    /// wake-up latency in ns, or `None` when stopping.
    fn post_and_wait(&self, w: usize) -> Option<u64> {
        let wk = &self.workers[w];
        let msg = &self.messages[w / self.p.threads as usize];
        wk.state.store(BLOCKED, Ordering::Release);
        let mut head = msg.head.load(Ordering::Acquire);
        loop {
            wk.next.store(head, Ordering::Release);
            match msg
                .head
                .compare_exchange_weak(head, w, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(h) => head = h,
            }
        }
        msg.posted.store(1, Ordering::Release);
        sys::futex_wake(&msg.posted, 1);
        while wk.state.load(Ordering::Acquire) == BLOCKED {
            if self.stopped() {
                return None;
            }
            sys::futex_wait(&wk.state, BLOCKED, WAIT_SLICE);
        }
        let now = sys::monotonic_ns();
        Some(now.saturating_sub(wk.wake_ts.load(Ordering::Relaxed)))
    }

    /// The v1 request work: `operations` matrix multiplies, or a `cputime` spin if given.
    fn work(&self, m: &mut Matrices) {
        match self.p.cputime {
            Some(d) => sys::spin_for(d, &self.stop),
            None => {
                for _ in 0..self.p.operations {
                    if self.stopped() {
                        return;
                    }
                    m.multiply();
                }
            }
        }
    }

    /// The v1 request body: the work under the current CPU's spin lock (re-checked after
    /// taking it, as schbench does, in case the worker migrated), unless `locking=false`.
    fn do_work(&self, m: &mut Matrices) {
        if !self.p.locking {
            self.work(m);
            return;
        }
        let n = self.per_cpu_lock.len();
        loop {
            if self.stopped() {
                return;
            }
            let cpu = sys::current_cpu().index() % n;
            let l = &self.per_cpu_lock[cpu];
            if l.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                if sys::current_cpu().index() % n == cpu {
                    self.work(m);
                    l.store(false, Ordering::Release);
                    return;
                }
                l.store(false, Ordering::Release);
            }
            std::hint::spin_loop();
        }
    }

    /// A worker: returns (wake-up latencies, request latencies) in ns.
    fn worker(&self, w: usize) -> (Vec<u64>, Vec<u64>) {
        let (mut wake, mut req) = (Vec::new(), Vec::new());
        let old_spin = self.p.cputime.unwrap_or_default();
        let mut m = Matrices::new(if self.p.v1 && self.p.cputime.is_none() {
            self.p.matrix_side()
        } else {
            1
        });
        if !self.p.v1 {
            sys::spin_for(old_spin, &self.stop);
        }
        while let Some(lat) = self.post_and_wait(w) {
            if self.stopped() {
                break;
            }
            wake.push(lat);
            if self.p.v1 {
                let t0 = sys::monotonic_ns();
                sys::sleep(self.p.sleeptime);
                self.do_work(&mut m);
                if self.stopped() {
                    break;
                }
                req.push(sys::monotonic_ns() - t0);
                self.requests.fetch_add(1, Ordering::Relaxed);
            } else {
                sys::spin_for(old_spin, &self.stop);
            }
        }
        (wake, req)
    }

    /// Unblocks everything once `stop` is set.
    fn poke(&self) {
        for wk in &self.workers {
            wk.state.store(RUNNING, Ordering::Release);
            sys::futex_wake(&wk.state, i32::MAX);
        }
        for m in &self.messages {
            m.posted.store(1, Ordering::Release);
            sys::futex_wake(&m.posted, i32::MAX);
        }
    }
}

/// Either generation's report.
pub(crate) enum SchbenchReport {
    Old(SchbenchOldReport),
    V1(SchbenchV1Report),
}

/// Nearest-rank percentile of sorted `v`.
fn pct(v: &[u64], p: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// A v1-style block: the rows at `pcts`, each row's sample count being the samples in
/// (previous row's value, this row's value], the `star` row marked.
fn block(v: &[u64], pcts: &[f64], star: usize) -> PctBlock {
    let mut rows = Vec::new();
    let mut prev: Option<u64> = None;
    for &p in pcts {
        let value = pct(v, p);
        let lo = prev.map_or(0, |pv| v.partition_point(|&x| x <= pv));
        let hi = v.partition_point(|&x| x <= value);
        rows.push(PctRow {
            pct: p,
            value,
            samples: (hi - lo.min(hi)) as u64,
        });
        prev = Some(value);
    }
    PctBlock {
        total_samples: v.len() as u64,
        rows,
        star,
        min: v.first().copied().unwrap_or(0),
        max: v.last().copied().unwrap_or(0),
    }
}

/// Runs schbench for `runtime`; percentiles are in µs.
pub(crate) fn run(sp: &SchbenchParams, limit: Duration) -> Result<SchbenchReport, HostError> {
    let what = "schbench";
    if sp.runtime >= limit {
        return Err(HostError::BadValue {
            workload: what.into(),
            key: "runtime".into(),
            value: crate::spec::format_duration(sp.runtime),
            expected: format!("less than the run's timeout ({limit:?})"),
        });
    }
    let deadline = Deadline::new(limit);
    let nworkers = (sp.message_threads * sp.threads) as usize;
    let stop = Arc::new(AtomicBool::new(false));
    let shared = Arc::new(Shared {
        workers: (0..nworkers)
            .map(|_| Worker {
                state: AtomicU32::new(BLOCKED),
                next: AtomicUsize::new(EMPTY),
                wake_ts: AtomicU64::new(0),
            })
            .collect(),
        messages: (0..sp.message_threads)
            .map(|_| Message {
                posted: AtomicU32::new(0),
                head: AtomicUsize::new(EMPTY),
            })
            .collect(),
        per_cpu_lock: (0..sys::nr_cpus_configured())
            .map(|_| AtomicBool::new(false))
            .collect(),
        requests: AtomicU64::new(0),
        stop: stop.clone(),
        p: sp.clone(),
    });
    let pk = shared.clone();
    let mut msg_threads: Threads<()> = Threads::new(stop.clone(), move || pk.poke());
    let pk = shared.clone();
    let mut workers: Threads<(Vec<u64>, Vec<u64>)> = Threads::new(stop.clone(), move || pk.poke());
    let spawn_err = |e| HostError::io("schbench: spawning a thread", e);
    for m in 0..sp.message_threads as usize {
        let s = shared.clone();
        let h = std::thread::Builder::new()
            .name("schbench-msg".into())
            .spawn(move || s.message_thread(m, 0x5eed + m as u64))
            .map_err(spawn_err)?;
        msg_threads.push(h);
    }
    let start = Instant::now();
    for w in 0..nworkers {
        let s = shared.clone();
        let h = std::thread::Builder::new()
            .name("schbench-worker".into())
            .spawn(move || s.worker(w))
            .map_err(spawn_err)?;
        workers.push(h);
    }
    // Sample requests per second while the run lasts.
    let mut rps_samples = Vec::new();
    let mut last = (start, 0u64);
    loop {
        let now = Instant::now();
        // A whole second since the last sample (within a sleep's slack at the end of the run).
        if now.duration_since(last.0) >= Duration::from_millis(995) {
            let r = shared.requests.load(Ordering::Relaxed);
            rps_samples.push(r - last.1);
            last = (now, r);
        }
        if now.duration_since(start) >= sp.runtime {
            break;
        }
        deadline.check(what)?;
        std::thread::sleep(Duration::from_millis(5).min(sp.runtime - now.duration_since(start)));
    }
    let elapsed = start.elapsed();
    let total_requests = shared.requests.load(Ordering::Relaxed);
    stop.store(true, Ordering::SeqCst);
    let give_up = Instant::now() + Duration::from_secs(5);
    while !(workers_done(&workers) && workers_done(&msg_threads)) {
        shared.poke();
        if Instant::now() > give_up {
            return Err(HostError::WorkerFailed {
                what: what.into(),
                detail: "threads did not stop within 5 s".into(),
            });
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut wake = Vec::new();
    let mut req = Vec::new();
    for r in workers.join_all() {
        let (w, q) = r.ok_or_else(|| HostError::WorkerFailed {
            what: what.into(),
            detail: "a worker thread panicked".into(),
        })?;
        wake.extend(w.into_iter().map(|ns| ns / 1000));
        req.extend(q.into_iter().map(|ns| ns / 1000));
    }
    msg_threads.join_all();
    wake.sort_unstable();
    req.sort_unstable();
    if sp.v1 {
        if rps_samples.is_empty() {
            rps_samples.push((total_requests as f64 / elapsed.as_secs_f64()).round() as u64);
        }
        rps_samples.sort_unstable();
        Ok(SchbenchReport::V1(SchbenchV1Report {
            runtime_s: sp.runtime.as_secs(),
            wakeup: block(&wake, &[50.0, 90.0, 99.0, 99.9], 2),
            request: block(&req, &[50.0, 90.0, 99.0, 99.9], 2),
            rps: block(&rps_samples, &[20.0, 50.0, 90.0], 1),
            average_rps: total_requests as f64 / elapsed.as_secs_f64(),
        }))
    } else {
        Ok(SchbenchReport::Old(SchbenchOldReport {
            p50: pct(&wake, 50.0),
            p75: pct(&wake, 75.0),
            p90: pct(&wake, 90.0),
            p95: pct(&wake, 95.0),
            p99: pct(&wake, 99.0),
            p99_5: pct(&wake, 99.5),
            p99_9: pct(&wake, 99.9),
            min: wake.first().copied().unwrap_or(0),
            max: wake.last().copied().unwrap_or(0),
        }))
    }
}

fn workers_done<T>(t: &Threads<T>) -> bool {
    t.all_finished()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(pct(&v, 50.0), 50);
        assert_eq!(pct(&v, 99.0), 99);
        assert_eq!(pct(&v, 99.9), 100);
        assert_eq!(pct(&[], 50.0), 0);
        let b = block(&v, &[50.0, 90.0, 99.0], 2);
        let counts: Vec<u64> = b.rows.iter().map(|r| r.samples).collect();
        assert_eq!(counts, [50, 40, 9]);
        assert_eq!((b.min, b.max, b.total_samples), (1, 100, 100));
    }
}
