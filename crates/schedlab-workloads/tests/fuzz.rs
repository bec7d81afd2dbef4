//! Fuzzing harnesses of the workload inputs (user-written, so no input may panic or start a run
//! without end): spec strings (`NAME:k=v`),
//! workload TOML files and rt-app JSON. proptest edits the committed examples
//! (`workloads/*`) byte by byte and cuts them short, and draws arbitrary spec strings; every
//! input must end in a built workload or an error — never a panic — and, through the bounds,
//! in bounded work. A campaign: `PROPTEST_CASES=1000 cargo test --release -p
//! schedlab-workloads --test fuzz`.

use proptest::prelude::*;
use schedlab_workloads::{instantiate, parse_spec};
use std::path::Path;

fn examples() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads");
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let kind = if p.extension()? == "json" {
                "rtapp"
            } else {
                "file"
            };
            Some((kind.to_string(), std::fs::read_to_string(&p).ok()?))
        })
        .collect();
    v.sort();
    assert!(v.len() >= 4);
    v
}

fn topo() -> schedlab_topo::Topology {
    schedlab_topo::regular("fuzz-4", "test", 1, 1, 2, 2, true).unwrap()
}

proptest! {
    // 64 cases in the suite (each builds a workload); PROPTEST_CASES overrides for a campaign.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn edited_workload_files_never_panic(
        which in any::<usize>(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        cut in any::<usize>(),
    ) {
        let ex = examples();
        let (kind, text) = &ex[which % ex.len()];
        let mut b = text.clone().into_bytes();
        for (pos, byte) in edits {
            if !b.is_empty() {
                let at = pos % b.len();
                b[at] = b"0123456789-.e\"{}[]=,:\n "[byte as usize % 23];
            }
        }
        if cut % 4 == 0 {
            b.truncate(cut % (b.len() + 1));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(if kind == "rtapp" { "w.json" } else { "w.toml" });
        std::fs::write(&path, &b).unwrap();
        if let Ok(spec) = parse_spec(&format!("{kind}:{}", path.display())) {
            let _ = instantiate(&spec, &topo());
        }
    }

    #[test]
    fn arbitrary_parameters_of_every_model_never_panic(
        which in any::<usize>(),
        params in prop::collection::vec((any::<usize>(), "[0-9.eE+-]{0,6}[kKmMgGs]?"), 0..3),
        junk in "[a-z_=,:]{0,6}",
    ) {
        let cat = schedlab_workloads::catalog();
        let w = &cat[which % cat.len()];
        let mut kv: Vec<String> = Vec::new();
        for (i, v) in params {
            if !w.params.is_empty() {
                kv.push(format!("{}={v}", w.params[i % w.params.len()].name));
            }
        }
        let s = format!("{}:{}{junk}", w.name, kv.join(","));
        if let Ok(spec) = parse_spec(&s) {
            // Instantiation only builds the task graph (bounded by the workload bounds).
            let _ = instantiate(&spec, &topo());
        }
    }
}
