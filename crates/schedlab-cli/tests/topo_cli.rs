//! `schedlab topo list|show` end to end: a real two-socket Westmere's `numactl --hardware`
//! output and the `westmere-2s20c` preset describe the same machine, `host` agrees with
//! `lscpu -p`, and every kind of bad input gets a clear error (exit code 2, no panic).

mod common;

use common::{schedlab, success, tempdir};

use std::path::PathBuf;
use std::process::Command;

use predicates::prelude::*;
use serde_json::Value;

/// The `numactl --hardware` output of the two-socket Westmere that `westmere-2s20c` models.
const ISSUE_NUMACTL: &str = "available: 2 nodes (0-1)
node 0 cpus: 0 1 2 3 4 5 6 7 8 9 20 21 22 23 24 25 26 27 28 29
node 0 size: 15890 MB
node 0 free: 2651 MB
node 1 cpus: 10 11 12 13 14 15 16 17 18 19 30 31 32 33 34 35 36 37 38 39
node 1 size: 16125 MB
node 1 free: 2063 MB
node distances:
node 0 1
0: 10 20
1: 20 10
";

fn topo_fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schedlab-topo/tests/fixtures")
}

fn json_of(args: &[&str]) -> Value {
    let out = schedlab().args(args).output().unwrap();
    success(&out, format_args!("{args:?}"));
    serde_json::from_slice(&out.stdout).expect("--json prints one JSON object")
}

fn without_name_source(mut v: Value) -> Value {
    let o = v.as_object_mut().unwrap();
    o.remove("name");
    o.remove("source");
    v
}

/// A file in a fresh temporary directory.
fn temp_file(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempdir();
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    let s = p.to_str().unwrap().to_string();
    (dir, s)
}

/// Runs `schedlab ARGS`, expects exit code 2 and an error containing every needle.
fn fails_with(args: &[&str], needles: &[&str]) {
    let out = schedlab().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: missing '{n}' in: {err}");
    }
}

#[test]
fn list_shows_every_preset_with_source() {
    let out = schedlab().args(["topo", "list"]).output().unwrap();
    success(&out, "schedlab");
    let text = String::from_utf8(out.stdout).unwrap();
    for name in [
        "desktop-4c8t",
        "core2quad",
        "westmere-2s20c",
        "westmere-4s40c",
        "xeon-2s12c",
        "tx7-4n2c",
        "zen3-2s64c",
        "spr-2s56c",
        "kunpeng920-2n",
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} not listed"));
        assert!(line.len() > name.len() + 10, "no description for {name}");
    }
    assert!(text.matches("source: ").count() >= 9);
    assert!(text.contains(" 80 CPUs") && text.contains("256 CPUs") && text.contains("224 CPUs"));
}

#[test]
fn numactl_file_and_preset_are_the_same_machine() {
    // The committed fixture is that same text, so the file-based tests read the real output.
    let fixture = topo_fixtures().join("numactl/westmere-2s20c.txt");
    assert_eq!(std::fs::read_to_string(&fixture).unwrap(), ISSUE_NUMACTL);
    let (_d, file) = temp_file("numactl.txt", ISSUE_NUMACTL);
    let preset = json_of(&["topo", "show", "westmere-2s20c", "--json"]);
    let from_file = json_of(&["topo", "show", &file, "--smt", "2", "--json"]);
    assert_eq!(preset["name"], "westmere-2s20c");
    assert_eq!(from_file["name"], "numactl");
    assert!(
        from_file["source"]
            .as_str()
            .unwrap()
            .contains("numactl --hardware")
    );
    assert_eq!(without_name_source(preset), without_name_source(from_file));
}

/// The example file the README shows `topo show` on is that machine too.
#[test]
fn the_readme_numactl_example_is_the_westmere() {
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/machines/numactl-westmere-2s20c.txt");
    assert_eq!(std::fs::read_to_string(&example).unwrap(), ISSUE_NUMACTL);
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    assert!(readme.contains("topo show docs/machines/numactl-westmere-2s20c.txt --smt 2"));
    let preset = json_of(&["topo", "show", "westmere-2s20c", "--json"]);
    let from_file = json_of(&[
        "topo",
        "show",
        example.to_str().unwrap(),
        "--smt",
        "2",
        "--json",
    ]);
    assert_eq!(without_name_source(preset), without_name_source(from_file));
}

#[test]
fn json_has_the_documented_keys() {
    let v = json_of(&["topo", "show", "westmere-2s20c", "--json"]);
    assert_eq!(v["cpus"], 40);
    assert_eq!(v["cores"], 20);
    assert_eq!(v["llcs"], 2);
    assert_eq!(v["nodes"], 2);
    assert_eq!(v["packages"], 2);
    assert_eq!(v["threads_per_core"], 2);
    assert_eq!(v["clusters"], 0, "no clusters");
    assert_eq!(v["distances"], serde_json::json!([[10, 20], [20, 10]]));
    assert_eq!(v["cpu"].as_array().unwrap().len(), 40);
    let c25 = &v["cpu"][25];
    assert_eq!(
        (
            c25["id"].clone(),
            c25["core"].clone(),
            c25["llc"].clone(),
            c25["node"].clone(),
            c25["package"].clone()
        ),
        (25.into(), 5.into(), 0.into(), 0.into(), 0.into())
    );
    assert_eq!(c25["siblings"], serde_json::json!([5, 25]));
    assert_eq!(v["cpu"][31]["node"], 1);
    assert_eq!(v["era"], "5.10");
    let chain = v["domains"][0]["chain"].as_array().unwrap();
    let levels: Vec<&str> = chain.iter().map(|d| d["level"].as_str().unwrap()).collect();
    assert_eq!(levels, vec!["SMT", "MC", "NUMA1"]);
    assert_eq!(chain[0]["span"], serde_json::json!([0, 20]));
    assert_eq!(chain[0]["groups"], serde_json::json!([[0], [20]]));
    assert_eq!(chain[1]["groups"].as_array().unwrap().len(), 10);
    assert_eq!(chain[0]["imbalance_pct"], 110);
    assert_eq!(chain[1]["imbalance_pct"], 117);
    assert_eq!(chain[1]["busy_factor"], 16);
    assert_eq!(chain[1]["min_interval_ms"], 20);
    assert_eq!(chain[1]["max_interval_ms"], 40);
    assert_eq!(chain[2]["cache_nice_tries"], 2);
    let flags: Vec<&str> = chain[2]["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(
        flags.contains(&"NUMA")
            && flags.contains(&"SERIALIZE")
            && !flags.contains(&"PREFER_SIBLING")
    );
    // As a 5.10+ kernel lists them: SD_OVERLAP on NUMA levels, no SD_LOAD_BALANCE (gone in
    // 5.8) anywhere.
    assert!(flags.contains(&"OVERLAP"), "{flags:?}");
    assert!(!v.to_string().contains("LOAD_BALANCE"));
    assert_eq!(v["domains"].as_array().unwrap().len(), 40);
    // An older era changes the numbers.
    let v = json_of(&["topo", "show", "westmere-2s20c", "--json", "--era", "3"]);
    assert_eq!(v["era"], "3");
    assert_eq!(v["domains"][0]["chain"][2]["imbalance_pct"], 125);
    assert_eq!(v["domains"][0]["chain"][2]["busy_factor"], 32);
}

#[test]
fn json_output_reads_back_as_a_spec() {
    let v = json_of(&["topo", "show", "kunpeng920-2n", "--json"]);
    let (_d, file) = temp_file("k.json", &serde_json::to_string_pretty(&v).unwrap());
    let back = json_of(&["topo", "show", &file, "--json"]);
    assert_eq!(back, v);
}

#[test]
fn text_summary_and_domain_tree() {
    schedlab()
        .args([
            "topo",
            "show",
            "westmere-2s20c",
            "--cpu",
            "25",
            "--era",
            "2.6",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("CPU(s):             40"))
        .stdout(predicate::str::contains("Thread(s) per core: 2"))
        .stdout(predicate::str::contains("LLC 0: CPUs 0-9,20-29 (20 CPUs)"))
        .stdout(predicate::str::contains("Package 1: CPUs 10-19,30-39"))
        .stdout(predicate::str::contains(
            "node 1 cpus: 10 11 12 13 14 15 16 17 18 19 30 31",
        ))
        .stdout(predicate::str::contains("node distances:"))
        .stdout(predicate::str::contains("  0:   10  20"))
        .stdout(predicate::str::contains(
            "Sched domains of CPU 25 (era 2.6):",
        ))
        .stdout(predicate::str::contains(
            "0 SMT    span 5,25 (2 CPUs), 2 groups: {25} {5}",
        ))
        .stdout(predicate::str::contains(
            "imbalance_pct 125, busy_factor 32, interval 8-32 ms, cache_nice_tries 2, distance 20",
        ))
        .stdout(predicate::str::contains("sd_llc: MC (size 20, id 0)"));
    // -t works too, and the default machine is desktop-4c8t.
    schedlab()
        .args(["topo", "show", "-t", "core2quad"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Machine:            core2quad"));
    schedlab()
        .args(["topo", "show"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Machine:            desktop-4c8t"));
    schedlab()
        .args(["topo", "show", "2n4l4c2t"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Compact form:       2n4l4c2t"))
        .stdout(predicate::str::contains("CPU(s):             32"));
}

#[test]
fn sysfs_trees_by_option_and_env() {
    let root = topo_fixtures().join("sysfs/2node-8core-smt2");
    let root = root.to_str().unwrap();
    let v = json_of(&["topo", "show", "host", "--sysfs-root", root, "--json"]);
    assert_eq!(
        (v["cpus"].clone(), v["cores"].clone(), v["nodes"].clone()),
        (16.into(), 8.into(), 2.into())
    );
    assert_eq!(v["name"], "host");
    let out = schedlab()
        .args(["topo", "show", "host", "--json"])
        .env("SCHEDLAB_SYSFS_ROOT", root)
        .output()
        .unwrap();
    success(&out, "schedlab");
    let w: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(w, v);
    let v = json_of(&[
        "topo",
        "show",
        "host",
        "--json",
        "--sysfs-root",
        topo_fixtures()
            .join("sysfs/1node-2llc-clusters")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(
        (v["clusters"].clone(), v["llcs"].clone(), v["nodes"].clone()),
        (4.into(), 2.into(), 1.into())
    );
    assert_eq!(v["cpu"][9]["cluster"], 2);
}

/// Equivalence classes of a CPU → id map, as sorted lists of CPUs.
fn classes(map: &[(usize, String)]) -> Vec<Vec<usize>> {
    let mut by: std::collections::BTreeMap<&str, Vec<usize>> = std::collections::BTreeMap::new();
    for (cpu, id) in map {
        by.entry(id.as_str()).or_default().push(*cpu);
    }
    let mut v: Vec<Vec<usize>> = by.into_values().collect();
    v.sort();
    v
}

#[test]
fn host_agrees_with_lscpu() {
    let Ok(out) = Command::new("lscpu").arg("-p").output() else {
        eprintln!("skipping host_agrees_with_lscpu: lscpu is not installed");
        return;
    };
    if !out.status.success() || !std::path::Path::new("/sys/devices/system/cpu").exists() {
        eprintln!("skipping host_agrees_with_lscpu: lscpu -p or /sys unavailable");
        return;
    }
    let text = String::from_utf8(out.stdout).unwrap();
    let (mut core, mut socket, mut node) = (Vec::new(), Vec::new(), Vec::new());
    for l in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = l.split(',').collect();
        let cpu: usize = f[0].parse().unwrap();
        core.push((cpu, format!("{}/{}", f[2], f[1])));
        socket.push((cpu, f[2].to_string()));
        node.push((
            cpu,
            if f[3].is_empty() {
                "0".to_string()
            } else {
                f[3].to_string()
            },
        ));
    }
    let v = json_of(&["topo", "show", "host", "--json"]);
    assert_eq!(
        v["cpus"].as_u64().unwrap() as usize,
        core.len(),
        "CPU count differs from lscpu"
    );
    let ours = |key: &str| -> Vec<(usize, String)> {
        v["cpu"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["id"].as_u64().unwrap() as usize, c[key].to_string()))
            .collect()
    };
    assert_eq!(
        classes(&ours("core")),
        classes(&core),
        "CPU -> core differs from lscpu -p"
    );
    assert_eq!(
        classes(&ours("package")),
        classes(&socket),
        "CPU -> socket differs from lscpu -p"
    );
    assert_eq!(
        classes(&ours("node")),
        classes(&node),
        "CPU -> node differs from lscpu -p"
    );
}

#[test]
fn bad_specs_get_clear_errors() {
    fails_with(
        &["topo", "show", "westmere-2s"],
        &[
            "unknown topology 'westmere-2s'",
            "did you mean 'westmere-2s20c'?",
            "schedlab topo list",
        ],
    );
    fails_with(
        &["topo", "show", "0n1l1c1t"],
        &[
            "impossible compact topology '0n1l1c1t'",
            "number of nodes is 0",
        ],
    );
    fails_with(
        &["topo", "show", "3n4l2c1t"],
        &["'3n4l2c1t'", "4 LLCs do not split evenly over 3 nodes"],
    );
    fails_with(
        &["topo", "show", "westmere-2s20c", "--cpu", "40"],
        &["--cpu 40 is not a CPU of westmere-2s20c (it has CPUs 0-39)"],
    );
    fails_with(
        &["topo", "show", "westmere-2s20c", "--smt", "2"],
        &["--smt only applies to numactl"],
    );
    fails_with(
        &["topo", "show", "host", "--sysfs-root", "/nonexistent/root"],
        &["cannot read /nonexistent/root/devices/system/cpu"],
    );
    fails_with(
        &["topo", "show", "missing/file.txt"],
        &["cannot read missing/file.txt"],
    );
    // clap rejects these itself (its own exit code 2).
    fails_with(
        &["topo", "show", "westmere-2s20c", "--era", "4.0"],
        &["unknown era '4.0'"],
    );
    fails_with(
        &["topo", "show", "core2quad", "-t", "core2quad"],
        &["cannot be used with"],
    );
}

#[test]
fn bad_numactl_files_name_file_and_line() {
    let cases: Vec<(String, Vec<&str>, &str)> = vec![
        (
            String::new(),
            vec![],
            ":1: expected numactl --hardware, lscpu -p, lscpu -e or topology JSON text, found an empty file",
        ),
        (
            ISSUE_NUMACTL.lines().take(7).collect::<Vec<_>>().join("\n"),
            vec![],
            ":8: expected the 'node distances:' table, found end of file",
        ),
        (
            ISSUE_NUMACTL.replace("1: 20 10", "1: 30 10"),
            vec![],
            ":10: expected a symmetric distance matrix, found 0->1 is 20 but 1->0 is 30",
        ),
        (
            ISSUE_NUMACTL.replace("0: 10 20", "0: 0 20"),
            vec![],
            ":10: expected non-zero distances, found distance 0->0 is 0",
        ),
        (
            ISSUE_NUMACTL.replace("1: 20 10", "1: 20 10 10"),
            vec![],
            ":11: expected 2 distances (the matrix must be square), found 3",
        ),
        (
            ISSUE_NUMACTL.replace("cpus: 10 11", "cpus: 9 10 11"),
            vec![],
            ":5: expected each CPU on exactly one node, found CPU 9 on node 1 and on node 0 (line 2)",
        ),
        (
            ISSUE_NUMACTL.replace(" 8 9 ", " 9 "),
            vec![],
            "CPU 8 is missing",
        ),
        (
            ISSUE_NUMACTL.to_string(),
            vec!["--smt", "3"],
            ":2: expected a CPU count divisible by --smt 3, found 20 CPUs on node 0",
        ),
        (
            ISSUE_NUMACTL.to_string(),
            vec!["--smt", "2", "--llc-per-node", "4"],
            ":2: expected a core count divisible by --llc-per-node 4, found 10 cores on node 0",
        ),
    ];
    for (text, extra, needle) in cases {
        let (_d, file) = temp_file("bad.txt", &text);
        let mut args = vec!["topo", "show", file.as_str()];
        args.extend(extra);
        let expect = format!("{file}{needle}");
        let needle = if needle.starts_with(':') {
            expect.as_str()
        } else {
            needle
        };
        fails_with(&args, &[needle]);
    }
}

#[test]
fn help_has_examples() {
    schedlab()
        .args(["topo", "show", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Examples:"))
        .stdout(predicate::str::contains("NnLlCcTt"))
        .stdout(predicate::str::contains("--sysfs-root"));
}
