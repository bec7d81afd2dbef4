//! Distance classes between two CPUs, nearest first.
//!
//! The machine profile prices data and cache lines by these classes (`refetch_<class>_ns`,
//! `<class>_ns_per_byte`), `schedlab-topo` computes the class of two CPUs of a topology, and
//! the host calibration measures one CPU pair per class. One definition keeps the three
//! agreeing on what "cross_llc" means.

use std::fmt;

/// How far apart two CPUs are, nearest first (the order is the derive's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DistanceClass {
    /// The same CPU.
    Same,
    /// SMT siblings of one core.
    Smt,
    /// Different cores sharing the last-level cache.
    Llc,
    /// Different LLCs of one NUMA node.
    CrossLlc,
    /// Different NUMA nodes.
    CrossNode,
}

impl DistanceClass {
    /// Every class, nearest first.
    pub const ALL: [DistanceClass; 5] = [
        DistanceClass::Same,
        DistanceClass::Smt,
        DistanceClass::Llc,
        DistanceClass::CrossLlc,
        DistanceClass::CrossNode,
    ];

    /// The classes of two different CPUs (every class but [`DistanceClass::Same`]).
    pub const BETWEEN_CPUS: [DistanceClass; 4] = [
        DistanceClass::Smt,
        DistanceClass::Llc,
        DistanceClass::CrossLlc,
        DistanceClass::CrossNode,
    ];

    /// The name used in profile keys: `same_cpu`, `smt`, `llc`, `cross_llc`, `cross_node`.
    pub fn key(self) -> &'static str {
        match self {
            DistanceClass::Same => "same_cpu",
            DistanceClass::Smt => "smt",
            DistanceClass::Llc => "llc",
            DistanceClass::CrossLlc => "cross_llc",
            DistanceClass::CrossNode => "cross_node",
        }
    }
}

impl fmt::Display for DistanceClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_first_and_keys() {
        let mut v = DistanceClass::ALL;
        v.sort();
        assert_eq!(v, DistanceClass::ALL);
        assert_eq!(&DistanceClass::ALL[1..], &DistanceClass::BETWEEN_CPUS);
        let keys: Vec<_> = DistanceClass::ALL.iter().map(|c| c.key()).collect();
        assert_eq!(keys, ["same_cpu", "smt", "llc", "cross_llc", "cross_node"]);
    }
}
