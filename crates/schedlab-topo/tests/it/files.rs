//! Input files: the numactl fixture of the issue, lscpu output, JSON; each must describe
//! the machine its preset describes.

use schedlab_topo::spec::{TopologyOptions, parse_topology};
use schedlab_topo::{Topology, preset};

use crate::check::check_all;

fn fixture(rel: &str) -> String {
    crate::fixtures().join(rel).to_str().unwrap().to_string()
}

fn smt2() -> TopologyOptions {
    TopologyOptions {
        smt: Some(2),
        ..Default::default()
    }
}

#[test]
fn numactl_fixture_is_westmere_2s20c() {
    let path = fixture("numactl/westmere-2s20c.txt");
    let t = parse_topology(&path, &smt2()).unwrap();
    let p = preset("westmere-2s20c").unwrap();
    assert!(t.same_layout(&p));
    assert_eq!(t.name, "westmere-2s20c");
    assert!(t.source.contains("numactl --hardware output in"));
    // The JSON forms agree too, once name and source are set aside.
    let strip = |t: &Topology| {
        let mut v = t.to_json_value();
        let o = v.as_object_mut().unwrap();
        o.remove("name");
        o.remove("source");
        v
    };
    assert_eq!(strip(&t), strip(&p));
    assert_eq!(t.compact_string().as_deref(), Some("2n2l10c2t"));
    check_all(&t);
    // Without --smt every CPU is its own core.
    let t = parse_topology(&path, &TopologyOptions::default()).unwrap();
    assert_eq!((t.nr_cores(), t.threads_per_core()), (40, 1));
}

#[test]
fn lscpu_fixtures() {
    let t = parse_topology(
        &fixture("lscpu/westmere-2s20c-p.txt"),
        &TopologyOptions::default(),
    )
    .unwrap();
    assert!(t.same_layout(&preset("westmere-2s20c").unwrap()));
    let p = parse_topology(&fixture("lscpu/vm-2cpu-p.txt"), &TopologyOptions::default()).unwrap();
    let e = parse_topology(&fixture("lscpu/vm-2cpu-e.txt"), &TopologyOptions::default()).unwrap();
    assert!(p.same_layout(&e));
    assert_eq!(
        (p.nr_cpus(), p.nr_cores(), p.nr_llcs(), p.nr_nodes()),
        (2, 2, 1, 1)
    );
    // The lscpu capture and the sysfs capture of this VM agree.
    let s = schedlab_topo::sysfs::from_sysfs(&crate::fixtures().join("sysfs/vm-2cpu")).unwrap();
    assert!(s.same_layout(&p));
    // --smt makes no sense for lscpu output, which has cores.
    let err = parse_topology(&fixture("lscpu/vm-2cpu-p.txt"), &smt2())
        .unwrap_err()
        .to_string();
    assert!(err.contains("--smt only applies to numactl"), "{err}");
}

#[test]
fn json_file_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let p = preset("kunpeng920-2n").unwrap();
    let path = dir.path().join("k.json");
    std::fs::write(&path, p.to_json()).unwrap();
    let t = parse_topology(path.to_str().unwrap(), &TopologyOptions::default()).unwrap();
    assert!(t.same_layout(&p));
    assert_eq!(t.name, "kunpeng920-2n");
}

#[test]
fn missing_file_and_unknown_names() {
    let e = parse_topology("no/such/file.txt", &TopologyOptions::default())
        .unwrap_err()
        .to_string();
    assert_eq!(e, "cannot read no/such/file.txt: no such file or directory");
    let e = parse_topology("numactl.txt", &TopologyOptions::default())
        .unwrap_err()
        .to_string();
    assert_eq!(e, "cannot read numactl.txt: no such file or directory");
    let e = parse_topology("westmere-2s", &TopologyOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("did you mean 'westmere-2s20c'?"), "{e}");
}
