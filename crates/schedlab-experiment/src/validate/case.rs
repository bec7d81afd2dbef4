//! A validation case as data: the file format of `experiments/validate/*.toml`.
//!
//! A case names the published result it reproduces, the runs it needs (an experiment each:
//! machine, workload, variants, sweep, repetitions, and the reduced form `--quick` uses), and
//! the checks that judge the runs. The built-in cases are the files of `experiments/validate/`
//! compiled into the binary, so `schedlab validate` works from any directory; a user's own case
//! is a file of the same format (`schedlab validate my-case.toml`).

use crate::error::ExperimentError;
use crate::plan::{Experiment, sweep_axes, value_string};
use serde::Deserialize;
use std::path::Path;

/// The built-in cases, in the order `schedlab validate` runs them.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "R1",
        include_str!("../../../../experiments/validate/r1.toml"),
    ),
    (
        "R2",
        include_str!("../../../../experiments/validate/r2.toml"),
    ),
    (
        "R3",
        include_str!("../../../../experiments/validate/r3.toml"),
    ),
    (
        "R4",
        include_str!("../../../../experiments/validate/r4.toml"),
    ),
    (
        "Q1",
        include_str!("../../../../experiments/validate/q1.toml"),
    ),
    (
        "Q2",
        include_str!("../../../../experiments/validate/q2.toml"),
    ),
    (
        "Q3",
        include_str!("../../../../experiments/validate/q3.toml"),
    ),
    (
        "M1",
        include_str!("../../../../experiments/validate/m1.toml"),
    ),
    (
        "M2",
        include_str!("../../../../experiments/validate/m2.toml"),
    ),
];

/// One case file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    /// Short name (`R1`).
    pub name: String,
    /// One line: what is compared, on which machine.
    pub description: String,
    /// Where the published result comes from.
    #[serde(default)]
    pub source: String,
    /// The runs.
    #[serde(rename = "run")]
    pub runs: Vec<RunSpec>,
    /// The checks.
    #[serde(rename = "check", default)]
    pub checks: Vec<CheckSpec>,
}

/// What a run is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// A comparison of variants (`schedlab compare`).
    #[default]
    Compare,
    /// One pipe ping-pong pair pinned stacked (both on CPU 0) and split (CPU 0 and the first
    /// CPU of another LLC), under the first variant; reports ns per round trip of each.
    PinnedPair,
}

/// One run of a case: an experiment, and what `--quick` changes in it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Name the checks refer to.
    pub id: String,
    /// What kind of run.
    #[serde(default)]
    pub kind: RunKind,
    /// Topology spec.
    pub topology: String,
    /// Workload spec (compare runs).
    #[serde(default)]
    pub workload: String,
    /// Variants; the first is the baseline of ratios.
    pub variants: Vec<String>,
    /// Repetitions (compare runs).
    #[serde(default = "one")]
    pub reps: usize,
    /// Sweep axes (compare runs).
    #[serde(default)]
    pub sweep: toml::Table,
    /// Round trips (pinned-pair runs).
    #[serde(default)]
    pub loops: u64,
    /// What `--quick` runs instead.
    #[serde(default)]
    pub quick: Option<QuickSpec>,
}

fn one() -> usize {
    1
}

/// The reduced form of a run: only the fields that change.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuickSpec {
    /// Workload spec.
    pub workload: Option<String>,
    /// Repetitions.
    pub reps: Option<usize>,
    /// Sweep axes.
    pub sweep: Option<toml::Table>,
    /// Round trips.
    pub loops: Option<u64>,
}

/// One check, evaluated on one run's results.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// The run it reads.
    pub run: String,
    /// What is checked, in words.
    pub name: String,
    /// The kind of check (see [`CheckKind`]).
    pub kind: CheckKind,
    /// The variant judged (index into the run's variants; 0 is the baseline).
    #[serde(default)]
    pub variant: usize,
    /// The sweep point (parameter values); empty without a sweep. A check whose point is not
    /// in the run's sweep (in the reduced form, say) is not evaluated.
    #[serde(default)]
    pub point: toml::Table,
    /// Ratio rule.
    #[serde(default)]
    pub rule: Option<Rule>,
    /// Smallest ratio for `above`.
    #[serde(default)]
    pub min: Option<f64>,
    /// The published value, for the record (usually a ratio between variants).
    #[serde(default)]
    pub published: Option<f64>,
    /// Words appended to the verdict.
    #[serde(default)]
    pub note: Option<String>,
    /// A counter (`metric.NAME` for a metric of the result) instead of the headline mean.
    #[serde(default)]
    pub counter: Option<String>,
    /// `counter_greater`: the variant compared against.
    #[serde(default)]
    pub than: Option<usize>,
    /// `closest`: the variants it must be closer to the baseline than.
    #[serde(default)]
    pub others: Vec<usize>,
    /// `per_unit_drop`: the swept parameter and its two values.
    #[serde(default)]
    pub param: Option<String>,
    /// `per_unit_drop`: the lower value.
    #[serde(default)]
    pub from: Option<toml::Value>,
    /// `per_unit_drop`: the higher value.
    #[serde(default)]
    pub to: Option<toml::Value>,
    /// `band`: the lower bound.
    #[serde(default)]
    pub low: Option<f64>,
    /// `band`: the upper bound.
    #[serde(default)]
    pub high: Option<f64>,
}

/// The kinds of check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// The variant's ratio to the baseline follows `rule`.
    Ratio,
    /// The variant's mean is above every other variant's, and significantly above the
    /// baseline.
    Highest,
    /// The variant's mean (or `counter`) is below every other variant's.
    Lowest,
    /// The variant's ratio is closer to 1 than each of `others`'.
    Closest,
    /// The variant's `counter` is above that of variant `than`.
    CounterGreater,
    /// The mean per unit of `param` falls from `from` to `to` by at least the effect margin
    /// more for the variant than for the baseline.
    PerUnitDrop,
    /// A pinned-pair run's split / stacked time lies in `low..=high`.
    Band,
}

/// Direction rules of ratio checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Significantly above 1 (and at least `min`).
    Above,
    /// Significantly below 1.
    Below,
    /// Not significantly below 1.
    NotBelow,
    /// No significant difference.
    Same,
}

impl CaseFile {
    /// Parses a case from TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<CaseFile, ExperimentError> {
        let c: CaseFile =
            toml::from_str(text).map_err(|e| ExperimentError::Input(format!("{origin}: {e}")))?;
        c.check(origin)?;
        Ok(c)
    }

    /// Reads a case file.
    pub fn from_file(path: &Path) -> Result<CaseFile, ExperimentError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ExperimentError::Io(format!("cannot read {}: {e}", path.display())))?;
        // A byte-order mark (Windows editors write one) is not part of the TOML.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        CaseFile::parse(text, &path.display().to_string())
    }

    /// A built-in case by name (case-insensitive).
    pub fn builtin(name: &str) -> Option<CaseFile> {
        BUILTIN
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(n, text)| CaseFile::parse(text, n).expect("built-in cases parse"))
    }

    /// Every check refers to a run it can read, with the fields its kind needs.
    fn check(&self, origin: &str) -> Result<(), ExperimentError> {
        let err = |m: String| Err(ExperimentError::Input(format!("{origin}: {m}")));
        if self.runs.is_empty() {
            return err("a case needs at least one [[run]]".into());
        }
        for (i, r) in self.runs.iter().enumerate() {
            if self.runs[..i].iter().any(|o| o.id == r.id) {
                return err(format!("two runs are named '{}'", r.id));
            }
            if r.variants.is_empty() {
                return err(format!("run '{}' has no variants", r.id));
            }
            match r.kind {
                RunKind::Compare if r.workload.is_empty() => {
                    return err(format!("run '{}' needs a workload", r.id));
                }
                RunKind::PinnedPair if r.loops == 0 => {
                    return err(format!("run '{}' needs loops > 0", r.id));
                }
                _ => {}
            }
        }
        if self.checks.is_empty() {
            return err("the case has no [[check]]: it would run and judge nothing".into());
        }
        for c in &self.checks {
            let Some(run) = self.runs.iter().find(|r| r.id == c.run) else {
                return err(format!(
                    "check '{}' reads run '{}', which the case does not have",
                    c.name, c.run
                ));
            };
            let nv = run.variants.len();
            let bad_variant = |v: usize| v >= nv;
            if bad_variant(c.variant)
                || c.than.is_some_and(bad_variant)
                || c.others.iter().copied().any(bad_variant)
            {
                return err(format!(
                    "check '{}' names a variant past the run's {nv}",
                    c.name
                ));
            }
            let need = |ok: bool, what: &str| {
                if ok {
                    Ok(())
                } else {
                    err(format!("check '{}' ({:?}) needs {what}", c.name, c.kind))
                }
            };
            let pinned = run.kind == RunKind::PinnedPair;
            match c.kind {
                CheckKind::Ratio => need(
                    c.rule.is_some() && c.variant > 0,
                    "a rule and a variant > 0",
                )?,
                CheckKind::Highest | CheckKind::Lowest => need(nv > 1, "two variants or more")?,
                CheckKind::Closest => need(
                    !c.others.is_empty() && c.variant > 0,
                    "others and a variant > 0",
                )?,
                CheckKind::CounterGreater => {
                    need(c.counter.is_some() && c.than.is_some(), "counter and than")?
                }
                CheckKind::PerUnitDrop => need(
                    c.param.is_some() && c.from.is_some() && c.to.is_some() && c.variant > 0,
                    "param, from, to and a variant > 0",
                )?,
                CheckKind::Band => need(
                    pinned && c.low.is_some() && c.high.is_some(),
                    "a pinned_pair run, low and high",
                )?,
            }
            if pinned && c.kind != CheckKind::Band {
                return err(format!(
                    "check '{}': a pinned_pair run only takes band checks",
                    c.name
                ));
            }
            check_values(c, run, origin).or_else(err)?;
        }
        Ok(())
    }
}

/// The values a check reads, against what its run can give: a counter that exists, a point
/// and a `per_unit_drop` parameter of the full run's sweep (the reduced form may drop a
/// point: its check is then not evaluated), a band that is a range, and two different
/// variants where two are compared. Each would otherwise be a FAIL with NaN after the work.
fn check_values(c: &CheckSpec, run: &RunSpec, origin: &str) -> Result<(), String> {
    let name = &c.name;
    if let Some(k) = &c.counter {
        let known: Vec<&str> = crate::runner::RunCounters::default()
            .fields()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        // `metric.NAME` depends on the workload: checked when the run's results are read.
        let metric = k.strip_prefix("metric.").is_some_and(|m| !m.is_empty());
        if !metric && !known.contains(&k.as_str()) {
            return Err(format!(
                "check '{name}': unknown counter '{k}'; give one of {}, or metric.NAME for a metric of the workload",
                known.join(", ")
            ));
        }
    }
    if c.than == Some(c.variant) || c.others.contains(&c.variant) {
        return Err(format!(
            "check '{name}' compares variant {} with itself",
            c.variant
        ));
    }
    if c.kind == CheckKind::Band {
        let (low, high) = (c.low.unwrap_or(f64::NAN), c.high.unwrap_or(f64::NAN));
        if !(low.is_finite() && high.is_finite() && low <= high) {
            return Err(format!(
                "check '{name}': the band {low}-{high} is not a range (low and high are numbers, low <= high)"
            ));
        }
    }
    if run.kind != RunKind::Compare {
        return Ok(());
    }
    let sweep = sweep_axes(&run.sweep, origin).map_err(|e| e.to_string())?;
    let values_of = |k: &str| sweep.iter().find(|(sk, _)| sk == k).map(|(_, v)| v);
    let text = |v: &toml::Value| value_string(v).unwrap_or_else(|_| v.to_string());
    for (k, v) in &c.point {
        let v = text(v);
        match values_of(k) {
            Some(vals) if vals.contains(&v) => {}
            Some(vals) => {
                return Err(format!(
                    "check '{name}': the point {k}={v} is not in run '{}''s sweep ({k} = {})",
                    run.id,
                    vals.join(", ")
                ));
            }
            None => {
                return Err(format!(
                    "check '{name}': the point {k}={v} names a key run '{}' does not sweep",
                    run.id
                ));
            }
        }
    }
    if c.kind == CheckKind::PerUnitDrop {
        let param = c.param.clone().unwrap_or_default();
        let Some(vals) = values_of(&param) else {
            return Err(format!(
                "check '{name}' (per_unit_drop): run '{}' does not sweep '{param}'",
                run.id
            ));
        };
        for (what, v) in [("from", &c.from), ("to", &c.to)] {
            let v = v.as_ref().map(text).unwrap_or_default();
            if !vals.contains(&v) {
                return Err(format!(
                    "check '{name}' (per_unit_drop): {what} = {v} is not in run '{}''s sweep ({param} = {})",
                    run.id,
                    vals.join(", ")
                ));
            }
            if !v.parse::<f64>().is_ok_and(|n| n.is_finite() && n > 0.0) {
                return Err(format!(
                    "check '{name}' (per_unit_drop): {what} = {v} is not a count past zero"
                ));
            }
        }
    }
    Ok(())
}

impl RunSpec {
    /// The run as it is executed: the full form, or the reduced one with `quick`. Returns the
    /// experiment and, for the reduced form, the words saying what was reduced.
    pub fn experiment(
        &self,
        quick: bool,
        origin: &str,
    ) -> Result<(Experiment, Option<String>), ExperimentError> {
        let q = self.quick.clone().filter(|_| quick).unwrap_or_default();
        let workload = q.workload.clone().unwrap_or_else(|| self.workload.clone());
        let reps = q.reps.unwrap_or(self.reps);
        let sweep_table = q.sweep.clone().unwrap_or_else(|| self.sweep.clone());
        let sweep = sweep_axes(&sweep_table, origin)?;
        let mut reduced = Vec::new();
        if workload != self.workload {
            reduced.push(format!("{} instead of {}", workload, self.workload));
        }
        if reps != self.reps {
            reduced.push(format!("{reps} repetitions instead of {}", self.reps));
        }
        if sweep_table != self.sweep {
            reduced.push(format!(
                "sweep {} instead of {}",
                table_text(&sweep_table),
                table_text(&self.sweep)
            ));
        }
        if let Some(l) = q.loops.filter(|&l| l != self.loops) {
            reduced.push(format!("{l} round trips instead of {}", self.loops));
        }
        let e = Experiment {
            topology: self.topology.clone(),
            smt: None,
            llc_per_node: None,
            profile: None,
            workload,
            variants: self.variants.clone(),
            sweep,
            reps,
            seed: 1,
            until_ci: None,
            max_reps: 30,
        };
        e.validate()?;
        Ok((e, (!reduced.is_empty()).then(|| reduced.join(", "))))
    }

    /// Round trips of a pinned-pair run.
    pub fn loops(&self, quick: bool) -> u64 {
        self.quick
            .as_ref()
            .filter(|_| quick)
            .and_then(|q| q.loops)
            .unwrap_or(self.loops)
    }
}

/// `{k = [..]}` as compact text.
fn table_text(t: &toml::Table) -> String {
    t.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compare run sweeping clients = 1, 2, 4 and a pinned pair, then `checks`.
    fn case(checks: &str) -> Result<CaseFile, ExperimentError> {
        let text = format!(
            r#"
name = "T"
description = "t"
[[run]]
id = "c"
topology = "core2quad"
workload = "tbench:duration=10ms"
variants = ["linux-6.6", "linux-6.6,NO_WAKE_AFFINE"]
sweep = {{ clients = [1, 2, 4] }}
[run.quick]
sweep = {{ clients = [1] }}
[[run]]
id = "p"
kind = "pinned_pair"
topology = "core2quad"
variants = ["linux-6.6"]
loops = 10
{checks}"#
        );
        CaseFile::parse(&text, "t.toml")
    }

    fn refused(checks: &str, needle: &str) {
        match case(checks) {
            Ok(_) => panic!("accepted: {checks}"),
            Err(e) => assert!(e.to_string().contains(needle), "{checks}: {e}"),
        }
    }

    #[test]
    fn the_builtin_cases_parse() {
        for (n, text) in BUILTIN {
            CaseFile::parse(text, n).unwrap();
        }
    }

    #[test]
    fn bad_checks_are_refused_before_running() {
        let ok = "[[check]]\nrun = \"c\"\nname = \"x\"\nkind = \"ratio\"\nvariant = 1\nrule = \"same\"\npoint = { clients = 4 }\n";
        case(ok).unwrap();
        refused("", "no [[check]]");
        refused(
            &ok.replace("clients = 4", "clients = 3"),
            "the point clients=3 is not in run 'c''s sweep",
        );
        refused(
            &ok.replace("clients = 4", "groups = 4"),
            "names a key run 'c' does not sweep",
        );
        refused(
            "[[check]]\nrun = \"c\"\nname = \"x\"\nkind = \"lowest\"\ncounter = \"ctx_swiches\"\n",
            "unknown counter 'ctx_swiches'",
        );
        case(
            "[[check]]\nrun = \"c\"\nname = \"x\"\nkind = \"lowest\"\ncounter = \"ctx_switches\"\n",
        )
        .unwrap();
        refused(
            "[[check]]\nrun = \"c\"\nname = \"x\"\nkind = \"counter_greater\"\ncounter = \"ctx_switches\"\nvariant = 1\nthan = 1\n",
            "compares variant 1 with itself",
        );
        for (low, high) in [("2.0", "1.0"), ("nan", "2.0"), ("1.0", "inf")] {
            refused(
                &format!(
                    "[[check]]\nrun = \"p\"\nname = \"x\"\nkind = \"band\"\nlow = {low}\nhigh = {high}\n"
                ),
                "is not a range",
            );
        }
        let drop = "[[check]]\nrun = \"c\"\nname = \"x\"\nkind = \"per_unit_drop\"\nvariant = 1\nparam = \"clients\"\nfrom = 1\nto = 4\n";
        case(drop).unwrap();
        refused(
            &drop.replace("param = \"clients\"", "param = \"groups\""),
            "does not sweep 'groups'",
        );
        refused(
            &drop.replace("to = 4", "to = 8"),
            "to = 8 is not in run 'c''s sweep",
        );
    }
}
