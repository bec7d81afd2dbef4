#!/usr/bin/env python3
"""A tour of schedlab from Python, top to bottom: a sweep, the ratios with their intervals
plotted, and a trace filtered with pandas.

    pip install ./python matplotlib      # once, from the repository root
    python examples/python_tour.py       # writes python_tour.png here (or the path given)

Each cell below is also a notebook cell: paste them into Jupyter in order (the plot then shows
inline). It takes about half a minute on 2 cores.
"""

import sys

import matplotlib

if __name__ == "__main__":
    matplotlib.use("Agg")  # a script saves the plot; a notebook shows it
import matplotlib.pyplot as plt
import pandas as pd

import schedlab

# %% What exists: machines, policies, workloads (each a DataFrame).
print(schedlab.topologies()[["name", "cpus"]].head(4).to_string(index=False))
print(schedlab.workloads("tbench")[["param", "default", "unit"]].to_string(index=False))

# %% A sweep: the affine wakeup path on and off under tbench, 4 client counts, 3 seeds each
# (the README's main job with shorter runs).
c = schedlab.compare(
    topo="desktop-4c8t",
    workload="tbench:duration=100ms",
    variants=["linux-6.6", "linux-6.6,NO_WAKE_AFFINE", "linux-6.6,NO_SIS_UTIL,SIS_PROP"],
    sweep={"clients": [1, 4, 8, 16]},
    reps=3,
)
print(c)
print(c.verdicts[["clients", "variant", "ratio", "ci_low", "ci_high", "p_value", "verdict"]]
      .to_string(index=False))

# %% The runs in long form: the mean metric and context switches per point and variant.
print(c.runs.groupby(["clients", "variant"])[["value", "ctx_switches"]].mean().round(1))

# %% The ratios to the baseline with their 95 % intervals.
fig, ax = plt.subplots(figsize=(7, 4))
for variant, g in c.verdicts.groupby("variant", sort=False):
    ax.errorbar(g.clients, g.ratio, yerr=[g.ratio - g.ci_low, g.ci_high - g.ratio],
                marker="o", capsize=4, label=variant)
ax.axhline(1.0, color="grey", lw=0.8, ls="--")
ax.set_xscale("log", base=2)
ax.set_xticks(sorted(c.verdicts.clients.unique()), [str(x) for x in sorted(c.verdicts.clients.unique())])
ax.set_xlabel("clients")
ax.set_ylabel(f"{c.metric['name']} ratio to linux-6.6")
ax.set_title(f"{c.report['workload']} on {c.report['topology']}, 95% CI")
ax.legend()
fig.tight_layout()
if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "python_tour.png"
    fig.savefig(out, dpi=100)
    print(f"plot: {out}")

# %% A trace, filtered with pandas: where did hackbench's wakeups go, and how often did a
# wakee land on another CPU than the waker's?
r = schedlab.run(topo="core2quad", workload="hackbench:groups=2,loops=20", variant="linux-4.9",
                 trace=True)
t = r.trace
wakeups = t[t.event == "sched_wakeup"]
print(f"{len(t)} events, {len(wakeups)} wakeups")
print("wakeups per target CPU:",
      {int(k): int(v) for k, v in wakeups.groupby("target_cpu").size().items()})
# sched_waking is emitted on the waker's CPU and names the CPU chosen for the wakee.
waking = t[t.event == "sched_waking"]
print(f"placed on another CPU than the waker's: {(waking.target_cpu != waking.cpu).mean():.0%}")
switches = t[t.event == "sched_switch"]
print("switch-outs by state:", switches.prev_state.value_counts().to_dict())
print(r.counters[["ctx_switches", "wakeups", "wakeups_local", "wakeups_affine",
                  "migrations_wake"]].to_string(index=False))

# %% The kernel's own counters (/proc/schedstat v15), per CPU.
s = r.schedstat
print(s[s.domain.isna() & s.field.isin(["ttwu_count", "ttwu_local"])]
      .pivot(index="cpu", columns="field", values="value"))
