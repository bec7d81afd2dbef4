//! Perfetto output of the tiny trace: decoded with prost and rendered as a
//! stable text dump compared with a committed, hand-checked insta snapshot; the
//! structure Perfetto requires is asserted on the raw packets; and the decoder
//! gets the trace back.

mod common;

use prost::Message;
use schedlab_trace::perfetto::proto::{self, PacketData};
use schedlab_trace::perfetto::{TRACK_SEQUENCE, decode_perfetto, dump_text, write_perfetto};

fn tiny_bytes() -> Vec<u8> {
    let mut out = Vec::new();
    write_perfetto(&common::tiny_trace(), &mut out).unwrap();
    out
}

#[test]
fn tiny_trace_dump_matches_golden() {
    let bytes = tiny_bytes();
    // For manual checks with Perfetto's own descriptors (tests/tools/check_perfetto.py).
    if let Some(path) = std::env::var_os("SCHEDLAB_WRITE_PFTRACE") {
        std::fs::write(path, &bytes).unwrap();
    }
    insta::assert_snapshot!("tiny_perfetto", dump_text(&bytes).unwrap());
}

#[test]
fn packets_follow_perfetto_sequence_rules() {
    let t = proto::Trace::decode(tiny_bytes().as_slice()).unwrap();
    let mut seen_track_seq = false;
    for (i, p) in t.packet.iter().enumerate() {
        let seq = p
            .trusted_packet_sequence_id
            .unwrap_or_else(|| panic!("packet {i} has no sequence id"));
        match &p.data {
            Some(PacketData::TrackDescriptor(_)) | Some(PacketData::TrackEvent(_)) => {
                assert_eq!(seq, TRACK_SEQUENCE, "packet {i}");
                if !seen_track_seq {
                    assert_eq!(
                        p.sequence_flags,
                        Some(proto::SEQ_INCREMENTAL_STATE_CLEARED),
                        "packet {i}"
                    );
                    seen_track_seq = true;
                }
                if let Some(PacketData::TrackEvent(te)) = &p.data {
                    assert!(
                        p.timestamp.is_some(),
                        "track event packet {i} needs a timestamp"
                    );
                    assert_eq!(
                        p.sequence_flags,
                        Some(proto::SEQ_NEEDS_INCREMENTAL_STATE),
                        "packet {i}"
                    );
                    assert_eq!(te.r#type, Some(proto::TRACK_EVENT_TYPE_INSTANT));
                }
            }
            Some(PacketData::FtraceEvents(b)) => {
                assert_ne!(seq, TRACK_SEQUENCE);
                assert!(b.cpu.is_some());
                assert!(
                    b.event.windows(2).all(|w| w[0].timestamp <= w[1].timestamp),
                    "bundle {i} unsorted"
                );
            }
            _ => {}
        }
    }
    // The flow started by the placement ends at the wakee's switch-in.
    let flows: Vec<(Vec<u64>, Vec<u64>)> = t
        .packet
        .iter()
        .filter_map(|p| match &p.data {
            Some(PacketData::TrackEvent(te)) => {
                Some((te.flow_ids.clone(), te.terminating_flow_ids.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(flows, vec![(vec![1], vec![]), (vec![], vec![1])]);
}

#[test]
fn decoder_returns_the_written_trace() {
    let back = decode_perfetto(&tiny_bytes()).unwrap();
    // The tiny trace lists waking before placement at equal timestamps, which
    // is also the order the decoder restores (bundles before track events).
    assert_eq!(back, common::tiny_trace());
}

#[test]
fn empty_trace_round_trips() {
    let empty = schedlab_trace::Trace::new(3);
    let mut out = Vec::new();
    write_perfetto(&empty, &mut out).unwrap();
    assert_eq!(decode_perfetto(&out).unwrap(), empty);
}

#[test]
fn many_events_are_chunked_per_cpu() {
    use schedlab_trace::{Trace, TraceEvent};
    let mut t = Trace::new(2);
    for i in 0..2500u64 {
        t.events.push(TraceEvent::Waking {
            ts_ns: i,
            cpu: (i % 2) as u32,
            pid: 9,
            prio: 120,
            target_cpu: 0,
        });
    }
    let mut out = Vec::new();
    write_perfetto(&t, &mut out).unwrap();
    let p = proto::Trace::decode(out.as_slice()).unwrap();
    let bundles: Vec<(u32, usize)> = p
        .packet
        .iter()
        .filter_map(|p| match &p.data {
            Some(PacketData::FtraceEvents(b)) => Some((b.cpu.unwrap(), b.event.len())),
            _ => None,
        })
        .collect();
    // 1000-event chunks, one bundle per CPU per chunk.
    assert_eq!(
        bundles,
        vec![(0, 500), (1, 500), (0, 500), (1, 500), (0, 250), (1, 250)]
    );
    assert_eq!(decode_perfetto(&out).unwrap(), t);
}
