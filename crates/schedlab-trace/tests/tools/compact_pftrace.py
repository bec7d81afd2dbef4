#!/usr/bin/env python3
"""Write a `perf script` sched trace as the Perfetto trace `traced` records with
`ftrace_config { compact_sched { enabled: true } }`, using Perfetto's own protobuf
descriptors (the `perfetto` PyPI package), not schedlab's encoder.

No `perfetto`/`traced` binary runs on the development machine, so the compact fixture
`crates/schedlab-cli/tests/fixtures/replay/perf-pipe.pftrace` is this conversion of the
real capture `perf-pipe.txt.gz` beside it. Regenerate it (manual step, CI needs no pip):

    python3 -m venv /tmp/pf && /tmp/pf/bin/pip install perfetto
    /tmp/pf/bin/python crates/schedlab-trace/tests/tools/compact_pftrace.py \
        crates/schedlab-cli/tests/fixtures/replay/perf-pipe.txt.gz \
        crates/schedlab-cli/tests/fixtures/replay/perf-pipe.pftrace

Layout, after what `traced_probes` writes (src/traced/probes/ftrace/ in Perfetto):

* packet 0: the `TraceConfig` (ftrace data source, the sched events, compact_sched on),
  a packet schedlab does not read, so the decoder's skipping of packets is exercised;
* an `FtraceStats` packet, phase START_OF_TRACE, then one at END_OF_TRACE (overrun 0:
  the perf recording lost nothing);
* per 10 ms "drain period", one `FtraceEventBundle` per CPU with events in it: its
  sched_switch and sched_waking events in `compact_sched` (delta-encoded timestamps,
  a per-bundle intern table of comms, prev task not stored), its other events
  (sched_process_fork, sched_wakeup_new, sched_migrate_task) as ordinary FtraceEvents
  with the pid of the task that ran.

`perf script` prints microseconds; the k-th event of the file within one microsecond is
given k extra nanoseconds, so the nanosecond order is the file's order (a compact bundle
keeps switches and wakings in separate arrays, so ties could not keep it otherwise).
sched_stat_runtime is left out (not a sched event schedlab reads). No ProcessTree: the
capture has no thread groups to put in one.
"""
import gzip
import re
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

LINE = re.compile(r"^\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+sched:(\w+):\s+(.*)$")
SWITCH = re.compile(
    r"prev_comm=(.*) prev_pid=(\d+) prev_prio=(\d+) prev_state=(\S+) ==> "
    r"next_comm=(.*) next_pid=(\d+) next_prio=(\d+)$")
WAKE = re.compile(r"comm=(.*) pid=(\d+) prio=(\d+) target_cpu=(\d+)$")
MIGRATE = re.compile(r"comm=(.*) pid=(\d+) prio=(\d+) orig_cpu=(\d+) dest_cpu=(\d+)$")
FORK = re.compile(r"comm=(.*) pid=(\d+) child_comm=(.*) child_pid=(\d+)$")
# Kernel TASK_REPORT bits (4.14+) of the state letters perf prints; `+` is TASK_REPORT_MAX.
STATE = {"R": 0, "S": 1, "D": 2, "T": 4, "t": 8, "X": 16, "Z": 32, "P": 64, "I": 128}
DRAIN_NS = 10_000_000
SEQ = 1


def state_bits(s):
    bits = 0x100 if s.endswith("+") else 0
    for part in s.rstrip("+").split("|"):
        bits |= STATE[part]
    return bits


def read(path):
    events = []
    seen_us = {}
    with gzip.open(path, "rt") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            _, pid, cpu, sec, frac, name, rest = m.groups()
            us = int(sec) * 1_000_000 + int(frac.ljust(6, "0")[:6])
            k = seen_us.get(us, 0)
            seen_us[us] = k + 1
            ts = us * 1000 + k
            events.append((ts, int(cpu), int(pid), name, rest))
    return events


def packet(**kw):
    p = pb.TracePacket(trusted_packet_sequence_id=SEQ, **kw)
    return p


def stats(phase, cpus):
    s = pb.FtraceStats(phase=phase)
    for c in cpus:
        s.cpu_stats.add(cpu=c, entries=0, overrun=0, commit_overrun=0)
    return s


def bundle(cpu, evs):
    b = pb.FtraceEventBundle(cpu=cpu)
    cs = b.compact_sched
    intern = {}

    def idx(comm):
        if comm not in intern:
            intern[comm] = len(intern)
            cs.intern_table.append(comm)
        return intern[comm]

    last_sw = last_wk = 0
    for ts, _, pid, name, rest in evs:
        if name == "sched_switch":
            m = SWITCH.match(rest)
            cs.switch_timestamp.append(ts - last_sw)
            last_sw = ts
            cs.switch_prev_state.append(state_bits(m.group(4)))
            cs.switch_next_pid.append(int(m.group(6)))
            cs.switch_next_prio.append(int(m.group(7)))
            cs.switch_next_comm_index.append(idx(m.group(5)))
        elif name == "sched_waking":
            m = WAKE.match(rest)
            cs.waking_timestamp.append(ts - last_wk)
            last_wk = ts
            cs.waking_pid.append(int(m.group(2)))
            cs.waking_target_cpu.append(int(m.group(4)))
            cs.waking_prio.append(int(m.group(3)))
            cs.waking_comm_index.append(idx(m.group(1)))
            cs.waking_common_flags.append(1)
        elif name in ("sched_wakeup_new", "sched_migrate_task", "sched_process_fork"):
            e = b.event.add(timestamp=ts, pid=pid)
            if name == "sched_wakeup_new":
                m = WAKE.match(rest)
                e.sched_wakeup_new.comm = m.group(1)
                e.sched_wakeup_new.pid = int(m.group(2))
                e.sched_wakeup_new.prio = int(m.group(3))
                e.sched_wakeup_new.target_cpu = int(m.group(4))
            elif name == "sched_migrate_task":
                m = MIGRATE.match(rest)
                e.sched_migrate_task.comm = m.group(1)
                e.sched_migrate_task.pid = int(m.group(2))
                e.sched_migrate_task.prio = int(m.group(3))
                e.sched_migrate_task.orig_cpu = int(m.group(4))
                e.sched_migrate_task.dest_cpu = int(m.group(5))
            else:
                m = FORK.match(rest)
                e.sched_process_fork.parent_comm = m.group(1)
                e.sched_process_fork.parent_pid = int(m.group(2))
                e.sched_process_fork.child_comm = m.group(3)
                e.sched_process_fork.child_pid = int(m.group(4))
    return b


def main(src, dst):
    events = [e for e in read(src) if e[3] != "sched_stat_runtime"]
    cpus = sorted({e[1] for e in events})
    trace = pb.Trace()
    cfg = pb.TraceConfig()
    cfg.buffers.add(size_kb=65536)
    ds = cfg.data_sources.add().config
    ds.name = "linux.ftrace"
    ds.ftrace_config.ftrace_events.extend(
        ["sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup_new",
         "sched/sched_migrate_task", "sched/sched_process_fork"])
    ds.ftrace_config.compact_sched.enabled = True
    trace.packet.append(packet(
        trace_config=cfg, first_packet_on_sequence=True,
        sequence_flags=pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED))
    trace.packet.append(packet(timestamp=events[0][0], ftrace_stats=stats(
        pb.FtraceStats.START_OF_TRACE, cpus)))
    t0 = events[0][0]
    periods = {}
    for e in events:
        periods.setdefault((e[0] - t0) // DRAIN_NS, {}).setdefault(e[1], []).append(e)
    for period in sorted(periods):
        for cpu in sorted(periods[period]):
            trace.packet.append(packet(ftrace_events=bundle(cpu, periods[period][cpu])))
    trace.packet.append(packet(timestamp=events[-1][0], ftrace_stats=stats(
        pb.FtraceStats.END_OF_TRACE, cpus)))
    with open(dst, "wb") as f:
        f.write(trace.SerializeToString())
    n_sw = sum(e[3] == "sched_switch" for e in events)
    n_wk = sum(e[3] == "sched_waking" for e in events)
    print(f"{dst}: {len(trace.packet)} packets, {n_sw} switches, {n_wk} wakings, "
          f"{len(events) - n_sw - n_wk} other events")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
