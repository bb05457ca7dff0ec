#!/usr/bin/env bash
# scalelab's MySQL driver against sysbench, side by side on one MariaDB.
#
# One private MariaDB (pinned to CPU 1) with sysbench's own dataset
# (`sysbench oltp_read_only prepare`), then for each script, alternating runs
# of `sysbench SCRIPT run --threads=N` and `scalelab load mysql --script
# SCRIPT -c N [-j THREADS]` (both pinned to CPU 0), after an unrecorded
# warm-up of both (the buffer pool and InnoDB's adaptive hash index fill
# during the first seconds, which made early rounds slower). Client CPU
# (user + system) is measured the same way for both, with /usr/bin/time;
# the server's CPU from its /proc ticks. Reports the median TPS, the client
# CPU seconds per 10k transactions, the median per-pair scalelab/sysbench
# ratios (want: TPS ratio >= 1, CPU ratio <= 1), also over the quiet pairs
# only (where the rest of the machine used < 25% of the CPUs in both runs)
# with the server CPU per transaction ratio beside them, and every pair's
# TPS ratio. Per-run lines go to stderr.
#
# THREADS is scalelab's -j. Left unset, no -j is given: scalelab runs what a
# user gets by default, one thread per connection up to the CPUs it may run
# on, which pinned to CLIENT_CPU is one thread, an event loop over all N
# connections (a thread with a single connection blocks in read instead, as
# each of sysbench's --threads=N does). The summary says which -j ran.
# Fewer client threads mean fewer sleeping threads for the server to wake:
# bench/mysql-txn-budget.sh measures what each -j costs the server.
#
# Each tool and the server run in a session (autogroup) of their own, see
# bench/mysql-server.sh: otherwise another session's load (a build, even
# niced) takes CLIENT_CPU from a one-thread client far more than from
# sysbench's eight threads.
#
# Usage: bench/mysql-vs-sysbench.sh
# Environment: DURATION (s per run, 3), WARMUP (s per tool and script, 5;
#   0: none), TABLES (4), TABLE_SIZE (10000), CONNECTIONS ("8"),
#   SCRIPTS ("oltp_read_only oltp_point_select"), ROUNDS (pairs, 3),
#   THREADS (scalelab's -j; default: scalelab's own, 1 when pinned to one
#   CPU), SERVER_CPU (1),
#   CLIENT_CPU (0), SCALELAB (a prebuilt scalelab binary; default: build
#   target/release/scalelab), COALESCE (unset; 1 adds scalelab's opt-in
#   --coalesce), SSL (unset; 1 serves TLS with a throwaway ECDSA P-256
#   certificate and runs sysbench with --mysql-ssl=on and scalelab with
#   --mysql-ssl on: TLS, certificates not checked).
# Each run also prints the server's read- and write-family calls per
# transaction (/proc/PID/io). Over TLS they are its socket calls, so equal
# counts mean the two clients made the server do the same I/O: measured
# 2026-12-08 (SSL=1 ROUNDS=4, all pairs quiet), 47.9-48.0 reads and 16.03-
# 16.05 writes per oltp_read_only transaction and 2.99 and 1.00 per
# oltp_point_select transaction with either client, TPS ratios 1.02x and
# 0.93x (server CPU per transaction 0.98x and 1.08x). Both negotiate
# TLS 1.3 with AES-256-GCM, and the server's cpu-clock profile splits the
# same way by library with either (kernel 52-53%, mariadbd 31%, libcrypto
# 6.4-6.7%, libssl 2.9-3.2%), so point_select's gap is not in TLS work.
# Takes about 2 * |SCRIPTS| * (ROUNDS * DURATION + WARMUP) s plus ~15 s of
# setup (ROUNDS=4: ~75 s). Run it under `flock target/bench.lock`.
set -euo pipefail

DURATION=${DURATION:-3}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-10000}
CONNECTIONS=${CONNECTIONS:-"8"}
SCRIPTS=${SCRIPTS:-"oltp_read_only oltp_point_select"}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-5}
THREADS=${THREADS:-}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}

cd "$(dirname "$0")/.."
# shellcheck source=bench/mysql-server.sh
. bench/mysql-server.sh
if [ -n "${COALESCE:-}" ]; then echo "scalelab runs with --coalesce" >&2; fi
mysql_server_start mysql-vs-sysbench
SSL_ARG=()
if [ "${SSL:-0}" = 1 ]; then
    SB+=(--mysql-ssl=on)
    SSL_ARG=(--mysql-ssl on)
    echo "TLS: sysbench --mysql-ssl=on, scalelab --mysql-ssl on" >&2
fi

HZ=$(getconf CLK_TCK)
NCPU=$(nproc)
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
server_ticks() { awk '{print $14+$15}' "/proc/$SERVER_PID/stat"; }
# The server's read- and write-family calls (its task I/O accounting, free
# to read). Over TLS, OpenSSL's socket BIO reads and writes with read(2)
# and write(2), so these are the server's socket calls; in cleartext
# MariaDB uses recv and send, which are neither.
server_io() { awk '/^syscr:/ {r = $2} /^syscw:/ {w = $2} END {print r, w}' "/proc/$SERVER_PID/io"; }

# run TOOL SCRIPT CONNECTIONS SECONDS -> "tps transactions cpu_s server_s other% threads"
run() {
    local tool=$1 script=$2 conns=$3 secs=$4 out="$WORK/run.out" cpu="$WORK/cpu.out"
    local b0 s0 b1 s1 tps txns threads
    local r0 w0 r1 w1
    b0=$(busy_ticks) s0=$(server_ticks)
    read -r r0 w0 < <(server_io)
    if [ "$tool" = sysbench ]; then
        # In $WORK: sysbench 1.0 reads its TLS files from where it runs.
        (cd "$WORK" && setsid taskset -c "$CLIENT_CPU" /usr/bin/time -f "%U %S %e" -o "$cpu" \
            sysbench "${SB[@]}" --threads="$conns" --time="$secs" "$script" run >"$out" 2>&1)
        txns=$(awk '/transactions:/ {print $2}' "$out")
        tps=$(awk '/transactions:/ {gsub(/\(/, "", $3); print $3}' "$out")
        threads=$conns
    else
        setsid taskset -c "$CLIENT_CPU" /usr/bin/time -f "%U %S %e" -o "$cpu" \
            "$SCALELAB" load mysql "$URL" --script "$script" -c "$conns" ${THREADS:+-j "$THREADS"} ${COALESCE:+--coalesce} "${SSL_ARG[@]}" \
            -d "${secs}s" --json >"$out" 2>&1
        read -r txns tps threads < <(python3 -c 'import json,sys; v = json.load(open(sys.argv[1]))
print(v["transactions"], v["tps"], v["threads"])' "$out")
    fi
    b1=$(busy_ticks) s1=$(server_ticks)
    read -r r1 w1 < <(server_io)
    awk -v n="$txns" -v r=$((r1 - r0)) -v w=$((w1 - w0)) -v tool="$tool" \
        'BEGIN { printf "  %s: server read calls %.2f, write calls %.2f per transaction\n", tool, r / n, w / n > "/dev/stderr" }'
    awk -v tps="$tps" -v n="$txns" -v busy=$((b1 - b0)) -v srv=$((s1 - s0)) -v hz="$HZ" -v ncpu="$NCPU" \
        -v threads="$threads" \
        '{ cpu = $1 + $2; other = ((busy - srv) / hz - cpu) / (ncpu * $3) * 100
           printf "%s %s %.2f %.2f %.0f %s\n", tps, n, cpu, srv / hz, (other > 0 ? other : 0), threads }' "$cpu"
}

RESULTS="$WORK/results"
: >"$RESULTS"
for script in $SCRIPTS; do
    for conns in $CONNECTIONS; do
        # Unrecorded warm-up of both tools: InnoDB's buffer pool and
        # adaptive hash index fill, so the rounds do not drift upwards.
        if [ "$WARMUP" -gt 0 ]; then
            for tool in sysbench scalelab; do
                read -r tps _ < <(run "$tool" "$script" "$conns" "$WARMUP")
                echo "$script $conns $tool warm-up tps=$tps (not recorded)" >&2
            done
        fi
        for round in $(seq "$ROUNDS"); do
            # Alternate which tool goes first, so drift does not favour one.
            if [ $((round % 2)) = 1 ]; then order="sysbench scalelab"; else order="scalelab sysbench"; fi
            for tool in $order; do
                read -r tps txns cpu srv other threads < <(run "$tool" "$script" "$conns" "$DURATION")
                echo "$script $conns $tool $round tps=$tps txns=$txns cpu_s=$cpu server_s=$srv threads=$threads other_load=$other%" >&2
                echo "$script $conns $tool $round $tps $txns $cpu $srv $other $threads" >>"$RESULTS"
            done
        done
    done
done

awk -v QUIET=25 "$AWK_MEDIAN"'
{
    key = $1 " " $2
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    if ($3 == "scalelab") j[key] = $10
    tps[key, $3] = tps[key, $3] " " $5
    cpu[key, $3] = cpu[key, $3] " " ($7 / $6 * 10000)
    r_tps[key, $4, $3] = $5
    r_cpu[key, $4, $3] = $7 / $6 * 10000
    r_srv[key, $4, $3] = $8 / $6 * 10000
    r_other[key, $4, $3] = $9
    if ((key, $4, "sysbench") in r_tps && (key, $4, "scalelab") in r_tps) {
        tr = r_tps[key, $4, "scalelab"] / r_tps[key, $4, "sysbench"]
        cr = r_cpu[key, $4, "scalelab"] / r_cpu[key, $4, "sysbench"]
        sr = r_srv[key, $4, "scalelab"] / r_srv[key, $4, "sysbench"]
        tps_ratio[key] = tps_ratio[key] " " tr
        cpu_ratio[key] = cpu_ratio[key] " " cr
        quiet = r_other[key, $4, "scalelab"] < QUIET && r_other[key, $4, "sysbench"] < QUIET
        pairs[key] = pairs[key] sprintf(" %.2f%s", tr, quiet ? "" : "*")
        if (quiet) {
            quiet_tps[key] = quiet_tps[key] " " tr
            quiet_cpu[key] = quiet_cpu[key] " " cr
            quiet_srv[key] = quiet_srv[key] " " sr
            quiet_n[key]++
        }
    }
}
END {
    printf "%-18s %5s %3s | %9s %9s %6s | %10s %10s %6s | %s\n", "script", "conns", "-j", "sysbench", "scalelab", "TPS", "sysbench", "scalelab", "CPU", "quiet pairs"
    printf "%-18s %5s %3s | %9s %9s %6s | %10s %10s %6s | %s\n", "", "", "", "TPS", "TPS", "ratio", "s/10k txn", "s/10k txn", "ratio", "TPS, CPU, server CPU ratio"
    for (i = 1; i <= n; i++) {
        k = order[i]; split(k, p, " ")
        q = quiet_n[k] ? sprintf("%.2f, %.2f, %.2f (%d)", median(quiet_tps[k]), median(quiet_cpu[k]), median(quiet_srv[k]), quiet_n[k]) : "none"
        printf "%-18s %5d %3d | %9.0f %9.0f %6.2f | %10.3f %10.3f %6.2f | %s\n", p[1], p[2], j[k],
            median(tps[k, "sysbench"]), median(tps[k, "scalelab"]), median(tps_ratio[k]),
            median(cpu[k, "sysbench"]), median(cpu[k, "scalelab"]), median(cpu_ratio[k]), q
    }
    print "(TPS: higher is better; CPU s per 10k transactions: lower is better; ratios are"
    print " medians of per-pair scalelab/sysbench; quiet pairs: other load < " QUIET "% in both runs;"
    print " server CPU: mariadbd s per transaction, from /proc ticks)"
    print "TPS ratio of each pair, in order (* = not quiet):"
    for (i = 1; i <= n; i++) printf "  %-24s%s\n", order[i], pairs[order[i]]
}' "$RESULTS"
