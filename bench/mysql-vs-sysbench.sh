#!/usr/bin/env bash
# scalelab's MySQL driver against sysbench, side by side on one MariaDB.
#
# One private MariaDB (pinned to CPU 1) with sysbench's own dataset
# (`sysbench oltp_read_only prepare`), then for each script, alternating runs
# of `sysbench SCRIPT run --threads=N` and `scalelab load mysql --script
# SCRIPT -c N -j 1` (both pinned to CPU 0). Client CPU (user + system) is
# measured the same way for both, with /usr/bin/time. Reports the median
# TPS, the client CPU seconds per 10k transactions, and the median per-round
# scalelab/sysbench ratios (want: TPS ratio >= 1, CPU ratio <= 1), also over
# the quiet rounds only (where the rest of the machine used < 25% of the CPUs
# in both runs). Per-run lines go to stderr.
#
# Usage: bench/mysql-vs-sysbench.sh
# Environment: DURATION (s per run, 3), TABLES (4), TABLE_SIZE (10000),
#   CONNECTIONS ("8"), SCRIPTS ("oltp_read_only oltp_point_select"),
#   ROUNDS (alternations, 3), SERVER_CPU (1), CLIENT_CPU (0), SCALELAB (a
#   prebuilt scalelab binary; default: build target/release/scalelab).
# Takes about 2 * 2 * ROUNDS * DURATION s plus ~15 s of setup.
set -euo pipefail

DURATION=${DURATION:-3}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-10000}
CONNECTIONS=${CONNECTIONS:-"8"}
SCRIPTS=${SCRIPTS:-"oltp_read_only oltp_point_select"}
ROUNDS=${ROUNDS:-3}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}

cd "$(dirname "$0")/.."
for tool in sysbench taskset /usr/bin/time mariadbd mariadb-install-db; do
    command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 2; }
done

# shellcheck source=bench/scalelab-bin.sh
. bench/scalelab-bin.sh

WORK=$(mktemp -d /tmp/mysql-vs-sysbench.XXXXXX)
SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$WORK/my.cnf" <<CNF
[mysqld]
user = $(id -un)
datadir = $WORK/data
socket = $WORK/mysqld.sock
pid-file = $WORK/mysqld.pid
log-error = $WORK/error.log
port = $PORT
bind-address = 127.0.0.1
skip-name-resolve
innodb_buffer_pool_size = 256M
innodb_flush_log_at_trx_commit = 2
max_connections = 200
CNF
mariadb-install-db --defaults-file="$WORK/my.cnf" --user="$(id -un)" --skip-test-db \
    >"$WORK/install.out" 2>&1
taskset -c "$SERVER_CPU" mariadbd --defaults-file="$WORK/my.cnf" &
SERVER_PID=$!
for _ in $(seq 200); do
    mariadb-admin -S "$WORK/mysqld.sock" -uroot ping >/dev/null 2>&1 && break
    sleep 0.1
done
mariadb -S "$WORK/mysqld.sock" -uroot -e "CREATE DATABASE sbtest;
    CREATE USER 'sbtest'@'127.0.0.1' IDENTIFIED BY 'sbtest';
    GRANT ALL ON *.* TO 'sbtest'@'127.0.0.1';"
URL="mysql://sbtest:sbtest@127.0.0.1:$PORT/sbtest"
SB=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=sbtest
    --mysql-password=sbtest --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE")
echo "server: $(mariadbd --version | head -n 1), CPU $SERVER_CPU, port $PORT; clients on CPU $CLIENT_CPU" >&2
sysbench "${SB[@]}" oltp_read_only prepare >"$WORK/prepare.out"

HZ=$(getconf CLK_TCK)
NCPU=$(nproc)
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
server_ticks() { awk '{print $14+$15}' "/proc/$SERVER_PID/stat"; }

# run TOOL SCRIPT CONNECTIONS -> "tps transactions cpu_seconds other%"
run() {
    local tool=$1 script=$2 conns=$3 out="$WORK/run.out" cpu="$WORK/cpu.out"
    local b0 s0 b1 s1 tps txns
    b0=$(busy_ticks) s0=$(server_ticks)
    if [ "$tool" = sysbench ]; then
        taskset -c "$CLIENT_CPU" /usr/bin/time -f "%U %S %e" -o "$cpu" \
            sysbench "${SB[@]}" --threads="$conns" --time="$DURATION" "$script" run >"$out" 2>&1
        txns=$(awk '/transactions:/ {print $2}' "$out")
        tps=$(awk '/transactions:/ {gsub(/\(/, "", $3); print $3}' "$out")
    else
        taskset -c "$CLIENT_CPU" /usr/bin/time -f "%U %S %e" -o "$cpu" \
            "$SCALELAB" load mysql "$URL" --script "$script" -c "$conns" -j "$conns" \
            -d "${DURATION}s" --json >"$out" 2>&1
        txns=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["transactions"])' "$out")
        tps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tps"])' "$out")
    fi
    b1=$(busy_ticks) s1=$(server_ticks)
    awk -v tps="$tps" -v n="$txns" -v busy=$((b1 - b0)) -v srv=$((s1 - s0)) -v hz="$HZ" -v ncpu="$NCPU" \
        '{ cpu = $1 + $2; other = ((busy - srv) / hz - cpu) / (ncpu * $3) * 100
           printf "%s %s %.2f %.0f\n", tps, n, cpu, (other > 0 ? other : 0) }' "$cpu"
}

RESULTS="$WORK/results"
: >"$RESULTS"
for script in $SCRIPTS; do
    for conns in $CONNECTIONS; do
        for round in $(seq "$ROUNDS"); do
            # Alternate which tool goes first, so drift does not favour one.
            if [ $((round % 2)) = 1 ]; then order="sysbench scalelab"; else order="scalelab sysbench"; fi
            for tool in $order; do
                read -r tps txns cpu other < <(run "$tool" "$script" "$conns")
                echo "$script $conns $tool $round tps=$tps txns=$txns cpu_s=$cpu other_load=$other%" >&2
                echo "$script $conns $tool $round $tps $txns $cpu $other" >>"$RESULTS"
            done
        done
    done
done

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
    if ((key, $4, "sysbench") in r_tps && (key, $4, "scalelab") in r_tps) {
        tr = r_tps[key, $4, "scalelab"] / r_tps[key, $4, "sysbench"]
        cr = r_cpu[key, $4, "scalelab"] / r_cpu[key, $4, "sysbench"]
        tps_ratio[key] = tps_ratio[key] " " tr
        cpu_ratio[key] = cpu_ratio[key] " " cr
        if (r_other[key, $4, "scalelab"] < QUIET && r_other[key, $4, "sysbench"] < QUIET) {
            quiet_tps[key] = quiet_tps[key] " " tr
            quiet_cpu[key] = quiet_cpu[key] " " cr
            quiet_n[key]++
        }
    }
}
END {
    printf "%-18s %5s | %9s %9s %6s | %10s %10s %6s | %s\n", "script", "conns", "sysbench", "scalelab", "TPS", "sysbench", "scalelab", "CPU", "quiet rounds"
    printf "%-18s %5s | %9s %9s %6s | %10s %10s %6s | %s\n", "", "", "TPS", "TPS", "ratio", "s/10k txn", "s/10k txn", "ratio", "TPS, CPU ratio"
    for (i = 1; i <= n; i++) {
        k = order[i]; split(k, p, " ")
        q = quiet_n[k] ? sprintf("%.2f, %.2f (%d)", median(quiet_tps[k]), median(quiet_cpu[k]), quiet_n[k]) : "none"
        printf "%-18s %5d | %9.0f %9.0f %6.2f | %10.3f %10.3f %6.2f | %s\n", p[1], p[2],
            median(tps[k, "sysbench"]), median(tps[k, "scalelab"]), median(tps_ratio[k]),
            median(cpu[k, "sysbench"]), median(cpu[k, "scalelab"]), median(cpu_ratio[k]), q
    }
    print "(TPS: higher is better; CPU s per 10k transactions: lower is better; ratios are"
    print " medians of per-round scalelab/sysbench; quiet rounds: other load < " QUIET "% in both runs)"
}' "$RESULTS"
