//! CSV: one row per (point, variant), the sweep keys first, then the statistics and the
//! verdict, for spreadsheets and scripts that do not read JSON.

use super::format::{OutputError, OutputFormat};
use crate::report::CompareReport;

/// The CSV output (`--csv`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Csv;

impl OutputFormat for Csv {
    fn render(&self, report: &CompareReport) -> Result<String, OutputError> {
        Ok(to_csv(report))
    }
}

/// The rows, with a header line; the sweep keys are those of every point, in first-seen
/// order.
pub(crate) fn to_csv(report: &CompareReport) -> String {
    let mut keys: Vec<String> = Vec::new();
    for p in &report.points {
        for k in p.params.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = keys.clone();
    header.extend(
        [
            "variant",
            "metric",
            "unit",
            "n",
            "mean",
            "stderr",
            "ratio",
            "ci_low",
            "ci_high",
            "p_value",
            "significant",
            "direction",
            "gain_pct",
            "verdict",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let _ = w.write_record(&header);
    for p in &report.points {
        let base_n = p.variants.first().map_or(0, |v| v.samples.len());
        for (vi, v) in p.variants.iter().enumerate() {
            let verdict = v.verdict_or_derived(report.metric.better, base_n, vi == 0);
            let mut row: Vec<String> = keys
                .iter()
                .map(|k| p.params.get(k).cloned().unwrap_or_default())
                .collect();
            row.push(v.variant.clone());
            row.push(report.metric.name.clone());
            row.push(report.metric.unit.clone());
            row.push(v.samples.len().to_string());
            for x in [v.mean, v.stderr, v.ratio, v.ci_low, v.ci_high, v.p_value] {
                row.push(format!("{x}"));
            }
            row.push(v.significant.to_string());
            row.push(
                serde_json::to_value(verdict.direction)
                    .ok()
                    .and_then(|d| d.as_str().map(String::from))
                    .unwrap_or_default(),
            );
            row.push(format!("{}", verdict.gain_pct));
            row.push(verdict.text);
            let _ = w.write_record(&row);
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
