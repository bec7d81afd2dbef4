# Shared by the shard checks (slurm-array-check.sh, slurm-ci-test.sh, k8s-indexed-check.sh):
# the small sweep they all split, and the check that the merged shards equal a straight run.
# Source it; it defines functions only.

# small_sweep FILE NAME: writes the sweep (2 points x 2 variants x 3 reps) to FILE.
small_sweep() {
    cat >"$1" <<TOML
description = "$2: a small sweep"
topology = "desktop-4c8t"
workload = "pipe:loops=300"
variants = ["linux-6.6", "waker"]
reps = 3
[sweep]
pairs = [1, 2]
TOML
}

# merged_equals_straight NAME BIN EXP DIR WHAT: merges DIR/shard-*.jsonl, runs EXP straight,
# and prints "NAME: WHAT the straight run" when the two JSON tables are equal; else shows the
# difference and exits 1. The tables are written beside EXP.
merged_equals_straight() {
    local name=$1 bin=$2 exp=$3 dir=$4 what=$5 work
    work=$(dirname "$exp")
    "$bin" merge "$dir"/shard-*.jsonl --json >"$work/merged.json"
    "$bin" compare "$exp" --json >"$work/straight.json" 2>/dev/null
    if cmp -s "$work/merged.json" "$work/straight.json"; then
        echo "$name: $what the straight run"
    else
        diff "$work/merged.json" "$work/straight.json" | head -20 >&2
        echo "$name: FAILED: the merged table differs from the straight run" >&2
        exit 1
    fi
}
