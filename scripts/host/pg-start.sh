#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server on 127.0.0.1 for pgbench runs by hand, the same way
# `schedlab host run --external pgbench` does internally (initdb into a temporary directory,
# trust auth, fsync off, listening on loopback only). Prints the directory and port; stop it
# with scripts/host/pg-stop.sh DIR. As root the server runs as the `postgres` user.
#
# Usage: scripts/host/pg-start.sh [PORT]      (default: a free port)
#   then: pgbench -h 127.0.0.1 -p PORT -U postgres -i -s 1 postgres
#         pgbench -h 127.0.0.1 -p PORT -U postgres -S -c 4 -j 1 -T 10 postgres
set -euo pipefail

bindir=""
for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
  if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then bindir=$d; break; fi
done
if [ -z "$bindir" ]; then
  echo "pg-start: PostgreSQL server binaries not found; apt-get install postgresql" >&2
  exit 1
fi

port=${1:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
dir=$(mktemp -d /tmp/schedlab-pg-XXXXXX)
run=()
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$dir"
  run=(runuser -u postgres --)
fi
"${run[@]}" "$bindir/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1 || {
  echo "pg-start: initdb failed, see $dir/initdb.log" >&2
  exit 1
}
"${run[@]}" "$bindir/pg_ctl" -D "$dir/data" \
  -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c fsync=off" \
  -l "$dir/log" -w -t 30 start >/dev/null
echo "dir=$dir"
echo "port=$port"
