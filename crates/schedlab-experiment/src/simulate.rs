//! The one way to build and run a simulation: a variant's scheduler config, placement policy
//! and balancer (`schedlab_policies::build`), a machine and its profile, then
//! [`Simulation::new`] and [`Simulation::run`]. `compare`, the pinned-pair validation,
//! `schedlab bench` and the host check all go through [`SimRecipe`].

use crate::error::ExperimentError;
use schedlab_engine::{EndReason, MachineProfile, SimOptions, Simulation, Workload};
use schedlab_policies::Built;
use schedlab_topo::Topology;
use std::sync::Arc;

/// A variant built for a machine, ready to make simulations of workloads.
pub struct SimRecipe {
    topo: Arc<Topology>,
    profile: MachineProfile,
    built: Built,
}

impl SimRecipe {
    /// Builds `variant` for `topo` (its policy's random stream seeded by `seed`) with the
    /// machine profile `profile`.
    pub fn new(
        variant: &str,
        topo: Arc<Topology>,
        profile: MachineProfile,
        seed: u64,
    ) -> Result<SimRecipe, ExperimentError> {
        let built = schedlab_policies::build(variant, &topo, seed)
            .map_err(|e| ExperimentError::Input(e.to_string()))?;
        Ok(SimRecipe {
            topo,
            profile,
            built,
        })
    }

    /// The variant's canonical name.
    pub fn name(&self) -> &str {
        &self.built.name
    }

    /// The simulation of `workload` under this recipe, not yet run.
    pub fn build(
        self,
        workload: Workload,
        opts: SimOptions,
    ) -> Result<Simulation, ExperimentError> {
        let Built {
            config,
            policy,
            balancer,
            ..
        } = self.built;
        Simulation::new(
            self.topo,
            self.profile,
            config,
            policy,
            balancer,
            workload,
            opts,
        )
        .map_err(|e| ExperimentError::Input(e.to_string()))
    }

    /// Builds the simulation of `workload` and runs it to its end.
    pub fn run(
        self,
        workload: Workload,
        opts: SimOptions,
    ) -> Result<(Simulation, EndReason), ExperimentError> {
        let mut sim = self.build(workload, opts)?;
        let end = sim.run();
        Ok((sim, end))
    }
}
