//! The two load figures the placement functions share: half a domain's imbalance_pct
//! (`wake_affine`, passive balancing, `find_idlest_group`) and a CPU's load per task (the
//! kernel's `cpu_avg_load_per_task`, 2.6.x `wake_affine`'s last clause). Not a kernel
//! function of its own: both are expressions the kernel writes inline.

use crate::machine::Machine;
use schedlab_topo::{CpuId, SchedDomain};

/// Half of the domain's imbalance percentage above 100 (`100 + (pct - 100) / 2`).
pub(crate) fn half_imb(sd: &SchedDomain) -> i64 {
    100 + (sd.imbalance_pct as i64 - 100) / 2
}

/// `cpu_avg_load_per_task`: the CPU's load divided by its tasks (0 when empty).
pub(crate) fn tl_per_task<M: Machine>(m: &M, cpu: CpuId) -> i64 {
    let nr = m.nr_running(cpu) as i64;
    if nr > 0 {
        m.cpu_load(cpu) as i64 / nr
    } else {
        0
    }
}
