//! Hand-written prost messages for the small subset of Perfetto's trace protos
//! that schedlab writes and reads back.
//!
//! Field numbers and types come from Perfetto's Apache-2.0 licensed protos
//! (github.com/google/perfetto, `protos/perfetto/trace/`):
//!
//! * `trace.proto` — `Trace.packet` = 1
//! * `trace_packet.proto` — `TracePacket`: `timestamp` 8, `ftrace_events` 1,
//!   `process_tree` 2, `trusted_packet_sequence_id` 10, `track_event` 11,
//!   `sequence_flags` 13 (`SEQ_INCREMENTAL_STATE_CLEARED` = 1,
//!   `SEQ_NEEDS_INCREMENTAL_STATE` = 2), `track_descriptor` 60, `cpu_info` 67,
//!   `first_packet_on_sequence` 87
//! * `ftrace/ftrace_event_bundle.proto` — `cpu` 1, `event` 2, `lost_events` 3,
//!   `compact_sched` 4 (`CompactSched`: `switch_timestamp` 1, `switch_prev_state` 2,
//!   `switch_next_pid` 3, `switch_next_prio` 4, `intern_table` 5,
//!   `switch_next_comm_index` 6, `waking_timestamp` 7, `waking_pid` 8,
//!   `waking_target_cpu` 9, `waking_prio` 10, `waking_comm_index` 11,
//!   `waking_common_flags` 12, all packed)
//! * `ftrace/ftrace_stats.proto` — `FtraceStats` (`TracePacket.ftrace_stats` 34):
//!   `phase` 1 (`START_OF_TRACE` = 1, `END_OF_TRACE` = 2), `cpu_stats` 2;
//!   `FtraceCpuStats`: `cpu` 1, `overrun` 3, `commit_overrun` 4, `dropped_events` 8
//! * `ftrace/ftrace_event.proto` — `timestamp` 1, `pid` 2, `sched_switch` 4,
//!   `sched_wakeup` 17, `sched_waking` 20, `sched_wakeup_new` 114,
//!   `sched_process_exit` 238, `sched_process_fork` 239, `sched_process_free` 240,
//!   `sched_migrate_task` 491
//! * `ftrace/sched.proto` — the `Sched*FtraceEvent` messages below
//! * `ps/process_tree.proto` — `ProcessTree`, `.Process`, `.Thread`
//! * `system_info/cpu_info.proto` — `CpuInfo.cpus` 1, `Cpu.processor` 1
//! * `track_event/track_descriptor.proto`, `thread_descriptor.proto`,
//!   `track_event.proto` (`type` 9, `track_uuid` 11, `categories` 22, `name` 23,
//!   `debug_annotations` 4, `flow_ids` 47 and `terminating_flow_ids` 48 as
//!   unpacked `fixed64`), `debug_annotation.proto` (`name` 10, `uint_value` 3,
//!   `int_value` 4, `string_value` 6)
//!
//! Every number was checked against the protos and against the descriptors in
//! the `perfetto` 0.59.1 PyPI package (`perfetto_trace_pb2`); the compact-sched and
//! ftrace-stats ones against the protos at Perfetto commit ec5d16b (2026-08), and the
//! committed compact fixture is written with `perfetto_trace_pb2`. Messages contain
//! only the fields we use; unknown fields in foreign traces are skipped by prost.
//! Oneofs that we only ever set one member of are modelled as plain optional
//! fields (wire-identical).

// prost derives Debug, so only Clone/PartialEq are derived here.

/// `perfetto.protos.Trace`: a file is a sequence of packets.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trace {
    /// The packets.
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// `perfetto.protos.TracePacket` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// Packet timestamp (ns, BOOTTIME clock by default); used by track events.
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// Writer sequence the packet belongs to.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// `SequenceFlags` bits, see [`SEQ_INCREMENTAL_STATE_CLEARED`].
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// Set on the first packet a writer emits on its sequence.
    #[prost(bool, optional, tag = "87")]
    pub first_packet_on_sequence: Option<bool>,
    /// The payload (`oneof data`).
    #[prost(oneof = "PacketData", tags = "1, 2, 11, 34, 60, 67")]
    pub data: Option<PacketData>,
}

/// `SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED`.
pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
/// `SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE`.
pub const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

/// `TracePacket.data` oneof members we use.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum PacketData {
    /// Kernel ftrace events of one CPU.
    #[prost(message, tag = "1")]
    FtraceEvents(FtraceEventBundle),
    /// Process and thread names.
    #[prost(message, tag = "2")]
    ProcessTree(ProcessTree),
    /// A track event (our placement annotations).
    #[prost(message, tag = "11")]
    TrackEvent(TrackEvent),
    /// Kernel ring-buffer counters at the start and end of the trace (lost events).
    #[prost(message, tag = "34")]
    FtraceStats(FtraceStats),
    /// A track definition.
    #[prost(message, tag = "60")]
    TrackDescriptor(TrackDescriptor),
    /// CPU list (gives the machine's CPU count).
    #[prost(message, tag = "67")]
    CpuInfo(CpuInfo),
}

/// `perfetto.protos.FtraceEventBundle`: events of one CPU.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FtraceEventBundle {
    /// CPU the events happened on.
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    /// The events, in time order.
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<FtraceEvent>,
    /// The kernel overwrote events of this CPU (how many is not said) since the
    /// previous read of its buffer.
    #[prost(bool, optional, tag = "3")]
    pub lost_events: Option<bool>,
    /// sched_switch / sched_waking in the compact encoding (`traced` with
    /// `ftrace_config.compact_sched.enabled`), see `super::compact`.
    #[prost(message, optional, tag = "4")]
    pub compact_sched: Option<CompactSched>,
}

/// `perfetto.protos.FtraceEventBundle.CompactSched`: the bundle's sched_switch and
/// sched_waking events as parallel arrays, one entry per event. A switch stores only
/// its next task; its prev task is the previous switch's next task on the same CPU.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CompactSched {
    /// Switch times: the first absolute, each next one a delta to its predecessor.
    #[prost(uint64, repeated, tag = "1")]
    pub switch_timestamp: Vec<u64>,
    /// Kernel task-state bits of the task switched out.
    #[prost(int64, repeated, tag = "2")]
    pub switch_prev_state: Vec<i64>,
    /// Pid of the task switched in.
    #[prost(int32, repeated, tag = "3")]
    pub switch_next_pid: Vec<i32>,
    /// Its priority.
    #[prost(int32, repeated, tag = "4")]
    pub switch_next_prio: Vec<i32>,
    /// The bundle's distinct comm strings.
    #[prost(string, repeated, tag = "5")]
    pub intern_table: Vec<String>,
    /// Index into `intern_table` of the next task's comm.
    #[prost(uint32, repeated, tag = "6")]
    pub switch_next_comm_index: Vec<u32>,
    /// Waking times, delta-encoded as `switch_timestamp`.
    #[prost(uint64, repeated, tag = "7")]
    pub waking_timestamp: Vec<u64>,
    /// Pid of the woken task.
    #[prost(int32, repeated, tag = "8")]
    pub waking_pid: Vec<i32>,
    /// CPU it was placed on.
    #[prost(int32, repeated, tag = "9")]
    pub waking_target_cpu: Vec<i32>,
    /// Its priority.
    #[prost(int32, repeated, tag = "10")]
    pub waking_prio: Vec<i32>,
    /// Index into `intern_table` of its comm.
    #[prost(uint32, repeated, tag = "11")]
    pub waking_comm_index: Vec<u32>,
    /// The events' `common_flags` (irq context etc.; absent in older traces; unused).
    #[prost(uint32, repeated, tag = "12")]
    pub waking_common_flags: Vec<u32>,
}

/// `FtraceStats.Phase.START_OF_TRACE`.
pub const FTRACE_STATS_START: i32 = 1;
/// `FtraceStats.Phase.END_OF_TRACE`.
pub const FTRACE_STATS_END: i32 = 2;

/// `perfetto.protos.FtraceStats` (subset): written at the start and at the end.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FtraceStats {
    /// [`FTRACE_STATS_START`] or [`FTRACE_STATS_END`].
    #[prost(int32, optional, tag = "1")]
    pub phase: Option<i32>,
    /// One entry per CPU.
    #[prost(message, repeated, tag = "2")]
    pub cpu_stats: Vec<FtraceCpuStats>,
}

/// `perfetto.protos.FtraceCpuStats` (subset): the kernel's `per_cpu/cpuN/stats`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FtraceCpuStats {
    /// The CPU.
    #[prost(uint64, optional, tag = "1")]
    pub cpu: Option<u64>,
    /// Events overwritten in the ring buffer since tracing was enabled.
    #[prost(uint64, optional, tag = "3")]
    pub overrun: Option<u64>,
    /// Events dropped because the buffer was full while being written (commit overrun).
    #[prost(uint64, optional, tag = "4")]
    pub commit_overrun: Option<u64>,
    /// New events refused because the buffer was full (non-overwrite mode).
    #[prost(uint64, optional, tag = "8")]
    pub dropped_events: Option<u64>,
}

/// `perfetto.protos.FtraceEvent` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct FtraceEvent {
    /// Timestamp in ns.
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    /// Pid of the task running when the event fired.
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    /// The event payload (`oneof event`).
    #[prost(oneof = "FtraceEventData", tags = "4, 17, 20, 114, 238, 239, 240, 491")]
    pub event: Option<FtraceEventData>,
}

/// `FtraceEvent.event` oneof members we use.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum FtraceEventData {
    /// `sched_switch`.
    #[prost(message, tag = "4")]
    SchedSwitch(SchedSwitchFtraceEvent),
    /// `sched_wakeup`.
    #[prost(message, tag = "17")]
    SchedWakeup(SchedWakeupFtraceEvent),
    /// `sched_waking`.
    #[prost(message, tag = "20")]
    SchedWaking(SchedWakingFtraceEvent),
    /// `sched_wakeup_new`.
    #[prost(message, tag = "114")]
    SchedWakeupNew(SchedWakeupNewFtraceEvent),
    /// `sched_process_exit`.
    #[prost(message, tag = "238")]
    SchedProcessExit(SchedProcessExitFtraceEvent),
    /// `sched_process_fork`.
    #[prost(message, tag = "239")]
    SchedProcessFork(SchedProcessForkFtraceEvent),
    /// `sched_process_free` (no event of ours; its comm names the pid).
    #[prost(message, tag = "240")]
    SchedProcessFree(SchedProcessFreeFtraceEvent),
    /// `sched_migrate_task`.
    #[prost(message, tag = "491")]
    SchedMigrateTask(SchedMigrateTaskFtraceEvent),
}

/// `perfetto.protos.SchedSwitchFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedSwitchFtraceEvent {
    /// Name of the task switched out.
    #[prost(string, optional, tag = "1")]
    pub prev_comm: Option<String>,
    /// Its pid.
    #[prost(int32, optional, tag = "2")]
    pub prev_pid: Option<i32>,
    /// Its priority.
    #[prost(int32, optional, tag = "3")]
    pub prev_prio: Option<i32>,
    /// Kernel task-state bits (0 = runnable, 1 = S, 2 = D, 0x10 = X, ...).
    #[prost(int64, optional, tag = "4")]
    pub prev_state: Option<i64>,
    /// Name of the task switched in.
    #[prost(string, optional, tag = "5")]
    pub next_comm: Option<String>,
    /// Its pid.
    #[prost(int32, optional, tag = "6")]
    pub next_pid: Option<i32>,
    /// Its priority.
    #[prost(int32, optional, tag = "7")]
    pub next_prio: Option<i32>,
}

/// `perfetto.protos.SchedWakingFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedWakingFtraceEvent {
    /// Name of the woken task.
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    /// Its pid.
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    /// Its priority.
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    /// Legacy success flag.
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    /// CPU it will run on.
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

/// `perfetto.protos.SchedWakeupFtraceEvent` (same fields as waking).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedWakeupFtraceEvent {
    /// Name of the woken task.
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    /// Its pid.
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    /// Its priority.
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    /// Legacy success flag.
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    /// CPU it was enqueued on.
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

/// `perfetto.protos.SchedWakeupNewFtraceEvent` (same fields as waking).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedWakeupNewFtraceEvent {
    /// Name of the new task.
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    /// Its pid.
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    /// Its priority.
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    /// Legacy success flag.
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    /// CPU it was placed on.
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

/// `perfetto.protos.SchedMigrateTaskFtraceEvent` (subset: no `running`/`load`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedMigrateTaskFtraceEvent {
    /// Name of the moved task.
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    /// Its pid.
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    /// Its priority.
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    /// CPU it leaves.
    #[prost(int32, optional, tag = "4")]
    pub orig_cpu: Option<i32>,
    /// CPU it goes to.
    #[prost(int32, optional, tag = "5")]
    pub dest_cpu: Option<i32>,
}

/// `perfetto.protos.SchedProcessForkFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedProcessForkFtraceEvent {
    /// Parent name.
    #[prost(string, optional, tag = "1")]
    pub parent_comm: Option<String>,
    /// Parent pid.
    #[prost(int32, optional, tag = "2")]
    pub parent_pid: Option<i32>,
    /// Child name.
    #[prost(string, optional, tag = "3")]
    pub child_comm: Option<String>,
    /// Child pid.
    #[prost(int32, optional, tag = "4")]
    pub child_pid: Option<i32>,
}

/// `perfetto.protos.SchedProcessExitFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedProcessExitFtraceEvent {
    /// Name of the exiting task.
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    /// Its pid.
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    /// Its thread group.
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
    /// Its priority.
    #[prost(int32, optional, tag = "4")]
    pub prio: Option<i32>,
}

/// `perfetto.protos.SchedProcessFreeFtraceEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchedProcessFreeFtraceEvent {
    /// Name of the task whose memory is freed.
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    /// Its pid.
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    /// Its priority.
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
}

/// `perfetto.protos.ProcessTree`: names for pids and tids.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessTree {
    /// Processes (thread groups).
    #[prost(message, repeated, tag = "1")]
    pub processes: Vec<Process>,
    /// Threads.
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<Thread>,
}

/// `perfetto.protos.ProcessTree.Process` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Process {
    /// Process id (tgid).
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// Parent process id.
    #[prost(int32, optional, tag = "2")]
    pub ppid: Option<i32>,
    /// Command line; we put the comm in the first element.
    #[prost(string, repeated, tag = "3")]
    pub cmdline: Vec<String>,
}

/// `perfetto.protos.ProcessTree.Thread` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Thread {
    /// Thread id (kernel pid).
    #[prost(int32, optional, tag = "1")]
    pub tid: Option<i32>,
    /// Thread name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// Thread group id.
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
}

/// `perfetto.protos.CpuInfo`: one entry per CPU.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CpuInfo {
    /// The CPUs, index = CPU id.
    #[prost(message, repeated, tag = "1")]
    pub cpus: Vec<Cpu>,
}

/// `perfetto.protos.CpuInfo.Cpu` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Cpu {
    /// Free-text processor description.
    #[prost(string, optional, tag = "1")]
    pub processor: Option<String>,
}

/// `perfetto.protos.TrackDescriptor` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    /// Trace-global track id.
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// Track name (for tracks not bound to a thread).
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// Binds the track to a thread, so its events appear under that thread.
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    /// Parent track.
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// Makes the track a counter track (its events carry `counter_value`).
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// `perfetto.protos.CounterDescriptor` (no fields set: a plain counter).
#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {}

/// `TrackEvent.Type.TYPE_COUNTER`.
pub const TRACK_EVENT_TYPE_COUNTER: i32 = 4;

/// `perfetto.protos.ThreadDescriptor` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ThreadDescriptor {
    /// Process id (tgid).
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// Thread id (kernel pid). int64 in current Perfetto (was int32; same varint).
    #[prost(int64, optional, tag = "2")]
    pub tid: Option<i64>,
    /// Thread name.
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}

/// `TrackEvent.Type.TYPE_INSTANT`.
pub const TRACK_EVENT_TYPE_INSTANT: i32 = 3;

/// `perfetto.protos.TrackEvent` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    /// Key/value arguments shown in the UI's details panel.
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// `TrackEvent.Type` as its number (see [`TRACK_EVENT_TYPE_INSTANT`]).
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    /// Track the event belongs to.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// Categories (non-interned).
    #[prost(string, repeated, tag = "22")]
    pub categories: Vec<String>,
    /// Event name (non-interned).
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    /// Flows starting at / passing through this event.
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    /// Flows ending at this event.
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
    /// A counter track's value at this event.
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
}

/// `perfetto.protos.DebugAnnotation` (subset; `name_field` and `value` oneofs
/// flattened, we set exactly one value).
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    /// Unsigned value.
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    /// Signed value.
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    /// String value.
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
    /// Argument name (non-interned).
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
}

impl DebugAnnotation {
    /// An unsigned annotation.
    pub fn uint(name: &str, v: u64) -> DebugAnnotation {
        DebugAnnotation {
            name: Some(name.to_string()),
            uint_value: Some(v),
            ..Default::default()
        }
    }

    /// A string annotation.
    pub fn string(name: &str, v: &str) -> DebugAnnotation {
        DebugAnnotation {
            name: Some(name.to_string()),
            string_value: Some(v.to_string()),
            ..Default::default()
        }
    }
}
