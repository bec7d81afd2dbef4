//! A workload instantiated for one machine ([`Instance`]): the engine [`Workload`] to run,
//! and what is needed to turn the finished run into the benchmark's own result.
//!
//! ```text
//!   WorkloadSpec ─instantiate(topo)─▶ Instance { workload, report }
//!                                        │  (the caller builds a Simulation and runs it)
//!   Simulation + EndReason ──result()──▶ BenchResult { native text, metrics (headline first) }
//! ```

use crate::error::WorkloadError;
use crate::spec::WorkloadSpec;
use hdrhistogram::Histogram;
use schedlab_engine::{EndReason, Simulation, Workload};
use schedlab_metrics::{BenchResult, Better, Metric};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// What a model knows about reading its own results.
pub(crate) trait Report: Send + Sync {
    /// The headline metric's name and direction.
    fn headline(&self) -> (String, Better);
    /// Whether the run is meant to stop at the workload's duration (rather than when every
    /// task has exited).
    fn duration_based(&self) -> bool;
    /// The native text and the metrics (headline first) of a run that ended as expected.
    fn extract(&self, sim: &Simulation) -> Result<(String, Vec<Metric>), WorkloadError>;
}

/// A workload built for one machine, ready to run.
#[derive(Clone)]
pub struct Instance {
    /// The engine workload: give it to `Simulation::new`.
    pub workload: Workload,
    /// The spec it was built from.
    pub spec: WorkloadSpec,
    /// Every parameter's value as used (defaults and `auto` resolved).
    pub params: BTreeMap<String, String>,
    pub(crate) report: Arc<dyn Report>,
}

impl fmt::Debug for Instance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Instance")
            .field("spec", &self.spec.to_string())
            .field("params", &self.params)
            .field("tasks_at_start", &self.workload.initial.len())
            .field("templates", &self.workload.specs.len())
            .field("channels", &self.workload.channels.len())
            .finish()
    }
}

impl Instance {
    /// Turns a finished run into the benchmark's result (native text + metrics, headline
    /// first). A deadlock, or a run cut short before the benchmark finished, is an error.
    pub fn result(&self, sim: &Simulation, end: &EndReason) -> Result<BenchResult, WorkloadError> {
        let workload = self.spec.name.clone();
        match end {
            EndReason::Deadlock(blocked) => {
                return Err(WorkloadError::Deadlock {
                    workload: self.workload.name.clone(),
                    blocked: blocked.clone(),
                });
            }
            EndReason::EventLimit => {
                return Err(WorkloadError::Incomplete {
                    workload,
                    reason: "the event limit was reached".into(),
                });
            }
            EndReason::TimeUp if !self.report.duration_based() => {
                return Err(WorkloadError::Incomplete {
                    workload,
                    reason: format!(
                        "the time limit was reached at {:.3} s before every task exited",
                        sim.now() as f64 / 1e9
                    ),
                });
            }
            _ => {}
        }
        let (native, metrics) = self.report.extract(sim)?;
        Ok(BenchResult {
            workload,
            params: self.params.clone(),
            metrics,
            native,
        })
    }

    /// The headline metric's name and direction, known before running (for comparison tables).
    pub fn headline(&self) -> (String, Better) {
        self.report.headline()
    }
}

/// The earliest sample of a histogram whose samples are absolute times (recorded with
/// `RecordSince` from a never-stamped task slot), in ns; `None` if nothing was recorded.
/// Precision: the histogram's 3 significant digits, i.e. ±0.05 % of the time itself.
pub(crate) fn first_abs_time(h: &Histogram<u64>) -> Option<u64> {
    (!h.is_empty()).then(|| h.median_equivalent(h.min()))
}

/// The latest sample of such a histogram, in ns.
pub(crate) fn last_abs_time(h: &Histogram<u64>) -> Option<u64> {
    (!h.is_empty()).then(|| h.median_equivalent(h.max()))
}

/// Percentile `q` (0..=100) of a latency histogram in ns, as whole microseconds.
pub(crate) fn pct_us(h: &Histogram<u64>, q: f64) -> u64 {
    if h.is_empty() {
        return 0;
    }
    (h.median_equivalent(h.value_at_quantile(q / 100.0)) as f64 / 1e3).round() as u64
}

/// A histogram's smallest and largest samples, whole microseconds.
pub(crate) fn min_max_us(h: &Histogram<u64>) -> (u64, u64) {
    if h.is_empty() {
        return (0, 0);
    }
    (
        (h.median_equivalent(h.min()) as f64 / 1e3).round() as u64,
        (h.median_equivalent(h.max()) as f64 / 1e3).round() as u64,
    )
}

/// A metric (for the few values the native reports do not name).
pub(crate) fn metric(name: &str, value: f64, unit: &str, better: Better) -> Metric {
    Metric {
        name: name.into(),
        value,
        unit: unit.into(),
        better,
    }
}

/// The missing-sample error of a model whose run produced no measurement.
pub(crate) fn no_samples(workload: &str, what: &str) -> WorkloadError {
    WorkloadError::Incomplete {
        workload: workload.into(),
        reason: format!("the run recorded no {what}"),
    }
}
