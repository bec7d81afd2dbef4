#!/usr/bin/env python3
"""Decode a schedlab .pftrace with Perfetto's official protobuf descriptors.

Manual check only (CI must not depend on pip):

    python3 -m venv /tmp/pf && /tmp/pf/bin/pip install perfetto
    SCHEDLAB_WRITE_PFTRACE=/tmp/tiny.pftrace cargo test -p schedlab-trace --test golden_perfetto
    /tmp/pf/bin/python crates/schedlab-trace/tests/tools/check_perfetto.py /tmp/tiny.pftrace

Prints every packet with the official field names and checks the facts the
golden test asserts on our own decoding of the tiny trace.
"""
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from google.protobuf import text_format


def main(path):
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    for i, p in enumerate(trace.packet):
        print(f"--- packet {i}")
        print(text_format.MessageToString(p), end="")
    # Facts of tests/common/mod.rs tiny_trace().
    kinds = [p.WhichOneof("data") for p in trace.packet]
    assert kinds == ["cpu_info", "process_tree", "track_descriptor", "track_descriptor",
                     "ftrace_events", "ftrace_events", "track_event", "track_event"], kinds
    assert len(trace.packet[0].cpu_info.cpus) == 2
    threads = {(t.tid, t.tgid, t.name) for t in trace.packet[1].process_tree.threads}
    assert threads == {(100, 100, "hackbench"), (101, 100, "worker 1")}, threads
    b0, b1 = trace.packet[4].ftrace_events, trace.packet[5].ftrace_events
    assert (b0.cpu, len(b0.event), b1.cpu, len(b1.event)) == (0, 3, 1, 6)
    sw = b0.event[0].sched_switch
    assert (sw.prev_pid, sw.prev_comm, sw.next_pid, sw.next_comm) == (0, "swapper/0", 100, "hackbench")
    wk = b0.event[1]
    assert wk.WhichOneof("event") == "sched_waking"
    assert (wk.timestamp, wk.pid, wk.sched_waking.pid, wk.sched_waking.target_cpu) == (5123000200000, 100, 101, 1)
    assert b0.event[2].sched_switch.prev_state == 1
    mig = b1.event[1]
    assert mig.WhichOneof("event") == "sched_migrate_task"
    assert (mig.sched_migrate_task.pid, mig.sched_migrate_task.orig_cpu, mig.sched_migrate_task.dest_cpu) == (100, 0, 1)
    assert b1.event[2].WhichOneof("event") == "sched_process_fork"
    assert b1.event[2].sched_process_fork.child_pid == 102
    assert b1.event[3].WhichOneof("event") == "sched_wakeup_new"
    assert b1.event[4].sched_process_exit.tgid == 100
    assert b1.event[5].sched_switch.prev_state == 16
    td = trace.packet[3].track_descriptor
    assert (td.thread.pid, td.thread.tid, td.thread.thread_name) == (100, 101, "worker 1")
    place, run = trace.packet[6], trace.packet[7]
    assert place.trusted_packet_sequence_id == 2 and place.sequence_flags == 2
    assert trace.packet[2].sequence_flags == 1
    assert place.track_event.type == pb.TrackEvent.TYPE_INSTANT
    assert list(place.track_event.flow_ids) == [1]
    assert list(run.track_event.terminating_flow_ids) == [1]
    ann = {a.name: (a.string_value if a.HasField("string_value") else a.uint_value)
           for a in place.track_event.debug_annotations}
    assert ann == {"kind": "placement", "cpu": 0, "waker_pid": 100, "wakee_pid": 101, "prev_cpu": 1,
                   "target_cpu": 1, "examined": 3, "path": "affine:wake_affine_idle sis:idle_core"}, ann
    assert place.track_event.track_uuid == td.uuid - 1  # waker 100's track
    assert run.track_event.track_uuid == td.uuid  # wakee 101's track
    print("OK: decoded with official Perfetto descriptors; all checks passed")


if __name__ == "__main__":
    main(sys.argv[1])
