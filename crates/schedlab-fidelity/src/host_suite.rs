//! `host check --suite` as a library: a fixed set of benchmarks ([`rows::suite`]) run for
//! real and in simulation on this machine (`-t host`, the era preset closest to the running
//! kernel), compared by headline, by trace counters and by effect ratios ([`report`]), each
//! strictly (against the real median) and noise-aware (against the real range, [`noise`]).
//!
//! The real side runs in *rounds* ([`SuiteOptions::rounds`]; at least [`MIN_ROUNDS`]): a
//! round is one pass over the whole suite, one real run of each benchmark, so the rounds are
//! spread over the suite's duration and their range shows how far the machine drifts. Then
//! each benchmark runs on until its median is stable ([`crate::stats::Repeats`], the rounds
//! counting as its first runs). The simulator is repeated over seeds under the same rule.
//!
//! The dynamics table ([`dynamics`]) comes from extra real runs captured through tracefs
//! (root; three, one with `--quick`) and from the first simulated run's trace, both read by
//! `schedlab_trace::dynamics` on the tasks both sides name alike; without tracefs the suite
//! says so and prints headlines and effects only. The real trace covers the whole machine.

pub mod dynamics;
pub mod noise;
pub mod report;
pub mod rows;

pub use report::render;
pub use rows::{Bench, EFFECT_TOL, Effect, HEADLINE_TOL, Row, Side, suite, value_of};

use crate::host_check::{host_run_traced, host_topology, sim_trace_on};
use crate::stats::Repeats;
use anyhow::{Result, bail};
use schedlab_engine::MachineProfile;
use schedlab_topo::CpuId;
use schedlab_trace::Trace;
use std::collections::BTreeSet;

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

/// One in-process real run of a benchmark: its compared value.
pub fn real_run(b: &Bench) -> Result<f64> {
    let r = schedlab_host::run_workload(&b.spec, &schedlab_host::HostRunOptions::default())?;
    value_of(&r.result, b.metric)
        .ok_or_else(|| anyhow::anyhow!("{}: the host run reported no {}", b.id, b.metric))
}

/// The real side of one benchmark: its rounds' values (`rounds`, in run order), more
/// in-process runs until the repetition rule is met, then `captures` captured runs for the
/// dynamics. Each captured run's dynamics are read on the tasks whose names it shares with
/// `sim_comms`; the shared names of the first are returned. `note` hears why a run could not
/// be captured.
pub fn measure(
    b: &Bench,
    rounds: Vec<f64>,
    rep: &Repeats,
    captures: usize,
    sim_comms: &BTreeSet<String>,
    note: &mut dyn FnMut(&str),
) -> Result<(Side, BTreeSet<String>)> {
    let (values, stable) = rep.run_from(rounds, |_| real_run(b))?;
    let mut side = Side {
        values,
        stable,
        dynamics: Vec::new(),
    };
    let mut shared = None;
    for _ in 0..captures {
        let Some(trace) = host_run_traced(&b.spec, true, note)?.1 else {
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

/// One benchmark's real result as `--record` writes it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RecordedRow {
    /// Benchmark id.
    pub id: String,
    /// Its spec.
    pub spec: String,
    /// The compared metric.
    pub metric: String,
    /// The real runs' values, in run order: one per round first, then any the stability rule
    /// added.
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
    /// Rounds of real runs: the first this many values of each row (0 in records written
    /// before rounds were counted).
    #[serde(default)]
    pub rounds: usize,
    /// The rows.
    pub rows: Vec<RecordedRow>,
    /// The summary counts, strict and noise-aware (absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<noise::Summary>,
}

/// How the suite is run.
#[derive(Clone, Debug)]
pub struct SuiteOptions {
    /// The short form.
    pub quick: bool,
    /// Passes over the suite of one real run per benchmark (at least [`MIN_ROUNDS`]; see the
    /// module docs).
    pub rounds: usize,
    /// Capture the real runs (counters) when tracefs is available.
    pub capture: bool,
    /// Policy variant of the simulator.
    pub variant: String,
}

/// Fewest rounds: one run has no range, and a noise-aware verdict needs one.
pub const MIN_ROUNDS: usize = 2;

/// Rounds of the full suite unless told.
pub const DEFAULT_ROUNDS: usize = 3;

/// Rounds of `--quick` unless told.
pub const QUICK_ROUNDS: usize = 2;

/// The rounds to run: `given`, else the default of the form; fewer than [`MIN_ROUNDS`] is an
/// error.
pub fn rounds(given: Option<usize>, quick: bool) -> Result<usize> {
    let n = given.unwrap_or(if quick { QUICK_ROUNDS } else { DEFAULT_ROUNDS });
    if n < MIN_ROUNDS {
        bail!(
            "--rounds {n}: the suite needs at least {MIN_ROUNDS} rounds of real runs (one run has no range to judge noise by)"
        );
    }
    Ok(n)
}

impl SuiteOptions {
    /// The repetition rule of the real runs: the rounds are the fewest, and a benchmark runs on
    /// until stable (three runs at least, the rule's window), up to 3 (quick) or 9 runs, or the
    /// rounds where there are more.
    pub fn real_repeats(&self) -> Repeats {
        if self.quick {
            Repeats {
                min: self.rounds,
                max: self.rounds.max(3),
                tol: 0.05,
            }
        } else {
            Repeats {
                min: self.rounds,
                max: self.rounds.max(9),
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

/// Runs the suite: every benchmark real and simulated, telling `note` what it starts and what
/// it cannot do. Returns the rows, the effects and whether the real runs were traced.
pub fn run_suite(
    opts: &SuiteOptions,
    profile: &MachineProfile,
    note: &mut dyn FnMut(&str),
) -> Result<(Vec<Row>, Vec<Effect>, bool)> {
    let (cpus, far) = host_cpus();
    let (benches, effects) = suite(&cpus, far, opts.quick);
    let traced = opts.capture
        && match schedlab_host::tracefs_available() {
            Ok(()) => true,
            Err(e) => {
                note(&format!(
                    "note: no counters ({e}); headlines and effects only"
                ));
                false
            }
        };
    let mut rows = Vec::new();
    let captures = match (traced, opts.quick) {
        (false, _) => 0,
        (true, true) => 1,
        (true, false) => 3,
    };
    if opts.rounds < MIN_ROUNDS {
        bail!(
            "the suite needs at least {MIN_ROUNDS} rounds of real runs, not {}",
            opts.rounds
        );
    }
    let mut per_bench: Vec<Vec<f64>> = vec![Vec::new(); benches.len()];
    for round in 1..=opts.rounds {
        for (b, values) in benches.iter().zip(&mut per_bench) {
            note(&format!(
                "suite: round {round} of {}: {}",
                opts.rounds, b.id
            ));
            values.push(real_run(b)?);
        }
    }
    for (b, rounds) in benches.into_iter().zip(per_bench) {
        note(&format!("suite: {} ({})", b.id, b.spec));
        let (mut sim, sim_trace) = simulate(&b, &opts.variant, profile, &opts.sim_repeats())?;
        let sim_comms = sim_trace.as_ref().map(dynamics::comms).unwrap_or_default();
        let (real, shared) = measure(&b, rounds, &opts.real_repeats(), captures, &sim_comms, note)?;
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
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// The CPU model as /proc/cpuinfo names it.
pub fn cpu_model() -> String {
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

/// The real side of a finished suite as `--record` writes it, with its summary counts, on a
/// machine of `cpus` CPUs running `kernel`.
pub fn recorded(
    opts: &SuiteOptions,
    rows: &[Row],
    effects: &[Effect],
    kernel: &str,
    cpus: usize,
) -> RecordedSuite {
    RecordedSuite {
        machine: format!("{}, {} CPUs, kernel {kernel}", cpu_model(), cpus),
        variant: opts.variant.clone(),
        topology: host_topology(),
        quick: opts.quick,
        rounds: opts.rounds,
        counts: Some(report::summary(rows, effects)),
        rows: rows
            .iter()
            .map(|r| RecordedRow {
                id: r.bench.id.clone(),
                spec: r.bench.spec.clone(),
                metric: r.bench.metric.to_string(),
                real: r.real.values.clone(),
            })
            .collect(),
    }
}
