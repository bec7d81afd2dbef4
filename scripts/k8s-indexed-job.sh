#!/usr/bin/env bash
# Writes a Kubernetes Indexed Job that runs one experiment as N shards, one pod each, and
# prints it on stdout: a ConfigMap holding the experiment and a Job with
# `completionMode: Indexed`, `completions: N`. Kubernetes gives each pod its index as
# JOB_COMPLETION_INDEX (0..N-1); the manifest sets SCHEDLAB_SHARD_COUNT to N, and schedlab
# reads the pair as shard INDEX of N (see docs/sweeps.md). Each pod writes
# $SCHEDLAB_RESULTS/shard-INDEX.jsonl on the volume claim RESULTS_CLAIM; merge them after:
#
#   scripts/k8s-indexed-job.sh experiments/r2-sis-rewrite.toml 16 > r2.yaml
#   kubectl apply -f r2.yaml && kubectl wait --for=condition=complete job/schedlab-r2-sis-rewrite
#   (copy the shard files off the volume) && schedlab merge shard-*.jsonl --report r2.html
#
# Usage: scripts/k8s-indexed-job.sh EXPERIMENT SHARDS [IMAGE] [RESULTS_CLAIM]
#   IMAGE defaults to schedlab:latest (an image with schedlab on PATH),
#   RESULTS_CLAIM to schedlab-results (a ReadWriteMany PersistentVolumeClaim).
# scripts/k8s-indexed-check.sh runs the pods' command with the variables Kubernetes sets.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
exp=$1 shards=$2 image=${3:-schedlab:latest} claim=${4:-schedlab-results}
case $shards in '' | *[!0-9]* | 0) echo "SHARDS must be a positive number, not '$shards'" >&2; exit 2 ;; esac
[ -f "$exp" ] || { echo "$exp: no such experiment file" >&2; exit 2; }
# A DNS-1123 name from the experiment's file name.
name=schedlab-$(basename "$exp" .toml | tr 'A-Z_.' 'a-z--' | tr -cd 'a-z0-9-' | cut -c1-40)
name=${name%-}
cat <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: $name
data:
  experiment.toml: |
$(sed 's/^\(.\)/    \1/' "$exp")
---
apiVersion: batch/v1
kind: Job
metadata:
  name: $name
spec:
  completionMode: Indexed
  completions: $shards
  parallelism: $shards
  backoffLimit: $((shards * 2))
  template:
    spec:
      restartPolicy: OnFailure
      containers:
      - name: schedlab
        image: $image
        env:
        - name: SCHEDLAB_SHARD_COUNT
          value: "$shards"
        - name: SCHEDLAB_EXPERIMENT
          value: /exp/experiment.toml
        - name: SCHEDLAB_RESULTS
          value: /results
        command:
        - sh
        - -c
        - 'exec schedlab compare "\$SCHEDLAB_EXPERIMENT" --out "\$SCHEDLAB_RESULTS/shard-\$JOB_COMPLETION_INDEX.jsonl" --resume'
        volumeMounts:
        - { name: experiment, mountPath: /exp, readOnly: true }
        - { name: results, mountPath: /results }
      volumes:
      - name: experiment
        configMap: { name: $name }
      - name: results
        persistentVolumeClaim: { claimName: $claim }
EOF
