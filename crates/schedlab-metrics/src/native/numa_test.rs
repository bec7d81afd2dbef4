//! numa_test (Erich Focht's NUMA scheduler test, LKML 2002-2003): its summary lines. The layout is
//! **recalled**; the tool is obsolete.

use super::{NativeError, NativeFormat, metric, num, re};
use crate::result::{Better, Metric};
use regex::Regex;
use std::sync::LazyLock;

/// numa_test's summary (recalled from 2002-2003 LKML posts; the tool is obsolete).
#[derive(Clone, Debug, PartialEq)]
pub struct NumaTestReport {
    /// Number of tasks.
    pub tasks: u64,
    /// Average user time per task, seconds.
    pub average_user_s: f64,
    /// Elapsed time, seconds.
    pub elapsed_s: f64,
    /// Total user time, seconds.
    pub total_user_s: f64,
    /// Total system time, seconds.
    pub total_sys_s: f64,
}

impl NumaTestReport {
    /// `elapsed_s` (lower is better), `total_user_s`, `total_sys_s`.
    pub fn metrics(&self) -> Vec<Metric> {
        vec![
            metric("elapsed_s", self.elapsed_s, "s", Better::Lower),
            metric("total_user_s", self.total_user_s, "s", Better::Lower),
            metric("total_sys_s", self.total_sys_s, "s", Better::Lower),
        ]
    }
}

/// numa_test's summary lines for `r` (recalled layout).
pub fn format_numa_test(r: &NumaTestReport) -> String {
    format!(
        "{} tasks\nAverageUserTime {:.2} seconds\nElapsedTime     {:.2}\nTotalUserTime   {:.2}\nTotalSysTime    {:.2}\n",
        r.tasks, r.average_user_s, r.elapsed_s, r.total_user_s, r.total_sys_s
    )
}

static NT_TASKS: LazyLock<Regex> = LazyLock::new(|| re(r"^(\d+) tasks"));
static NT_ROW: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(AverageUserTime|ElapsedTime|TotalUserTime|TotalSysTime)\s+([0-9.]+)"));

/// Reads numa_test's summary; `ElapsedTime` is required.
pub fn parse_numa_test(text: &str) -> Result<NumaTestReport, NativeError> {
    const T: &str = "numa_test";
    let mut r = NumaTestReport {
        tasks: 0,
        average_user_s: 0.0,
        elapsed_s: 0.0,
        total_user_s: 0.0,
        total_sys_s: 0.0,
    };
    let mut elapsed = false;
    for (i, l) in text.lines().enumerate() {
        if let Some(c) = NT_TASKS.captures(l) {
            r.tasks = num(T, i + 1, &c, 1)?;
        } else if let Some(c) = NT_ROW.captures(l) {
            let v = num(T, i + 1, &c, 2)?;
            match &c[1] {
                "AverageUserTime" => r.average_user_s = v,
                "ElapsedTime" => {
                    elapsed = true;
                    r.elapsed_s = v;
                }
                "TotalUserTime" => r.total_user_s = v,
                _ => r.total_sys_s = v,
            }
        }
    }
    if !elapsed {
        return Err(NativeError::Missing {
            tool: T,
            what: "ElapsedTime",
        });
    }
    Ok(r)
}

/// The `numa_test` format (see [`format_numa_test`], [`parse_numa_test`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct NumaTest;

impl NativeFormat for NumaTest {
    const TOOL: &'static str = "numa_test";
    type Report = NumaTestReport;
    type Parsed = NumaTestReport;

    fn format(r: &Self::Report) -> String {
        format_numa_test(r)
    }

    fn parse(text: &str) -> Result<Self::Parsed, NativeError> {
        parse_numa_test(text)
    }

    fn read_back(r: &Self::Report) -> Self::Parsed {
        r.clone()
    }

    fn examples() -> Vec<Self::Report> {
        vec![NumaTestReport {
            tasks: 8,
            average_user_s: 12.5,
            elapsed_s: 15.75,
            total_user_s: 100.0,
            total_sys_s: 0.25,
        }]
    }
}
