//! The sched-domain tree of the presets against the kernel's domain builder: levels, degenerate
//! levels dropped, groups, flags and the per-era numbers of `sd_init()` (checked by hand).

use schedlab_topo::CpuId;
use schedlab_topo::domains::flags::*;
use schedlab_topo::{CpuPlacement, DomainEra, SchedDomains, Topology, preset};

use crate::check::check_all;

fn names(sd: &SchedDomains, cpu: usize) -> Vec<String> {
    sd.of(CpuId::new(cpu))
        .iter()
        .map(|d| d.level.name())
        .collect()
}

fn list(s: &schedlab_topo::CpuSet) -> String {
    s.to_list_string()
}

#[test]
fn every_preset_is_consistent() {
    for p in schedlab_topo::presets() {
        let t = preset(p.name).unwrap();
        check_all(&t);
    }
}

#[test]
fn core2quad_has_mc_and_pkg_with_era_numbers() {
    let t = preset("core2quad").unwrap();
    let sd = SchedDomains::build(&t, DomainEra::Linux510);
    assert_eq!(names(&sd, 2), vec!["MC", "PKG"]);
    let mc = &sd.of(CpuId::new(2))[0];
    assert_eq!(list(&mc.span), "2-3");
    assert_eq!(
        mc.groups.iter().map(list).collect::<Vec<_>>(),
        vec!["2", "3"]
    );
    assert!(mc.has(SHARE_LLC) && mc.has(WAKE_AFFINE) && mc.has(PREFER_SIBLING));
    assert!(!mc.has(SHARE_CPUCAPACITY) && !mc.has(BALANCE_WAKE));
    let pkg = &sd.of(CpuId::new(2))[1];
    assert_eq!(
        pkg.groups.iter().map(list).collect::<Vec<_>>(),
        vec!["2-3", "0-1"]
    );
    assert!(!pkg.has(SHARE_LLC));
    // 5.10+: 117 everywhere but SMT, busy_factor 16, intervals = weight .. 2*weight.
    assert_eq!(
        (
            mc.imbalance_pct,
            mc.busy_factor,
            mc.min_interval_ms,
            mc.max_interval_ms
        ),
        (117, 16, 2, 4)
    );
    assert_eq!(
        (
            pkg.imbalance_pct,
            pkg.cache_nice_tries,
            pkg.min_interval_ms,
            pkg.max_interval_ms
        ),
        (117, 1, 4, 8)
    );
    assert_eq!(sd.sd_llc(CpuId::new(2)).unwrap().span_weight, 2);
    // 3.x: MC 117, others 125, busy_factor 32.
    let sd = SchedDomains::build(&t, DomainEra::Linux3);
    assert_eq!(
        (
            sd.of(CpuId::new(0))[0].imbalance_pct,
            sd.of(CpuId::new(0))[1].imbalance_pct,
            sd.of(CpuId::new(0))[1].busy_factor
        ),
        (117, 125, 32)
    );
    // 2.6: 125 except SMT, busy_factor 64, intervals 1..4.
    let sd = SchedDomains::build(&t, DomainEra::Linux26);
    let d = &sd.of(CpuId::new(0))[0];
    assert_eq!(
        (
            d.imbalance_pct,
            d.busy_factor,
            d.min_interval_ms,
            d.max_interval_ms
        ),
        (125, 64, 1, 4)
    );
}

#[test]
fn desktop_smt_level() {
    let t = preset("desktop-4c8t").unwrap();
    let sd = SchedDomains::build(&t, DomainEra::Linux510);
    assert_eq!(names(&sd, 5), vec!["SMT", "MC"]);
    let smt = &sd.of(CpuId::new(5))[0];
    assert_eq!(list(&smt.span), "1,5");
    assert_eq!(
        smt.groups.iter().map(list).collect::<Vec<_>>(),
        vec!["5", "1"]
    );
    assert!(smt.has(SHARE_CPUCAPACITY) && smt.has(SHARE_LLC));
    assert_eq!((smt.imbalance_pct, smt.cache_nice_tries), (110, 0));
    let mc = &sd.of(CpuId::new(5))[1];
    assert_eq!(
        mc.groups.iter().map(list).collect::<Vec<_>>(),
        vec!["1,5", "2,6", "3,7", "0,4"]
    );
    assert_eq!(sd.sd_llc(CpuId::new(5)).unwrap().level.name(), "MC");
    assert!(sd.sd_numa(CpuId::new(5)).is_none());
}

#[test]
fn tx7_per_cpu_llc_and_numa() {
    let t = preset("tx7-4n2c").unwrap();
    let sd = SchedDomains::build(&t, DomainEra::Linux26);
    // Per-CPU LLC: SMT and MC are single CPUs, so the node's package is the lowest level.
    assert_eq!(names(&sd, 3), vec!["PKG", "NUMA1"]);
    assert!(sd.sd_llc(CpuId::new(3)).is_none());
    let numa = &sd.of(CpuId::new(3))[1];
    assert_eq!(
        numa.groups.iter().map(list).collect::<Vec<_>>(),
        vec!["2-3", "4-5", "6-7", "0-1"]
    );
    assert!(numa.has(NUMA) && numa.has(SERIALIZE) && !numa.has(PREFER_SIBLING));
    // Distance 20 ≤ 30: exec/fork balancing and wake-affine stay.
    assert!(numa.has(WAKE_AFFINE) && numa.has(BALANCE_EXEC) && numa.has(BALANCE_FORK));
    assert_eq!(
        (
            numa.imbalance_pct,
            numa.busy_factor,
            numa.min_interval_ms,
            numa.max_interval_ms
        ),
        (125, 32, 8, 32)
    );
    assert_eq!(numa.cache_nice_tries, 2);
    assert_eq!(numa.numa_distance, Some(20));
}

#[test]
fn zen3_ccx_levels() {
    let t = preset("zen3-2s64c").unwrap();
    let sd = SchedDomains::build(&t, DomainEra::Linux510);
    assert_eq!(names(&sd, 0), vec!["SMT", "MC", "PKG", "NUMA1"]);
    let c = sd.of(CpuId::new(130));
    assert_eq!(list(&c[1].span), "0-7,128-135");
    assert_eq!(c[1].groups.len(), 8);
    assert_eq!(list(&c[2].span), "0-63,128-191");
    assert_eq!(c[2].groups.len(), 8);
    assert_eq!(c[3].groups.len(), 2);
    assert_eq!(t.llc_size(CpuId::new(130)), 16);
    assert_eq!(t.llc_id(CpuId::new(130)), CpuId::new(0));
}

#[test]
fn kunpeng_cluster_level() {
    let t = preset("kunpeng920-2n").unwrap();
    let sd = SchedDomains::build(&t, DomainEra::Linux510);
    assert_eq!(names(&sd, 30), vec!["CLS", "MC", "NUMA1"]);
    let cls = &sd.of(CpuId::new(30))[0];
    assert_eq!(list(&cls.span), "28-31");
    assert!(cls.has(CLUSTER) && cls.has(SHARE_LLC));
    assert_eq!((cls.imbalance_pct, cls.cache_nice_tries), (117, 1));
    let mc = &sd.of(CpuId::new(30))[1];
    assert_eq!(
        mc.groups.iter().map(list).collect::<Vec<_>>(),
        vec!["28-31", "32-35", "36-39", "40-43", "44-47", "24-27"]
    );
    assert_eq!(sd.sd_llc(CpuId::new(30)).unwrap().level.name(), "MC");
    assert_eq!(sd.of(CpuId::new(30))[2].numa_distance, Some(12));
}

fn machine(
    nodes: usize,
    per_node: usize,
    package_of: impl Fn(usize) -> usize,
    d: Vec<Vec<u32>>,
) -> Topology {
    let placements = (0..nodes * per_node)
        .map(|cpu| CpuPlacement {
            cpu: CpuId::new(cpu),
            core: cpu,
            cluster: None,
            llc: cpu / per_node,
            package: package_of(cpu / per_node),
            node: cpu / per_node,
            capacity: 1024,
        })
        .collect();
    Topology::from_cpus("m", "test", placements, d).unwrap()
}

#[test]
fn three_distance_levels_and_far_nodes() {
    // Four nodes in a ring: neighbours 20, opposite 40 (> 30, node_reclaim_distance).
    let d = vec![
        vec![10, 20, 40, 20],
        vec![20, 10, 20, 40],
        vec![40, 20, 10, 20],
        vec![20, 40, 20, 10],
    ];
    let t = machine(4, 2, |n| n, d);
    check_all(&t);
    let sd = SchedDomains::build(&t, DomainEra::Linux510);
    assert_eq!(names(&sd, 0), vec!["MC", "NUMA1", "NUMA2"]);
    let n1 = &sd.of(CpuId::new(0))[1];
    assert_eq!(list(&n1.span), "0-3,6-7");
    assert_eq!(
        n1.groups.iter().map(list).collect::<Vec<_>>(),
        vec!["0-1", "2-3", "6-7"]
    );
    assert!(n1.has(WAKE_AFFINE));
    let n2 = &sd.of(CpuId::new(0))[2];
    assert_eq!(n2.span_weight, 8);
    // The kernel's overlapping groups: the child (NUMA1) spans of CPU 0, then of the
    // first CPU not yet covered (4, on node 2).
    assert_eq!(
        n2.groups.iter().map(list).collect::<Vec<_>>(),
        vec!["0-3,6-7", "2-7"]
    );
    assert!(!n2.has(WAKE_AFFINE) && !n2.has(BALANCE_EXEC) && !n2.has(BALANCE_FORK));
    assert!(n2.has(BALANCE_NEWIDLE) && n2.has(NUMA));
}

#[test]
fn package_holding_two_nodes_keeps_numa() {
    // One package, two nodes of 2 CPUs, each node its own LLC (SNC-like).
    let t = machine(2, 2, |_| 0, vec![vec![10, 12], vec![12, 10]]);
    check_all(&t);
    let sd = SchedDomains::build(&t, DomainEra::Linux510);
    assert_eq!(names(&sd, 3), vec!["MC", "NUMA1"]);
    // Two packages in one node: the package is the LLC (MC), the node is one level up.
    let placements = (0..4)
        .map(|cpu| CpuPlacement {
            cpu: CpuId::new(cpu),
            core: cpu,
            cluster: None,
            llc: cpu / 2,
            package: cpu / 2,
            node: 0,
            capacity: 1024,
        })
        .collect();
    let t = Topology::from_cpus("m", "test", placements, vec![vec![10]]).unwrap();
    check_all(&t);
    let sd = SchedDomains::build(&t, DomainEra::Linux510);
    assert_eq!(names(&sd, 3), vec!["MC", "NODE"]);
    assert_eq!(
        sd.of(CpuId::new(3))[1]
            .groups
            .iter()
            .map(list)
            .collect::<Vec<_>>(),
        vec!["2-3", "0-1"]
    );
}

/// `describe` prints in `flags::NAMES` order, not bit order, and keeps the pre-6.10 name of
/// `SHARE_LLC`: `schedlab topo show` and the topology JSON depend on both.
#[test]
fn sd_flags_describe_order_and_names() {
    use schedlab_topo::SdFlags;
    let f = SdFlags::SHARE_LLC | SdFlags::LOAD_BALANCE | SdFlags::BALANCE_NEWIDLE;
    assert_eq!(
        describe(f),
        "LOAD_BALANCE|BALANCE_NEWIDLE|SHARE_PKG_RESOURCES"
    );
    assert_eq!(f.describe(), describe(f));
    assert_eq!(describe(SdFlags::empty()), "");
    assert_eq!(NAMES.len(), SdFlags::all().iter().count());
}

/// Two flags that follow the kernel's history: `SD_OVERLAP` on every NUMA level since 3.0
/// (the node level below them has none), and `SD_LOAD_BALANCE`, gone in 5.8, only in the
/// 2.6 and 3 eras' trees.
#[test]
fn overlap_on_numa_levels_and_load_balance_only_before_5_8() {
    use schedlab_topo::SdFlags;
    let t = preset("tx7-4n2c").unwrap();
    for era in DomainEra::ALL {
        let sd = SchedDomains::build(&t, era);
        for cpu in 0..t.nr_cpus() {
            for d in sd.of(CpuId::new(cpu)) {
                let numa = d.has(NUMA);
                assert_eq!(
                    d.has(SdFlags::OVERLAP),
                    numa && era != DomainEra::Linux26,
                    "{era:?} cpu {cpu} {}",
                    d.level.name()
                );
                assert_eq!(
                    d.has(SdFlags::LOAD_BALANCE),
                    era != DomainEra::Linux510,
                    "{era:?} cpu {cpu} {}",
                    d.level.name()
                );
            }
        }
    }
    let sd = SchedDomains::build(&t, DomainEra::Linux510);
    let numa = sd.of(CpuId::new(3)).last().unwrap();
    assert_eq!(
        numa.flags.describe(),
        "BALANCE_NEWIDLE|BALANCE_EXEC|BALANCE_FORK|WAKE_AFFINE|SERIALIZE|OVERLAP|NUMA"
    );
}
