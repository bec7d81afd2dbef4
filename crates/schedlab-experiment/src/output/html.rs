//! A self-contained HTML report, one file with no external resource (no script, style sheet,
//! font or image fetched), so it opens offline and survives being mailed: a header with
//! schedlab's version and commit, the full command line, topology, profile and seed; the
//! summary table with verdicts coloured by direction; the ratio plot and the absolute plot
//! (inline SVG); the counters formatted by kind (counts as integers, times with units,
//! fractions as percentages); the mmtests text table and the raw JSON behind folds.

use super::format::{OutputError, OutputFormat};
use super::plot::{PlotKind, to_svg};
use super::table::{decimals, p_text, title};
use crate::report::{CompareReport, Direction, is_percentile_metric, point_label};
use schedlab_metrics::Better;

/// The HTML page (`--report FILE.html`).
#[derive(Clone, Debug, Default)]
pub struct Html {
    /// How the page was made.
    pub meta: PageMeta,
}

impl OutputFormat for Html {
    fn render(&self, report: &CompareReport) -> Result<String, OutputError> {
        to_html(report, &self.meta)
    }
}

/// What the page says about how it was made (the caller knows; the report does not).
#[derive(Clone, Debug, Default)]
pub struct PageMeta {
    /// `0.1.0 (commit 0123abcd)`.
    pub version: String,
    /// The command line as typed (arguments quoted where needed).
    pub command: String,
    /// The experiment file's description, if any.
    pub description: Option<String>,
}

pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `1 234 567`: an integer with thin-space thousands separators.
fn int(x: f64) -> String {
    let s = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    if x < 0.0 { format!("-{out}") } else { out }
}

/// A time in ns with the unit that keeps it between 1 and 1000: `12.3 µs`, `20.10 s`.
pub fn time_ns(x: f64) -> String {
    let a = x.abs();
    let (v, u) = if a >= 1e9 {
        (x / 1e9, "s")
    } else if a >= 1e6 {
        (x / 1e6, "ms")
    } else if a >= 1e3 {
        (x / 1e3, "µs")
    } else {
        (x, "ns")
    };
    if v.abs() >= 100.0 {
        format!("{v:.1} {u}")
    } else {
        format!("{v:.2} {u}")
    }
}

/// A counter's value by its kind, read from its name: `*_ns` is a time, `*fraction` a
/// percentage, `metric.*` a workload metric (four significant digits), the rest counts
/// (means over repetitions, so rounded to integers unless small).
pub fn counter(name: &str, x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    if name.ends_with("_ns") {
        time_ns(x)
    } else if name.ends_with("fraction") {
        format!("{:.1} %", x * 100.0)
    } else if name.starts_with("metric.") {
        format!("{x:.*}", decimals([x]))
    } else if x.abs() >= 100.0 || x.fract() == 0.0 {
        int(x)
    } else {
        format!("{x:.1}")
    }
}

/// A counter's name without the unit its value now carries.
fn counter_name(name: &str) -> &str {
    name.strip_suffix("_ns").unwrap_or(name)
}

fn class(d: Direction) -> &'static str {
    match d {
        Direction::Better => "better",
        Direction::Worse => "worse",
        Direction::Baseline => "base",
        _ => "same",
    }
}

fn mark(d: Direction) -> &'static str {
    match d {
        Direction::Better => "▲ ",
        Direction::Worse => "▼ ",
        _ => "",
    }
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}\
th{background:#eee}td.l,th.l{text-align:left}tr.better td.v{background:#d7e9f6;color:#00466e;font-weight:bold}\
tr.worse td.v{background:#fbe1cf;color:#8a3c00;font-weight:bold}tr.same td.v{color:#666}\
table.meta td{text-align:left;border:none;padding:2px 12px 2px 0}table.meta td:first-child{color:#666}\
pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}details{margin:1em 0}\
summary{cursor:pointer;font-weight:bold}svg{max-width:100%;height:auto}";

/// Renders the page (the plots are drawn here).
pub(crate) fn to_html(report: &CompareReport, meta: &PageMeta) -> Result<String, OutputError> {
    let ratio_svg = to_svg(report, PlotKind::Ratio)?;
    let abs_svg = to_svg(report, PlotKind::Absolute)?;
    let strip = |s: &str| {
        s.trim_start_matches("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
            .to_string()
    };
    let better = match report.metric.better {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    };
    let n = report
        .points
        .first()
        .and_then(|p| p.variants.first())
        .map_or(0, |v| v.samples.len());
    let test = if is_percentile_metric(&report.metric.name) {
        "paired bootstrap over seeds (10 000 resamples)"
    } else {
        "paired t-test over seeds; Fieller interval of the ratio"
    };
    let t = title(report);
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str(&format!(
        "<title>{}</title><style>{STYLE}</style></head><body>",
        esc(&t)
    ));
    h.push_str(&format!("<h1>{}</h1>", esc(&t)));
    if let Some(d) = &meta.description {
        h.push_str(&format!("<p>{}</p>", esc(d)));
    }
    h.push_str("<table class=\"meta\">");
    let profile = report
        .profile
        .clone()
        .unwrap_or_else(|| format!("built-in profile of {}", report.topology));
    let rows = [
        ("schedlab", meta.version.clone()),
        ("command", meta.command.clone()),
        ("topology", report.topology.clone()),
        ("machine profile", profile),
        ("workload", report.workload.clone()),
        (
            "metric",
            format!(
                "{}{} ({better})",
                report.metric.name,
                if report.metric.unit.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", report.metric.unit)
                }
            ),
        ),
        (
            "seed",
            report.seed.map_or("not recorded".into(), |s| {
                format!("{s} (repetition k uses the same seed for every variant)")
            }),
        ),
        ("repetitions", format!("{n} per variant and point")),
        ("statistics", format!("95%; {test}")),
    ];
    for (k, v) in rows {
        let v = if k == "command" {
            format!("<code>{}</code>", esc(&v))
        } else {
            esc(&v)
        };
        h.push_str(&format!("<tr><td>{k}</td><td>{v}</td></tr>"));
    }
    h.push_str("</table>");
    summary(&mut h, report);
    h.push_str("<h2>Ratio to the baseline</h2>");
    h.push_str(&strip(&ratio_svg));
    h.push_str("<h2>Absolute</h2>");
    h.push_str(&strip(&abs_svg));
    counters(&mut h, report);
    h.push_str("<details><summary>Text table (as `schedlab compare` prints it)</summary><pre>");
    h.push_str(&esc(&report.to_table()));
    h.push_str("</pre></details>");
    h.push_str(
        "<details><summary>Raw JSON (schedlab.compare/1, docs/compare-schema.md)</summary><pre>",
    );
    h.push_str(&esc(&report.to_json()));
    h.push_str("</pre></details></body></html>\n");
    Ok(h)
}

fn summary(h: &mut String, report: &CompareReport) {
    let dec = decimals(
        report
            .points
            .iter()
            .flat_map(|p| p.variants.iter().map(|v| v.mean)),
    );
    let sdec = decimals(
        report
            .points
            .iter()
            .flat_map(|p| p.variants.iter().map(|v| v.stderr)),
    );
    h.push_str("<h2>Summary</h2><table><tr><th class=\"l\">point</th><th class=\"l\">variant</th><th>n</th><th>mean</th><th>stderr</th><th>ratio</th><th>95% CI</th><th>p</th><th class=\"l\">verdict</th></tr>");
    for p in &report.points {
        let base_n = p.variants.first().map_or(0, |v| v.samples.len());
        for (i, v) in p.variants.iter().enumerate() {
            let verdict = v.verdict_or_derived(report.metric.better, base_n, i == 0);
            let ci = if i == 0 {
                String::new()
            } else if v.ci_low.is_finite() && v.ci_high.is_finite() {
                format!("[{:.3}, {:.3}]", v.ci_low, v.ci_high)
            } else if v.ci_low.is_nan() {
                "no interval".into()
            } else {
                "unbounded".into()
            };
            let stderr = if v.samples.len() < 2 {
                "n/a".to_string()
            } else {
                format!("{:.sdec$}", v.stderr)
            };
            h.push_str(&format!(
                "<tr class=\"{}\"><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.dec$}</td><td>{stderr}</td><td>{}</td><td>{ci}</td><td>{}</td><td class=\"l v\">{}{}</td></tr>",
                class(verdict.direction),
                esc(&point_label(p)),
                esc(&v.variant),
                v.samples.len(),
                v.mean,
                if i == 0 { "1".into() } else { format!("{:.3}", v.ratio) },
                if i == 0 { String::new() } else { p_text(v.p_value) },
                mark(verdict.direction),
                esc(&verdict.text),
            ));
        }
    }
    h.push_str("</table><p>▲ better, ▼ worse, by the metric's direction; the verdict needs the 95% interval to exclude 1.</p>");
}

fn counters(h: &mut String, report: &CompareReport) {
    h.push_str("<h2>Counters (mean per run)</h2>");
    for p in &report.points {
        h.push_str(&format!(
            "<h3>{}</h3><table><tr><th class=\"l\">counter</th>",
            esc(&point_label(p))
        ));
        for (i, v) in p.variants.iter().enumerate() {
            h.push_str(&format!("<th>{}</th>", esc(&v.variant)));
            if i > 0 {
                h.push_str("<th>Δ vs base</th>");
            }
        }
        h.push_str("</tr>");
        let keys: Vec<String> = p
            .variants
            .first()
            .map(|v| v.counters.keys().cloned().collect())
            .unwrap_or_default();
        for k in keys {
            h.push_str(&format!(
                "<tr><td class=\"l\">{}</td>",
                esc(counter_name(&k))
            ));
            let base = p
                .variants
                .first()
                .and_then(|b| b.counters.get(&k).copied())
                .unwrap_or(f64::NAN);
            for (i, v) in p.variants.iter().enumerate() {
                let x = v.counters.get(&k).copied().unwrap_or(f64::NAN);
                h.push_str(&format!("<td>{}</td>", esc(&counter(&k, x))));
                if i > 0 {
                    h.push_str(&format!("<td>{}</td>", delta_cell(base, x)));
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
    }
}

/// A counter's change against the baseline: relative, `new` from zero, `–` when equal or
/// unknown.
fn delta_cell(base: f64, x: f64) -> String {
    if !(base.is_finite() && x.is_finite()) || x == base {
        "–".into()
    } else if base == 0.0 {
        "new".into()
    } else {
        format!("{:+.1} %", (x - base) / base.abs() * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_deltas_are_relative_to_the_baseline() {
        assert_eq!(delta_cell(200.0, 250.0), "+25.0 %");
        assert_eq!(delta_cell(200.0, 200.0), "–");
        assert_eq!(delta_cell(0.0, 3.0), "new");
        assert_eq!(delta_cell(f64::NAN, 3.0), "–");
    }

    #[test]
    fn counters_are_formatted_by_kind() {
        assert_eq!(
            counter("idle_while_waiting_ns", 20_096_737_890.4),
            "20.10 s"
        );
        assert_eq!(counter("wakeup_lat_p99_ns", 12_345.0), "12.35 µs");
        assert_eq!(counter("busy_fraction", 0.4567), "45.7 %");
        assert_eq!(
            counter("ctx_switches", 1_234_567.0),
            "1\u{2009}234\u{2009}567"
        );
        assert_eq!(counter("migrations_numa", 0.0), "0");
        assert_eq!(counter("wakeups_affine", 2.5), "2.5");
        assert_eq!(counter_name("elapsed_ns"), "elapsed");
    }
}
