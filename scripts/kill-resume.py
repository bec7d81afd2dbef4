#!/usr/bin/env python3
"""Kills `schedlab compare --out F --resume` at random points and checks that nothing is lost.

A bench-style check of crash-safe result files (not a unit test: it takes minutes). Each trial
starts a resume of one sweep on the same file, kills it with SIGKILL (SIGINT, SIGTERM or
SIGHUP in one trial of four) after a random delay, and checks the file against what it held
before the trial and against a straight run:

* every run the file held before is still there, with the same result (nothing lost);
* the file always starts with its plan header (never empty, never truncated);
* every run line equals the straight run's line for that run (nothing wrong);
* no line is duplicated; at most the last line is torn (a kill mid-write).

When the file is complete, `merge` of it must print the same JSON as `merge` of the straight
run; the file is then removed and the next trials start a new one (a "cycle"). The delays are
drawn so that most kills land in the first second, where a resume reads and rewrites the
file. Prints the counts; exits 1 if anything was lost or wrong.

Usage: scripts/kill-resume.py [--trials 300] [--bin target/release/schedlab] [--seed 1]
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

SWEEP = [
    "compare", "-t", "desktop-4c8t", "-w", "pipe:loops=100",
    "-v", "linux-6.6", "-v", "waker", "--sweep", "pairs=1,2,3",
    "--reps", "1500", "--seed", "7", "--jobs", "2",
]


def read_runs(path):
    """(header line or None, {index: line}, duplicates, torn lines not last)."""
    if not os.path.exists(path):
        return None, {}, 0, 0
    with open(path, "rb") as f:
        data = f.read().decode("utf-8", "replace")
    lines = data.split("\n")
    complete = lines[:-1]  # the text after the last newline is a torn (or no) line
    header, runs, dups, torn = None, {}, 0, 0
    for i, line in enumerate(complete):
        if not line.strip():
            continue
        try:
            v = json.loads(line)
        except ValueError:
            torn += 1
            continue
        if v.get("schema") == "schedlab.plan/1" and header is None and i == 0:
            header = line
        elif v.get("schema") == "schedlab.run/1":
            k = v["key"]["index"]
            if k in runs:
                dups += 1
            runs[k] = line
    return header, runs, dups, torn


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--bin", default="target/release/schedlab")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    exe = os.path.abspath(a.bin)
    if not os.access(exe, os.X_OK):
        sys.exit(f"{exe} not found: cargo build --release --bin schedlab")
    tmp = tempfile.mkdtemp(prefix="schedlab-kill-resume-")
    ref = os.path.join(tmp, "straight.jsonl")
    t0 = time.monotonic()
    subprocess.run([exe, *SWEEP, "--out", ref], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    straight_s = time.monotonic() - t0
    _, ref_runs, _, _ = read_runs(ref)
    total = len(ref_runs)
    merged_ref = subprocess.run([exe, "merge", ref, "--json"], check=True,
                                capture_output=True).stdout
    work = os.path.join(tmp, "work.jsonl")
    stats = dict(trials=0, interrupted=0, finished=0, cycles=0, lost=0, wrong=0,
                 no_header=0, duplicates=0, torn_inside=0, merge_mismatch=0, errors=0)
    signals = [signal.SIGKILL] * 9 + [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
    for trial in range(a.trials):
        stats["trials"] += 1
        _, before, _, _ = read_runs(work)
        # Most kills in the first second (reading and rewriting the file), some later.
        delay = rng.uniform(0, 1.0) if rng.random() < 0.75 else rng.uniform(0, straight_s * 1.2)
        sig = rng.choice(signals)
        p = subprocess.Popen([exe, *SWEEP, "--out", work, "--resume"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(delay)
        if p.poll() is None:
            p.send_signal(sig)
            stats["interrupted"] += 1
        _, err = p.communicate()
        if p.returncode == 0:
            stats["finished"] += 1
        elif p.returncode > 0 and p.returncode != 130:
            stats["errors"] += 1
            print(f"trial {trial}: exit {p.returncode}: {err.decode()[-300:]}", file=sys.stderr)
        header, after, dups, torn = read_runs(work)
        if os.path.exists(work) and header is None:
            stats["no_header"] += 1
            print(f"trial {trial}: the file lost its header", file=sys.stderr)
        lost = [k for k in before if after.get(k) != before[k]]
        stats["lost"] += len(lost)
        if lost:
            print(f"trial {trial}: {len(lost)} runs lost (e.g. {lost[:5]}) after {delay:.3f} s",
                  file=sys.stderr)
        wrong = [k for k in after if after[k] != ref_runs.get(k)]
        stats["wrong"] += len(wrong)
        stats["duplicates"] += dups
        stats["torn_inside"] += torn
        if len(after) == total:
            got = subprocess.run([exe, "merge", work, "--json"], capture_output=True).stdout
            if got != merged_ref:
                stats["merge_mismatch"] += 1
            stats["cycles"] += 1
            os.remove(work)
    # The last cycle's file is finished by one resume without a kill: no temporary stays.
    subprocess.run([exe, *SWEEP, "--out", work, "--resume"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    leftovers = [n for n in os.listdir(tmp) if ".tmp." in n or n.endswith(".lock")]
    print(f"straight run: {total} runs in {straight_s:.2f} s")
    print(" ".join(f"{k}={v}" for k, v in stats.items()), f"leftover_files={len(leftovers)}")
    bad = (stats["lost"] or stats["wrong"] or stats["no_header"] or stats["duplicates"]
           or stats["torn_inside"] or stats["merge_mismatch"] or stats["errors"] or leftovers)
    if not bad:
        subprocess.run(["rm", "-rf", tmp])
        print("nothing lost")
    else:
        print(f"FAILED (files kept in {tmp})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
