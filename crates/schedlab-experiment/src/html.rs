//! A self-contained HTML report: the table, the plot (inline SVG) and the counters, with no
//! external resource, so it opens with no network.

use crate::report::{CompareReport, point_label};

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Renders the page.
pub fn to_html(report: &CompareReport, svg: &str, title: &str) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str(&format!("<title>{}</title>", esc(title)));
    h.push_str(
        "<style>body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0}\
         td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#eee}td.l{text-align:left}\
         .sig{font-weight:bold}.ns{color:#777}pre{background:#f6f6f6;padding:1em;overflow-x:auto}</style></head><body>",
    );
    h.push_str(&format!("<h1>{}</h1>", esc(title)));
    h.push_str(&format!(
        "<p>Topology <code>{}</code>, workload <code>{}</code>, metric <code>{}</code> [{}] ({} is better).</p>",
        esc(&report.topology),
        esc(&report.workload),
        esc(&report.metric.name),
        esc(&report.metric.unit),
        match report.metric.better {
            schedlab_metrics::Better::Higher => "higher",
            schedlab_metrics::Better::Lower => "lower",
        }
    ));
    h.push_str("<table><tr><th>point</th><th>variant</th><th>n</th><th>mean</th><th>stderr</th><th>ratio</th><th>95% CI</th><th>p</th><th>verdict</th></tr>");
    for p in &report.points {
        for (i, v) in p.variants.iter().enumerate() {
            let verdict = if i == 0 {
                "baseline".to_string()
            } else if v.significant {
                "significant".to_string()
            } else {
                "no significant difference".to_string()
            };
            let cls = if i > 0 && v.significant {
                "sig"
            } else if i > 0 {
                "ns"
            } else {
                ""
            };
            h.push_str(&format!(
                "<tr class=\"{cls}\"><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{:.6}</td><td>{:.6}</td><td>{:.3}</td><td>[{:.3}, {:.3}]</td><td>{:.3}</td><td class=\"l\">{}</td></tr>",
                esc(&point_label(p)),
                esc(&v.variant),
                v.samples.len(),
                v.mean,
                v.stderr,
                v.ratio,
                v.ci_low,
                v.ci_high,
                v.p_value,
                verdict
            ));
        }
    }
    h.push_str("</table><h2>Plot</h2>");
    h.push_str(svg.trim_start_matches("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    h.push_str("<h2>Counters (mean per run)</h2>");
    for p in &report.points {
        h.push_str(&format!(
            "<h3>{}</h3><table><tr><th>counter</th>",
            esc(&point_label(p))
        ));
        for v in &p.variants {
            h.push_str(&format!("<th>{}</th>", esc(&v.variant)));
        }
        h.push_str("</tr>");
        let keys: Vec<String> = p
            .variants
            .first()
            .map(|v| v.counters.keys().cloned().collect())
            .unwrap_or_default();
        for k in keys {
            h.push_str(&format!("<tr><td class=\"l\">{}</td>", esc(&k)));
            for v in &p.variants {
                h.push_str(&format!(
                    "<td>{:.4}</td>",
                    v.counters.get(&k).copied().unwrap_or(f64::NAN)
                ));
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
    }
    h.push_str("<h2>Raw report</h2><pre>");
    h.push_str(&esc(&report.to_json()));
    h.push_str("</pre></body></html>\n");
    h
}
