//! `schedlab run`, `schedlab compare` and `schedlab merge`.

use crate::output_cmd::{OutputArgs, emit};
use crate::topo_cmd::TopologyArgs;
use anyhow::{Context, Result, bail};
use clap::Args;
use schedlab_experiment::plan::{Experiment, Plan, RunKey, parse_shard, shard_from_env};
use schedlab_experiment::runner::{ExecOptions, Machine, run_one};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Default workload of `run` and `compare` (short, and sensitive to placement).
pub const DEFAULT_WORKLOAD: &str = "tbench:clients=4,duration=200ms";
/// Default sweep of `compare` when neither a file, a workload nor a sweep is given.
pub const DEFAULT_SWEEP: &str = "clients=1,4,8,16";
/// Default variant of `run`.
pub const DEFAULT_VARIANT: &str = "linux-6.6";

/// Options shared by run and compare.
#[derive(Args, Debug, Clone)]
pub struct CommonArgs {
    #[command(flatten)]
    topology: TopologyArgs,
    /// Workload spec NAME[:key=value,...] (see `schedlab workloads`).
    #[arg(short = 'w', long = "workload")]
    workload: Option<String>,
    /// Machine profile TOML; it may set only some keys, the rest come from the topology
    /// preset's built-in profile (`schedlab profile show NAME`; see `schedlab host calibrate`).
    #[arg(long)]
    profile: Option<PathBuf>,
    /// Repetitions (seeds) per variant and point.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::checks::whole::<usize>)]
    reps: Option<usize>,
    /// Base seed: repetition k uses a seed derived from (seed, k), the same for every variant.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::checks::whole::<u64>)]
    seed: Option<u64>,
    /// Write one run as a trace: FILE.pftrace (Perfetto) or FILE.txt (ftrace text).
    #[arg(long)]
    trace: Option<PathBuf>,
}

/// `schedlab run`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  schedlab run\n  schedlab run -t westmere-2s20c -w hackbench:groups=10,loops=100 -v linux-3.10\n  \
schedlab run -w pipe:loops=100000 -v linux-6.6,NO_SIS_UTIL,SIS_PROP --trace pipe.pftrace"
)]
pub struct RunArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[arg(
        short = 'v',
        long = "variant",
        help = "Policy variant POLICY[,SWITCH]... (see `schedlab policies`) [default: linux-6.6; with -t host: the running kernel's era, HZ and preemption model]"
    )]
    variant: Option<String>,
    /// Print the result and counters as JSON.
    #[arg(long)]
    json: bool,
    /// Write the first repetition's scheduler counters to FILE in the /proc/schedstat format
    /// (version 15: `cpuN` and `domainN` lines), which existing schedstat readers parse.
    #[arg(long, value_name = "FILE")]
    schedstat: Option<PathBuf>,
}

/// `schedlab compare`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  schedlab compare\n  \
schedlab compare -t xeon-2s12c -w tbench:duration=300ms -v linux-4.6 -v linux-4.6,NO_OLD_IDLE,NO_ORDER_IDLE,IDLE_CORE,IDLE_CPU,IDLE_SMT --sweep clients=8,16,32 --reps 5\n  \
schedlab compare experiments/r1-wakeup-buddy-tbench.toml --jobs 2 --out r1.jsonl --plot r1.svg --report r1.html\n  \
schedlab compare experiments/r1-wakeup-buddy-tbench.toml --shard 1/4 --out shard1.jsonl   # then: schedlab merge shard*.jsonl")]
pub struct CompareArgs {
    /// An experiment TOML file. Flags given as well override it (a `-t` equal to the default
    /// machine, desktop-4c8t, cannot be told from no `-t`: the file's topology is kept).
    file: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
    /// Policy variants; the first is the baseline of ratios (default: linux-6.6 and linux-6.6,NO_WAKE_AFFINE).
    #[arg(short = 'v', long = "variant")]
    variants: Vec<String>,
    /// Sweep a workload parameter: KEY=V1,V2,... (repeatable for different keys: their
    /// Cartesian product; a key given twice is an error).
    #[arg(long)]
    sweep: Vec<String>,
    /// Parallel runs, 1-1024 (default: all cores). Results do not depend on it.
    #[arg(short = 'j', long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    jobs: Option<u64>,
    /// Add repetitions until every ratio's 95% CI is within ±P %.
    #[arg(long = "until-ci", value_name = "P")]
    until_ci: Option<f64>,
    /// Cap on repetitions for --until-ci (only with --until-ci, or an experiment file's until_ci).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::checks::whole::<usize>)]
    max_reps: Option<usize>,
    /// Run a plan larger than the size and time limits (see the error that asks for it).
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    out: OutputArgs,
    /// Write each finished run to this JSON-lines file as it finishes (a new file; an existing
    /// one is continued with --resume, never overwritten).
    #[arg(long = "out", value_name = "FILE.jsonl")]
    out_runs: Option<PathBuf>,
    /// Skip runs already in --out (after an interruption).
    #[arg(long)]
    resume: bool,
    /// Run only shard K of N (1-based); also read from SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT
    /// or JOB_COMPLETION_INDEX/SCHEDLAB_SHARD_COUNT.
    #[arg(long)]
    shard: Option<String>,
    /// After the table, explain each verdict: the time budget of every variant and every
    /// counter side by side, ordered by what accounts for the difference (`schedlab explain`).
    #[arg(long)]
    pub explain: bool,
    /// With --explain: rerun the comparison with each cost class of the profile scaled by
    /// 0.5 and 2, one at a time, and say whether each verdict holds.
    #[arg(long)]
    pub sensitivity: bool,
}

/// `schedlab merge`.
#[derive(Args, Debug)]
#[command(
    after_help = "Example:\n  schedlab merge shard1.jsonl shard2.jsonl shard3.jsonl shard4.jsonl --json"
)]
pub struct MergeArgs {
    /// JSON-lines files written by `compare --out` (one per shard).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
}

fn experiment_from(
    common: &CommonArgs,
    variants: Vec<String>,
    sweep: &[String],
    file: Option<&Path>,
) -> Result<(Experiment, Option<String>)> {
    let (mut e, desc) = match file {
        Some(f) => Experiment::from_file(f)?,
        None => (
            Experiment {
                topology: common.topology.topology.clone(),
                smt: None,
                llc_per_node: None,
                profile: None,
                workload: DEFAULT_WORKLOAD.into(),
                variants: vec![],
                sweep: vec![],
                reps: 3,
                seed: 1,
                until_ci: None,
                max_reps: 30,
            },
            None,
        ),
    };
    if file.is_none() || common.topology.topology != crate::topo_cmd::DEFAULT_TOPOLOGY {
        e.topology = common.topology.topology.clone();
    }
    e.smt = common.topology.smt.or(e.smt);
    e.llc_per_node = common.topology.llc_per_node.or(e.llc_per_node);
    if let Some(w) = &common.workload {
        e.workload = w.clone();
    }
    if let Some(p) = &common.profile {
        e.profile = Some(p.clone());
    }
    if let Some(r) = common.reps {
        crate::checks::reps("--reps", r)?;
        e.reps = r;
    }
    if let Some(s) = common.seed {
        e.seed = s;
    }
    if !variants.is_empty() {
        e.variants = variants;
    }
    for s in sweep {
        let axis = Experiment::parse_sweep(s)?;
        if file.is_some() && e.sweep.iter().any(|(k, _)| *k == axis.0) {
            bail!(
                "--sweep {}: the experiment file sweeps '{}' already; change its values in the file, or give another key",
                axis.0,
                axis.0
            );
        }
        e.sweep.push(axis);
    }
    crate::checks::sweep_keys(&e.sweep)?;
    crate::checks::sweep_values(&e.sweep)?;
    // The built-in default workload names the clients the default sweep replaces.
    if common.workload.is_some() || file.is_some() {
        crate::checks::sweep_vs_spec(&e.workload, &e.sweep)?;
    }
    crate::checks::distinct_variants(&e.variants)?;
    for v in &e.variants {
        crate::checks::variant(v)?;
    }
    crate::checks::workload_file(&e.workload)?;
    if let Some(t) = &common.trace {
        trace_format(t)?;
        crate::checks::writable(t, "--trace")?;
    }
    // `-t host` reads the sysfs tree at --sysfs-root or $SCHEDLAB_SYSFS_ROOT when one is
    // given: the experiment names that tree (a directory spec is a sysfs tree), so a
    // captured machine's results say which machine they are of.
    if e.topology == "host" {
        if let Some(root) = common.topology.options().sysfs_root {
            if !root.is_dir() {
                bail!(
                    "--sysfs-root {}: not a directory (the root of a sysfs tree, containing devices/system/cpu)",
                    root.display()
                );
            }
            e.topology = root.to_string_lossy().into_owned();
        }
    } else if let Some(root) = &common.topology.sysfs_root {
        bail!(
            "--sysfs-root {} applies to -t host only (the topology is '{}')",
            root.display(),
            e.topology
        );
    }
    Ok((e, desc))
}

/// Whether `--trace` names ftrace text (`.txt`) rather than Perfetto; any other extension is
/// refused (checked before the work, and the case of the extension does not matter).
fn trace_format(path: &Path) -> Result<bool> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "txt" => Ok(true),
        "pftrace" | "perfetto" | "pb" => Ok(false),
        _ => bail!(
            "--trace {}: use a .pftrace (Perfetto) or .txt (ftrace text) file name",
            path.display()
        ),
    }
}

fn write_trace(path: &Path, trace: &schedlab_trace::Trace) -> Result<()> {
    let text = trace_format(path)?;
    if text {
        schedlab_trace::ftrace::write_ftrace_file(trace, path)?
    } else {
        schedlab_trace::perfetto::write_perfetto_file_with_counters(trace, path)?
    }
    eprintln!(
        "trace: {} ({} events){}",
        path.display(),
        trace.events.len(),
        if text {
            ""
        } else {
            "; open it in ui.perfetto.dev"
        }
    );
    Ok(())
}

/// Runs `schedlab run`.
pub fn run(args: RunArgs) -> Result<()> {
    // `-t host` (this machine, not a sysfs tree of another) simulates the running kernel:
    // its era, HZ and preemption model, read from the host and said on stderr.
    let this_machine = args.common.topology.topology == "host"
        && args.common.topology.options().sysfs_root.is_none();
    let variant = match &args.variant {
        Some(v) => v.clone(),
        None if this_machine => crate::host_check::variant_or_host(None),
        None => DEFAULT_VARIANT.to_string(),
    };
    let (mut e, _) = experiment_from(&args.common, vec![variant], &[], None)?;
    if let Some(p) = &args.schedstat {
        crate::checks::writable(p, "--schedstat")?;
    }
    let mut outputs = Vec::new();
    if let Some(p) = &args.schedstat {
        outputs.push(("--schedstat", p.as_path()));
    }
    if let Some(p) = &args.common.trace {
        outputs.push(("--trace", p.as_path()));
    }
    crate::checks::distinct_outputs(&outputs)?;
    e.reps = args.common.reps.unwrap_or(1);
    let plan = Plan::new(e);
    let (machine, _) = schedlab_experiment::prepare(&plan)?;
    let mut records = Vec::new();
    let (bar, _ticker) = run_progress(&plan);
    for rep in 0..plan.experiment.reps {
        let key = RunKey {
            index: rep,
            point: 0,
            variant: 0,
            rep,
        };
        let want_trace = rep == 0 && args.common.trace.is_some();
        bar.set_message(format!(
            "repetition {} of {}",
            rep + 1,
            plan.experiment.reps
        ));
        let out = run_one(&plan, &machine, key, want_trace)?;
        bar.inc(1);
        bar.suspend(|| -> Result<()> {
            print_run(&plan, &out, rep, args.json)?;
            Ok(())
        })?;
        if let (Some(p), Some(t)) = (&args.common.trace, &out.trace) {
            write_trace(p, t)?;
        }
        if let Some(p) = args.schedstat.as_ref().filter(|_| rep == 0) {
            crate::checks::write_atomic(p, &out.schedstat, "--schedstat")?;
            eprintln!("schedstat: {} (version 15)", p.display());
        }
        records.push(out.record);
    }
    bar.finish_and_clear();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&records)?);
    }
    Ok(())
}

/// Prints one run's native output and counters (nothing with `--json`: the records are
/// printed together at the end).
fn print_run(
    plan: &Plan,
    out: &schedlab_experiment::runner::SingleRun,
    rep: usize,
    json: bool,
) -> Result<()> {
    if json {
        return Ok(());
    }
    if plan.experiment.reps > 1 {
        println!("--- repetition {rep} (seed {})", out.record.seed);
    }
    println!(
        "# {} on {} under {}",
        out.record.workload, plan.experiment.topology, out.record.variant
    );
    print!("{}", out.record.result.native);
    if !out.record.result.native.ends_with('\n') {
        println!();
    }
    println!("# counters");
    print!("{}", out.counters_text);
    print!("{}", out.wake_graph_text);
    Ok(())
}

/// Progress of `run`: on a terminal a spinner with the repetition, the wall time and the
/// simulated time the run has reached (`runner::SIM_TIME_NS`); off one, a line on stderr
/// every few seconds.
fn run_progress(
    plan: &Plan,
) -> (
    indicatif::ProgressBar,
    Option<schedlab_experiment::progress::Ticker>,
) {
    let reps = plan.experiment.reps as u64;
    if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(reps);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {msg}: {pos}/{len} done, {prefix}, {elapsed} elapsed",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        b.enable_steady_tick(std::time::Duration::from_millis(200));
        // The simulated time the run has reached, read from what the engine publishes.
        let shown = b.clone();
        std::thread::spawn(move || {
            while !shown.is_finished() {
                let ns = schedlab_experiment::runner::SIM_TIME_NS
                    .load(std::sync::atomic::Ordering::Relaxed);
                shown.set_prefix(format!("simulated {:.1} ms", ns as f64 / 1e6));
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        });
        (b, None)
    } else {
        let b = schedlab_experiment::progress::hidden_bar(reps);
        let t = schedlab_experiment::progress::Ticker::start("run", "repetitions", b.clone());
        (b, Some(t))
    }
}

/// Runs `schedlab compare`.
pub fn compare(args: CompareArgs) -> Result<()> {
    let variants = if args.variants.is_empty() && args.file.is_none() {
        vec![
            DEFAULT_VARIANT.to_string(),
            format!("{DEFAULT_VARIANT},NO_WAKE_AFFINE"),
        ]
    } else {
        args.variants.clone()
    };
    let mut sweep = args.sweep.clone();
    if args.file.is_none() && args.common.workload.is_none() && sweep.is_empty() {
        sweep.push(DEFAULT_SWEEP.to_string());
    }
    let (mut e, desc) = experiment_from(&args.common, variants, &sweep, args.file.as_deref())?;
    if let Some(p) = args.until_ci {
        e.until_ci = Some(p);
    }
    if let Some(m) = args.max_reps {
        if e.until_ci.is_none() {
            bail!("--max-reps only applies with --until-ci P (the cap of the repetitions it adds)");
        }
        crate::checks::reps("--max-reps", m)?;
        e.max_reps = m;
    }
    let shard = match &args.shard {
        Some(s) => Some(parse_shard(s)?),
        None => shard_from_env()?,
    };
    let out_file = args.out_runs.clone();
    args.out.check_writable()?;
    if let Some(p) = &out_file {
        crate::checks::results_file(p, "--out")?;
    }
    let mut outputs = args.out.files();
    if let Some(p) = &out_file {
        outputs.insert(0, ("--out", p.as_path()));
    }
    if let Some(p) = &args.common.trace {
        outputs.push(("--trace", p.as_path()));
    }
    crate::checks::distinct_outputs(&outputs)?;
    if args.resume && out_file.is_none() {
        bail!("--resume needs --out FILE (the file to resume)");
    }
    if shard.is_some() && out_file.is_none() {
        bail!(
            "--shard needs --out FILE (each shard's runs are merged later with `schedlab merge`)"
        );
    }
    // The bounds (points, repetitions) are checked before the sweep is expanded.
    e.validate()?;
    if let [only] = e.variants.as_slice() {
        eprintln!(
            "note: one variant ({only}): the table shows its values with no baseline to compare against; give a second -v to compare (e.g. -v {only} -v {only},NO_WAKE_AFFINE)"
        );
    }
    let plan = Plan::new(e);
    let jobs = args.jobs.unwrap_or(0) as usize;
    if args.sensitivity && !args.explain {
        bail!(
            "--sensitivity tests an explanation's verdicts: use it with `schedlab explain` or `compare --explain`"
        );
    }
    if args.explain {
        schedlab_experiment::explain::check_plan(&plan)?;
        if shard.is_some() {
            bail!(
                "--explain cannot be combined with --shard: it needs every run of the comparison (merge the shards, then explain)"
            );
        }
    }
    // --sensitivity reruns the whole comparison once per cost class and factor.
    let reruns = if args.sensitivity {
        1 + 2 * schedlab_experiment::explain::sensitivity::SCALED.len()
    } else {
        1
    };
    crate::checks::check_plan(&plan, jobs, args.force, reruns)?;
    let tty = std::io::stderr().is_terminal();
    // --until-ci adds repetitions up to --max-reps: count against that cap, the most it runs.
    let (reps, what) = match plan.experiment.until_ci {
        Some(_) => (
            plan.experiment.max_reps.max(plan.experiment.reps),
            "runs (the --max-reps cap)",
        ),
        None => (plan.experiment.reps, "runs"),
    };
    let planned = plan.keys(0..reps).len() as u64;
    let hidden = (!tty).then(|| schedlab_experiment::progress::hidden_bar(planned));
    let ticker = hidden
        .clone()
        .map(|b| schedlab_experiment::progress::Ticker::start("compare", what, b));
    let opts = ExecOptions {
        jobs,
        out: out_file.clone(),
        resume: args.resume,
        shard,
        progress: tty,
        bar: hidden,
    };
    let out = schedlab_experiment::compare(&plan, &opts)?;
    // The comparison's count ends here: --sensitivity's reruns count on their own.
    drop(ticker);
    if let Some(tr) = &args.common.trace {
        let machine = Machine::load(&plan)?;
        let key = plan.keys(0..1)[0];
        let single = run_one(&plan, &machine, key, true)?;
        if let Some(t) = &single.trace {
            write_trace(tr, t)?;
        }
    }
    if out.sharded {
        let (k, n) = shard.unwrap_or((0, 1));
        eprintln!(
            "shard {}/{}: {} runs in {}; merge all shards with `schedlab merge FILES...`",
            k + 1,
            n,
            out.records.len(),
            out_file
                .as_ref()
                .map_or("-".into(), |p| p.display().to_string())
        );
        return Ok(());
    }
    if args.explain {
        crate::explain_cmd::emit_explain(&plan, &opts, &out, &args.out, desc, args.sensitivity)?;
    } else {
        emit(&out.report, &args.out, desc, None, true)?;
    }
    if out.interrupted {
        eprintln!(
            "interrupted: {} runs finished and kept{}",
            out.records.len(),
            if out_file.is_some() {
                "; continue with --resume"
            } else {
                ""
            }
        );
        std::process::exit(crate::signals::exit_code());
    }
    Ok(())
}

/// Runs `schedlab merge`.
pub fn merge(args: MergeArgs) -> Result<()> {
    args.out.check_writable()?;
    // A file that cannot be opened is that, not a file without a header line.
    for f in &args.files {
        std::fs::File::open(f).with_context(|| format!("{}: cannot open", f.display()))?;
        // An output over an input would destroy the runs it was made from.
        let mut both = args.out.files();
        both.push(("the input", f.as_path()));
        crate::checks::distinct_outputs(&both)?;
    }
    let (_, report) = schedlab_experiment::merge(&args.files)?;
    emit(&report, &args.out, None, None, true)
}
