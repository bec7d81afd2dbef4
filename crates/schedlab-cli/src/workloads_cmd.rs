//! `schedlab workloads [NAME]`: the built-in workload models, their parameters (names as
//! the real tools call them), defaults, units and the tool each mirrors.
//!
//! ```text
//!   schedlab workloads            one line per workload, with its parameters and defaults
//!   schedlab workloads NAME       what NAME models, the program version it follows, what is
//!                                 reconstructed, a table of its parameters, an example
//!   ... --json                    the same as JSON
//! ```
//!
//! Everything shown comes from `schedlab_workloads::catalog()`, the table the spec parser
//! validates `-w NAME:key=value,...` against, so the listing cannot drift from what runs.

use std::fmt::Write as _;

use anyhow::Context as _;
use schedlab_workloads::{ParamInfo, WorkloadInfo, catalog, parse_spec};

/// Arguments of `schedlab workloads`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = SPEC_HELP)]
pub struct WorkloadsArgs {
    /// A workload to describe in detail (omit to list them all).
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// How `-w/--workload` specs are written, for help texts.
pub const SPEC_HELP: &str = "\
A workload spec is NAME[:key=value,...], e.g. hackbench:groups=400,loops=400 or
tbench:clients=32,duration=2s. Durations need a unit (2s, 100ms, 100us, 500ns); sizes take
K/M/G suffixes (64K). file:PATH runs a TOML workload file, rtapp:PATH an rt-app JSON file.";

/// Runs `schedlab workloads [NAME] [--json]`.
pub fn run(cmd: WorkloadsArgs) -> anyhow::Result<()> {
    let out = match &cmd.name {
        None if cmd.json => {
            serde_json::to_string_pretty(&catalog().iter().map(info_json).collect::<Vec<_>>())?
        }
        None => list_text(),
        Some(name) => {
            let info = lookup(name)?;
            if cmd.json {
                serde_json::to_string_pretty(&info_json(info))?
            } else {
                detail_text(info)
            }
        }
    };
    println!("{}", out.trim_end());
    Ok(())
}

/// The catalog entry for `name`; an unknown name gets the parser's error, which suggests the
/// closest known name.
fn lookup(name: &str) -> anyhow::Result<&'static WorkloadInfo> {
    let bare = name.split(':').next().unwrap_or(name);
    if let Some(w) = catalog().iter().find(|w| w.name == bare) {
        return Ok(w);
    }
    let err = parse_spec(bare)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_else(|| format!("unknown workload '{bare}'"));
    Err(anyhow::anyhow!(err)).context("schedlab workloads")
}

fn info_json(w: &WorkloadInfo) -> serde_json::Value {
    serde_json::json!({
        "name": w.name,
        "mirrors": w.mirrors,
        "follows": w.follows,
        "reconstructed": w.reconstructed,
        "about": squash(w.about),
        "params": w.params.iter().map(|p| serde_json::json!({
            "name": p.name, "default": p.default, "unit": p.unit, "help": p.help,
        })).collect::<Vec<_>>(),
    })
}

/// Collapses the whitespace of a multi-line literal.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Word-wraps `text` to `width` columns, indenting every line by `indent`.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    wrap_items(text.split_whitespace(), width, indent)
}

/// Like [`wrap`], keeping each item (which may contain spaces) on one line.
fn wrap_items<'a>(items: impl IntoIterator<Item = &'a str>, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in items {
        if !line.is_empty() && indent.len() + line.len() + 1 + word.len() > width {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}{line}");
    }
    out
}

/// One block per workload: name and mirrored tool, then its parameters with defaults.
pub fn list_text() -> String {
    let mut s = String::from(
        "Workloads (schedlab workloads NAME for details; -w NAME[:key=value,...] to run one):\n\n",
    );
    let width = catalog().iter().map(|w| w.name.len()).max().unwrap_or(0);
    for w in catalog() {
        let _ = writeln!(s, "  {:width$}  {}", w.name, w.mirrors);
        let params: Vec<String> = w.params.iter().map(|p| param_brief(w, p)).collect();
        s.push_str(&wrap_items(
            params.iter().map(String::as_str),
            100,
            &format!("  {:width$}    ", ""),
        ));
    }
    s.push('\n');
    s.push_str(SPEC_HELP);
    s.push('\n');
    s
}

/// `name=default` with the unit where the default does not show it: `datasize=100 B`,
/// `ipc=socket (pipe|socket|inet)`, `threads=auto (count)`.
fn param_brief(w: &WorkloadInfo, p: &ParamInfo) -> String {
    if w.takes_path() {
        return format!("{}:PATH", w.name);
    }
    let unit = match p.unit {
        u if u.contains('|') => format!(" ({u})"),
        "bytes" if p.default.chars().all(|c| c.is_ascii_digit()) => " B".to_string(),
        "KB" => " KB".to_string(),
        u if p.default == "auto" => format!(" ({u})"),
        _ => String::new(),
    };
    format!("{}={}{unit}", p.name, p.default)
}

/// What one workload models, its parameter table and an example spec.
pub fn detail_text(w: &WorkloadInfo) -> String {
    let mut s = format!("{}: {}\n\n", w.name, w.mirrors);
    s.push_str(&wrap(&squash(w.about), 90, "  "));
    s.push('\n');
    s.push_str(&wrap(&format!("Follows: {}.", w.follows), 90, "  "));
    s.push_str(&wrap(
        &format!("Reconstructed: {}.", w.reconstructed),
        90,
        "  ",
    ));
    s.push('\n');
    let head = ("PARAMETER", "DEFAULT", "UNIT", "MEANING");
    let wn = w
        .params
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(0)
        .max(head.0.len());
    let wd = w
        .params
        .iter()
        .map(|p| p.default.len())
        .max()
        .unwrap_or(0)
        .max(head.1.len());
    let wu = w
        .params
        .iter()
        .map(|p| p.unit.len())
        .max()
        .unwrap_or(0)
        .max(head.2.len());
    let _ = writeln!(
        s,
        "  {:wn$}  {:wd$}  {:wu$}  {}",
        head.0, head.1, head.2, head.3
    );
    for p in w.params {
        let _ = writeln!(
            s,
            "  {:wn$}  {:wd$}  {:wu$}  {}",
            p.name, p.default, p.unit, p.help
        );
    }
    let example = if w.takes_path() {
        format!("{}:PATH", w.name)
    } else {
        let shown: Vec<String> = w
            .params
            .iter()
            .filter(|p| p.default != "auto")
            .take(2)
            .map(|p| format!("{}={}", p.name, p.default))
            .collect();
        if shown.is_empty() {
            w.name.to_string()
        } else {
            format!("{}:{}", w.name, shown.join(","))
        }
    };
    let _ = writeln!(s, "\nExample: -w {example}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_names_every_workload_and_its_defaults() {
        let t = list_text();
        for w in catalog() {
            assert!(t.contains(w.name), "{}", w.name);
        }
        assert!(t.contains("groups=10") && t.contains("file:PATH"), "{t}");
        assert!(
            t.contains("ipc=socket (pipe|socket|inet)") && t.contains("datasize=100 B"),
            "{t}"
        );
    }

    #[test]
    fn detail_shows_the_parameter_table_and_a_parsable_example() {
        let w = lookup("tbench").unwrap();
        let t = detail_text(w);
        assert!(
            t.contains("clients") && t.contains("duration") && t.contains("600s"),
            "{t}"
        );
        let example = t
            .lines()
            .find_map(|l| l.strip_prefix("Example: -w "))
            .unwrap();
        parse_spec(example).unwrap();
        let e = lookup("tbnech").unwrap_err();
        assert!(format!("{e:#}").contains("did you mean 'tbench'"), "{e:#}");
        // Which program version the model follows and what is reconstructed.
        assert!(t.contains("Follows: dbench 4.0"), "{t}");
        assert!(t.contains("Reconstructed: the order"), "{t}");
    }

    #[test]
    fn one_entry_per_benchmark_and_old_names_point_at_it() {
        let names: Vec<&str> = catalog().iter().map(|w| w.name).collect();
        for name in ["sysbench", "pgbench", "tbench"] {
            assert_eq!(
                names.iter().filter(|n| n.contains(name)).count(),
                1,
                "{names:?}"
            );
        }
        let e = lookup("sysbench-mysql").unwrap_err();
        assert!(
            format!("{e:#}").contains("was retired: use 'sysbench'"),
            "{e:#}"
        );
        let d = detail_text(lookup("sysbench").unwrap());
        assert!(
            d.contains("Follows: sysbench 1.0") && d.contains("MySQL 5.7 or 8.0"),
            "{d}"
        );
    }
}
