//! Comparison reports: per point, each variant's mean (standard error), the ratio to the first
//! variant with its confidence interval, and a verdict with a direction ("better 6.7 %",
//! "worse 2.02x", "no significant difference") from a paired test over seeds (common random
//! numbers). Rendered by [`crate::output`]: an mmtests-style table, JSON
//! (`schedlab.compare/1`, documented in docs/compare-schema.md), CSV, SVG plots and a
//! self-contained HTML page.

use crate::plan::Plan;
use crate::runner::{RunRecord, group};
use schedlab_metrics::Better;
use schedlab_metrics::stats::{compare_samples, summarize};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Schema tag of compare JSON.
pub const COMPARE_SCHEMA: &str = "schedlab.compare/1";

/// Confidence level of intervals and tests.
pub const CONFIDENCE: f64 = 0.95;

/// The metric compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricInfo {
    /// Name, e.g. `time_s`.
    pub name: String,
    /// Unit.
    pub unit: String,
    /// `higher` or `lower`.
    pub better: Better,
}

/// One variant at one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantStats {
    /// Canonical variant name.
    pub variant: String,
    /// The metric of each repetition, in repetition order.
    pub samples: Vec<f64>,
    /// Mean.
    pub mean: f64,
    /// Standard error of the mean.
    pub stderr: f64,
    /// `mean / baseline mean`.
    pub ratio: f64,
    /// 95 % confidence interval of the ratio.
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
    /// Two-sided p-value of the paired test against the baseline.
    pub p_value: f64,
    /// Whether the difference is significant at 95 %.
    pub significant: bool,
    /// Mean counters over repetitions.
    pub counters: BTreeMap<String, f64>,
    /// The comparison in words, with its direction (absent in files written before it was
    /// added; [`VariantStats::verdict_or_derived`] rebuilds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

/// Which way a variant differs from the baseline, by the metric's direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The first variant itself.
    Baseline,
    /// Significantly better.
    Better,
    /// Significantly worse.
    Worse,
    /// No significant difference.
    Same,
    /// No interval and no test: fewer than two repetitions.
    NoInterval,
    /// No ratio: a mean is not positive or a sample is missing.
    Undefined,
}

/// A verdict: direction, the % gain (mmtests' sign: positive is better whichever way the
/// metric points) and the words the table and the HTML page print.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Which way.
    pub direction: Direction,
    /// `(ratio - 1) * 100` for higher-is-better metrics, `(1 - ratio) * 100` for
    /// lower-is-better ones; `null` without a ratio.
    pub gain_pct: f64,
    /// `better 6.7 %`, `worse 2.02x`, `no significant difference`, `n=1: no interval`.
    pub text: String,
}

/// The % gain of a ratio, positive when better (mmtests' convention).
pub fn gain_pct(ratio: f64, better: Better) -> f64 {
    match better {
        Better::Higher => (ratio - 1.0) * 100.0,
        Better::Lower => (1.0 - ratio) * 100.0,
    }
}

/// A magnitude in words: a factor (`2.02x`) from a doubling or halving on, else a percentage
/// with two significant digits at least (`6.7 %`, `0.42 %`).
fn magnitude(ratio: f64, gain: f64) -> String {
    let factor = ratio.max(1.0 / ratio);
    if factor >= 2.0 {
        format!("{factor:.2}x")
    } else if gain.abs() < 1.0 {
        format!("{:.2} %", gain.abs())
    } else {
        format!("{:.1} %", gain.abs())
    }
}

/// Smallest effect that counts as a difference. The simulator has no hardware noise, so with
/// common random numbers a 0.1 % systematic difference can be "significant"; published "no
/// difference" verdicts came from machines whose run-to-run spread was a few percent. One
/// global margin, the same for every case, says what is too small to matter.
pub const MIN_EFFECT: f64 = 0.02;

/// The smallest change of the ratio a verdict calls better or worse by default: the one
/// `validate` uses. The simulator has no hardware noise, so with common random numbers a
/// difference of 0.01 % can be significant at p < 0.001 without mattering.
pub const DEFAULT_MIN_EFFECT: f64 = MIN_EFFECT;

/// The verdict of a non-baseline variant, with [`DEFAULT_MIN_EFFECT`]. `n` is the smaller
/// number of repetitions of the two.
pub fn verdict_for(
    ratio: f64,
    ci_low: f64,
    ci_high: f64,
    significant: bool,
    better: Better,
    n: usize,
) -> Verdict {
    verdict_with(
        ratio,
        ci_low,
        ci_high,
        significant,
        better,
        n,
        DEFAULT_MIN_EFFECT,
    )
}

/// [`verdict_for`] with the minimum effect `min_effect` (a fraction: 0.02 is 2 %): a
/// significant difference smaller than it is [`Direction::Same`], "below the minimum effect".
pub fn verdict_with(
    ratio: f64,
    ci_low: f64,
    ci_high: f64,
    significant: bool,
    better: Better,
    n: usize,
    min_effect: f64,
) -> Verdict {
    let gain = gain_pct(ratio, better);
    let (direction, text) = if !ratio.is_finite() {
        (
            Direction::Undefined,
            "no ratio (a mean is not positive, or runs are missing)".to_string(),
        )
    } else if n < 2 || ci_low.is_nan() || ci_high.is_nan() {
        (Direction::NoInterval, format!("n={n}: no interval"))
    } else if !significant || ratio == 1.0 {
        (Direction::Same, "no significant difference".to_string())
    } else if (ratio - 1.0).abs() < min_effect {
        (
            Direction::Same,
            format!(
                "below the minimum effect ({} < {} %)",
                magnitude(ratio, gain),
                (min_effect * 1e4).round() / 1e2
            ),
        )
    } else if gain > 0.0 {
        (
            Direction::Better,
            format!("better {}", magnitude(ratio, gain)),
        )
    } else {
        (
            Direction::Worse,
            format!("worse {}", magnitude(ratio, gain)),
        )
    };
    Verdict {
        direction,
        gain_pct: gain,
        text,
    }
}

impl VariantStats {
    /// The stored verdict, or the one its numbers give (reports read from older files).
    pub fn verdict_or_derived(
        &self,
        better: Better,
        baseline_n: usize,
        is_baseline: bool,
    ) -> Verdict {
        if let Some(v) = &self.verdict {
            return v.clone();
        }
        if is_baseline {
            return Verdict {
                direction: Direction::Baseline,
                gain_pct: 0.0,
                text: "baseline".into(),
            };
        }
        verdict_for(
            self.ratio,
            self.ci_low,
            self.ci_high,
            self.significant,
            better,
            self.samples.len().min(baseline_n),
        )
    }
}

/// One sweep point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointStats {
    /// Parameter assignments of the point.
    pub params: BTreeMap<String, String>,
    /// Variants in the experiment's order (the first is the baseline).
    pub variants: Vec<VariantStats>,
}

/// A whole comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    /// `schedlab.compare/1`.
    pub schema: String,
    /// Topology spec.
    pub topology: String,
    /// Base workload spec.
    pub workload: String,
    /// Compared metric.
    pub metric: MetricInfo,
    /// Base seed of the repetitions (absent in files written before it was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Machine profile file, when one was given (`None`: the preset's built-in profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Points.
    pub points: Vec<PointStats>,
    /// The minimum effect the verdicts were given with, when not the default (set by
    /// [`CompareReport::with_min_effect`]; the plot shades it). Not written to the JSON.
    #[serde(skip)]
    pub min_effect: Option<f64>,
}

impl CompareReport {
    /// The minimum effect of the verdicts (a fraction).
    pub fn min_effect(&self) -> f64 {
        self.min_effect.unwrap_or(DEFAULT_MIN_EFFECT)
    }

    /// The report with every verdict given again with the minimum effect `min_effect` (a
    /// fraction; see [`verdict_with`]); the numbers and the test stay as they are.
    pub fn with_min_effect(mut self, min_effect: f64) -> CompareReport {
        self.min_effect = Some(min_effect);
        let better = self.metric.better;
        for p in &mut self.points {
            let base_n = p.variants.first().map_or(0, |v| v.samples.len());
            for v in p.variants.iter_mut().skip(1) {
                v.verdict = Some(verdict_with(
                    v.ratio,
                    v.ci_low,
                    v.ci_high,
                    v.significant,
                    better,
                    v.samples.len().min(base_n),
                    min_effect,
                ));
            }
        }
        self
    }
}

/// Builds the report from records (any order; several shards merged).
pub fn build_report(plan: &Plan, records: &[RunRecord], metric: &MetricInfo) -> CompareReport {
    let groups = group(records);
    let mut points = Vec::new();
    for (pi, point) in plan.points.iter().enumerate() {
        let base_samples: Vec<f64> = groups
            .get(&(pi, 0))
            .map(|v| v.iter().map(|r| metric_value(r, &metric.name)).collect())
            .unwrap_or_default();
        let mut variants = Vec::new();
        for vi in 0..plan.experiment.variants.len() {
            let recs = groups.get(&(pi, vi)).cloned().unwrap_or_default();
            let samples: Vec<f64> = recs.iter().map(|r| metric_value(r, &metric.name)).collect();
            let s = summarize(&samples);
            let est = if is_percentile_metric(&metric.name) {
                bootstrap_ratio(&base_samples, &samples)
            } else {
                compare_samples(&base_samples, &samples, true, CONFIDENCE)
            };
            let (ratio, ci_low, ci_high, p_value, significant) = if vi == 0 {
                (1.0, 1.0, 1.0, 1.0, false)
            } else {
                (
                    est.ratio,
                    est.ci_low,
                    est.ci_high,
                    est.p_value,
                    est.significant,
                )
            };
            let mut counters: BTreeMap<String, f64> = BTreeMap::new();
            for r in &recs {
                for (k, v) in r.counters.fields() {
                    *counters.entry(k.to_string()).or_default() += v / recs.len() as f64;
                }
                for m in &r.result.metrics {
                    if m.name != metric.name {
                        *counters.entry(format!("metric.{}", m.name)).or_default() +=
                            m.value / recs.len() as f64;
                    }
                }
            }
            let verdict = if vi == 0 {
                Verdict {
                    direction: Direction::Baseline,
                    gain_pct: 0.0,
                    text: "baseline".into(),
                }
            } else {
                verdict_for(
                    ratio,
                    ci_low,
                    ci_high,
                    significant,
                    metric.better,
                    samples.len().min(base_samples.len()),
                )
            };
            let variant = recs
                .first()
                .map(|r| r.variant.clone())
                .unwrap_or_else(|| plan.experiment.variants[vi].clone());
            variants.push(VariantStats {
                variant,
                samples,
                mean: s.mean,
                stderr: if s.stderr.is_finite() { s.stderr } else { 0.0 },
                ratio,
                ci_low,
                ci_high,
                p_value,
                significant,
                counters,
                verdict: Some(verdict),
            });
        }
        points.push(PointStats {
            params: point.params.iter().cloned().collect(),
            variants,
        });
    }
    CompareReport {
        schema: COMPARE_SCHEMA.into(),
        topology: plan.experiment.topology.clone(),
        workload: plan.experiment.workload.clone(),
        metric: metric.clone(),
        seed: Some(plan.experiment.seed),
        profile: plan
            .experiment
            .profile
            .as_ref()
            .map(|p| p.display().to_string()),
        points,
        min_effect: None,
    }
}

/// Whether a metric is a percentile (or maximum) of a latency distribution: such metrics are
/// far from normal across seeds, so their ratios get bootstrap intervals instead of t-tests.
pub fn is_percentile_metric(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("_p50")
        || n.contains("_p90")
        || n.contains("_p99")
        || n.contains("max_lat")
        || n.contains("percentile")
}

/// Paired bootstrap of the ratio of means: resample repetitions (pairs of baseline and
/// variant runs with the same seed), 10 000 times, with a fixed seed so the output is
/// deterministic. The two-sided p-value is twice the share of resampled ratios on the other
/// side of 1; `significant` when the interval excludes 1.
fn bootstrap_ratio(base: &[f64], other: &[f64]) -> schedlab_metrics::stats::RatioEstimate {
    use schedlab_metrics::stats::{RatioEstimate, bootstrap_ci};
    let n = base.len().min(other.len());
    if n < 2 || base.iter().chain(other).any(|x| !x.is_finite()) {
        return compare_samples(base, other, true, CONFIDENCE);
    }
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let ratio = mean(other) / mean(base);
    // Encode each pair as an index so one resample keeps pairs together.
    let idx: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let stat = |sample: &[f64]| {
        let (mut b, mut o) = (0.0, 0.0);
        for &i in sample {
            b += base[i as usize];
            o += other[i as usize];
        }
        o / b
    };
    let (ci_low, ci_high) = bootstrap_ci(&idx, stat, 10_000, CONFIDENCE, 0x5eed);
    let significant = ci_low > 1.0 || ci_high < 1.0;
    // Two-sided p-value by inverting the interval: the largest confidence whose interval
    // still excludes 1 (found by bisection; intervals widen with the confidence level).
    let excludes = |c: f64| {
        let (lo, hi) = bootstrap_ci(&idx, stat, 10_000, c, 0x5eed);
        lo > 1.0 || hi < 1.0
    };
    let p_value = if !excludes(0.5) {
        1.0
    } else {
        let (mut lo, mut hi) = (0.5, 0.9999);
        if excludes(hi) {
            lo = hi;
        }
        for _ in 0..14 {
            let mid = (lo + hi) / 2.0;
            if excludes(mid) { lo = mid } else { hi = mid }
        }
        1.0 - lo
    };
    RatioEstimate {
        ratio,
        ci_low,
        ci_high,
        p_value,
        significant,
    }
}

/// The value of metric `name` in a record (NaN when the workload did not report it).
pub fn metric_value(r: &RunRecord, name: &str) -> f64 {
    r.result.metric(name).map_or(f64::NAN, |m| m.value)
}

impl CompareReport {
    /// The largest confidence-interval half-width of any ratio, in percent of the ratio.
    pub fn worst_ci_pct(&self) -> f64 {
        let mut worst: f64 = 0.0;
        for p in &self.points {
            for v in p.variants.iter().skip(1) {
                let half = (v.ci_high - v.ci_low) / 2.0 / v.ratio.abs().max(1e-12) * 100.0;
                worst = if half.is_finite() {
                    worst.max(half)
                } else {
                    f64::INFINITY
                };
            }
        }
        worst
    }
}

/// `groups=10 clients=4`, or `-`.
pub fn point_label(p: &PointStats) -> String {
    if p.params.is_empty() {
        "-".into()
    } else {
        p.params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_significant_difference_below_the_minimum_effect_is_no_difference() {
        // 0.4 % faster at p < 0.001: the simulator's common random numbers resolve it, but
        // it is below validate's 2 %.
        let v = verdict_for(0.996, 0.995, 0.997, true, Better::Lower, 5);
        assert_eq!(v.direction, Direction::Same);
        assert_eq!(v.text, "below the minimum effect (0.40 % < 2 %)");
        // A minimum effect of 0 calls it what the test says.
        let v = verdict_with(0.996, 0.995, 0.997, true, Better::Lower, 5, 0.0);
        assert_eq!(v.direction, Direction::Better);
        // Past the minimum effect nothing changes.
        let v = verdict_for(0.9, 0.89, 0.91, true, Better::Lower, 5);
        assert_eq!(v.text, "better 10.0 %");
    }
}
