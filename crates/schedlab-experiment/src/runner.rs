//! Executing runs: one simulation per (point, variant, repetition), in parallel with rayon,
//! each single-threaded and seeded from its repetition, so the results do not depend on the
//! number of threads. Finished runs can be appended to a JSON-lines file as they finish
//! (`--out`), skipped when already there (`--resume`), and split over machines (`--shard`).

use crate::error::ExperimentError;
use crate::plan::{Plan, RunKey};
use crate::simulate::SimRecipe;
use schedlab_engine::{EndReason, MachineProfile, SimOptions};
use schedlab_metrics::BenchResult;
use schedlab_topo::Topology;
use schedlab_topo::spec::{TopologyOptions, parse_topology};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Schema tag of one run line in a JSON-lines file.
pub const RUN_SCHEMA: &str = "schedlab.run/1";

/// Counters kept per run (a summary of the engine's `Counters`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunCounters {
    /// Context switches.
    pub ctx_switches: u64,
    /// Involuntary context switches.
    pub ctx_involuntary: u64,
    /// Wakeups.
    pub wakeups: u64,
    /// Wakeups placed on the waker's CPU.
    pub wakeups_local: u64,
    /// Wakeups pulled toward the waker by the affine path.
    pub wakeups_affine: u64,
    /// Wakeups onto a CPU that was idle.
    pub wakeups_to_idle: u64,
    /// Migrations at wakeup.
    pub migrations_wake: u64,
    /// Migrations by the balancer.
    pub migrations_balance: u64,
    /// Migrations that crossed NUMA nodes (NUMA levels).
    pub migrations_numa: u64,
    /// CPUs examined by placement searches.
    pub cpus_examined: u64,
    /// Wakeup latency p50, ns.
    pub wakeup_lat_p50_ns: u64,
    /// Wakeup latency p99, ns.
    pub wakeup_lat_p99_ns: u64,
    /// CPU busy fraction.
    pub busy_fraction: f64,
    /// CPU-time idle while tasks waited, ns.
    pub idle_while_waiting_ns: u64,
    /// Simulated time, ns.
    pub elapsed_ns: u64,
    /// Events processed.
    pub events: u64,
    /// Wake graph (engine `WakeGraph`): wakeups whose waker is a task.
    #[serde(default)]
    pub wake_task_wakeups: u64,
    /// ... whose waker was not the wakee's usual partner (its majority waker so far).
    #[serde(default)]
    pub wake_off_partner: u64,
    /// Operations that woke two or more tasks.
    #[serde(default)]
    pub wake_multi_ops: u64,
    /// Wakeups made by those operations.
    #[serde(default)]
    pub wake_multi_wakeups: u64,
    /// Most tasks one operation woke.
    #[serde(default)]
    pub wake_max_fanout: u64,
    /// Wakeups 4.3's `wake_wide()` would call wide (engine-kept flips, LLC-size factor).
    #[serde(default)]
    pub wake_wide: u64,
    /// Distribution of the wakee's `wakee_flips` at wakeup (`[n at 0, n at 1, ...]`).
    #[serde(default)]
    pub wakee_flips: Vec<u64>,
    /// Distribution of the waker's `wakee_flips` at wakeup.
    #[serde(default)]
    pub waker_flips: Vec<u64>,
    /// Sleeps on a lock that ended in a wakeup.
    #[serde(default)]
    pub lock_waits: u64,
    /// Their total time asleep, ns.
    #[serde(default)]
    pub lock_wait_ns: u64,
    /// Wakeups issued from softirq (the loopback receive path).
    #[serde(default)]
    pub wakeups_softirq: u64,
    /// Task wakeups without WF_SYNC.
    #[serde(default)]
    pub wakeups_nonsync: u64,
    /// Softirq receive processing, ns.
    #[serde(default)]
    pub softirq_ns: u64,
    /// Times a CPU's ksoftirqd was woken.
    #[serde(default)]
    pub ksoftirqd_wakeups: u64,
    /// Wakeups issued by ksoftirqd.
    #[serde(default)]
    pub wakeups_by_ksoftirqd: u64,
    /// Time wakers ran on after a remote wakeup, ns.
    #[serde(default)]
    pub overlap_ns: u64,
    /// Shared-object contention cost by class (`pipe`, `socket`, `futex`, `lock`), ns.
    #[serde(default)]
    pub contention_ns: [u64; 4],
    /// The time budget's parts and every decision counter (what `explain` reads).
    #[serde(default)]
    pub explain: crate::explain::counters::ExplainCounters,
}

impl RunCounters {
    /// Summarises engine counters.
    pub fn from_engine(c: &schedlab_engine::Counters) -> Self {
        let busy: u64 = c.busy_ns.iter().sum();
        RunCounters {
            ctx_switches: c.ctx_switches,
            ctx_involuntary: c.ctx_involuntary,
            wakeups: c.wakeups,
            wakeups_local: c.wakeups_local,
            wakeups_affine: c.wakeups_affine,
            wakeups_to_idle: c.wakeups_to_idle,
            migrations_wake: c.migrations_wake,
            migrations_balance: c.migrations_balance,
            migrations_numa: c
                .migrations_by_level
                .iter()
                .filter(|(l, _)| l.starts_with("NUMA"))
                .map(|(_, n)| n)
                .sum(),
            cpus_examined: c.cpus_examined,
            wakeup_lat_p50_ns: if c.wakeup_latency.is_empty() {
                0
            } else {
                c.wakeup_latency_ns(50.0)
            },
            wakeup_lat_p99_ns: if c.wakeup_latency.is_empty() {
                0
            } else {
                c.wakeup_latency_ns(99.0)
            },
            busy_fraction: busy as f64 / c.cpu_time_ns().max(1) as f64,
            idle_while_waiting_ns: c.idle_while_waiting_ns,
            elapsed_ns: c.elapsed_ns,
            events: c.events,
            wake_task_wakeups: c.wake_graph.task_wakeups,
            wake_off_partner: c.wake_graph.off_partner,
            wake_multi_ops: c.wake_graph.multi_ops,
            wake_multi_wakeups: c.wake_graph.multi_wakeups,
            wake_max_fanout: c.wake_graph.max_fanout,
            wake_wide: c.wake_graph.wide,
            wakee_flips: c.wake_graph.wakee_flips.clone(),
            waker_flips: c.wake_graph.waker_flips.clone(),
            lock_waits: c.wake_graph.lock_waits,
            lock_wait_ns: c.wake_graph.lock_wait_ns,
            wakeups_softirq: c.wakeups_softirq,
            wakeups_nonsync: c.wakeups_nonsync,
            softirq_ns: c.softirq_ns,
            ksoftirqd_wakeups: c.ksoftirqd_wakeups,
            wakeups_by_ksoftirqd: c.wakeups_by_ksoftirqd,
            overlap_ns: c.overlap_ns,
            contention_ns: c.contention_ns,
            explain: crate::explain::counters::ExplainCounters::from_engine(c),
        }
    }

    /// Named numeric fields, for averaging across repetitions.
    pub fn fields(&self) -> Vec<(&'static str, f64)> {
        let share = |n: u64| n as f64 / self.wake_task_wakeups.max(1) as f64;
        let q = |d: &[u64], p: f64| schedlab_engine::WakeGraph::flips_quantile(d, p) as f64;
        vec![
            ("ctx_switches", self.ctx_switches as f64),
            ("ctx_involuntary", self.ctx_involuntary as f64),
            ("wakeups", self.wakeups as f64),
            ("wakeups_local", self.wakeups_local as f64),
            ("wakeups_affine", self.wakeups_affine as f64),
            ("wakeups_to_idle", self.wakeups_to_idle as f64),
            ("migrations_wake", self.migrations_wake as f64),
            ("migrations_balance", self.migrations_balance as f64),
            ("migrations_numa", self.migrations_numa as f64),
            ("cpus_examined", self.cpus_examined as f64),
            ("wakeup_lat_p50_ns", self.wakeup_lat_p50_ns as f64),
            ("wakeup_lat_p99_ns", self.wakeup_lat_p99_ns as f64),
            ("busy_fraction", self.busy_fraction),
            ("idle_while_waiting_ns", self.idle_while_waiting_ns as f64),
            ("elapsed_ns", self.elapsed_ns as f64),
            ("events", self.events as f64),
            ("wake_off_partner_share", share(self.wake_off_partner)),
            ("wake_multi_share", share(self.wake_multi_wakeups)),
            ("wake_multi_ops", self.wake_multi_ops as f64),
            ("wake_max_fanout", self.wake_max_fanout as f64),
            ("wake_wide_share", share(self.wake_wide)),
            ("wakee_flips_p50", q(&self.wakee_flips, 0.5)),
            ("wakee_flips_p90", q(&self.wakee_flips, 0.9)),
            ("waker_flips_p90", q(&self.waker_flips, 0.9)),
            ("lock_waits", self.lock_waits as f64),
            ("lock_wait_ns", self.lock_wait_ns as f64),
            ("wakeups_softirq", self.wakeups_softirq as f64),
            ("wakeups_nonsync", self.wakeups_nonsync as f64),
            ("softirq_ns", self.softirq_ns as f64),
            ("ksoftirqd_wakeups", self.ksoftirqd_wakeups as f64),
            ("wakeups_by_ksoftirqd", self.wakeups_by_ksoftirqd as f64),
            ("overlap_ns", self.overlap_ns as f64),
            ("contention_pipe_ns", self.contention_ns[0] as f64),
            ("contention_socket_ns", self.contention_ns[1] as f64),
            ("contention_futex_ns", self.contention_ns[2] as f64),
            ("contention_lock_ns", self.contention_ns[3] as f64),
        ]
    }
}

/// One finished run, as stored in JSON-lines files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// `schedlab.run/1`.
    pub schema: String,
    /// Fingerprint of the experiment it belongs to.
    pub experiment: String,
    /// Its place in the plan.
    pub key: RunKey,
    /// Seed used.
    pub seed: u64,
    /// Canonical workload spec of the point.
    pub workload: String,
    /// Canonical variant name.
    pub variant: String,
    /// The benchmark result.
    pub result: BenchResult,
    /// Engine counters.
    pub counters: RunCounters,
}

/// A loaded machine: topology and profile.
#[derive(Clone, Debug)]
pub struct Machine {
    /// Topology.
    pub topo: Arc<Topology>,
    /// Profile.
    pub profile: MachineProfile,
}

impl Machine {
    /// Loads the experiment's topology and profile.
    pub fn load(plan: &Plan) -> Result<Self, ExperimentError> {
        let e = &plan.experiment;
        let opts = TopologyOptions {
            smt: e.smt,
            llc_per_node: e.llc_per_node,
            ..Default::default()
        };
        let topo = parse_topology(&e.topology, &opts)
            .map_err(|err| ExperimentError::Input(err.to_string()))?;
        // A profile file may set only some keys: the rest are the topology preset's.
        let base = MachineProfile::for_preset(&e.topology);
        let profile = match &e.profile {
            Some(p) => MachineProfile::load_over(&base, p)
                .map_err(|err| ExperimentError::Input(err.to_string()))?,
            None => base,
        };
        Ok(Machine {
            topo: Arc::new(topo),
            profile,
        })
    }
}

/// The most simulated time a run of a workload without a duration may reach (1 h, the
/// longest duration a workload may name): past it the run stops with an error naming it.
pub const MAX_SIM_NS: u64 = 3_600_000_000_000;

/// A workload error of a point, naming the point when there is a sweep.
pub(crate) fn point_error(plan: &Plan, point: usize, e: impl std::fmt::Display) -> String {
    if plan.points.len() > 1 {
        format!("sweep point {}: {e}", plan.point_label(point))
    } else {
        e.to_string()
    }
}

/// The workload spec of a point (base spec with the point's parameters applied).
pub fn point_workload(
    plan: &Plan,
    point: usize,
) -> Result<schedlab_workloads::WorkloadSpec, ExperimentError> {
    let mut spec = schedlab_workloads::parse_spec(&plan.experiment.workload)
        .map_err(|e| ExperimentError::Input(e.to_string()))?;
    for (k, v) in &plan.points[point].params {
        spec = spec
            .with_param(k, v)
            .map_err(|e| ExperimentError::Input(format!("--sweep {k}={v}: {e}")))?;
    }
    Ok(spec)
}

/// Output of a single simulation.
pub struct SingleRun {
    /// The record.
    pub record: RunRecord,
    /// The trace, when asked for.
    pub trace: Option<schedlab_trace::Trace>,
    /// Full engine counters, for printing.
    pub counters_text: String,
    /// The wake-graph counters, for printing (kept apart from `counters_text`, which the
    /// determinism snapshots pin).
    pub wake_graph_text: String,
    /// Hash of the engine's event stream (the determinism guard's fingerprint).
    pub event_hash: u64,
    /// The run's `/proc/schedstat` text (`run --schedstat`).
    pub schedstat: String,
}

/// The simulated time the latest running simulation has reached, ns (published every
/// 65,536 events; what `schedlab run` shows on a terminal).
pub static SIM_TIME_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Runs one (point, variant, repetition).
pub fn run_one(
    plan: &Plan,
    machine: &Machine,
    key: RunKey,
    trace: bool,
) -> Result<SingleRun, ExperimentError> {
    let spec = point_workload(plan, key.point)?;
    let inst = schedlab_workloads::instantiate(&spec, &machine.topo)
        .map_err(|e| ExperimentError::Input(point_error(plan, key.point, e)))?;
    let seed = plan.seed(key.rep);
    let variant = &plan.experiment.variants[key.variant];
    let recipe = SimRecipe::new(variant, machine.topo.clone(), machine.profile.clone(), seed)?;
    let name = recipe.name().to_string();
    // A workload without a duration runs until its tasks exit, but never past the longest
    // duration a workload may name: its ops' times could add up to days.
    let capped = inst.workload.duration_ns.is_none();
    let (mut sim, end) = recipe.run(
        inst.workload.clone(),
        SimOptions {
            seed,
            trace,
            progress: Some(&SIM_TIME_NS),
            time_limit_ns: capped.then_some(MAX_SIM_NS),
            ..Default::default()
        },
    )?;
    if capped && end == EndReason::TimeUp {
        return Err(ExperimentError::Run(format!(
            "{spec} under {name}: the run reached {} s of simulated time, the most a workload without a duration may run, before its tasks exited; give it a duration, or fewer or shorter ops",
            MAX_SIM_NS / 1_000_000_000
        )));
    }
    if let EndReason::Deadlock(blocked) = &end {
        return Err(ExperimentError::Run(format!(
            "{} under {name} deadlocked at t={} ns; blocked: {}",
            spec,
            sim.now(),
            blocked.join("; ")
        )));
    }
    if end == EndReason::EventLimit {
        return Err(ExperimentError::Run(format!(
            "{} under {name} hit the event limit",
            spec
        )));
    }
    let result = inst
        .result(&sim, &end)
        .map_err(|e| ExperimentError::Run(e.to_string()))?;
    let counters = RunCounters::from_engine(sim.counters());
    let counters_text = sim.counters().to_text();
    let wake_graph_text = sim.counters().wake_graph.to_text();
    let event_hash = sim.event_hash();
    let tr = sim.take_trace();
    let schedstat = sim.schedstat_text();
    Ok(SingleRun {
        record: RunRecord {
            schema: RUN_SCHEMA.into(),
            experiment: plan.experiment.fingerprint(),
            key,
            seed,
            workload: spec.to_string(),
            variant: name,
            result,
            counters,
        },
        trace: tr,
        counters_text,
        wake_graph_text,
        event_hash,
        schedstat,
    })
}

/// How to execute a plan.
#[derive(Clone, Debug, Default)]
pub struct ExecOptions {
    /// Worker threads (0 = rayon's default).
    pub jobs: usize,
    /// Append each finished run to this JSON-lines file.
    pub out: Option<std::path::PathBuf>,
    /// Skip runs already in `out`.
    pub resume: bool,
    /// Only runs with `index % n == k`.
    pub shard: Option<(usize, usize)>,
    /// Show a progress bar (it hides itself when stderr is not a terminal).
    pub progress: bool,
    /// Count finished runs on this bar instead of one of the run's own (a caller running
    /// several plans, like `validate`, shows one bar over all of them).
    pub bar: Option<indicatif::ProgressBar>,
}

/// Set by the Ctrl-C handler: no new run starts, finished ones are kept.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Held while a finished run's line is appended to an `--out` file: a process that stops on a
/// signal takes it before it exits, so the file never ends in a torn line.
pub static OUT_WRITE: Mutex<()> = Mutex::new(());

/// Reads the run lines of a JSON-lines file (a missing file is empty).
pub fn read_jsonl(path: &Path) -> Result<Vec<RunRecord>, ExperimentError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(ExperimentError::Io(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = match serde_json::from_str(line) {
            Ok(x) => x,
            // A half-written last line (killed mid-write) is dropped, not fatal.
            Err(_) if i + 1 == text.lines().count() => continue,
            Err(e) => {
                return Err(ExperimentError::Input(format!(
                    "{}:{}: {e}",
                    path.display(),
                    i + 1
                )));
            }
        };
        if value.get("schema").and_then(|s| s.as_str()) != Some(RUN_SCHEMA) {
            continue;
        }
        let r: RunRecord = serde_json::from_value(value)
            .map_err(|e| ExperimentError::Input(format!("{}:{}: {e}", path.display(), i + 1)))?;
        v.push(r);
    }
    Ok(v)
}

/// Runs `keys` (skipping those in `done`), returning the new records in plan order.
pub fn execute(
    plan: &Plan,
    machine: &Machine,
    keys: &[RunKey],
    done: &[RunRecord],
    opts: &ExecOptions,
) -> Result<Vec<RunRecord>, ExperimentError> {
    use rayon::prelude::*;
    let finished: std::collections::BTreeSet<usize> = done.iter().map(|d| d.key.index).collect();
    let todo: Vec<RunKey> = keys
        .iter()
        .copied()
        .filter(|k| opts.shard.is_none_or(|(s, n)| k.index % n == s))
        .filter(|k| !finished.contains(&k.index))
        .collect();
    // After a run fails (a point that cannot be built, a deadlock), no new one starts: the
    // error comes at once, not after the rest of the sweep.
    let failed = AtomicBool::new(false);
    let shared = opts.bar.is_some();
    let bar = if let Some(b) = &opts.bar {
        Some(b.clone())
    } else if opts.progress {
        let b = indicatif::ProgressBar::new(todo.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} runs, {elapsed} elapsed, ETA {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(b)
    } else {
        None
    };
    let out = match &opts.out {
        Some(p) => Some(Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| ExperimentError::Io(format!("cannot open {}: {e}", p.display())))?,
        )),
        None => None,
    };
    let work = |k: &RunKey| -> Option<Result<RunRecord, ExperimentError>> {
        if INTERRUPTED.load(Ordering::SeqCst) || failed.load(Ordering::SeqCst) {
            return None;
        }
        let mut r = run_one(plan, machine, *k, false).map(|s| s.record);
        if r.is_err() {
            failed.store(true, Ordering::SeqCst);
        }
        if let (Ok(rec), Some(f)) = (&r, &out) {
            // One write of the whole line, then a sync: a kill leaves at most a torn last line
            // (which a resume drops), and a finished run is on disk before the next starts.
            let mut line = serde_json::to_string(rec).unwrap_or_default();
            line.push('\n');
            let _whole = OUT_WRITE.lock().unwrap_or_else(|e| e.into_inner());
            let written = match f.lock() {
                Ok(mut f) => f.write_all(line.as_bytes()).and_then(|()| f.sync_data()),
                Err(_) => Err(std::io::Error::other("writer poisoned")),
            };
            if let Err(e) = written {
                let path = opts.out.as_deref().unwrap_or(Path::new("?"));
                r = Err(ExperimentError::Io(format!(
                    "cannot append run {} to {}: {e}",
                    k.index,
                    path.display()
                )));
            }
        }
        if let Some(b) = &bar {
            b.inc(1);
        }
        Some(r)
    };
    let results: Vec<Option<Result<RunRecord, ExperimentError>>> = if opts.jobs == 1 {
        todo.iter().map(work).collect()
    } else {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(opts.jobs)
            .build()
            .map_err(|e| ExperimentError::Run(format!("cannot start worker threads: {e}")))?;
        pool.install(|| todo.par_iter().map(work).collect())
    };
    if let Some(b) = bar
        && !shared
    {
        b.finish_and_clear();
    }
    let mut recs = Vec::new();
    for r in results.into_iter().flatten() {
        recs.push(r?);
    }
    Ok(recs)
}

/// Groups records by (point, variant), samples in repetition order.
pub fn group(records: &[RunRecord]) -> BTreeMap<(usize, usize), Vec<&RunRecord>> {
    let mut m: BTreeMap<(usize, usize), Vec<&RunRecord>> = BTreeMap::new();
    for r in records {
        m.entry((r.key.point, r.key.variant)).or_default().push(r);
    }
    for v in m.values_mut() {
        v.sort_by_key(|r| r.key.rep);
    }
    m
}
