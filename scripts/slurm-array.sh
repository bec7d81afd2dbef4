#!/usr/bin/env bash
# Writes the `sbatch --array` job that runs one experiment as N shards, one array task each
# (schedlab reads SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT; see docs/sweeps.md), and
# prints it on stdout. Submit it with `sbatch`, then merge the shard files:
#
#   scripts/slurm-array.sh experiments/r2-sis-rewrite.toml 16 results/r2 > r2.sbatch
#   sbatch --wait r2.sbatch && schedlab merge results/r2/shard-*.jsonl --report r2.html
#
# Usage: scripts/slurm-array.sh EXPERIMENT SHARDS OUTDIR [CPUS_PER_TASK] [SCHEDLAB]
# Each task runs `schedlab compare EXPERIMENT --jobs CPUS_PER_TASK --out OUTDIR/shard-ID.jsonl
# --resume`, so a requeued task continues its own file. OUTDIR is created here (Slurm opens
# the tasks' logs there before they start).
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
exp=$1 shards=$2 outdir=$3 cpus=${4:-1} bin=${5:-schedlab}
case $shards in '' | *[!0-9]* | 0) echo "SHARDS must be a positive number, not '$shards'" >&2; exit 2 ;; esac
case $cpus in '' | *[!0-9]* | 0) echo "CPUS_PER_TASK must be a positive number, not '$cpus'" >&2; exit 2 ;; esac
[ -f "$exp" ] || { echo "$exp: no such experiment file" >&2; exit 2; }
# Slurm opens a task's --output file before its script runs, so OUTDIR must exist at
# submission: a mkdir in the job itself comes too late (the task fails with "Could not open
# stdout file", found by scripts/slurm-ci-test.sh on a real cluster).
mkdir -p "$outdir"
q() { printf '%q' "$1"; }
cat <<EOF
#!/bin/bash
#SBATCH --job-name=schedlab-$(basename "$exp" .toml)
#SBATCH --array=0-$((shards - 1))
#SBATCH --cpus-per-task=$cpus
#SBATCH --output=$(q "$outdir")/slurm-%A_%a.log
set -euo pipefail
mkdir -p $(q "$outdir")
exec $(q "$bin") compare $(q "$exp") --jobs $cpus \\
    --out $(q "$outdir")/shard-\${SLURM_ARRAY_TASK_ID}.jsonl --resume
EOF
