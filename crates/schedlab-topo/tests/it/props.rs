//! Property tests: generated machines round-trip through JSON (and, when regular, the
//! compact string and numactl text) and pass the consistency checks of `check.rs`.

use proptest::prelude::*;
use schedlab_topo::CpuId;
use schedlab_topo::spec::{TopologyOptions, parse_topology};
use schedlab_topo::{CpuPlacement, DomainEra, SchedDomains, Topology};

use crate::check::{check_all, check_topology};

/// A generated machine: nodes × LLCs × clusters × cores × threads, with one of three CPU
/// numberings, packages per node or one package over all nodes, random distances and
/// capacities.
#[derive(Debug, Clone)]
struct Shape {
    nodes: usize,
    one_package: bool,
    llcs_per_node: usize,
    clusters_per_llc: usize, // 0 = no clusters
    cores_per_cluster: usize,
    threads: usize,
    numbering: u8, // 0 far siblings, 1 adjacent, 2 shuffled
    seed: u64,
    upper: Vec<u32>, // upper-triangle distances
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        1..=4usize,
        any::<bool>(),
        1..=3usize,
        0..=3usize,
        1..=3usize,
        1..=3usize,
        0..=2u8,
        any::<u64>(),
        prop::collection::vec(11u32..=45, 6),
    )
        .prop_map(
            |(
                nodes,
                one_package,
                llcs_per_node,
                clusters_per_llc,
                cores_per_cluster,
                threads,
                numbering,
                seed,
                upper,
            )| Shape {
                nodes,
                one_package,
                llcs_per_node,
                clusters_per_llc,
                cores_per_cluster,
                threads,
                numbering,
                seed,
                upper,
            },
        )
}

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

fn build(s: &Shape) -> Topology {
    let clusters = s.clusters_per_llc.max(1);
    let cores_per_llc = clusters * s.cores_per_cluster;
    let nr_cores = s.nodes * s.llcs_per_node * cores_per_llc;
    let n = nr_cores * s.threads;
    let mut perm: Vec<usize> = (0..n).collect();
    let mut rng = s.seed | 1;
    if s.numbering == 2 {
        for i in (1..n).rev() {
            let j = (xorshift(&mut rng) % (i as u64 + 1)) as usize;
            perm.swap(i, j);
        }
    }
    let mut placements = Vec::new();
    for core in 0..nr_cores {
        let llc = core / cores_per_llc;
        let node = llc / s.llcs_per_node;
        for t in 0..s.threads {
            let logical = if s.numbering == 0 {
                core + t * nr_cores
            } else {
                core * s.threads + t
            };
            placements.push(CpuPlacement {
                cpu: CpuId::new(perm[logical]),
                core,
                cluster: (s.clusters_per_llc > 0).then_some(core / s.cores_per_cluster),
                llc,
                package: if s.one_package { 0 } else { node },
                node,
                capacity: if xorshift(&mut rng).is_multiple_of(4) {
                    512
                } else {
                    1024
                },
            });
        }
    }
    // Upper-triangle index of the pair (a, b), a < b.
    let tri = |a: usize, b: usize| a * s.nodes - a * (a + 1) / 2 + (b - a - 1);
    let d: Vec<Vec<u32>> = (0..s.nodes)
        .map(|i| {
            (0..s.nodes)
                .map(|j| {
                    if i == j {
                        10
                    } else {
                        s.upper[tri(i.min(j), i.max(j))]
                    }
                })
                .collect()
        })
        .collect();
    Topology::from_cpus("gen", "proptest", placements, d).expect("generated machines are valid")
}

fn numactl_text(t: &Topology) -> String {
    let n = t.nr_nodes();
    let mut s = format!("available: {n} nodes (0-{})\n", n - 1);
    for (i, set) in t.nodes().iter().enumerate() {
        let cpus: Vec<String> = set.iter().map(|c| c.to_string()).collect();
        s += &format!(
            "node {i} cpus: {}\nnode {i} size: 1024 MB\nnode {i} free: 512 MB\n",
            cpus.join(" ")
        );
    }
    s += "node distances:\nnode ";
    s += &(0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(" ");
    s += "\n";
    for (i, row) in t.distances().iter().enumerate() {
        s += &format!(
            "{i}: {}\n",
            row.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn generated_machines_are_consistent_and_round_trip(s in shape()) {
        let t = build(&s);
        check_all(&t);
        let back = Topology::from_json(&t.to_json()).unwrap();
        prop_assert!(back.same_layout(&t));
        prop_assert_eq!(&back.name, &t.name);
        prop_assert_eq!(&back.source, &t.source);
        // The CLI's --json (with era and domains) reads back too.
        let mut v = t.to_json_value();
        v["era"] = "5.10".into();
        v["domains"] = SchedDomains::build(&t, DomainEra::Linux510).to_json_value();
        let full = serde_json::to_string(&v).unwrap();
        prop_assert!(Topology::from_json(&full).unwrap().same_layout(&t));
        // A compact string, when there is one, rebuilds the same machine.
        if let Some(c) = t.compact_string() {
            prop_assert!(parse_topology(&c, &TopologyOptions::default()).unwrap().same_layout(&t));
        }
    }

    #[test]
    fn compact_strings_round_trip(n in 1..=4usize, lpn in 1..=3usize, c in 1..=4usize, th in 1..=3usize) {
        let spec = format!("{n}n{}l{c}c{th}t", n * lpn);
        let t = parse_topology(&spec, &TopologyOptions::default()).unwrap();
        prop_assert_eq!((t.nr_nodes(), t.nr_llcs(), t.nr_cores(), t.threads_per_core()), (n, n * lpn, n * lpn * c, th));
        prop_assert_eq!(t.compact_string(), Some(spec.clone()));
        check_topology(&t);
        let back = Topology::from_json(&t.to_json()).unwrap();
        prop_assert_eq!(back.compact_string(), Some(spec.clone()));
        // numactl --hardware of the same machine, with --smt and --llc-per-node, agrees.
        let o = TopologyOptions { smt: Some(th), llc_per_node: Some(lpn), ..Default::default() };
        let from_numactl = schedlab_topo::numactl::parse_numactl(&numactl_text(&t), "gen.txt", &o).unwrap();
        prop_assert!(from_numactl.same_layout(&t));
    }
}
