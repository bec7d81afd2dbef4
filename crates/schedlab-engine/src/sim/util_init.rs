//! The initial utilisation of a new task (`post_init_entity_util_avg`, 4.7+).
//!
//! A forked task has no history, so PELT gives it a guess: a share of the CPU's current
//! utilisation in proportion to its weight (`cpu_util · weight / (cpu_load + 1)`), bounded by
//! half of the CPU's spare capacity; on a CPU with no utilisation, half of the whole capacity.
//! The bound matters: without it every fork adds the same half-CPU of utilisation, CPUs that
//! received a few sleeping children all saturate at their capacity, and the fork-time
//! `find_idlest_group` (which breaks ties on utilisation) sees exact ties and sends every
//! later fork to the first group. With it a CPU's utilisation approaches its capacity without
//! reaching it, so the least used group (the one that received fewest or least recent forks)
//! keeps winning and forks spread. Before 4.7 (and on the O(1) class) a new task starts at
//! half a CPU regardless of where it lands \[M\] (`Features::util_init_bounded`).
//!
//! State: reads only: `core` (tasks, CPU utilisation).

use super::Simulation;
use crate::pelt;
use crate::task::TaskId;
use schedlab_topo::CpuId;

impl Simulation {
    /// The PELT util sum a new task `t` starts with on `cpu` (before it is attached there).
    pub(super) fn initial_util_sum(&self, t: TaskId, cpu: CpuId) -> f64 {
        let full = pelt::divider(self.core.now);
        if !self.core.cfg.features.util_init_bounded {
            return full / 2.0;
        }
        let view = self.view();
        let cap = view.capacity(cpu) as f64;
        let cpu_util = view.cpu_util(cpu) as f64;
        let spare_half = ((cap - cpu_util) / 2.0).max(0.0);
        let util = if cpu_util > 0.0 {
            let load = view.cpu_load(cpu) as f64;
            (cpu_util * self.core.tasks[t].weight as f64 / (load + 1.0)).min(spare_half)
        } else {
            spare_half
        };
        full * util / 1024.0
    }
}
