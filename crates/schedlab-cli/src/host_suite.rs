//! `schedlab host check --suite`: a fixed set of benchmarks run for real and in simulation on
//! this machine (`-t host`, the era preset closest to the running kernel), each repeated until
//! its median is stable, compared by headline, by trace counters and by effect ratios.
//!
//! The suite is data ([`suite`]): pipe ping-pong unpinned, both sides on one CPU and on the
//! two farthest CPUs; hackbench 1/2/4 groups × pipe/socket × process/thread; tbench at 1,
//! CPUs/2 and CPUs clients; schbench at two loads. `--quick` keeps one of each kind, short.
//!
//! Stability rule ([`Repeats::stable`]): a benchmark runs at least `min` times; after each run
//! the median of all runs so far is taken, and it stops once the last three medians lie within
//! `tol` of each other (max - min ≤ tol × the newest median), or after `max` runs (then the
//! row is marked `unstable`). The spread printed is (max - min) / median of all runs. The
//! simulator is repeated over seeds under the same rule.
//!
//! The dynamics table (`dynamics.rs`) comes from extra real runs captured through tracefs
//! (root; three, one with `--quick`) and from the first simulated run's trace, both read by
//! `schedlab_trace::dynamics` on the tasks both sides name alike; without tracefs the suite
//! says so and prints headlines and effects only. The real trace covers the whole machine.

mod dynamics;
mod report;

pub use report::render;
#[cfg(test)]
pub use report::{distance, summary_line};

use crate::host_check::{host_run_traced, sim_trace_on};
use anyhow::Result;
use schedlab_engine::MachineProfile;
use schedlab_metrics::BenchResult;
use schedlab_topo::CpuId;
use schedlab_trace::Trace;
use schedlab_trace::dynamics::Dynamics;
use std::collections::BTreeSet;

/// Headline error a benchmark may have and still count as "within".
pub const HEADLINE_TOL: f64 = 0.15;
/// Effect-ratio error an effect may have and still count as "within".
pub const EFFECT_TOL: f64 = 0.10;

/// One benchmark of the suite: a short id, the spec run on both sides, the metric compared.
#[derive(Clone, Debug, PartialEq)]
pub struct Bench {
    /// Row label, e.g. `hackbench g2 pipe thread`.
    pub id: String,
    /// The workload spec, the same text for the host and the simulator.
    pub spec: String,
    /// The metric compared (lower is better for every metric the suite uses).
    pub metric: &'static str,
}

/// An effect: the ratio of two benchmarks' headlines, real against simulated.
#[derive(Clone, Debug, PartialEq)]
pub struct Effect {
    /// E.g. `pinned one CPU / unpinned`.
    pub name: String,
    /// Numerator benchmark id.
    pub num: String,
    /// Denominator benchmark id.
    pub den: String,
}

/// The repetition rule (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct Repeats {
    /// Fewest runs.
    pub min: usize,
    /// Most runs.
    pub max: usize,
    /// Agreement of the last three running medians.
    pub tol: f64,
}

impl Repeats {
    /// Whether `values` (in run order) meet the rule: at least `min` runs and the last three
    /// running medians within `tol` of each other.
    pub fn stable(&self, values: &[f64]) -> bool {
        if values.len() < self.min.max(3) {
            return false;
        }
        let meds: Vec<f64> = (values.len() - 2..=values.len())
            .map(|n| median(&values[..n]))
            .collect();
        let (lo, hi) = meds
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &m| {
                (l.min(m), h.max(m))
            });
        let last = meds[2];
        last > 0.0 && (hi - lo) <= self.tol * last
    }

    /// Runs `f` until [`Repeats::stable`] or `max` runs; returns the values and whether they
    /// became stable.
    pub fn run(&self, mut f: impl FnMut(usize) -> Result<f64>) -> Result<(Vec<f64>, bool)> {
        let mut v = Vec::new();
        while v.len() < self.max {
            v.push(f(v.len())?);
            if self.stable(&v) {
                return Ok((v, true));
            }
        }
        Ok((v, false))
    }
}

/// Median of `v` (0 for none).
pub fn median(v: &[f64]) -> f64 {
    let mut w = v.to_vec();
    w.sort_by(|a, b| a.total_cmp(b));
    match w.len() {
        0 => 0.0,
        n if n % 2 == 1 => w[n / 2],
        n => (w[n / 2 - 1] + w[n / 2]) / 2.0,
    }
}

/// (max - min) / median.
pub fn spread(v: &[f64]) -> f64 {
    let m = median(v);
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    if m > 0.0 { (hi - lo) / m } else { 0.0 }
}

/// The suite for a machine whose allowed CPUs are `cpus`, with `far` the CPU farthest from
/// `cpus[0]` (another node or LLC where there is one). The same list on every run of a
/// machine: nothing here depends on a measurement.
pub fn suite(cpus: &[CpuId], far: CpuId, quick: bool) -> (Vec<Bench>, Vec<Effect>) {
    let a = cpus.first().copied().unwrap_or_default();
    let n = cpus.len().max(1);
    let mut b = Vec::new();
    let mut e = Vec::new();
    let bench = |id: &str, spec: String, metric| Bench {
        id: id.into(),
        spec,
        metric,
    };
    let effect = |name: &str, num: &str, den: &str| Effect {
        name: name.into(),
        num: num.into(),
        den: den.into(),
    };
    let loops = if quick { 5_000 } else { 20_000 };
    b.push(bench(
        "pipe unpinned",
        format!("pipe:loops={loops}"),
        "usecs_per_op",
    ));
    b.push(bench(
        "pipe one CPU",
        format!("pipe:loops={loops},cpu_a={a},cpu_b={a}"),
        "usecs_per_op",
    ));
    e.push(effect(
        "pipe: one CPU / unpinned",
        "pipe one CPU",
        "pipe unpinned",
    ));
    if far != a {
        b.push(bench(
            "pipe two CPUs",
            format!("pipe:loops={loops},cpu_a={a},cpu_b={far}"),
            "usecs_per_op",
        ));
        e.push(effect(
            "pipe: two CPUs / unpinned",
            "pipe two CPUs",
            "pipe unpinned",
        ));
    }
    let groups: &[u64] = if quick { &[1, 2] } else { &[1, 2, 4] };
    let ipcs: &[&str] = if quick {
        &["pipe"]
    } else {
        &["pipe", "socket"]
    };
    let hb_loops = if quick { 100 } else { 200 };
    for &ipc in ipcs {
        for mode in ["process", "thread"] {
            for &g in groups {
                b.push(bench(
                    &format!("hackbench g{g} {ipc} {mode}"),
                    format!("hackbench:groups={g},loops={hb_loops},ipc={ipc},mode={mode}"),
                    "time_s",
                ));
            }
            for w in groups.windows(2) {
                e.push(effect(
                    &format!("hackbench {ipc} {mode}: g{} / g{}", w[1], w[0]),
                    &format!("hackbench g{} {ipc} {mode}", w[1]),
                    &format!("hackbench g{} {ipc} {mode}", w[0]),
                ));
            }
        }
        for &g in groups {
            e.push(effect(
                &format!("hackbench g{g} {ipc}: thread / process"),
                &format!("hackbench g{g} {ipc} thread"),
                &format!("hackbench g{g} {ipc} process"),
            ));
        }
    }
    let mut clients = vec![1, n / 2, n];
    clients.retain(|&c| c >= 1);
    clients.dedup();
    if quick {
        clients.truncate(1);
    }
    let dur = if quick { "300ms" } else { "1s" };
    for &c in &clients {
        // tbench's headline is a throughput; the suite compares its inverse (µs per MB) so that
        // every compared metric is lower-better and ratios read the same way.
        b.push(bench(
            &format!("tbench {c} clients"),
            format!("tbench:clients={c},duration={dur}"),
            "us_per_mb",
        ));
    }
    if let (Some(&lo), Some(&hi)) = (clients.first(), clients.last())
        && hi != lo
    {
        e.push(effect(
            &format!("tbench: {hi} / {lo} clients (time per MB)"),
            &format!("tbench {hi} clients"),
            &format!("tbench {lo} clients"),
        ));
    }
    let loads: Vec<usize> = if quick {
        vec![n]
    } else {
        vec![(n / 2).max(1), 2 * n]
    };
    let rt = if quick { "300ms" } else { "1s" };
    for &t in &loads {
        b.push(bench(
            &format!("schbench {t} workers"),
            format!(
                "schbench:message_threads=1,threads={t},sleeptime=1ms,cputime=500us,runtime={rt}"
            ),
            "wakeup_lat_p50_us",
        ));
    }
    if loads.len() == 2 {
        e.push(effect(
            &format!("schbench: {} / {} workers", loads[1], loads[0]),
            &format!("schbench {} workers", loads[1]),
            &format!("schbench {} workers", loads[0]),
        ));
    }
    (b, e)
}

/// The value the suite compares for `metric` in a result.
pub fn value_of(r: &BenchResult, metric: &str) -> Option<f64> {
    if metric == "us_per_mb" {
        return r
            .metric("throughput_mb_s")
            .filter(|m| m.value > 0.0)
            .map(|m| 1e6 / m.value);
    }
    r.metric(metric).map(|m| m.value)
}

/// One benchmark's outcome on one side.
#[derive(Clone, Debug)]
pub struct Side {
    /// The values of each run.
    pub values: Vec<f64>,
    /// Whether the stability rule was met.
    pub stable: bool,
    /// The dynamics of each traced run (`dynamics.rs`): one per captured real run, the first
    /// seed's on the simulated side.
    pub dynamics: Vec<Dynamics>,
}

impl Side {
    /// The median of the runs.
    pub fn median(&self) -> f64 {
        median(&self.values)
    }
}

/// Relative error of `sim` against `real`.
pub fn rel_err(real: f64, sim: f64) -> f64 {
    if real.abs() < 1e-12 {
        f64::NAN
    } else {
        (sim - real) / real
    }
}

/// The simulated side of one benchmark: seeds 1, 2, ... under the repetition rule, and the
/// first seed's trace (its dynamics are read once the real side has said which tasks the two
/// share).
pub fn simulate(
    b: &Bench,
    variant: &str,
    profile: &MachineProfile,
    rep: &Repeats,
) -> Result<(Side, Option<Trace>)> {
    let mut first = None;
    let (values, stable) = rep.run(|i| {
        let (r, t) = sim_trace_on("host", &b.spec, variant, profile, i as u64 + 1)?;
        if first.is_none() {
            first = Some(t);
        }
        value_of(&r, b.metric)
            .ok_or_else(|| anyhow::anyhow!("{}: the simulator reported no {}", b.id, b.metric))
    })?;
    let side = Side {
        values,
        stable,
        dynamics: Vec::new(),
    };
    Ok((side, first))
}

/// The real side of one benchmark: in-process runs under the repetition rule, then
/// `captures` captured runs for the dynamics. Each captured run's dynamics are read on the
/// tasks whose names it shares with `sim_comms`; the shared names of the first are returned.
pub fn measure(
    b: &Bench,
    rep: &Repeats,
    captures: usize,
    sim_comms: &BTreeSet<String>,
) -> Result<(Side, BTreeSet<String>)> {
    let opts = schedlab_host::HostRunOptions::default();
    let (values, stable) = rep.run(|_| {
        let r = schedlab_host::run_workload(&b.spec, &opts)?;
        value_of(&r.result, b.metric)
            .ok_or_else(|| anyhow::anyhow!("{}: the host run reported no {}", b.id, b.metric))
    })?;
    let mut side = Side {
        values,
        stable,
        dynamics: Vec::new(),
    };
    let mut shared = None;
    for _ in 0..captures {
        let Some(trace) = host_run_traced(&b.spec, true)?.1 else {
            break;
        };
        let keep = shared.get_or_insert_with(|| {
            dynamics::comms(&trace)
                .intersection(sim_comms)
                .cloned()
                .collect::<BTreeSet<String>>()
        });
        side.dynamics
            .push(schedlab_trace::dynamics::dynamics(&trace, |c| {
                keep.contains(c)
            }));
    }
    Ok((side, shared.unwrap_or_default()))
}

/// One row of the result: a benchmark, both sides.
#[derive(Clone, Debug)]
pub struct Row {
    /// The benchmark.
    pub bench: Bench,
    /// Real.
    pub real: Side,
    /// Simulated.
    pub sim: Side,
}

/// One benchmark's real result as `--record` writes it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RecordedRow {
    /// Benchmark id.
    pub id: String,
    /// Its spec.
    pub spec: String,
    /// The compared metric.
    pub metric: String,
    /// The real runs' values, in run order.
    pub real: Vec<f64>,
}

/// What `host check --suite --record` writes: the real side of a suite run, for a test to
/// compare profiles against without running anything real.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RecordedSuite {
    /// CPU model, CPU count and kernel.
    pub machine: String,
    /// The era simulated.
    pub variant: String,
    /// The machine as a `-t` spec (its compact form where it has one).
    pub topology: String,
    /// Whether it was the quick form.
    pub quick: bool,
    /// The rows.
    pub rows: Vec<RecordedRow>,
}

/// How the suite is run.
#[derive(Clone, Debug)]
pub struct SuiteOptions {
    /// The short form.
    pub quick: bool,
    /// Capture the real runs (counters) when tracefs is available.
    pub capture: bool,
    /// Policy variant of the simulator.
    pub variant: String,
    /// Where to write the real side as JSON ([`RecordedSuite`]).
    pub record: Option<std::path::PathBuf>,
}

impl SuiteOptions {
    /// The repetition rule of the real runs.
    pub fn real_repeats(&self) -> Repeats {
        if self.quick {
            Repeats {
                min: 3,
                max: 3,
                tol: 0.05,
            }
        } else {
            Repeats {
                min: 3,
                max: 9,
                tol: 0.03,
            }
        }
    }

    /// The repetition rule of the simulated runs (over seeds).
    pub fn sim_repeats(&self) -> Repeats {
        Repeats {
            min: 3,
            max: if self.quick { 3 } else { 6 },
            tol: 0.03,
        }
    }
}

/// This machine's allowed CPUs and the CPU farthest from the first of them.
pub fn host_cpus() -> (Vec<CpuId>, CpuId) {
    let all: Vec<CpuId> = CpuId::range(4096).collect();
    let h = schedlab_host::HostCpus::read(std::path::Path::new("/sys"), all);
    let cpus = allowed_cpus().unwrap_or_else(|| h.cpus.clone());
    let a = cpus.first().copied().unwrap_or_default();
    let far = cpus
        .iter()
        .copied()
        .filter(|&c| c != a)
        .max_by_key(|&c| (h.topology.distance_class(a, c), std::cmp::Reverse(c)))
        .unwrap_or(a);
    (cpus, far)
}

/// The CPUs this process may run on, from /proc/self/status.
fn allowed_cpus() -> Option<Vec<CpuId>> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("Cpus_allowed_list:"))?;
    schedlab_topo::cpulist::parse_cpu_list(line.split(':').nth(1)?.trim()).ok()
}

/// Runs the suite: every benchmark real and simulated, printing progress on stderr.
pub fn run_suite(
    opts: &SuiteOptions,
    profile: &MachineProfile,
) -> Result<(Vec<Row>, Vec<Effect>, bool)> {
    let (cpus, far) = host_cpus();
    let (benches, effects) = suite(&cpus, far, opts.quick);
    let traced = opts.capture
        && match schedlab_host::tracefs_available() {
            Ok(()) => true,
            Err(e) => {
                eprintln!("note: no counters ({e}); headlines and effects only");
                false
            }
        };
    let mut rows = Vec::new();
    let captures = match (traced, opts.quick) {
        (false, _) => 0,
        (true, true) => 1,
        (true, false) => 3,
    };
    for b in benches {
        eprintln!("suite: {} ({})", b.id, b.spec);
        let (mut sim, sim_trace) = simulate(&b, &opts.variant, profile, &opts.sim_repeats())?;
        let sim_comms = sim_trace.as_ref().map(dynamics::comms).unwrap_or_default();
        let (real, shared) = measure(&b, &opts.real_repeats(), captures, &sim_comms)?;
        if let Some(t) = &sim_trace
            && !real.dynamics.is_empty()
        {
            sim.dynamics = vec![schedlab_trace::dynamics::dynamics(t, |c| {
                shared.contains(c)
            })];
        }
        drop(sim_trace);
        rows.push(Row {
            bench: b,
            real,
            sim,
        });
    }
    Ok((rows, effects, traced))
}

/// The 1-minute load average (/proc/loadavg), as text.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// The CPU model as /proc/cpuinfo names it.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// `schedlab host check --suite`: runs the suite and prints its header, tables and summary.
pub fn run_cmd(opts: &SuiteOptions, profile: &MachineProfile, kernel: &str) -> Result<()> {
    let t0 = std::time::Instant::now();
    let (cpus, _) = host_cpus();
    let load_before = loadavg();
    let (rows, effects, traced) = run_suite(opts, profile)?;
    println!(
        "host fidelity suite{}: {} ({} CPUs), kernel {kernel}; simulator: -t host, {}, profile '{}'",
        if opts.quick { " (quick)" } else { "" },
        cpu_model(),
        cpus.len(),
        opts.variant,
        profile.name
    );
    println!(
        "load average (1 min) before {load_before}, after {}; other load on the machine shows as spread and as busy time in the real counters\n",
        loadavg()
    );
    print!("{}", render(&rows, &effects, traced));
    if let Some(path) = &opts.record {
        let rec = RecordedSuite {
            machine: format!("{}, {} CPUs, kernel {kernel}", cpu_model(), cpus.len()),
            variant: opts.variant.clone(),
            topology: crate::host_cmd::host_topology(),
            quick: opts.quick,
            rows: rows
                .iter()
                .map(|r| RecordedRow {
                    id: r.bench.id.clone(),
                    spec: r.bench.spec.clone(),
                    metric: r.bench.metric.to_string(),
                    real: r.real.values.clone(),
                })
                .collect(),
        };
        std::fs::write(path, serde_json::to_string_pretty(&rec)? + "\n")
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        eprintln!("recorded the real side in {}", path.display());
    }
    eprintln!("suite took {:.0} s", t0.elapsed().as_secs_f64());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stability_needs_three_agreeing_running_medians() {
        let r = Repeats {
            min: 3,
            max: 9,
            tol: 0.03,
        };
        assert!(!r.stable(&[10.0, 10.0]));
        assert!(r.stable(&[10.0, 10.1, 10.0]));
        // Running medians 10, 15, 10: no agreement yet.
        assert!(!r.stable(&[10.0, 20.0, 10.0]));
        // One outlier among many barely moves the median.
        assert!(r.stable(&[10.0, 10.2, 10.1, 30.0, 10.0]));
        let mut n = 0;
        let (v, ok) = r
            .run(|_| {
                n += 1;
                Ok(if n % 2 == 0 { 1.0 } else { 3.0 })
            })
            .unwrap();
        assert!(!ok, "alternating values never settle");
        assert_eq!(v.len(), 9);
    }

    #[test]
    fn suite_covers_the_listed_benchmarks_and_effects_name_real_rows() {
        let (b, e) = suite(&[CpuId::new(0), CpuId::new(1)], CpuId::new(1), false);
        let ids: Vec<&str> = b.iter().map(|x| x.id.as_str()).collect();
        for want in [
            "pipe unpinned",
            "pipe one CPU",
            "pipe two CPUs",
            "hackbench g4 socket thread",
            "hackbench g1 pipe process",
            "tbench 1 clients",
            "tbench 2 clients",
            "schbench 1 workers",
            "schbench 4 workers",
        ] {
            assert!(ids.contains(&want), "{want} missing from {ids:?}");
        }
        assert_eq!(
            b.iter().filter(|x| x.id.starts_with("hackbench")).count(),
            12
        );
        for x in &e {
            assert!(
                ids.contains(&x.num.as_str()) && ids.contains(&x.den.as_str()),
                "{x:?}"
            );
        }
        assert!(b[1].spec.contains("cpu_a=0,cpu_b=0") && b[2].spec.contains("cpu_a=0,cpu_b=1"));
        // One CPU: no two-CPU pin, and the quick form is a strict subset of kinds.
        let (b1, _) = suite(&[CpuId::new(0)], CpuId::new(0), true);
        assert!(!b1.iter().any(|x| x.id == "pipe two CPUs"));
    }

    #[test]
    fn summary_counts_headlines_and_effects_against_their_tolerances() {
        let side = |v: f64| Side {
            values: vec![v],
            stable: true,
            dynamics: Vec::new(),
        };
        let row = |id: &str, real, sim| Row {
            bench: Bench {
                id: id.into(),
                spec: String::new(),
                metric: "time_s",
            },
            real: side(real),
            sim: side(sim),
        };
        // a: +10 % (within), b: +30 % (not); ratio b/a real 2.0, sim 2.36 (+18 %, not).
        let rows = vec![row("a", 1.0, 1.1), row("b", 2.0, 2.6)];
        let eff = vec![Effect {
            name: "b / a".into(),
            num: "b".into(),
            den: "a".into(),
        }];
        assert_eq!(
            summary_line(&rows, &eff),
            "host fidelity: 1 of 2 headlines within 15 %, 0 of 1 effects within 10 %"
        );
    }
}
