#!/usr/bin/env bash
# Syscalls per operation: scalelab's drivers beside their peers, counted by
# `strace -c -f` (which slows every tool alike; the counts per request or
# transaction are what matter, not the rates).
#
#   http keepalive:  wrk -t1 -cC                    vs  scalelab load http -t1 -cC
#   http close:      wrk ... -H 'Connection: close' vs  scalelab ... --connreqs 1
#   pg select-only:  pgbench -M prepared -S -cN -j1 vs  scalelab load pg --script select-only -cN -j1
#
# Starts its own nginx (1 worker, CPU 1) and PostgreSQL (CPU 1) in a
# private tempdir on loopback ports; clients run on CPU 0. Prints, per case
# and tool: operations, syscalls, syscalls per operation, and the four
# commonest syscalls per operation.
#
# Usage: bench/syscalls.sh      Environment: SECS (3), CONNS (50), PG_CLIENTS ("4 16"),
#   COALESCE (unset; 1 adds scalelab's opt-in --coalesce)
set -euo pipefail

SECS=${SECS:-3}
CONNS=${CONNS:-50}
PG_CLIENTS=${PG_CLIENTS:-"4 16"}
for tool in strace wrk pgbench nginx taskset python3; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (scripts/setup.sh installs it)" >&2; exit 2; }
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/scalelab-bin.sh
. "$ROOT/bench/scalelab-bin.sh"
BIN_DIR=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)

WORK=$(mktemp -d /tmp/scalelab-syscalls.XXXXXX)
chmod 755 "$WORK"
AS_PG=()
NGINX_PID=
cleanup() {
    [ -n "$NGINX_PID" ] && kill -QUIT "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null
    [ -d "$WORK/data" ] && "${AS_PG[@]}" "$BIN_DIR/pg_ctl" -D "$WORK/data" -m fast -w stop >/dev/null 2>&1
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

HTTP_PORT=$(free_port)
cat >"$WORK/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 10000; }
http {
    access_log off;
    client_body_temp_path $WORK/cb; proxy_temp_path $WORK/px; fastcgi_temp_path $WORK/fc;
    uwsgi_temp_path $WORK/uw; scgi_temp_path $WORK/sc;
    keepalive_requests 1000000;
    server { listen 127.0.0.1:$HTTP_PORT backlog=4096; location = / { return 200 "{}"; } }
}
EOF
taskset -c 1 nginx -p "$WORK" -c "$WORK/nginx.conf" &
NGINX_PID=$!
URL="http://127.0.0.1:$HTTP_PORT/"

PG_PORT=$(free_port)
if [ "$(id -u)" = 0 ]; then
    chown postgres "$WORK"
    AS_PG=(runuser -u postgres --)
fi
"${AS_PG[@]}" "$BIN_DIR/initdb" -D "$WORK/data" -U postgres --auth=trust --no-sync >/dev/null
taskset -c 1 "${AS_PG[@]}" "$BIN_DIR/pg_ctl" -D "$WORK/data" -l "$WORK/pg.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$WORK -c synchronous_commit=off" \
    start >/dev/null
pgbench -i -q -s 10 -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres 2>/dev/null
CONN="host=127.0.0.1 port=$PG_PORT user=postgres dbname=postgres"
curl -sf -o /dev/null "$URL" || { echo "nginx did not answer at $URL" >&2; exit 1; }

# count CASE TOOL CMD...: runs CMD under strace on CPU 0 and prints one row.
count() {
    local case=$1 tool=$2
    shift 2
    taskset -c 0 strace -c -f -o "$WORK/strace.txt" "$@" >"$WORK/out.txt" 2>&1
    python3 - "$case" "$tool" "$WORK/out.txt" "$WORK/strace.txt" <<'PY'
import re, sys
case, tool, out, st = sys.argv[1:]
text = open(out).read()
patterns = [r"(\d+) requests in", r'"requests":\s*(\d+)', r"number of transactions actually processed: (\d+)",
            r"transactions:\s+(\d+)", r"requests:\s+(\d+)"]
ops = next((int(m.group(1)) for p in patterns if (m := re.search(p, text))), 0)
calls = {}
for line in open(st):
    f = line.split()
    if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
        calls[f[-1]] = int(f[3])
total = sum(calls.values())
top = sorted(calls.items(), key=lambda kv: -kv[1])[:4]
per = lambda n: n / ops if ops else float("nan")
tops = "  ".join(f"{name} {per(n):.2f}" for name, n in top)
print(f"{case:<22}{tool:<10}{ops:>10}{total:>10}{per(total):>9.2f}   {tops}")
PY
}

echo "nginx and PostgreSQL on CPU 1, clients on CPU 0, ${SECS}s per run under strace -c -f"
printf "%-22s%-10s%10s%10s%9s   %s\n" case tool ops syscalls per-op "commonest per op"
count "http keepalive c$CONNS" wrk wrk -t1 -c"$CONNS" -d"${SECS}s" "$URL"
count "http keepalive c$CONNS" scalelab "$SCALELAB" load http -t1 -c"$CONNS" -d"${SECS}s" --json ${COALESCE:+--coalesce} "$URL"
count "http close c$CONNS" wrk wrk -t1 -c"$CONNS" -d"${SECS}s" -H 'Connection: close' "$URL"
count "http close c$CONNS" scalelab "$SCALELAB" load http -t1 -c"$CONNS" -d"${SECS}s" --connreqs 1 --json ${COALESCE:+--coalesce} "$URL"
for c in $PG_CLIENTS; do
    count "pg select-only c$c" pgbench pgbench -h 127.0.0.1 -p "$PG_PORT" -U postgres -M prepared -S -c"$c" -j1 -T"$SECS" postgres
    count "pg select-only c$c" scalelab "$SCALELAB" load pg "$CONN" --script select-only -c"$c" -j1 -d"${SECS}s" ${COALESCE:+--coalesce}
done
echo "(ops: requests or transactions completed; per-op: syscalls per operation, lower is better)"
