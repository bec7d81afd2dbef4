"""schedlab from Python: the simulator's commands as functions returning pandas DataFrames.

The functions mirror the ``schedlab`` command line and call the same library code, so the same
arguments give the same numbers (to the last digit) and the same bad input the same message:

* :func:`compare` -- ``schedlab compare``: a :class:`Comparison` with ``.runs`` (long form, one
  row per variant, sweep point and repetition) and ``.verdicts`` (the verdict table).
* :func:`run` -- ``schedlab run``: a :class:`Run` with the counters, ``/proc/schedstat``
  and, with ``trace=True``, the trace as a DataFrame.
* :func:`explain` -- ``schedlab explain``: an :class:`Explanation` with time budgets and
  counters ranked by what accounts for the difference.
* :func:`validate` -- ``schedlab validate``: the table of checks.
* :func:`topologies`, :func:`topology`, :func:`policies`, :func:`workloads` -- what exists.

Errors raise :class:`SchedlabError` carrying the CLI's message. Long calls release the GIL
and stop on Ctrl-C (``KeyboardInterrupt``) once the runs in progress finish.
"""

from __future__ import annotations

import json as _json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _schedlab
from ._schedlab import SchedlabError

__all__ = [
    "Comparison",
    "Explanation",
    "Run",
    "SchedlabError",
    "compare",
    "explain",
    "policies",
    "run",
    "topologies",
    "topology",
    "validate",
    "workloads",
]

#: A sweep: ``{"clients": [1, 4, 8]}`` or CLI-style strings ``["clients=1,4,8"]``.
Sweep = Union[Mapping[str, Union[Sequence[Any], Any]], Sequence[str], str, None]


def _sweep_args(sweep: Sweep) -> List[str]:
    """The ``--sweep KEY=V1,V2`` strings of a sweep given as a mapping or as strings."""
    if sweep is None:
        return []
    if isinstance(sweep, str):
        return [sweep]
    if isinstance(sweep, Mapping):
        out = []
        for k, vs in sweep.items():
            if isinstance(vs, (str, bytes)) or not isinstance(vs, Sequence):
                vs = [vs]
            out.append(f"{k}=" + ",".join(str(v) for v in vs))
        return out
    return [str(s) for s in sweep]


def _variants_arg(variants: Union[str, Sequence[str], None]) -> List[str]:
    if variants is None:
        return []
    if isinstance(variants, str):
        return [variants]
    return [str(v) for v in variants]


#: clap's value names of the count-like flags, for its messages.
_VALUE_NAMES = {"reps": "REPS", "seed": "SEED", "max_reps": "MAX_REPS", "smt": "N",
                "llc_per_node": "N"}


def _whole(**kw: Optional[int]) -> None:
    """The CLI's check of a count or seed (``checks::whole``): a negative one is refused with
    the message ``schedlab`` gives, before it reaches Rust as an unsigned number."""
    for k, v in kw.items():
        if v is not None and not isinstance(v, bool) and isinstance(v, int) and v < 0:
            flag = "--" + k.replace("_", "-")
            raise SchedlabError(
                f"invalid value '{v}' for '{flag} <{_VALUE_NAMES[k]}>': "
                "a whole number of 0 or more, not a negative one"
            )


def _numeric(df: pd.DataFrame, columns: Sequence[str]) -> None:
    """Sweep values arrive as text (as the CLI keeps them); make numbers of those that are."""
    for c in columns:
        try:
            df[c] = pd.to_numeric(df[c])
        except (ValueError, TypeError):
            pass


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare`.

    Attributes:
        runs: one row per (sweep point, variant, repetition): the sweep keys, ``variant``,
            ``rep``, ``seed``, ``metric``, ``unit``, ``direction`` (``higher`` or ``lower`` is
            better), ``value`` (the metric), then every engine counter of the run.
        verdicts: the CLI's verdict table, one row per (sweep point, non-baseline variant):
            the sweep keys, ``point`` (its label), ``baseline``, ``variant``, ``mean``,
            ``stderr``, ``ratio``, ``ci_low``, ``ci_high`` (95 %), ``p_value``,
            ``significant``, ``direction`` (``better``/``worse``/``same``/...), ``gain_pct``
            and ``verdict`` (the words the table prints).
        stats: as ``verdicts`` with the baseline rows too.
        report: the ``schedlab.compare/1`` object (``docs/compare-schema.md``).
        json: the text ``schedlab compare --json`` prints for the same arguments.
    """

    runs: pd.DataFrame
    verdicts: pd.DataFrame
    stats: pd.DataFrame
    report: Dict[str, Any]
    json: str = field(repr=False)

    @property
    def metric(self) -> Dict[str, str]:
        """The headline metric: ``{"name", "unit", "better"}``."""
        return self.report["metric"]

    def __repr__(self) -> str:
        m = self.metric
        return (
            f"Comparison({self.report['workload']} on {self.report['topology']}, "
            f"{m['name']} [{m['unit']}], {len(self.runs)} runs, "
            f"{len(self.verdicts)} verdicts)"
        )


def _comparison(compare_json: str, runs_json: str) -> Comparison:
    report = _json.loads(compare_json)
    metric = report["metric"]
    keys: List[str] = []
    for p in report["points"]:
        for k in p["params"]:
            if k not in keys:
                keys.append(k)
    rows = []
    for r in _json.loads(runs_json):
        row: Dict[str, Any] = dict(r["params"] or {})
        row.update(
            variant=r["variant"],
            rep=r["rep"],
            seed=r["seed"],
            metric=metric["name"],
            unit=metric["unit"],
            direction=metric["better"],
            value=r["value"],
        )
        row.update(r["counters"])
        rows.append(row)
    runs = pd.DataFrame(rows)
    stats_rows = []
    for p in report["points"]:
        label = " ".join(f"{k}={v}" for k, v in p["params"].items()) or "-"
        base = p["variants"][0]["variant"]
        for v in p["variants"]:
            verdict = v.get("verdict") or {}
            row = dict(p["params"])
            row.update(
                point=label,
                baseline=base,
                variant=v["variant"],
                mean=v["mean"],
                stderr=v["stderr"],
                ratio=v["ratio"],
                ci_low=v["ci_low"],
                ci_high=v["ci_high"],
                p_value=v["p_value"],
                significant=v["significant"],
                direction=verdict.get("direction"),
                gain_pct=verdict.get("gain_pct"),
                verdict=verdict.get("text"),
            )
            stats_rows.append(row)
    stats = pd.DataFrame(stats_rows)
    for df in (runs, stats):
        _numeric(df, [k for k in keys if k in df.columns])
    # JSON has no NaN: a missing interval (one repetition) is null, here NaN.
    for c in ("ci_low", "ci_high", "p_value", "gain_pct"):
        if c in stats.columns:
            stats[c] = stats[c].astype(float)
    verdicts = stats[stats["variant"] != stats["baseline"]].reset_index(drop=True)
    return Comparison(runs=runs, verdicts=verdicts, stats=stats, report=report, json=compare_json)


def compare(
    topo: Optional[str] = None,
    workload: Optional[str] = None,
    variants: Union[str, Sequence[str], None] = None,
    sweep: Sweep = None,
    reps: Optional[int] = None,
    seed: Optional[int] = None,
    *,
    file: Optional[str] = None,
    profile: Optional[str] = None,
    smt: Optional[int] = None,
    llc_per_node: Optional[int] = None,
    until_ci: Optional[float] = None,
    max_reps: Optional[int] = None,
    min_effect: Optional[float] = None,
    jobs: Optional[int] = None,
    force: bool = False,
) -> Comparison:
    """Compare policy variants over a sweep with repetitions: ``schedlab compare``.

    Every argument is the CLI flag of the same name, with the same default: ``topo`` is
    ``-t`` (``desktop-4c8t``), ``workload`` is ``-w``, ``variants`` the ``-v`` list (the first
    is the baseline; default ``linux-6.6`` and ``linux-6.6,NO_WAKE_AFFINE``), ``sweep`` a
    mapping ``{"clients": [1, 4, 8]}`` or ``--sweep`` strings, ``reps`` (3) and ``seed`` (1).
    ``file`` is an experiment TOML (the CLI's positional argument); the keyword-only options
    are ``--profile``, ``--smt``, ``--llc-per-node``, ``--until-ci``, ``--max-reps``,
    ``--min-effect``, ``--jobs`` and ``--force``. With no workload and no sweep the CLI's
    default sweep ``clients=1,4,8,16`` of tbench is run.

    Returns a :class:`Comparison` (``.runs``, ``.verdicts``). Raises :class:`SchedlabError`
    on bad input or a failed run, ``KeyboardInterrupt`` on Ctrl-C.

    >>> c = compare(workload="tbench:duration=200ms", sweep={"clients": [1, 8]}, reps=3)
    >>> c.verdicts[["point", "variant", "ratio", "ci_low", "ci_high", "verdict"]]
    """
    _whole(reps=reps, seed=seed, max_reps=max_reps, smt=smt, llc_per_node=llc_per_node)
    out = _schedlab.compare(
        topo=topo,
        workload=workload,
        variants=_variants_arg(variants),
        sweep=_sweep_args(sweep),
        reps=reps,
        seed=seed,
        file=file,
        profile=profile,
        smt=smt,
        llc_per_node=llc_per_node,
        until_ci=until_ci,
        max_reps=max_reps,
        min_effect=min_effect,
        jobs=jobs,
        force=force,
    )
    return _comparison(out[0], out[1])


@dataclass(frozen=True)
class Explanation:
    """The result of :func:`explain`.

    Attributes:
        comparison: the :class:`Comparison` explained.
        budgets: one row per (point, variant, budget line): ``point``, ``variant``, ``key``,
            ``label``, ``cpu_s`` and ``share`` of CPUs x elapsed; the lines of a variant add
            up to its ``total_cpu_s``.
        counters: one row per (point, variant, counter), ranked within each (point, variant)
            by how much of the difference to the baseline its cost class accounts for
            (``rank`` 1 first): ``name`` (the kernel's), ``class``, ``base``, ``value``,
            ``delta``, ``rel``, ``share``.
        summary: one row per (point, variant): ``verdict``, ``direction``, ``ratio`` and the
            sentence naming the top three causes.
        sensitivity: with ``sensitivity=True``, one row per (rerun, verdict): the
            ``cost_class`` scaled, its ``label``, the ``factor`` (0.5 or 2), the ``case`` (point
            and variant), the ``ratio`` and ``verdict`` under it, whether it ``holds``
            (keeps its direction) and whether every verdict of the rerun held
            (``rerun_holds``); ``.attrs`` has ``held`` and ``total``. Else ``None``.
        data: the ``schedlab explain --json`` object.
    """

    comparison: Comparison
    budgets: pd.DataFrame
    counters: pd.DataFrame
    summary: pd.DataFrame
    sensitivity: Optional[pd.DataFrame]
    data: Dict[str, Any] = field(repr=False)


def explain(
    topo: Optional[str] = None,
    workload: Optional[str] = None,
    variants: Union[str, Sequence[str], None] = None,
    sweep: Sweep = None,
    reps: Optional[int] = None,
    seed: Optional[int] = None,
    *,
    sensitivity: bool = False,
    file: Optional[str] = None,
    profile: Optional[str] = None,
    smt: Optional[int] = None,
    llc_per_node: Optional[int] = None,
    min_effect: Optional[float] = None,
    jobs: Optional[int] = None,
    force: bool = False,
) -> Explanation:
    """Why variants differ: ``schedlab explain`` (arguments as :func:`compare`).

    Each variant's time budget (task work, each kernel cost class, the kinds of idle) and
    every counter side by side with the baseline's, ranked by how much of the difference it
    accounts for; ``sensitivity=True`` reruns the comparison with each cost class scaled by
    0.5 and 2 (``--sensitivity``).

    >>> e = explain(workload="hackbench:groups=4,loops=20",
    ...             variants=["linux-3.10", "linux-3.10,WAKEUP_BUDDY"], reps=2)
    >>> e.counters.head(3)
    """
    _whole(reps=reps, seed=seed, smt=smt, llc_per_node=llc_per_node)
    out = _schedlab.compare(
        topo=topo,
        workload=workload,
        variants=_variants_arg(variants),
        sweep=_sweep_args(sweep),
        reps=reps,
        seed=seed,
        file=file,
        profile=profile,
        smt=smt,
        llc_per_node=llc_per_node,
        min_effect=min_effect,
        jobs=jobs,
        force=force,
        explain=True,
        sensitivity=sensitivity,
    )
    comparison = _comparison(out[0], out[1])
    data = _json.loads(out[2])
    budgets, counters, summary = [], [], []
    for p in data["explain"]["points"]:
        for b in p["budgets"]:
            for line in b["lines"]:
                budgets.append(
                    dict(point=p["label"], variant=b["variant"], total_cpu_s=b["total_cpu_s"], **line)
                )
        for v in p["versus"]:
            summary.append(
                dict(
                    point=p["label"],
                    variant=v["variant"],
                    verdict=v["verdict"],
                    direction=v["direction"],
                    ratio=v["ratio"],
                    summary=v["summary"],
                )
            )
            for rank, c in enumerate(v["counters"], 1):
                counters.append(dict(point=p["label"], variant=v["variant"], rank=rank, **c))
    sens = data.get("sensitivity")
    sens_df = None
    if sens is not None:
        sens_df = pd.DataFrame(
            [
                dict(cost_class=r["class"], label=r["label"], factor=r["factor"], case=case,
                     ratio=ratio, verdict=verdict, holds=holds, rerun_holds=r["holds"])
                for r in sens["rows"]
                for case, ratio, verdict, holds in r["verdicts"]
            ],
            columns=["cost_class", "label", "factor", "case", "ratio", "verdict", "holds",
                     "rerun_holds"],
        )
        sens_df.attrs.update(held=sens["held"], total=sens["total"])
    return Explanation(
        comparison=comparison,
        budgets=pd.DataFrame(budgets),
        counters=pd.DataFrame(counters, columns=[
            "point", "variant", "rank", "name", "class", "base", "value", "delta", "rel", "share",
        ]),
        summary=pd.DataFrame(summary),
        sensitivity=sens_df,
        data=data,
    )


#: The kernel's /proc/schedstat v15 fields (Documentation/scheduler/sched-stats.rst).
_CPU_FIELDS = [
    "yld_count", "legacy_exp_empty", "sched_count", "sched_goidle",
    "ttwu_count", "ttwu_local", "run_time_ns", "run_delay_ns", "timeslices",
]
_LB_FIELDS = [
    "lb_count", "lb_balanced", "lb_failed", "lb_imbalance", "lb_gained",
    "lb_hot_gained", "lb_nobusyq", "lb_nobusyg",
]
_DOMAIN_FIELDS = (
    [f"{f}.{t}" for t in ("idle", "busy", "newidle") for f in _LB_FIELDS]
    + ["alb_count", "alb_failed", "alb_pushed", "sbe_count", "sbe_balanced", "sbe_pushed",
       "sbf_count", "sbf_balanced", "sbf_pushed",
       "ttwu_wake_remote", "ttwu_move_affine", "ttwu_move_balance"]
)


def _schedstat_rows(rep: int, text: str) -> List[Dict[str, Any]]:
    """Long-form rows of one /proc/schedstat (version 15) text."""
    rows: List[Dict[str, Any]] = []
    cpu = None
    for line in text.splitlines():
        f = line.split()
        if not f:
            continue
        if f[0].startswith("cpu"):
            cpu = int(f[0][3:])
            rows += [dict(rep=rep, cpu=cpu, domain=None, span=None, field=k, value=int(v))
                     for k, v in zip(_CPU_FIELDS, f[1:])]
        elif f[0].startswith("domain"):
            dom = int(f[0][6:])
            rows += [dict(rep=rep, cpu=cpu, domain=dom, span=f[1], field=k, value=int(v))
                     for k, v in zip(_DOMAIN_FIELDS, f[2:])]
    return rows


@dataclass(frozen=True)
class Run:
    """The result of :func:`run`.

    Attributes:
        counters: one row per repetition: ``rep``, ``seed``, ``workload``, ``variant``, then
            every engine counter (``ctx_switches``, ``wakeups_affine``, ...).
        metrics: one row per (repetition, workload metric): ``rep``, ``metric``, ``value``,
            ``unit``, ``better``; the headline metric first.
        schedstat: the kernel's ``/proc/schedstat`` counters (version 15) in long form:
            ``rep``, ``cpu``, ``domain`` (``None`` on a CPU's own line), ``span`` (the domain's
            CPU mask), ``field`` and ``value``.
        trace: with ``trace=True``, the first repetition's scheduler events, one row per
            ``sched_switch``, ``sched_waking``, ``sched_wakeup`` and ``sched_wakeup_new``:
            ``ts_ns``, ``cpu``, ``event`` and ftrace's fields (``prev_comm``, ``prev_pid``,
            ``prev_prio``, ``prev_state``, ``next_comm``, ``next_pid``, ``next_prio``;
            ``comm``, ``pid``, ``prio``, ``target_cpu``), missing ones ``<NA>``.
        native: the benchmark's own output of each repetition, as the real tool prints it.
        counters_text: the counters as ``schedlab run`` prints them, per repetition.
        schedstat_text: the ``/proc/schedstat`` text (``run --schedstat FILE``) per repetition.
        records: the ``schedlab run --json`` records.
    """

    counters: pd.DataFrame
    metrics: pd.DataFrame
    schedstat: pd.DataFrame
    trace: Optional[pd.DataFrame]
    native: List[str] = field(repr=False)
    counters_text: List[str] = field(repr=False)
    schedstat_text: List[str] = field(repr=False)
    records: List[Dict[str, Any]] = field(repr=False)


_TRACE_INT = ("prev_pid", "prev_prio", "next_pid", "next_prio", "pid", "prio", "target_cpu")


def run(
    topo: Optional[str] = None,
    workload: Optional[str] = None,
    variant: Optional[str] = None,
    reps: Optional[int] = None,
    seed: Optional[int] = None,
    *,
    trace: bool = False,
    profile: Optional[str] = None,
    smt: Optional[int] = None,
    llc_per_node: Optional[int] = None,
) -> Run:
    """One workload under one policy variant: ``schedlab run``.

    Arguments are the CLI's flags with its defaults: ``topo`` (``desktop-4c8t``),
    ``workload`` (``tbench:clients=4,duration=200ms``), ``variant`` (``linux-6.6``), ``reps``
    (1) and ``seed`` (1). ``trace=True`` records the first repetition's trace (what
    ``--trace FILE.txt`` writes) and returns it as a DataFrame.

    >>> r = run(workload="hackbench:groups=2,loops=20", variant="linux-4.9", trace=True)
    >>> r.trace[r.trace.event == "sched_wakeup"].groupby("target_cpu").size()
    """
    _whole(reps=reps, seed=seed, smt=smt, llc_per_node=llc_per_node)
    out = _schedlab.run(
        topo=topo,
        workload=workload,
        variant=variant,
        reps=reps,
        seed=seed,
        profile=profile,
        smt=smt,
        llc_per_node=llc_per_node,
        trace=trace,
    )
    records = [_json.loads(o["record"]) for o in out]
    counters = pd.DataFrame(
        [
            dict(rep=r["key"]["rep"], seed=r["seed"], workload=r["workload"],
                 variant=r["variant"], **o["counters"])
            for r, o in zip(records, out)
        ]
    )
    metrics = pd.DataFrame(
        [
            dict(rep=r["key"]["rep"], metric=m["name"], value=m["value"],
                 unit=m["unit"], better=m["better"])
            for r in records
            for m in r["result"]["metrics"]
        ]
    )
    schedstat = pd.DataFrame(
        [row for r, o in zip(records, out) for row in _schedstat_rows(r["key"]["rep"], o["schedstat"])]
    )
    trace_df = None
    if out and "trace" in out[0]:
        trace_df = pd.DataFrame(out[0]["trace"])
        for c in _TRACE_INT:
            trace_df[c] = trace_df[c].astype("Int64")
    return Run(
        counters=counters,
        metrics=metrics,
        schedstat=schedstat,
        trace=trace_df,
        native=[r["result"]["native"] for r in records],
        counters_text=[o["counters_text"] + o["wake_graph_text"] for o in out],
        schedstat_text=[o["schedstat"] for o in out],
        records=records,
    )


def validate(
    cases: Union[str, Sequence[str], None] = None,
    *,
    quick: bool = False,
    jobs: Optional[int] = None,
) -> pd.DataFrame:
    """Reproduce the published results: ``schedlab validate``.

    ``cases`` are built-in names (``R1`` ... ``Q3``) or case files (default: every built-in
    case); ``quick=True`` is ``--quick`` (the reduced form CI runs). Returns one row per
    check: ``case``, ``check``, ``pass``, ``published``, ``simulated``, ``ci_low``,
    ``ci_high``, ``detail``; ``.attrs["summary"]`` is the CLI's last line and
    ``.attrs["cases"]`` the ``--json`` case objects. Failing checks are a result, not an
    error.

    >>> t = validate("R1", quick=True)
    >>> t[["check", "pass", "published", "simulated"]]
    """
    names = [cases] if isinstance(cases, str) else list(cases or [])
    data = _json.loads(_schedlab.validate(cases=names, quick=quick, jobs=jobs))
    rows = [
        dict(case=c["name"], check=k["name"], **{k2: v for k2, v in k.items() if k2 != "name"})
        for c in data["cases"]
        for k in c["checks"]
    ]
    df = pd.DataFrame(
        rows,
        columns=None if rows else
        ["case", "check", "pass", "published", "simulated", "ci_low", "ci_high", "detail"],
    )
    df.attrs["summary"] = data["summary"]
    df.attrs["cases"] = data["cases"]
    return df


def topologies() -> pd.DataFrame:
    """The machine presets (``schedlab topo list``): ``name``, ``cpus``, ``description``,
    ``source``. A topology argument also takes ``NnLlCcTt``, a numactl/lscpu file or
    ``host``."""
    return pd.DataFrame(_json.loads(_schedlab.topologies()))


def topology(spec: str, *, smt: Optional[int] = None, llc_per_node: Optional[int] = None) -> Dict[str, Any]:
    """One machine as ``schedlab topo show SPEC --json`` gives it (era 5.10): its CPUs, caches,
    nodes and every CPU's sched-domain tree."""
    return _json.loads(_schedlab.topology(spec, smt=smt, llc_per_node=llc_per_node))


def policies(name: Optional[str] = None) -> pd.DataFrame:
    """The placement presets (``schedlab policies``): ``name``, ``kind`` (``era`` or
    ``reference``), ``era``, ``models``. With ``name`` (a preset or variant, e.g.
    ``"linux-4.6"``), its switches (``schedlab policies NAME``): ``name``, ``default``,
    ``meaning``, ``provenance``, ``scope``, and a tunable's ``min``, ``max``, ``unit``."""
    return pd.DataFrame(_json.loads(_schedlab.policies(name)))


def workloads(name: Optional[str] = None) -> pd.DataFrame:
    """The workload models and their parameters (``schedlab workloads [NAME] --json``), one row
    per (workload, parameter): ``workload``, ``mirrors``, ``param``, ``default``, ``unit``,
    ``help``. ``.attrs["workloads"]`` holds the full objects (``about``, ``follows``,
    ``reconstructed``)."""
    data = _json.loads(_schedlab.workloads(name))
    items = data if isinstance(data, list) else [data]
    rows = [
        dict(workload=w["name"], mirrors=w["mirrors"], param=p["name"], default=p["default"],
             unit=p["unit"], help=p["help"])
        for w in items
        for p in w["params"]
    ]
    df = pd.DataFrame(rows, columns=["workload", "mirrors", "param", "default", "unit", "help"])
    df.attrs["workloads"] = items
    return df
