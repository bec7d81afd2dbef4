"""`schedlab.run`: counters, /proc/schedstat and the trace, against `schedlab run`."""

import pathlib

import pandas as pd

import schedlab

ARGS = dict(topo="core2quad", workload="hackbench:groups=2,loops=20", variant="linux-4.9")
CLI = ["run", "-t", "core2quad", "-w", "hackbench:groups=2,loops=20", "-v", "linux-4.9"]


def test_counters_and_records_match_the_cli(cli_json):
    r = schedlab.run(**ARGS, reps=2, seed=5)
    _, records = cli_json(*CLI, "--reps", "2", "--seed", "5", "--json")
    assert r.records == records
    assert list(r.counters.rep) == [0, 1]
    assert list(r.counters.seed) == [x["seed"] for x in records]
    for i, rec in enumerate(records):
        for k, v in rec["counters"].items():
            if isinstance(v, (int, float)) and k in r.counters.columns:
                assert r.counters[k].iloc[i] == v, k
    assert r.metrics.metric.iloc[0] == "time_s"
    assert r.metrics[r.metrics.rep == 0].value.iloc[0] == records[0]["result"]["metrics"][0]["value"]
    assert r.native[0] == records[0]["result"]["native"]
    assert r.trace is None


def test_schedstat_is_the_clis(cli, tmp_path):
    r = schedlab.run(**ARGS)
    f = tmp_path / "schedstat.txt"
    rc, _, err = cli(*CLI, "--schedstat", str(f))
    assert rc == 0, err
    assert r.schedstat_text[0] == f.read_text()
    s = r.schedstat
    assert {"rep", "cpu", "domain", "span", "field", "value"} <= set(s.columns)
    assert set(s.cpu) == set(range(4))
    cpu0 = s[(s.cpu == 0) & s.domain.isna()].set_index("field").value
    line = next(l for l in f.read_text().splitlines() if l.startswith("cpu0 "))
    assert cpu0["yld_count"] == int(line.split()[1])
    assert cpu0["ttwu_count"] == int(line.split()[5])
    assert "ttwu_move_affine" in set(s.field)


def test_trace_matches_the_ftrace_text(cli, tmp_path):
    r = schedlab.run(**ARGS, trace=True)
    t = r.trace
    assert isinstance(t, pd.DataFrame) and len(t) > 100
    assert set(t.event) <= {"sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new"}
    assert {"sched_switch", "sched_waking", "sched_wakeup"} <= set(t.event)
    assert t.ts_ns.is_monotonic_increasing
    f = tmp_path / "hb.txt"
    rc, _, err = cli(*CLI, "--trace", str(f))
    assert rc == 0, err
    lines = [l for l in f.read_text().splitlines()
             if not l.startswith("#") and any(f" {e}: " in l for e in set(t.event))]
    assert len(lines) == len(t)
    # The same events in the same order, field for field.
    sw = t[t.event == "sched_switch"].iloc[0]
    first_switch = next(l for l in lines if " sched_switch: " in l)
    assert (f"prev_comm={sw.prev_comm} prev_pid={sw.prev_pid} prev_prio={sw.prev_prio} "
            f"prev_state={sw.prev_state} ==> next_comm={sw.next_comm} next_pid={sw.next_pid} "
            f"next_prio={sw.next_prio}") in first_switch
    wk = t[t.event == "sched_wakeup"].iloc[-1]
    last_wakeup = [l for l in lines if " sched_wakeup: " in l][-1]
    assert f"comm={wk.comm} pid={wk.pid} prio={wk.prio} target_cpu={wk.target_cpu:03d}" in last_wakeup
    # filtered with pandas: wakeups per target CPU
    per_cpu = t[t.event == "sched_wakeup"].groupby("target_cpu").size()
    assert per_cpu.sum() == (t.event == "sched_wakeup").sum()
    assert pd.isna(sw.pid) and pd.isna(wk.prev_pid)


def test_defaults():
    r = schedlab.run(workload="tbench:clients=2,duration=20ms")
    assert list(r.counters.variant) == ["linux-6.6"]
    assert r.metrics.metric.iloc[0] == "throughput_mb_s"
