//! The sched-domain tree, built the way the kernel builds it (`build_sched_domains()`,
//! `sd_init()` and the degenerate-domain pass `sd_degenerate()`/`sd_parent_degenerate()`).
//!
//! ```text
//!   NUMA[k] ⊃ … ⊃ PKG ⊃ MC (LLC) ⊃ CLS ⊃ SMT        (per CPU, bottom-up)
//! ```
//! Each CPU gets a chain of domains, lowest first. A level whose span equals its child's is
//! *degenerate* and dropped. Each domain's groups are its child's spans (single CPUs at the
//! bottom); NUMA levels have overlapping groups. Flags and numeric parameters follow the
//! era selected with [`DomainEra`]; values marked \[M\] in the spec (2.6.x intervals and
//! busy factors) are reconstructions and documented as such.

use crate::cpuset::{CpuId, CpuSet};
use crate::model::Topology;

bitflags::bitflags! {
    /// `SD_*` flag bits of a sched domain (names follow the kernel's `include/linux/sched/sd_flags.h`
    /// without the `SD_` prefix; bit values are our own, so they are never compared with a
    /// kernel's). A typed set, so a domain flag cannot be mixed up with a wake flag or a count.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct SdFlags: u32 {
        /// `SD_BALANCE_NEWIDLE`: balance when about to become idle.
        const BALANCE_NEWIDLE = 1 << 0;
        /// `SD_BALANCE_EXEC`: balance on exec.
        const BALANCE_EXEC = 1 << 1;
        /// `SD_BALANCE_FORK`: balance on fork.
        const BALANCE_FORK = 1 << 2;
        /// `SD_BALANCE_WAKE`: balance on wakeup (off by default since 2.6.32).
        const BALANCE_WAKE = 1 << 3;
        /// `SD_WAKE_AFFINE`: the waker's CPU may be chosen for the wakee.
        const WAKE_AFFINE = 1 << 4;
        /// `SD_SHARE_CPUCAPACITY` (`SD_SHARE_CPUPOWER` before 3.16): members share CPU capacity (SMT).
        const SHARE_CPUCAPACITY = 1 << 5;
        /// `SD_SHARE_PKG_RESOURCES`, renamed `SD_SHARE_LLC` in 6.10: members share the LLC.
        const SHARE_LLC = 1 << 6;
        /// `SD_CLUSTER`: members share a cluster.
        const CLUSTER = 1 << 7;
        /// `SD_SERIALIZE`: only one CPU balances this level at a time.
        const SERIALIZE = 1 << 8;
        /// `SD_PREFER_SIBLING`: prefer moving tasks to siblings with spare capacity.
        const PREFER_SIBLING = 1 << 9;
        /// `SD_NUMA`: a NUMA level.
        const NUMA = 1 << 10;
        /// `SD_LOAD_BALANCE` (removed in 5.8, when every level balanced): periodic load
        /// balancing is on for this level. Set in the 2.6 and 3 eras' trees, not in 5.10's.
        const LOAD_BALANCE = 1 << 11;
        /// `SD_OVERLAP` (since 3.0): the level's groups overlap; set on every NUMA level
        /// above the node, as the kernel's `SDTL_OVERLAP` topology levels are.
        const OVERLAP = 1 << 12;
    }
}

impl SdFlags {
    /// Flag names joined with `|`, in [`flags::NAMES`] order (the text of `schedlab topo show`).
    pub fn describe(self) -> String {
        flags::describe(self)
    }

    /// The names of the flags set, in [`flags::NAMES`] order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        flags::NAMES
            .iter()
            .filter(move |(b, _)| self.intersects(*b))
            .map(|(_, n)| *n)
    }
}

/// The [`SdFlags`] bits as constants, so call sites read `d.has(flags::SHARE_LLC)`.
pub mod flags {
    use super::SdFlags;

    /// See [`SdFlags::BALANCE_NEWIDLE`].
    pub const BALANCE_NEWIDLE: SdFlags = SdFlags::BALANCE_NEWIDLE;
    /// See [`SdFlags::BALANCE_EXEC`].
    pub const BALANCE_EXEC: SdFlags = SdFlags::BALANCE_EXEC;
    /// See [`SdFlags::BALANCE_FORK`].
    pub const BALANCE_FORK: SdFlags = SdFlags::BALANCE_FORK;
    /// See [`SdFlags::BALANCE_WAKE`].
    pub const BALANCE_WAKE: SdFlags = SdFlags::BALANCE_WAKE;
    /// See [`SdFlags::WAKE_AFFINE`].
    pub const WAKE_AFFINE: SdFlags = SdFlags::WAKE_AFFINE;
    /// See [`SdFlags::SHARE_CPUCAPACITY`].
    pub const SHARE_CPUCAPACITY: SdFlags = SdFlags::SHARE_CPUCAPACITY;
    /// See [`SdFlags::SHARE_LLC`].
    pub const SHARE_LLC: SdFlags = SdFlags::SHARE_LLC;
    /// See [`SdFlags::CLUSTER`].
    pub const CLUSTER: SdFlags = SdFlags::CLUSTER;
    /// See [`SdFlags::SERIALIZE`].
    pub const SERIALIZE: SdFlags = SdFlags::SERIALIZE;
    /// See [`SdFlags::PREFER_SIBLING`].
    pub const PREFER_SIBLING: SdFlags = SdFlags::PREFER_SIBLING;
    /// See [`SdFlags::NUMA`].
    pub const NUMA: SdFlags = SdFlags::NUMA;
    /// See [`SdFlags::LOAD_BALANCE`].
    pub const LOAD_BALANCE: SdFlags = SdFlags::LOAD_BALANCE;
    /// See [`SdFlags::OVERLAP`].
    pub const OVERLAP: SdFlags = SdFlags::OVERLAP;

    /// Names, for display. Ordered by hand, not by bit, because `schedlab topo show` and the
    /// topology JSON print in this order; `SHARE_LLC` keeps its pre-6.10 name here.
    pub const NAMES: &[(SdFlags, &str)] = &[
        (LOAD_BALANCE, "LOAD_BALANCE"),
        (BALANCE_NEWIDLE, "BALANCE_NEWIDLE"),
        (BALANCE_EXEC, "BALANCE_EXEC"),
        (BALANCE_FORK, "BALANCE_FORK"),
        (BALANCE_WAKE, "BALANCE_WAKE"),
        (WAKE_AFFINE, "WAKE_AFFINE"),
        (SHARE_CPUCAPACITY, "SHARE_CPUCAPACITY"),
        (SHARE_LLC, "SHARE_PKG_RESOURCES"),
        (CLUSTER, "CLUSTER"),
        (SERIALIZE, "SERIALIZE"),
        (PREFER_SIBLING, "PREFER_SIBLING"),
        (OVERLAP, "OVERLAP"),
        (NUMA, "NUMA"),
    ];

    /// Flag names joined with `|`.
    pub fn describe(f: SdFlags) -> String {
        f.names().collect::<Vec<_>>().join("|")
    }
}

/// Which kernel generation's domain parameters to use (`sd_init()` and, before 3.x, the `SD_*_INIT` macros of each architecture).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DomainEra {
    /// 2.6.2x – 2.6.3x: busy_factor 64 (NUMA 32), imbalance 125, intervals 1–4 ms \[M\].
    Linux26,
    /// 3.x – 5.9: busy_factor 32, imbalance SMT 110 / MC 117 / others 125, intervals by weight \[M\].
    Linux3,
    /// 5.10 – 7.x: busy_factor 16, imbalance SMT 110 / others 117, intervals by weight.
    #[default]
    Linux510,
}

impl DomainEra {
    /// Every era, oldest first.
    pub const ALL: [DomainEra; 3] = [DomainEra::Linux26, DomainEra::Linux3, DomainEra::Linux510];

    /// The short name used on the command line and in output: `2.6`, `3` or `5.10`.
    pub fn label(&self) -> &'static str {
        match self {
            DomainEra::Linux26 => "2.6",
            DomainEra::Linux3 => "3",
            DomainEra::Linux510 => "5.10",
        }
    }

    /// Parses a label (`2.6`, `3`, `5.10`; `linux26`-style names are accepted too).
    pub fn parse(s: &str) -> Option<DomainEra> {
        match s.trim().to_ascii_lowercase().trim_start_matches("linux") {
            "2.6" | "26" => Some(DomainEra::Linux26),
            "3" => Some(DomainEra::Linux3),
            "5.10" | "510" => Some(DomainEra::Linux510),
            _ => None,
        }
    }
}

/// Topology level of a domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DomainLevel {
    /// Hardware threads of one core.
    Smt,
    /// A cluster (shared L2 or L3 tags).
    Cls,
    /// Cores sharing the LLC.
    Mc,
    /// A package (called DIE before ~6.7).
    Pkg,
    /// The CPUs of one NUMA node (usually degenerates into PKG).
    Node,
    /// The k-th NUMA distance level.
    Numa(u8),
}

impl DomainLevel {
    /// The kernel's name for the level.
    pub fn name(&self) -> String {
        match self {
            DomainLevel::Smt => "SMT".into(),
            DomainLevel::Cls => "CLS".into(),
            DomainLevel::Mc => "MC".into(),
            DomainLevel::Pkg => "PKG".into(),
            DomainLevel::Node => "NODE".into(),
            DomainLevel::Numa(k) => format!("NUMA{k}"),
        }
    }
}

/// One sched domain of one CPU.
#[derive(Clone, Debug)]
pub struct SchedDomain {
    /// Level.
    pub level: DomainLevel,
    /// Index of this domain in the CPU's chain (0 = lowest).
    pub index: usize,
    /// CPUs covered.
    pub span: CpuSet,
    /// Number of CPUs covered (`span_weight`).
    pub span_weight: usize,
    /// Child spans; the group holding the owning CPU comes first (as in the kernel).
    pub groups: Vec<CpuSet>,
    /// `SD_*` flags.
    pub flags: SdFlags,
    /// Imbalance threshold in percent (e.g. 117).
    pub imbalance_pct: u32,
    /// Multiplier of the balance interval while the CPU is busy.
    pub busy_factor: u32,
    /// Minimum balance interval, ms.
    pub min_interval_ms: u64,
    /// Maximum balance interval, ms.
    pub max_interval_ms: u64,
    /// Balance failures tolerated before cache-hot tasks are migrated.
    pub cache_nice_tries: u32,
    /// For NUMA levels, the distance this level reaches.
    pub numa_distance: Option<u32>,
}

impl SchedDomain {
    /// Whether the domain carries flag `f` (any of them, if `f` holds several: the old
    /// `flags & f != 0` test, kept so no caller's answer changes).
    pub fn has(&self, f: SdFlags) -> bool {
        self.flags.intersects(f)
    }
}

/// The per-CPU domain chains plus the shortcuts the wake path reads.
#[derive(Clone, Debug)]
pub struct SchedDomains {
    /// Era the parameters follow.
    pub era: DomainEra,
    per_cpu: Vec<Vec<SchedDomain>>,
    sd_llc: Vec<Option<usize>>,
    sd_numa: Vec<Option<usize>>,
}

impl SchedDomains {
    /// Builds the tree for `topo`.
    pub fn build(topo: &Topology, era: DomainEra) -> Self {
        let n = topo.nr_cpus();
        // Distinct distances: first is the local one (NODE level), then NUMA levels.
        let mut dists: Vec<u32> = topo.distances().iter().flatten().copied().collect();
        dists.sort_unstable();
        dists.dedup();
        let mut per_cpu = Vec::with_capacity(n);
        let mut sd_llc = Vec::with_capacity(n);
        let mut sd_numa = Vec::with_capacity(n);
        for cpu in topo.cpu_ids() {
            let info = topo.cpu(cpu);
            let mut cand: Vec<(DomainLevel, CpuSet, Option<u32>)> = Vec::new();
            cand.push((DomainLevel::Smt, topo.cores()[info.core].clone(), None));
            if topo.has_clusters() {
                cand.push((
                    DomainLevel::Cls,
                    topo.clusters()[info.cluster].clone(),
                    None,
                ));
            }
            let llc = topo.llcs()[info.llc].clone();
            cand.push((DomainLevel::Mc, llc.clone(), None));
            // PKG: the package, but never narrower than the LLC's node when a node holds
            // several packages' worth (e.g. the LLC may exceed a node on some AMD parts).
            // A package that holds several nodes gets no PKG level, so that the NUMA
            // levels above NODE still exist: x86 does this for "NUMA in package" (SNC),
            // and arm64's PKG level spans the node anyway.
            let package = &topo.packages()[info.package];
            if package.is_subset(&topo.nodes()[info.node]) {
                cand.push((DomainLevel::Pkg, package.or(&llc), None));
            }
            cand.push((DomainLevel::Node, topo.nodes()[info.node].clone(), None));
            for (k, &d) in dists.iter().enumerate().skip(1) {
                let mut span = CpuSet::new(n);
                for (m, set) in topo.nodes().iter().enumerate() {
                    if topo.node_distance(info.node, m) <= d {
                        span.or_assign(set);
                    }
                }
                cand.push((DomainLevel::Numa(k as u8), span, Some(d)));
            }
            // Levels must nest; enforce by union with the child's span, then drop
            // degenerate (equal-to-child) levels. A level with span 1 is dropped too.
            let mut chain: Vec<(DomainLevel, CpuSet, Option<u32>)> = Vec::new();
            for (lvl, mut span, d) in cand {
                if let Some(prev) = chain.last() {
                    span.or_assign(&prev.1);
                    if span == prev.1 {
                        continue;
                    }
                } else if span.count() <= 1 {
                    // An SMT level of one thread: keep going with a single-CPU child.
                    chain.push((lvl, span, d));
                    continue;
                }
                if chain.len() == 1 && chain[0].1.count() <= 1 {
                    chain.clear();
                }
                chain.push((lvl, span, d));
            }
            if chain.len() == 1 && chain[0].1.count() <= 1 {
                chain.clear();
            }
            let mut doms: Vec<SchedDomain> = Vec::with_capacity(chain.len());
            for (i, (lvl, span, d)) in chain.into_iter().enumerate() {
                let groups = if i == 0 {
                    let mut g: Vec<CpuSet> =
                        span.iter().map(|c| CpuSet::from_cpus(n, [c])).collect();
                    rotate_own_first(&mut g, cpu);
                    g
                } else {
                    // As the kernel builds them: walk the span in ring order from this
                    // CPU and add the child span of each CPU not yet covered. Child
                    // spans partition the span below NUMA; NUMA groups overlap, and
                    // skipping covered CPUs keeps only as many as the kernel has.
                    let child_level = doms[i - 1].level;
                    let mut g: Vec<CpuSet> = Vec::new();
                    let mut covered = CpuSet::new(n);
                    for c in span.iter_wrap(cpu) {
                        if covered.contains(c) {
                            continue;
                        }
                        let cs = child_span(topo, c, child_level, &dists).and(&span);
                        covered.or_assign(&cs);
                        g.push(cs);
                    }
                    g
                };
                doms.push(make_domain(era, lvl, i, span, groups, d, topo));
            }
            sd_llc.push(doms.iter().rposition(|d| d.has(flags::SHARE_LLC)));
            sd_numa.push(doms.iter().position(|d| d.has(flags::NUMA)));
            per_cpu.push(doms);
        }
        SchedDomains {
            era,
            per_cpu,
            sd_llc,
            sd_numa,
        }
    }

    /// Number of CPUs the tree was built for.
    pub fn nr_cpus(&self) -> usize {
        self.per_cpu.len()
    }

    /// The domain chain of `cpu`, lowest first.
    pub fn of(&self, cpu: CpuId) -> &[SchedDomain] {
        &self.per_cpu[cpu]
    }

    /// `sd_llc(cpu)`: the highest domain sharing the LLC.
    pub fn sd_llc(&self, cpu: CpuId) -> Option<&SchedDomain> {
        self.sd_llc[cpu].map(|i| &self.per_cpu[cpu][i])
    }

    /// `sd_numa(cpu)`: the lowest NUMA domain.
    pub fn sd_numa(&self, cpu: CpuId) -> Option<&SchedDomain> {
        self.sd_numa[cpu].map(|i| &self.per_cpu[cpu][i])
    }

    /// The lowest domain of `cpu` whose span contains `other`.
    pub fn lowest_spanning(&self, cpu: CpuId, other: CpuId) -> Option<&SchedDomain> {
        self.per_cpu[cpu].iter().find(|d| d.span.contains(other))
    }
}

fn rotate_own_first(groups: &mut [CpuSet], cpu: CpuId) {
    if let Some(p) = groups.iter().position(|g| g.contains(cpu)) {
        groups.rotate_left(p);
    }
}

fn child_span(topo: &Topology, c: CpuId, child: DomainLevel, dists: &[u32]) -> CpuSet {
    let info = topo.cpu(c);
    match child {
        DomainLevel::Smt => topo.cores()[info.core].clone(),
        DomainLevel::Cls => topo.clusters()[info.cluster].or(&topo.cores()[info.core]),
        DomainLevel::Mc => topo.llcs()[info.llc].clone(),
        DomainLevel::Pkg => topo.packages()[info.package].or(&topo.llcs()[info.llc]),
        DomainLevel::Node => topo.nodes()[info.node].or(&topo.llcs()[info.llc]),
        DomainLevel::Numa(k) => {
            let d = dists[k as usize];
            // An LLC wider than a node is never split by a NUMA group.
            let mut span = topo.llcs()[info.llc].clone();
            for (m, set) in topo.nodes().iter().enumerate() {
                if topo.node_distance(info.node, m) <= d {
                    span.or_assign(set);
                }
            }
            span
        }
    }
}

fn make_domain(
    era: DomainEra,
    level: DomainLevel,
    index: usize,
    span: CpuSet,
    groups: Vec<CpuSet>,
    numa_distance: Option<u32>,
    _topo: &Topology,
) -> SchedDomain {
    use flags::*;
    let w = span.count();
    let mut f = BALANCE_NEWIDLE | BALANCE_EXEC | BALANCE_FORK | WAKE_AFFINE | PREFER_SIBLING;
    // SD_LOAD_BALANCE went in 5.8: from then on every level balances, and no flag says so.
    if era != DomainEra::Linux510 {
        f |= LOAD_BALANCE;
    }
    match level {
        DomainLevel::Smt => f |= SHARE_CPUCAPACITY | SHARE_LLC,
        DomainLevel::Cls => f |= CLUSTER | SHARE_LLC,
        DomainLevel::Mc => f |= SHARE_LLC,
        DomainLevel::Pkg | DomainLevel::Node => {}
        DomainLevel::Numa(_) => {
            f |= NUMA | SERIALIZE;
            // Since 3.0 the NUMA topology levels are SDTL_OVERLAP, which
            // build_sched_domains() turns into SD_OVERLAP (2.6 had no such flag).
            if era != DomainEra::Linux26 {
                f |= OVERLAP;
            }
            f &= !PREFER_SIBLING;
            if numa_distance.unwrap_or(0) > 30 {
                f &= !(BALANCE_EXEC | BALANCE_FORK | WAKE_AFFINE);
            }
        }
    }
    let (imbalance_pct, busy_factor, min_ms, max_ms) = match era {
        DomainEra::Linux510 => {
            let pct = if level == DomainLevel::Smt { 110 } else { 117 };
            (pct, 16, w as u64, 2 * w as u64)
        }
        DomainEra::Linux3 => {
            let pct = match level {
                DomainLevel::Smt => 110,
                DomainLevel::Mc | DomainLevel::Cls => 117,
                _ => 125,
            };
            (pct, 32, w as u64, 2 * w as u64)
        }
        DomainEra::Linux26 => match level {
            DomainLevel::Smt => (110, 64, 1, 2),
            DomainLevel::Numa(_) => (125, 32, 8, 32),
            _ => (125, 64, 1, 4),
        },
    };
    let cache_nice_tries = match level {
        DomainLevel::Smt => 0,
        DomainLevel::Numa(_) => 2,
        _ => 1,
    };
    SchedDomain {
        level,
        index,
        span_weight: w,
        span,
        groups,
        flags: f,
        imbalance_pct,
        busy_factor,
        min_interval_ms: min_ms.max(1),
        max_interval_ms: max_ms.max(1),
        cache_nice_tries,
        numa_distance,
    }
}
