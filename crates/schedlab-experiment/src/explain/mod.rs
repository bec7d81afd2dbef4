//! `schedlab explain`: why one variant beats another, in the kernel's own counters and in
//! time. For each sweep point and each variant against the baseline: the time budget of
//! both (`budget.rs`), every counter side by side with its difference, ordered by how much
//! of the budget's change its cost class accounts for (`diff.rs`), and one sentence naming
//! the top three contributors. `sensitivity.rs` reruns the comparison with each cost class
//! of the machine profile halved and doubled; `render.rs` writes the text and `html.rs`
//! the section of the HTML report.

pub mod budget;
pub mod counters;
pub mod diff;
pub mod html;
mod mean;
pub mod render;
pub mod sensitivity;

use crate::error::ExperimentError;
use crate::plan::Plan;
use crate::report::{CompareReport, Direction, point_label};
use crate::runner::RunRecord;
use budget::Budget;
pub use counters::ExplainCounters;
use diff::{ClassDelta, CounterRow};
pub use mean::Mean;
use serde::{Deserialize, Serialize};

/// Schema tag of `explain --json`.
pub const EXPLAIN_SCHEMA: &str = "schedlab.explain/1";

/// One variant against the baseline at one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantExplanation {
    /// Canonical variant name.
    pub variant: String,
    /// The headline verdict (`better 6.7 %`, ...).
    pub verdict: String,
    /// Its direction.
    pub direction: Direction,
    /// `mean / baseline mean` of the headline metric.
    pub ratio: f64,
    /// How each budget line changed, largest first.
    pub classes: Vec<ClassDelta>,
    /// Every counter side by side, ordered by the share of its class.
    pub counters: Vec<CounterRow>,
    /// The top three contributors in one sentence.
    pub summary: String,
}

/// One sweep point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointExplanation {
    /// The point's parameters (`clients=8`), empty without a sweep.
    pub label: String,
    /// Each variant's budget, baseline first.
    pub budgets: Vec<Budget>,
    /// Each non-baseline variant against the baseline.
    pub versus: Vec<VariantExplanation>,
}

/// The whole explanation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// [`EXPLAIN_SCHEMA`].
    pub schema: String,
    /// The machine.
    pub topology: String,
    /// The workload.
    pub workload: String,
    /// The headline metric.
    pub metric: String,
    /// Whether a lower metric is better (a time).
    pub lower_is_better: bool,
    /// By sweep point.
    pub points: Vec<PointExplanation>,
}

/// Refuses what explain cannot explain: fewer than two variants.
pub fn check_plan(plan: &Plan) -> Result<(), ExperimentError> {
    if plan.experiment.variants.len() < 2 {
        return Err(ExperimentError::Input(format!(
            "explain needs two or more variants to explain a difference (got {}); give -v BASELINE -v OTHER",
            plan.experiment.variants.len()
        )));
    }
    Ok(())
}

/// Explains a finished comparison from its report and runs.
pub fn explain(report: &CompareReport, records: &[RunRecord]) -> Explanation {
    let lower = matches!(report.metric.better, schedlab_metrics::Better::Lower);
    let points = report
        .points
        .iter()
        .enumerate()
        .map(|(pi, p)| {
            let means: Vec<Mean> = (0..p.variants.len())
                .map(|vi| {
                    let runs: Vec<&ExplainCounters> = records
                        .iter()
                        .filter(|r| r.key.point == pi && r.key.variant == vi)
                        .map(|r| &r.counters.explain)
                        .collect();
                    Mean::of(&runs)
                })
                .collect();
            let budgets: Vec<Budget> = p
                .variants
                .iter()
                .zip(&means)
                .map(|(v, m)| budget::budget(&v.variant, m))
                .collect();
            let versus = p
                .variants
                .iter()
                .enumerate()
                .skip(1)
                .map(|(vi, v)| {
                    let verdict = v.verdict_or_derived(
                        report.metric.better,
                        p.variants[0].samples.len(),
                        false,
                    );
                    let classes = diff::class_deltas(&budgets[0], &budgets[vi]);
                    let counters = diff::counter_rows(&means[0], &means[vi], &classes);
                    let mut summary = diff::summary(
                        &v.variant,
                        &p.variants[0].variant,
                        &verdict,
                        lower && report.metric.name.contains("time"),
                        &classes,
                        &counters,
                    );
                    // The changes are explained either way; say when the test cannot tell
                    // them from the spread between seeds.
                    if v.samples.len() >= 2 && v.p_value.is_finite() && v.p_value >= 0.05 {
                        summary.push_str(&format!(
                            ". Not significant (p = {:.3}, at least 0.05): these differences may be the spread between seeds, not the variant's effect; more --reps would tell",
                            v.p_value
                        ));
                    }
                    VariantExplanation {
                        variant: v.variant.clone(),
                        verdict: verdict.text,
                        direction: verdict.direction,
                        ratio: v.ratio,
                        classes,
                        counters,
                        summary,
                    }
                })
                .collect();
            PointExplanation {
                label: point_label(p),
                budgets,
                versus,
            }
        })
        .collect();
    Explanation {
        schema: EXPLAIN_SCHEMA.into(),
        topology: report.topology.clone(),
        workload: report.workload.clone(),
        metric: report.metric.name.clone(),
        lower_is_better: lower,
        points,
    }
}
