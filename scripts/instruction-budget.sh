#!/usr/bin/env bash
# Splits the instructions of `schedlab bench` scenarios into the engine's machinery and the
# modelled kernel work, per event, under callgrind.
#
# Why: the speed target is 10 M events per CPU second on the small scenarios (sweeps of
# thousands of runs must finish in minutes). This VM has no
# hardware counters and its timings swing, but instruction counts are exact and repeatable;
# with the instructions per second a scenario reaches (events/s × instructions/event from
# `schedlab bench`), they say how many instructions an event may cost at the target, and
# whether the modelled work alone already exceeds that (docs/performance.md, "Fifth round").
#
# Machinery: the event loop and queue (`run`, `push`, `pop`), the op interpreter
# (`continue_task`, with `step_task` inlined: this also holds the ops' cost arithmetic, so
# the machinery figure is an upper bound), segment timing (`start_segment`, the per-CPU
# timer tree), channels, distributions, the RNG and the allocator. Modelled work: everything
# else (placement policy, fair class, PELT, switch and wakeup paths, balancing, counters).
# Code inlined into a function counts where it was inlined; the split is by function, not a
# line-exact one. Counts are the whole process's (start-up and set-up are under 1 %).
#
# Usage: scripts/instruction-budget.sh [SCENARIO ...]   (default: the four with a 10 M target)
#        BIN=path/to/schedlab scripts/instruction-budget.sh pairs64
# Needs valgrind (apt-get install valgrind) and python3; about a minute per scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-target/release/schedlab}
if [ -z "${BIN:-}" ]; then
    cargo build --release --bin schedlab
fi
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
command -v callgrind_annotate >/dev/null || { echo "callgrind_annotate is needed (valgrind)" >&2; exit 2; }
[ $# -gt 0 ] || set -- pipe-pair pairs16 pairs32 pairs64
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-16s %10s %12s %12s %12s\n' scenario events "instr/event" machinery "modelled"
for s in "$@"; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$bin" bench --only "$s" \
        >"$tmp/out" 2>"$tmp/err" || { grep -v "^==" "$tmp/err" >&2; exit 1; }
    # One scenario per callgrind run: `--only` matches by substring (pairs1 names three).
    matched=$(awk 'NR > 1 && $2 ~ /^[0-9]+$/' "$tmp/out" | wc -l)
    [ "$matched" -eq 1 ] || { echo "'$s' names $matched scenarios; give one (schedlab bench lists them)" >&2; exit 2; }
    events=$(awk 'NR > 1 && $2 ~ /^[0-9]+$/ {print $2; exit}' "$tmp/out")
    callgrind_annotate --inclusive=no --auto=no --threshold=100 "$tmp/cg" >"$tmp/ann"
    python3 - "$tmp/ann" "$events" "$s" <<'EOF'
import re, sys
ann, events, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
MACHINERY_FNS = {
    "run", "push", "pop", "dispatch", "arm_seg_done", "continue_task", "continue_task'2",
    "step_task", "start_segment", "channel_op_ns", "sample", "rearm_winner", "lower",
    "__memcpy_avx_unaligned_erms", "_int_malloc", "_int_free", "malloc", "free", "realloc",
}
MACHINERY_FILES = ("seg_timers.rs", "ipc.rs", "dist.rs", "rng.rs")
row = re.compile(r"^\s*([0-9,]+) \([ 0-9.]+%\)\s+(.*?):(.*?)( \[.*\])?$")
mach = model = 0
for line in open(ann):
    m = row.match(line)
    if not m or "PROGRAM TOTALS" in line:
        continue
    n = int(m.group(1).replace(",", ""))
    path, fn = m.group(2), m.group(3)
    fn = re.sub(r"<impl [^>]*>::", "", fn)
    fn = re.sub(r"^<([^ ]+) as [^>]+>::", r"\1::", fn).split("::")[-1]
    if fn in MACHINERY_FNS or path.endswith(MACHINERY_FILES) or "rand_xoshiro" in path:
        mach += n
    else:
        model += n
tot = mach + model
print("%-16s %10d %12.0f %12.0f %12.0f" % (name, events, tot / events, mach / events, model / events))
EOF
done
