//! Native Perfetto protobuf output (`.pftrace`) and a decoder for the subset we
//! write and for the sched events `traced` records (compact sched included).
//!
//! Why native protobuf rather than JSON or text: Trace Processor turns ftrace
//! `sched_switch` / `sched_waking` events into CPU tracks and per-thread
//! Running/Runnable/Sleeping states, which is exactly the view a placement
//! simulator needs, and TrackEvents let us hang schedlab's own annotations
//! (why a wakeup went where it went) on the same timeline with flow arrows.
//!
//! Layout of a file written by [`write_perfetto`]:
//!
//! 1. sequence 1: a `CpuInfo` packet (one entry per CPU, so the CPU count
//!    survives even for idle CPUs), then a `ProcessTree` naming every thread;
//! 2. sequence 2: `TrackDescriptor`s — one thread track per waker / wakee that
//!    appears in a placement, and one track per CPU for wakeups done from
//!    idle/interrupt context (waker pid 0); the first packet clears incremental
//!    state, later ones declare they need it, as Perfetto requires;
//! 3. the events in time order, in chunks of [`CHUNK_EVENTS`]: for each chunk,
//!    one `FtraceEventBundle` packet per CPU (sequence 1), then the chunk's
//!    TrackEvents (sequence 2): an instant per placement on the waker's track
//!    carrying the decision as debug annotations and starting a flow, and an
//!    instant on the wakee's track at its next switch-in that ends the flow.
//!
//! [`write_perfetto_file_with_counters`] (what `schedlab run --trace` writes) appends, on
//! sequence 3, counter tracks of the per-CPU schedstat counts the events show
//! ([`counters`]).
//!
//! Field numbers and their sources are listed in [`proto`].

pub mod proto;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use prost::Message;

use crate::{
    DEFAULT_PRIO, PrevState, ThreadInfo, ThreadTable, Trace, TraceError, TraceEvent, idle_comm,
};
use proto::{
    DebugAnnotation, FtraceEvent, FtraceEventBundle, FtraceEventData as Fe, PacketData,
    TracePacket, TrackEvent,
};

/// Trace events per chunk; each chunk becomes one ftrace bundle per CPU.
pub const CHUNK_EVENTS: usize = 1000;
/// Sequence id of the ftrace / process-tree packets.
pub const FTRACE_SEQUENCE: u32 = 1;
/// Sequence id of the track descriptors and track events.
pub const TRACK_SEQUENCE: u32 = 2;
/// Sequence id of the counter tracks ([`counters`]).
pub const COUNTER_SEQUENCE: u32 = 3;
/// Category of all schedlab track events.
pub const CATEGORY: &str = "schedlab";
/// `kind` annotation value of a placement instant (what the decoder keys on).
pub const KIND_PLACEMENT: &str = "placement";
/// `kind` annotation value of the wakee's switch-in instant (flow end).
pub const KIND_SWITCH_IN: &str = "switch_in";

const THREAD_TRACK_BASE: u64 = 0x5C4E_D000_0000_0000;
const CPU_TRACK_BASE: u64 = 0x5C4E_C000_0000_0000;

/// Kernel task-state bits used in `SchedSwitchFtraceEvent.prev_state`
/// (Linux >= 4.14 `TASK_REPORT` layout).
fn state_bits(s: PrevState) -> i64 {
    match s {
        PrevState::Runnable => 0,
        PrevState::Sleeping => 0x1,
        PrevState::Uninterruptible => 0x2,
        PrevState::Dead => 0x10,
    }
}

/// Inverse of [`state_bits`], also accepting other kernel bits: zombie/dead
/// (0x10, 0x20) → dead, D (0x2) → uninterruptible, any other sleep-like bit
/// (S, T, t, P, I) → sleeping, none → runnable. The preemption marker
/// (0x100 and above) is ignored.
fn state_from_bits(v: i64) -> PrevState {
    let v = v & 0xff;
    if v & 0x30 != 0 {
        PrevState::Dead
    } else if v & 0x2 != 0 {
        PrevState::Uninterruptible
    } else if v != 0 {
        PrevState::Sleeping
    } else {
        PrevState::Runnable
    }
}

fn thread_track(pid: u32) -> u64 {
    THREAD_TRACK_BASE | u64::from(pid)
}

fn cpu_track(cpu: u32) -> u64 {
    CPU_TRACK_BASE | u64::from(cpu)
}

fn i32_of(v: u32) -> i32 {
    // Pids and CPU ids fit in i32 on Linux; saturate rather than wrap if not.
    i32::try_from(v).unwrap_or(i32::MAX)
}

struct Names<'a> {
    comm: BTreeMap<u32, &'a str>,
    tgid: BTreeMap<u32, u32>,
}

impl<'a> Names<'a> {
    fn new(trace: &'a Trace) -> Names<'a> {
        let mut comm = BTreeMap::new();
        let mut tgid = BTreeMap::new();
        for t in &trace.threads {
            comm.entry(t.pid).or_insert(t.comm.as_str());
            tgid.entry(t.pid).or_insert(t.tgid);
        }
        Names { comm, tgid }
    }

    /// Comm of `pid` as seen on `cpu` (idle is `swapper/cpu`).
    fn comm_on(&self, pid: u32, cpu: u32) -> String {
        if pid == 0 {
            return idle_comm(cpu);
        }
        self.comm
            .get(&pid)
            .copied()
            .unwrap_or(crate::UNKNOWN_COMM)
            .to_string()
    }

    fn tgid(&self, pid: u32) -> u32 {
        self.tgid.get(&pid).copied().unwrap_or(pid)
    }
}

pub(crate) struct PacketSink<'w, W: Write> {
    pub(crate) w: &'w mut W,
    pub(crate) buf: Vec<u8>,
    pub(crate) seq_started: BTreeSet<u32>,
}

impl<W: Write> PacketSink<'_, W> {
    /// Writes one `Trace.packet` (field 1, length-delimited) so that the file
    /// is a valid `Trace` message without building it all in memory.
    pub(crate) fn emit(&mut self, mut packet: TracePacket) -> io::Result<()> {
        if let Some(seq) = packet.trusted_packet_sequence_id {
            if self.seq_started.insert(seq) {
                packet.first_packet_on_sequence = Some(true);
                if seq == TRACK_SEQUENCE || seq == COUNTER_SEQUENCE {
                    packet.sequence_flags = Some(proto::SEQ_INCREMENTAL_STATE_CLEARED);
                }
            } else if (seq == TRACK_SEQUENCE || seq == COUNTER_SEQUENCE)
                && matches!(packet.data, Some(PacketData::TrackEvent(_)))
            {
                packet.sequence_flags = Some(proto::SEQ_NEEDS_INCREMENTAL_STATE);
            }
        }
        self.buf.clear();
        prost::encoding::encode_key(1, prost::encoding::WireType::LengthDelimited, &mut self.buf);
        packet
            .encode_length_delimited(&mut self.buf)
            .map_err(io::Error::other)?;
        self.w.write_all(&self.buf)
    }
}

pub(crate) fn packet(seq: u32, ts: Option<u64>, data: PacketData) -> TracePacket {
    TracePacket {
        timestamp: ts,
        trusted_packet_sequence_id: Some(seq),
        sequence_flags: None,
        first_packet_on_sequence: None,
        data: Some(data),
    }
}

/// Writes `trace` as a Perfetto protobuf trace (open it at ui.perfetto.dev).
///
/// Events are emitted in stable timestamp order whether or not the trace is
/// sorted. Pid 0 entries of `trace.threads` are not exported (the UI names
/// idle itself); pids without a thread entry are named `<...>`.
pub fn write_perfetto(trace: &Trace, w: &mut impl Write) -> io::Result<()> {
    let order = trace.sorted_indices();
    let names = Names::new(trace);
    let nr_cpus = trace.effective_nr_cpus();
    let first_ts = order.first().map(|&i| trace.events[i].ts_ns());
    let mut sink = PacketSink {
        w,
        buf: Vec::new(),
        seq_started: BTreeSet::new(),
    };

    sink.emit(packet(
        FTRACE_SEQUENCE,
        None,
        PacketData::CpuInfo(proto::CpuInfo {
            cpus: (0..nr_cpus)
                .map(|_| proto::Cpu {
                    processor: Some("schedlab CPU".to_string()),
                })
                .collect(),
        }),
    ))?;
    emit_process_tree(trace, first_ts, &mut sink)?;
    emit_track_descriptors(trace, &names, &mut sink)?;

    let mut current: Vec<u32> = vec![0; nr_cpus as usize];
    let mut pending_flow: BTreeMap<u32, u64> = BTreeMap::new();
    let mut next_flow: u64 = 1;
    for chunk in order.chunks(CHUNK_EVENTS) {
        let mut bundles: BTreeMap<u32, Vec<FtraceEvent>> = BTreeMap::new();
        let mut tracks: Vec<TracePacket> = Vec::new();
        for &i in chunk {
            let ev = &trace.events[i];
            let cpu = ev.cpu();
            let running = current.get(cpu as usize).copied().unwrap_or(0);
            let (pid, data) = match ev {
                TraceEvent::Switch {
                    prev_pid,
                    prev_prio,
                    prev_state,
                    next_pid,
                    next_prio,
                    ..
                } => {
                    if let Some(slot) = current.get_mut(cpu as usize) {
                        *slot = *next_pid;
                    }
                    // Only non-idle wakees are ever pending.
                    if let Some(flow) = pending_flow.remove(next_pid) {
                        tracks.push(switch_in_packet(ev.ts_ns(), cpu, *next_pid, flow, &names));
                    }
                    let d = Fe::SchedSwitch(proto::SchedSwitchFtraceEvent {
                        prev_comm: Some(names.comm_on(*prev_pid, cpu)),
                        prev_pid: Some(i32_of(*prev_pid)),
                        prev_prio: Some(*prev_prio),
                        prev_state: Some(state_bits(*prev_state)),
                        next_comm: Some(names.comm_on(*next_pid, cpu)),
                        next_pid: Some(i32_of(*next_pid)),
                        next_prio: Some(*next_prio),
                    });
                    (*prev_pid, d)
                }
                TraceEvent::Waking {
                    pid,
                    prio,
                    target_cpu,
                    ..
                } => (
                    running,
                    Fe::SchedWaking(proto::SchedWakingFtraceEvent {
                        comm: Some(names.comm_on(*pid, cpu)),
                        pid: Some(i32_of(*pid)),
                        prio: Some(*prio),
                        success: None,
                        target_cpu: Some(i32_of(*target_cpu)),
                    }),
                ),
                TraceEvent::Wakeup {
                    pid,
                    prio,
                    target_cpu,
                    ..
                } => (
                    running,
                    Fe::SchedWakeup(proto::SchedWakeupFtraceEvent {
                        comm: Some(names.comm_on(*pid, cpu)),
                        pid: Some(i32_of(*pid)),
                        prio: Some(*prio),
                        success: None,
                        target_cpu: Some(i32_of(*target_cpu)),
                    }),
                ),
                TraceEvent::WakeupNew {
                    pid,
                    prio,
                    target_cpu,
                    ..
                } => (
                    running,
                    Fe::SchedWakeupNew(proto::SchedWakeupNewFtraceEvent {
                        comm: Some(names.comm_on(*pid, cpu)),
                        pid: Some(i32_of(*pid)),
                        prio: Some(*prio),
                        success: None,
                        target_cpu: Some(i32_of(*target_cpu)),
                    }),
                ),
                TraceEvent::MigrateTask {
                    pid,
                    prio,
                    orig_cpu,
                    dest_cpu,
                    ..
                } => (
                    running,
                    Fe::SchedMigrateTask(proto::SchedMigrateTaskFtraceEvent {
                        comm: Some(names.comm_on(*pid, cpu)),
                        pid: Some(i32_of(*pid)),
                        prio: Some(*prio),
                        orig_cpu: Some(i32_of(*orig_cpu)),
                        dest_cpu: Some(i32_of(*dest_cpu)),
                    }),
                ),
                TraceEvent::ProcessFork {
                    parent_pid,
                    child_pid,
                    ..
                } => (
                    *parent_pid,
                    Fe::SchedProcessFork(proto::SchedProcessForkFtraceEvent {
                        parent_comm: Some(names.comm_on(*parent_pid, cpu)),
                        parent_pid: Some(i32_of(*parent_pid)),
                        child_comm: Some(names.comm_on(*child_pid, cpu)),
                        child_pid: Some(i32_of(*child_pid)),
                    }),
                ),
                TraceEvent::ProcessExit { pid, .. } => (
                    *pid,
                    Fe::SchedProcessExit(proto::SchedProcessExitFtraceEvent {
                        comm: Some(names.comm_on(*pid, cpu)),
                        pid: Some(i32_of(*pid)),
                        tgid: Some(i32_of(names.tgid(*pid))),
                        prio: Some(DEFAULT_PRIO),
                    }),
                ),
                TraceEvent::Placement {
                    waker_pid,
                    wakee_pid,
                    prev_cpu,
                    target_cpu,
                    path,
                    examined,
                    ..
                } => {
                    let flow = next_flow;
                    next_flow += 1;
                    if *wakee_pid != 0 {
                        pending_flow.insert(*wakee_pid, flow);
                    }
                    let track = if *waker_pid == 0 {
                        cpu_track(cpu)
                    } else {
                        thread_track(*waker_pid)
                    };
                    let te = TrackEvent {
                        debug_annotations: vec![
                            DebugAnnotation::string("kind", KIND_PLACEMENT),
                            DebugAnnotation::uint("cpu", cpu.into()),
                            DebugAnnotation::uint("waker_pid", (*waker_pid).into()),
                            DebugAnnotation::uint("wakee_pid", (*wakee_pid).into()),
                            DebugAnnotation::uint("prev_cpu", (*prev_cpu).into()),
                            DebugAnnotation::uint("target_cpu", (*target_cpu).into()),
                            DebugAnnotation::uint("examined", (*examined).into()),
                            DebugAnnotation::string("path", path),
                        ],
                        r#type: Some(proto::TRACK_EVENT_TYPE_INSTANT),
                        track_uuid: Some(track),
                        categories: vec![CATEGORY.to_string()],
                        name: Some(format!(
                            "place {}:{} cpu{}->cpu{}",
                            names.comm_on(*wakee_pid, cpu),
                            wakee_pid,
                            prev_cpu,
                            target_cpu
                        )),
                        flow_ids: vec![flow],
                        terminating_flow_ids: Vec::new(),
                        counter_value: None,
                    };
                    tracks.push(packet(
                        TRACK_SEQUENCE,
                        Some(ev.ts_ns()),
                        PacketData::TrackEvent(te),
                    ));
                    continue;
                }
            };
            bundles.entry(cpu).or_default().push(FtraceEvent {
                timestamp: Some(ev.ts_ns()),
                pid: Some(pid),
                event: Some(data),
            });
        }
        for (cpu, event) in bundles {
            sink.emit(packet(
                FTRACE_SEQUENCE,
                None,
                PacketData::FtraceEvents(FtraceEventBundle {
                    cpu: Some(cpu),
                    event,
                    lost_events: None,
                    compact_sched: None,
                }),
            ))?;
        }
        for p in tracks {
            sink.emit(p)?;
        }
    }
    Ok(())
}

fn switch_in_packet(ts: u64, cpu: u32, pid: u32, flow: u64, names: &Names<'_>) -> TracePacket {
    let te = TrackEvent {
        debug_annotations: vec![
            DebugAnnotation::string("kind", KIND_SWITCH_IN),
            DebugAnnotation::uint("cpu", cpu.into()),
            DebugAnnotation::uint("pid", pid.into()),
        ],
        r#type: Some(proto::TRACK_EVENT_TYPE_INSTANT),
        track_uuid: Some(thread_track(pid)),
        categories: vec![CATEGORY.to_string()],
        name: Some(format!(
            "run {}:{} on cpu{}",
            names.comm_on(pid, cpu),
            pid,
            cpu
        )),
        flow_ids: Vec::new(),
        terminating_flow_ids: vec![flow],
        counter_value: None,
    };
    packet(TRACK_SEQUENCE, Some(ts), PacketData::TrackEvent(te))
}

fn emit_process_tree<W: Write>(
    trace: &Trace,
    ts: Option<u64>,
    sink: &mut PacketSink<'_, W>,
) -> io::Result<()> {
    let threads: Vec<&ThreadInfo> = trace.threads.iter().filter(|t| t.pid != 0).collect();
    if threads.is_empty() {
        return Ok(());
    }
    let mut seen = BTreeSet::new();
    let mut processes = Vec::new();
    for t in &threads {
        if seen.insert(t.tgid) {
            let leader = threads.iter().find(|x| x.pid == t.tgid).unwrap_or(t);
            processes.push(proto::Process {
                pid: Some(i32_of(t.tgid)),
                ppid: None,
                cmdline: vec![leader.comm.clone()],
            });
        }
    }
    let tree = proto::ProcessTree {
        processes,
        threads: threads
            .iter()
            .map(|t| proto::Thread {
                tid: Some(i32_of(t.pid)),
                name: Some(t.comm.clone()),
                tgid: Some(i32_of(t.tgid)),
            })
            .collect(),
    };
    sink.emit(packet(FTRACE_SEQUENCE, ts, PacketData::ProcessTree(tree)))
}

fn emit_track_descriptors<W: Write>(
    trace: &Trace,
    names: &Names<'_>,
    sink: &mut PacketSink<'_, W>,
) -> io::Result<()> {
    let mut thread_tracks = BTreeSet::new();
    let mut cpu_tracks = BTreeSet::new();
    for ev in &trace.events {
        if let TraceEvent::Placement {
            cpu,
            waker_pid,
            wakee_pid,
            ..
        } = ev
        {
            if *waker_pid == 0 {
                cpu_tracks.insert(*cpu);
            } else {
                thread_tracks.insert(*waker_pid);
            }
            if *wakee_pid != 0 {
                thread_tracks.insert(*wakee_pid);
            }
        }
    }
    for cpu in cpu_tracks {
        sink.emit(packet(
            TRACK_SEQUENCE,
            None,
            PacketData::TrackDescriptor(proto::TrackDescriptor {
                uuid: Some(cpu_track(cpu)),
                name: Some(format!("cpu{cpu} wakeups from idle/irq")),
                thread: None,
                parent_uuid: None,
                counter: None,
            }),
        ))?;
    }
    for pid in thread_tracks {
        sink.emit(packet(
            TRACK_SEQUENCE,
            None,
            PacketData::TrackDescriptor(proto::TrackDescriptor {
                uuid: Some(thread_track(pid)),
                name: None,
                thread: Some(proto::ThreadDescriptor {
                    pid: Some(i32_of(names.tgid(pid))),
                    tid: Some(i64::from(pid)),
                    thread_name: Some(names.comm_on(pid, 0)),
                }),
                parent_uuid: None,
                counter: None,
            }),
        ))?;
    }
    Ok(())
}

/// Writes `trace` to the file at `path` as Perfetto protobuf.
pub fn write_perfetto_file(trace: &Trace, path: &Path) -> Result<(), TraceError> {
    crate::write_file(path, |w| write_perfetto(trace, w))
}

/// [`write_perfetto_file`] with the per-CPU schedstat counter tracks
/// ([`counters::write_perfetto_with_counters`]).
pub fn write_perfetto_file_with_counters(trace: &Trace, path: &Path) -> Result<(), TraceError> {
    crate::write_file(path, |w| counters::write_perfetto_with_counters(trace, w))
}

/// Reads a Perfetto file (one written by [`write_perfetto`], or a `traced` recording of
/// ftrace sched events, see [`decode_perfetto_with_stats`]) into a [`Trace`].
pub fn read_perfetto_file(path: &Path) -> Result<Trace, TraceError> {
    read_perfetto_file_with_stats(path).map(|(t, _)| t)
}

/// [`read_perfetto_file`], with what the trace says was lost.
pub fn read_perfetto_file_with_stats(path: &Path) -> Result<(Trace, DecodeStats), TraceError> {
    let bytes = std::fs::read(path).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    decode_perfetto_with_stats(&bytes).map_err(|e| e.in_file(path))
}

mod compact;
pub mod counters;
mod decode;
mod dump;
pub use decode::{DecodeStats, decode_perfetto, decode_perfetto_with_stats};
pub use dump::dump_text;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_bits_round_trip_and_kernel_bits() {
        for s in [
            PrevState::Runnable,
            PrevState::Sleeping,
            PrevState::Uninterruptible,
            PrevState::Dead,
        ] {
            assert_eq!(state_from_bits(state_bits(s)), s);
        }
        assert_eq!(state_from_bits(0x100), PrevState::Runnable); // R+ (preempted)
        assert_eq!(state_from_bits(0x80), PrevState::Sleeping); // I (idle kthread)
        assert_eq!(state_from_bits(0x20), PrevState::Dead); // Z
        assert_eq!(state_from_bits(0x2 | 0x100), PrevState::Uninterruptible);
    }

    #[test]
    fn garbage_is_a_decode_error_not_a_panic() {
        let err = decode_perfetto(&[0x0a, 0xff, 0xff]).unwrap_err();
        assert!(matches!(err, TraceError::Decode(_)), "{err}");
    }

    #[test]
    fn negative_pid_is_reported_with_packet_index() {
        let p = TracePacket {
            timestamp: None,
            trusted_packet_sequence_id: Some(1),
            sequence_flags: None,
            first_packet_on_sequence: None,
            data: Some(PacketData::FtraceEvents(FtraceEventBundle {
                cpu: Some(0),
                event: vec![FtraceEvent {
                    timestamp: Some(5),
                    pid: Some(1),
                    event: Some(Fe::SchedWaking(proto::SchedWakingFtraceEvent {
                        comm: None,
                        pid: Some(-4),
                        prio: None,
                        success: None,
                        target_cpu: Some(0),
                    })),
                }],
                lost_events: None,
                compact_sched: None,
            })),
        };
        let bytes = proto::Trace { packet: vec![p] }.encode_to_vec();
        let err = decode_perfetto(&bytes).unwrap_err().to_string();
        assert!(
            err.contains("packet 0") && err.contains("`pid` is negative (-4)"),
            "{err}"
        );
    }
}
