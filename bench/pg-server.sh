# Sourced by the PostgreSQL bench scripts (not run), from the repository
# root: builds scalelab (release) unless SCALELAB names a prebuilt binary
# (so nothing compiles under the bench lock), then starts one private PostgreSQL in a
# temporary directory, pinned to SERVER_CPU, on a free loopback port, with
# a pgbench dataset of SCALE, and stops it and removes everything on exit.
# With RPS=1, the server (and every command run through "${IN_NS[@]}") lives
# in the RPS/RFS namespace of bench/rfs-netns.sh.
#
#   pg_server_start NAME [postgres -c settings...]
# sets BIN_DIR, SCALELAB, WORK, AS_PG, PORT, CONN (a scalelab conninfo) and
# IN_NS (empty unless RPS=1). Needs SERVER_CPU, CLIENT_CPU, SCALE, RPS.

# shellcheck source=bench/rfs-netns.sh
. bench/rfs-netns.sh

BIN_DIR=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
for tool in pgbench taskset python3 /usr/bin/time "$BIN_DIR/pg_ctl"; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (scripts/setup.sh installs it)" >&2; exit 2; }
done

pg_server_stop() {
    [ -n "${WORK:-}" ] || return 0
    "${IN_NS[@]}" "${AS_PG[@]}" "$BIN_DIR/pg_ctl" -D "$WORK/data" -m fast -w stop >/dev/null 2>&1 || true
    rfs_netns_down
    rm -rf "$WORK"
}

pg_server_start() {
    local name=$1 setting extra=""
    shift
    for setting in "$@"; do extra="$extra -c $setting"; done
    # shellcheck source=bench/scalelab-bin.sh
    . bench/scalelab-bin.sh
    WORK=$(mktemp -d "/tmp/$name.XXXXXX")
    chmod 755 "$WORK"
    AS_PG=()
    if [ "$(id -u)" = 0 ]; then
        chown postgres "$WORK"
        AS_PG=(runuser -u postgres --)
    fi
    trap pg_server_stop EXIT
    trap 'exit 130' INT TERM
    if [ "$RPS" = 1 ]; then
        rfs_netns_up "$name-$$" "$SERVER_CPU" "$CLIENT_CPU"
    fi
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "${AS_PG[@]}" "$BIN_DIR/initdb" -D "$WORK/data" -U postgres --auth=trust --no-sync \
        --encoding=UTF8 --locale=C >"$WORK/initdb.out"
    if [ "${SSL:-0}" = 1 ]; then
        # A throwaway ECDSA P-256 certificate in the work directory (which
        # goes with it), as the managed server's `tls = true` makes.
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
            -subj /CN=127.0.0.1 -keyout "$WORK/server.key" -out "$WORK/server.pem" 2>/dev/null
        chmod 600 "$WORK/server.key"
        [ "$(id -u)" = 0 ] && chown postgres "$WORK/server.key" "$WORK/server.pem"
        extra="$extra -c ssl=on -c ssl_cert_file=$WORK/server.pem -c ssl_key_file=$WORK/server.key"
    fi
    taskset -c "$SERVER_CPU" "${IN_NS[@]}" "${AS_PG[@]}" "$BIN_DIR/pg_ctl" -D "$WORK/data" \
        -l "$WORK/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -c unix_socket_directories=$WORK $extra" \
        start >/dev/null
    CONN="host=127.0.0.1 port=$PORT user=postgres dbname=postgres"
    echo "server: $("$BIN_DIR/postgres" --version), CPU $SERVER_CPU, port $PORT; clients on CPU $CLIENT_CPU; RPS=$RPS" >&2
    "${IN_NS[@]}" pgbench -i -q -s "$SCALE" -h 127.0.0.1 -p "$PORT" -U postgres postgres 2>"$WORK/init.out"
}
