#!/usr/bin/env bash
# Checks the job scripts/slurm-array.sh writes without a cluster: runs its body once per
# array index with the variables Slurm sets (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT;
# the #SBATCH lines are comments to bash), merges the shard files and checks that the merged
# JSON equals a straight run's. A real single-node Slurm cluster is not started here.
#
# Usage: scripts/slurm-array-check.sh [SCHEDLAB]   (default: target/release/schedlab)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/schedlab}")
[ -x "$bin" ] || { echo "$bin not found: cargo build --release --bin schedlab" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/exp.toml" <<'TOML'
description = "slurm-array-check: a small sweep"
topology = "desktop-4c8t"
workload = "pipe:loops=300"
variants = ["linux-6.6", "waker"]
reps = 3
[sweep]
pairs = [1, 2]
TOML
shards=3
scripts/slurm-array.sh "$tmp/exp.toml" "$shards" "$tmp/out" 1 "$bin" >"$tmp/job.sbatch"
grep -q -- "--array=0-$((shards - 1))" "$tmp/job.sbatch"
for id in $(seq 0 $((shards - 1))); do
    SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_COUNT=$shards bash "$tmp/job.sbatch" >/dev/null 2>&1
done
n=$(ls "$tmp"/out/shard-*.jsonl | wc -l)
[ "$n" -eq "$shards" ] || { echo "expected $shards shard files, found $n" >&2; exit 1; }
"$bin" merge "$tmp"/out/shard-*.jsonl --json >"$tmp/merged.json"
"$bin" compare "$tmp/exp.toml" --json >"$tmp/straight.json" 2>/dev/null
if cmp -s "$tmp/merged.json" "$tmp/straight.json"; then
    echo "slurm-array-check: $shards array tasks merged equal the straight run"
else
    diff "$tmp/merged.json" "$tmp/straight.json" | head -20 >&2
    echo "slurm-array-check: FAILED: the merged table differs from the straight run" >&2
    exit 1
fi
