#!/usr/bin/env bash
# Checks the job scripts/slurm-array.sh writes without a cluster: runs its body once per
# array index with the variables Slurm sets (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT;
# the #SBATCH lines are comments to bash), merges the shard files and checks that the merged
# JSON equals a straight run's. A real single-node Slurm cluster is not started here.
#
# Usage: scripts/slurm-array-check.sh [SCHEDLAB]   (default: target/release/schedlab)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/shard-check.sh
bin=$(realpath "${1:-target/release/schedlab}")
[ -x "$bin" ] || { echo "$bin not found: cargo build --release --bin schedlab" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
small_sweep "$tmp/exp.toml" slurm-array-check
shards=3
scripts/slurm-array.sh "$tmp/exp.toml" "$shards" "$tmp/out" 1 "$bin" >"$tmp/job.sbatch"
grep -q -- "--array=0-$((shards - 1))" "$tmp/job.sbatch"
for id in $(seq 0 $((shards - 1))); do
    SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_COUNT=$shards bash "$tmp/job.sbatch" >/dev/null 2>&1
done
n=$(ls "$tmp"/out/shard-*.jsonl | wc -l)
[ "$n" -eq "$shards" ] || { echo "expected $shards shard files, found $n" >&2; exit 1; }
merged_equals_straight slurm-array-check "$bin" "$tmp/exp.toml" "$tmp/out" \
    "$shards array tasks merged equal"
