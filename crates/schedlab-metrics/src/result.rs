//! One benchmark run's result, in a shape shared by the simulator's workloads and the
//! real-host harness, so both are reported (and compared) in one format.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Whether a larger value of a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Throughput-like.
    Higher,
    /// Time- or latency-like.
    Lower,
}

/// One named value of a run, e.g. `time_s`, `throughput_mb_s`, `wakeup_lat_p99_us`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Stable machine name (snake_case, unit suffix).
    pub name: String,
    /// Value.
    pub value: f64,
    /// Unit for display (`s`, `MB/s`, `us`, `ops/s`, `tps`, ...).
    pub unit: String,
    /// Direction of goodness.
    pub better: Better,
}

/// What one benchmark run produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// Workload name as in the workload spec (`hackbench`, `pipe`, `tbench`, ...).
    pub workload: String,
    /// Parameters actually used (after defaults), as strings.
    pub params: BTreeMap<String, String>,
    /// The headline metric first, then the others.
    pub metrics: Vec<Metric>,
    /// The result printed in the real tool's own output format.
    pub native: String,
}

impl BenchResult {
    /// The headline metric (the first one).
    pub fn headline(&self) -> Option<&Metric> {
        self.metrics.first()
    }

    /// A metric by name.
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }
}
