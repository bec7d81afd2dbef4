//! The comparison table in the form of mmtests' `compare-kernels`: the variants' names as
//! column headers, a row per sweep point with the mean and, in parentheses, the % gain over the
//! baseline (positive is better, whichever way the metric points), `*..*` instead of the
//! parentheses where the paired test finds the difference significant, then the summary
//! blocks Stddev, CoeffVar, Min and Max, and one verdict line per point and variant with the
//! ratio's confidence interval. Throughput-like metrics (higher is better) average with the
//! harmonic mean (`Hmean`), as mmtests does for rates; others with the arithmetic mean
//! (`Amean`). More variants than fit in [`MAX_WIDTH`] columns wrap into further blocks, each
//! repeating the baseline column.

use super::format::{OutputError, OutputFormat};
use crate::report::{CompareReport, Direction, PointStats, gain_pct, is_percentile_metric};
use crate::report::{VariantStats, point_label};
use schedlab_metrics::Better;
use schedlab_metrics::stats::{hmean, summarize};

/// The text table (the default output of `compare`, `run` and `merge`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Table;

impl OutputFormat for Table {
    fn render(&self, report: &CompareReport) -> Result<String, OutputError> {
        Ok(to_table(report))
    }
}

/// The widest line a table prints (a mail reader's width, with room).
pub const MAX_WIDTH: usize = 100;

/// Longest variant name a verdict line prints whole (a longer one is shortened with `…` and
/// named in full by the legend).
const MAX_NAME: usize = 28;

/// Decimals that give the smallest non-zero value of a block four significant digits, at least
/// two below 100 000 and at most six, so one block's numbers align and `0.0280` reads `0.02803`
/// while `20096737890` stays an integer.
pub fn decimals(values: impl IntoIterator<Item = f64>) -> usize {
    let (mut min_abs, mut max_abs) = (f64::INFINITY, 0.0f64);
    for v in values.into_iter().filter(|v| v.is_finite()) {
        let a = v.abs();
        if a > 0.0 {
            min_abs = min_abs.min(a);
        }
        max_abs = max_abs.max(a);
    }
    if !min_abs.is_finite() {
        return 2;
    }
    let want = 3 - min_abs.log10().floor() as i64;
    let lo = if max_abs >= 1e5 { 0 } else { 2 };
    want.clamp(lo, 6) as usize
}

/// A value with `dec` decimals; from 10^15 on (past f64's exact digits), in scientific form,
/// so 1e308 is `1.0000e308`, not 309 digits.
fn num(x: f64, dec: usize) -> String {
    if x.is_finite() && x.abs() >= 1e15 {
        format!("{x:.4e}")
    } else if x.is_finite() {
        format!("{x:.dec$}")
    } else {
        "n/a".into()
    }
}

/// A gain with two decimals; `-0.00` reads as a loss that is not there, so it is `0.00`.
fn gain_text(g: f64) -> String {
    if g.is_finite() {
        let g = if g.abs() < 0.005 { 0.0 } else { g };
        format!("{g:.2}%")
    } else {
        "n/a".into()
    }
}

/// `( -37.40%)`, or `* -37.40%*` when significant, or `(     n/a)`; `w` is the width of the
/// text between the marks (at least 8, wider when a spread changes by thousands of percent).
fn gain_cell(g: f64, significant: bool, w: usize) -> String {
    let (o, c) = if significant { ('*', '*') } else { ('(', ')') };
    format!("{o}{:>w$}{c}", gain_text(g))
}

/// The gain of `x` over `base` when lower is better (spread), `0` when both are zero.
fn lower_gain(x: f64, base: f64) -> f64 {
    if base == 0.0 && x == 0.0 {
        0.0
    } else if base == 0.0 {
        f64::NAN
    } else {
        (1.0 - x / base) * 100.0
    }
}

/// The workload for a title: the base spec without the swept keys, and the sweep (`""`
/// without one), so a header never shows `clients=4` above rows that sweep 1, 4, 8 and 16.
pub fn workload_title(r: &CompareReport) -> (String, String) {
    let mut axes: Vec<(String, Vec<String>)> = Vec::new();
    for p in &r.points {
        for (k, v) in &p.params {
            match axes.iter_mut().find(|(ak, _)| ak == k) {
                Some((_, vals)) if !vals.contains(v) => vals.push(v.clone()),
                Some(_) => {}
                None => axes.push((k.clone(), vec![v.clone()])),
            }
        }
    }
    let base = match r.workload.split_once(':') {
        Some((name, rest)) => {
            let kept: Vec<&str> = rest
                .split(',')
                .filter(|item| {
                    item.split_once('=')
                        .is_none_or(|(k, _)| !axes.iter().any(|(ak, _)| ak == k.trim()))
                })
                .collect();
            if kept.is_empty() {
                name.to_string()
            } else {
                format!("{name}:{}", kept.join(","))
            }
        }
        None => r.workload.clone(),
    };
    let sweep: Vec<String> = axes
        .iter()
        .map(|(k, v)| format!("{k}={}", v.join(",")))
        .collect();
    (base, sweep.join(" × "))
}

/// `tbench:duration=200ms on desktop-4c8t, sweep clients=1,4,8,16`.
pub fn title(r: &CompareReport) -> String {
    let (base, sweep) = workload_title(r);
    if sweep.is_empty() {
        format!("{base} on {}", r.topology)
    } else {
        format!("{base} on {}, sweep {sweep}", r.topology)
    }
}

/// The two header lines of a variant: the policy, then its switches (blank for none).
fn header_parts(name: &str) -> (String, String) {
    match name.split_once(',') {
        Some((p, s)) => (p.to_string(), s.to_string()),
        None => (name.to_string(), String::new()),
    }
}

fn shorten(s: &str, w: usize) -> (String, bool) {
    if s.chars().count() <= w {
        (s.to_string(), false)
    } else {
        let mut t: String = s.chars().take(w.saturating_sub(1)).collect();
        t.push('…');
        (t, true)
    }
}

fn pad_left(s: &str, w: usize) -> String {
    let n = s.chars().count();
    format!("{}{s}", " ".repeat(w.saturating_sub(n)))
}

fn pad_right(s: &str, w: usize) -> String {
    let n = s.chars().count();
    format!("{s}{}", " ".repeat(w.saturating_sub(n)))
}

/// The average a row shows: the harmonic mean of a rate, else the arithmetic mean.
fn row_mean(v: &VariantStats, use_hmean: bool) -> f64 {
    if use_hmean {
        let h = hmean(&v.samples);
        if h.is_finite() && h > 0.0 {
            return h;
        }
    }
    v.mean
}

/// One summary block: the rows of one statistic over every point.
struct Block {
    kind: &'static str,
    dec: usize,
    /// Per point, per variant: value, gain, significant.
    rows: Vec<Vec<(f64, f64, bool)>>,
}

fn build_blocks(r: &CompareReport, n_min: usize) -> Vec<Block> {
    let better = r.metric.better;
    let use_hmean = better == Better::Higher
        && r.points
            .iter()
            .flat_map(|p| &p.variants)
            .flat_map(|v| &v.samples)
            .all(|x| *x > 0.0);
    let stat = |f: &dyn Fn(&VariantStats) -> f64, lower_better: bool, sig: bool| {
        r.points
            .iter()
            .map(|p| {
                let base = p.variants.first().map_or(f64::NAN, f);
                p.variants
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let x = f(v);
                        let g = if i == 0 {
                            0.0
                        } else if lower_better {
                            lower_gain(x, base)
                        } else {
                            gain_pct(x / base, better)
                        };
                        (x, g, sig && i > 0 && v.significant)
                    })
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    };
    let mean_rows = stat(&|v| row_mean(v, use_hmean), false, true);
    let mut blocks = vec![Block {
        kind: if use_hmean { "Hmean" } else { "Amean" },
        dec: 0,
        rows: mean_rows,
    }];
    if n_min >= 2 {
        // A spread below 1e-9 of the mean is rounding in the sum of equal samples: zero, so
        // a gain over it is n/a, not -2e14 %.
        let spread = |v: &VariantStats| {
            let s = summarize(&v.samples);
            let sd = if s.stddev <= s.mean.abs() * 1e-9 {
                0.0
            } else {
                s.stddev
            };
            (sd, s.mean)
        };
        let sd = |v: &VariantStats| spread(v).0;
        let cv = |v: &VariantStats| {
            let (sd, mean) = spread(v);
            sd / mean.abs() * 100.0
        };
        blocks.push(Block {
            kind: "Stddev",
            dec: 0,
            rows: stat(&sd, true, false),
        });
        blocks.push(Block {
            kind: "CoeffVar",
            dec: 2,
            rows: stat(&cv, true, false),
        });
        blocks.push(Block {
            kind: "Min",
            dec: 0,
            rows: stat(&|v| summarize(&v.samples).min, false, false),
        });
        blocks.push(Block {
            kind: "Max",
            dec: 0,
            rows: stat(&|v| summarize(&v.samples).max, false, false),
        });
    }
    let values = |b: &Block| {
        b.rows
            .iter()
            .flat_map(|row| row.iter().map(|c| c.0))
            .collect::<Vec<_>>()
    };
    // Mean, Min and Max share one precision so they read against each other.
    let mean_dec = decimals(
        blocks
            .iter()
            .filter(|b| matches!(b.kind, "Hmean" | "Amean" | "Min" | "Max"))
            .flat_map(values),
    );
    for b in &mut blocks {
        b.dec = match b.kind {
            "Stddev" => decimals(values(b)),
            "CoeffVar" => 2,
            _ => mean_dec,
        };
    }
    blocks
}

fn point_name(r: &CompareReport, p: &PointStats) -> String {
    if p.params.is_empty() {
        r.metric.name.clone()
    } else {
        point_label(p)
    }
}

/// The whole table.
pub fn to_table(r: &CompareReport) -> String {
    let names: Vec<String> = r
        .points
        .first()
        .map(|p| p.variants.iter().map(|v| v.variant.clone()).collect())
        .unwrap_or_default();
    let counts: Vec<usize> = r
        .points
        .iter()
        .flat_map(|p| p.variants.iter().map(|v| v.samples.len()))
        .collect();
    let n_min = counts.iter().copied().min().unwrap_or(0);
    let n_max = counts.iter().copied().max().unwrap_or(0);
    let direction = match r.metric.better {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    };
    let unit = if r.metric.unit.is_empty() {
        String::new()
    } else {
        format!(" [{}]", r.metric.unit)
    };
    let reps = if n_min == n_max {
        format!(
            "{n_min} repetition{} per variant and point",
            if n_min == 1 { "" } else { "s" }
        )
    } else {
        format!("{n_min} to {n_max} repetitions per variant and point")
    };
    let seed = r.seed.map_or(String::new(), |s| format!(", seed {s}"));
    let mut out = format!(
        "{}\n{}{unit}, {direction}; {reps}{seed}\n",
        title(r),
        r.metric.name
    );
    let gain = format!(
        "(gain %) over {}, positive = better",
        names.first().map_or("the first variant", String::as_str)
    );
    if n_min < 2 {
        out.push_str(&format!(
            "n={n_min}: no interval and no significance test (give --reps 2 or more); {gain}\n"
        ));
    } else {
        let test = if is_percentile_metric(&r.metric.name) {
            "paired bootstrap"
        } else {
            "paired t-test over seeds"
        };
        out.push_str(&format!("{gain}; *gain %* = significant at 95% ({test})\n"));
    }
    if names.is_empty() {
        return out;
    }
    let blocks = build_blocks(r, n_min);
    let labels: Vec<String> = r.points.iter().map(|p| point_name(r, p)).collect();
    let pw = labels.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    let label_w = 9 + 1 + pw;
    let value_w = blocks
        .iter()
        .flat_map(|b| {
            b.rows
                .iter()
                .flat_map(move |row| row.iter().map(move |c| num(c.0, b.dec).len()))
        })
        .max()
        .unwrap_or(4);
    let heads: Vec<(String, String)> = names.iter().map(|n| header_parts(n)).collect();
    let longest = heads
        .iter()
        .map(|(a, b)| a.chars().count().max(b.chars().count()))
        .max()
        .unwrap_or(0);
    let gain_w = blocks
        .iter()
        .flat_map(|b| {
            b.rows
                .iter()
                .flat_map(|row| row.iter().map(|c| gain_text(c.1).len()))
        })
        .max()
        .unwrap_or(0)
        .max(8);
    let cell_w = value_w + gain_w + 3;
    let col_w = cell_w.max(longest.min(cell_w + 4));
    let per_block = ((MAX_WIDTH - label_w.min(MAX_WIDTH - 1)) / (col_w + 2)).max(2);
    let others: Vec<usize> = (1..names.len()).collect();
    let chunks: Vec<Vec<usize>> = if others.is_empty() {
        vec![vec![0]]
    } else {
        others
            .chunks(per_block - 1)
            .map(|c| std::iter::once(0).chain(c.iter().copied()).collect())
            .collect()
    };
    let mut legend = Vec::new();
    for (ci, cols) in chunks.iter().enumerate() {
        out.push('\n');
        if chunks.len() > 1 {
            out.push_str(&format!(
                "(columns {} of {}: variants wrap into {} blocks, each with the baseline)\n",
                ci + 1,
                chunks.len(),
                chunks.len()
            ));
        }
        for line in 0..2 {
            let mut text = " ".repeat(label_w);
            for &vi in cols {
                let part = if line == 0 {
                    &heads[vi].0
                } else {
                    &heads[vi].1
                };
                let (s, cut) = shorten(part, col_w);
                if cut && !legend.iter().any(|(i, _)| *i == vi) {
                    legend.push((vi, names[vi].clone()));
                }
                text.push_str("  ");
                text.push_str(&pad_left(&s, col_w));
            }
            out.push_str(text.trim_end());
            out.push('\n');
        }
        for b in &blocks {
            for (pi, row) in b.rows.iter().enumerate() {
                out.push_str(&pad_right(
                    &format!("{:<9} {}", b.kind, labels[pi]),
                    label_w,
                ));
                for &vi in cols {
                    let (x, g, sig) = row.get(vi).copied().unwrap_or((f64::NAN, f64::NAN, false));
                    let cell = format!("{:>value_w$} {}", num(x, b.dec), gain_cell(g, sig, gain_w));
                    out.push_str("  ");
                    out.push_str(&pad_left(&cell, col_w));
                }
                out.push('\n');
            }
        }
    }
    if n_min < 2 {
        out.push_str("Stddev, CoeffVar, Min, Max: n=1: no interval\n");
    }
    for (vi, full) in names.iter().enumerate() {
        if full.chars().count() > MAX_NAME && !legend.iter().any(|(i, _)| *i == vi) {
            legend.push((vi, full.clone()));
        }
    }
    legend.sort();
    for (vi, full) in &legend {
        out.push_str(&format!("column {}: {full}\n", vi + 1));
    }
    out.push_str(&verdict_lines(r, &labels, &names));
    out
}

/// One line per point and non-baseline variant: the verdict, the ratio and its interval.
fn verdict_lines(r: &CompareReport, labels: &[String], names: &[String]) -> String {
    if names.len() < 2 {
        return String::new();
    }
    let mut out = format!(
        "\nverdicts: ratio of means to {} [95% CI], p of the test\n",
        names[0]
    );
    let pw = labels.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    let nw = names
        .iter()
        .skip(1)
        .map(|n| n.chars().count().min(MAX_NAME))
        .max()
        .unwrap_or(1);
    let mut rows = Vec::new();
    for (pi, p) in r.points.iter().enumerate() {
        let base_n = p.variants.first().map_or(0, |v| v.samples.len());
        for v in p.variants.iter().skip(1) {
            let verdict = v.verdict_or_derived(r.metric.better, base_n, false);
            let detail = if verdict.direction == Direction::Undefined {
                String::new()
            } else if v.ci_low.is_nan() || v.ci_high.is_nan() {
                ratio_text(v.ratio)
            } else {
                let ci = if v.ci_low.is_finite() && v.ci_high.is_finite() {
                    format!("[{}, {}]", ratio_text(v.ci_low), ratio_text(v.ci_high))
                } else {
                    "[unbounded]".into()
                };
                format!("{} {ci}  {}", ratio_text(v.ratio), p_text(v.p_value))
            };
            let name = shorten(&v.variant, MAX_NAME).0;
            rows.push((labels[pi].clone(), name, verdict.text, detail));
        }
    }
    let tw = rows.iter().map(|r| r.2.chars().count()).max().unwrap_or(1);
    for (label, name, text, detail) in rows {
        out.push_str(
            format!(
                "  {}  {}  {}  {detail}",
                pad_right(&label, pw),
                pad_right(&name, nw),
                pad_right(&text, tw)
            )
            .trim_end(),
        );
        out.push('\n');
    }
    out
}

/// A ratio with three decimals, four when it is within 0.001 of 1 but not 1.
fn ratio_text(x: f64) -> String {
    if !x.is_finite() {
        "n/a".into()
    } else if x != 1.0 && (x - 1.0).abs() < 0.001 {
        format!("{x:.4}")
    } else {
        format!("{x:.3}")
    }
}

/// `p = 0.218`, `p < 0.001`, or `p n/a`.
pub fn p_text(p: f64) -> String {
    if !p.is_finite() {
        "p n/a".into()
    } else if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_give_four_significant_digits_of_the_smallest_value() {
        assert_eq!(decimals([0.0280, 0.1039]), 5);
        assert_eq!(decimals([220.86, 1629.98]), 2);
        assert_eq!(decimals([2.0e10]), 0);
        assert_eq!(decimals([0.000_000_1]), 6);
        assert_eq!(decimals([0.0, f64::NAN]), 2);
    }

    #[test]
    fn huge_values_print_in_scientific_form() {
        assert_eq!(num(1e308, 0), "1.0000e308");
        assert_eq!(num(-2.5e20, 2), "-2.5000e20");
        assert_eq!(num(123456.0, 0), "123456");
        assert_eq!(num(f64::NAN, 2), "n/a");
    }

    #[test]
    fn gain_cells_mark_significance_and_never_print_minus_zero() {
        assert_eq!(gain_cell(-37.4, true, 8), "* -37.40%*");
        assert_eq!(gain_cell(-0.001, false, 8), "(   0.00%)");
        assert_eq!(gain_cell(f64::NAN, false, 8), "(     n/a)");
        assert_eq!(gain_cell(-4874.13, false, 9), "(-4874.13%)");
        assert_eq!(lower_gain(0.0, 0.0), 0.0);
        assert!(lower_gain(1.0, 0.0).is_nan());
        assert_eq!(lower_gain(1.0, 2.0), 50.0);
    }

    #[test]
    fn long_names_are_shortened_with_an_ellipsis() {
        let (s, cut) = shorten("NO_OLD_IDLE,NO_ORDER_IDLE,IDLE_CORE", 12);
        assert!(cut);
        assert_eq!(s.chars().count(), 12);
        assert!(s.ends_with('…'));
        assert_eq!(shorten("linux-6.6", 12), ("linux-6.6".to_string(), false));
    }
}
