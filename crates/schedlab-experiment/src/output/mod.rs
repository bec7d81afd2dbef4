//! The outputs of a comparison, one file each behind one trait, [`OutputFormat`]: the
//! mmtests-style text table ([`Table`]), JSON ([`Json`]), CSV ([`Csv`]), an SVG plot
//! ([`Plot`]) and a self-contained HTML page ([`Html`]). Each renders a finished
//! [`CompareReport`] to the exact text the CLI prints or writes, so a new output is one file
//! and one `impl`, and the CLI picks one without knowing how it is made.

pub mod csv;
mod format;
pub mod html;
pub mod json;
pub mod plot;
pub mod table;

pub use csv::Csv;
pub use format::{OutputError, OutputFormat};
pub use html::{Html, PageMeta};
pub use json::Json;
pub use plot::{Plot, PlotKind};
pub use table::Table;

use crate::report::CompareReport;

/// The report in the three text formats, for callers that want a string without picking an
/// [`OutputFormat`] (defined here so that the report module does not name its outputs).
impl CompareReport {
    /// The mmtests-style table ([`crate::output::Table`]).
    pub fn to_table(&self) -> String {
        crate::output::table::to_table(self)
    }

    /// One CSV row per (point, variant) ([`crate::output::Csv`]).
    pub fn to_csv(&self) -> String {
        crate::output::csv::to_csv(self)
    }

    /// Pretty JSON, `schedlab.compare/1` ([`crate::output::Json`]).
    pub fn to_json(&self) -> String {
        crate::output::json::to_json(self)
    }
}
