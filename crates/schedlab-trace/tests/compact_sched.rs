//! Perfetto traces as `traced` records them: compact sched bundles (delta timestamps, the
//! intern table of comms, the prev task implied by the switch before on the CPU),
//! `FtraceStats` lost-event counters, bundles flagged `lost_events`, process trees without
//! thread names, regular process events beside compact ones, unknown packets and fields,
//! malformed arrays and cut-off files.
//!
//! The traces are written with the small protobuf writer below, from the field numbers of
//! Perfetto's `ftrace_event_bundle.proto`, `ftrace_stats.proto`, `sched.proto`,
//! `ftrace_event.proto`, `trace_packet.proto` and `process_tree.proto`, not with
//! schedlab's own message structs, so a wrong tag there fails here.

use schedlab_trace::perfetto::{DecodeStats, decode_perfetto_with_stats};
use schedlab_trace::{PrevState, Trace, TraceError, TraceEvent};

/// A protobuf message being written.
#[derive(Default, Clone)]
struct Pb(Vec<u8>);

impl Pb {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn key(&mut self, field: u32, wire: u64) {
        self.varint((u64::from(field) << 3) | wire);
    }
    /// A varint field (int32 / int64 / uint: negative ints as 10-byte two's complement).
    fn int(mut self, field: u32, v: i64) -> Pb {
        self.key(field, 0);
        self.varint(v as u64);
        self
    }
    fn bytes(mut self, field: u32, b: &[u8]) -> Pb {
        self.key(field, 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }
    fn str(self, field: u32, s: &str) -> Pb {
        self.bytes(field, s.as_bytes())
    }
    fn msg(self, field: u32, m: &Pb) -> Pb {
        self.bytes(field, &m.0)
    }
    /// A packed repeated varint field.
    fn packed(self, field: u32, vals: &[i64]) -> Pb {
        let mut p = Pb::default();
        for &v in vals {
            p.varint(v as u64);
        }
        self.bytes(field, &p.0)
    }
}

/// One compact switch: (timestamp delta, prev_state bits, next_pid, next_prio, comm index).
type Sw = (i64, i64, i64, i64, i64);
/// One compact waking: (timestamp delta, pid, target_cpu, prio, comm index).
type Wk = (i64, i64, i64, i64, i64);

/// `FtraceEventBundle.CompactSched` (fields 1-12 of ftrace_event_bundle.proto).
fn compact(intern: &[&str], sw: &[Sw], wk: &[Wk]) -> Pb {
    let mut m = Pb::default();
    for s in intern {
        m = m.str(5, s);
    }
    m.packed(1, &sw.iter().map(|s| s.0).collect::<Vec<_>>())
        .packed(2, &sw.iter().map(|s| s.1).collect::<Vec<_>>())
        .packed(3, &sw.iter().map(|s| s.2).collect::<Vec<_>>())
        .packed(4, &sw.iter().map(|s| s.3).collect::<Vec<_>>())
        .packed(6, &sw.iter().map(|s| s.4).collect::<Vec<_>>())
        .packed(7, &wk.iter().map(|w| w.0).collect::<Vec<_>>())
        .packed(8, &wk.iter().map(|w| w.1).collect::<Vec<_>>())
        .packed(9, &wk.iter().map(|w| w.2).collect::<Vec<_>>())
        .packed(10, &wk.iter().map(|w| w.3).collect::<Vec<_>>())
        .packed(11, &wk.iter().map(|w| w.4).collect::<Vec<_>>())
        .packed(12, &wk.iter().map(|_| 1).collect::<Vec<_>>())
}

/// A `TracePacket` (sequence 1) holding an `FtraceEventBundle` of `cpu`.
fn bundle(cpu: i64, compact: Option<&Pb>, events: &[Pb]) -> Pb {
    let mut b = Pb::default().int(1, cpu);
    for e in events {
        b = b.msg(2, e);
    }
    if let Some(c) = compact {
        b = b.msg(4, c);
    }
    Pb::default().int(10, 1).msg(1, &b)
}

/// An `FtraceEvent` at `ts` run by `pid`, with payload `payload` in oneof field `field`.
fn ftrace_event(ts: i64, pid: i64, field: u32, payload: &Pb) -> Pb {
    Pb::default().int(1, ts).int(2, pid).msg(field, payload)
}

/// A `Trace` of these packets (field 1 each).
fn trace(packets: &[Pb]) -> Vec<u8> {
    let mut t = Pb::default();
    for p in packets {
        t = t.msg(1, p);
    }
    t.0
}

fn decode(bytes: &[u8]) -> (Trace, DecodeStats) {
    decode_perfetto_with_stats(bytes).unwrap()
}

fn switch(ts: u64, cpu: u32, prev: (u32, i32, PrevState), next: (u32, i32)) -> TraceEvent {
    TraceEvent::Switch {
        ts_ns: ts,
        cpu,
        prev_pid: prev.0,
        prev_prio: prev.1,
        prev_state: prev.2,
        next_pid: next.0,
        next_prio: next.1,
    }
}

fn waking(ts: u64, cpu: u32, pid: u32, prio: i32, target_cpu: u32) -> TraceEvent {
    TraceEvent::Waking {
        ts_ns: ts,
        cpu,
        pid,
        prio,
        target_cpu,
    }
}

fn comm(t: &Trace, pid: u32) -> &str {
    &t.threads.iter().find(|x| x.pid == pid).unwrap().comm
}

const IDLE: (u32, i32, PrevState) = (0, 120, PrevState::Runnable);

#[test]
fn compact_switches_and_wakings_decode_with_times_prev_tasks_and_comms() {
    let intern = ["swapper/0", "writer", "reader"];
    // Absolute times 5_000_000_000, +500, +250; wakings at +1200, +100 (separate deltas).
    let sw = [
        (5_000_000_000, 0, 10, 120, 1),
        (500, 1, 20, 110, 2),
        (250, 2, 0, 120, 0),
    ];
    let wk = [(5_000_000_200, 20, 1, 110, 2), (100, 10, 0, 120, 1)];
    let (t, s) = decode(&trace(&[bundle(0, Some(&compact(&intern, &sw, &wk)), &[])]));
    assert_eq!(
        t.events,
        vec![
            // The first switch of the CPU: its prev task is not recorded, read as idle.
            switch(5_000_000_000, 0, IDLE, (10, 120)),
            waking(5_000_000_200, 0, 20, 110, 1),
            waking(5_000_000_300, 0, 10, 120, 0),
            // The prev task is the one the switch before switched in, with its priority;
            // the state is this switch's own.
            switch(5_000_000_500, 0, (10, 120, PrevState::Sleeping), (20, 110)),
            switch(
                5_000_000_750,
                0,
                (20, 110, PrevState::Uninterruptible),
                (0, 120)
            ),
        ]
    );
    assert_eq!((comm(&t, 10), comm(&t, 20)), ("writer", "reader"));
    assert_eq!(
        s,
        DecodeStats {
            compact_switches: 3,
            compact_wakings: 2,
            compact_no_prev: 1,
            ..DecodeStats::default()
        }
    );
    assert_eq!(t.nr_cpus, 2, "target_cpu 1 counts as a CPU seen");
}

#[test]
fn the_prev_task_follows_its_cpu_across_bundles_in_time_order_not_file_order() {
    let intern = ["a", "b"];
    // CPU 0's later bundle comes first in the file; CPU 1 has its own first switch.
    let later = bundle(
        0,
        Some(&compact(&intern, &[(3000, 1, 2, 120, 1)], &[])),
        &[],
    );
    let earlier = bundle(
        0,
        Some(&compact(&intern, &[(1000, 0, 1, 120, 0)], &[])),
        &[],
    );
    let cpu1 = bundle(
        1,
        Some(&compact(&intern, &[(2000, 0, 3, 100, 0)], &[])),
        &[],
    );
    let (t, s) = decode(&trace(&[later, earlier, cpu1]));
    assert_eq!(
        t.events,
        vec![
            switch(1000, 0, IDLE, (1, 120)),
            switch(2000, 1, IDLE, (3, 100)),
            switch(3000, 0, (1, 120, PrevState::Sleeping), (2, 120)),
        ]
    );
    assert_eq!(s.compact_no_prev, 2);
}

#[test]
fn a_regular_switch_before_a_compact_one_names_its_prev_task() {
    let regular = Pb::default()
        .str(1, "swapper/0")
        .int(2, 0)
        .int(3, 120)
        .int(4, 0)
        .str(5, "worker")
        .int(6, 7)
        .int(7, 115);
    let b = bundle(
        0,
        Some(&compact(&["idle"], &[(2000, 0x100, 0, 120, 0)], &[])),
        &[ftrace_event(1000, 0, 4, &regular)],
    );
    let (t, s) = decode(&trace(&[b]));
    assert_eq!(
        t.events,
        vec![
            switch(1000, 0, IDLE, (7, 115)),
            // 0x100 is the preemption marker (R+): runnable.
            switch(2000, 0, (7, 115, PrevState::Runnable), (0, 120)),
        ]
    );
    assert_eq!(s.compact_no_prev, 0);
}

#[test]
fn process_events_beside_compact_ones_still_decode() {
    let fork = Pb::default()
        .str(1, "parent")
        .int(2, 40)
        .str(3, "parent")
        .int(4, 41);
    let exit = Pb::default()
        .str(1, "child")
        .int(2, 41)
        .int(3, 40)
        .int(4, 120);
    let free = Pb::default().str(1, "child").int(2, 41).int(3, 120);
    let b = bundle(
        0,
        Some(&compact(&["parent"], &[(100, 0, 40, 120, 0)], &[])),
        &[
            ftrace_event(200, 40, 239, &fork),
            ftrace_event(300, 41, 238, &exit),
            ftrace_event(400, 40, 240, &free),
        ],
    );
    let (t, _) = decode(&trace(&[b]));
    assert_eq!(
        t.events[1..],
        [
            TraceEvent::ProcessFork {
                ts_ns: 200,
                cpu: 0,
                parent_pid: 40,
                child_pid: 41
            },
            TraceEvent::ProcessExit {
                ts_ns: 300,
                cpu: 0,
                pid: 41
            },
        ]
    );
    let child = t.threads.iter().find(|x| x.pid == 41).unwrap();
    assert_eq!((child.comm.as_str(), child.tgid), ("child", 40));
}

#[test]
fn ftrace_stats_and_flagged_bundles_count_lost_events() {
    let cpu_stats = |cpu, overrun, commit, dropped| {
        Pb::default()
            .int(1, cpu)
            .int(2, 999) // entries: not a loss
            .int(3, overrun)
            .int(4, commit)
            .int(8, dropped)
    };
    let stats = |phase, cpus: &[Pb]| {
        let mut s = Pb::default().int(1, phase);
        for c in cpus {
            s = s.msg(2, c);
        }
        Pb::default().int(10, 1).msg(34, &s)
    };
    let start = stats(1, &[cpu_stats(0, 5, 0, 0), cpu_stats(1, 0, 0, 0)]);
    let end = stats(2, &[cpu_stats(0, 12, 1, 0), cpu_stats(1, 0, 0, 3)]);
    let sw = compact(&["a"], &[(100, 0, 1, 120, 0)], &[]);
    let lost = {
        let b = Pb::default().int(1, 1).int(3, 1).msg(4, &sw);
        Pb::default().int(10, 1).msg(1, &b)
    };
    let (_, s) = decode(&trace(&[
        start.clone(),
        bundle(0, Some(&sw), &[]),
        lost,
        end,
    ]));
    // CPU 0: 12 + 1 - 5, CPU 1: 3 dropped.
    assert_eq!((s.lost_events, s.lost_bundles), (11, 1));
    // Without a start-of-trace count there is nothing to subtract from (as trace_processor).
    let (_, s) = decode(&trace(&[bundle(0, Some(&sw), &[]), start]));
    assert_eq!(s.lost_events, 0);
}

#[test]
fn process_tree_threads_without_names_give_thread_groups_only() {
    let tree = Pb::default()
        .msg(
            1,
            &Pb::default().int(1, 50).int(2, 1).str(3, "/usr/bin/app"),
        )
        .msg(2, &Pb::default().int(1, 51).int(3, 50))
        .msg(2, &Pb::default().int(1, 52).int(3, 50).str(2, "named"));
    let b = bundle(
        0,
        Some(&compact(
            &["app", "app-worker", "x"],
            &[
                (10, 0, 50, 120, 0),
                (10, 0, 51, 120, 1),
                (10, 0, 52, 120, 2),
            ],
            &[],
        )),
        &[],
    );
    let (t, _) = decode(&trace(&[Pb::default().int(10, 1).msg(2, &tree), b]));
    let info = |pid| {
        let x = t.threads.iter().find(|x| x.pid == pid).unwrap();
        (x.comm.as_str(), x.tgid)
    };
    assert_eq!(info(50), ("app", 50));
    assert_eq!(info(51), ("app-worker", 50));
    // A name in the tree wins over the comm of the events, as before.
    assert_eq!(info(52), ("named", 50));
}

#[test]
fn unknown_fields_packets_and_events_are_skipped() {
    let b = bundle(
        0,
        Some(&compact(&["a"], &[(100, 0, 1, 120, 0)], &[])),
        // ftrace event 300 (some other tracepoint) with a payload.
        &[ftrace_event(50, 0, 300, &Pb::default().int(1, 7))],
    );
    let mut b = b;
    // Unknown TracePacket fields: trace_config (33), a fixed64 and a fixed32.
    b = b.msg(33, &Pb::default().int(1, 1));
    b.key(900, 1);
    b.0.extend_from_slice(&[1; 8]);
    b.key(901, 5);
    b.0.extend_from_slice(&[2; 4]);
    let mut t = Pb::default().int(2, 99); // not a Trace.packet field
    t = t.msg(
        1,
        &Pb::default().int(10, 2).msg(6, &Pb::default().int(1, 1)),
    ); // clock_snapshot
    t = t.msg(1, &b);
    let (tr, s) = decode(&t.0);
    assert_eq!(tr.events, vec![switch(100, 0, IDLE, (1, 120))]);
    assert_eq!(s.compact_switches, 1);
}

#[test]
fn malformed_arrays_decode_up_to_the_fault_and_are_counted() {
    // switch_next_pid has one entry fewer than the other arrays.
    let mut c = Pb::default().str(5, "a");
    c = c
        .packed(1, &[10, 10, 10])
        .packed(2, &[0, 0, 0])
        .packed(3, &[1, 2])
        .packed(4, &[120, 120, 120])
        .packed(6, &[0, 0, 0]);
    let (t, s) = decode(&trace(&[bundle(0, Some(&c), &[])]));
    assert_eq!(t.events.len(), 2);
    assert_eq!((s.compact_switches, s.compact_malformed), (2, 1));

    // A comm index past the intern table ends the array there; wakings still decode.
    let c = compact(
        &["a"],
        &[(10, 0, 1, 120, 0), (10, 0, 2, 120, 5), (10, 0, 3, 120, 0)],
        &[(15, 1, 0, 120, 0)],
    );
    let (t, s) = decode(&trace(&[bundle(0, Some(&c), &[])]));
    assert_eq!(t.events.len(), 2);
    assert_eq!((s.compact_switches, s.compact_wakings), (1, 1));
    assert_eq!(s.compact_malformed, 1);

    // A timestamp that overflows u64 ends the array too.
    let c = compact(&["a"], &[(-1, 0, 1, 120, 0), (-1, 0, 2, 120, 0)], &[]);
    let (_, s) = decode(&trace(&[bundle(0, Some(&c), &[])]));
    assert_eq!((s.compact_switches, s.compact_malformed), (1, 1));

    // A negative pid is an error naming the packet and the array entry.
    let c = compact(&["a"], &[(10, 0, 1, 120, 0)], &[(5, -3, 0, 120, 0)]);
    let e = decode_perfetto_with_stats(&trace(&[Pb::default(), bundle(0, Some(&c), &[])]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("packet 1") && e.contains("waking 0: `waking_pid` is negative (-3)"),
        "{e}"
    );

    // A packed array whose length runs past its message: a decode error, not a panic.
    let mut c = Pb::default();
    c.key(1, 2);
    c.varint(1 << 40);
    c.0.extend_from_slice(&[1, 2, 3]);
    let e = decode_perfetto_with_stats(&trace(&[bundle(0, Some(&c), &[])])).unwrap_err();
    assert!(matches!(e, TraceError::Decode(_)), "{e}");
}

#[test]
fn a_cut_off_last_packet_is_reported_and_the_rest_decoded() {
    let b1 = bundle(0, Some(&compact(&["a"], &[(100, 0, 1, 120, 0)], &[])), &[]);
    let b2 = bundle(0, Some(&compact(&["b"], &[(200, 1, 2, 120, 0)], &[])), &[]);
    let full = trace(&[b1.clone(), b2]);
    let first = trace(&[b1]).len();
    for cut in [first + 1, first + 2, full.len() - 1] {
        let (t, s) = decode(&full[..cut]);
        assert!(s.truncated, "cut at {cut}");
        assert_eq!(t.events, vec![switch(100, 0, IDLE, (1, 120))]);
    }
    let (_, s) = decode(&full);
    assert!(!s.truncated);
    // Cut inside the first packet: nothing to go on, an error.
    assert!(decode_perfetto_with_stats(&full[..first - 1]).is_err());
}
