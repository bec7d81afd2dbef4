//! The cost arithmetic: what moving data and working sets between CPUs costs, by how far
//! apart they are (the machine profile's per-distance costs), and the kernel work of a
//! channel operation.

use super::Simulation;
use crate::ipc::ChannelKind;
use crate::task::TaskId;
use schedlab_topo::{CpuId, Topology};

/// Per-byte (or per-line) costs by how far apart two CPUs are.
pub(super) struct ByDistance {
    same: f64,
    smt: f64,
    llc: f64,
    cross_llc: f64,
    cross_node: f64,
}

/// How far apart two CPUs are, for the per-distance costs.
#[derive(Clone, Copy)]
pub(super) enum Distance {
    Same,
    Smt,
    Llc,
    CrossLlc,
    /// Another node, at this SLIT distance.
    CrossNode(f64),
}

impl Distance {
    pub(super) fn of(topo: &Topology, a: CpuId, b: CpuId) -> Distance {
        if a == b {
            Distance::Same
        } else if topo.cpus_share_core(a, b) {
            Distance::Smt
        } else if topo.cpus_share_cache(a, b) {
            Distance::Llc
        } else if topo.cpu(a).node == topo.cpu(b).node {
            Distance::CrossLlc
        } else {
            Distance::CrossNode(topo.cpu_distance(a, b) as f64)
        }
    }
}

impl ByDistance {
    /// The cost at distance `d` (cross-node scaled by the node distance / 20).
    pub(super) fn at(&self, d: Distance) -> f64 {
        match d {
            Distance::Same => self.same,
            Distance::Smt => self.smt,
            Distance::Llc => self.llc,
            Distance::CrossLlc => self.cross_llc,
            Distance::CrossNode(slit) => self.cross_node * slit / 20.0,
        }
    }
}

impl Simulation {
    /// The profile's cost of fetching one cache line from a CPU at each distance.
    pub(super) fn refetch_per_line(&self) -> ByDistance {
        let c = &self.profile.cache;
        ByDistance {
            same: 0.0,
            smt: c.refetch_smt_ns,
            llc: c.refetch_llc_ns,
            cross_llc: c.refetch_cross_llc_ns,
            cross_node: c.refetch_cross_node_ns,
        }
    }

    /// Per-byte cost of reading data written on another CPU, by distance.
    pub(super) fn transfer_per_byte(&self) -> ByDistance {
        let t = &self.profile.transfer;
        ByDistance {
            same: t.same_cpu_ns_per_byte,
            smt: t.smt_ns_per_byte,
            llc: t.llc_ns_per_byte,
            cross_llc: t.cross_llc_ns_per_byte,
            cross_node: t.cross_node_ns_per_byte,
        }
    }

    pub(super) fn refetch_cost(&self, t: TaskId, cpu: CpuId) -> f64 {
        let task = &self.tasks[t];
        let c = &self.profile.cache;
        let lines = task.ws_bytes as f64 / c.line_bytes as f64;
        if lines == 0.0 {
            return 0.0;
        }
        let Some(last) = task.last_ran_cpu else {
            return 0.0;
        };
        let off_us = (self.now - task.last_ran_end) as f64 / 1e3;
        let hot = libm::exp2(-off_us / c.hot_half_life_us);
        // What is still hot near the CPU is cheap to refetch only on this CPU or an SMT
        // sibling; beyond, the whole working set moves at the distance's per-line cost.
        let per_line = if last == cpu {
            (1.0 - hot) * c.refetch_llc_ns
        } else if self.topo.cpus_share_core(last, cpu) {
            hot * c.refetch_smt_ns + (1.0 - hot) * c.refetch_llc_ns
        } else {
            self.refetch_per_line()
                .at(Distance::of(&self.topo, last, cpu))
        };
        lines * per_line
    }

    /// Kernel work of one channel operation beyond the syscall and the copy; a TCP send
    /// also runs the loopback delivery on the sender's CPU.
    pub(super) fn channel_op_ns(&self, ch: usize, send: bool) -> f64 {
        let t = &self.profile.transfer;
        (match self.channels[ch].kind {
            ChannelKind::Pipe { .. } => t.pipe_op_ns,
            ChannelKind::Unix { .. } => t.unix_op_ns,
            ChannelKind::Tcp { .. } => t.tcp_op_ns + if send { t.tcp_delivery_ns } else { 0 },
        }) as f64
    }
}
