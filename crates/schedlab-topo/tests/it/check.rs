//! Consistency checks shared by the tests: every CPU in exactly one core, cluster, LLC,
//! package and node; distances symmetric with the diagonal smallest; domain spans nested;
//! each domain's groups partition (non-NUMA) or cover (NUMA) its span.

use schedlab_topo::domains::flags;
use schedlab_topo::{CpuSet, DomainEra, SchedDomains, Topology};

fn exactly_once(t: &Topology, sets: &[CpuSet], what: &str) {
    for c in t.cpu_ids() {
        let n = sets.iter().filter(|s| s.contains(c)).count();
        assert_eq!(n, 1, "CPU {c} is in {n} {what}s");
    }
    assert!(sets.iter().all(|s| !s.is_empty()), "an empty {what}");
}

/// Checks the machine itself.
pub fn check_topology(t: &Topology) {
    exactly_once(t, t.cores(), "core");
    exactly_once(t, t.clusters(), "cluster");
    exactly_once(t, t.llcs(), "LLC");
    exactly_once(t, t.packages(), "package");
    exactly_once(t, t.nodes(), "node");
    for c in t.cpu_ids() {
        let info = t.cpu(c);
        assert_eq!(info.id, c);
        assert!(t.smt_siblings(c).contains(c));
        assert!(t.smt_siblings(c).is_subset(t.cluster_span(c)));
        assert!(t.cluster_span(c).is_subset(t.llc_span(c)));
        assert!(t.llc_span(c).is_subset(&t.packages()[info.package]));
        let (llc, node) = (t.llc_span(c), t.node_span(c));
        assert!(
            llc.is_subset(node) || node.is_subset(llc),
            "LLC straddles nodes at CPU {c}"
        );
        assert_eq!(t.llc_size(c), llc.count());
        assert_eq!(t.llc_id(c), llc.first().unwrap());
    }
    let d = t.distances();
    assert_eq!(d.len(), t.nr_nodes());
    for i in 0..d.len() {
        assert_eq!(d[i].len(), d.len(), "distance matrix not square");
        for j in 0..d.len() {
            assert_eq!(d[i][j], d[j][i], "asymmetric distance {i},{j}");
            assert!(d[i][j] > 0);
            if i != j {
                assert!(d[i][j] > d[i][i], "diagonal not smallest in row {i}");
            }
        }
    }
}

fn disjoint(groups: &[CpuSet]) -> bool {
    groups
        .iter()
        .enumerate()
        .all(|(i, a)| groups[i + 1..].iter().all(|b| !a.intersects(b)))
}

/// Checks the sched-domain tree of every CPU, for one era.
pub fn check_domains(t: &Topology, era: DomainEra) -> SchedDomains {
    let sd = SchedDomains::build(t, era);
    let n = t.nr_cpus();
    for cpu in t.cpu_ids() {
        let chain = sd.of(cpu);
        if n > 1 {
            let top = chain.last().expect("a multi-CPU machine has domains");
            assert_eq!(
                top.span,
                t.all_cpus(),
                "CPU {cpu}: top domain does not span the machine"
            );
        } else {
            assert!(chain.is_empty());
        }
        for (i, d) in chain.iter().enumerate() {
            assert_eq!(d.index, i);
            assert_eq!(d.span_weight, d.span.count());
            assert!(
                d.span.contains(cpu),
                "CPU {cpu} not in its own {}",
                d.level.name()
            );
            assert!(
                d.span_weight >= 2,
                "degenerate level {} kept",
                d.level.name()
            );
            assert!(
                d.groups.len() >= 2,
                "CPU {cpu} {}: {} group(s)",
                d.level.name(),
                d.groups.len()
            );
            assert!(d.groups[0].contains(cpu), "own group not first");
            let mut union = CpuSet::new(n);
            for g in &d.groups {
                assert!(!g.is_empty());
                assert!(g.is_subset(&d.span), "group {g} outside span {}", d.span);
                union.or_assign(g);
            }
            assert_eq!(
                union,
                d.span,
                "groups do not cover the span of {}",
                d.level.name()
            );
            if d.has(flags::NUMA) {
                assert!(d.numa_distance.is_some());
            } else {
                assert!(
                    disjoint(&d.groups),
                    "CPU {cpu} {} groups overlap",
                    d.level.name()
                );
            }
            if i == 0 {
                assert!(
                    d.groups.iter().all(|g| g.count() == 1),
                    "lowest groups are single CPUs"
                );
            } else {
                let child = &chain[i - 1];
                assert!(
                    child.span.is_subset(&d.span) && child.span != d.span,
                    "spans not strictly nested"
                );
                assert_eq!(
                    d.groups[0],
                    child.span,
                    "own group of {} is not the child span",
                    d.level.name()
                );
            }
            assert_eq!(d.has(flags::SHARE_CPUCAPACITY), d.level.name() == "SMT");
            assert!(
                !d.has(flags::BALANCE_WAKE),
                "BALANCE_WAKE is off by default"
            );
            assert!(d.has(flags::BALANCE_NEWIDLE));
        }
        // sd_llc is the highest SHARE_LLC domain and spans the LLC.
        match sd.sd_llc(cpu) {
            Some(d) => assert_eq!(&d.span, t.llc_span(cpu)),
            None => assert_eq!(t.llc_size(cpu), 1),
        }
        match sd.sd_numa(cpu) {
            Some(d) => assert!(d.has(flags::NUMA) && t.nr_nodes() > 1),
            None => assert!(t.nr_nodes() == 1 || chain.iter().all(|d| !d.has(flags::NUMA))),
        }
        for other in t.cpu_ids() {
            if other == cpu {
                continue;
            }
            let d = sd
                .lowest_spanning(cpu, other)
                .expect("the top spans every CPU");
            assert!(d.span.contains(other));
            assert_eq!(
                t.cpus_share_cache(cpu, other),
                t.llc_span(cpu).contains(other)
            );
        }
    }
    sd
}

/// Both checks, for every era.
pub fn check_all(t: &Topology) {
    check_topology(t);
    for era in DomainEra::ALL {
        check_domains(t, era);
    }
}
