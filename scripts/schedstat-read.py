#!/usr/bin/env python3
"""Reads a /proc/schedstat file (version 15) and prints its counters as JSON.

An independent reader of what `schedlab run --schedstat FILE` writes (and of a real
/proc/schedstat, or the delta `schedlab host run --schedstat` writes): it knows only the
kernel's documented layout (Documentation/scheduler/sched-stats.rst), none of schedlab's
code. Output: {"version", "timestamp", "cpus": [{field: n, "domains": [...]}], "totals"}.

Usage: scripts/schedstat-read.py FILE [--totals]
"""
import json
import sys

CPU_FIELDS = ["yld_count", "legacy_exp_empty", "sched_count", "sched_goidle",
              "ttwu_count", "ttwu_local", "run_time_ns", "run_delay_ns", "timeslices"]
IDLE_TYPES = ["idle", "busy", "newidle"]  # CPU_IDLE, CPU_NOT_IDLE, CPU_NEWLY_IDLE
LB_FIELDS = ["lb_count", "lb_balanced", "lb_failed", "lb_imbalance", "lb_gained",
             "lb_hot_gained", "lb_nobusyq", "lb_nobusyg"]
DOMAIN_FIELDS = ([f"{f}.{t}" for t in IDLE_TYPES for f in LB_FIELDS] +
                 ["alb_count", "alb_failed", "alb_pushed",
                  "sbe_count", "sbe_balanced", "sbe_pushed",
                  "sbf_count", "sbf_balanced", "sbf_pushed",
                  "ttwu_wake_remote", "ttwu_move_affine", "ttwu_move_balance"])


def parse(text):
    out = {"version": None, "timestamp": None, "cpus": []}
    for n, line in enumerate(text.splitlines(), 1):
        f = line.split()
        if not f:
            continue
        if f[0] == "version":
            out["version"] = int(f[1])
            if out["version"] != 15:
                sys.exit(f"line {n}: version {f[1]}: this reader knows version 15")
        elif f[0] == "timestamp":
            out["timestamp"] = int(f[1])
        elif f[0].startswith("cpu"):
            vals = [int(x) for x in f[1:]]
            if len(vals) != len(CPU_FIELDS):
                sys.exit(f"line {n}: {len(vals)} cpu fields, expected {len(CPU_FIELDS)}")
            cpu = dict(zip(CPU_FIELDS, vals))
            cpu["cpu"] = int(f[0][3:])
            cpu["domains"] = []
            out["cpus"].append(cpu)
        elif f[0].startswith("domain"):
            if not out["cpus"]:
                sys.exit(f"line {n}: a domain line before any cpu line")
            vals = [int(x) for x in f[2:]]
            if len(vals) != len(DOMAIN_FIELDS):
                sys.exit(f"line {n}: {len(vals)} domain fields, expected {len(DOMAIN_FIELDS)}")
            mask = int(f[1].replace(",", ""), 16)
            d = dict(zip(DOMAIN_FIELDS, vals))
            d["span"] = [i for i in range(mask.bit_length()) if mask >> i & 1]
            out["cpus"][-1]["domains"].append(d)
        else:
            sys.exit(f"line {n}: unknown line '{f[0]}'")
    if out["version"] is None:
        sys.exit("no version line")
    totals = {}
    for c in out["cpus"]:
        for k in CPU_FIELDS:
            totals[k] = totals.get(k, 0) + c[k]
        for d in c["domains"]:
            for k in DOMAIN_FIELDS:
                totals[k] = totals.get(k, 0) + d[k]
    out["totals"] = totals
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as fh:
        st = parse(fh.read())
    print(json.dumps(st["totals"] if "--totals" in sys.argv else st, indent=1))


if __name__ == "__main__":
    main()
