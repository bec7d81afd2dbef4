#!/usr/bin/env bash
# A fuzzing campaign over the proptest harnesses (the suite runs 64 cases per parser; this
# runs enough to find the rare input that panics or hangs): each target runs in
# chunks until it has done at least CASES executions or SECONDS of wall time, whichever
# comes first, and prints one table row with its counts. Each chunk draws a fresh random
# seed (proptest's default), so chunks add up to one longer campaign; a failure stops the
# target and proptest prints the input that failed.
#
#   scripts/fuzz-campaign.sh                    # every target, 1,000,000 cases or 3,600 s
#   CASES=20000 SECONDS_MAX=60 scripts/fuzz-campaign.sh experiment:fuzz:edited_run_files
#
# Targets are PACKAGE-SUFFIX:TEST-BINARY:TEST-NAME-FILTER (see the list below). Run it under
# `nice -n 19` on a shared machine; the row gives CPU seconds as well as wall seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

CASES=${CASES:-1000000}
SECONDS_MAX=${SECONDS_MAX:-3600}
ALL=(
  topo:it:fuzz::mutated_machine_descriptions_never_panic
  topo:it:fuzz::arbitrary_compact_specs_and_cpulists_never_panic
  topo:it:fuzz::random_sysfs_trees_never_panic
  trace:fuzz:edited_traces_never_panic
  trace:fuzz:edited_perfetto_traces_never_panic
  profile:fuzz:
  workloads:fuzz:edited_workload_files_never_panic
  workloads:fuzz:arbitrary_parameters_of_every_model_never_panic
  experiment:fuzz:edited_experiment_files_never_panic
  experiment:fuzz:edited_run_files_never_panic
)
if [ $# -gt 0 ]; then TARGETS=("$@"); else TARGETS=("${ALL[@]}"); fi

echo "| target | cases | wall s | CPU s | result |"
echo "|---|---|---|---|---|"
for t in "${TARGETS[@]}"; do
  IFS=: read -r pkg bin name <<<"${t/::/@@}"
  name=${name/@@/::}
  # The test binary is run directly: a `cargo test` would hold the build directory's lock
  # for the whole campaign.
  exe=$(cargo test -q --release -p "schedlab-$pkg" --test "$bin" --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable"): print(m["executable"])' | tail -1)
  [ -x "$exe" ] || { echo "no test binary for $t" >&2; exit 1; }
  done_cases=0 chunk=2000 result=ok
  start=$(date +%s.%N)
  cpu0=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
  while :; do
    now=$(date +%s.%N)
    elapsed=$(echo "$now - $start" | bc)
    if [ "$done_cases" -ge "$CASES" ] || [ "$(echo "$elapsed >= $SECONDS_MAX" | bc)" = 1 ]; then break; fi
    t0=$(date +%s.%N)
    if ! (cd "crates/schedlab-$pkg" && PROPTEST_CASES=$chunk "$exe" -q \
        --test-threads=1 ${name:+"$name"}) >"/tmp/fuzz-campaign.$$.log" 2>&1; then
      result="FAILED (see below)"
      cat "/tmp/fuzz-campaign.$$.log" >&2
      break
    fi
    # A filter that matches no test passes too: count only chunks that ran a test.
    if ! grep -q "test result: ok. [1-9]" "/tmp/fuzz-campaign.$$.log"; then
      result="NO TEST matched '$name'"
      break
    fi
    done_cases=$((done_cases + chunk))
    # A running total on stderr, so an interrupted campaign still tells what it did.
    printf '%s: %d cases, %.0f s\n' "$t" "$done_cases" "$(echo "$(date +%s.%N) - $start" | bc)" >&2
    # Aim at chunks of about a minute, so the time limit is kept to within a minute.
    took=$(echo "$(date +%s.%N) - $t0" | bc)
    chunk=$(echo "c = $chunk * 60 / ($took + 0.01); if (c < 100) c = 100; if (c > 200000) c = 200000; c / 1" | bc)
  done
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  cpu1=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
  cpu=$(echo "($cpu1 - $cpu0) / $(getconf CLK_TCK)" | bc)
  printf '| %s | %d | %.0f | %s | %s |\n' "$t" "$done_cases" "$wall" "$cpu" "$result"
  rm -f "/tmp/fuzz-campaign.$$.log"
done
