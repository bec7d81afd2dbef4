//! The cost arithmetic: what moving data and working sets between CPUs costs, by how far
//! apart they are (the machine profile's per-distance costs), and the kernel work of a
//! channel operation.
//!
//! State: reads only: `core` (topology, profile, tasks) and `objects` (a channel's kind).

use super::Simulation;
use crate::ipc::ChannelKind;
use crate::task::TaskId;
use schedlab_topo::{CpuId, DistanceClass, Topology};

/// How far apart two CPUs are: the shared distance class, and the SLIT distance that scales
/// the cross-node costs.
#[derive(Clone, Copy)]
pub(super) struct Distance {
    class: DistanceClass,
    slit: f64,
}

impl Distance {
    pub(super) fn of(topo: &Topology, a: CpuId, b: CpuId) -> Distance {
        let class = topo.distance_class(a, b);
        let slit = if class == DistanceClass::CrossNode {
            topo.cpu_distance(a, b) as f64
        } else {
            0.0
        };
        Distance { class, slit }
    }
}

impl Simulation {
    /// The profile's cost of fetching one cache line from a CPU at distance `d`.
    pub(super) fn refetch_per_line(&self, d: Distance) -> f64 {
        self.core.profile.cache.refetch_ns(d.class, d.slit)
    }

    /// Per-byte cost of reading data written on a CPU at distance `d`.
    pub(super) fn transfer_per_byte(&self, d: Distance) -> f64 {
        self.core.profile.transfer.ns_per_byte(d.class, d.slit)
    }

    pub(super) fn refetch_cost(&self, t: TaskId, cpu: CpuId) -> f64 {
        let task = &self.core.tasks[t];
        let c = &self.core.profile.cache;
        let lines = task.ws_bytes as f64 / c.line_bytes as f64;
        if lines == 0.0 {
            return 0.0;
        }
        let Some(last) = task.last_ran_cpu else {
            return 0.0;
        };
        // The hot fraction (an `exp2`, one of the costlier calls of a switch) matters only
        // on this CPU or an SMT sibling, so it is computed only there.
        let hot = || {
            let off_us = (self.core.now - task.last_ran_end) as f64 / 1e3;
            libm::exp2(-off_us / c.hot_half_life_us)
        };
        // What is still hot near the CPU is cheap to refetch only on this CPU or an SMT
        // sibling; beyond, the whole working set moves at the distance's per-line cost.
        let per_line = if last == cpu {
            (1.0 - hot()) * c.refetch_llc_ns
        } else if self.core.topo.cpus_share_core(last, cpu) {
            let hot = hot();
            hot * c.refetch_smt_ns + (1.0 - hot) * c.refetch_llc_ns
        } else {
            self.refetch_per_line(Distance::of(&self.core.topo, last, cpu))
        };
        lines * per_line
    }

    /// Kernel work of one channel operation beyond the syscall and the copy; a TCP send
    /// also runs the loopback delivery on the sender's CPU.
    pub(super) fn channel_op_ns(&self, ch: usize, send: bool) -> f64 {
        let t = &self.core.profile.transfer;
        (match self.objects.channels[ch].kind {
            ChannelKind::Pipe { .. } => t.pipe_op_ns,
            ChannelKind::Unix { .. } => t.unix_op_ns,
            ChannelKind::UnixDgram { .. } => t.unix_op_ns,
            // UDP shares TCP's costs: the profile has one set for the inet loopback path.
            ChannelKind::Tcp { .. } | ChannelKind::Udp => {
                t.tcp_op_ns + if send { t.tcp_delivery_ns } else { 0 }
            }
        }) as f64
    }
}
