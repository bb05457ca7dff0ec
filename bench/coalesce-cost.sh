#!/usr/bin/env bash
# What `--coalesce` costs where the server is NOT saturated: the reason it
# is opt-in and recipes never use it.
#
# The server is a small keep-alive HTTP/1.1 server (Python asyncio, inline
# below, pinned to CPU 1 on a free loopback port) that answers each request
# after a random delay, uniform in 0.2..1.8 x DELAY_MS, spent asleep, not
# on its CPU: a latency-bound server, like one waiting on a disk or a
# network hop, whose replies trickle in one by one. Against it, alternating
# A B A B with the client on CPU 0:
#   A: scalelab load http -t1 -cCONNS           (blocks in epoll_wait)
#   B: scalelab load http -t1 -cCONNS --coalesce (waits for half the replies)
# and prints per run req/s, mean latency, the client's CPU per request and
# the server's CPU share, then the median ratios B/A. In a closed loop a
# reply the client holds back is time its connection sends nothing, so B's
# throughput falls; with nginx or PostgreSQL saturated on CPU 1 it does not
# (bench/http-vs-wrk.sh, bench/pg-vs-pgbench.sh with COALESCE=1).
#
# Usage: bench/coalesce-cost.sh
# Environment: ROUNDS (4), SECS (3), CONNS (50), DELAY_MS (5), SCALELAB (a
# prebuilt binary; default: build target/release/scalelab).
# Takes about 2 * ROUNDS * (SECS + 1) s.
set -euo pipefail

ROUNDS=${ROUNDS:-4}
SECS=${SECS:-3}
CONNS=${CONNS:-50}
DELAY_MS=${DELAY_MS:-5}
for tool in taskset python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (scripts/setup.sh installs it)" >&2; exit 2; }
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/scalelab-bin.sh
. "$ROOT/bench/scalelab-bin.sh"

WORK=$(mktemp -d /tmp/scalelab-coalesce-cost.XXXXXX)
SERVER_PID=
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$WORK/server.py" <<'EOF'
import asyncio, random, sys
DELAY = float(sys.argv[1]) / 1000
RESP = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}"
async def handle(r, w):
    try:
        while True:
            await r.readuntil(b"\r\n\r\n")
            await asyncio.sleep(DELAY * random.uniform(0.2, 1.8))
            w.write(RESP)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        w.close()
async def main():
    s = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    print(s.sockets[0].getsockname()[1], flush=True)
    async with s:
        await s.serve_forever()
asyncio.run(main())
EOF
taskset -c 1 python3 "$WORK/server.py" "$DELAY_MS" >"$WORK/port" &
SERVER_PID=$!
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")
URL="http://127.0.0.1:$PORT/"
echo "delay server (asleep ${DELAY_MS} ms x U(0.2, 1.8) per request) on CPU 1, $URL; client on CPU 0"
echo "$ROUNDS rounds x ${SECS}s, -t1 -c$CONNS, alternating plain / --coalesce"

ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
run_one() { # MODE ROUND
    local flag=() a b
    [ "$1" = coalesce ] && flag=(--coalesce)
    a=$(ticks)
    /usr/bin/time -f '%U %S' -o "$WORK/time" taskset -c 0 \
        "$SCALELAB" load http -t1 -c"$CONNS" -d"${SECS}s" --json "${flag[@]}" "$URL" >"$WORK/out.json"
    b=$(ticks)
    python3 - "$1" "$2" "$WORK/out.json" "$WORK/time" "$((b - a))" "$SECS" "$(getconf CLK_TCK)" <<'EOF' | tee -a "$WORK/rows"
import json, sys
mode, rnd, out, tm, ticks, secs, hz = sys.argv[1:]
j = json.load(open(out))
user, sys_ = map(float, open(tm).read().split())
errors = sum(j["errors"].values())
cpu_us = (user + sys_) * 1e6 / max(j["requests"], 1)
server = int(ticks) / int(hz) / float(secs) * 100
print(f"{mode}\t{rnd}\t{j['rps']:.0f}\t{j['latency_us']['mean']:.0f}\t{cpu_us:.2f}\t{server:.0f}\t{errors}")
EOF
}
for r in $(seq "$ROUNDS"); do
    run_one plain "$r"
    run_one coalesce "$r"
done
python3 - "$WORK/rows" <<'EOF'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
by = {m: [r for r in rows if r[0] == m] for m in ("plain", "coalesce")}
print(f"\n{'mode':10}{'req/s':>10}{'mean lat us':>13}{'client us/req':>15}{'server CPU %':>14}{'errors':>8}")
for m, rs in by.items():
    med = lambda i: statistics.median(float(r[i]) for r in rs)
    print(f"{m:10}{med(2):>10.0f}{med(3):>13.0f}{med(4):>15.2f}{med(5):>14.0f}{sum(int(r[6]) for r in rs):>8}")
pairs = list(zip(by["plain"], by["coalesce"]))
ratio = lambda i: statistics.median(float(c[i]) / float(p[i]) for p, c in pairs)
print(f"coalesce/plain, median of {len(pairs)} pairs: req/s {ratio(2):.2f}x, "
      f"mean latency {ratio(3):.2f}x, client CPU per request {ratio(4):.2f}x")
EOF
