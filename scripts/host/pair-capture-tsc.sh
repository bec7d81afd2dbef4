#!/usr/bin/env bash
# Captures the one-CPU pipe pair with sched_switch and sched_wakeup under the x86-tsc trace
# clock (raw cycles), for scripts/eevdf-pair-replay.py.
#
# Why: `schedlab host capture` records with the `mono` clock, which ftrace prints at 1 µs;
# the pair's operations take a few µs, so the replay's vruntime arithmetic needs the cycle
# clock. Needs root and tracefs; every tracefs setting touched is put back on exit.
#
# Usage: scripts/host/pair-capture-tsc.sh OUT.txt [LOOPS]        (default 5000 round trips)
#        TSC_MHZ=$(scripts/host/pair-capture-tsc.sh --mhz) scripts/eevdf-pair-replay.py OUT.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
mhz() { # the kernel's own TSC calibration, from the boot log or cpuinfo
    dmesg 2>/dev/null | sed -n 's/.*tsc: Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p' | tail -1 |
        grep . || dmesg 2>/dev/null | sed -n 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' | tail -1 | grep . ||
        awk -F: '/cpu MHz/ {gsub(/ /, "", $2); print $2; exit}' /proc/cpuinfo
}
[ "${1:-}" = --mhz ] && { mhz; exit 0; }
[ $# -ge 1 ] || { sed -n 's/^# \{0,1\}//p' "$0" | sed -n '/^Usage/,/^$/p' >&2; exit 2; }
out=$1 loops=${2:-5000}
bin=${BIN:-target/release/schedlab}
[ -x "$bin" ] || { echo "no $bin: cargo build --release first, or set BIN" >&2; exit 2; }
t=/sys/kernel/tracing
mounted=
if [ ! -e "$t/trace" ]; then mount -t tracefs nodev "$t" && mounted=1; fi
grep -q x86-tsc "$t/trace_clock" || { echo "this kernel's trace_clock has no x86-tsc" >&2; exit 2; }
clock=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$t/trace_clock")
restore() {
    echo 0 >"$t/tracing_on"; echo 0 >"$t/events/sched/sched_switch/enable"
    echo 0 >"$t/events/sched/sched_wakeup/enable"; echo "$clock" >"$t/trace_clock"; : >"$t/trace"
    [ -z "$mounted" ] || umount "$t"
}
trap restore EXIT
echo 0 >"$t/tracing_on"; echo x86-tsc >"$t/trace_clock"; : >"$t/trace"
echo 1 >"$t/events/sched/sched_switch/enable"; echo 1 >"$t/events/sched/sched_wakeup/enable"
echo 1 >"$t/tracing_on"
"$bin" host run "pipe:loops=$loops,cpu_a=0,cpu_b=0" >/dev/null
echo 0 >"$t/tracing_on"
cp "$t/trace" "$out"
echo "$out: $(grep -c sched_wakeup: "$out") wakeups; TSC $(mhz) MHz" >&2
