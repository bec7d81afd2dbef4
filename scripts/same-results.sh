#!/usr/bin/env bash
# Checks that two `schedlab` binaries give byte-identical results: the check every speed
# change that claims "results identical" runs before it is committed (docs/performance.md).
#
# Why: the determinism snapshots cover a handful of runs; a change to the engine's hot paths
# can move a result only on an era, machine or workload they do not exercise. This runs one
# `run --json` per era family (O(1), CFS-1…5, EEVDF 6.6…6.18, the reference policies) over the
# server models, the memory-intensity path and the NUMA workload, plus the bench scenarios'
# event counts, with both binaries, and compares the outputs byte for byte.
#
# Usage: scripts/same-results.sh OLD_BINARY NEW_BINARY     (about 25 s on a quiet machine)
# Exit status: 0 all identical, 1 a difference (named), 2 a run that failed.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_BINARY NEW_BINARY" >&2; exit 2; }
old=$1 new=$2
runs=(
    "-t desktop-4c8t -w hackbench:groups=4,loops=200 -v linux-6.6"
    "-t westmere-2s20c -w hackbench:groups=10,loops=100 -v linux-3.10"
    "-t westmere-2s20c -w tbench:clients=16 -v linux-4.9"
    "-t desktop-4c8t -w pipe:loops=20000 -v linux-6.12"
    "-t desktop-4c8t -w schbench -v linux-6.18"
    "-t desktop-4c8t -w pgbench:clients=8 -v linux-5.13"
    "-t desktop-4c8t -w sysbench:threads=8 -v linux-7.1"
    "-t desktop-4c8t -w aim7-compute -v linux-6.6"
    "-t westmere-2s20c -w numa-test -v linux-4.14"
    "-t desktop-4c8t -w kernbench -v linux-2.6.32"
    "-t desktop-4c8t -w hackbench:groups=2,loops=100 -v linux-2.6.30"
    "-t desktop-4c8t -w hackbench:groups=2,loops=100 -v linux-2.5.59"
    "-t desktop-4c8t -w hackbench:groups=4,loops=100,mem_intensity=0.5 -v linux-6.6"
    "-t desktop-4c8t -w netperf-rr:pairs=4 -v idlest"
)
err=$(mktemp)
trap 'rm -f "$err"' EXIT
status=0
for r in "${runs[@]}"; do
    # Progress lines go to stderr, which is only shown when a run fails.
    # shellcheck disable=SC2086 # each entry is a list of arguments
    a=$("$old" run $r --reps 2 --json 2>"$err") || { echo "FAILED  $old run $r: $(cat "$err")" >&2; exit 2; }
    # shellcheck disable=SC2086
    b=$("$new" run $r --reps 2 --json 2>"$err") || { echo "FAILED  $new run $r: $(cat "$err")" >&2; exit 2; }
    if [ "$a" == "$b" ]; then
        echo "same  run $r ($(printf %s "$a" | wc -c) bytes)"
    else
        echo "DIFF  run $r"
        diff <(printf '%s\n' "$a") <(printf '%s\n' "$b") | head -6
        status=1
    fi
done
for s in pipe-pair pairs16 pairs64 hackbench-80; do
    # The event counts (column 2); the timings differ from run to run.
    ea=$("$old" bench --only "$s" | awk 'NR > 2 {print $2}')
    eb=$("$new" bench --only "$s" | awk 'NR > 2 {print $2}')
    if [ -n "$ea" ] && [ "$ea" == "$eb" ]; then
        echo "same  bench $s: $ea events"
    else
        echo "DIFF  bench $s: $ea against $eb events"
        status=1
    fi
done
exit $status
