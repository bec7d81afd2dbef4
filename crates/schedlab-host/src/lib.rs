//! schedlab-host: the real-host harness. It runs the simulator's benchmarks for real on this
//! machine ([`run_workload`]), runs the original tools where installed (`external`), records
//! the kernel's own scheduling events ([`capture`]), and measures the machine's costs into a
//! profile the simulator reads ([`calibrate`]).
//!
//! Invariant: this crate never depends on the simulator (engine, policies, workloads); it
//! shares only the result format and the benchmarks' native output formats
//! (`schedlab_metrics`), and the trace format (`schedlab_trace`). Linux only.
//!
//! Every run is bounded by a timeout and by [`request_cancel`] (the CLI's Ctrl-C), and stops
//! and reaps every thread, process and socket it started however it ends.
#![warn(missing_docs)]

mod bench;
mod calibrate;
mod capture;
mod control;
mod error;
mod external;
mod kernel;
mod schedstat;
mod spec;
mod sys;
mod tracefs_state;

pub use calibrate::{CalibrateOptions, Calibration, HostCpus, Measurement, calibrate};
pub use capture::{
    CaptureOptions, CaptureSummary, EVENTS, capture, capture_with, output_files, tracefs_available,
    tracefs_root,
};
pub use control::{cancel_requested, clear_cancel, request_cancel};
pub use error::HostError;
pub use kernel::{HostKernel, Sourced, host_kernel};
pub use schedstat::{PROC_SCHEDSTAT, read_schedstat, schedstat_delta};
pub use spec::{WORKLOADS, WorkloadSpec};

use schedlab_metrics::BenchResult;
use schedlab_metrics::native;
use std::time::{Duration, Instant};

/// How to run a workload on the host.
#[derive(Clone, Debug)]
pub struct HostRunOptions {
    /// Upper bound on the whole run; past it everything is stopped and
    /// [`HostError::Timeout`] returned.
    pub timeout: Duration,
    /// Run the real tool (rt-tests hackbench, perf bench, tbench, pgbench) instead of the
    /// built-in implementation.
    pub external: bool,
}

impl Default for HostRunOptions {
    fn default() -> Self {
        HostRunOptions {
            timeout: Duration::from_secs(120),
            external: false,
        }
    }
}

/// One real run.
#[derive(Clone, Debug)]
pub struct HostRun {
    /// The result in the format the simulator uses (native text included).
    pub result: BenchResult,
    /// Wall time of the whole call (set-up and tear-down included).
    pub wall: Duration,
}

/// Runs the workload `spec` (`NAME[:key=value,...]`, the simulator's syntax, names and
/// parameters) on this machine.
pub fn run_workload(spec: &str, opts: &HostRunOptions) -> Result<HostRun, HostError> {
    let t0 = Instant::now();
    let ws = WorkloadSpec::parse(spec)?;
    if control::cancel_requested() {
        return Err(HostError::Cancelled {
            what: ws.name.clone(),
        });
    }
    let (params, metrics, native_text) = if opts.external {
        let r = external::run(&ws, opts.timeout)?;
        (r.params, r.metrics, r.native)
    } else {
        run_builtin(&ws, opts.timeout)?
    };
    Ok(HostRun {
        result: BenchResult {
            workload: ws.name,
            params,
            metrics,
            native: native_text,
        },
        wall: t0.elapsed(),
    })
}

type Parts = (
    std::collections::BTreeMap<String, String>,
    Vec<schedlab_metrics::Metric>,
    String,
);

fn run_builtin(ws: &WorkloadSpec, limit: Duration) -> Result<Parts, HostError> {
    let mut p = spec::Params::new(ws);
    match ws.name.as_str() {
        "hackbench" => {
            let hp = bench::hackbench::HackbenchParams::read(&mut p)?;
            let params = p.finish()?;
            let r = bench::hackbench::run(&hp, limit)?;
            Ok((params, r.metrics(), native::format_hackbench(&r)))
        }
        "pipe" => {
            let pp = bench::pipe::PipeParams::read(&mut p)?;
            let params = p.finish()?;
            let r = bench::pipe::run(&pp, limit)?;
            Ok((params, r.metrics(), native::format_perf_pipe(&r)))
        }
        "tbench" => {
            let tp = bench::tbench::TbenchParams::read(&mut p)?;
            let params = p.finish()?;
            let r = bench::tbench::run(&tp, limit)?;
            Ok((params, r.metrics(), native::format_tbench(&r)))
        }
        "schbench" => {
            let sp = bench::schbench::SchbenchParams::read(&mut p)?;
            let params = p.finish()?;
            match bench::schbench::run(&sp, limit)? {
                bench::schbench::SchbenchReport::Old(r) => {
                    Ok((params, r.metrics(), native::format_schbench_old(&r)))
                }
                bench::schbench::SchbenchReport::V1(r) => {
                    Ok((params, r.metrics(), native::format_schbench_v1(&r)))
                }
            }
        }
        "pgbench" => {
            // Check the keys first so a typo is reported before the missing implementation.
            external::PgbenchParams::read(&mut p)?;
            p.finish()?;
            Err(HostError::ExternalUnavailable {
                tool: "pgbench (built-in)".into(),
                hint: "pgbench has no built-in implementation; run it with --external (starts a \
                       throwaway PostgreSQL on 127.0.0.1)"
                    .into(),
            })
        }
        other => Err(HostError::UnknownWorkload {
            name: other.into(),
            suggestion: None,
            known: WORKLOADS.join(", "),
        }),
    }
}
