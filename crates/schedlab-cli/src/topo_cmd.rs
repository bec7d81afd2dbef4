//! `schedlab topo list` and `schedlab topo show SPEC`, plus [`TopologyArgs`], the
//! `-t/--topology SPEC` option group every subcommand that needs a machine flattens in.
//!
//! ```text
//!   SPEC ──parse_topology──▶ Topology ──SchedDomains::build(era)──▶ per-CPU domain chains
//!                               │                                        │
//!                               └──────── text summary / --json ─────────┘
//! ```

use schedlab_topo::CpuId;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Subcommand;
use schedlab_topo::domains::flags;
use schedlab_topo::spec::{TopologyOptions, parse_topology};
use schedlab_topo::{CpuSet, DomainEra, SchedDomains, Topology, presets};

/// Environment variable read when `--sysfs-root` is not given.
pub const SYSFS_ROOT_ENV: &str = "SCHEDLAB_SYSFS_ROOT";

/// The machine used when `-t` is not given.
pub const DEFAULT_TOPOLOGY: &str = "desktop-4c8t";

/// The SPEC explanation shown in help texts (a macro so it can be `concat!`ed).
macro_rules! spec_help {
    () => {
        "\
SPEC names a machine, tried in this order:
  host              this machine, from /sys (or --sysfs-root DIR / $SCHEDLAB_SYSFS_ROOT)
  PRESET            a built-in machine; `schedlab topo list` shows them
  NnLlCcTt          N nodes, L LLCs in total (split evenly over the nodes), C cores per
                    LLC, T threads per core, e.g. 2n4l4c2t; siblings are numbered far
                    apart, Intel-style: thread t of core c is CPU c + t x cores
  FILE              numactl --hardware, lscpu -p or lscpu -e output (detected from the
                    content), or JSON from `schedlab topo show --json`. numactl shows no
                    cores or caches: --smt N (default 1) pairs a node's sorted CPUs as
                    (chunk0[j], chunk1[j], ...) of N equal chunks, --llc-per-node N
                    (default 1) splits each node's cores into N equal LLCs
  DIR               a captured sysfs tree (the directory containing devices/system/cpu)"
    };
}

/// What a SPEC may be, for the `after_help` of any subcommand that flattens
/// [`TopologyArgs`].
pub const SPEC_HELP: &str = spec_help!();

/// Where a subcommand's machine comes from: `-t/--topology SPEC` and the options that
/// complete a SPEC. Flatten it into any subcommand with `#[command(flatten)]`.
#[derive(clap::Args, Debug, Clone)]
pub struct TopologyArgs {
    /// The machine: a preset, NnLlCcTt, a numactl/lscpu file, or `host` (see below).
    #[arg(
        short = 't',
        long = "topology",
        value_name = "SPEC",
        default_value = DEFAULT_TOPOLOGY
    )]
    pub topology: String,
    /// Threads per core for numactl --hardware files [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::checks::whole::<usize>)]
    pub smt: Option<usize>,
    /// LLCs per node for numactl --hardware files [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::checks::whole::<usize>)]
    pub llc_per_node: Option<usize>,
    /// Root of the sysfs tree read for `host` (the directory containing
    /// devices/system/cpu) [env: SCHEDLAB_SYSFS_ROOT] [default: /sys].
    #[arg(long, value_name = "DIR")]
    pub sysfs_root: Option<PathBuf>,
}

impl TopologyArgs {
    /// The options part, with `$SCHEDLAB_SYSFS_ROOT` filled in when `--sysfs-root` is
    /// absent.
    pub fn options(&self) -> TopologyOptions {
        let sysfs_root = self.sysfs_root.clone().or_else(|| {
            std::env::var_os(SYSFS_ROOT_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        });
        TopologyOptions {
            smt: self.smt,
            llc_per_node: self.llc_per_node,
            sysfs_root,
        }
    }

    /// Builds the machine named by `--topology`.
    pub fn load(&self) -> anyhow::Result<Topology> {
        load_spec(&self.topology, &self.options())
    }
}

fn load_spec(spec: &str, opts: &TopologyOptions) -> anyhow::Result<Topology> {
    Ok(parse_topology(spec, opts)?)
}

fn parse_era(s: &str) -> Result<DomainEra, String> {
    DomainEra::parse(s).ok_or_else(|| format!("unknown era '{s}': expected 2.6, 3 or 5.10"))
}

/// Topology subcommands.
#[derive(Subcommand, Debug)]
pub enum TopoCmd {
    /// List the built-in presets with a one-line description and their source.
    #[command(after_help = SPEC_HELP)]
    List,
    /// Show a machine like lscpu + numactl --hardware, and its sched-domain tree.
    #[command(after_help = concat!(
        "Examples:\n",
        "  schedlab topo show westmere-2s20c\n",
        "  schedlab topo show 2n4l4c2t --cpu 5 --era 2.6\n",
        "  schedlab topo show numactl.txt --smt 2 --json\n",
        "  schedlab topo show host --sysfs-root captured-sys/\n\n",
        spec_help!()
    ))]
    Show {
        /// The machine (same as -t/--topology, which it overrides).
        #[arg(value_name = "SPEC", conflicts_with = "topology")]
        spec: Option<String>,
        /// Where the machine comes from.
        #[command(flatten)]
        topo: TopologyArgs,
        /// Print one JSON object (machine, per-CPU placement and every CPU's domains).
        #[arg(long)]
        json: bool,
        /// Kernel era of the domain parameters: 2.6, 3 or 5.10.
        #[arg(long, value_name = "ERA", default_value = "5.10", value_parser = parse_era)]
        era: DomainEra,
        /// CPU whose domain tree is printed (--json always has every CPU's).
        #[arg(long, value_name = "N", default_value_t = 0, allow_negative_numbers = true, value_parser = crate::checks::whole::<usize>)]
        cpu: usize,
    },
}

/// Runs a topology subcommand.
pub fn run(cmd: TopoCmd) -> anyhow::Result<()> {
    match cmd {
        TopoCmd::List => {
            print!("{}", render_list());
            Ok(())
        }
        TopoCmd::Show {
            spec,
            topo,
            json,
            era,
            cpu,
        } => {
            let t = match &spec {
                Some(s) => load_spec(s, &topo.options())?,
                None => topo.load()?,
            };
            if cpu >= t.nr_cpus() {
                anyhow::bail!(
                    "--cpu {cpu} is not a CPU of {} (it has CPUs 0-{})",
                    t.name,
                    t.nr_cpus() - 1
                );
            }
            let sd = SchedDomains::build(&t, era);
            if json {
                let text = serde_json::to_string_pretty(&render_json(&t, &sd))
                    .context("serializing the topology")?;
                println!("{text}");
            } else {
                print!("{}", render_text(&t, &sd, CpuId::new(cpu)));
            }
            Ok(())
        }
    }
}

fn render_list() -> String {
    let mut out = String::new();
    let width = presets().iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in presets() {
        let cpus = schedlab_topo::preset(p.name).map_or(0, |t| t.nr_cpus());
        let _ = writeln!(
            out,
            "{:width$}  {:>3} CPUs  {}",
            p.name, cpus, p.description
        );
        let _ = writeln!(out, "{:width$}            source: {}", "", p.source);
    }
    let _ = writeln!(
        out,
        "\nAlso accepted as SPEC: NnLlCcTt (e.g. 2n4l4c2t), a numactl --hardware / lscpu -p / \
         lscpu -e file, a sysfs directory, or `host`. See `schedlab topo show --help`."
    );
    out
}

/// The `--json` object: the topology's JSON form plus `era` and `domains`.
fn render_json(t: &Topology, sd: &SchedDomains) -> serde_json::Value {
    let mut v = t.to_json_value();
    if let Some(obj) = v.as_object_mut() {
        obj.insert("era".into(), sd.era.label().into());
        obj.insert("domains".into(), sd.to_json_value());
    }
    v
}

fn spaced(s: &CpuSet) -> String {
    s.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn render_text(t: &Topology, sd: &SchedDomains, cpu: CpuId) -> String {
    let mut o = String::new();
    let row = |o: &mut String, k: &str, v: String| {
        let _ = writeln!(o, "{k:<20}{v}");
    };
    row(&mut o, "Machine:", t.name.clone());
    row(&mut o, "Source:", t.source.clone());
    row(
        &mut o,
        "Compact form:",
        t.compact_string().unwrap_or_else(|| "-".into()),
    );
    row(&mut o, "CPU(s):", t.nr_cpus().to_string());
    row(
        &mut o,
        "Thread(s) per core:",
        t.threads_per_core().to_string(),
    );
    row(&mut o, "Core(s):", t.nr_cores().to_string());
    row(
        &mut o,
        "Cluster(s):",
        if t.has_clusters() {
            t.nr_clusters().to_string()
        } else {
            "none".into()
        },
    );
    row(&mut o, "LLC(s):", t.nr_llcs().to_string());
    row(&mut o, "Package(s):", t.nr_packages().to_string());
    row(&mut o, "NUMA node(s):", t.nr_nodes().to_string());
    let caps: Vec<u32> = t.cpus().iter().map(|c| c.capacity).collect();
    let (lo, hi) = (caps.iter().min().copied(), caps.iter().max().copied());
    row(
        &mut o,
        "Capacity:",
        match (lo, hi) {
            (Some(l), Some(h)) if l == h => format!("{l} on every CPU"),
            (Some(l), Some(h)) => format!("{l}-{h} (see the CPU table)"),
            _ => "-".into(),
        },
    );

    let _ = writeln!(o);
    for (i, s) in t.llcs().iter().enumerate() {
        let _ = writeln!(o, "LLC {i}: CPUs {s} ({} CPUs)", s.count());
    }
    if t.has_clusters() {
        for (i, s) in t.clusters().iter().enumerate() {
            let _ = writeln!(o, "Cluster {i}: CPUs {s}");
        }
    }
    for (i, s) in t.packages().iter().enumerate() {
        let _ = writeln!(o, "Package {i}: CPUs {s} ({} CPUs)", s.count());
    }

    // numactl --hardware style.
    let _ = writeln!(o);
    let n = t.nr_nodes();
    let ids = if n == 1 {
        "0".to_string()
    } else {
        format!("0-{}", n - 1)
    };
    let _ = writeln!(o, "available: {n} nodes ({ids})");
    for (i, s) in t.nodes().iter().enumerate() {
        let _ = writeln!(o, "node {i} cpus: {}", spaced(s));
    }
    let _ = writeln!(o, "node distances:");
    let _ = write!(o, "node ");
    for j in 0..n {
        let _ = write!(o, "{j:>4}");
    }
    let _ = writeln!(o);
    for (i, r) in t.distances().iter().enumerate() {
        let _ = write!(o, "{i:>3}: ");
        for d in r {
            let _ = write!(o, "{d:>4}");
        }
        let _ = writeln!(o);
    }

    // lscpu -e style.
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "CPU  CORE  CLUSTER  LLC  PACKAGE  NODE  CAPACITY  SIBLINGS"
    );
    for c in t.cpus() {
        let cl = if t.has_clusters() {
            c.cluster.to_string()
        } else {
            "-".into()
        };
        let _ = writeln!(
            o,
            "{:>3}  {:>4}  {:>7}  {:>3}  {:>7}  {:>4}  {:>8}  {}",
            c.id,
            c.core,
            cl,
            c.llc,
            c.package,
            c.node,
            c.capacity,
            t.smt_siblings(c.id)
        );
    }

    let _ = writeln!(o);
    let _ = writeln!(o, "Sched domains of CPU {cpu} (era {}):", sd.era.label());
    let chain = sd.of(cpu);
    if chain.is_empty() {
        let _ = writeln!(o, "  none (a single CPU has nothing to balance)");
    }
    for d in chain {
        let groups: Vec<String> = d.groups.iter().map(|g| format!("{{{g}}}")).collect();
        let _ = writeln!(
            o,
            "  {} {:<6} span {} ({} CPUs), {} groups: {}",
            d.index,
            d.level.name(),
            d.span,
            d.span_weight,
            d.groups.len(),
            groups.join(" ")
        );
        let _ = writeln!(o, "    flags {}", flags::describe(d.flags));
        let numa = d
            .numa_distance
            .map(|x| format!(", distance {x}"))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "    imbalance_pct {}, busy_factor {}, interval {}-{} ms, cache_nice_tries {}{numa}",
            d.imbalance_pct,
            d.busy_factor,
            d.min_interval_ms,
            d.max_interval_ms,
            d.cache_nice_tries
        );
    }
    let llc = sd.sd_llc(cpu).map_or("none".to_string(), |d| {
        format!(
            "{} (size {}, id {})",
            d.level.name(),
            d.span_weight,
            t.llc_id(cpu)
        )
    });
    let numa = sd
        .sd_numa(cpu)
        .map_or("none".to_string(), |d| d.level.name());
    let _ = writeln!(
        o,
        "  sd_llc: {llc}; sd_numa: {numa}; SMT siblings: {}",
        t.smt_siblings(cpu)
    );
    o
}
