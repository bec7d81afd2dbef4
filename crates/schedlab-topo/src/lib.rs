//! Machine topology for schedlab: CPUs, SMT cores, clusters, LLCs, packages and NUMA
//! nodes ([`Topology`]), and the kernel's sched-domain tree built from it
//! ([`SchedDomains`]).
//!
//! Every other part of schedlab names a machine through this crate, with one string:
//! [`spec::parse_topology`] turns `--topology SPEC` (a [`mod@presets`] name, a compact
//! `NnLlCcTt` string, a `numactl --hardware`/`lscpu` file, or `host` read from
//! [`sysfs`]) into a [`Topology`]. See ARCHITECTURE.md.
//!
//! ```
//! use schedlab_topo::{CpuId, DomainEra, SchedDomains, spec};
//! let t = spec::parse_topology("westmere-2s20c", &Default::default()).unwrap();
//! let siblings: Vec<usize> = t.smt_siblings(CpuId::new(3)).indices();
//! assert_eq!(siblings, vec![3, 23]);
//! let sd = SchedDomains::build(&t, DomainEra::Linux510);
//! assert_eq!(sd.sd_llc(CpuId::new(0)).unwrap().span_weight, 20);
//! ```
#![warn(missing_docs)]

pub mod cpulist;
pub mod cpuset;
pub mod domains;
pub mod json;
pub mod lscpu;
pub mod model;
pub mod numactl;
pub mod presets;
pub mod spec;
pub mod sysfs;

pub use cpuset::{CpuId, CpuRange, CpuSet};
pub use domains::{DomainEra, DomainLevel, SchedDomain, SchedDomains, SdFlags};
pub use model::{CpuInfo, CpuPlacement, DEFAULT_CAPACITY, Topology, TopologyError};
pub use presets::{Preset, preset, presets};
pub use schedlab_vocab::DistanceClass;
pub use spec::{TopoSpecError, TopologyOptions, parse_topology};

/// A regular machine: `nodes` × `llcs_per_node` × `cores_per_llc` × `threads` with the
/// Intel-style numbering (thread t of core c is CPU `c + t * nr_cores`) when
/// `siblings_far` is true, else adjacent numbering (`c * threads + t`). One package per
/// node; distances 10 local / 20 remote. Used by presets, compact strings and tests.
pub fn regular(
    name: &str,
    source: &str,
    nodes: usize,
    llcs_per_node: usize,
    cores_per_llc: usize,
    threads: usize,
    siblings_far: bool,
) -> Result<Topology, TopologyError> {
    let too_large = || TopologyError::TooLarge {
        max: cpulist::MAX_CPUS,
    };
    let nr_cores = nodes
        .checked_mul(llcs_per_node)
        .and_then(|v| v.checked_mul(cores_per_llc))
        .ok_or_else(too_large)?;
    if nr_cores
        .checked_mul(threads)
        .is_none_or(|n| n > cpulist::MAX_CPUS)
    {
        return Err(too_large());
    }
    let mut placements = Vec::with_capacity(nr_cores * threads);
    for core in 0..nr_cores {
        let llc = core / cores_per_llc.max(1);
        let node = llc / llcs_per_node.max(1);
        for t in 0..threads {
            let cpu = if siblings_far {
                core + t * nr_cores
            } else {
                core * threads + t
            };
            placements.push(CpuPlacement {
                cpu: CpuId::new(cpu),
                core,
                cluster: None,
                llc,
                package: node,
                node,
                capacity: DEFAULT_CAPACITY,
            });
        }
    }
    let distances = (0..nodes)
        .map(|i| (0..nodes).map(|j| if i == j { 10 } else { 20 }).collect())
        .collect();
    Topology::from_cpus(name, source, placements, distances)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn westmere_2s_domains() {
        let t = regular("w", "test", 2, 1, 10, 2, true).unwrap();
        assert_eq!(t.nr_cpus(), 40);
        assert_eq!(t.smt_siblings(CpuId::new(3)).indices(), vec![3, 23]);
        let sd = SchedDomains::build(&t, DomainEra::Linux510);
        let chain = sd.of(CpuId::new(0));
        let names: Vec<String> = chain.iter().map(|d| d.level.name()).collect();
        assert_eq!(names, vec!["SMT", "MC", "NUMA1"]);
        assert_eq!(chain[0].groups.len(), 2);
        assert_eq!(chain[1].groups.len(), 10);
        assert_eq!(chain[2].groups.len(), 2);
        assert_eq!(sd.sd_llc(CpuId::new(0)).unwrap().span_weight, 20);
        assert!(chain[2].has(domains::flags::NUMA));
        assert!(chain[2].has(domains::flags::WAKE_AFFINE));
    }

    #[test]
    fn no_smt_single_llc_has_one_level() {
        let t = regular("d", "test", 1, 1, 4, 1, false).unwrap();
        let sd = SchedDomains::build(&t, DomainEra::Linux510);
        let names: Vec<String> = sd
            .of(CpuId::new(2))
            .iter()
            .map(|d| d.level.name())
            .collect();
        assert_eq!(names, vec!["MC"]);
        assert_eq!(
            sd.of(CpuId::new(2))[0].groups[0].first(),
            Some(CpuId::new(2))
        );
    }
}
