#!/usr/bin/env bash
# `scalelab load pg -f custom.sql` against `pgbench -f custom.sql`, each as
# its users type it: no -M, so each tool's default protocol (pgbench's is
# simple; `load pg`'s is simple too since issue 41, which found 38.2k tps
# against 19.3k when it was prepared). One private PostgreSQL pinned to
# SERVER_CPU, both clients pinned to CLIENT_CPU with one thread, ROUNDS
# alternating runs of each (A B A B), the median tps of each and the
# median per-round ratio scalelab/pgbench. Per-run lines go to stderr.
#
# Usage: bench/pg-custom-defaults.sh
# Environment: DURATION (s per run, 5), CLIENTS (4), ROUNDS (6), SCALE (10),
#   SERVER_CPU (1), CLIENT_CPU (0), SCALELAB (a prebuilt scalelab binary;
#   default: build target/release/scalelab).
# Takes about 2 * ROUNDS * DURATION s plus setup: ~1.5 min by default.
set -euo pipefail

DURATION=${DURATION:-5}
CLIENTS=${CLIENTS:-4}
ROUNDS=${ROUNDS:-6}
SCALE=${SCALE:-10}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
RPS=0

cd "$(dirname "$0")/.."
# shellcheck source=bench/pg-server.sh
. bench/pg-server.sh
pg_server_start pg-custom-defaults

cat >"$WORK/custom.sql" <<EOF
\set aid random(1, $((100000 * SCALE)))
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
EOF
chmod 644 "$WORK/custom.sql"

tps_of() { sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -n 1; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

pg=() sl=() ratios=()
for ((round = 1; round <= ROUNDS; round++)); do
    a=$(taskset -c "$CLIENT_CPU" pgbench -n -f "$WORK/custom.sql" -c "$CLIENTS" -j 1 \
        -T "$DURATION" -h 127.0.0.1 -p "$PORT" -U postgres postgres 2>/dev/null | tps_of)
    b=$(taskset -c "$CLIENT_CPU" "$SCALELAB" load pg -n -f "$WORK/custom.sql" -c "$CLIENTS" -j 1 \
        -T "$DURATION" -h 127.0.0.1 -p "$PORT" -U postgres postgres | tps_of)
    echo "round $round: pgbench -f ${a} tps, scalelab load pg -f ${b} tps (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    pg+=("$a") sl+=("$b")
    ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')")
done
printf 'median tps: pgbench -f %s, scalelab load pg -f %s; median ratio scalelab/pgbench %s (%d rounds of %s s, %s clients, simple protocol both)\n' \
    "$(printf '%s\n' "${pg[@]}" | median)" "$(printf '%s\n' "${sl[@]}" | median)" \
    "$(printf '%s\n' "${ratios[@]}" | median)" "$ROUNDS" "$DURATION" "$CLIENTS"
