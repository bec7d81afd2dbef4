//! Evaluating a case's checks on its runs' results.
//!
//! Every rule is one of a few kinds (see [`CheckKind`]) with one global effect margin
//! ([`MIN_EFFECT`]), so no case carries a threshold of its own beyond what its published
//! table states (a minimum ratio, a band).

use super::case::{CheckKind, CheckSpec, Rule};
use crate::plan::value_string;
use crate::report::{CompareReport, PointStats, VariantStats};
use serde::Serialize;

pub use crate::report::MIN_EFFECT;

/// One check's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// What is checked.
    pub name: String,
    /// Whether it passed.
    pub pass: bool,
    /// The published value (usually a ratio between variants; NaN when the case gives none).
    pub published: f64,
    /// The simulated value.
    pub simulated: f64,
    /// 95 % CI of the simulated value (NaN when not a ratio).
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
    /// Words: the rule and why it passed or failed.
    pub detail: String,
}

/// What a run produced.
pub enum RunOutput {
    /// A comparison, with the sweep it ran.
    Compare {
        /// The report (boxed: much larger than the pinned pair's two numbers).
        report: Box<CompareReport>,
        /// The sweep axes as run.
        sweep: Vec<(String, Vec<String>)>,
    },
    /// ns per round trip stacked and split.
    PinnedPair {
        /// Both tasks on CPU 0.
        stacked: f64,
        /// CPU 0 and the first CPU of another LLC.
        split: f64,
    },
}

/// Evaluates one check; `None` when its point is not part of the run as executed (the reduced
/// form runs fewer points).
pub fn evaluate(spec: &CheckSpec, out: &RunOutput) -> Option<Check> {
    let published = spec.published.unwrap_or(f64::NAN);
    let mut check = match out {
        RunOutput::PinnedPair { stacked, split } => band(spec, *stacked, *split),
        RunOutput::Compare { report, sweep } => {
            let point = point_params(spec);
            if !point
                .iter()
                .all(|(k, v)| sweep.iter().any(|(sk, vals)| sk == k && vals.contains(v)))
            {
                return None;
            }
            if spec.kind == CheckKind::PerUnitDrop {
                per_unit_drop(spec, report)
            } else {
                match find_point(report, &point) {
                    None => missing(&spec.name),
                    Some(p) => on_point(spec, p),
                }
            }
        }
    };
    check.published = published;
    if let Some(n) = &spec.note {
        check.detail += &format!(" ({n})");
    }
    Some(check)
}

fn point_params(spec: &CheckSpec) -> Vec<(String, String)> {
    spec.point
        .iter()
        .map(|(k, v)| (k.clone(), value_string(v).unwrap_or_default()))
        .collect()
}

fn find_point<'a>(r: &'a CompareReport, params: &[(String, String)]) -> Option<&'a PointStats> {
    r.points.iter().find(|p| {
        params
            .iter()
            .all(|(k, v)| p.params.get(k).map(String::as_str) == Some(v.as_str()))
    })
}

fn check(name: &str, pass: bool, simulated: f64, detail: String) -> Check {
    Check {
        name: name.to_string(),
        pass,
        published: f64::NAN,
        simulated,
        ci_low: f64::NAN,
        ci_high: f64::NAN,
        detail,
    }
}

fn missing(name: &str) -> Check {
    check(
        name,
        false,
        f64::NAN,
        "point missing from the simulated table".into(),
    )
}

fn value(v: &VariantStats, counter: &Option<String>) -> f64 {
    match counter {
        Some(key) => v.counters.get(key).copied().unwrap_or(f64::NAN),
        None => v.mean,
    }
}

fn on_point(spec: &CheckSpec, p: &PointStats) -> Check {
    let v = &p.variants[spec.variant];
    match spec.kind {
        CheckKind::Ratio => ratio(spec, v),
        CheckKind::Highest => {
            let others = p
                .variants
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != spec.variant)
                .map(|(_, o)| o.mean)
                .fold(f64::NEG_INFINITY, f64::max);
            let pass = v.mean > others && v.significant && v.ratio > 1.0;
            check(
                &spec.name,
                pass,
                v.mean / others,
                format!(
                    "needs the highest mean and a significant ratio > 1 to the baseline; means {}",
                    means(p)
                ),
            )
        }
        CheckKind::Lowest => {
            let mine = value(v, &spec.counter);
            let others = p
                .variants
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != spec.variant)
                .map(|(_, o)| value(o, &spec.counter))
                .fold(f64::INFINITY, f64::min);
            check(
                &spec.name,
                mine < others,
                mine / others,
                format!(
                    "needs the lowest {}: {mine:.4} vs best other {others:.4}",
                    spec.counter.as_deref().unwrap_or("mean")
                ),
            )
        }
        CheckKind::Closest => {
            let d = |x: &VariantStats| (x.ratio - 1.0).abs();
            let pass = spec.others.iter().all(|&o| d(v) < d(&p.variants[o]));
            let ratios = p
                .variants
                .iter()
                .skip(1)
                .map(|x| format!("{} {:.3}", x.variant, x.ratio))
                .collect::<Vec<_>>()
                .join(", ");
            check(
                &spec.name,
                pass,
                v.ratio,
                format!("needs the ratio closest to 1; ratios to the baseline: {ratios}"),
            )
        }
        CheckKind::CounterGreater => {
            let than = spec.than.unwrap_or(0);
            let mine = value(v, &spec.counter);
            let other = value(&p.variants[than], &spec.counter);
            check(
                &spec.name,
                mine > other,
                mine / other,
                format!(
                    "needs {} above {}'s: {mine:.3} vs {other:.3}",
                    spec.counter.as_deref().unwrap_or("mean"),
                    p.variants[than].variant
                ),
            )
        }
        CheckKind::PerUnitDrop | CheckKind::Band => {
            unreachable!("evaluated without a single point")
        }
    }
}

fn means(p: &PointStats) -> String {
    p.variants
        .iter()
        .map(|x| format!("{} {:.1}", x.variant, x.mean))
        .collect::<Vec<_>>()
        .join(", ")
}

fn ratio(spec: &CheckSpec, v: &VariantStats) -> Check {
    let differs = v.significant && (v.ratio - 1.0).abs() >= MIN_EFFECT;
    let min = spec.min.unwrap_or(1.0);
    let (pass, why) = match spec.rule.unwrap_or(Rule::Same) {
        Rule::Above => (
            differs && v.ratio > 1.0 && v.ratio >= min,
            format!(
                "needs a significant ratio > {:.2}{}",
                1.0 + MIN_EFFECT,
                if min > 1.0 {
                    format!(" and >= {min}")
                } else {
                    String::new()
                }
            ),
        ),
        Rule::Below => (
            differs && v.ratio < 1.0,
            format!("needs a significant ratio < {:.2}", 1.0 - MIN_EFFECT),
        ),
        Rule::NotBelow => (
            !(differs && v.ratio < 1.0),
            format!("must not be significantly below {:.2}", 1.0 - MIN_EFFECT),
        ),
        Rule::Same => (
            !differs,
            format!(
                "needs no significant difference larger than {:.0} %",
                MIN_EFFECT * 100.0
            ),
        ),
    };
    Check {
        name: spec.name.clone(),
        pass,
        published: f64::NAN,
        simulated: v.ratio,
        ci_low: v.ci_low,
        ci_high: v.ci_high,
        detail: format!(
            "{why}; simulated {:.3} {}, p = {:.3}{}",
            v.ratio,
            interval(v.ci_low, v.ci_high),
            v.p_value,
            if v.significant {
                " (significant)"
            } else {
                " (not significant)"
            }
        ),
    }
}

fn per_unit_drop(spec: &CheckSpec, r: &CompareReport) -> Check {
    let param = spec.param.clone().unwrap_or_default();
    let at = |x: &Option<toml::Value>| {
        x.as_ref()
            .and_then(|v| value_string(v).ok())
            .unwrap_or_default()
    };
    let (from, to) = (at(&spec.from), at(&spec.to));
    let per_unit = |i: usize, n: &str| {
        let units: f64 = n.parse().unwrap_or(f64::NAN);
        find_point(r, &[(param.clone(), n.to_string())])
            .map_or(f64::NAN, |p| p.variants[i].mean / units)
    };
    let drop = |i: usize| per_unit(i, &to) / per_unit(i, &from);
    let (base, mine) = (drop(0), drop(spec.variant));
    check(
        &spec.name,
        mine <= base * (1.0 - MIN_EFFECT),
        mine / base,
        format!(
            "needs the variant's per-{param} value at {param}={to} vs {from} to fall at least {:.0} % more than the baseline's: baseline {base:.3}, variant {mine:.3}",
            MIN_EFFECT * 100.0
        ),
    )
}

fn band(spec: &CheckSpec, stacked: f64, split: f64) -> Check {
    let ratio = split / stacked;
    let (low, high) = (spec.low.unwrap_or(f64::NAN), spec.high.unwrap_or(f64::NAN));
    check(
        &spec.name,
        (low..=high).contains(&ratio),
        ratio,
        format!(
            "needs split / stacked in {low}-{high}: stacked {:.2} us/op, split {:.2} us/op",
            stacked / 1e3,
            split / 1e3
        ),
    )
}

/// A ratio's interval as `[low, high]`; one the test leaves open (a baseline whose own
/// interval reaches zero) or gives none reads as such, not as `[-inf, inf]` or `[NaN, NaN]`.
fn interval(low: f64, high: f64) -> String {
    if low.is_finite() && high.is_finite() {
        format!("[{low:.3}, {high:.3}]")
    } else if low.is_nan() || high.is_nan() {
        "(no interval)".into()
    } else {
        "(interval unbounded)".into()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_open_interval_is_said_in_words() {
        assert_eq!(super::interval(0.98, 1.02), "[0.980, 1.020]");
        assert_eq!(
            super::interval(f64::NEG_INFINITY, f64::INFINITY),
            "(interval unbounded)"
        );
        assert_eq!(super::interval(f64::NAN, f64::NAN), "(no interval)");
    }
}
