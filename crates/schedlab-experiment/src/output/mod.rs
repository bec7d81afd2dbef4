//! The outputs of a comparison, one file each behind one trait, [`OutputFormat`]: the
//! mmtests-style text table ([`Table`]), JSON ([`Json`]), CSV ([`Csv`]), an SVG plot
//! ([`Plot`]) and a self-contained HTML page ([`Html`]). Each renders a finished
//! [`CompareReport`] to the exact text the CLI prints or writes, so a new output is one file
//! and one `impl`, and the CLI picks one without knowing how it is made.

pub mod csv;
pub mod html;
pub mod json;
pub mod plot;
pub mod table;

pub use csv::Csv;
pub use html::{Html, PageMeta};
pub use json::Json;
pub use plot::{Plot, PlotKind};
pub use table::Table;

use crate::report::CompareReport;

/// Why an output could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The plotting library could not draw the SVG (its message; it draws into memory, so
    /// this is a plotting bug, not an I/O failure).
    #[error("{0}")]
    Draw(String),
}

/// One way to write a comparison out.
pub trait OutputFormat {
    /// The whole output: for the text formats the bytes printed (trailing newline included),
    /// for the SVG and the HTML page the file's contents.
    fn render(&self, report: &CompareReport) -> Result<String, OutputError>;
}
