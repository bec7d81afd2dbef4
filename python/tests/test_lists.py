"""The listings and `validate`, against the CLI's."""

import json

import pandas as pd

import schedlab


def test_topologies(cli):
    t = schedlab.topologies()
    assert {"name", "cpus", "description", "source"} <= set(t.columns)
    _, out, _ = cli("topo", "list")
    for name, cpus in zip(t.name, t.cpus):
        assert name in out
    assert t.set_index("name").cpus["desktop-4c8t"] == 8


def test_topology(cli_json):
    _, cli = cli_json("topo", "show", "2n4l4c2t", "--json")
    assert schedlab.topology("2n4l4c2t") == cli


def test_policies(cli):
    p = schedlab.policies()
    assert {"name", "kind", "era", "models"} <= set(p.columns)
    assert "linux-6.6" in set(p.name) and "idlest" in set(p.name)
    assert set(p.kind) == {"era", "reference"}
    s = schedlab.policies("linux-4.6")
    assert {"name", "default", "meaning", "provenance", "scope"} <= set(s.columns)
    _, out, _ = cli("policies", "linux-4.6")
    for n in s.name:
        assert n.rstrip("=") in out, n


def test_workloads(cli_json):
    w = schedlab.workloads()
    _, cli = cli_json("workloads", "--json")
    assert w.attrs["workloads"] == cli
    assert len(w) == sum(len(x["params"]) for x in cli)
    assert set(w.columns) == {"workload", "mirrors", "param", "default", "unit", "help"}
    one = schedlab.workloads("tbench")
    _, cli1 = cli_json("workloads", "tbench", "--json")
    assert one.attrs["workloads"] == [cli1]
    assert "clients" in set(one.param)


def test_validate(cli_json):
    v = schedlab.validate("Q1", quick=True)
    _, cli = cli_json("validate", "Q1", "--quick", "--json", "--no-fail")
    assert isinstance(v, pd.DataFrame)
    assert v.attrs["summary"] == cli["summary"]
    assert len(v) == len(cli["cases"][0]["checks"])
    for (_, row), check in zip(v.iterrows(), cli["cases"][0]["checks"]):
        assert row["check"] == check["name"] and bool(row["pass"]) == check["pass"]
        assert row["simulated"] == check["simulated"]
        assert row["published"] == check["published"]
    assert list(v.case.unique()) == ["Q1"]
