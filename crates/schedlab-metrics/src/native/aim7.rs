//! AIM7 / re-aim-7: the `Max Jobs per Minute` headline. The layout is **recalled**.

use super::{NativeError, NativeFormat, find_line, metric, num, re};
use crate::result::{Better, Metric};
use regex::Regex;
use std::sync::LazyLock;

/// An AIM7/re-aim-7 run's headline (recalled format).
#[derive(Clone, Debug, PartialEq)]
pub struct Aim7Report {
    /// Peak jobs per minute over the user counts (2 decimals).
    pub max_jobs_per_min: f64,
}

impl Aim7Report {
    /// `jobs_per_min` (higher is better).
    pub fn metrics(&self) -> Vec<Metric> {
        vec![metric(
            "jobs_per_min",
            self.max_jobs_per_min,
            "jobs/min",
            Better::Higher,
        )]
    }
}

/// AIM7's headline line for `r` (recalled).
pub fn format_aim7(r: &Aim7Report) -> String {
    format!("Max Jobs per Minute {:.2}\n", r.max_jobs_per_min)
}

static AIM_MAX: LazyLock<Regex> = LazyLock::new(|| re(r"Max Jobs per Minute\s+([0-9.]+)"));

/// Reads AIM7's `Max Jobs per Minute` line.
pub fn parse_aim7(text: &str) -> Result<Aim7Report, NativeError> {
    const T: &str = "aim7";
    let (line, c) = find_line(text, &AIM_MAX).ok_or(NativeError::Missing {
        tool: T,
        what: "Max Jobs per Minute",
    })?;
    Ok(Aim7Report {
        max_jobs_per_min: num(T, line, &c, 1)?,
    })
}

/// The `aim7` format (see [`format_aim7`], [`parse_aim7`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Aim7;

impl NativeFormat for Aim7 {
    const TOOL: &'static str = "aim7";
    type Report = Aim7Report;
    type Parsed = Aim7Report;

    fn format(r: &Self::Report) -> String {
        format_aim7(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_aim7(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        r.clone()
    }

    fn examples() -> Vec<Self::Report> {
        vec![Aim7Report {
            max_jobs_per_min: 12345.67,
        }]
    }
}
