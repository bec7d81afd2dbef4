//! The explanation as a section of the HTML report: per point the sentence, the budget
//! table and the counters that moved, and the sensitivity reruns when there are any.

use super::Explanation;
use super::diff::fmt_count;
use super::sensitivity::Sensitivity;
use crate::output::html::esc;

/// The section, to go before the page's `</body>`.
pub fn section(e: &Explanation, sens: Option<&Sensitivity>) -> String {
    let mut h =
        String::from("<section id=\"explain\"><h2>Why: the time budget and the counters</h2>\n");
    for p in &e.points {
        if !p.label.is_empty() && p.label != "-" {
            h.push_str(&format!("<h3>{}</h3>\n", esc(&p.label)));
        }
        h.push_str("<table><tr><th>line (CPU-s)</th>");
        for b in &p.budgets {
            h.push_str(&format!("<th>{}</th>", esc(&b.variant)));
        }
        h.push_str("</tr>\n");
        if let Some(first) = p.budgets.first() {
            for l in &first.lines {
                h.push_str(&format!("<tr><td>{}</td>", esc(&l.label)));
                for b in &p.budgets {
                    h.push_str(&format!("<td>{:.4}</td>", b.cpu_s(&l.key)));
                }
                h.push_str("</tr>\n");
            }
        }
        h.push_str("</table>\n");
        for v in &p.versus {
            h.push_str(&format!("<p><b>{}</b></p>\n", esc(&v.summary)));
            h.push_str("<table><tr><th>counter</th><th>base</th><th>variant</th><th>delta</th><th>share of change</th></tr>\n");
            for r in v.counters.iter().filter(|r| r.delta != 0.0).take(25) {
                h.push_str(&format!(
                    "<tr><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{}{}</td><td>{:+.1} %</td></tr>\n",
                    esc(&r.name),
                    r.base,
                    r.value,
                    if r.delta < 0.0 { "-" } else { "+" },
                    fmt_count(r.delta),
                    r.share * 100.0
                ));
            }
            h.push_str("</table>\n");
        }
    }
    if let Some(s) = sens {
        h.push_str(&format!("<pre>{}</pre>\n", esc(&s.text())));
    }
    h.push_str("</section>\n");
    h
}
