#!/usr/bin/env bash
# Stops a server started by scripts/host/pg-start.sh and removes its directory.
# Usage: scripts/host/pg-stop.sh DIR
set -euo pipefail
dir=${1:?usage: pg-stop.sh DIR (as printed by pg-start.sh)}
case "$dir" in
  /tmp/schedlab-pg-*) ;;
  *) echo "pg-stop: refusing to remove $dir (not a pg-start.sh directory)" >&2; exit 1 ;;
esac
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV | head -n1)
run=()
if [ "$(id -u)" = 0 ]; then run=(runuser -u postgres --); fi
"${run[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 20 stop >/dev/null 2>&1 || true
rm -rf "$dir"
echo "stopped and removed $dir"
