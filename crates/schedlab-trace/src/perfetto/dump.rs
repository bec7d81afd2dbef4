//! A stable text dump of a Perfetto file, one line per packet and event: what the golden
//! snapshot test compares, and what a person reads to check a trace without Perfetto.

use super::*;

/// Renders the packets of a Perfetto trace (our subset) as stable,
/// line-oriented text: one line per packet and per ftrace event, fields in
/// proto order, absent fields omitted. Used by golden tests and handy for
/// eyeballing what a `.pftrace` contains without the UI.
pub fn dump_text(bytes: &[u8]) -> Result<String, TraceError> {
    let t = proto::Trace::decode(bytes)?;
    let mut s = String::new();
    for (i, p) in t.packet.iter().enumerate() {
        let _ = write!(s, "packet {i}");
        if let Some(seq) = p.trusted_packet_sequence_id {
            let _ = write!(s, " seq={seq}");
        }
        if let Some(f) = p.sequence_flags {
            let _ = write!(s, " flags={f}");
        }
        if p.first_packet_on_sequence == Some(true) {
            s.push_str(" first");
        }
        if let Some(ts) = p.timestamp {
            let _ = write!(s, " ts={ts}");
        }
        match &p.data {
            None => s.push_str(" (no data)\n"),
            Some(PacketData::CpuInfo(ci)) => {
                let _ = writeln!(s, " cpu_info cpus={}", ci.cpus.len());
            }
            Some(PacketData::ProcessTree(tree)) => {
                s.push_str(" process_tree\n");
                for pr in &tree.processes {
                    let _ = writeln!(s, "  process pid={} cmdline={:?}", opt(pr.pid), pr.cmdline);
                }
                for th in &tree.threads {
                    let _ = writeln!(
                        s,
                        "  thread tid={} tgid={} name={:?}",
                        opt(th.tid),
                        opt(th.tgid),
                        th.name.as_deref().unwrap_or("")
                    );
                }
            }
            Some(PacketData::TrackDescriptor(d)) => {
                let _ = write!(s, " track_descriptor uuid={:#x}", d.uuid.unwrap_or(0));
                if let Some(n) = &d.name {
                    let _ = write!(s, " name={n:?}");
                }
                if let Some(th) = &d.thread {
                    let _ = write!(
                        s,
                        " thread(pid={} tid={} name={:?})",
                        opt(th.pid),
                        opt(th.tid),
                        th.thread_name.as_deref().unwrap_or("")
                    );
                }
                s.push('\n');
            }
            Some(PacketData::TrackEvent(te)) => {
                let _ = write!(
                    s,
                    " track_event type={} track={:#x} categories={:?} name={:?}",
                    opt(te.r#type),
                    te.track_uuid.unwrap_or(0),
                    te.categories,
                    te.name.as_deref().unwrap_or("")
                );
                if !te.flow_ids.is_empty() {
                    let _ = write!(s, " flow_ids={:?}", te.flow_ids);
                }
                if !te.terminating_flow_ids.is_empty() {
                    let _ = write!(s, " terminating_flow_ids={:?}", te.terminating_flow_ids);
                }
                s.push('\n');
                for a in &te.debug_annotations {
                    let name = a.name.as_deref().unwrap_or("?");
                    if let Some(v) = a.uint_value {
                        let _ = writeln!(s, "  {name}={v}");
                    } else if let Some(v) = a.int_value {
                        let _ = writeln!(s, "  {name}={v}i");
                    } else if let Some(v) = &a.string_value {
                        let _ = writeln!(s, "  {name}={v:?}");
                    } else {
                        let _ = writeln!(s, "  {name}=(none)");
                    }
                }
            }
            Some(PacketData::FtraceStats(fs)) => {
                let _ = writeln!(s, " ftrace_stats phase={}", opt(fs.phase));
                for c in &fs.cpu_stats {
                    let _ = writeln!(
                        s,
                        "  cpu={} overrun={} commit_overrun={} dropped_events={}",
                        opt(c.cpu),
                        opt(c.overrun),
                        opt(c.commit_overrun),
                        opt(c.dropped_events)
                    );
                }
            }
            Some(PacketData::FtraceEvents(b)) => {
                let _ = write!(
                    s,
                    " ftrace_events cpu={} events={}",
                    opt(b.cpu),
                    b.event.len()
                );
                if b.lost_events == Some(true) {
                    s.push_str(" lost_events");
                }
                s.push('\n');
                if let Some(cs) = &b.compact_sched {
                    dump_compact(&mut s, cs);
                }
                for fe in &b.event {
                    let _ = write!(s, "  ts={} pid={} ", opt(fe.timestamp), opt(fe.pid));
                    dump_ftrace(&mut s, fe);
                    s.push('\n');
                }
            }
        }
    }
    Ok(s)
}

/// The compact arrays as they are stored (timestamps still delta-encoded).
fn dump_compact(s: &mut String, cs: &proto::CompactSched) {
    let _ = writeln!(s, "  compact_sched intern_table={:?}", cs.intern_table);
    let _ = writeln!(
        s,
        "  compact switch_timestamp={:?} switch_prev_state={:?} switch_next_pid={:?} switch_next_prio={:?} switch_next_comm_index={:?}",
        cs.switch_timestamp,
        cs.switch_prev_state,
        cs.switch_next_pid,
        cs.switch_next_prio,
        cs.switch_next_comm_index
    );
    let _ = writeln!(
        s,
        "  compact waking_timestamp={:?} waking_pid={:?} waking_target_cpu={:?} waking_prio={:?} waking_comm_index={:?} waking_common_flags={:?}",
        cs.waking_timestamp,
        cs.waking_pid,
        cs.waking_target_cpu,
        cs.waking_prio,
        cs.waking_comm_index,
        cs.waking_common_flags
    );
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn optc(v: &Option<String>) -> String {
    format!("{:?}", v.as_deref().unwrap_or(""))
}

fn dump_ftrace(s: &mut String, fe: &FtraceEvent) {
    let _ = match &fe.event {
        None => write!(s, "(unknown event)"),
        Some(Fe::SchedSwitch(e)) => write!(
            s,
            "sched_switch prev_comm={} prev_pid={} prev_prio={} prev_state={} next_comm={} next_pid={} next_prio={}",
            optc(&e.prev_comm),
            opt(e.prev_pid),
            opt(e.prev_prio),
            opt(e.prev_state),
            optc(&e.next_comm),
            opt(e.next_pid),
            opt(e.next_prio)
        ),
        Some(Fe::SchedWaking(e)) => write!(
            s,
            "sched_waking comm={} pid={} prio={} target_cpu={}",
            optc(&e.comm),
            opt(e.pid),
            opt(e.prio),
            opt(e.target_cpu)
        ),
        Some(Fe::SchedWakeup(e)) => write!(
            s,
            "sched_wakeup comm={} pid={} prio={} target_cpu={}",
            optc(&e.comm),
            opt(e.pid),
            opt(e.prio),
            opt(e.target_cpu)
        ),
        Some(Fe::SchedWakeupNew(e)) => write!(
            s,
            "sched_wakeup_new comm={} pid={} prio={} target_cpu={}",
            optc(&e.comm),
            opt(e.pid),
            opt(e.prio),
            opt(e.target_cpu)
        ),
        Some(Fe::SchedMigrateTask(e)) => write!(
            s,
            "sched_migrate_task comm={} pid={} prio={} orig_cpu={} dest_cpu={}",
            optc(&e.comm),
            opt(e.pid),
            opt(e.prio),
            opt(e.orig_cpu),
            opt(e.dest_cpu)
        ),
        Some(Fe::SchedProcessFork(e)) => write!(
            s,
            "sched_process_fork parent_comm={} parent_pid={} child_comm={} child_pid={}",
            optc(&e.parent_comm),
            opt(e.parent_pid),
            optc(&e.child_comm),
            opt(e.child_pid)
        ),
        Some(Fe::SchedProcessFree(e)) => write!(
            s,
            "sched_process_free comm={} pid={} prio={}",
            optc(&e.comm),
            opt(e.pid),
            opt(e.prio)
        ),
        Some(Fe::SchedProcessExit(e)) => write!(
            s,
            "sched_process_exit comm={} pid={} tgid={} prio={}",
            optc(&e.comm),
            opt(e.pid),
            opt(e.tgid),
            opt(e.prio)
        ),
    };
}
