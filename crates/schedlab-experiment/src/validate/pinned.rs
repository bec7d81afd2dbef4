//! The pinned-pair run (Q1): one pipe ping-pong pair with both tasks pinned to CPU 0
//! (stacked), or to CPU 0 and the first CPU of another LLC (split). Not a comparison of
//! policies, so it has its own runner: the two placements under one variant.

use crate::error::ExperimentError;
use crate::simulate::SimRecipe;
use schedlab_engine::bench::pingpong_pairs;
use schedlab_engine::{EndReason, MachineProfile, SimOptions};
use schedlab_topo::CpuId;
use std::sync::Arc;

/// ns per round trip of the stacked and the split placement on `preset` under `variant`.
pub fn pinned_pair(preset: &str, variant: &str, loops: u64) -> Result<(f64, f64), ExperimentError> {
    let topo = Arc::new(
        schedlab_topo::preset(preset)
            .ok_or_else(|| ExperimentError::Input(format!("unknown preset {preset}")))?,
    );
    let cpu0 = CpuId::new(0);
    let other_llc = topo
        .cpu_ids()
        .find(|&c| !topo.cpus_share_cache(cpu0, c))
        .ok_or_else(|| ExperimentError::Input(format!("{preset} has a single LLC")))?;
    let mut out = [0.0; 2];
    for (i, (a, b)) in [(cpu0, cpu0), (cpu0, other_llc)].into_iter().enumerate() {
        let mut w = pingpong_pairs(1, 0, loops, None);
        let n = topo.nr_cpus();
        w.specs[0].affinity = Some(schedlab_topo::CpuSet::from_cpus(n, [a]));
        w.specs[1].affinity = Some(schedlab_topo::CpuSet::from_cpus(n, [b]));
        let recipe = SimRecipe::new(variant, topo.clone(), MachineProfile::for_preset(preset), 1)?;
        let (sim, end) = recipe.run(w, SimOptions::default())?;
        if end != EndReason::AllExited {
            return Err(ExperimentError::Run(format!(
                "pinned pair on {preset} ended with {end:?}"
            )));
        }
        out[i] = sim.now() as f64 / loops as f64;
    }
    Ok((out[0], out[1]))
}
