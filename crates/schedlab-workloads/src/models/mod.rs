//! The built-in benchmark models, one model per benchmark (each documented in
//! `docs/workloads/`; a benchmark's former names are refused through
//! `schedlab_vocab::retired`), and the small helpers they share.
//!
//! Each `build` reads its parameters through [`crate::spec::Args`], declares the engine
//! objects (channels, futexes, barriers, counters, histograms) and task programs, and
//! returns the [`Workload`] with a [`Report`] that reads the finished run back. Programs are
//! kept tight (loops, no per-message bookkeeping) because the large runs (hackbench with
//! 400 groups × 400 loops = 64 M messages) are dominated by the interpreter.

pub(crate) mod aim7;
pub(crate) mod hackbench;
pub(crate) mod kernbench;
pub(crate) mod lmbench;
pub(crate) mod numa;
pub(crate) mod pgbench;
pub(crate) mod pipe;
pub(crate) mod rr;
pub(crate) mod schbench;
pub(crate) mod sysbench;
pub(crate) mod tbench;

use crate::catalog::WorkloadInfo;
use crate::instance::Report;
use schedlab_engine::Workload;
use schedlab_engine::task::Slot;
use std::sync::Arc;

/// Every registered model, in display order: one line per model, whose entry (parameters,
/// defaults, help, builder) lives in the model's own file.
pub(crate) static CATALOG: &[WorkloadInfo] = &[
    hackbench::INFO,
    pipe::INFO,
    tbench::INFO,
    rr::NETPERF_RR,
    pgbench::INFO,
    sysbench::INFO,
    schbench::INFO,
    aim7::INFO,
    kernbench::INFO,
    numa::INFO,
    lmbench::LMBENCH_BW,
    lmbench::LAT_CTX,
    crate::file::INFO,
    crate::rtapp::INFO,
];

/// What every model's `build` returns.
pub(crate) type Built = (Workload, Arc<dyn Report>);

/// The task slot never stamped by any model: `RecordSince` from it records absolute time.
pub(crate) const ABS: Slot = Slot::Task(7);

pub(crate) use crate::bounds::MAX_TASKS;

/// Nanoseconds to seconds.
pub(crate) fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}
