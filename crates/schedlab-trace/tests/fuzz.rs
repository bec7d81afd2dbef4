//! Fuzzing harness of the trace text parser (issue 22, point 5): proptest edits the committed
//! fixtures (ftrace/tracefs text, `trace-cmd report`, `perf script`) byte by byte and cuts
//! them short; every input must end in `Ok` or an error, never a panic. Default case count
//! in the suite; a campaign: `PROPTEST_CASES=1000000 cargo test --release -p schedlab-trace
//! --test fuzz`.

use proptest::prelude::*;
use std::path::Path;

fn corpus() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "txt"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect();
    v.sort();
    assert!(v.len() >= 4);
    v
}

proptest! {
    #[test]
    fn edited_traces_never_panic(
        which in any::<usize>(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 0..12),
        cut in any::<usize>(),
    ) {
        let c = corpus();
        let mut b = c[which % c.len()].clone().into_bytes();
        for (pos, byte) in edits {
            if !b.is_empty() {
                let at = pos % b.len();
                b[at] = b" 0123456789:|=[]-.\nxyz"[byte as usize % 22];
            }
        }
        b.truncate(cut % (b.len() + 1));
        let _ = schedlab_trace::ftrace::parse_ftrace_text(&String::from_utf8_lossy(&b));
    }
}
