#!/usr/bin/env bash
# What one transaction costs the server and the client, for sysbench and for
# scalelab's MySQL driver at several thread counts (-j), on one MariaDB:
# why the client's thread count changes the *server's* cost.
#
# One private MariaDB (pinned to SERVER_CPU) with sysbench's dataset
# (bench/mysql-server.sh), then for each script ROUNDS rounds, each running
# every variant once (in rotated order, so drift favours none): `sysbench
# --threads=CONNECTIONS` and `scalelab load mysql -c CONNECTIONS -j J` for
# each J in THREADS, all pinned to CLIENT_CPU. Each run lasts 2 * WINDOW + 2
# s and is measured inside, not at its edges:
#   window 1 (untouched): transactions (the server's Com_stmt_execute over
#     the statements per transaction), the server's and the client's time
#     on CPU (/proc/PID/task/*/schedstat) and context switches (their
#     threads' voluntary + involuntary ctxt_switches), how SERVER_CPU
#     spent its time (/proc/stat: idle, softirq), and TCP segments
#     (/proc/net/snmp InSegs: every segment on loopback, so other loopback
#     traffic adds to it);
#   window 2 (perf stat counting per CPU, bracketed by two reads of
#     Com_stmt_execute inside the counted span): the wakeups issued on each
#     CPU (sched:sched_waking) and the IPIs taken there (reschedule and
#     call-function-single interrupts: waking a thread that sleeps on the
#     other CPU sends one).
# Prints per run and, at the end, the medians per (script, variant) of:
#   tps, srv_us and cl_us (on-CPU us per transaction), ksoft_us (the same
#   for the two CPUs' ksoftirqd threads), srv_idle and srv_sirq (% of
#   SERVER_CPU), srv_cs and cl_cs, wake_s and wake_c (wakeups issued on the
#   server's and the client's CPU), ipi_s and ipi_c (IPIs taken there), segs
#   (TCP segments both ways), all per transaction; other_load (% of all
#   CPUs used by none of them).
#
# What it shows on this machine (2 vCPUs, quiet): the server's context
# switches per statement are the same for every client (each server thread
# sleeps after each reply), but a reply whose client thread is asleep costs
# SERVER_CPU about 2 us more (waking it, and the IPI to CLIENT_CPU). One
# thread per connection (sysbench, or -j 8) sleeps before every reply; one
# event loop over all connections (-j 1) is still busy with another
# connection for about half of them, so the server wakes it about half as
# often and spends 3-6% less CPU per transaction.
#
# Usage: bench/mysql-txn-budget.sh
# Environment: THREADS (scalelab -j values, "1 2 4 8"), CONNECTIONS (8),
#   SCRIPTS ("oltp_read_only oltp_point_select"), ROUNDS (2), WINDOW (s, 2),
#   WARMUP (s of unrecorded sysbench before each script, 5), TABLES (4),
#   TABLE_SIZE (10000), SERVER_CPU (1), CLIENT_CPU (0), SCALELAB (a prebuilt
#   binary; default: build target/release/scalelab).
# Takes about |SCRIPTS| * (ROUNDS * (|THREADS| + 1) * (2 * WINDOW + 3) +
# WARMUP) s plus ~15 s of setup: ~2.5 min by default. Run it under
# `flock target/bench.lock`.
set -euo pipefail

THREADS=${THREADS:-"1 2 4 8"}
CONNECTIONS=${CONNECTIONS:-8}
SCRIPTS=${SCRIPTS:-"oltp_read_only oltp_point_select"}
ROUNDS=${ROUNDS:-2}
WINDOW=${WINDOW:-2}
WARMUP=${WARMUP:-5}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-10000}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}

cd "$(dirname "$0")/.."
# shellcheck source=bench/mysql-server.sh
. bench/mysql-server.sh
command -v perf >/dev/null || { echo "missing: perf (scripts/setup.sh installs linux-perf)" >&2; exit 2; }
mysql_server_start mysql-txn-budget

# Statements each script's transaction executes (BEGIN and COMMIT are
# prepared statements too, in both tools).
statements() {
    case $1 in
    oltp_read_only) echo 16 ;;
    oltp_point_select) echo 1 ;;
    *) echo "no statement count for $1" >&2; exit 2 ;;
    esac
}

oncpu_ns() { # PID -> ns on CPU summed over its threads
    local sum=0 f r _
    for f in /proc/"$1"/task/*/schedstat; do
        read -r r _ <"$f" 2>/dev/null || continue
        sum=$((sum + r))
    done
    echo "$sum"
}
switches() { # PID -> context switches (voluntary + not) summed over its threads
    cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { n += $2 } END { print n + 0 }'
}
# The kernel threads that run softirqs deferred from interrupt exit and
# bh-enable (the loopback receive, when it falls behind) on both CPUs.
KSOFTIRQD=$(ps -eo pid=,comm= | awk -v a="ksoftirqd/$SERVER_CPU" -v b="ksoftirqd/$CLIENT_CPU" \
    '$2 == a || $2 == b { print $1 }')
ksoftirqd_ns() {
    local sum=0 p
    for p in $KSOFTIRQD; do sum=$((sum + $(oncpu_ns "$p"))); done
    echo "$sum"
}
tcp_segments() { # TCP segments received by this host (loopback: every one sent)
    awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) col[$i] = i; h = 1 } else print $col["InSegs"] }' \
        /proc/net/snmp
}
# One snapshot: "executes server_ns client_ns ksoftirqd_ns server_cs
# client_cs idle softirq total busy segments".
snapshot() {
    echo "$(status Com_stmt_execute) $(oncpu_ns "$SERVER_PID") $(oncpu_ns "$1") $(ksoftirqd_ns)" \
        "$(switches "$SERVER_PID") $(switches "$1") $(awk -v c="cpu$SERVER_CPU" '
        $1 == c { t = 0; for (i = 2; i <= 9; i++) t += $i; s = $5 + $6 " " $8 " " t }
        $1 == "cpu" { b = $2 + $3 + $4 + $7 + $8 + $9 }
        END { print s, b }' /proc/stat) $(tcp_segments)"
}

CPU_EVENTS=sched:sched_waking,irq_vectors:reschedule_entry,irq_vectors:call_function_single_entry
# counts -> "executes wake_s wake_c ipi_s ipi_c": perf stat counting
# CPU_EVENTS per CPU over WINDOW s, bracketed by two reads of
# Com_stmt_execute inside the counted span.
counts() {
    perf stat -x, -a -A -C "$SERVER_CPU,$CLIENT_CPU" -e "$CPU_EVENTS" -o "$WORK/cpu.perf" -- \
        sh -c "mariadb -S $WORK/mysqld.sock -uroot -N -B -e \"SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'\" >$WORK/c1
            sleep $WINDOW
            mariadb -S $WORK/mysqld.sock -uroot -N -B -e \"SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'\" >$WORK/c2"
    echo "$(($(awk '{print $2}' "$WORK/c2") - $(awk '{print $2}' "$WORK/c1"))) $(awk -F, -v s="CPU$SERVER_CPU" '
        $1 == s && $4 ~ /waking/ { ws = $2 } $1 != s && $4 ~ /waking/ { wc = $2 }
        $1 == s && $4 ~ /irq_vectors/ { is += $2 } $1 != s && $4 ~ /irq_vectors/ { ic += $2 }
        END { print ws + 0, wc + 0, is + 0, ic + 0 }' "$WORK/cpu.perf")"
}

# run SCRIPT VARIANT (sysbench, or a scalelab -j) -> one line of figures.
run() {
    local script=$1 variant=$2 pid secs=$((2 * WINDOW + 2)) a b c
    if [ "$variant" = sysbench ]; then
        setsid taskset -c "$CLIENT_CPU" sysbench "${SB[@]}" --threads="$CONNECTIONS" --time="$secs" \
            "$script" run >"$WORK/run.out" 2>&1 &
    else
        setsid taskset -c "$CLIENT_CPU" "$SCALELAB" load mysql "$URL" --script "$script" -c "$CONNECTIONS" \
            -j "$variant" -d "${secs}s" >"$WORK/run.out" 2>&1 &
    fi
    pid=$!
    sleep 0.7
    a=$(snapshot "$pid")
    sleep "$WINDOW"
    b=$(snapshot "$pid")
    c=$(counts)
    wait "$pid" || { echo "$variant failed:" >&2; cat "$WORK/run.out" >&2; return 1; }
    awk -v a="$a" -v b="$b" -v c="$c" -v w="$WINDOW" -v per="$(statements "$script")" \
        -v hz="$(getconf CLK_TCK)" -v ncpu="$(nproc)" -v name="$script $variant" 'BEGIN {
        split(a, A, " "); split(b, B, " "); split(c, C, " ")
        txn = (B[1] - A[1]) / per; ptxn = C[1] / per
        srv = B[2] - A[2]; cl = B[3] - A[3]; ksoft = B[4] - A[4]; tot = B[9] - A[9]
        other = ((B[10] - A[10]) / hz - (srv + cl + ksoft) / 1e9) / (ncpu * w) * 100
        printf "%s tps=%.0f srv_us=%.1f cl_us=%.1f ksoft_us=%.1f srv_idle=%.1f srv_sirq=%.1f", name, txn / w,
            srv / 1e3 / txn, cl / 1e3 / txn, ksoft / 1e3 / txn, (B[7] - A[7]) * 100 / tot, (B[8] - A[8]) * 100 / tot
        printf " srv_cs=%.2f cl_cs=%.2f wake_s=%.2f wake_c=%.2f ipi_s=%.2f ipi_c=%.2f segs=%.2f other_load=%.0f\n",
            (B[5] - A[5]) / txn, (B[6] - A[6]) / txn, C[2] / ptxn, C[3] / ptxn, C[4] / ptxn, C[5] / ptxn,
            (B[11] - A[11]) / txn, (other > 0 ? other : 0)
    }'
}

VARIANTS="sysbench $THREADS"
RESULTS="$WORK/results"
: >"$RESULTS"
for script in $SCRIPTS; do
    if [ "$WARMUP" -gt 0 ]; then
        setsid taskset -c "$CLIENT_CPU" sysbench "${SB[@]}" --threads="$CONNECTIONS" --time="$WARMUP" \
            "$script" run >/dev/null 2>&1
    fi
    for round in $(seq "$ROUNDS"); do
        # Rotate the order by one variant per round.
        read -ra vs <<<"$VARIANTS"
        shift_by=$(((round - 1) % ${#vs[@]}))
        order=("${vs[@]:shift_by}" "${vs[@]:0:shift_by}")
        for variant in "${order[@]}"; do
            line=$(run "$script" "$variant")
            echo "round $round $line" >&2
            echo "$line" >>"$RESULTS"
        done
    done
done

echo "per transaction, medians of $ROUNDS runs; $CONNECTIONS connections; variant: sysbench or scalelab -j"
awk "$AWK_MEDIAN"'
{
    key = $1 " " $2
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    for (i = 3; i <= NF; i++) { split($i, kv, "="); name[i] = kv[1]; vals[key, i] = vals[key, i] " " kv[2] }
    nf = NF
}
END {
    printf "%-27s", "script variant"
    for (i = 3; i <= nf; i++) printf " %10s", name[i]
    print ""
    for (k = 1; k <= n; k++) {
        printf "%-27s", order[k]
        for (i = 3; i <= nf; i++) printf " %10.2f", median(vals[order[k], i])
        print ""
    }
}' "$RESULTS"
