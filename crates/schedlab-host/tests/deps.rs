//! The harness's architecture invariant, checked: `schedlab-host` never depends on the
//! simulator (`schedlab-engine`, `schedlab-policies`, `schedlab-workloads`), directly or
//! through another schedlab crate, so the host side of a validation shares no code path with
//! what it validates. Reads the manifests (no `cargo` run): every schedlab crate lives in
//! `crates/<name>`.

use std::collections::BTreeSet;
use std::path::Path;

const SIMULATOR: [&str; 3] = ["schedlab-engine", "schedlab-policies", "schedlab-workloads"];

/// The schedlab crates `name` depends on (normal, dev and build dependencies).
fn schedlab_deps(crates: &Path, name: &str) -> Vec<String> {
    let path = crates.join(name).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let manifest: toml::Table = toml::from_str(&text).unwrap();
    ["dependencies", "dev-dependencies", "build-dependencies"]
        .iter()
        .filter_map(|s| manifest.get(*s).and_then(|t| t.as_table()))
        .flat_map(|t| t.keys().cloned())
        .filter(|k| k.starts_with("schedlab-"))
        .collect()
}

#[test]
fn host_never_links_the_simulator() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut seen = BTreeSet::new();
    let mut todo = vec![(
        "schedlab-host".to_string(),
        vec!["schedlab-host".to_string()],
    )];
    while let Some((name, chain)) = todo.pop() {
        for dep in schedlab_deps(crates, &name) {
            let mut path = chain.clone();
            path.push(dep.clone());
            assert!(
                !SIMULATOR.contains(&dep.as_str()),
                "the host harness must not link the simulator: {}",
                path.join(" -> ")
            );
            if seen.insert(dep.clone()) {
                todo.push((dep, path));
            }
        }
    }
    // The crates it does share with the simulator: the vocabulary, the profile schema, the
    // topology, the trace and result formats.
    for shared in ["schedlab-vocab", "schedlab-profile", "schedlab-topo"] {
        assert!(seen.contains(shared), "{shared} in {seen:?}");
    }
}
