#!/usr/bin/env bash
# scalelab's PostgreSQL driver against pgbench, side by side.
#
# One private PostgreSQL (pinned to CPU 1), a pgbench dataset, then for each
# script and client count, alternating runs of `pgbench -M MODE` and
# `scalelab load pg -M MODE` (both pinned to CPU 0, one client thread each;
# MODE is prepared, extended or simple, prepared by default). Client
# CPU (user + system) is measured the same way for both, with /usr/bin/time.
# Reports the median TPS, the client CPU seconds per 10k transactions, and
# the median per-round scalelab/pgbench ratios (want: TPS ratio >= 1, CPU
# ratio <= 1), also over the quiet rounds only (where the rest of the
# machine used < 25% of the CPUs in both runs). Per-run lines go to stderr.
# The server runs with synchronous_commit=off so tpcb-like measures the
# clients and the server's CPU, not this machine's fsync latency.
#
# Usage: bench/pg-vs-pgbench.sh [-M prepared|extended|simple]
# Environment: DURATION (s per run, 2), SCALE (10), CLIENTS ("1 4 16"),
#   SCRIPTS ("select-only tpcb-like"), ROUNDS (alternations, 6),
#   SERVER_CPU (1), CLIENT_CPU (0), SCALELAB (a prebuilt scalelab binary;
#   default: build target/release/scalelab), RPS (0; 1 runs the server and
#   both clients in a private network namespace whose lo steers receive work
#   to the reading socket's CPU, as between two machines: bench/rfs-netns.sh.
#   Report RPS=1 figures beside RPS=0 ones, never alone), COALESCE (unset;
#   1 adds scalelab's opt-in --coalesce: one wakeup per half the replies,
#   which pays only where the server is saturated), FLOOR (unset; 1 adds,
#   for select-only, a third client to each round: bench/floor-pg.c built
#   with cc, the least a client can do per transaction, with no clock,
#   histogram or checks, to show how low any client of this design could go),
#   SSL (unset; 1 serves TLS with a throwaway ECDSA P-256 certificate and
#   runs both clients with PGSSLMODE=require, which both read: TLS 1.3,
#   certificates not checked, one handshake per connection).
# Takes about 2 * 3 * 2 * ROUNDS * DURATION s plus setup: ~3 min by default.
set -euo pipefail

MODE=${MODE:-prepared}
while getopts "M:" opt; do
    case $opt in
    M) MODE=$OPTARG ;;
    *) echo "usage: $0 [-M prepared|extended|simple]" >&2; exit 2 ;;
    esac
done
case $MODE in
prepared | extended | simple) ;;
*) echo "-M $MODE: expected prepared, extended or simple" >&2; exit 2 ;;
esac

DURATION=${DURATION:-2}
SCALE=${SCALE:-10}
CLIENTS=${CLIENTS:-"1 4 16"}
SCRIPTS=${SCRIPTS:-"select-only tpcb-like"}
ROUNDS=${ROUNDS:-6}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
RPS=${RPS:-0}

cd "$(dirname "$0")/.."
# shellcheck source=bench/pg-server.sh
. bench/pg-server.sh
if [ -n "${FLOOR:-}" ]; then
    command -v cc >/dev/null || { echo "missing: cc (for FLOOR=1)" >&2; exit 1; }
fi
pg_server_start pg-vs-pgbench synchronous_commit=off
if [ "${SSL:-0}" = 1 ]; then
    export PGSSLMODE=require
    echo "TLS: PGSSLMODE=require for both clients" >&2
fi
if [ -n "${FLOOR:-}" ]; then
    FLOOR_BIN=$WORK/floor-pg
    cc -O2 -Wall -o "$FLOOR_BIN" bench/floor-pg.c
fi
echo "-M $MODE${COALESCE:+, scalelab --coalesce}" >&2
POSTMASTER=$(head -n 1 "$WORK/data/postmaster.pid")
HZ=$(getconf CLK_TCK)
NCPU=$(nproc)
# Busy ticks of all CPUs, and of the server: the postmaster, its reaped
# backends (cutime/cstime) and its live children.
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
server_ticks() {
    local t=0 p
    for p in $POSTMASTER $(pgrep -P "$POSTMASTER"); do
        t=$((t + $(awk '{print $14+$15+$16+$17}' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}

# run TOOL SCRIPT CLIENTS -> "tps transactions cpu_seconds other%", where
# other% is the share of all CPUs used by neither the client nor the
# server during the run: noise from the rest of the machine.
run() {
    local tool=$1 script=$2 clients=$3 out="$WORK/run.out" cpu="$WORK/cpu.out"
    local b0 s0 b1 s1
    b0=$(busy_ticks) s0=$(server_ticks)
    if [ "$tool" = pgbench ]; then
        local flag=()
        [ "$script" = select-only ] && flag=(-S)
        [ "$script" = simple-update ] && flag=(-N)
        taskset -c "$CLIENT_CPU" "${IN_NS[@]}" /usr/bin/time -f "%U %S %e" -o "$cpu" \
            pgbench -h 127.0.0.1 -p "$PORT" -U postgres -M "$MODE" "${flag[@]}" \
            -c "$clients" -j 1 -T "$DURATION" postgres >"$out" 2>&1
    elif [ "$tool" = floor ]; then
        taskset -c "$CLIENT_CPU" "${IN_NS[@]}" /usr/bin/time -f "%U %S %e" -o "$cpu" \
            "$FLOOR_BIN" "$PORT" "$clients" "$DURATION" "$SCALE" >"$out" 2>&1
        # The same two lines pgbench and scalelab print.
        awk '/^transactions/ { printf "tps = %f\nnumber of transactions actually processed: %d\n", $2 / $4, $2 }' \
            "$out" >"$out.2" && mv "$out.2" "$out"
    else
        taskset -c "$CLIENT_CPU" "${IN_NS[@]}" /usr/bin/time -f "%U %S %e" -o "$cpu" \
            "$SCALELAB" load pg "$CONN" --script "$script" -M "$MODE" -c "$clients" -j 1 ${COALESCE:+--coalesce} \
            -d "${DURATION}s" >"$out" 2>&1
    fi
    b1=$(busy_ticks) s1=$(server_ticks)
    local tps txns
    tps=$(awk '/^tps = / {print $3}' "$out")
    txns=$(awk -F': ' '/number of transactions actually processed/ {split($2, a, "/"); print a[1]}' "$out")
    awk -v tps="$tps" -v n="$txns" -v busy=$((b1 - b0)) -v srv=$((s1 - s0)) -v hz="$HZ" -v ncpu="$NCPU" \
        '{ cpu = $1 + $2; other = ((busy - srv) / hz - cpu) / (ncpu * $3) * 100
           printf "%s %s %.2f %.0f\n", tps, n, cpu, (other > 0 ? other : 0) }' "$cpu"
}

RESULTS="$WORK/results"
: >"$RESULTS"
for script in $SCRIPTS; do
    for clients in $CLIENTS; do
        for round in $(seq "$ROUNDS"); do
            # Alternate which tool goes first, so drift does not favour one.
            if [ $((round % 2)) = 1 ]; then order="pgbench scalelab"; else order="scalelab pgbench"; fi
            if [ -n "${FLOOR:-}" ] && [ "$script" = select-only ]; then order="$order floor"; fi
            for tool in $order; do
                read -r tps txns cpu other < <(run "$tool" "$script" "$clients")
                echo "$script $clients $tool $round tps=$tps txns=$txns cpu_s=$cpu other_load=$other%" >&2
                echo "$script $clients $tool $round $tps $txns $cpu $other" >>"$RESULTS"
            done
        done
    done
done

# Per (script, clients): the median TPS and CPU per 10k transactions of each
# tool, and the median of the per-round ratios (each round's two runs are
# adjacent, so the ratio cancels the machine's drift between rounds).
awk -v QUIET=25 '
function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    key = $1 " " $2
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    tps[key, $3] = tps[key, $3] " " $5
    cpu[key, $3] = cpu[key, $3] " " ($7 / $6 * 10000)
    r_tps[key, $4, $3] = $5
    r_cpu[key, $4, $3] = $7 / $6 * 10000
    r_other[key, $4, $3] = $8
    if ($3 == "floor" && (key, $4, "pgbench") in r_tps) {
        floor_tps[key] = floor_tps[key] " " r_tps[key, $4, "floor"] / r_tps[key, $4, "pgbench"]
        floor_cpu[key] = floor_cpu[key] " " r_cpu[key, $4, "floor"] / r_cpu[key, $4, "pgbench"]
    } else if ($3 != "floor" && (key, $4, "pgbench") in r_tps && (key, $4, "scalelab") in r_tps) {
        tr = r_tps[key, $4, "scalelab"] / r_tps[key, $4, "pgbench"]
        cr = r_cpu[key, $4, "scalelab"] / r_cpu[key, $4, "pgbench"]
        tps_ratio[key] = tps_ratio[key] " " tr
        cpu_ratio[key] = cpu_ratio[key] " " cr
        if (r_other[key, $4, "scalelab"] < QUIET && r_other[key, $4, "pgbench"] < QUIET) {
            quiet_tps[key] = quiet_tps[key] " " tr
            quiet_cpu[key] = quiet_cpu[key] " " cr
            quiet_n[key]++
        }
    }
}
END {
    printf "%-12s %7s | %11s %12s %7s | %11s %12s %7s | %s\n", "script", "clients", "pgbench", "scalelab", "TPS", "pgbench", "scalelab", "CPU", "quiet rounds"
    printf "%-12s %7s | %11s %12s %7s | %11s %12s %7s | %s\n", "", "", "TPS", "TPS", "ratio", "s/10k txn", "s/10k txn", "ratio", "TPS, CPU ratio"
    for (i = 1; i <= n; i++) {
        k = order[i]; split(k, p, " ")
        q = quiet_n[k] ? sprintf("%.2f, %.2f (%d)", median(quiet_tps[k]), median(quiet_cpu[k]), quiet_n[k]) : "none"
        printf "%-12s %7d | %11.0f %12.0f %7.2f | %11.3f %12.3f %7.2f | %s\n", p[1], p[2],
            median(tps[k, "pgbench"]), median(tps[k, "scalelab"]), median(tps_ratio[k]),
            median(cpu[k, "pgbench"]), median(cpu[k, "scalelab"]), median(cpu_ratio[k]), q
    }
    for (i = 1; i <= n; i++) {
        k = order[i]; split(k, p, " ")
        if (k in floor_tps)
            printf "%-12s %7d | floor-pg/pgbench: TPS %.2f, CPU %.2f (medians of per-round ratios)\n", p[1], p[2],
                median(floor_tps[k]), median(floor_cpu[k])
    }
    print "(TPS: higher is better; CPU s per 10k transactions: lower is better; ratios are"
    print " medians of per-round scalelab/pgbench; quiet rounds: other load < " QUIET "% in both runs)"
}' "$RESULTS"
