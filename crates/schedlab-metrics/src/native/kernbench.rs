//! kernbench (Con Kolivas' and Martin Bligh's kernel-compile benchmark): one `Average ... Run (std
//! deviation):` block per load. The layout is **recalled**.

use super::{NativeError, NativeFormat, metric, num, re};
use crate::result::{Better, Metric};
use regex::Regex;
use std::fmt::Write as _;
use std::sync::LazyLock;

/// One kernbench load's averages (recalled format); each value has its standard deviation.
#[derive(Clone, Debug, PartialEq)]
pub struct KernbenchReport {
    /// The load label, e.g. `Optimal load -j 32`.
    pub load: String,
    /// Elapsed time, seconds, and its standard deviation.
    pub elapsed_s: (f64, f64),
    /// User time, seconds.
    pub user_s: (f64, f64),
    /// System time, seconds.
    pub system_s: (f64, f64),
    /// Percent CPU.
    pub percent_cpu: (f64, f64),
    /// Context switches.
    pub context_switches: (f64, f64),
    /// Sleeps.
    pub sleeps: (f64, f64),
}

impl KernbenchReport {
    /// `elapsed_s` (lower is better), `user_s`, `system_s`.
    pub fn metrics(&self) -> Vec<Metric> {
        vec![
            metric("elapsed_s", self.elapsed_s.0, "s", Better::Lower),
            metric("user_s", self.user_s.0, "s", Better::Lower),
            metric("system_s", self.system_s.0, "s", Better::Lower),
        ]
    }
}

/// kernbench's block for each load in `r` (recalled).
pub fn format_kernbench(r: &[KernbenchReport]) -> String {
    let mut s = String::new();
    for k in r {
        let _ = writeln!(s, "Average {} Run (std deviation):", k.load);
        let rows = [
            ("Elapsed Time", k.elapsed_s, 2),
            ("User Time", k.user_s, 2),
            ("System Time", k.system_s, 2),
            ("Percent CPU", k.percent_cpu, 0),
            ("Context Switches", k.context_switches, 0),
            ("Sleeps", k.sleeps, 0),
        ];
        for (name, (v, sd), prec) in rows {
            let _ = writeln!(s, "{name} {v:.prec$} ({sd:.2})");
        }
        s.push('\n');
    }
    s
}

static KB_HEAD: LazyLock<Regex> = LazyLock::new(|| re(r"^Average (.+?) Run \(std deviation\):"));
static KB_ROW: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(Elapsed Time|User Time|System Time|Percent CPU|Context Switches|Sleeps) ([0-9.]+) \(([0-9.]+)\)",
    )
});

/// Reads every `Average ... Run (std deviation):` block of kernbench output (at least one).
pub fn parse_kernbench(text: &str) -> Result<Vec<KernbenchReport>, NativeError> {
    const T: &str = "kernbench";
    let mut out: Vec<KernbenchReport> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if let Some(c) = KB_HEAD.captures(l) {
            out.push(KernbenchReport {
                load: c[1].to_string(),
                elapsed_s: (0.0, 0.0),
                user_s: (0.0, 0.0),
                system_s: (0.0, 0.0),
                percent_cpu: (0.0, 0.0),
                context_switches: (0.0, 0.0),
                sleeps: (0.0, 0.0),
            });
        } else if let (Some(c), Some(k)) = (KB_ROW.captures(l), out.last_mut()) {
            let v = (num(T, i + 1, &c, 2)?, num(T, i + 1, &c, 3)?);
            match &c[1] {
                "Elapsed Time" => k.elapsed_s = v,
                "User Time" => k.user_s = v,
                "System Time" => k.system_s = v,
                "Percent CPU" => k.percent_cpu = v,
                "Context Switches" => k.context_switches = v,
                _ => k.sleeps = v,
            }
        }
    }
    if out.is_empty() {
        return Err(NativeError::Missing {
            tool: T,
            what: "Average ... Run",
        });
    }
    Ok(out)
}

/// The `kernbench` format (see [`format_kernbench`], [`parse_kernbench`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Kernbench;

impl NativeFormat for Kernbench {
    const TOOL: &'static str = "kernbench";
    type Report = Vec<KernbenchReport>;
    type Parsed = Vec<KernbenchReport>;

    fn format(r: &Self::Report) -> String {
        format_kernbench(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_kernbench(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        r.clone()
    }

    fn examples() -> Vec<Self::Report> {
        vec![vec![
            KernbenchReport {
                load: "Half load -j 16".into(),
                elapsed_s: (80.5, 0.3),
                user_s: (600.25, 1.5),
                system_s: (55.0, 0.25),
                percent_cpu: (810.0, 2.0),
                context_switches: (50000.0, 120.0),
                sleeps: (70000.0, 300.0),
            },
            KernbenchReport {
                load: "Optimal load -j 128".into(),
                elapsed_s: (45.23, 0.21),
                user_s: (620.12, 1.02),
                system_s: (60.33, 0.44),
                percent_cpu: (1504.0, 3.2),
                context_switches: (123456.0, 789.0),
                sleeps: (98765.0, 432.0),
            },
        ]]
    }
}
