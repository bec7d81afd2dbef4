//! schbench (Chris Mason, github.com/masoncl/schbench), both generations.
//!
//! ```text
//!   old:  worker W: loop { spin(cputime); list_k += W; post(M_k); wait_self; record(now − stamp_k) }
//!         message M_k: loop { wait(f_k); sleep(U[s, 1.25 s]); stamp_k; wake every listed worker }
//!   v1:   worker W: loop { list += W; post(M); wait_self; record wakeup;
//!                          stamp; sleep(100us); lock(this CPU's lock, pure spin);
//!                          compute(work(F, n)); unlock; record request; count }
//!         message M: loop { wait(f); stamp; wake every listed worker }
//! ```
//!
//! Every wakeup is a futex wake without WF_SYNC, issued in sequence by one waker. The
//! wakeup latency is measured from the message thread's single timestamp taken before it
//! walks its list, so time spent waking the others (or being preempted by them) counts.
//!
//! v1's request work: `operations` naive multiplies of three matrices sized by the
//! footprint; calibrated to schbench's README example (F = 256 KB, n = 5: about 17 ms per
//! request), scaling as F^1.5 (the multiply is cubic in a side that grows as √F).

use super::{Built, MAX_TASKS};
use crate::catalog::{WorkloadInfo, param};
use crate::error::WorkloadError;
use crate::instance::{Report, min_max_us, no_samples, pct_us};
use crate::spec::Args;
use hdrhistogram::Histogram;
use schedlab_engine::task::{CounterId, HistId, LockRef, Op, Slot};
use schedlab_engine::{Dist, Simulation, TaskSpec, Workload};
use schedlab_metrics::native::{
    PctBlock, PctRow, SchbenchOldReport, SchbenchV1Report, format_schbench_old, format_schbench_v1,
};
use schedlab_metrics::{Better, Metric};
use schedlab_topo::Topology;
use schedlab_vocab::format_duration;
use std::sync::Arc;

/// v1 request work at F = 256 KB for one matrix operation, ns (README: ≈ 17 ms for n = 5).
pub(crate) const V1_OP_NS_AT_256K: f64 = 3.4e6;

/// v1 request work for a footprint and operation count, ns.
pub(crate) fn v1_work_ns(footprint_kb: u64, operations: u64) -> u64 {
    (V1_OP_NS_AT_256K * operations as f64 * (footprint_kb as f64 / 256.0).powf(1.5)).round() as u64
}

/// The catalog entry of `schbench`: its parameters (names as the real tool calls them),
/// defaults, help and builder.
pub(crate) const INFO: WorkloadInfo = WorkloadInfo {
    name: "schbench",
    mirrors: "schbench -m -t -r -s -c (old, 2016-2023) or schbench v1.0 -m -t -r -F -n -s [-L]",
    follows: "schbench (github.com/masoncl/schbench): the 2016-2023 program (version=old) and v1.0 (version=v1)",
    reconstructed: "v1's matrix work per request, calibrated to schbench's README example and scaled as footprint^1.5",
    about: "Message threads wake their workers in bursts (futex, no sync hint). old: workers \
            spin cputime then post; the message thread sleeps sleeptime and wakes them all. v1: \
            each request is a wakeup, a 100us sleep and matrix work under a per-CPU lock.",
    params: &[
        param(
            "version",
            "old",
            "old|v1",
            "schbench generation (old: LKML 2016-2023; v1: April 2023 on)",
        ),
        param(
            "message_threads",
            "auto",
            "count",
            "message threads (-m; auto: 2 old, 1 v1)",
        ),
        param(
            "threads",
            "auto",
            "count",
            "workers per message thread (-t; auto: 16 old, CPUs/m v1)",
        ),
        param(
            "runtime",
            "1s",
            "duration",
            "run time (-r; schbench's default 30s shrunk)",
        ),
        param(
            "sleeptime",
            "auto",
            "duration",
            "message thread sleep (old) or worker sleep (v1) (-s; auto: 30ms old, 100us v1)",
        ),
        param(
            "cputime",
            "auto",
            "duration",
            "worker spin (old -c; auto 30ms) or request work (v1; auto from footprint and operations)",
        ),
        param(
            "footprint",
            "256",
            "KB",
            "v1: matrix footprint per worker (-F)",
        ),
        param(
            "operations",
            "5",
            "count",
            "v1: matrix multiplies per request (-n)",
        ),
        param(
            "locking",
            "on",
            "bool",
            "v1: per-CPU locking around the work (-L turns it off)",
        ),
    ],
    build,
};

pub(crate) fn build(a: &mut Args, topo: &Topology) -> Result<Built, WorkloadError> {
    let v1 = a.choice("version")? == "v1";
    let m = a
        .int_in("message_threads", 1, 10_000)?
        .unwrap_or(if v1 { 1 } else { 2 });
    a.resolve("message_threads", m);
    let t = a.int_in("threads", 1, MAX_TASKS)?.unwrap_or(if v1 {
        (topo.nr_cpus() as u64 / m).max(1)
    } else {
        16
    });
    a.resolve("threads", t);
    if m * (t + 1) > MAX_TASKS {
        return Err(a.err(
            "threads",
            t,
            format!(
                "{} tasks is more than the {MAX_TASKS} a model may create",
                m * (t + 1)
            ),
        ));
    }
    let runtime = a.int("runtime", 1_000_000, 3_600_000_000_000)?;
    let sleep =
        a.int_in("sleeptime", 0, 60_000_000_000)?
            .unwrap_or(if v1 { 100_000 } else { 30_000_000 });
    a.resolve("sleeptime", format_duration(sleep));
    let mut w = Workload::new("schbench");
    let wake = w.hist("wakeup_latency");
    if !v1 {
        let cpu = a
            .int_in("cputime", 0, 60_000_000_000)?
            .unwrap_or(30_000_000);
        a.resolve("cputime", format_duration(cpu));
        for _ in 0..m {
            let f = w.futex();
            let list = w.list();
            let stamp = w.global_slot();
            w.spawn(TaskSpec::new(
                "schbench-msg",
                vec![
                    Op::Loop(u64::MAX),
                    Op::FutexWait(f),
                    Op::Sleep(Dist::Uniform {
                        lo: sleep,
                        hi: sleep + sleep / 4,
                    }),
                    Op::Stamp(stamp),
                    Op::WakeList(list),
                    Op::EndLoop,
                ],
            ));
            let worker = TaskSpec::new(
                "schbench-worker",
                vec![
                    Op::Loop(u64::MAX),
                    Op::Compute(Dist::Const(cpu)),
                    Op::ListAdd(list),
                    Op::FutexWake { f, n: 1 },
                    Op::WaitSelf,
                    Op::RecordSince {
                        hist: wake,
                        slot: stamp,
                    },
                    Op::EndLoop,
                ],
            );
            let id = w.spec(worker);
            for _ in 0..t {
                w.initial.push(id);
            }
        }
        w.duration_ns = Some(runtime);
        return Ok((w, Arc::new(OldOut { wake })));
    }
    let footprint = a.int("footprint", 1, 1 << 20)?;
    let ops = a.int("operations", 1, 1_000_000)?;
    let locking = a.flag("locking")?;
    let work = a
        .int_in("cputime", 0, 60_000_000_000)?
        .unwrap_or_else(|| v1_work_ns(footprint, ops));
    a.resolve("cputime", format_duration(work));
    let req = w.hist("request_latency");
    let reqs = w.counter("requests");
    let locks = w.mutexes(topo.nr_cpus());
    for _ in 0..m {
        let f = w.futex();
        let list = w.list();
        let stamp = w.global_slot();
        w.spawn(TaskSpec::new(
            "schbench-msg",
            vec![
                Op::Loop(u64::MAX),
                Op::FutexWait(f),
                Op::Stamp(stamp),
                Op::WakeList(list),
                Op::EndLoop,
            ],
        ));
        let mut prog = vec![
            Op::Loop(u64::MAX),
            Op::ListAdd(list),
            Op::FutexWake { f, n: 1 },
            Op::WaitSelf,
            Op::RecordSince {
                hist: wake,
                slot: stamp,
            },
            Op::Stamp(Slot::Task(0)),
        ];
        if sleep > 0 {
            prog.push(Op::Sleep(Dist::Const(sleep)));
        }
        if locking {
            prog.push(Op::Lock {
                lock: LockRef::PerCpu(locks),
                spin_ns: u64::MAX,
            });
        }
        prog.push(Op::Compute(Dist::Const(work)));
        if locking {
            prog.push(Op::Unlock(LockRef::PerCpu(locks)));
        }
        prog.extend([
            Op::RecordSince {
                hist: req,
                slot: Slot::Task(0),
            },
            Op::Count {
                counter: reqs,
                amount: Dist::Const(1),
            },
            Op::EndLoop,
        ]);
        let mut worker = TaskSpec::new("schbench-worker", prog);
        worker.ws_bytes = footprint * 1024;
        let id = w.spec(worker);
        for _ in 0..t {
            w.initial.push(id);
        }
    }
    w.duration_ns = Some(runtime);
    Ok((w, Arc::new(V1Out { wake, req, reqs })))
}

struct OldOut {
    wake: HistId,
}

impl Report for OldOut {
    fn headline(&self) -> (String, Better) {
        ("wakeup_lat_p99_us".into(), Better::Lower)
    }
    fn duration_based(&self) -> bool {
        true
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let h = sim.user_hist(self.wake);
        if h.is_empty() {
            return Err(no_samples("schbench", "wakeup latency sample"));
        }
        let (min, max) = min_max_us(h);
        let r = SchbenchOldReport {
            p50: pct_us(h, 50.0),
            p75: pct_us(h, 75.0),
            p90: pct_us(h, 90.0),
            p95: pct_us(h, 95.0),
            p99: pct_us(h, 99.0),
            p99_5: pct_us(h, 99.5),
            p99_9: pct_us(h, 99.9),
            min,
            max,
        };
        Ok((format_schbench_old(&r), r.metrics()))
    }
}

/// A schbench v1 percentile block from a latency histogram in ns (values in µs); each row's
/// sample count is the number of samples above the previous row's value, up to its own.
fn block(h: &Histogram<u64>, pcts: &[f64], star: usize) -> PctBlock {
    let (min, max) = min_max_us(h);
    let mut rows = Vec::new();
    let mut prev: Option<u64> = None;
    for &p in pcts {
        let v = pct_us(h, p);
        let lo = prev.map_or(0, |x| x * 1000 + 500);
        let hi = v * 1000 + 499;
        let samples = if prev.is_some_and(|x| x >= v) {
            0
        } else {
            h.count_between(lo, hi)
        };
        rows.push(PctRow {
            pct: p,
            value: v,
            samples,
        });
        prev = Some(prev.map_or(v, |x| x.max(v)));
    }
    PctBlock {
        total_samples: h.len(),
        rows,
        star,
        min,
        max,
    }
}

struct V1Out {
    wake: HistId,
    req: HistId,
    reqs: CounterId,
}

impl Report for V1Out {
    fn headline(&self) -> (String, Better) {
        ("wakeup_lat_p99_us".into(), Better::Lower)
    }
    fn duration_based(&self) -> bool {
        true
    }
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError> {
        let wake = sim.user_hist(self.wake);
        let req = sim.user_hist(self.req);
        if wake.is_empty() || req.is_empty() {
            return Err(no_samples("schbench", "completed request"));
        }
        let secs = sim.now() as f64 / 1e9;
        let rps = sim.user_counter(self.reqs) / secs;
        let runtime_s = secs.round().max(1.0) as u64;
        // Per-second RPS samples are not recorded: the block shows the run's average in
        // each row (one sample per second of runtime at the median).
        let v = rps.round() as u64;
        let rows = [20.0, 50.0, 90.0]
            .iter()
            .map(|&p| PctRow {
                pct: p,
                value: v,
                samples: if p == 50.0 { runtime_s } else { 0 },
            })
            .collect();
        let r = SchbenchV1Report {
            runtime_s,
            wakeup: block(wake, &[50.0, 90.0, 99.0, 99.9], 2),
            request: block(req, &[50.0, 90.0, 99.0, 99.9], 2),
            rps: PctBlock {
                total_samples: runtime_s,
                rows,
                star: 1,
                min: v,
                max: v,
            },
            average_rps: rps,
        };
        let mut m = r.metrics();
        m.push(crate::instance::metric(
            "request_lat_p99_us",
            pct_us(req, 99.0) as f64,
            "us",
            Better::Lower,
        ));
        m.push(crate::instance::metric(
            "request_lat_p50_us",
            pct_us(req, 50.0) as f64,
            "us",
            Better::Lower,
        ));
        Ok((format_schbench_v1(&r), m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_work_matches_the_readme_calibration() {
        assert_eq!(v1_work_ns(256, 5), 17_000_000);
        // Four times the footprint: a side twice as long, eight times the work.
        assert_eq!(v1_work_ns(1024, 5), 136_000_000);
    }
}
