#!/usr/bin/env bash
# Sweeps on a real Slurm cluster, end to end: installs Slurm from the distribution's packages
# where it is missing (slurmctld, slurmd, slurm-client, munge; Debian/Ubuntu, as root), starts
# a single-node cluster on this machine (its own munged, slurmctld and slurmd, a generated
# slurm.conf, everything in a temporary directory, two free ports), submits the array job
# scripts/slurm-array.sh writes for a small experiment with `sbatch --wait`, merges the shard
# files and checks the merged table equals the single-machine run. The cluster is stopped and
# the directory removed however the script ends.
#
# Skips (exit 0, a line saying why) where Slurm cannot be had: not root, no apt-get, the
# packages do not install, or the daemons do not come up. Any other failure exits 1.
#
# Usage: scripts/slurm-ci-test.sh [SCHEDLAB]   (default: target/release/schedlab)
# SLURM_CI_KEEP=1 keeps the temporary directory (configuration, daemon logs, job logs).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/shard-check.sh
bin=$(realpath "${1:-target/release/schedlab}")
[ -x "$bin" ] || { echo "$bin not found: cargo build --release --bin schedlab" >&2; exit 2; }
skip() { echo "slurm-ci-test: skipped: $*"; exit 0; }

[ "$(id -u)" -eq 0 ] || skip "needs root (to install Slurm and run slurmd)"
tools="slurmctld slurmd munged sbatch squeue scontrol"
missing() { for t in $tools; do command -v "$t" >/dev/null || return 0; done; return 1; }
if missing; then
    command -v apt-get >/dev/null || skip "Slurm is not installed and there is no apt-get"
    echo "== installing slurmctld slurmd slurm-client munge (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    pkgs="slurmctld slurmd slurm-client munge"
    apt-get install -y --no-install-recommends $pkgs >/tmp/slurm-ci-apt.log 2>&1 ||
        { apt-get update >>/tmp/slurm-ci-apt.log 2>&1 &&
          apt-get install -y --no-install-recommends $pkgs >>/tmp/slurm-ci-apt.log 2>&1; } ||
        skip "the packages did not install (see /tmp/slurm-ci-apt.log)"
    missing && skip "installed, but one of $tools is still missing"
fi

w=$(mktemp -d /tmp/slurm-ci.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null || true
    done
    if [ -n "${SLURM_CI_KEEP:-}" ]; then echo "slurm-ci-test: kept $w" >&2; else rm -rf "$w"; fi
}
trap cleanup EXIT
mkdir -p "$w/state" "$w/spool" "$w/munge"
chmod 700 "$w/munge"

# munge: a key of our own and a daemon on a socket of our own (the system's munged, if any,
# is left alone).
dd if=/dev/urandom of="$w/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$w/munge/munge.key"
munged --force --key-file="$w/munge/munge.key" --socket="$w/munge/sock" \
    --pid-file="$w/munge/pid" --log-file="$w/munge/log" --seed-file="$w/munge/seed" ||
    skip "munged did not start: $(tail -2 "$w/munge/log" 2>/dev/null)"
for _ in $(seq 50); do [ -s "$w/munge/pid" ] && break; sleep 0.1; done
pids+=("$(cat "$w/munge/pid")")

# Two free ports in a row (several checkouts may run this at once on one machine).
in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=""
for _ in $(seq 50); do
    p=$((20000 + RANDOM % 20000))
    if ! in_use "$p" && ! in_use $((p + 1)); then port=$p; break; fi
done
[ -n "$port" ] || skip "no two free ports on 127.0.0.1"
host=$(hostname -s)
node=$(slurmd -C | head -1 | sed "s/^NodeName=[^ ]*/NodeName=$host NodeAddr=127.0.0.1/")
cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$node")
cat >"$w/slurm.conf" <<EOF
ClusterName=schedlabci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$w/munge/sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$w/state
SlurmdSpoolDir=$w/spool
SlurmctldPidFile=$w/slurmctld.pid
SlurmdPidFile=$w/slurmd.pid
SlurmctldLogFile=$w/slurmctld.log
SlurmdLogFile=$w/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
$node State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$w/slurm.conf"
slurmctld -c -D -f "$SLURM_CONF" >>"$w/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >>"$w/slurmd.out" 2>&1 &
pids+=($!)
up=""
for _ in $(seq 150); do
    if sinfo -h -n "$host" -o %t 2>/dev/null | grep -Eq '^(idle|mix|alloc)'; then up=1; break; fi
    sleep 0.2
done
[ -n "$up" ] || skip "the single-node cluster did not come up: $(tail -3 "$w/slurmctld.log" "$w/slurmd.log" 2>/dev/null | tr '\n' ' ')"
echo "== single-node Slurm cluster up ($node)"

small_sweep "$w/exp.toml" slurm-ci-test
shards=3
scripts/slurm-array.sh "$w/exp.toml" "$shards" "$w/out" 1 "$bin" >"$w/job.sbatch"
t0=$(date +%s)
job=$(timeout 300 sbatch --parsable --wait --chdir="$w" "$w/job.sbatch") || {
    echo "slurm-ci-test: FAILED: the array job did not complete" >&2
    tail -5 "$w"/out/slurm-*.log "$w/slurmctld.log" "$w/slurmd.log" >&2 2>/dev/null || true
    exit 1
}
echo "== array job $job: $shards tasks done in $(($(date +%s) - t0)) s"
n=$(find "$w/out" -name 'shard-*.jsonl' | wc -l)
[ "$n" -eq "$shards" ] || { echo "slurm-ci-test: FAILED: expected $shards shard files, found $n" >&2; exit 1; }
merged_equals_straight slurm-ci-test "$bin" "$w/exp.toml" "$w/out" \
    "a real $shards-task array job (job $job on $host, $cpus CPUs) merged equals"
