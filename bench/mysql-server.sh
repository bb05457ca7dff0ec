# Sourced by the MySQL bench scripts (not run), from the repository root:
# picks the scalelab binary (bench/scalelab-bin.sh: a prebuilt $SCALELAB, or
# a release build at low priority, so nothing compiles under the bench
# lock), then starts one private MariaDB in a temporary directory, pinned to
# SERVER_CPU, on a free loopback port, with sysbench's own dataset
# (`sysbench oltp_read_only prepare`, TABLES x TABLE_SIZE), and stops it and
# removes everything on exit.
#
#   mysql_server_start NAME
# sets SCALELAB, WORK, SERVER_PID, PORT, URL (for scalelab), SB (sysbench's
# connection and dataset options) and status() (one SHOW GLOBAL STATUS
# counter). Needs SERVER_CPU, CLIENT_CPU, TABLES, TABLE_SIZE.
# shellcheck shell=bash

for tool in sysbench taskset python3 /usr/bin/time mariadbd mariadb-install-db; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (scripts/setup.sh installs it)" >&2; exit 2; }
done

# The server and each client run under `setsid`, in a session of their own
# (setsid execs in place when not a process group leader, as a command of
# this script is not, so $! stays the command's PID), hence in an autogroup
# of their own. With kernel.sched_autogroup_enabled=1 (the default) CPU time
# is shared between sessions first, whatever their nice values, and a
# session's share is split over the CPUs by its threads' load on each: a
# client in the server's session gets a slice of CLIENT_CPU that shrinks
# with its thread count (one scalelab thread against sysbench's eight, the
# server's eight threads on SERVER_CPU) whenever another session, such as
# a niced build, runs there. In sessions of their own, no tool's share
# depends on how many threads it runs.

mysql_server_stop() {
    if [ -n "${SERVER_PID:-}" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    [ -z "${WORK:-}" ] || rm -rf "$WORK"
}

mysql_server_start() {
    local name=$1
    # shellcheck source=bench/scalelab-bin.sh
    . bench/scalelab-bin.sh
    WORK=$(mktemp -d "/tmp/$name.XXXXXX")
    SERVER_PID=
    trap mysql_server_stop EXIT
    trap 'exit 130' INT TERM
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    local tls=""
    if [ "${SSL:-0}" = 1 ]; then
        # A throwaway ECDSA P-256 certificate in the work directory (which
        # goes with it), as the managed server's `tls = true` makes.
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
            -subj /CN=127.0.0.1 -keyout "$WORK/server.key" -out "$WORK/server.pem" 2>/dev/null
        # sysbench 1.0's --mysql-ssl=on reads client-key.pem,
        # client-cert.pem and cacert.pem from its working directory.
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
            -subj /CN=sysbench -keyout "$WORK/client-key.pem" -out "$WORK/client-cert.pem" 2>/dev/null
        cp "$WORK/server.pem" "$WORK/cacert.pem"
        # It presents its client certificate; the server must know its CA.
        cat "$WORK/server.pem" "$WORK/client-cert.pem" >"$WORK/ca-bundle.pem"
        tls="ssl_cert = $WORK/server.pem
ssl_key = $WORK/server.key
ssl_ca = $WORK/ca-bundle.pem"
    fi
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
$tls
CNF
    mariadb-install-db --defaults-file="$WORK/my.cnf" --user="$(id -un)" --skip-test-db \
        >"$WORK/install.out" 2>&1
    setsid taskset -c "$SERVER_CPU" mariadbd --defaults-file="$WORK/my.cnf" &
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
}

# status NAME: one counter of SHOW GLOBAL STATUS (the query itself counts
# in none of the Com_stmt_* ones).
status() {
    mariadb -S "$WORK/mysqld.sock" -uroot -N -B -e "SHOW GLOBAL STATUS LIKE '$1'" | awk '{print $2}'
}

# An awk function for the summaries: median(" v1 v2 ...") of a list of
# numbers (insertion sort; the mean of the middle two for an even count).
# shellcheck disable=SC2016
AWK_MEDIAN='
function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
'
