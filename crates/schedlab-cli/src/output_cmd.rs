//! The output flags of `compare`, `explain` and `merge`, and what they make of a finished
//! comparison: the printed table, JSON or CSV, the SVG plot and the HTML page. Below both
//! commands that print a comparison, so that neither needs the other.

use anyhow::{Result, bail};
use clap::Args;
use schedlab_experiment::output::{Csv, Html, Json, OutputFormat, PageMeta, Plot, PlotKind, Table};
use schedlab_experiment::report::CompareReport;
use std::path::{Path, PathBuf};

/// Output formats of compare and merge.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Print the `schedlab.compare/1` JSON instead of the table (explain: the
    /// `schedlab.explain/1` JSON).
    #[arg(long, conflicts_with = "csv")]
    pub(crate) json: bool,
    /// Print CSV instead of the table.
    #[arg(long)]
    csv: bool,
    /// Write an SVG plot against the sweep key: each variant's ratio to the baseline with its
    /// 95% confidence interval (with --absolute: the metric itself, ± one standard error).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Plot the metric itself instead of the ratio to the baseline.
    #[arg(long, requires = "plot")]
    absolute: bool,
    /// Write a self-contained HTML report.
    #[arg(long, visible_alias = "html", value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// The smallest ratio change, in %, that a verdict calls better or worse; a significant
    /// difference below it reads "below the minimum effect". The simulator has no hardware
    /// noise, so a tiny difference can be significant without mattering [default: 2, the
    /// minimum effect `validate` uses].
    #[arg(long, value_name = "PCT", allow_negative_numbers = true, value_parser = min_effect_pct)]
    pub(crate) min_effect: Option<f64>,
}

/// `--min-effect`: a percentage from 0 to 100.
fn min_effect_pct(s: &str) -> Result<f64, String> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if (0.0..100.0).contains(&p) => Ok(p),
        Ok(_) => Err(
            "a percentage from 0 to below 100, e.g. 2 (0 calls every significant difference)"
                .into(),
        ),
        Err(_) => Err("a percentage such as 2 or 0.5".into()),
    }
}

impl OutputArgs {
    /// Fails before the work when an output file cannot be written.
    pub(crate) fn check_writable(&self) -> Result<()> {
        if let Some(p) = &self.plot {
            crate::checks::writable(p, "--plot")?;
            // The plot is SVG: a `.png` or `.pdf` name would hold text its viewer rejects
            // (a device or FIFO, `/dev/stdout`, has no such name).
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            let file = matches!(
                schedlab_experiment::outpath::sink(p),
                Ok(schedlab_experiment::outpath::Sink::File(_))
            );
            if file && !ext.eq_ignore_ascii_case("svg") {
                bail!(
                    "--plot {}: the plot is written as SVG; give a FILE.svg name (convert it with e.g. `rsvg-convert -o plot.png plot.svg`)",
                    p.display()
                );
            }
        }
        if let Some(p) = &self.report {
            crate::checks::writable(p, "--report")?;
        }
        crate::checks::distinct_outputs(&self.files())
    }

    /// The files these flags write, each with its flag (checked against a command's other
    /// outputs: two on one file are refused).
    pub(crate) fn files(&self) -> Vec<(&'static str, &Path)> {
        let mut v = Vec::new();
        if let Some(p) = &self.plot {
            v.push(("--plot", p.as_path()));
        }
        if let Some(p) = &self.report {
            v.push(("--report", p.as_path()));
        }
        v
    }
}

/// Prints the comparison (unless `print` is false) and writes its plot and HTML page;
/// `html_section` (explain's) goes at the end of the page.
pub(crate) fn emit(
    report: &CompareReport,
    out: &OutputArgs,
    description: Option<String>,
    html_section: Option<&str>,
    print: bool,
) -> Result<()> {
    let with_effect;
    let report = match out.min_effect {
        Some(pct) => {
            with_effect = report.clone().with_min_effect(pct / 100.0);
            &with_effect
        }
        None => report,
    };
    let printed: &dyn OutputFormat = if out.json {
        &Json
    } else if out.csv {
        &Csv
    } else {
        &Table
    };
    if print {
        print!("{}", printed.render(report)?);
    }
    if let Some(p) = &out.plot {
        let kind = if out.absolute {
            PlotKind::Absolute
        } else {
            PlotKind::Ratio
        };
        write_output(report, &Plot { kind }, p, "--plot")?;
        eprintln!("plot: {}", p.display());
    }
    if let Some(p) = &out.report {
        let meta = PageMeta {
            version: format!(
                "{} (commit {})",
                env!("CARGO_PKG_VERSION"),
                env!("SCHEDLAB_COMMIT")
            ),
            command: command_line(),
            description,
        };
        let mut page = Html { meta }.render(report)?;
        if let Some(sec) = html_section {
            match page.rfind("</body>") {
                Some(i) => page.insert_str(i, sec),
                None => page.push_str(sec),
            }
        }
        crate::checks::write_atomic(p, &page, "--report")?;
        eprintln!("report: {}", p.display());
    }
    Ok(())
}

/// Renders `format` into the file `path` that `flag` named.
fn write_output(
    report: &CompareReport,
    format: &dyn OutputFormat,
    path: &Path,
    flag: &str,
) -> Result<()> {
    let text = format.render(report)?;
    crate::checks::write_atomic(path, &text, flag)
}

/// The command line as typed, each argument quoted for a POSIX shell where it needs it.
fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(i, a)| {
            let a = if i == 0 { "schedlab".to_string() } else { a };
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.,:=/+@%".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
