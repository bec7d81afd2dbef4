//! The registry of built-in workloads: one line per model (the list in `models/mod.rs`), each
//! naming the entry ([`WorkloadInfo`]: parameters, defaults, units, help, the real tool it
//! mirrors and its builder) that the model's own file declares. `schedlab workloads` prints it, the spec
//! parser validates against it, `instantiate` calls its builder, and a test checks
//! `docs/workloads/` against it, so a model is declared once.
//!
//! Adding a model: write `models/NAME.rs` with its `INFO` and `build`, add `mod NAME;` and
//! one line to the list in `models/mod.rs` (its `CATALOG`), and its page to `docs/workloads/`.
//!
//! The `unit` of a parameter also says how its value is read (see `ValueKind`): `count`
//! (a whole number), `bytes` (`100`, `64K`, `10M`), `KB`, `duration` (a number with a unit:
//! `2s`, `100us`), `bool` (`on`/`off`, `true`/`false`, `yes`/`no`, `1`/`0`), `fraction` (0..=1),
//! `factor` (a positive number), a `|`-separated list of choices, or `path`. A default of
//! `auto` means "derived from the machine or from other parameters" (the help says how).

use crate::error::WorkloadError;
use crate::models::{self, Built};
use crate::spec::Args;
use schedlab_topo::Topology;

/// One parameter of a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// Name as used in `NAME:key=value`.
    pub name: &'static str,
    /// Default value as text (`auto` = derived, see `help`).
    pub default: &'static str,
    /// Unit, which also decides how values parse.
    pub unit: &'static str,
    /// One line for `schedlab workloads NAME`.
    pub help: &'static str,
}

/// One built-in workload, registered by its model's file (see [`catalog`]).
#[derive(Clone, Copy, Debug)]
pub struct WorkloadInfo {
    /// Name as used in `-w NAME`.
    pub name: &'static str,
    /// The real tool (and options) it mirrors.
    pub mirrors: &'static str,
    /// The program and version the model follows, so a user reproducing a published table
    /// knows which release the model's structure was read from.
    pub follows: &'static str,
    /// What is reconstructed (an estimate or a stand-in) rather than read from the program.
    pub reconstructed: &'static str,
    /// Its parameters, in canonical order.
    pub params: &'static [ParamInfo],
    /// What it models, in a sentence or two.
    pub about: &'static str,
    /// Builds the model from its parameters; `instantiate` calls it, so a registered
    /// model needs no other dispatch.
    pub(crate) build: BuildFn,
}

/// A model's builder: reads its parameters through `Args` and declares the workload.
pub(crate) type BuildFn = fn(&mut Args, &Topology) -> Result<Built, WorkloadError>;

/// How a parameter value is read, derived from its unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValueKind {
    Count,
    Bytes,
    KiB,
    Duration,
    Bool,
    Fraction,
    Factor,
    Choice(&'static str),
    Path,
}

impl ParamInfo {
    pub(crate) fn kind(&self) -> ValueKind {
        match self.unit {
            "count" => ValueKind::Count,
            "bytes" => ValueKind::Bytes,
            "KB" => ValueKind::KiB,
            "duration" => ValueKind::Duration,
            "bool" => ValueKind::Bool,
            "fraction" => ValueKind::Fraction,
            "factor" => ValueKind::Factor,
            "path" => ValueKind::Path,
            other => ValueKind::Choice(other),
        }
    }
}

/// A parameter entry, shortened for the models' tables.
pub(crate) const fn param(
    name: &'static str,
    default: &'static str,
    unit: &'static str,
    help: &'static str,
) -> ParamInfo {
    ParamInfo {
        name,
        default,
        unit,
        help,
    }
}

/// Every built-in workload, in display order.
pub fn catalog() -> &'static [WorkloadInfo] {
    models::CATALOG
}

/// The catalog entry of `name` (a retired name has none: the spec parser refuses it,
/// naming its replacement).
pub fn info(name: &str) -> Option<&'static WorkloadInfo> {
    models::CATALOG.iter().find(|w| w.name == name)
}

impl WorkloadInfo {
    /// The parameter called `name`.
    pub fn param(&self, name: &str) -> Option<&'static ParamInfo> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Whether the spec takes a path after the colon rather than `key=value` pairs.
    pub fn takes_path(&self) -> bool {
        self.params.len() == 1 && self.params[0].unit == "path"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_is_a_valid_value_of_its_kind() {
        for w in catalog() {
            for p in w.params {
                if p.default == "auto" || p.kind() == ValueKind::Path {
                    continue;
                }
                crate::spec::check_value(w, p, p.default).unwrap_or_else(|e| {
                    panic!("{}.{}: default {:?}: {e}", w.name, p.name, p.default)
                });
            }
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = catalog().iter().map(|w| w.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), catalog().len());
        for w in catalog() {
            let mut ps: Vec<_> = w.params.iter().map(|p| p.name).collect();
            ps.sort_unstable();
            ps.dedup();
            assert_eq!(ps.len(), w.params.len(), "{}", w.name);
        }
    }
}
