#!/usr/bin/env bash
# Two scalelab binaries' pg or mysql driver, side by side on one server: a
# before/after check of a driver change ("nothing measured changes").
#
# One private PostgreSQL (bench/pg-server.sh, synchronous_commit=off) or
# MariaDB (bench/mysql-server.sh) pinned to SERVER_CPU, then for each
# script and client count, alternating runs of `$A load KIND` and
# `$B load KIND` (A first in odd rounds, B first in even ones), both
# pinned to CLIENT_CPU with one client thread, in a session of their own.
# Client CPU (user + system) comes from /usr/bin/time. Reports the median
# TPS and client CPU s per 10k transactions of each, and the medians of the
# per-round B/A ratios (1.00: no change), also over the quiet rounds only
# (the rest of the machine used < 25% of the CPUs in both runs). Per-run
# lines go to stderr.
#
# Usage: A=path/to/scalelab-before B=path/to/scalelab-after bench/driver-ab.sh pg|mysql
# Environment: DURATION (s per run, 2), ROUNDS (6), CLIENTS ("1 8"),
#   SCRIPTS (pg: "select-only tpcb-like"; mysql: "oltp_point_select
#   oltp_read_only"), SCALE (pg, 10), TABLES (mysql, 4), TABLE_SIZE (mysql,
#   10000), SERVER_CPU (1), CLIENT_CPU (0).
# Takes about 2 * |SCRIPTS| * |CLIENTS| * ROUNDS * DURATION s plus setup.
# Run it under `flock target/bench.lock`.
set -euo pipefail

KIND=${1:-}
case $KIND in
pg | mysql) ;;
*) echo "usage: A=scalelab B=scalelab $0 pg|mysql" >&2; exit 2 ;;
esac
for bin in "${A:-}" "${B:-}"; do
    [ -x "$bin" ] || { echo "A and B must name two scalelab binaries (got '$bin')" >&2; exit 2; }
done
DURATION=${DURATION:-2}
ROUNDS=${ROUNDS:-6}
CLIENTS=${CLIENTS:-"1 8"}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
RPS=0
SCALE=${SCALE:-10}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-10000}
SCALELAB=$A

cd "$(dirname "$0")/.."
if [ "$KIND" = pg ]; then
    SCRIPTS=${SCRIPTS:-"select-only tpcb-like"}
    # shellcheck source=bench/pg-server.sh
    . bench/pg-server.sh
    pg_server_start driver-ab synchronous_commit=off
    TARGET=$CONN
    POSTMASTER=$(head -n 1 "$WORK/data/postmaster.pid")
    server_pids() { echo "$POSTMASTER" $(pgrep -P "$POSTMASTER"); }
else
    SCRIPTS=${SCRIPTS:-"oltp_point_select oltp_read_only"}
    # shellcheck source=bench/mysql-server.sh
    . bench/mysql-server.sh
    mysql_server_start driver-ab
    TARGET=$URL
    server_pids() { echo "$SERVER_PID"; }
fi
HZ=$(getconf CLK_TCK)
NCPU=$(nproc)
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
server_ticks() {
    local t=0 p
    for p in $(server_pids); do
        t=$((t + $(awk '{print $14+$15+$16+$17}' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}

# run BIN SCRIPT CLIENTS -> "tps transactions cpu_seconds other%"
run() {
    local bin=$1 script=$2 clients=$3 out="$WORK/run.out" cpu="$WORK/cpu.out" b0 s0 b1 s1
    b0=$(busy_ticks) s0=$(server_ticks)
    setsid taskset -c "$CLIENT_CPU" /usr/bin/time -f "%U %S %e" -o "$cpu" \
        "$bin" load "$KIND" "$TARGET" --script "$script" -c "$clients" -j 1 \
        -d "${DURATION}s" --json >"$out" 2>&1
    b1=$(busy_ticks) s1=$(server_ticks)
    python3 - "$out" "$cpu" $((b1 - b0)) $((s1 - s0)) "$HZ" "$NCPU" <<'PY'
import json, sys
out, cpu, busy, server, hz, ncpu = sys.argv[1:]
v = json.load(open(out))
user, system, elapsed = map(float, open(cpu).read().split()[-3:])
other = ((int(busy) - int(server)) / int(hz) - user - system) / (int(ncpu) * elapsed) * 100
print(v["tps"], v["transactions"], f"{user + system:.2f}", f"{max(other, 0):.0f}")
PY
}

RESULTS="$WORK/results"
: >"$RESULTS"
echo "A=$A" >&2
echo "B=$B" >&2
for script in $SCRIPTS; do
    for clients in $CLIENTS; do
        for round in $(seq "$ROUNDS"); do
            if [ $((round % 2)) = 1 ]; then order="A B"; else order="B A"; fi
            for side in $order; do
                if [ "$side" = A ]; then bin=$A; else bin=$B; fi
                read -r tps txns cpu other < <(run "$bin" "$script" "$clients")
                echo "$script $clients $side $round tps=$tps txns=$txns cpu_s=$cpu other_load=$other%" >&2
                echo "$script $clients $side $round $tps $txns $cpu $other" >>"$RESULTS"
            done
        done
    done
done

python3 - "$RESULTS" <<'PY'
import statistics, sys
QUIET = 25
runs, order = {}, []
for line in open(sys.argv[1]):
    script, clients, side, rnd, tps, txns, cpu, other = line.split()
    key = (script, int(clients))
    if key not in order:
        order.append(key)
    runs[key, int(rnd), side] = (float(tps), float(cpu) / float(txns) * 1e4, float(other))
med = statistics.median
print(f"{'script':<18} {'clients':>7} | {'A TPS':>9} {'B TPS':>9} {'B/A':>6} | {'A s/10k':>9} {'B s/10k':>9} {'B/A':>6} | quiet rounds: TPS, CPU B/A")
for key in order:
    rounds = sorted({r for (k, r, _) in runs if k == key})
    pairs = [(runs[key, r, "A"], runs[key, r, "B"]) for r in rounds if (key, r, "A") in runs and (key, r, "B") in runs]
    tps = [b[0] / a[0] for a, b in pairs]
    cpu = [b[1] / a[1] for a, b in pairs]
    quiet = [(b[0] / a[0], b[1] / a[1]) for a, b in pairs if a[2] < QUIET and b[2] < QUIET]
    q = f"{med(t for t, _ in quiet):.2f}, {med(c for _, c in quiet):.2f} ({len(quiet)})" if quiet else "none"
    print(f"{key[0]:<18} {key[1]:>7} | {med(a[0] for a, _ in pairs):>9.0f} {med(b[0] for _, b in pairs):>9.0f} {med(tps):>6.2f}"
          f" | {med(a[1] for a, _ in pairs):>9.3f} {med(b[1] for _, b in pairs):>9.3f} {med(cpu):>6.2f} | {q}")
print(f"(ratios: medians of per-round B/A; quiet rounds: other load < {QUIET}% in both runs)")
PY
