#!/usr/bin/env bash
# Checks the Indexed Job scripts/k8s-indexed-job.sh writes against the variables Kubernetes
# sets, without a cluster: reads the manifest back (Indexed mode, completions N, the
# SCHEDLAB_SHARD_COUNT it sets equal to N, the experiment in its ConfigMap equal to the
# file), runs the container's command once per index with a pod's environment (only
# JOB_COMPLETION_INDEX from Kubernetes, the rest from the manifest, the two mount paths moved
# to a temporary directory), merges the shard files and checks the merged JSON equals a
# straight run's. Also checks that a pod whose SCHEDLAB_SHARD_COUNT is missing fails with a
# message naming it instead of running every run.
#
# Usage: scripts/k8s-indexed-check.sh [SCHEDLAB]   (default: target/release/schedlab)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/shard-check.sh
bin=$(realpath "${1:-target/release/schedlab}")
[ -x "$bin" ] || { echo "$bin not found: cargo build --release --bin schedlab" >&2; exit 2; }
fail() { echo "k8s-indexed-check: FAILED: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
small_sweep "$tmp/exp.toml" k8s-indexed-check
shards=3
scripts/k8s-indexed-job.sh "$tmp/exp.toml" "$shards" >"$tmp/job.yaml"
y=$tmp/job.yaml

# The manifest, read back.
grep -qx '  completionMode: Indexed' "$y" || fail "not an Indexed Job"
completions=$(sed -n 's/^  completions: \([0-9]*\)$/\1/p' "$y")
[ "$completions" = "$shards" ] || fail "completions is '$completions', not $shards"
value_of() { sed -n "/- name: $1\$/{n;s/^ *value: \"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p}" "$y"; }
count=$(value_of SCHEDLAB_SHARD_COUNT)
[ "$count" = "$completions" ] || fail "SCHEDLAB_SHARD_COUNT is '$count', completions $completions"
cmd=$(sed -n "/^        - -c\$/{n;s/^        - '\(.*\)'\$/\1/p}" "$y")
[ -n "$cmd" ] || fail "no sh -c command in the manifest"
sed -n '/^  experiment.toml: |$/,/^---$/p' "$y" | sed '1d;$d' | sed 's/^    //' >"$tmp/embedded.toml"
cmp -s "$tmp/embedded.toml" "$tmp/exp.toml" || fail "the ConfigMap's experiment differs from the file"
exp_mount=$(value_of SCHEDLAB_EXPERIMENT)
res_mount=$(value_of SCHEDLAB_RESULTS)
[ "$exp_mount" = /exp/experiment.toml ] && [ "$res_mount" = /results ] ||
    fail "unexpected mount paths '$exp_mount' '$res_mount'"

# Where PyYAML is installed, the manifest must also parse as YAML to the same values.
if python3 -c 'import yaml' 2>/dev/null; then
    python3 - "$y" "$tmp/exp.toml" "$shards" "$cmd" <<'PY' || fail "the manifest does not parse as YAML to the values above"
import sys, yaml
cm, job = yaml.safe_load_all(open(sys.argv[1]))
c = job["spec"]["template"]["spec"]["containers"][0]
env = {e["name"]: e["value"] for e in c["env"]}
assert cm["data"]["experiment.toml"] == open(sys.argv[2]).read()
assert job["spec"]["completionMode"] == "Indexed"
assert job["spec"]["completions"] == int(sys.argv[3]) == int(env["SCHEDLAB_SHARD_COUNT"])
assert c["command"] == ["sh", "-c", sys.argv[4]]
PY
else
    echo "k8s-indexed-check: PyYAML not installed, the YAML parse check is skipped"
fi

# The pods: schedlab on PATH, the variables Kubernetes and the manifest set.
mkdir -p "$tmp/path" "$tmp/exp" "$tmp/results"
ln -s "$bin" "$tmp/path/schedlab"
cp "$tmp/embedded.toml" "$tmp/exp/experiment.toml"
pod() { # INDEX [VAR=VALUE...]: runs the container's command as pod INDEX
    local i=$1
    shift
    env -i PATH="$tmp/path:/usr/bin:/bin" HOME="$tmp" JOB_COMPLETION_INDEX="$i" \
        SCHEDLAB_EXPERIMENT="$tmp/exp/experiment.toml" SCHEDLAB_RESULTS="$tmp/results" "$@" \
        sh -c "$cmd"
}
for i in $(seq 0 $((completions - 1))); do
    pod "$i" SCHEDLAB_SHARD_COUNT="$count" >/dev/null 2>"$tmp/pod-$i.err" ||
        fail "pod $i: $(tail -2 "$tmp/pod-$i.err")"
done
n=$(find "$tmp/results" -name 'shard-*.jsonl' | wc -l)
[ "$n" -eq "$completions" ] || fail "expected $completions shard files, found $n"

# A pod without its count must fail, naming the variable, and write nothing.
before=$(cksum <"$tmp/results/shard-0.jsonl")
if pod 0 >/dev/null 2>"$tmp/nocount.err"; then fail "a pod without SCHEDLAB_SHARD_COUNT ran"; fi
[ "$(cksum <"$tmp/results/shard-0.jsonl")" = "$before" ] || fail "a pod without its count wrote"
grep -q 'JOB_COMPLETION_INDEX is set but SCHEDLAB_SHARD_COUNT is not' "$tmp/nocount.err" ||
    fail "no clear error without SCHEDLAB_SHARD_COUNT: $(cat "$tmp/nocount.err")"

merged_equals_straight k8s-indexed-check "$bin" "$tmp/exp.toml" "$tmp/results" \
    "$completions indexed pods merged equal"
