//! Decoding the Perfetto subset [`super::write_perfetto`] writes (ftrace sched events and the
//! placement TrackEvents) back into a [`Trace`], with errors that name the packet.

use super::*;

struct Ctx {
    packet: usize,
}

impl Ctx {
    fn err(&self, what: impl Into<String>) -> TraceError {
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

/// Decodes a Perfetto protobuf trace into a [`Trace`].
///
/// Reads ftrace sched events (switch, waking, wakeup, wakeup_new,
/// migrate_task, process_fork/exit), thread names from `ProcessTree` (names of
/// other pids are inferred from event comm fields), the CPU count from
/// `CpuInfo` (else the largest CPU seen + 1), and schedlab placement
/// instants. Other packets and events are skipped. The result is sorted by
/// timestamp (stable: bundle order, then track events).
pub fn decode_perfetto(bytes: &[u8]) -> Result<Trace, TraceError> {
    let t = proto::Trace::decode(bytes)?;
    let mut events: Vec<TraceEvent> = Vec::new();
    let mut table = ThreadTable::default();
    let mut cpu_info: Option<u32> = None;
    for (pi, p) in t.packet.iter().enumerate() {
        let ctx = Ctx { packet: pi };
        match &p.data {
            Some(PacketData::FtraceEvents(b)) => {
                let cpu = b
                    .cpu
                    .ok_or_else(|| ctx.err("ftrace_events bundle has no `cpu`"))?;
                for (ei, fe) in b.event.iter().enumerate() {
                    let ts_ns = fe
                        .timestamp
                        .ok_or_else(|| ctx.err(format!("ftrace event {ei} has no `timestamp`")))?;
                    if let Some(ev) = decode_ftrace_event(&ctx, ts_ns, cpu, fe, &mut table)? {
                        events.push(ev);
                    }
                }
            }
            Some(PacketData::ProcessTree(tree)) => {
                for th in &tree.threads {
                    let pid = ctx.id(th.tid, "tid")?;
                    let tgid = match th.tgid {
                        Some(_) => ctx.id(th.tgid, "tgid")?,
                        None => pid,
                    };
                    if pid != 0 {
                        table.add_explicit(ThreadInfo {
                            pid,
                            tgid,
                            comm: th.name.clone().unwrap_or_default(),
                        });
                    }
                }
            }
            Some(PacketData::CpuInfo(ci)) => {
                cpu_info = Some(
                    u32::try_from(ci.cpus.len())
                        .map_err(|_| ctx.err("too many CPUs in cpu_info"))?,
                );
            }
            Some(PacketData::TrackEvent(te)) => {
                if let Some(ev) = decode_placement(&ctx, p.timestamp, te)? {
                    events.push(ev);
                }
            }
            Some(PacketData::TrackDescriptor(_)) | None => {}
        }
    }
    let mut trace = Trace {
        nr_cpus: 0,
        threads: table.finish(),
        events,
    };
    trace.sort();
    trace.nr_cpus = cpu_info.unwrap_or(0).max(trace.effective_nr_cpus());
    Ok(trace)
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
