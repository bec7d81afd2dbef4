//! Fuzzing harnesses of the trace readers (traces come from other machines and tools, often cut
//! off or with lost events, so no input may panic): proptest edits the committed
//! fixtures (ftrace/tracefs text, `trace-cmd report`, `perf script`) byte by byte and cuts
//! them short; and it edits Perfetto protobuf traces (the fixtures written by
//! `write_perfetto`, the seed corpus) byte by byte, with varint-shaped bytes, splices and
//! cuts, through `decode_perfetto`, `perfetto::dump_text` and the counters of what
//! decodes; the seeds also hold the compact-sched fixture (`traced`'s encoding, written by
//! `tests/tools/compact_pftrace.py` with Perfetto's own protos). Every input must end in `Ok` or an error, never a panic or an allocation that
//! takes the machine. Default case count in the suite; a campaign:
//! `PROPTEST_CASES=1000000 cargo test --release -p schedlab-trace --test fuzz`.

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

/// The compact-sched fixture of the replay tests.
fn compact_fixture() -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../schedlab-cli/tests/fixtures/replay/perf-pipe.pftrace");
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The text fixtures written as Perfetto protobuf, and the compact-sched fixture.
fn perfetto_corpus() -> &'static [Vec<u8>] {
    static C: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    C.get_or_init(|| {
        let mut v: Vec<Vec<u8>> = corpus()
            .iter()
            .filter_map(|t| schedlab_trace::parse_ftrace_text(t).ok())
            .map(|t| {
                let mut b = Vec::new();
                schedlab_trace::write_perfetto(&t, &mut b).unwrap();
                b
            })
            .collect();
        assert!(v.len() >= 4);
        let compact = compact_fixture();
        assert!(
            schedlab_trace::perfetto::decode_perfetto_with_stats(&compact)
                .is_ok_and(|(_, s)| s.compact_switches > 0)
        );
        v.push(compact);
        v
    })
}

proptest! {
    #[test]
    fn edited_perfetto_traces_never_panic(
        which in any::<usize>(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..10),
        cut in any::<usize>(),
    ) {
        let c = perfetto_corpus();
        let mut b = c[which % c.len()].clone();
        for (pos, kind, byte) in edits {
            let at = if b.is_empty() { 0 } else { pos % (b.len() + 1) };
            match kind % 5 {
                0 if at < b.len() => b[at] = byte,
                1 => b.insert(at, byte),
                2 if at < b.len() => {
                    b.remove(at);
                }
                // A large varint (a length, an id, a timestamp): continuation bytes, then the end.
                3 => {
                    b.splice(at..at, [0xff, 0xff, 0xff, 0xff, byte & 0x7f]);
                }
                // A piece of the trace repeated elsewhere (a packet twice, a field moved).
                _ => {
                    let s = (pos / 7) % (b.len() + 1);
                    let e = (s + byte as usize).min(b.len());
                    let piece: Vec<u8> = b[s..e].to_vec();
                    b.splice(at..at, piece);
                }
            }
        }
        b.truncate(cut % (b.len() + 1) + if cut % 2 == 0 { b.len() } else { 0 });
        if let Ok((t, _)) = schedlab_trace::perfetto::decode_perfetto_with_stats(&b) {
            let _ = schedlab_trace::counters(&t);
        }
        let _ = schedlab_trace::perfetto::dump_text(&b);
    }

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
