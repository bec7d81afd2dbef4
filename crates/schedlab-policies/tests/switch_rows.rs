//! A switch is one row: every placement switch is read (`sw!("NAME")`) in exactly the files
//! its row lists, so the row is the one place that says where a switch acts.

use schedlab_policies::{Era, Scope, switches};
use std::collections::{BTreeMap, BTreeSet};

#[test]
fn each_placement_switch_is_read_where_its_row_says() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<(String, String)> = Vec::new();
    for e in std::fs::read_dir(&dir).expect("src/").flatten() {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "rs") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            // Code only: a doc comment may name a switch as an example.
            let text = std::fs::read_to_string(&path).expect("read");
            let code: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            files.push((name, code));
        }
    }
    // Every placement switch of every era, with the files its row names.
    let mut rows: BTreeMap<String, &'static [&'static str]> = BTreeMap::new();
    for e in Era::ALL {
        for sw in switches(e.name()).unwrap() {
            if sw.scope == Scope::Placement {
                rows.insert(sw.name.trim_end_matches('=').to_string(), sw.read_in);
            }
        }
    }
    assert_eq!(rows.len(), 44, "the placement rows (features and tunables)");
    for (name, read_in) in rows {
        let needle = format!("sw!(\"{name}\")");
        let readers: BTreeSet<&str> = files
            .iter()
            .filter(|(_, code)| code.contains(&needle))
            .map(|(f, _)| f.as_str())
            .collect();
        let listed: BTreeSet<&str> = read_in.iter().copied().collect();
        assert_eq!(
            readers, listed,
            "{name}: read in {readers:?}, row says {listed:?}"
        );
    }
}
