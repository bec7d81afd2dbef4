#!/usr/bin/env bash
# Builds schedlab with profile-guided optimisation (PGO) into target/pgo/release/schedlab.
#
# Why: the simulator's hot path is branchy interpreter and scheduler code, where knowing
# which way branches go lets LLVM lay code out and inline far better (docs/performance.md,
# "PGO", has the figures). The profile comes from the tool's own main jobs, not from the
# `bench` scenarios that measure it: `compare` on built-in defaults and `validate --quick`
# (eight eras, CFS and EEVDF, four presets, hackbench/tbench/aim7/numa_test models).
#
# Usage: scripts/pgo-build.sh            (about 5 minutes on 2 cores)
#        target/pgo/release/schedlab bench
# Needs the llvm-tools rustup component matching rustc's LLVM; it is installed if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
data="$root/target/pgo-data"
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    echo "== installing the llvm-tools component (for llvm-profdata)"
    rustup component add llvm-tools
fi

echo "== 1/4 instrumented build (target/pgo-gen)"
rm -rf "$data"
mkdir -p "$data"
RUSTFLAGS="-Cprofile-generate=$data" cargo build --release --bin schedlab --target-dir target/pgo-gen

echo "== 2/4 training runs: compare, validate --quick"
gen=target/pgo-gen/release/schedlab
export LLVM_PROFILE_FILE="$data/schedlab-%p-%m.profraw"
"$gen" compare >/dev/null
# --no-fail: the reduced validation reports failing checks (its sizes are reduced) and the
# profile wants the runs, not the verdict; without it the script stopped here.
"$gen" validate --quick --no-fail >/dev/null

echo "== 3/4 merging profiles"
"$profdata" merge -o "$data/merged.profdata" "$data"/*.profraw

echo "== 4/4 optimised build (target/pgo)"
unset LLVM_PROFILE_FILE
SCHEDLAB_BUILD="release+PGO (trained on compare, validate --quick)" \
    RUSTFLAGS="-Cprofile-use=$data/merged.profdata" \
    cargo build --release --bin schedlab --target-dir target/pgo
echo "built target/pgo/release/schedlab; try: target/pgo/release/schedlab bench --repeat 3"
