//! The suite's noise-aware verdict: on a machine whose real side moves between rounds (a
//! 2-vCPU guest moved a hackbench row 1.9x between two quiet runs), a strict miss of 15 % says
//! nothing, so every headline, effect and counter is also judged against the range the real
//! runs spanned.
//!
//! **The rule** ([`matched`]): with `lo..=hi` the real range (min..max over the real runs) and
//! `tol` the row's tolerance (15 % headlines, 10 % effects, 25 % counters), the simulated
//! value is *matched (noise-aware)* when
//! `lo - tol·|lo| <= sim <= hi + tol·|hi|` — for the positive values the suite compares,
//! `min·(1 - tol) <= sim <= max·(1 + tol)`. The real runs of a headline are its rounds (one
//! run of each benchmark per pass over the suite) and any further runs the stability rule
//! asked for; those of a counter are the captured runs. An effect, a ratio of two rows, takes
//! the ratio run by run (run *i* of the numerator over run *i* of the denominator: the same
//! round for the first `rounds` runs) and adds the ratio of the medians, the strict verdict's
//! value. The widened range always contains the strict window (median ± tol), so a strict
//! match is a noise-aware one too.
//!
//! A row whose real range is *wider than its tolerance* ((max - min) / median > tol, the
//! table's ± column) is listed: its real runs disagree by more than a strict verdict allows.

use super::rows::{EFFECT_TOL, Effect, HEADLINE_TOL, Row};
use crate::stats::{median, spread};
use std::fmt::Write as _;

/// The finite values' min and max (`None` without one).
pub fn real_range(real: &[f64]) -> Option<(f64, f64)> {
    real.iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
        })
}

/// The real range widened by `tol` on each side (see the module docs).
pub fn widened(lo: f64, hi: f64, tol: f64) -> (f64, f64) {
    (lo - tol * lo.abs(), hi + tol * hi.abs())
}

/// The rule of the module docs: `None` when either side has no value.
pub fn matched(real: &[f64], sim: f64, tol: f64) -> Option<bool> {
    let (lo, hi) = real_range(real)?;
    if !sim.is_finite() {
        return None;
    }
    let (lo, hi) = widened(lo, hi, tol);
    Some(lo <= sim && sim <= hi)
}

/// Whether the real runs spread by more than `tol`: (max - min) / median > tol.
pub fn wider_than(real: &[f64], tol: f64) -> bool {
    let v: Vec<f64> = real.iter().copied().filter(|v| v.is_finite()).collect();
    v.len() > 1 && spread(&v) > tol
}

/// The real values an effect's noise-aware verdict spans: the run-by-run ratios over the runs
/// both rows have, and the ratio of the medians.
pub fn effect_real_values(rows: &[Row], e: &Effect) -> Option<Vec<f64>> {
    let find = |id: &str| rows.iter().find(|r| r.bench.id == id);
    let (n, d) = (find(&e.num)?, find(&e.den)?);
    let mut v: Vec<f64> = n
        .real
        .values
        .iter()
        .zip(&d.real.values)
        .map(|(a, b)| a / b)
        .filter(|r| r.is_finite())
        .collect();
    v.push(median(&n.real.values) / median(&d.real.values));
    Some(v)
}

/// How many of how many were within.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    /// Within (or matched).
    pub within: usize,
    /// Counted.
    pub of: usize,
}

impl Tally {
    /// Counts the verdicts that are there (`None` is not counted).
    pub fn of(verdicts: impl IntoIterator<Item = Option<bool>>) -> Tally {
        let mut t = Tally::default();
        for v in verdicts.into_iter().flatten() {
            t.of += 1;
            t.within += usize::from(v);
        }
        t
    }
}

/// One verdict's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    /// Headlines (15 %).
    pub headlines: Tally,
    /// Effects (10 %).
    pub effects: Tally,
    /// Dynamics counters (25 %; none without captured runs).
    pub counters: Tally,
}

/// Both verdicts' counts, as the summary lines print them and `--record` writes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// Against the real median (the long-standing counts).
    pub strict: Counts,
    /// Against the real range widened by the tolerance (the module docs).
    pub noise_aware: Counts,
}

/// A verdict as a table cell.
pub fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    }
}

fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// `lo..hi` of the real range, or `-` without values.
pub fn range_text(real: &[f64]) -> String {
    real_range(real).map_or("-".into(), |(lo, hi)| format!("{}..{}", num(lo), num(hi)))
}

/// The headlines and effects whose real range is wider than their tolerance, one line each
/// after a heading (or one line saying there are none).
pub fn noisy_rows(rows: &[Row], effects: &[Effect]) -> String {
    let mut items = Vec::new();
    let mut item = |kind: &str, name: &str, real: &[f64], tol: f64| {
        if wider_than(real, tol) {
            items.push(format!(
                "- {kind} {name}: real {} ({:.1} % > {:.0} %)",
                range_text(real),
                spread(real) * 100.0,
                tol * 100.0
            ));
        }
    };
    for r in rows {
        item("headline", &r.bench.id, &r.real.values, HEADLINE_TOL);
    }
    for e in effects {
        if let Some(real) = effect_real_values(rows, e) {
            item("effect", &e.name, &real, EFFECT_TOL);
        }
    }
    if items.is_empty() {
        return "real range within the tolerance on every headline and effect\n".into();
    }
    let mut s = format!(
        "real range wider than the tolerance on {} (their strict verdict says nothing; the noise-aware one is the range widened by the tolerance):\n",
        items.len()
    );
    for i in items {
        let _ = writeln!(s, "{i}");
    }
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::host_suite::rows::{Bench, Side};

    fn side(values: &[f64]) -> Side {
        Side {
            values: values.to_vec(),
            stable: true,
            dynamics: Vec::new(),
        }
    }

    pub(crate) fn row(id: &str, real: &[f64], sim: f64) -> Row {
        Row {
            bench: Bench {
                id: id.into(),
                spec: String::new(),
                metric: "time_s",
            },
            real: side(real),
            sim: side(&[sim]),
        }
    }

    #[test]
    fn the_widened_range_is_min_times_one_minus_tol_to_max_times_one_plus_tol() {
        // The row: real 0.084..0.158, 15 %: 0.0714..0.1817.
        let real = [0.084, 0.158, 0.120];
        let (lo, hi) = widened(0.084, 0.158, 0.15);
        assert!((lo - 0.0714).abs() < 1e-12 && (hi - 0.1817).abs() < 1e-12);
        assert_eq!(matched(&real, 0.0715, 0.15), Some(true));
        assert_eq!(matched(&real, 0.0713, 0.15), Some(false));
        assert_eq!(matched(&real, 0.1816, 0.15), Some(true));
        assert_eq!(matched(&real, 0.1818, 0.15), Some(false));
        // One run: the strict window around it.
        assert_eq!(matched(&[10.0], 11.4, 0.15), Some(true));
        assert_eq!(matched(&[10.0], 11.6, 0.15), Some(false));
        // Zero widens to nothing; no value on a side is not counted.
        assert_eq!(matched(&[0.0, 2.0], 0.0, 0.25), Some(true));
        assert_eq!(matched(&[], 1.0, 0.25), None);
        assert_eq!(matched(&[1.0], f64::NAN, 0.25), None);
        assert_eq!(matched(&[f64::NAN], 1.0, 0.25), None);
    }

    #[test]
    fn a_range_is_wider_than_the_tolerance_by_its_spread_over_the_median() {
        // (0.158 - 0.084) / 0.120 = 61.7 % > 15 %.
        assert!(wider_than(&[0.084, 0.158, 0.120], 0.15));
        // (10.5 - 9.5) / 10 = 10 %: not wider than 15 %, wider than 5 %.
        assert!(!wider_than(&[9.5, 10.0, 10.5], 0.15));
        assert!(wider_than(&[9.5, 10.0, 10.5], 0.05));
        assert!(!wider_than(&[3.0], 0.0));
    }

    #[test]
    fn an_effect_spans_its_run_by_run_ratios_and_the_ratio_of_the_medians() {
        let rows = vec![row("a", &[1.0, 2.0, 4.0], 1.0), row("b", &[3.0, 3.0], 2.0)];
        let e = Effect {
            name: "b / a".into(),
            num: "b".into(),
            den: "a".into(),
        };
        // Runs 1 and 2: 3/1, 3/2; medians 3/2.
        assert_eq!(effect_real_values(&rows, &e), Some(vec![3.0, 1.5, 1.5]));
        let missing = Effect {
            num: "c".into(),
            ..e
        };
        assert_eq!(effect_real_values(&rows, &missing), None);
    }

    /// Two headlines and one effect, worked by hand (also the report's summary tests).
    pub(crate) fn example() -> (Vec<Row>, Vec<Effect>) {
        let rows = vec![
            // Median 1.0, sim +10 %: strict and noise-aware.
            row("a", &[0.95, 1.0, 1.05], 1.1),
            // Median 0.12, sim 0.17 (+41.7 %): strict miss; real 0.084..0.158 widened to
            // 0.0714..0.1817 holds it. Spread 61.7 %: listed.
            row("b", &[0.084, 0.158, 0.12], 0.17),
        ];
        // b / a: real ratios 0.0884, 0.158, 0.1143 and 0.12 (medians), widened by 10 % to
        // 0.0796..0.1738; simulated 0.17 / 1.1 = 0.1545: noise-aware yes; strict +28.8 %, no.
        // Spread (0.158 - 0.0884) / 0.1171 = 59.4 %: listed.
        let effects = vec![Effect {
            name: "b / a".into(),
            num: "b".into(),
            den: "a".into(),
        }];
        (rows, effects)
    }

    #[test]
    fn the_rows_wider_than_their_tolerance_are_listed() {
        let (rows, effects) = example();
        assert_eq!(
            noisy_rows(&rows, &effects),
            "real range wider than the tolerance on 2 (their strict verdict says nothing; \
             the noise-aware one is the range widened by the tolerance):\n\
             - headline b: real 0.0840..0.1580 (61.7 % > 15 %)\n\
             - effect b / a: real 0.0884..0.1580 (59.4 % > 10 %)\n"
        );
        let quiet = vec![row("a", &[0.95, 1.0, 1.05], 1.1)];
        assert_eq!(
            noisy_rows(&quiet, &[]),
            "real range within the tolerance on every headline and effect\n"
        );
    }
}
