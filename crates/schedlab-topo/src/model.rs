//! The machine: CPUs grouped into SMT cores, optional clusters, LLCs, packages and NUMA
//! nodes, with a node distance matrix and per-CPU capacity.
//!
//! ```text
//!   node ── package ── llc ── [cluster] ── core ── cpu (hardware thread)
//! ```
//! Every CPU belongs to exactly one core, cluster, LLC, package and node. Indices of
//! cores/LLCs/... are dense (`0..n`) and ordered by their lowest CPU; CPU ids are the
//! kernel's, so layouts like "siblings are i and i + N/2" are preserved.

use crate::cpuset::{CpuId, CpuRange, CpuSet};
use schedlab_vocab::DistanceClass;

/// Default CPU capacity (`SCHED_CAPACITY_SCALE`).
pub const DEFAULT_CAPACITY: u32 = 1024;

/// Where one CPU sits in the machine (all fields are dense indices).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuInfo {
    /// Kernel CPU id (equal to its index).
    pub id: CpuId,
    /// SMT core index.
    pub core: usize,
    /// Cluster index (equal to the core's LLC-wide cluster, or one per core when the
    /// machine has no clusters).
    pub cluster: usize,
    /// Last-level-cache index.
    pub llc: usize,
    /// Package (socket) index.
    pub package: usize,
    /// NUMA node index.
    pub node: usize,
    /// Compute capacity, 1024 for a full-speed CPU.
    pub capacity: u32,
}

/// A whole machine. Construct with [`Topology::from_cpus`] (which validates) or a parser.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Short name (preset name, file name or `host`).
    pub name: String,
    /// Where the description came from (preset source, file path, sysfs root).
    pub source: String,
    cpus: Vec<CpuInfo>,
    cores: Vec<CpuSet>,
    clusters: Vec<CpuSet>,
    llcs: Vec<CpuSet>,
    packages: Vec<CpuSet>,
    nodes: Vec<CpuSet>,
    distances: Vec<Vec<u32>>,
    has_clusters: bool,
    /// Largest core size, computed once: the wake path asks for it on every wakeup.
    threads_per_core: usize,
    /// CPUs per LLC, by LLC index, computed once (wake_wide asks on every wakeup).
    llc_sizes: Vec<usize>,
}

/// Why a machine description is inconsistent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// No CPU at all.
    #[error("the machine has no CPUs")]
    Empty,
    /// CPU ids must be exactly 0..N with no gap.
    #[error("CPU ids must be 0..{nr} without gaps; CPU {missing} is missing")]
    CpuGap {
        /// Number of CPUs.
        nr: usize,
        /// First missing id.
        missing: CpuId,
    },
    /// A CPU was listed twice.
    #[error("CPU {0} is listed more than once")]
    CpuOverlap(CpuId),
    /// Distance matrix shape or values are wrong.
    #[error("bad node distance matrix: {0}")]
    Distances(String),
    /// A containment rule (core within LLC, LLC within node or package...) is broken.
    #[error("inconsistent topology: {0}")]
    Inconsistent(String),
    /// More CPUs than schedlab supports (see [`crate::cpulist::MAX_CPUS`]).
    #[error("the machine has more than the supported maximum of {max} CPUs")]
    TooLarge {
        /// The limit.
        max: usize,
    },
}

/// One CPU's placement as given by a parser: raw ids, any numbering (they are made dense).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuPlacement {
    /// Kernel CPU id.
    pub cpu: CpuId,
    /// Raw core id, unique machine-wide (e.g. package * 1000 + core_id).
    pub core: usize,
    /// Raw cluster id, unique machine-wide, or `None` when the machine has no clusters.
    pub cluster: Option<usize>,
    /// Raw LLC id, unique machine-wide.
    pub llc: usize,
    /// Raw package id.
    pub package: usize,
    /// Raw node id.
    pub node: usize,
    /// Capacity (1024 when unknown).
    pub capacity: u32,
}

fn densify(raw: impl Iterator<Item = usize>) -> Vec<usize> {
    // Dense index in order of first appearance when CPUs are visited in id order.
    let mut seen: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    raw.map(|r| {
        let next = seen.len();
        *seen.entry(r).or_insert(next)
    })
    .collect()
}

impl Topology {
    /// Builds and validates a machine from per-CPU placements and a node distance matrix
    /// (indexed by the raw node ids sorted ascending, made dense).
    pub fn from_cpus(
        name: impl Into<String>,
        source: impl Into<String>,
        mut placements: Vec<CpuPlacement>,
        distances: Vec<Vec<u32>>,
    ) -> Result<Self, TopologyError> {
        if placements.is_empty() {
            return Err(TopologyError::Empty);
        }
        if placements.len() > crate::cpulist::MAX_CPUS {
            return Err(TopologyError::TooLarge {
                max: crate::cpulist::MAX_CPUS,
            });
        }
        placements.sort_by_key(|p| p.cpu);
        for w in placements.windows(2) {
            if w[0].cpu == w[1].cpu {
                return Err(TopologyError::CpuOverlap(w[0].cpu));
            }
        }
        let nr = placements.len();
        for (i, p) in placements.iter().enumerate() {
            if p.cpu.index() != i {
                return Err(TopologyError::CpuGap {
                    nr,
                    missing: CpuId::new(i),
                });
            }
        }
        // A capacity of 0 would run nothing (the kernel's scale is 1..=1024).
        if let Some(p) = placements
            .iter()
            .find(|p| !(1..=DEFAULT_CAPACITY).contains(&p.capacity))
        {
            return Err(TopologyError::Inconsistent(format!(
                "CPU {} has capacity {}: a capacity is 1..={DEFAULT_CAPACITY} (SCHED_CAPACITY_SCALE)",
                p.cpu, p.capacity
            )));
        }
        // Nodes are made dense by sorted raw id so the distance matrix rows line up.
        let mut node_ids: Vec<usize> = placements.iter().map(|p| p.node).collect();
        node_ids.sort_unstable();
        node_ids.dedup();
        let nr_nodes = node_ids.len();
        validate_distances(&distances, nr_nodes)?;

        let core = densify(placements.iter().map(|p| p.core));
        let llc = densify(placements.iter().map(|p| p.llc));
        let package = densify(placements.iter().map(|p| p.package));
        let has_clusters = placements.iter().any(|p| p.cluster.is_some());
        let cluster = if has_clusters {
            densify(
                placements
                    .iter()
                    .map(|p| p.cluster.unwrap_or(usize::MAX - p.core)),
            )
        } else {
            core.clone()
        };
        let cpus: Vec<CpuInfo> = placements
            .iter()
            .enumerate()
            .map(|(i, p)| CpuInfo {
                id: CpuId::new(i),
                core: core[i],
                cluster: cluster[i],
                llc: llc[i],
                package: package[i],
                node: node_ids.binary_search(&p.node).unwrap_or(0),
                capacity: p.capacity,
            })
            .collect();
        let group = |f: &dyn Fn(&CpuInfo) -> usize| -> Vec<CpuSet> {
            let n = cpus.iter().map(f).max().map_or(0, |m| m + 1);
            let mut v = vec![CpuSet::new(nr); n];
            for c in &cpus {
                v[f(c)].insert(c.id);
            }
            v
        };
        let topo = Topology {
            name: name.into(),
            source: source.into(),
            cores: group(&|c| c.core),
            clusters: group(&|c| c.cluster),
            llcs: group(&|c| c.llc),
            packages: group(&|c| c.package),
            nodes: group(&|c| c.node),
            cpus,
            distances,
            has_clusters,
            threads_per_core: 1,
            llc_sizes: Vec::new(),
        };
        let mut topo = topo;
        topo.threads_per_core = topo.cores.iter().map(CpuSet::count).max().unwrap_or(1);
        topo.llc_sizes = topo.llcs.iter().map(CpuSet::count).collect();
        topo.check_nesting()?;
        Ok(topo)
    }

    fn check_nesting(&self) -> Result<(), TopologyError> {
        for c in &self.cpus {
            let core = &self.cores[c.core];
            if !core.is_subset(&self.nodes[c.node]) {
                return Err(TopologyError::Inconsistent(format!(
                    "core of CPU {} ({core}) spans more than one NUMA node (SMT siblings share one node)",
                    c.id
                )));
            }
            if !core.is_subset(&self.clusters[c.cluster]) {
                return Err(TopologyError::Inconsistent(format!(
                    "core of CPU {} ({core}) spans more than one cluster",
                    c.id
                )));
            }
            if !self.clusters[c.cluster].is_subset(&self.llcs[c.llc]) {
                return Err(TopologyError::Inconsistent(format!(
                    "cluster of CPU {} spans more than one LLC",
                    c.id
                )));
            }
            let llc = &self.llcs[c.llc];
            if !llc.is_subset(&self.nodes[c.node]) && !self.nodes[c.node].is_subset(llc) {
                return Err(TopologyError::Inconsistent(format!(
                    "LLC of CPU {} ({llc}) straddles NUMA nodes without containing them",
                    c.id
                )));
            }
            if !llc.is_subset(&self.packages[c.package]) {
                return Err(TopologyError::Inconsistent(format!(
                    "LLC of CPU {} ({llc}) spans more than one package",
                    c.id
                )));
            }
        }
        Ok(())
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }
    /// Number of SMT cores.
    pub fn nr_cores(&self) -> usize {
        self.cores.len()
    }
    /// Number of LLCs.
    pub fn nr_llcs(&self) -> usize {
        self.llcs.len()
    }
    /// Number of packages.
    pub fn nr_packages(&self) -> usize {
        self.packages.len()
    }
    /// Number of NUMA nodes.
    pub fn nr_nodes(&self) -> usize {
        self.nodes.len()
    }
    /// Number of clusters (equal to cores when the machine has none).
    pub fn nr_clusters(&self) -> usize {
        self.clusters.len()
    }
    /// Whether clusters (a level between core and LLC) exist.
    pub fn has_clusters(&self) -> bool {
        self.has_clusters
    }
    /// Threads per core (the largest core).
    pub fn threads_per_core(&self) -> usize {
        self.threads_per_core
    }
    /// Whether any core has more than one thread.
    pub fn smt_present(&self) -> bool {
        self.threads_per_core() > 1
    }
    /// One CPU's placement.
    pub fn cpu(&self, cpu: CpuId) -> &CpuInfo {
        &self.cpus[cpu]
    }
    /// All CPUs.
    pub fn cpus(&self) -> &[CpuInfo] {
        &self.cpus
    }
    /// The machine's CPU ids in order, `0..nr_cpus` (the loop over every CPU).
    #[inline]
    pub fn cpu_ids(&self) -> CpuRange {
        CpuId::range(self.cpus.len())
    }
    /// All CPUs as a set.
    pub fn all_cpus(&self) -> CpuSet {
        CpuSet::full(self.nr_cpus())
    }
    /// Spans of the cores.
    pub fn cores(&self) -> &[CpuSet] {
        &self.cores
    }
    /// Spans of the clusters.
    pub fn clusters(&self) -> &[CpuSet] {
        &self.clusters
    }
    /// Spans of the LLCs.
    pub fn llcs(&self) -> &[CpuSet] {
        &self.llcs
    }
    /// Spans of the packages.
    pub fn packages(&self) -> &[CpuSet] {
        &self.packages
    }
    /// Spans of the NUMA nodes.
    pub fn nodes(&self) -> &[CpuSet] {
        &self.nodes
    }
    /// The node distance matrix (`numactl --hardware` units, 10 = local).
    pub fn distances(&self) -> &[Vec<u32>] {
        &self.distances
    }
    /// Distance between two nodes.
    pub fn node_distance(&self, a: usize, b: usize) -> u32 {
        self.distances[a][b]
    }
    /// Distance between the nodes of two CPUs.
    pub fn cpu_distance(&self, a: CpuId, b: CpuId) -> u32 {
        self.distances[self.cpus[a].node][self.cpus[b].node]
    }
    /// The SMT siblings of `cpu`, itself included (`cpu_smt_mask`).
    pub fn smt_siblings(&self, cpu: CpuId) -> &CpuSet {
        &self.cores[self.cpus[cpu].core]
    }
    /// The CPUs sharing `cpu`'s LLC, itself included.
    pub fn llc_span(&self, cpu: CpuId) -> &CpuSet {
        &self.llcs[self.cpus[cpu].llc]
    }
    /// The CPUs of `cpu`'s cluster.
    pub fn cluster_span(&self, cpu: CpuId) -> &CpuSet {
        &self.clusters[self.cpus[cpu].cluster]
    }
    /// The CPUs of `cpu`'s node.
    pub fn node_span(&self, cpu: CpuId) -> &CpuSet {
        &self.nodes[self.cpus[cpu].node]
    }
    /// `sd_llc_size`.
    pub fn llc_size(&self, cpu: CpuId) -> usize {
        self.llc_sizes[self.cpus[cpu].llc]
    }
    /// `sd_llc_id`: the first CPU of the LLC.
    pub fn llc_id(&self, cpu: CpuId) -> CpuId {
        self.llc_span(cpu).first().unwrap_or(cpu)
    }
    /// Whether two CPUs share the last-level cache.
    pub fn cpus_share_cache(&self, a: CpuId, b: CpuId) -> bool {
        self.cpus[a].llc == self.cpus[b].llc
    }
    /// Whether two CPUs share a cluster (or, without clusters, the LLC) — 6.7+
    /// `cpus_share_resources`.
    pub fn cpus_share_resources(&self, a: CpuId, b: CpuId) -> bool {
        if self.has_clusters {
            self.cpus[a].cluster == self.cpus[b].cluster
        } else {
            self.cpus_share_cache(a, b)
        }
    }
    /// Whether two CPUs are SMT siblings of one core.
    pub fn cpus_share_core(&self, a: CpuId, b: CpuId) -> bool {
        self.cpus[a].core == self.cpus[b].core
    }
    /// How far apart two CPUs are, in the classes the machine profile prices (same CPU,
    /// SMT sibling, same LLC, same node, another node).
    pub fn distance_class(&self, a: CpuId, b: CpuId) -> DistanceClass {
        if a == b {
            DistanceClass::Same
        } else if self.cpus_share_core(a, b) {
            DistanceClass::Smt
        } else if self.cpus_share_cache(a, b) {
            DistanceClass::Llc
        } else if self.cpus[a].node == self.cpus[b].node {
            DistanceClass::CrossLlc
        } else {
            DistanceClass::CrossNode
        }
    }
}

fn validate_distances(d: &[Vec<u32>], nr_nodes: usize) -> Result<(), TopologyError> {
    if d.len() != nr_nodes {
        return Err(TopologyError::Distances(format!(
            "{} rows for {nr_nodes} nodes",
            d.len()
        )));
    }
    for (i, row) in d.iter().enumerate() {
        if row.len() != nr_nodes {
            return Err(TopologyError::Distances(format!(
                "row {i} has {} entries, expected {nr_nodes} (matrix must be square)",
                row.len()
            )));
        }
        for (j, &v) in row.iter().enumerate() {
            if v == 0 {
                return Err(TopologyError::Distances(format!(
                    "distance {i}->{j} is zero"
                )));
            }
            if d[j][i] != v {
                return Err(TopologyError::Distances(format!(
                    "asymmetric: {i}->{j} is {v} but {j}->{i} is {}",
                    d[j][i]
                )));
            }
            if i != j && v <= row[i] {
                return Err(TopologyError::Distances(format!(
                    "distance {i}->{j} ({v}) is not larger than the local distance {}",
                    row[i]
                )));
            }
        }
    }
    Ok(())
}
