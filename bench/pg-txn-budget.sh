#!/usr/bin/env bash
# Where one transaction's time goes, for pgbench and for scalelab's
# PostgreSQL driver on the same server: the server's own view
# (pg_stat_statements, the backends' scheduler statistics, CPU 1's idle
# share) beside the client's CPU, syscalls and the TCP segments on the wire.
#
# One private PostgreSQL 15+ with pg_stat_statements (pinned to SERVER_CPU),
# a pgbench dataset, then for each client count ROUNDS alternating runs of
# `pgbench -M prepared -S -j 1` and `scalelab load pg --script select-only
# -M prepared -j 1` (both pinned to CLIENT_CPU). Each run lasts
# 2 * WINDOW + 4 s (WINDOW whole seconds) and is measured inside, not at its edges:
#   window 1 (untouched): transactions (pg_stat_statements calls of the
#     SELECT), server execution time (its total_exec_time), the backends'
#     time on CPU and waiting for it (/proc/PID/task/*/schedstat), CPU 1's
#     idle and softirq share (/proc/stat), the client's CPU, TCP segments
#     (/proc/net/snmp: with RPS=0 other loopback traffic adds to it);
#   window 2 (perf stat counting tracepoints on the backends and on the
#     client, which costs a little per syscall): syscalls, recvfrom,
#     sendto, epoll_wait and context switches per transaction;
#   window 3 (perf trace on the client, 1 s): the client's turnaround from
#     its own syscall timestamps (see `turnaround`).
# Per transaction and connection, a backend's cycle is
#   clients * window / transactions = on CPU + waiting for CPU + asleep,
# where "asleep" is the time it waited for the next request after sending a
# response: the wire both ways plus the client's turnaround. "on CPU" splits
# into pg_stat_statements' execution time and the rest (protocol, syscalls,
# the TCP receive the backend's CPU runs for the client's socket on loopback).
#
# Usage: bench/pg-txn-budget.sh
# Environment: CLIENTS ("4 16"), ROUNDS (4), WINDOW (s, 2), SCALE (10),
#   SERVER_CPU (1), CLIENT_CPU (0), SCALELAB (a prebuilt binary; default:
#   build target/release/scalelab), RPS (0; 1 runs server and clients in a
#   private network namespace whose lo steers each packet's receive work to
#   the CPU that reads its socket, with RPS + RFS, as two machines would:
#   then the client no longer runs the backends' TCP receive. Needs root;
#   the host's lo is untouched).
# Takes about ROUNDS * |CLIENTS| * 2 * (2 * WINDOW + 5) s plus setup:
# ~2.5 min by default. Run it under `flock target/bench.lock`.
set -euo pipefail

CLIENTS=${CLIENTS:-"4 16"}
ROUNDS=${ROUNDS:-4}
WINDOW=${WINDOW:-2}
SCALE=${SCALE:-10}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
RPS=${RPS:-0}

cd "$(dirname "$0")/.."
# shellcheck source=bench/pg-server.sh
. bench/pg-server.sh
for tool in psql perf; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (scripts/setup.sh installs it)" >&2; exit 2; }
done
[ -e "$(dirname "$BIN_DIR")/lib/pg_stat_statements.so" ] ||
    { echo "missing: pg_stat_statements in $(dirname "$BIN_DIR")/lib (postgresql-contrib)" >&2; exit 2; }
pg_server_start pg-txn-budget synchronous_commit=off shared_preload_libraries=pg_stat_statements
SQL_CMD="${IN_NS[*]} psql -X -A -t -q -h 127.0.0.1 -p $PORT -U postgres -d postgres -c"
sql() { $SQL_CMD "$1"; }
sql "CREATE EXTENSION pg_stat_statements" >/dev/null

# One snapshot as "key=value" words: the SELECT's calls and the script's
# execution time (ms), CPU_SERVER's idle and softirq ticks and its total,
# the backends' and the client's on-CPU and run-queue ns, TCP segments.
schedstat_sum() { # PIDS -> "run_ns wait_ns" summed over their threads
    local run=0 wait=0 p r w _
    for p in "$@"; do
        for f in /proc/"$p"/task/*/schedstat; do
            read -r r w _ <"$f" 2>/dev/null || continue
            run=$((run + r)) wait=$((wait + w))
        done
    done
    echo "$run $wait"
}
snapshot() { # CLIENT_PID BACKEND_PIDS...
    local client=$1
    shift
    sql "SELECT 'calls=' || coalesce(sum(calls) FILTER (WHERE query LIKE 'SELECT abalance%'), 0)
         || ' exec_ms=' || coalesce(sum(total_exec_time) FILTER (WHERE query ILIKE '%pgbench_%'), 0)
         FROM pg_stat_statements"
    awk -v c="cpu$SERVER_CPU" '$1 == c { t = 0; for (i = 2; i <= 9; i++) t += $i
        print "idle=" $5 + $6 " softirq=" $8 " total=" t }
        $1 == "cpu" { print "busy=" $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
    read -r run wait < <(schedstat_sum "$@")
    echo "be_run=$run be_wait=$wait"
    read -r run wait < <(schedstat_sum "$client")
    echo "cl_run=$run cl_wait=$wait"
    awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) col[$i] = i; h = 1 } else
        print "segs=" $col["InSegs"] }' <("${IN_NS[@]}" cat /proc/net/snmp)
}
# The named values of a snapshot file as shell assignments with a prefix.
load() { tr ' ' '\n' <"$1" | grep = | sed "s/^/$2/"; }

EVENTS=raw_syscalls:sys_enter,syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_ppoll,context-switches
CALLS="SELECT 'calls=' || coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query LIKE 'SELECT abalance%'"
# perf_counts OUT CLIENT_PID BACKEND_PIDS...: counts EVENTS per thread over
# WINDOW s, bracketed by two reads of the SELECT's calls inside the counted
# span; writes "calls" then "be|cl syscalls recvfrom sendto epoll ppoll cs".
perf_counts() {
    local out=$1 client=$2
    shift 2
    local pids
    pids=$(echo "$client $*" | tr ' ' ,)
    perf stat --per-thread -x, -e "$EVENTS" -p "$pids" -- \
        sh -c "$SQL_CMD \"$CALLS\" >$out.c1; sleep $WINDOW; $SQL_CMD \"$CALLS\" >$out.c2" \
        2>"$out.perf" >/dev/null
    # perf prints "comm-tid,count,,event,..." per thread and event.
    awk -F, -v client_tasks=" $(ls /proc/"$client"/task | paste -sd' ') " '
        { split($1, id, "-"); tid = id[length(id)]; who = index(client_tasks, " " tid " ") ? "cl" : "be"
          n[who, $4] += $2 }
        END { for (w = 1; w <= 2; w++) { who = w == 1 ? "be" : "cl"
            print who, n[who, "raw_syscalls:sys_enter"] + 0, n[who, "syscalls:sys_enter_recvfrom"] + 0,
                n[who, "syscalls:sys_enter_sendto"] + 0, n[who, "syscalls:sys_enter_epoll_wait"] + 0,
                n[who, "syscalls:sys_enter_ppoll"] + 0, n[who, "context-switches"] + 0 } }' "$out.perf" >"$out"
}

# turnaround CLIENT_PID: the client's own timestamps, taken by `perf trace`
# for 1 s: per connection (fd), the time from a recvfrom that returned data
# to the next sendto (the client's turnaround, including the other
# connections it served in between), as "turn_med=us turn_mean=us". Tracing
# every syscall slows the client (pgbench, with more syscalls, more), so
# these are for comparing shapes, not for the budget's sums.
turnaround() {
    perf trace -p "$1" -e recvfrom,sendto -o "$WORK/trace" -- sleep 1 >/dev/null 2>&1 || true
    awk '/^ *[0-9.]+ \( *[0-9.]+ ms\):.* (recvfrom|sendto)\(fd: [0-9]+/ {
            t = $1; sub(/^ */, "", t); split($0, a, /[()]/); dur = a[2] + 0
            fd = $0; sub(/.*\(fd: /, "", fd); sub(/[^0-9].*/, "", fd)
            ret = $NF + 0
            if ($0 ~ / recvfrom\(/ && ret > 0) rx[fd] = t + dur
            else if ($0 ~ / sendto\(/ && (fd in rx)) { d[++n] = (t - rx[fd]) * 1000; delete rx[fd] }
        }
        END { if (!n) { print "turn_med=0 turn_mean=0"; exit }
            for (i = 2; i <= n; i++) { v = d[i]; for (j = i - 1; j >= 1 && d[j] > v; j--) d[j + 1] = d[j]; d[j + 1] = v }
            for (i = 1; i <= n; i++) s += d[i]
            printf "turn_med=%.1f turn_mean=%.1f\n", d[int((n + 1) / 2)], s / n }' "$WORK/trace"
}

# run TOOL CLIENTS -> one line of per-transaction figures on stdout.
run() {
    local tool=$1 clients=$2 pid backends
    local duration=$((2 * WINDOW + 4))
    if [ "$tool" = pgbench ]; then
        taskset -c "$CLIENT_CPU" "${IN_NS[@]}" pgbench -h 127.0.0.1 -p "$PORT" -U postgres -M prepared -S \
            -c "$clients" -j 1 -T "$duration" postgres >"$WORK/run.out" 2>&1 &
    else
        taskset -c "$CLIENT_CPU" "${IN_NS[@]}" "$SCALELAB" load pg "$CONN" --script select-only -M prepared \
            -c "$clients" -j 1 -d "${duration}s" >"$WORK/run.out" 2>&1 &
    fi
    pid=$!
    sleep 0.5
    backends=$(sql "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
    # shellcheck disable=SC2086
    snapshot "$pid" $backends >"$WORK/a"
    sleep "$WINDOW"
    # shellcheck disable=SC2086
    snapshot "$pid" $backends >"$WORK/b"
    # shellcheck disable=SC2086
    perf_counts "$WORK/perf" "$pid" $backends
    turnaround "$pid" >"$WORK/turn"
    wait "$pid" || { echo "$tool failed:" >&2; cat "$WORK/run.out" >&2; return 1; }
    (
        eval "$(load "$WORK/a" a_)"
        eval "$(load "$WORK/b" b_)"
        eval "$(load "$WORK/perf.c1" c1_)"
        eval "$(load "$WORK/perf.c2" c2_)"
        eval "$(load "$WORK/turn" t_)"
        read -r _ be_sys be_recv be_send be_epoll _ be_cs < <(grep '^be' "$WORK/perf")
        read -r _ cl_sys cl_recv cl_send cl_epoll cl_ppoll cl_cs < <(grep '^cl' "$WORK/perf")
        awk -v tool="$tool" -v n_cl="$clients" -v w="$WINDOW" \
            -v txn=$((b_calls - a_calls)) -v exec_ms="$(awk -v a="$a_exec_ms" -v b="$b_exec_ms" 'BEGIN { print b - a }')" \
            -v idle=$((b_idle - a_idle)) -v soft=$((b_softirq - a_softirq)) -v tot=$((b_total - a_total)) \
            -v be_run=$((b_be_run - a_be_run)) -v be_wait=$((b_be_wait - a_be_wait)) \
            -v cl_run=$((b_cl_run - a_cl_run)) -v segs=$((b_segs - a_segs)) \
            -v ptxn=$((c2_calls - c1_calls)) -v busy=$((b_busy - a_busy)) -v hz="$(getconf CLK_TCK)" -v ncpu="$(nproc)" \
            -v turn_med="$t_turn_med" -v turn_mean="$t_turn_mean" \
            -v be="$be_sys $be_recv $be_send $be_epoll $be_cs" -v cl="$cl_sys $cl_recv $cl_send $cl_epoll $cl_ppoll $cl_cs" '
        BEGIN {
            split(be, B, " "); split(cl, C, " ")
            us = 1e-3 / txn                      # ns total -> us per txn
            cycle = n_cl * w * 1e6 / txn
            run = be_run * us; wait = be_wait * us; exec = exec_ms * 1e3 / txn
            printf "%s %d tps=%.0f cycle=%.1f exec=%.1f be_other=%.1f be_cpuwait=%.1f be_asleep=%.1f",
                tool, n_cl, txn / w, cycle, exec, run - exec, wait, cycle - run - wait
            # The rest of the machine: busy CPU time used by neither the
            # backends nor the client, as a share of all CPUs.
            other = (busy / hz - (be_run + cl_run) / 1e9) / (ncpu * w) * 100
            printf " srv_idle=%.1f%% srv_softirq=%.1f%% client_cpu=%.1f segs=%.2f other_load=%.0f%%",
                idle * 100 / tot, soft * 100 / tot, cl_run * us, segs / txn, (other > 0 ? other : 0)
            printf " be_sys=%.2f be_recv=%.2f be_send=%.2f be_epoll=%.2f be_cs=%.2f",
                B[1] / ptxn, B[2] / ptxn, B[3] / ptxn, B[4] / ptxn, B[5] / ptxn
            printf " cl_sys=%.2f cl_recv=%.2f cl_send=%.2f cl_poll=%.2f cl_cs=%.2f turn_med=%s turn_mean=%s\n",
                C[1] / ptxn, C[2] / ptxn, C[3] / ptxn, (C[4] + C[5]) / ptxn, C[6] / ptxn, turn_med, turn_mean
        }'
    )
}

RESULTS="$WORK/results"
: >"$RESULTS"
for clients in $CLIENTS; do
    for round in $(seq "$ROUNDS"); do
        if [ $((round % 2)) = 1 ]; then order="pgbench scalelab"; else order="scalelab pgbench"; fi
        for tool in $order; do
            line=$(run "$tool" "$clients")
            echo "round $round $line" >&2
            echo "$line" >>"$RESULTS"
        done
    done
done

# Medians per (tool, clients) of every figure.
echo "per transaction (us, counts), medians of $ROUNDS runs; RPS=$RPS"
awk '
function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    key = $2 " " $1
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    for (i = 3; i <= NF; i++) {
        split($i, kv, "="); name[i] = kv[1]; v = kv[2]; sub(/%$/, "", v)
        vals[key, i] = vals[key, i] " " v
    }
    nf = NF
}
END {
    printf "%-16s", "clients tool"
    for (i = 3; i <= nf; i++) printf " %9s", substr(name[i], 1, 9)
    print ""
    for (k = 1; k <= n; k++) {
        printf "%-16s", order[k]
        for (i = 3; i <= nf; i++) printf " %9.2f", median(vals[order[k], i])
        print ""
    }
}' "$RESULTS"
