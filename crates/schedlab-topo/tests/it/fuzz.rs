//! Fuzzing harnesses of the text parsers (issue 22, point 5), runnable on the stable
//! toolchain: proptest mutates the committed fixtures (the seed corpus: every file under
//! tests/fixtures/lscpu and tests/fixtures/numactl) by byte edits and splices, and draws
//! arbitrary strings for the compact notation and cpulists. The property is that every input
//! ends in `Ok` or an error, never a panic or a hang. The suite runs proptest's default
//! number of cases; for a long campaign set `PROPTEST_CASES`, e.g.
//! `PROPTEST_CASES=1000000 cargo test --release -p schedlab-topo --test it fuzz`.

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
