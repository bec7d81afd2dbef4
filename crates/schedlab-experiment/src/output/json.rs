//! JSON: the report itself, pretty-printed (`schedlab.compare/1`, documented in
//! docs/compare-schema.md). It has no timing fields, so identical inputs give identical
//! bytes.

use super::format::{OutputError, OutputFormat};
use crate::report::CompareReport;

/// The JSON output (`--json`): the document and a newline, as a file or a terminal wants it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Json;

impl OutputFormat for Json {
    fn render(&self, report: &CompareReport) -> Result<String, OutputError> {
        let mut s = to_json(report);
        s.push('\n');
        Ok(s)
    }
}

/// The document without a trailing newline (what the HTML page embeds and the tests
/// compare).
pub(crate) fn to_json(report: &CompareReport) -> String {
    serde_json::to_string_pretty(report).unwrap_or_default()
}
