//! Built-in machines, named the way the papers and LKML threads we model name them.
//!
//! Each preset is a [`Topology`] whose `name` is the preset name and whose `source` says
//! where the layout comes from. All regular presets use the Intel-style far-sibling
//! numbering the kernel shows on those machines (thread `t` of core `c` is CPU
//! `c + t × cores`), so `westmere-2s20c` is exactly the `numactl --hardware` layout of the
//! spec (siblings `i` and `i + 20`).

use crate::cpuset::CpuId;
use crate::model::{CpuPlacement, DEFAULT_CAPACITY, Topology};

/// A built-in machine description, as listed by `schedlab topo list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// The name used in `--topology`.
    pub name: &'static str,
    /// One line: sockets, cores, SMT, caches, nodes.
    pub description: &'static str,
    /// Where the layout comes from (spec section, paper, thread).
    pub source: &'static str,
}

const PRESETS: &[Preset] = &[
    Preset {
        name: "desktop-4c8t",
        description: "1 socket, 4 cores x SMT-2 = 8 CPUs, one LLC; siblings i and i+4",
        source: "generic 4-core Intel desktop (e.g. Core i7-4770); the default machine",
    },
    Preset {
        name: "core2quad",
        description: "1 socket, 4 cores, no SMT, 2 LLCs (two dual-core dies sharing an L2 each)",
        source: "Intel Core 2 Quad, the 2.6.3x select_idle_sibling test box (Mike Galbraith's a1f84a3ab8e0 in 2.6.32 and Suresh Siddha's 99bd5e2f245d in 2.6.35 were measured on it)",
    },
    Preset {
        name: "westmere-2s20c",
        description: "2 sockets x 10 cores x SMT-2 = 40 CPUs, one LLC and node per socket; siblings i and i+20",
        source: "the numactl --hardware output of the topology issue (Westmere-EP, 2012-2013 LKML tbench tests)",
    },
    Preset {
        name: "westmere-4s40c",
        description: "4 sockets x 10 cores x SMT-2 = 80 CPUs, one LLC and node per socket, distances 10/20; siblings i and i+40",
        source: "4-socket 40-core+SMT Westmere of the 2012-2013 LKML threads (970e178985ca 'CPU buddies', 3.6: tbench 1 client 30->299 MB/s; the 3.10 wakeup-buddy tests)",
    },
    Preset {
        name: "xeon-2s12c",
        description: "2 sockets x 12 cores x SMT-2 = 48 CPUs, one LLC and node per socket; siblings i and i+24",
        source: "2-socket 12-core Xeon (Haswell/Broadwell-EP) used in 4.x-era wake_affine threads",
    },
    Preset {
        name: "tx7-4n2c",
        description: "NEC TX7: 4 nodes x 2 CPUs = 8 CPUs, no SMT, one LLC per CPU (Itanium 2 L3), distances 10/20",
        source: "Erich Focht's 2.5.59 NUMA scheduler tests, LKML January 2003 (docs/published-results.md R3); no SLIT was published, 10/20 assumed",
    },
    Preset {
        name: "zen3-2s64c",
        description: "2 sockets x 64 cores x SMT-2 = 256 CPUs, one LLC per 8 cores (CCX), one node per socket; siblings i and i+128",
        source: "AMD EPYC 7763-class (Zen3, NPS1), the tbench/hackbench reports of the 5.x-6.x LKML threads",
    },
    Preset {
        name: "spr-2s56c",
        description: "2 sockets x 56 cores x SMT-2 = 224 CPUs, one LLC and node per socket; siblings i and i+112",
        source: "Intel Sapphire Rapids 8480-class, the SIS_UTIL series (70fb5ccf2ebb, 6.0) measured on its 112-CPU LLC",
    },
    Preset {
        name: "kunpeng920-2n",
        description: "2 nodes x 24 cores = 48 CPUs, no SMT, clusters of 4 CPUs sharing L3 tags, one LLC per node, distances 10/12",
        source: "HiSilicon Kunpeng 920 (Barry Song's cluster-scheduler tests, 5.16-6.x); node = die, 12 = two dies of one socket",
    },
];

/// All built-in presets, in the order `schedlab topo list` shows them.
pub fn presets() -> &'static [Preset] {
    PRESETS
}

/// The machine of preset `name`, or `None` if there is no such preset.
pub fn preset(name: &str) -> Option<Topology> {
    let p = PRESETS.iter().find(|p| p.name == name)?;
    let r = |nodes, llcs, cores, threads| {
        crate::regular(p.name, p.source, nodes, llcs, cores, threads, true).ok()
    };
    match p.name {
        "desktop-4c8t" => r(1, 1, 4, 2),
        "core2quad" => r(1, 2, 2, 1),
        "westmere-2s20c" => r(2, 1, 10, 2),
        "westmere-4s40c" => r(4, 1, 10, 2),
        "xeon-2s12c" => r(2, 1, 12, 2),
        "tx7-4n2c" => r(4, 2, 1, 1),
        "zen3-2s64c" => r(2, 8, 8, 2),
        "spr-2s56c" => r(2, 1, 56, 2),
        "kunpeng920-2n" => kunpeng(p),
        _ => None,
    }
}

fn kunpeng(p: &Preset) -> Option<Topology> {
    let placements = (0..48)
        .map(|cpu| CpuPlacement {
            cpu: CpuId::new(cpu),
            core: cpu,
            cluster: Some(cpu / 4),
            llc: cpu / 24,
            package: cpu / 24,
            node: cpu / 24,
            capacity: DEFAULT_CAPACITY,
        })
        .collect();
    Topology::from_cpus(
        p.name,
        p.source,
        placements,
        vec![vec![10, 12], vec![12, 10]],
    )
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sibs(t: &Topology, cpu: usize) -> Vec<usize> {
        t.smt_siblings(CpuId::new(cpu)).indices()
    }

    #[test]
    fn every_listed_preset_builds() {
        for p in presets() {
            let t = preset(p.name).unwrap_or_else(|| panic!("{} does not build", p.name));
            assert_eq!(t.name, p.name);
            assert_eq!(t.source, p.source);
            assert!(!p.description.is_empty());
        }
        assert!(preset("nope").is_none());
    }

    #[test]
    fn layouts_match_the_issue() {
        let t = preset("desktop-4c8t").unwrap();
        assert_eq!(
            (t.nr_cpus(), t.nr_cores(), t.nr_llcs(), t.nr_nodes()),
            (8, 4, 1, 1)
        );
        assert_eq!(sibs(&t, 1), vec![1, 5]);

        let t = preset("core2quad").unwrap();
        assert_eq!(
            (t.nr_cpus(), t.nr_cores(), t.nr_llcs(), t.threads_per_core()),
            (4, 4, 2, 1)
        );
        assert_eq!(t.llc_span(CpuId::new(1)).to_list_string(), "0-1");
        assert_eq!(t.llc_span(CpuId::new(2)).to_list_string(), "2-3");

        let t = preset("westmere-2s20c").unwrap();
        assert_eq!(
            (t.nr_cpus(), t.nr_packages(), t.nr_nodes(), t.nr_llcs()),
            (40, 2, 2, 2)
        );
        assert_eq!(sibs(&t, 7), vec![7, 27]);
        assert_eq!(t.node_span(CpuId::new(0)).to_list_string(), "0-9,20-29");
        assert_eq!(t.nodes()[1].to_list_string(), "10-19,30-39");

        let t = preset("westmere-4s40c").unwrap();
        assert_eq!(
            (t.nr_cpus(), t.nr_packages(), t.nr_nodes(), t.nr_llcs()),
            (80, 4, 4, 4)
        );
        assert_eq!(sibs(&t, 39), vec![39, 79]);
        assert_eq!(t.node_distance(0, 3), 20);
        assert_eq!(t.node_distance(2, 2), 10);

        let t = preset("xeon-2s12c").unwrap();
        assert_eq!((t.nr_cpus(), t.nr_llcs(), t.nr_nodes()), (48, 2, 2));
        assert_eq!(sibs(&t, 0), vec![0, 24]);

        let t = preset("tx7-4n2c").unwrap();
        assert_eq!(
            (t.nr_cpus(), t.nr_llcs(), t.nr_nodes(), t.threads_per_core()),
            (8, 8, 4, 1)
        );
        assert_eq!(t.node_span(CpuId::new(5)).to_list_string(), "4-5");
        assert!(!t.cpus_share_cache(CpuId::new(4), CpuId::new(5)));

        let t = preset("zen3-2s64c").unwrap();
        assert_eq!(
            (t.nr_cpus(), t.nr_cores(), t.nr_llcs(), t.nr_nodes()),
            (256, 128, 16, 2)
        );
        assert_eq!(sibs(&t, 5), vec![5, 133]);
        assert_eq!(t.llc_span(CpuId::new(9)).to_list_string(), "8-15,136-143");

        let t = preset("spr-2s56c").unwrap();
        assert_eq!((t.nr_cpus(), t.nr_llcs(), t.nr_nodes()), (224, 2, 2));
        assert_eq!(sibs(&t, 111), vec![111, 223]);
        assert_eq!(t.llc_size(CpuId::new(0)), 112);

        let t = preset("kunpeng920-2n").unwrap();
        assert_eq!(
            (t.nr_cpus(), t.nr_clusters(), t.nr_llcs(), t.nr_nodes()),
            (48, 12, 2, 2)
        );
        assert!(t.has_clusters());
        assert_eq!(t.cluster_span(CpuId::new(6)).to_list_string(), "4-7");
        assert_eq!(t.llc_span(CpuId::new(30)).to_list_string(), "24-47");
        assert!(
            t.cpus_share_resources(CpuId::new(4), CpuId::new(7))
                && !t.cpus_share_resources(CpuId::new(3), CpuId::new(4))
        );
    }
}
