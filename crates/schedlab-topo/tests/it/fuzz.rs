//! Fuzzing harnesses of the text parsers (they read files copied from other machines, so no
//! input may panic or hang), runnable on the stable
//! toolchain: proptest mutates the committed fixtures (the seed corpus: every file under
//! tests/fixtures/lscpu and tests/fixtures/numactl) by byte edits and splices, and draws
//! arbitrary strings for the compact notation and cpulists. The property is that every input
//! ends in `Ok` or an error, never a panic or a hang. The suite runs proptest's default
//! number of cases; for a long campaign set `PROPTEST_CASES`, e.g.
//! `PROPTEST_CASES=1000000 cargo test --release -p schedlab-topo --test it fuzz`. Small
//! random sysfs trees written to a temporary directory go through `from_sysfs` too (an
//! accepted tree must be a consistent machine).

use proptest::prelude::*;
use schedlab_topo::spec::{TopologyOptions, parse_compact, parse_text};

fn corpus() -> Vec<String> {
    let mut v = Vec::new();
    for d in ["lscpu", "numactl"] {
        for e in std::fs::read_dir(crate::fixtures().join(d))
            .unwrap()
            .flatten()
        {
            if let Ok(t) = std::fs::read_to_string(e.path()) {
                v.push(t);
            }
        }
    }
    assert!(!v.is_empty());
    v
}

/// Applies `edits` (position, kind, byte) to `text`; positions wrap around its length.
fn mutate(text: &str, edits: &[(usize, u8, u8)], other: &str) -> String {
    let mut b = text.as_bytes().to_vec();
    for &(pos, kind, byte) in edits {
        let at = if b.is_empty() { 0 } else { pos % (b.len() + 1) };
        let pick = b"0123456789,-:# \nyesnoYN";
        match kind % 6 {
            0 => b.insert(at, byte),
            1 if at < b.len() => {
                b.remove(at);
            }
            2 if at < b.len() => b[at] = pick[byte as usize % pick.len()],
            3 => b.insert(at, pick[byte as usize % pick.len()]),
            // Splice a piece of another corpus file (two outputs concatenated, a line lost).
            4 => {
                let o = other.as_bytes();
                let s = (byte as usize * 7) % (o.len() + 1);
                let e = (s + (pos % 200)).min(o.len());
                b.splice(at..at, o[s..e].iter().copied());
            }
            _ if at < b.len() => {
                let e = (at + byte as usize).min(b.len());
                b.drain(at..e);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

proptest! {
    #[test]
    fn mutated_machine_descriptions_never_panic(
        which in 0usize..64,
        splice in 0usize..64,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..12),
    ) {
        let c = corpus();
        let text = mutate(&c[which % c.len()], &edits, &c[splice % c.len()]);
        let _ = parse_text(&text, "fuzz.txt", &TopologyOptions::default());
        let _ = schedlab_topo::lscpu::parse_lscpu_p(&text, "fuzz", "fuzz");
        let _ = schedlab_topo::lscpu::parse_lscpu_e(&text, "fuzz", "fuzz");
    }

    #[test]
    fn arbitrary_compact_specs_and_cpulists_never_panic(s in "[0-9nlctNLCT,:\\- ]{0,24}") {
        let _ = parse_compact(&s);
        let _ = schedlab_topo::cpulist::parse_cpu_list(&s);
        let _ = schedlab_topo::cpulist::parse_cpu_words(&s);
    }
}

/// A small sysfs tree of a regular machine: `cpus` CPUs (SMT `smt`), `nodes` nodes and LLCs,
/// clusters of two cores; the files as `(relative path, contents)`.
fn sysfs_files(cpus: usize, smt: usize, nodes: usize) -> Vec<(String, String)> {
    let cores = cpus.div_ceil(smt);
    let core = |c: usize| c % cores;
    let node = |c: usize| core(c) * nodes / cores;
    let list = |f: &dyn Fn(usize) -> bool| -> String {
        let v: Vec<String> = (0..cpus).filter(|&c| f(c)).map(|c| c.to_string()).collect();
        v.join(",")
    };
    let mut files = vec![("cpu/online".to_string(), format!("0-{}", cpus - 1))];
    for c in 0..cpus {
        let t = format!("cpu/cpu{c}/topology");
        files.push((format!("{t}/core_cpus_list"), list(&|d| core(d) == core(c))));
        files.push((
            format!("{t}/thread_siblings_list"),
            list(&|d| core(d) == core(c)),
        ));
        files.push((format!("{t}/core_id"), core(c).to_string()));
        files.push((format!("{t}/physical_package_id"), node(c).to_string()));
        files.push((format!("{t}/cluster_id"), (core(c) / 2).to_string()));
        files.push((
            format!("{t}/cluster_cpus_list"),
            list(&|d| core(d) / 2 == core(c) / 2),
        ));
        for (i, (level, kind)) in [
            (1, "Data"),
            (1, "Instruction"),
            (2, "Unified"),
            (3, "Unified"),
        ]
        .iter()
        .enumerate()
        {
            let k = format!("cpu/cpu{c}/cache/index{i}");
            let shared = if *level == 3 {
                list(&|d| node(d) == node(c))
            } else {
                list(&|d| core(d) == core(c))
            };
            files.push((format!("{k}/level"), level.to_string()));
            files.push((format!("{k}/type"), kind.to_string()));
            files.push((format!("{k}/shared_cpu_list"), shared));
        }
        files.push((format!("cpu/cpu{c}/cpu_capacity"), "1024".into()));
    }
    for n in 0..nodes {
        files.push((format!("node/node{n}/cpulist"), list(&|d| node(d) == n)));
        let d: Vec<&str> = (0..nodes)
            .map(|m| if m == n { "10" } else { "21" })
            .collect();
        files.push((format!("node/node{n}/distance"), d.join(" ")));
    }
    files
}

/// Values a broken or unusual sysfs attribute may hold.
const ODD_VALUES: &[&str] = &[
    "",
    "\n",
    "x",
    "-1",
    "0-",
    "-",
    ",",
    "0,,1",
    "3-1",
    "0-4294967295",
    "4294967296",
    "99999999999999999999",
    "0-8191",
    "8192",
    "0-3,8-11",
    "7",
    "0",
    "1",
    "2",
    "4",
    "Data",
    "Instruction",
    "Unified",
    "Weird",
    "10",
    "10 21",
    "21 10",
    "10 10",
    "255 10",
    "0 0",
    "10 21 31",
    "1024",
    "2048",
    "512",
    "1025",
    "1e3",
    " 3 ",
    "0\x0001",
];

fn write_tree(root: &std::path::Path, files: &[(String, String)]) {
    for (rel, text) in files {
        let p = root.join("devices/system").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{text}\n")).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // 64 trees in the suite (each is a directory written to disk); PROPTEST_CASES
        // overrides for a campaign.
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
        max_shrink_iters: 128,
        ..ProptestConfig::default()
    })]

    /// Small random sysfs trees (a regular machine, then edits: a value replaced by an odd
    /// one, a file removed or made a directory or a link to /dev/zero, a CPU's directory
    /// without its files) end in `Ok` or an error; an accepted tree is a consistent machine.
    #[test]
    fn random_sysfs_trees_never_panic(
        cpus in 1usize..=8,
        smt in 1usize..=2,
        nodes in 1usize..=2,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<usize>()), 0..6),
    ) {
        let nodes = nodes.min(cpus.div_ceil(smt));
        let mut files = sysfs_files(cpus, smt, nodes);
        let mut special = Vec::new();
        for (which, kind, value) in edits {
            let i = which % files.len();
            match kind % 8 {
                0..=3 => files[i].1 = ODD_VALUES[value % ODD_VALUES.len()].to_string(),
                4 => files[i].1 = format!("{}-{}", value % 9, (value / 9) % 9),
                5 => {
                    files.remove(i);
                }
                6 => special.push((files.remove(i).0, value % 2 == 0)),
                _ => files.push((format!("cpu/cpu{}/online", value % 10), "1".into())),
            }
            if files.is_empty() {
                break;
            }
        }
        let dir = tempfile::tempdir().unwrap();
        write_tree(dir.path(), &files);
        for (rel, as_dir) in special {
            let p = dir.path().join("devices/system").join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            // The same path can come twice (edit 7 adds `online` files that may exist): the
            // special one replaces what is there.
            let _ = std::fs::remove_file(&p);
            let _ = std::fs::remove_dir_all(&p);
            if as_dir {
                std::fs::create_dir_all(&p).unwrap();
            } else {
                std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
            }
        }
        if let Ok(t) = schedlab_topo::sysfs::from_sysfs(dir.path()) {
            crate::check::check_all(&t);
        }
        let o = TopologyOptions {
            sysfs_root: Some(dir.path().to_path_buf()),
            ..Default::default()
        };
        let _ = schedlab_topo::spec::parse_topology("host", &o);
    }
}
