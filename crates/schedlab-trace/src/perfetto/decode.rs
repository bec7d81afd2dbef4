//! Decoding Perfetto traces into a [`Trace`]: the subset [`super::write_perfetto`] writes
//! (ftrace sched events and the placement TrackEvents) and what `traced` records of the
//! scheduler (compact sched bundles, see [`super::compact`]; ftrace stats; process trees),
//! with errors that name the packet and counts of what was lost ([`DecodeStats`]).

use super::compact::{self, Pending};
use super::*;
use prost::encoding::{DecodeContext, WireType, decode_key, decode_varint, skip_field};

pub(super) struct Ctx {
    packet: usize,
}

impl Ctx {
    pub(super) fn err(&self, what: impl Into<String>) -> TraceError {
        TraceError::Perfetto {
            packet: self.packet,
            what: what.into(),
        }
    }

    /// A non-negative id field (pid / CPU); missing means 0 as in proto2.
    fn id(&self, v: Option<i32>, field: &str) -> Result<u32, TraceError> {
        let v = v.unwrap_or(0);
        u32::try_from(v).map_err(|_| self.err(format!("`{field}` is negative ({v})")))
    }
}

/// What a Perfetto trace says was lost, and what the compact decoding could not take as is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecodeStats {
    /// Events the kernel lost: per CPU, how much `overrun + commit_overrun +
    /// dropped_events` of the end-of-trace `FtraceStats` exceeds the start-of-trace one
    /// (trace_processor's `ftrace_cpu_*_delta` stats), summed over CPUs.
    pub lost_events: u64,
    /// Ftrace bundles flagged `lost_events`: the kernel overwrote events of that CPU since
    /// the previous read (the count is not recorded there).
    pub lost_bundles: u64,
    /// The file ends inside a packet (a truncated file): decoded up to it.
    pub truncated: bool,
    /// sched_switch events decoded from compact bundles.
    pub compact_switches: u64,
    /// sched_waking events decoded from compact bundles.
    pub compact_wakings: u64,
    /// Compact switches with no earlier switch on their CPU: their prev task is unknown
    /// and read as idle (one per CPU in a trace without regular sched_switch events).
    pub compact_no_prev: u64,
    /// Compact bundles with arrays of unequal length, a comm index past the intern table
    /// or a timestamp that overflows: decoded up to the fault.
    pub compact_malformed: u64,
}

/// Decodes a Perfetto protobuf trace into a [`Trace`]; [`decode_perfetto_with_stats`] also
/// says what was lost.
pub fn decode_perfetto(bytes: &[u8]) -> Result<Trace, TraceError> {
    decode_perfetto_with_stats(bytes).map(|(t, _)| t)
}

/// Whether `b` is the start of a varint that the end of the data cut off.
fn cut_varint(b: &[u8]) -> bool {
    b.len() < 10 && b.iter().all(|&x| x & 0x80 != 0)
}

/// Where the packets of a `Trace` are split off (field 1); other top-level fields are
/// skipped. A file that ends inside a packet (a cut-off varint, or a length past the end)
/// is decoded up to it and `truncated` set, unless that is its first packet.
struct Packets<'a> {
    all: &'a [u8],
    rest: &'a [u8],
    index: usize,
    truncated: bool,
}

impl<'a> Packets<'a> {
    /// The next packet's bytes, `Ok(None)` at the end.
    fn next(&mut self) -> Result<Option<&'a [u8]>, TraceError> {
        loop {
            if self.rest.is_empty() {
                return Ok(None);
            }
            let mut b: &[u8] = self.rest;
            let key = decode_key(&mut b);
            let len = match key {
                Ok((1, WireType::LengthDelimited)) => decode_varint(&mut b),
                Ok((tag, wt)) if tag != 1 => {
                    skip_field(wt, tag, &mut b, DecodeContext::default())?;
                    self.rest = b;
                    continue;
                }
                _ if cut_varint(self.rest) => return self.cut(),
                _ => return Err(self.invalid()),
            };
            let len = match len {
                Ok(l) if l <= b.len() as u64 => l as usize,
                Ok(_) => return self.cut(),
                Err(_) if cut_varint(b) => return self.cut(),
                Err(e) => return Err(TraceError::Decode(e)),
            };
            let (p, rest) = b.split_at(len);
            self.rest = rest;
            self.index += 1;
            return Ok(Some(p));
        }
    }

    fn cut(&mut self) -> Result<Option<&'a [u8]>, TraceError> {
        if self.index == 0 {
            return Err(self.invalid());
        }
        self.truncated = true;
        self.rest = &[];
        Ok(None)
    }

    /// The error of a file that is not a `Trace`: what the protobuf decoder says of it.
    fn invalid(&self) -> TraceError {
        match proto::Trace::decode(self.all) {
            Err(e) => TraceError::Decode(e),
            Ok(_) => TraceError::Perfetto {
                packet: self.index,
                what: "the trace ends inside this packet".into(),
            },
        }
    }
}

/// Decodes a Perfetto protobuf trace into a [`Trace`], with what it says was lost.
///
/// Reads ftrace sched events (switch, waking, wakeup, wakeup_new, migrate_task,
/// process_fork/exit; process_free only names its pid), regular or in compact sched
/// bundles; thread names and thread groups from `ProcessTree` (names of other pids are
/// inferred from event comm fields); the CPU count from `CpuInfo` (else the largest CPU
/// seen + 1); the kernel's lost-event counters from `FtraceStats`; and schedlab placement
/// instants. Packets are decoded one at a time; other packets, fields and events are
/// skipped. The result is sorted by timestamp (stable: file order, within a bundle its
/// compact switches, its compact wakings, then its other events; track events in file
/// order).
pub fn decode_perfetto_with_stats(bytes: &[u8]) -> Result<(Trace, DecodeStats), TraceError> {
    let mut packets = Packets {
        all: bytes,
        rest: bytes,
        index: 0,
        truncated: false,
    };
    let mut stats = DecodeStats::default();
    let mut items: Vec<Pending> = Vec::new();
    let mut table = ThreadTable::default();
    let mut cpu_info: Option<u32> = None;
    // CPU -> (start, end) of the kernel's lost-event counters.
    let mut lost: BTreeMap<u64, (Option<u64>, Option<u64>)> = BTreeMap::new();
    let mut pi = 0usize;
    while let Some(pb) = packets.next()? {
        let ctx = Ctx { packet: pi };
        pi += 1;
        let p = proto::TracePacket::decode(pb)?;
        match &p.data {
            Some(PacketData::FtraceEvents(b)) => {
                let cpu = b
                    .cpu
                    .ok_or_else(|| ctx.err("ftrace_events bundle has no `cpu`"))?;
                if b.lost_events == Some(true) {
                    stats.lost_bundles += 1;
                }
                if let Some(cs) = &b.compact_sched {
                    compact::decode_bundle(&ctx, cpu, cs, &mut table, &mut stats, &mut items)?;
                }
                for (ei, fe) in b.event.iter().enumerate() {
                    let ts_ns = fe
                        .timestamp
                        .ok_or_else(|| ctx.err(format!("ftrace event {ei} has no `timestamp`")))?;
                    if let Some(ev) = decode_ftrace_event(&ctx, ts_ns, cpu, fe, &mut table)? {
                        items.push(Pending::Event(ev));
                    }
                }
            }
            Some(PacketData::ProcessTree(tree)) => {
                for pr in &tree.processes {
                    let pid = ctx.id(pr.pid, "pid")?;
                    table.saw_tgid(pid, pid);
                }
                for th in &tree.threads {
                    let pid = ctx.id(th.tid, "tid")?;
                    let tgid = match th.tgid {
                        Some(_) => ctx.id(th.tgid, "tgid")?,
                        None => pid,
                    };
                    match th.name.as_deref() {
                        // `traced`'s process_stats lists threads without names: the comm
                        // then comes from the sched events, the thread group from here.
                        None | Some("") => table.saw_tgid(pid, tgid),
                        Some(name) if pid != 0 => table.add_explicit(ThreadInfo {
                            pid,
                            tgid,
                            comm: name.to_string(),
                        }),
                        Some(_) => {}
                    }
                }
            }
            Some(PacketData::CpuInfo(ci)) => {
                cpu_info = Some(
                    u32::try_from(ci.cpus.len())
                        .map_err(|_| ctx.err("too many CPUs in cpu_info"))?,
                );
            }
            Some(PacketData::FtraceStats(fs)) => {
                let phase = fs.phase.unwrap_or(0);
                for c in &fs.cpu_stats {
                    let n = c
                        .overrun
                        .unwrap_or(0)
                        .saturating_add(c.commit_overrun.unwrap_or(0))
                        .saturating_add(c.dropped_events.unwrap_or(0));
                    let e = lost.entry(c.cpu.unwrap_or(0)).or_default();
                    match phase {
                        proto::FTRACE_STATS_START if e.0.is_none() => e.0 = Some(n),
                        proto::FTRACE_STATS_END => e.1 = Some(n),
                        _ => {}
                    }
                }
            }
            Some(PacketData::TrackEvent(te)) => {
                if let Some(ev) = decode_placement(&ctx, p.timestamp, te)? {
                    items.push(Pending::Event(ev));
                }
            }
            Some(PacketData::TrackDescriptor(_)) | None => {}
        }
    }
    stats.truncated = packets.truncated;
    stats.lost_events = lost
        .values()
        .filter_map(|&(s, e)| Some(e?.saturating_sub(s?)))
        .fold(0u64, u64::saturating_add);
    let mut trace = Trace {
        nr_cpus: 0,
        threads: table.finish(),
        events: compact::resolve(items, &mut stats),
    };
    trace.nr_cpus = cpu_info.unwrap_or(0).max(trace.effective_nr_cpus());
    Ok((trace, stats))
}

fn decode_ftrace_event(
    ctx: &Ctx,
    ts_ns: u64,
    cpu: u32,
    fe: &FtraceEvent,
    table: &mut ThreadTable,
) -> Result<Option<TraceEvent>, TraceError> {
    let prio = |p: Option<i32>| p.unwrap_or(DEFAULT_PRIO);
    let mut comm = |pid: u32, c: &Option<String>| {
        if let Some(c) = c {
            table.saw_comm(pid, c);
        }
    };
    let ev = match &fe.event {
        Some(Fe::SchedSwitch(s)) => {
            let prev_pid = ctx.id(s.prev_pid, "prev_pid")?;
            let next_pid = ctx.id(s.next_pid, "next_pid")?;
            comm(prev_pid, &s.prev_comm);
            comm(next_pid, &s.next_comm);
            TraceEvent::Switch {
                ts_ns,
                cpu,
                prev_pid,
                prev_prio: prio(s.prev_prio),
                prev_state: state_from_bits(s.prev_state.unwrap_or(0)),
                next_pid,
                next_prio: prio(s.next_prio),
            }
        }
        Some(Fe::SchedWaking(s)) => {
            let pid = ctx.id(s.pid, "pid")?;
            comm(pid, &s.comm);
            let target_cpu = ctx.id(s.target_cpu, "target_cpu")?;
            TraceEvent::Waking {
                ts_ns,
                cpu,
                pid,
                prio: prio(s.prio),
                target_cpu,
            }
        }
        Some(Fe::SchedWakeup(s)) => {
            let pid = ctx.id(s.pid, "pid")?;
            comm(pid, &s.comm);
            let target_cpu = ctx.id(s.target_cpu, "target_cpu")?;
            TraceEvent::Wakeup {
                ts_ns,
                cpu,
                pid,
                prio: prio(s.prio),
                target_cpu,
            }
        }
        Some(Fe::SchedWakeupNew(s)) => {
            let pid = ctx.id(s.pid, "pid")?;
            comm(pid, &s.comm);
            let target_cpu = ctx.id(s.target_cpu, "target_cpu")?;
            TraceEvent::WakeupNew {
                ts_ns,
                cpu,
                pid,
                prio: prio(s.prio),
                target_cpu,
            }
        }
        Some(Fe::SchedMigrateTask(s)) => {
            let pid = ctx.id(s.pid, "pid")?;
            comm(pid, &s.comm);
            TraceEvent::MigrateTask {
                ts_ns,
                cpu,
                pid,
                prio: prio(s.prio),
                orig_cpu: ctx.id(s.orig_cpu, "orig_cpu")?,
                dest_cpu: ctx.id(s.dest_cpu, "dest_cpu")?,
            }
        }
        Some(Fe::SchedProcessFork(s)) => {
            let parent_pid = ctx.id(s.parent_pid, "parent_pid")?;
            let child_pid = ctx.id(s.child_pid, "child_pid")?;
            comm(parent_pid, &s.parent_comm);
            comm(child_pid, &s.child_comm);
            TraceEvent::ProcessFork {
                ts_ns,
                cpu,
                parent_pid,
                child_pid,
            }
        }
        Some(Fe::SchedProcessFree(s)) => {
            // No event of ours (the text parser skips it too); the comm is a name.
            let pid = ctx.id(s.pid, "pid")?;
            comm(pid, &s.comm);
            return Ok(None);
        }
        Some(Fe::SchedProcessExit(s)) => {
            let pid = ctx.id(s.pid, "pid")?;
            comm(pid, &s.comm);
            if s.tgid.is_some() {
                table.saw_tgid(pid, ctx.id(s.tgid, "tgid")?);
            }
            TraceEvent::ProcessExit { ts_ns, cpu, pid }
        }
        None => return Ok(None),
    };
    Ok(Some(ev))
}

fn decode_placement(
    ctx: &Ctx,
    ts: Option<u64>,
    te: &TrackEvent,
) -> Result<Option<TraceEvent>, TraceError> {
    let find = |name: &str| {
        te.debug_annotations
            .iter()
            .find(|a| a.name.as_deref() == Some(name))
    };
    if find("kind").and_then(|a| a.string_value.as_deref()) != Some(KIND_PLACEMENT) {
        return Ok(None);
    }
    let uint = |name: &str| -> Result<u32, TraceError> {
        let a =
            find(name).ok_or_else(|| ctx.err(format!("placement lacks annotation `{name}`")))?;
        let v = a
            .uint_value
            .or_else(|| a.int_value.and_then(|i| u64::try_from(i).ok()))
            .ok_or_else(|| {
                ctx.err(format!(
                    "placement annotation `{name}` is not a non-negative integer"
                ))
            })?;
        u32::try_from(v).map_err(|_| {
            ctx.err(format!(
                "placement annotation `{name}` = {v} is out of range"
            ))
        })
    };
    let path = find("path")
        .and_then(|a| a.string_value.clone())
        .ok_or_else(|| ctx.err("placement lacks string annotation `path`"))?;
    Ok(Some(TraceEvent::Placement {
        ts_ns: ts.ok_or_else(|| ctx.err("placement track event has no packet `timestamp`"))?,
        cpu: uint("cpu")?,
        waker_pid: uint("waker_pid")?,
        wakee_pid: uint("wakee_pid")?,
        prev_cpu: uint("prev_cpu")?,
        target_cpu: uint("target_cpu")?,
        path,
        examined: uint("examined")?,
    }))
}
