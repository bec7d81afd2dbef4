//! Workload models of the benchmarks Linux wake-up placement is judged by, the workload
//! spec syntax `NAME[:key=value,...]`, a TOML workload file format and rt-app import.
//!
//! ```text
//!   "-w tbench:clients=32,duration=2s" ──parse_spec──▶ WorkloadSpec
//!        ──instantiate(topology)──▶ Instance { workload: engine Workload, .. }
//!        ──(caller runs a Simulation)──▶ Instance::result(sim, end) ──▶ BenchResult
//!                                           native text of the real tool + metrics (headline first)
//! ```
//!
//! * [`catalog()`] lists the built-in models, their parameters (names as the real tools
//!   call them), defaults, units and the tool each mirrors;
//! * `file:PATH` reads a TOML workload ([`mod@file`]); `rtapp:PATH` imports rt-app JSON
//!   ([`rtapp`]);
//! * errors ([`WorkloadError`]) name the workload, key, value or file line; a run that
//!   deadlocks is an error naming the blocked tasks.
//!
//! The models build only what the engine interprets: syscall, copy, wakeup and switch
//! costs come from the machine profile, so programs contain just the benchmark's own work.
#![warn(missing_docs)]

mod bounds;
pub mod catalog;
pub mod error;
pub mod file;
mod instance;
mod ir;
mod models;
pub mod replay;
pub mod rtapp;
pub mod spec;

pub use catalog::{ParamInfo, WorkloadInfo, catalog};
pub use error::WorkloadError;
pub use instance::Instance;
pub use spec::{WorkloadSpec, parse_spec};

use schedlab_topo::Topology;

/// Builds the workload `spec` names for the machine `topo` (some defaults depend on its CPU
/// count; affinities and memory nodes are checked against it).
pub fn instantiate(spec: &WorkloadSpec, topo: &Topology) -> Result<Instance, WorkloadError> {
    let mut args = spec::Args::new(spec)?;
    // Every registered model carries its builder (catalog.rs lists them).
    let (workload, report) = (args.info.build)(&mut args, topo)?;
    workload.validate().map_err(|msg| WorkloadError::Invalid {
        workload: workload.name.clone(),
        msg,
    })?;
    bounds::check(&workload).map_err(|e| WorkloadError::Invalid {
        workload: workload.name.clone(),
        msg: e.to_string(),
    })?;
    Ok(Instance {
        workload,
        spec: spec.clone(),
        params: args.used,
        report,
    })
}
