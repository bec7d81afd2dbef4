//! `schedlab replay derive|check`: a workload file from a real trace, and that workload
//! replayed in simulation beside the traced run. The derivation is
//! `schedlab_workloads::replay`, the comparison `schedlab_fidelity::replay_check`; this module
//! reads the files and prints.

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use schedlab_engine::MachineProfile;
use schedlab_fidelity::{host_check, replay_check};
use schedlab_trace::Trace;
use schedlab_workloads::replay::{self, Background, DeriveOptions, Derived, Model};
use std::path::{Path, PathBuf};

/// `schedlab replay`.
#[derive(Subcommand, Debug)]
pub enum ReplayCmd {
    /// Derive a workload file from a trace: one task per traced thread, its run bursts and
    /// blocking points, one channel per waker → wakee edge, forks (see docs/replay.md).
    #[command(after_help = "Examples:\n  \
schedlab host capture -o run -- hackbench -g 2 -l 200\n  \
schedlab replay derive run.txt -o hackbench.toml --only hackbench\n  \
perf sched record -- perf bench sched pipe -l 2000 && perf script > pipe.txt\n  \
schedlab replay derive pipe.txt -o pipe.toml --only sched-pipe --model fitted\n  \
schedlab compare -w file:hackbench.toml -t xeon-2s12c -v linux-6.6 -v linux-6.6,NO_WAKE_AFFINE")]
    Derive(DeriveArgs),
    /// Derive, replay on this machine's topology (or -t) under the era closest to the running
    /// kernel, and print real vs replayed with the error of each.
    #[command(after_help = "Examples:\n  \
schedlab replay check run.txt --only hackbench --profile profile.toml\n  \
schedlab replay check run.txt -t 1n1l2c1t -v linux-6.12")]
    Check(CheckArgs),
}

/// What the derivation is asked (shared by derive and check).
#[derive(Args, Debug, Clone)]
pub struct DeriveFlags {
    /// The trace: ftrace text (`schedlab host capture`'s .txt, tracefs `trace`, `trace-cmd
    /// report`, `perf script`), or a Perfetto file (.pftrace): schedlab's, or one `traced`
    /// recorded with the sched ftrace events (compact sched encoding included).
    pub trace: PathBuf,
    /// Burst and sleep lengths inside loops: as recorded (a choice over them) or a fitted
    /// lognormal.
    #[arg(long, value_enum, default_value_t = ModelArg::Empirical)]
    pub model: ModelArg,
    /// Keep only these threads (a pid, a process id or a comm; repeatable) and what they
    /// fork.
    #[arg(long, value_name = "COMM|PID")]
    pub only: Vec<String>,
    /// The other threads: keep them as tasks, drop them (their wakeups become timed sleeps),
    /// or fold them into one background task per CPU.
    #[arg(long, value_enum, default_value_t = BackgroundArg::Drop)]
    pub background: BackgroundArg,
    /// Kernel work of one send or receive, taken off the traced burst before it because the
    /// simulator charges its own: `auto` (the profile's syscall_ns + pipe_op_ns), or a
    /// duration (`0ns` keeps the bursts as traced).
    #[arg(long, default_value = "auto", value_name = "auto|DURATION", allow_hyphen_values = true,
          value_parser = crate::checks::op_cost)]
    pub op_cost: String,
    /// Infer hand-offs: a task preempted by the task it woke, given the CPU back when that
    /// one blocks, is taken to wait for it (on edges that also carry traced wakeups the other
    /// way): keeps a one-CPU ping-pong a ping-pong on a bigger machine (see docs/replay.md).
    #[arg(long)]
    pub handoffs: bool,
    /// Machine profile (from `schedlab host calibrate`; default: built-in): what `check`
    /// simulates with and what `--op-cost auto` reads.
    #[arg(long)]
    pub profile: Option<PathBuf>,
}

/// `--model`.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum ModelArg {
    /// The recorded lengths.
    Empirical,
    /// A lognormal per op.
    Fitted,
}

/// `--background`.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum BackgroundArg {
    /// Every thread is a task.
    Keep,
    /// Only --only's threads.
    Drop,
    /// --only's threads and one background task per CPU.
    Fold,
}

/// `schedlab replay derive`.
#[derive(Args, Debug)]
pub struct DeriveArgs {
    #[command(flatten)]
    pub d: DeriveFlags,
    /// Write the workload here (default: standard output).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
}

/// `schedlab replay check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub d: DeriveFlags,
    /// Machine to replay on (default: this one).
    #[arg(short = 't', long, default_value = "host")]
    pub topology: String,
    /// Policy variant (default: the preset closest to the running kernel).
    #[arg(short = 'v', long)]
    pub variant: Option<String>,
    /// Also keep the derived workload here.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Seed of the simulation.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::checks::whole::<u64>)]
    pub seed: u64,
}

/// Runs `schedlab replay ...`.
pub fn run(cmd: ReplayCmd) -> Result<()> {
    match cmd {
        ReplayCmd::Derive(a) => derive_cmd(a),
        ReplayCmd::Check(a) => check_cmd(a),
    }
}

/// A text trace, gunzipped on the fly when it holds gzip data (by its magic bytes, whatever
/// the file is called: `trace.txt` that is really `trace.txt.gz` reads the same).
fn open_text(path: &Path) -> Result<Box<dyn std::io::BufRead>> {
    use std::io::BufRead;
    let file =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let mut buf = std::io::BufReader::with_capacity(1 << 20, file);
    let head = buf
        .fill_buf()
        .with_context(|| format!("{}: cannot read", path.display()))?;
    Ok(if schedlab_vocab::text::is_gzip(head) {
        Box::new(std::io::BufReader::with_capacity(
            1 << 20,
            flate2::read::MultiGzDecoder::new(buf),
        ))
    } else {
        Box::new(buf)
    })
}

fn is_perfetto(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("pftrace" | "perfetto-trace" | "pb")
    )
}

fn profile(f: &DeriveFlags) -> Result<MachineProfile> {
    Ok(match &f.profile {
        Some(p) => MachineProfile::load(p)?,
        None => MachineProfile::default(),
    })
}

fn derive(f: &DeriveFlags, profile: &MachineProfile) -> Result<Derived> {
    // `auto` takes off everything the simulator charges that a traced burst already holds;
    // a duration takes off only that much before each send and receive.
    let (op_cost_ns, wake_cost_ns, switch_cost_ns) = if f.op_cost == "auto" {
        let w = &profile.wakeup;
        (
            profile.cpu.syscall_ns + profile.transfer.pipe_op_ns,
            (w.local_wake_ns, w.remote_wake_ns),
            profile.cpu.ctx_switch_ns,
        )
    } else {
        let d = schedlab_vocab::units::parse_duration(&f.op_cost)
            .map_err(|e| anyhow::anyhow!("--op-cost {}: {e} (or `auto`)", f.op_cost))?;
        (d, (0, 0), 0)
    };
    let opts = DeriveOptions {
        op_cost_ns,
        wake_cost_ns,
        switch_cost_ns,
        handoffs: f.handoffs,
        model: match f.model {
            ModelArg::Empirical => Model::Empirical,
            ModelArg::Fitted => Model::Fitted,
        },
        only: f.only.clone(),
        // Without --only every thread is selected, so the mode does not matter.
        background: match f.background {
            BackgroundArg::Keep => Background::Keep,
            BackgroundArg::Drop => Background::Drop,
            BackgroundArg::Fold => Background::Fold,
        },
        name: f
            .trace
            .file_stem()
            .map_or("replay".into(), |s| s.to_string_lossy().into_owned()),
        source: f.trace.display().to_string(),
    };
    let path = &f.trace;
    let mut d = if is_perfetto(path) {
        let (trace, stats) = schedlab_trace::perfetto::read_perfetto_file_with_stats(path)?;
        replay::derive_trace(&trace, &stats, &opts)
    } else {
        replay::derive_reader(open_text(path)?, &opts)
    }
    .with_context(|| format!("{}", path.display()))?;
    // Text read in file order: events out of time order (a shuffled or merged file) are
    // sorted by timestamp (file order kept among equal ones) and derived again.
    if d.warnings.out_of_order > 0 && !is_perfetto(path) {
        let unsorted = d.warnings.out_of_order;
        let w = d.warnings.clone();
        let stats = schedlab_trace::perfetto::DecodeStats {
            lost_events: w.lost_events,
            truncated: w.truncated,
            ..Default::default()
        };
        d = replay::derive_trace(&load_trace(path)?, &stats, &opts)
            .with_context(|| format!("{}", path.display()))?;
        d.warnings.buffer_started = w.buffer_started;
        eprintln!(
            "note: {unsorted} events were out of time order: sorted by timestamp before deriving"
        );
    }
    for w in d.warnings.lines() {
        eprintln!("warning: {w}");
    }
    Ok(d)
}

/// The machine and variant a derived workload is tried on before it is written.
const TRY_TOPOLOGY: &str = "desktop-4c8t";
const TRY_VARIANT: &str = "linux-6.6";

/// Refuses a derived workload that cannot run: written to a temporary file, built and
/// simulated for ten times the traced span (at least 1 s, at most 60 s of simulated time).
/// A trace whose events contradict each other beyond what the derivation mends (lines
/// moved, every pid the same) gives a file that the simulator refuses or that deadlocks,
/// though a replay of a whole trace cannot deadlock (docs/replay.md).
fn check_derived_runs(d: &Derived, profile: &MachineProfile, trace: &Path) -> Result<()> {
    let tmp = tempfile::Builder::new()
        .prefix("schedlab-derive-")
        .tempdir()
        .context("cannot create a temporary directory")?;
    let path = tmp.path().join("replay.toml");
    std::fs::write(&path, &d.toml).with_context(|| format!("{}: cannot write", path.display()))?;
    let spec = format!("file:{}", path.display());
    let limit = d
        .span_ns
        .saturating_mul(10)
        .clamp(1_000_000_000, 60_000_000_000);
    host_check::sim_runs(TRY_TOPOLOGY, &spec, TRY_VARIANT, profile, limit).map_err(|e| {
        anyhow::anyhow!(
            "{}: the workload derived from it cannot run, so it is not written: {e:#}; the trace's events contradict each other (events lost, doubled or moved, or pids rewritten?): capture it again",
            trace.display()
        )
    })
}

fn derive_cmd(a: DeriveArgs) -> Result<()> {
    let profile = profile(&a.d)?;
    let d = derive(&a.d, &profile)?;
    check_derived_runs(&d, &profile, &a.d.trace)?;
    match &a.output {
        Some(p) => {
            std::fs::write(p, &d.toml).with_context(|| format!("{}: cannot write", p.display()))?;
            eprintln!(
                "{}: {} tasks, {} edges ({} wakeups) from {} events over {:.3} s",
                p.display(),
                d.tasks.len(),
                d.edges,
                d.edge_wakeups,
                d.events,
                d.span_ns as f64 / 1e9
            );
        }
        None => print!("{}", d.toml),
    }
    Ok(())
}

fn load_trace(path: &Path) -> Result<Trace> {
    if is_perfetto(path) {
        return Ok(schedlab_trace::perfetto::read_perfetto_file(path)?);
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut open_text(path)?, &mut text)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let mut t = schedlab_trace::parse_ftrace_text(&text)
        .map_err(|e| e.in_file(path))
        .or_else(|e| {
            // A cut-off last line (warned about by the derivation) is left out here too.
            let end = text.trim_end_matches('\n').rfind('\n').unwrap_or(0);
            schedlab_trace::parse_ftrace_text(&text[..end]).map_err(|_| e)
        })?;
    t.sort();
    Ok(t)
}

fn check_cmd(a: CheckArgs) -> Result<()> {
    if a.d.profile.is_none() {
        eprintln!(
            "note: no --profile: the simulator uses the built-in default costs (run `schedlab host calibrate -o profile.toml`)"
        );
    }
    let profile = profile(&a.d)?;
    let d = derive(&a.d, &profile)?;
    let kernel = host_check::running_kernel();
    let variant = crate::host_check::variant_or_host(a.variant.as_deref());
    let tmp = tempfile::Builder::new()
        .prefix("schedlab-replay-")
        .tempdir()
        .context("cannot create a temporary directory")?;
    let path = match &a.output {
        Some(p) => p.clone(),
        None => tmp.path().join("replay.toml"),
    };
    std::fs::write(&path, &d.toml).with_context(|| format!("{}: cannot write", path.display()))?;
    let spec = format!("file:{}", path.display());
    let (_, sim_trace) = host_check::sim_trace_on(&a.topology, &spec, &variant, &profile, a.seed)?;
    let real_full = load_trace(&a.d.trace)?;
    let keep_all = matches!(a.d.background, BackgroundArg::Keep) || a.d.only.is_empty();
    let real = if keep_all {
        real_full
    } else {
        replay::restrict_trace(&real_full, &d.selected)
    };
    println!(
        "# replay check {}: {} events, {} tasks, {} edges ({} wakeups); simulator: -t {}, {variant}, profile '{}' (kernel {kernel})",
        a.d.trace.display(),
        d.events,
        d.tasks.len(),
        d.edges,
        d.edge_wakeups,
        a.topology,
        profile.name
    );
    print!(
        "{}",
        replay_check::compare(&d.tasks, &real, &sim_trace).render()
    );
    Ok(())
}
