//! The committed sysfs trees (tests/fixtures/sysfs, see generate.sh) and broken copies
//! of them. Expected values were worked out by hand from generate.sh.

use std::fs;
use std::path::{Path, PathBuf};

use schedlab_topo::CpuId;
use schedlab_topo::spec::{TopologyOptions, parse_topology};
use schedlab_topo::sysfs::from_sysfs;
use schedlab_topo::{DomainEra, SchedDomains, Topology};

use crate::check::check_all;

fn tree(name: &str) -> PathBuf {
    crate::fixtures().join("sysfs").join(name)
}

fn host_at(root: &Path) -> Result<Topology, String> {
    let o = TopologyOptions {
        sysfs_root: Some(root.to_path_buf()),
        ..Default::default()
    };
    parse_topology("host", &o).map_err(|e| e.to_string())
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// A scratch copy of a fixture tree to break.
fn scratch(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(name);
    copy_dir(&tree(name), &root);
    (dir, root)
}

fn write(root: &Path, rel: &str, text: &str) {
    fs::write(root.join("devices/system").join(rel), format!("{text}\n")).unwrap();
}

#[test]
fn vm_tree_two_cpus_one_node() {
    let t = host_at(&tree("vm-2cpu")).unwrap();
    assert_eq!(t.name, "host");
    assert!(t.source.contains("vm-2cpu"));
    assert_eq!((t.nr_cpus(), t.nr_cores(), t.threads_per_core()), (2, 2, 1));
    assert_eq!((t.nr_llcs(), t.nr_packages(), t.nr_nodes()), (1, 1, 1));
    // Its clusters are single cores: dropped as degenerate.
    assert!(!t.has_clusters());
    assert_eq!(t.distances(), &[vec![10]]);
    assert!(t.cpus_share_cache(CpuId::new(0), CpuId::new(1)));
    check_all(&t);
}

#[test]
fn two_nodes_smt() {
    let t = from_sysfs(&tree("2node-8core-smt2")).unwrap();
    assert_eq!(t.name, "2node-8core-smt2");
    assert_eq!(
        (t.nr_cpus(), t.nr_cores(), t.threads_per_core()),
        (16, 8, 2)
    );
    assert_eq!((t.nr_llcs(), t.nr_packages(), t.nr_nodes()), (2, 2, 2));
    assert!(!t.has_clusters());
    assert_eq!(t.smt_siblings(CpuId::new(3)).to_list_string(), "3,11");
    assert_eq!(t.smt_siblings(CpuId::new(12)).to_list_string(), "4,12");
    assert_eq!(t.llc_span(CpuId::new(12)).to_list_string(), "4-7,12-15");
    assert_eq!(t.node_span(CpuId::new(9)).to_list_string(), "0-3,8-11");
    assert_eq!(t.distances(), &[vec![10, 21], vec![21, 10]]);
    check_all(&t);
    let sd = SchedDomains::build(&t, DomainEra::Linux510);
    let names: Vec<String> = sd
        .of(CpuId::new(0))
        .iter()
        .map(|d| d.level.name())
        .collect();
    assert_eq!(names, vec!["SMT", "MC", "NUMA1"]);
    assert_eq!(sd.of(CpuId::new(0))[2].numa_distance, Some(21));
}

#[test]
fn one_node_two_llcs_with_clusters_and_capacity() {
    let t = from_sysfs(&tree("1node-2llc-clusters")).unwrap();
    assert_eq!(
        (t.nr_cpus(), t.nr_cores(), t.threads_per_core()),
        (16, 16, 1)
    );
    assert_eq!(
        (t.nr_clusters(), t.nr_llcs(), t.nr_packages(), t.nr_nodes()),
        (4, 2, 1, 1)
    );
    assert!(t.has_clusters());
    assert_eq!(t.cluster_span(CpuId::new(9)).to_list_string(), "8-11");
    assert_eq!(t.llc_span(CpuId::new(9)).to_list_string(), "8-15");
    assert_eq!(t.cpu(CpuId::new(7)).capacity, 1024);
    assert_eq!(t.cpu(CpuId::new(8)).capacity, 512);
    assert_eq!(t.distances(), &[vec![10]]);
    check_all(&t);
    let sd = SchedDomains::build(&t, DomainEra::Linux510);
    let names: Vec<String> = sd
        .of(CpuId::new(9))
        .iter()
        .map(|d| d.level.name())
        .collect();
    assert_eq!(names, vec!["CLS", "MC", "PKG"]);
    let mc = &sd.of(CpuId::new(9))[1];
    assert_eq!(
        mc.groups
            .iter()
            .map(|g| g.to_list_string())
            .collect::<Vec<_>>(),
        vec!["8-11", "12-15"]
    );
    assert!(
        t.cpus_share_resources(CpuId::new(8), CpuId::new(11))
            && !t.cpus_share_resources(CpuId::new(8), CpuId::new(12))
    );
}

#[test]
fn a_directory_spec_is_a_sysfs_tree() {
    let root = tree("2node-8core-smt2");
    let t = parse_topology(root.to_str().unwrap(), &TopologyOptions::default()).unwrap();
    assert_eq!(t.nr_cpus(), 16);
}

#[test]
fn real_host_reads_without_error() {
    // Whatever this machine is, /sys must parse into a consistent machine.
    if Path::new("/sys/devices/system/cpu/cpu0/topology").exists() {
        let t = parse_topology("host", &TopologyOptions::default()).unwrap();
        assert_eq!(t.name, "host");
        check_all(&t);
    }
}

#[test]
fn unreadable_trees() {
    let e = host_at(Path::new("/nonexistent/sysroot")).unwrap_err();
    assert!(
        e.contains("cannot read /nonexistent/sysroot/devices/system/cpu"),
        "{e}"
    );
    assert!(e.contains("devices/system/cpu"), "{e}");

    let (_d, root) = scratch("2node-8core-smt2");
    fs::remove_file(root.join("devices/system/cpu/cpu3/topology/physical_package_id")).unwrap();
    let e = host_at(&root).unwrap_err();
    assert!(
        e.contains("cannot read ") && e.ends_with("No such file or directory (os error 2)"),
        "{e}"
    );
    assert!(e.contains("cpu/cpu3/topology/physical_package_id"), "{e}");
}

#[test]
fn broken_files_are_named() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "cpu/cpu3/topology/core_cpus_list",
            "3,x",
            "cpu3/topology/core_cpus_list:1: expected a cpulist like 0-3,8, found 'x'",
        ),
        (
            "cpu/cpu3/topology/core_cpus_list",
            "3,12",
            "cpu3/topology/core_cpus_list:1: expected the same SMT sibling list as CPU 12",
        ),
        (
            "cpu/cpu3/topology/core_cpus_list",
            "11",
            "expected a SMT sibling list that contains CPU 3 itself, found '11'",
        ),
        (
            "cpu/cpu3/topology/physical_package_id",
            "zero",
            "cpu3/topology/physical_package_id:1: expected a package id (an integer), found 'zero'",
        ),
        (
            "cpu/cpu5/cache/index3/shared_cpu_list",
            "4-7",
            "cpu4/cache/index3/shared_cpu_list:1: expected the same LLC list as CPU 5",
        ),
        (
            "cpu/cpu5/cache/index2/type",
            "Weird",
            "cpu5/cache/index2/type:1: expected Data, Instruction or Unified, found 'Weird'",
        ),
        (
            "node/node1/cpulist",
            "3-7,12-15",
            "node1/cpulist:1: expected each CPU on exactly one node, found CPU 3 also on node 0",
        ),
        (
            "node/node1/cpulist",
            "4-6,12-15",
            "expected CPU 7 in some node*/cpulist",
        ),
        (
            "node/node1/cpulist",
            "4-7,12-15,12",
            "node1/cpulist:1: expected each CPU listed once, found CPU 12 twice",
        ),
        (
            "node/node0/distance",
            "10",
            "node0/distance:1: expected 2 distances, one per node (the matrix must be square), found 1",
        ),
        (
            "node/node0/distance",
            "10 20",
            "bad node distance matrix: asymmetric: 0->1 is 20 but 1->0 is 21",
        ),
        (
            "node/node0/distance",
            "0 21",
            "bad node distance matrix: distance 0->0 is zero",
        ),
        (
            "node/node0/distance",
            "10 abc",
            "node0/distance:1: expected distances (positive integers), found 'abc'",
        ),
        (
            "cpu/online",
            "0-3,5-15",
            "CPU ids must be 0..15 without gaps; CPU 4 is missing",
        ),
        (
            "cpu/online",
            "0-3,5-",
            "cpu/online:1: expected a cpulist like 0-3,8, found '5-'",
        ),
    ];
    for (file, text, needle) in cases {
        let (_d, root) = scratch("2node-8core-smt2");
        write(&root, file, text);
        let e = host_at(&root).unwrap_err();
        assert!(e.contains(needle), "{file} = {text}: {e}");
    }
}

/// A capacity of 0 (which divides utilisation by zero) or above SCHED_CAPACITY_SCALE (1024,
/// the biggest CPU after the kernel's normalisation) is no machine the kernel would build,
/// so it is refused rather than simulated.
#[test]
fn cpu_capacity_outside_1_to_1024_is_refused() {
    for bad in ["0", "1025", "4294967295"] {
        let (_d, root) = scratch("1node-2llc-clusters");
        write(&root, "cpu/cpu8/cpu_capacity", bad);
        let e = host_at(&root).unwrap_err();
        assert!(
            e.contains("cpu8/cpu_capacity:1: expected a capacity in 1..=1024")
                && e.contains(&format!("'{bad}'")),
            "{bad}: {e}"
        );
    }
    let (_d, root) = scratch("1node-2llc-clusters");
    write(&root, "cpu/cpu8/cpu_capacity", "1");
    assert_eq!(host_at(&root).unwrap().cpu(CpuId::new(8)).capacity, 1);
}

/// An attribute that is a FIFO (which would block forever), a link to /dev/zero (read until
/// memory runs out) or a huge file is a clear error naming the file, at once: captured
/// sysfs trees come from other machines and are not to be trusted.
#[test]
fn attributes_that_are_not_small_regular_files_are_refused() {
    let node0 = "devices/system/node/node0/cpulist";
    // A link to /dev/zero.
    let (_d1, root) = scratch("vm-2cpu");
    fs::remove_file(root.join(node0)).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join(node0)).unwrap();
    let e = host_at(&root).unwrap_err();
    assert!(
        e.contains("node0/cpulist") && e.contains("not a regular file"),
        "{e}"
    );
    // A FIFO: nothing ever writes to it, so opening it would block.
    let (_d2, root) = scratch("vm-2cpu");
    fs::remove_file(root.join(node0)).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(root.join(node0))
        .status()
        .is_ok_and(|s| s.success());
    if made {
        let e = host_at(&root).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
    }
    // A regular file far larger than any attribute.
    let (_d3, root) = scratch("vm-2cpu");
    fs::write(root.join(node0), "0-1\n".repeat(40_000)).unwrap();
    let e = host_at(&root).unwrap_err();
    assert!(e.contains("larger than"), "{e}");
}
