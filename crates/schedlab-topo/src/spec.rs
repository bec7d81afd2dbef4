//! One way to name a machine everywhere: the `--topology SPEC` string.
//!
//! A SPEC is tried, in this order, as
//! 1. `host`: the running machine, read from sysfs (see [`crate::sysfs`]);
//! 2. a built-in preset name (see [`mod@crate::presets`]);
//! 3. a compact string `NnLlCcTt` in ktstr's notation: `N` NUMA nodes, `L` LLCs in
//!    total (split evenly over the nodes), `C` cores per LLC, `T` threads per core, e.g.
//!    `2n4l4c2t`. CPUs are numbered Intel-style with far siblings: thread `t` of core `c`
//!    is CPU `c + t × cores`, so the first thread of every core comes first (like
//!    `regular(.., siblings_far = true)`). One package per node, distances 10/20;
//! 4. a path to an existing file holding `numactl --hardware`, `lscpu -p` or `lscpu -e`
//!    output, or a topology JSON file written by `schedlab topo show --json` (the format
//!    is detected from the content), or to a directory holding a captured sysfs tree;
//! 5. otherwise an error that suggests the closest preset.
//!
//! Errors name the file, the line and what was expected ([`TopoSpecError`]).

use std::path::{Path, PathBuf};

use crate::cpulist::MAX_CPUS;
use crate::model::{Topology, TopologyError};
use schedlab_vocab::suggest::{closest, did_you_mean};

/// Knobs that complete a machine description that lacks some detail.
#[derive(Default, Clone, Debug)]
pub struct TopologyOptions {
    /// Threads per core for `numactl --hardware` input, which shows no cores (default 1).
    /// A node's sorted CPU list is split into `smt` equal consecutive chunks and core `j`
    /// is `(chunk0[j], chunk1[j], ...)`, the kernel's usual enumeration order.
    pub smt: Option<usize>,
    /// LLCs per node for `numactl --hardware` input, which shows no caches (default 1):
    /// a node's cores, in order, are split into this many equal consecutive groups.
    pub llc_per_node: Option<usize>,
    /// Root of the sysfs tree read for `host` (the directory that contains
    /// `devices/system/cpu`); `/sys` when unset.
    pub sysfs_root: Option<PathBuf>,
}

/// Why a topology SPEC could not be turned into a machine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TopoSpecError {
    /// The SPEC is no preset, compact string or existing path.
    #[error(
        "unknown topology '{spec}'{}; run `schedlab topo list` to see the presets, or give a \
         compact string like 2n4l4c2t (NnLlCcTt), a numactl/lscpu output file, or `host`",
        did_you_mean(.suggestion.as_deref())
    )]
    UnknownTopology {
        /// What the user typed.
        spec: String,
        /// The closest preset name, if one is close.
        suggestion: Option<String>,
    },
    /// A compact `NnLlCcTt` string that describes no possible machine.
    #[error(
        "impossible compact topology '{spec}': {reason} (expected NnLlCcTt: N nodes, L LLCs in \
         total split evenly over the nodes, C cores per LLC, T threads per core, all at least 1, \
         e.g. 2n4l4c2t)"
    )]
    Compact {
        /// The string.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A line of an input file does not say what was expected.
    #[error("{file}:{line}: expected {expected}, found {found}")]
    Parse {
        /// File path (or `<json>` for in-memory text).
        file: String,
        /// 1-based line number.
        line: usize,
        /// What the parser wanted there.
        expected: String,
        /// What it got.
        found: String,
    },
    /// A JSON topology did not deserialize.
    #[error("{file}:{line}:{column}: bad topology JSON: {message}")]
    Json {
        /// File path (or `<json>`).
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde's message.
        message: String,
    },
    /// A file or directory could not be read. (The OS error is part of the message and
    /// deliberately not a `source()`, so `{:#}` chains do not print it twice.)
    #[error("cannot read {path}: {error}")]
    Io {
        /// The path.
        path: String,
        /// The OS error.
        error: std::io::Error,
    },
    /// The description parsed but the machine is inconsistent.
    #[error("{file}: {error}")]
    Invalid {
        /// File or SPEC the description came from.
        file: String,
        /// The consistency rule broken.
        error: TopologyError,
    },
    /// An option was given that the SPEC's kind of input cannot use.
    #[error(
        "{option} only applies to numactl --hardware files, not to {kind} '{spec}' (which already says {what})"
    )]
    OptionNotApplicable {
        /// The option, e.g. `--smt`.
        option: &'static str,
        /// The SPEC.
        spec: String,
        /// What kind of SPEC it is.
        kind: &'static str,
        /// What the SPEC already fixes.
        what: &'static str,
    },
}

impl TopoSpecError {
    /// Shorthand for a [`TopoSpecError::Parse`].
    pub(crate) fn parse(
        file: &str,
        line: usize,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        TopoSpecError::Parse {
            file: file.to_string(),
            line,
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// Shorthand for a [`TopoSpecError::Invalid`].
    pub(crate) fn invalid(file: &str, source: TopologyError) -> Self {
        TopoSpecError::Invalid {
            file: file.to_string(),
            error: source,
        }
    }
}

/// Turns a SPEC into a machine (see the module docs for the order of interpretation).
pub fn parse_topology(spec: &str, opts: &TopologyOptions) -> Result<Topology, TopoSpecError> {
    let spec = spec.trim();
    if spec == "host" {
        reject_numactl_options(opts, spec, "the host machine", "cores and caches")?;
        let root = opts
            .sysfs_root
            .clone()
            .unwrap_or_else(|| PathBuf::from("/sys"));
        let mut t = crate::sysfs::from_sysfs(&root)?;
        t.name = "host".into();
        return Ok(t);
    }
    if let Some(t) = crate::presets::preset(spec) {
        reject_numactl_options(opts, spec, "preset", "cores and caches")?;
        return Ok(t);
    }
    if let Some(fields) = compact_fields(spec) {
        reject_numactl_options(opts, spec, "compact string", "cores and caches")?;
        return parse_compact_fields(spec, fields);
    }
    let path = Path::new(spec);
    if !spec.is_empty() && path.exists() {
        if path.is_dir() {
            reject_numactl_options(opts, spec, "sysfs tree", "cores and caches")?;
            return crate::sysfs::from_sysfs(path);
        }
        return parse_file(path, opts);
    }
    if spec.contains(std::path::MAIN_SEPARATOR) || spec.contains('/') || path.extension().is_some()
    {
        // It looks like a path: say that the file is missing rather than guess a preset.
        return Err(TopoSpecError::Io {
            path: spec.to_string(),
            error: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
        });
    }
    Err(TopoSpecError::UnknownTopology {
        spec: spec.to_string(),
        suggestion: suggest(spec),
    })
}

fn reject_numactl_options(
    opts: &TopologyOptions,
    spec: &str,
    kind: &'static str,
    what: &'static str,
) -> Result<(), TopoSpecError> {
    let option = if opts.smt.is_some() {
        "--smt"
    } else if opts.llc_per_node.is_some() {
        "--llc-per-node"
    } else {
        return Ok(());
    };
    Err(TopoSpecError::OptionNotApplicable {
        option,
        spec: spec.to_string(),
        kind,
        what,
    })
}

/// Reads a machine description file, detecting its format from the content.
pub fn parse_file(path: &Path, opts: &TopologyOptions) -> Result<Topology, TopoSpecError> {
    let file = path.display().to_string();
    let text = std::fs::read(path)
        .and_then(schedlab_vocab::text::decode_io)
        .map_err(|error| TopoSpecError::Io {
            path: file.clone(),
            error,
        })?;
    parse_text(&text, &file, opts)
}

/// Parses the text of a machine description (`file` is used for names and errors).
pub fn parse_text(
    text: &str,
    file: &str,
    opts: &TopologyOptions,
) -> Result<Topology, TopoSpecError> {
    let first = text.lines().enumerate().find(|(_, l)| !l.trim().is_empty());
    let Some((idx, first)) = first else {
        return Err(TopoSpecError::parse(
            file,
            1,
            "numactl --hardware, lscpu -p, lscpu -e or topology JSON text",
            "an empty file",
        ));
    };
    let first = first.trim();
    let kind = if first.starts_with("available:") {
        "numactl"
    } else if first.starts_with('{') {
        "json"
    } else if first.starts_with('#') || first.contains(',') {
        "lscpu -p"
    } else if first
        .split_whitespace()
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case("CPU"))
    {
        "lscpu -e"
    } else {
        return Err(TopoSpecError::parse(
            file,
            idx + 1,
            "'available: N nodes (...)' (numactl --hardware), a '# CPU,Core,...' header \
             (lscpu -p), a 'CPU NODE SOCKET CORE ...' header (lscpu -e) or '{' (JSON)",
            format!("'{}'", clip(first)),
        ));
    };
    if kind == "numactl" {
        return crate::numactl::parse_numactl(text, file, opts);
    }
    reject_numactl_options(opts, file, "file", "its CPUs' cores and caches")?;
    let name = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string());
    match kind {
        "json" => {
            let mut t = Topology::from_json_named(text, file)?;
            if t.source.is_empty() {
                t.source = format!("topology JSON {file}");
            }
            Ok(t)
        }
        "lscpu -p" => crate::lscpu::parse_lscpu_p(text, file, &name),
        _ => crate::lscpu::parse_lscpu_e(text, file, &name),
    }
}

/// Shortens a line for an error message.
pub(crate) fn clip(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}

/// Splits `NnLlCcTt` into its four numbers, or `None` if `s` does not have that shape
/// (then it is not a compact string at all and other interpretations are tried).
fn compact_fields(s: &str) -> Option<[u128; 4]> {
    let mut out = [0u128; 4];
    let mut rest = s;
    for (i, letter) in ['n', 'l', 'c', 't'].into_iter().enumerate() {
        let end = rest.find(|ch: char| !ch.is_ascii_digit())?;
        if end == 0 || !rest[end..].starts_with(letter) {
            return None;
        }
        // More than 38 digits overflows u128; such a string is still "compact-shaped".
        out[i] = rest[..end].parse().unwrap_or(u128::MAX);
        rest = &rest[end + 1..];
    }
    rest.is_empty().then_some(out)
}

fn parse_compact_fields(spec: &str, [n, l, c, t]: [u128; 4]) -> Result<Topology, TopoSpecError> {
    let err = |reason: String| TopoSpecError::Compact {
        spec: spec.to_string(),
        reason,
    };
    for (v, what) in [
        (n, "nodes"),
        (l, "LLCs"),
        (c, "cores per LLC"),
        (t, "threads per core"),
    ] {
        if v == 0 {
            return Err(err(format!("the number of {what} is 0")));
        }
    }
    if !l.is_multiple_of(n) {
        return Err(err(format!("{l} LLCs do not split evenly over {n} nodes")));
    }
    let cpus = l.saturating_mul(c).saturating_mul(t);
    if cpus > MAX_CPUS as u128 {
        return Err(err(format!(
            "{cpus} CPUs is more than the supported maximum of {MAX_CPUS}"
        )));
    }
    // All four are now small: l*c*t ≤ MAX_CPUS and n ≤ l.
    let (n, l, c, t) = (n as usize, l as usize, c as usize, t as usize);
    crate::regular(spec, "compact NnLlCcTt string", n, l / n, c, t, true)
        .map_err(|e| TopoSpecError::invalid(spec, e))
}

/// Parses a compact `NnLlCcTt` string (see the module docs).
pub fn parse_compact(spec: &str) -> Result<Topology, TopoSpecError> {
    match compact_fields(spec) {
        Some(f) => parse_compact_fields(spec, f),
        None => Err(TopoSpecError::Compact {
            spec: spec.to_string(),
            reason: "it does not have the shape <number>n<number>l<number>c<number>t".into(),
        }),
    }
}

/// The preset name closest to `spec`, if any is reasonably close.
fn suggest(spec: &str) -> Option<String> {
    let presets = crate::presets::presets().iter().map(|p| p.name);
    closest(spec, presets.chain(["host"]))
}

impl Topology {
    /// The compact `NnLlCcTt` form, when this machine is exactly what that string builds
    /// (far-sibling numbering, one package per node, distances 10/20, no clusters, full
    /// capacity); `None` otherwise.
    pub fn compact_string(&self) -> Option<String> {
        let n = self.nr_nodes();
        let l = self.nr_llcs();
        let t = self.threads_per_core();
        if self.has_clusters() || !l.is_multiple_of(n) || !self.nr_cores().is_multiple_of(l) {
            return None;
        }
        let c = self.nr_cores() / l;
        let s = format!("{n}n{l}l{c}c{t}t");
        let r = crate::regular(&s, "", n, l / n, c, t, true).ok()?;
        self.same_layout(&r).then_some(s)
    }

    /// Whether two descriptions are the same machine: same CPU placements (dense
    /// indices), capacities, clusters and distances; names and sources are ignored.
    pub fn same_layout(&self, other: &Topology) -> bool {
        self.cpus() == other.cpus()
            && self.distances() == other.distances()
            && self.has_clusters() == other.has_clusters()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuset::CpuId;

    fn opts() -> TopologyOptions {
        TopologyOptions::default()
    }

    #[test]
    fn compact_shapes() {
        assert_eq!(compact_fields("2n4l4c2t"), Some([2, 4, 4, 2]));
        assert_eq!(compact_fields("2n4l4c2"), None);
        assert_eq!(compact_fields("n4l4c2t"), None);
        assert_eq!(compact_fields("2n4l4c2tx"), None);
        assert_eq!(compact_fields("desktop-4c8t"), None);
    }

    #[test]
    fn compact_builds_far_siblings() {
        let t = parse_topology("2n4l4c2t", &opts()).unwrap();
        assert_eq!(t.nr_cpus(), 32);
        assert_eq!(t.nr_nodes(), 2);
        assert_eq!(t.nr_llcs(), 4);
        assert_eq!(t.nr_cores(), 16);
        // Far siblings: CPU 3 and CPU 3 + 16.
        assert_eq!(t.smt_siblings(CpuId::new(3)).indices(), vec![3, 19]);
        // LLC 1 = cores 4..8 → CPUs 4-7 and 20-23.
        assert_eq!(t.llc_span(CpuId::new(5)).to_list_string(), "4-7,20-23");
        assert_eq!(t.node_span(CpuId::new(0)).to_list_string(), "0-7,16-23");
        assert_eq!(t.compact_string().as_deref(), Some("2n4l4c2t"));
    }

    #[test]
    fn impossible_compact_strings() {
        for (s, needle) in [
            ("0n1l1c1t", "number of nodes is 0"),
            ("1n0l1c1t", "number of LLCs is 0"),
            ("1n1l0c1t", "cores per LLC is 0"),
            ("1n1l1c0t", "threads per core is 0"),
            ("3n4l2c1t", "4 LLCs do not split evenly over 3 nodes"),
            ("1n1l4096c4t", "more than the supported maximum"),
            (
                "1n1l99999999999999999999999999999999999999999999c1t",
                "more than the supported",
            ),
        ] {
            let e = parse_topology(s, &opts()).unwrap_err();
            assert!(matches!(e, TopoSpecError::Compact { .. }), "{s}: {e}");
            let msg = e.to_string();
            assert!(msg.contains(needle), "{s}: {msg}");
            assert!(msg.contains(s), "{msg}");
        }
    }

    #[test]
    fn unknown_preset_suggests_closest() {
        let e = parse_topology("westmere-2s", &opts()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("unknown topology 'westmere-2s'"), "{msg}");
        assert!(msg.contains("did you mean 'westmere-2s20c'?"), "{msg}");
        assert!(msg.contains("schedlab topo list"), "{msg}");
        let e = parse_topology("kunpeng920", &opts())
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean 'kunpeng920-2n'?"), "{e}");
        let e = parse_topology("zen3-2s46c", &opts())
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean 'zen3-2s64c'?"), "{e}");
        let e = parse_topology("qqqqqqqq", &opts()).unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn numactl_options_rejected_for_presets() {
        let o = TopologyOptions {
            smt: Some(2),
            ..opts()
        };
        let e = parse_topology("westmere-2s20c", &o)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--smt only applies to numactl"), "{e}");
        let o = TopologyOptions {
            llc_per_node: Some(2),
            ..opts()
        };
        let e = parse_topology("2n2l1c1t", &o).unwrap_err().to_string();
        assert!(e.contains("--llc-per-node"), "{e}");
    }

    #[test]
    fn compact_string_absent_for_irregular() {
        let t = crate::presets::preset("kunpeng920-2n").unwrap();
        assert_eq!(t.compact_string(), None);
        // Adjacent sibling numbering is not the compact form.
        let t = crate::regular("a", "", 1, 1, 2, 2, false).unwrap();
        assert_eq!(t.compact_string(), None);
        let t = crate::regular("a", "", 1, 1, 2, 1, false).unwrap();
        assert_eq!(t.compact_string().as_deref(), Some("1n1l2c1t"));
    }

    #[test]
    fn empty_and_unrecognised_files() {
        let e = parse_text("\n\n", "x.txt", &opts())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.txt:1: expected"), "{e}");
        assert!(e.contains("empty file"), "{e}");
        let e = parse_text("\nhello world\n", "x.txt", &opts())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.txt:2: expected"), "{e}");
        assert!(e.contains("'hello world'"), "{e}");
    }
}
