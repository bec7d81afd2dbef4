"""`schedlab.compare` and `schedlab.explain`: the DataFrames' shape, and the numbers against
the CLI's `--json` for the same arguments, compared exactly (floats to the last digit)."""

import math

import pandas as pd
import pytest

import schedlab

ARGS = dict(
    topo="core2quad",
    workload="tbench:duration=50ms",
    variants=["linux-6.6", "linux-6.6,NO_WAKE_AFFINE", "linux-4.9"],
    sweep={"clients": [1, 8]},
    reps=3,
    seed=7,
)
CLI_ARGS = [
    "compare", "-t", "core2quad", "-w", "tbench:duration=50ms",
    "-v", "linux-6.6", "-v", "linux-6.6,NO_WAKE_AFFINE", "-v", "linux-4.9",
    "--sweep", "clients=1,8", "--reps", "3", "--seed", "7", "--json",
]


@pytest.fixture(scope="module")
def comparison():
    return schedlab.compare(**ARGS)


def same(a, b):
    """Exactly equal floats (both missing counts as equal)."""
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return a == b and type(a) is type(b) or (float(a) == float(b) and not isinstance(a, bool))


def test_shapes(comparison):
    c = comparison
    assert isinstance(c.runs, pd.DataFrame) and isinstance(c.verdicts, pd.DataFrame)
    # one row per variant, point and repetition
    assert len(c.runs) == 3 * 2 * 3
    for col in ["clients", "variant", "rep", "seed", "metric", "unit", "direction", "value",
                "ctx_switches"]:
        assert col in c.runs.columns, col
    assert set(c.runs.clients) == {1, 8}
    assert set(c.runs.metric) == {"throughput_mb_s"} and set(c.runs.direction) == {"higher"}
    # one verdict per point and non-baseline variant
    assert len(c.verdicts) == 2 * 2
    for col in ["point", "baseline", "variant", "ratio", "ci_low", "ci_high", "p_value", "verdict"]:
        assert col in c.verdicts.columns, col
    assert set(c.verdicts.baseline) == {"linux-6.6"}
    assert "linux-6.6" not in set(c.verdicts.variant)
    assert len(c.stats) == 2 * 3
    assert "throughput_mb_s" in repr(c)


def test_same_numbers_as_the_cli(comparison, cli_json):
    text, cli = cli_json(*CLI_ARGS)
    # the very text `--json` prints
    assert comparison.json == text
    c = comparison
    for p in cli["points"]:
        clients = int(p["params"]["clients"])
        for v in p["variants"]:
            runs = c.runs[(c.runs.clients == clients) & (c.runs.variant == v["variant"])]
            assert list(runs.sort_values("rep").value) == v["samples"]
            row = c.stats[(c.stats.clients == clients) & (c.stats.variant == v["variant"])]
            assert len(row) == 1
            row = row.iloc[0]
            for k in ["mean", "stderr", "ratio", "ci_low", "ci_high", "p_value"]:
                assert same(v[k], float(row[k])), (k, v[k], row[k])
            assert row["verdict"] == v["verdict"]["text"]
            assert bool(row["significant"]) == v["significant"]
            # per-run counter means are the CLI's per-run counters averaged
            assert v["counters"]["ctx_switches"] == pytest.approx(runs.ctx_switches.mean(), rel=1e-12)


def test_defaults_are_the_clis(cli_json):
    # The README's main job, reduced: the default machine, variants and sweep.
    c = schedlab.compare(workload="tbench:duration=30ms", reps=2)
    text, _ = cli_json("compare", "-w", "tbench:duration=30ms", "--reps", "2", "--json")
    assert c.json == text
    assert list(c.verdicts.variant.unique()) == ["linux-6.6,NO_WAKE_AFFINE"]


def test_sweep_forms_and_min_effect(comparison, cli_json):
    a = schedlab.compare(**{**ARGS, "sweep": ["clients=1,8"]})
    assert a.json == comparison.json
    b = schedlab.compare(**{**ARGS, "min_effect": 0})
    text, _ = cli_json(*CLI_ARGS, "--min-effect", "0")
    assert b.json == text


def test_one_repetition_has_no_interval():
    c = schedlab.compare(workload="tbench:clients=2,duration=30ms", reps=1)
    assert c.verdicts.ci_low.isna().all()
    assert (c.verdicts.verdict == "n=1: no interval").all()


def test_explain(cli_json):
    e = schedlab.explain(topo="core2quad", workload="hackbench:groups=2,loops=20",
                         variants=["linux-3.10", "linux-3.10,WAKEUP_BUDDY"], reps=2)
    text, cli = cli_json("explain", "-t", "core2quad", "-w", "hackbench:groups=2,loops=20",
                         "-v", "linux-3.10", "-v", "linux-3.10,WAKEUP_BUDDY", "--reps", "2",
                         "--json")
    # with --json the CLI prints only the explanation object
    assert e.data == cli
    assert {"point", "variant", "key", "label", "cpu_s", "share"} <= set(e.budgets.columns)
    assert set(e.budgets.variant) == {"linux-3.10", "linux-3.10,WAKEUP_BUDDY"}
    assert {"rank", "name", "class", "base", "value", "delta"} <= set(e.counters.columns)
    assert e.counters["rank"].iloc[0] == 1
    assert len(e.summary) == 1 and e.summary.summary.iloc[0]
    assert e.sensitivity is None
    # a budget adds up to CPUs x elapsed
    for (_, _), g in e.budgets.groupby(["point", "variant"]):
        assert g.cpu_s.sum() == pytest.approx(g.total_cpu_s.iloc[0], rel=1e-6)


def test_explain_sensitivity(cli_json):
    args = dict(topo="core2quad", workload="hackbench:groups=2,loops=10",
                variants=["linux-3.10", "linux-3.10,WAKEUP_BUDDY"], reps=2)
    e = schedlab.explain(**args, sensitivity=True)
    _, cli = cli_json("explain", "-t", "core2quad", "-w", "hackbench:groups=2,loops=10",
                      "-v", "linux-3.10", "-v", "linux-3.10,WAKEUP_BUDDY", "--reps", "2",
                      "--sensitivity", "--json")
    assert e.data == cli
    s = e.sensitivity
    assert s.attrs["total"] == len(cli["sensitivity"]["rows"]) == s.groupby(["cost_class", "factor"]).ngroups
    assert set(s.factor) == {0.5, 2.0}
    assert s.attrs["held"] == s.groupby(["cost_class", "factor"]).rerun_holds.first().sum()


def test_sensitivity_needs_explain():
    with pytest.raises(TypeError):
        schedlab.compare(workload="tbench:duration=30ms", sensitivity=True)
