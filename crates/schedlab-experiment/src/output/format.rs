//! The trait every output implements and its error, below the outputs that implement it.

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
