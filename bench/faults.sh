#!/usr/bin/env bash
# The fault matrix (issue 9): runs scalelab against the real servers, injects
# one fault per scenario, and prints a table with each scenario's expected
# and observed outcome. Green means: nothing lost, nothing duplicated, no
# shortened or wrong trial stored, nothing left running, a clear error.
#
# Scenarios, for every server kind in KINDS (later kinds add a recipe to
# `recipe` below and their name to KINDS):
#   kill9-KIND         kill -9 of scalelab at N random moments, resumed after
#                      each; then a final resume: every trial exactly once,
#                      every trial kept, none shortened, nothing left running
#   sigint-/sigterm-   the signal mid-trial: exit 130, the trial is an event
#                      not a trial, resume completes the run
#   server-whole-      the whole server killed mid-trial: that trial failed,
#                      the sweep goes on, exit 3, nothing left running
#   server-master-     only the master (nginx master, postmaster) killed
#   server-sigstop-    the server stopped for 3 s mid-trial: the stall shows
#                      (timeouts or an empty second), the run completes
#   self-stop-         scalelab itself stopped (SIGTSTP, as Ctrl-Z; and
#   self-sigstop-      SIGSTOP) for 5 s mid-window: no overlong window stored,
#                      the trial an event naming the stop, resume reruns it
#   leftovers-         kill -9 mid-trial and while perf records: no path
#                      (run, socket, perf, ssh directories) or cgroup named
#                      after the killed PID is left 5 s later
# The router (the A - R - B lab of namespaces, no server process) has the
# same rows with the router's faults: `whole` deletes R's namespace (the
# router is gone), `master` deletes R's link to B, `sigstop` turns R's
# forwarding off for 3 s (the lost frames show in the trial's step).
# and once: a busy fixed port, a store on a full filesystem, two concurrent
# resumes, the parser fuzz; and (issue 24, remote) a truncated agent copy,
# a lost client agent then resume, a disk full during pgbench's load;
# and (issue 24, policy) no DNS query before the address policy, a store on
# a read-only mount, a --store in a missing directory; and (issue 30) a
# power meter command that hangs; and (issue 36) meters that are slow,
# hung, chatty, hold their stdout in a child or print 1e308 W (the window
# and server CPU stay those of energy off), `check` under a real `git
# bisect run`, kill -9 of a run whose `external` server a lab host runs,
# and the server's lab host cut off and reconnected mid-run; and (issue
# 40) kill -9 of an AF_XDP DNS run: no XDP program, no XSKMAP (which holds
# the AF_XDP socket and so its UMEM) and no process left; and (issue 46)
# an XDP program another tool left attached (named, with its fix),
# kill -9 in repeat 2 of a `runs = 3` recipe, then --resume, and
# a host without an agent whose probe shell, sshd or network stalls
# mid-window, or whose work directory is full; and (issue 50) kill -9 and
# SIGINT of an HTTPS run (nginx `tls = true`, its own CA and key in its
# private directory, which must go with it), kill -9 of a DNS over TLS run
# (Unbound `tls = true`) and of a DNS over HTTPS run (BIND `tls = true`),
# each with its server killed mid-run, and an https
# server that closes mid-handshake: each trial failed with that reason,
# the sweep goes on.
#
# Usage: [SCALELAB=BIN] bench/faults.sh [--quick] [--kinds "nginx postgres mariadb unbound nsd bind router"]
#   --quick   3 kills per kind instead of 10, smaller sweeps (about 2 min)
#   SCALELAB  a prebuilt scalelab binary to test (default: cargo build, debug)
#   ONLY      only these scenarios, by function name less `scenario_`
#             (ONLY="external_kill9 meters")
# Needs root (tmpfs mount for the full-filesystem row), sqlite3, nginx and
# PostgreSQL (scripts/setup.sh installs them). Exit status: 0 when every row
# passes, 1 otherwise.
set -uo pipefail

QUICK=0
KINDS="nginx postgres mariadb unbound nsd bind router"
while [ $# -gt 0 ]; do
    case $1 in
        --quick) QUICK=1 ;;
        --kinds) KINDS=$2; shift ;;
        *) sed -n '2,/^set -uo pipefail/{/^set/!p}' "$0"; exit 2 ;;
    esac
    shift
done
KILLS=$((QUICK ? 3 : 10))

for tool in sqlite3 nginx python3 mount; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (scripts/setup.sh)" >&2; exit 2; }
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${SCALELAB:-}" ]; then
    # A prebuilt binary (another build, a release, an older version).
    SCALELAB=$(command -v "$SCALELAB") || { echo "SCALELAB: no such program" >&2; exit 2; }
    SCALELAB=$(cd "$(dirname "$SCALELAB")" && pwd)/$(basename "$SCALELAB")
else
    # A debug build: the matrix checks what is stored and what is left, not
    # speed, and the debug build is the one the test suite keeps warm.
    (cd "$ROOT" && cargo build --quiet) || exit 2
    SCALELAB=$ROOT/target/debug/scalelab
fi
WORK=$(mktemp -d /var/tmp/scalelab-faults.XXXXXX)
chmod 755 "$WORK" # the postgres and mysql users must reach their data directories
export SCALELAB_WORKDIR=$WORK/work
MNT=
cleanup() {
    [ -n "$MNT" ] && umount "$MNT" 2>/dev/null
    [ -n "${LAB_DIR:-}" ] && lab_down # issue 24: remote rows
    rm -rf "$WORK"
}
trap cleanup EXIT

ROWS=()
FAILED=0
# row SCENARIO EXPECTED OBSERVED OK(0/1)
row() {
    local verdict=PASS
    [ "$4" = 0 ] || { verdict=FAIL; FAILED=1; }
    ROWS+=("$1|$2|$3|$verdict")
    printf '%-24s %-4s %s\n' "$1" "$verdict" "$3" >&2
}

# recipe KIND FILE POINTS: an experiment of POINTS sweep points, 1 trial
# each; DURATION, WARMUP and RESTART override the trial settings. A new
# server kind adds its [server] and [load] tables here.
recipe() {
    case $1 in
        nginx) printf '%s\n' 'name = "faults-nginx"' '[server]' 'kind = "nginx"' \
            'worker_processes = 2' '[load]' 'kind = "http"' ;;
        nginx-tls) printf '%s\n' 'name = "faults-nginx-tls"' '[server]' 'kind = "nginx"' \
            'worker_processes = 2' 'tls = true' '[load]' 'kind = "http"' 'connreqs = 4' ;;
        postgres) printf '%s\n' 'name = "faults-postgres"' '[server]' 'kind = "postgres"' \
            'shared_buffers = "32MB"' 'max_connections = 30' '[load]' 'kind = "pg"' \
            'scale = 1' 'script = "select-only"' ;;
        unbound|nsd|bind) printf '%s\n' "name = \"faults-$1\"" '[server]' "kind = \"$1\"" \
            '[load]' 'kind = "dns"' \
            'queries = { names = 2000, zipf = 1.0, reverse_share = 0.3, seed = 1, count = 200000 }' ;;
        unbound-dot) printf '%s\n' 'name = "faults-unbound-dot"' '[server]' 'kind = "unbound"' \
            'tls = true' '[load]' 'kind = "dns"' 'transport = "dot"' \
            'queries = { names = 2000, zipf = 1.0, reverse_share = 0.3, seed = 1, count = 200000 }' ;;
        bind-doh) printf '%s\n' 'name = "faults-bind-doh"' '[server]' 'kind = "bind"' \
            'tls = true' '[load]' 'kind = "dns"' 'transport = "doh"' \
            'queries = { names = 2000, zipf = 1.0, reverse_share = 0.3, seed = 1, count = 200000 }' ;;
        # One step at a fixed rate per trial (well under what R forwards
        # here), 1% loss allowed: a trial passes unless a fault hits it.
        router) printf '%s\n' 'name = "faults-router"' '[server]' 'kind = "router"' \
            '[load]' 'kind = "forward"' 'rate = 20000' 'loss = 1' ;;
        mariadb) printf '%s\n' 'name = "faults-mariadb"' '[server]' 'kind = "mariadb"' \
            '[load]' 'kind = "mysql"' 'tables = 1' 'table_size = 1000' 'script = "oltp_read_only"' ;;
        *) echo "no recipe for kind $1" >&2; exit 2 ;;
    esac >"$2"
    cat >>"$2" <<EOF
timeout = "1s"
[sweep]
connections = [$(seq -s, 1 "$3")]
[trials]
duration = "${DURATION:-400ms}"
warmup = "${WARMUP:-100ms}"
min = 1
max = 1
restart = "${RESTART:-per_point}"
EOF
}

q() { sqlite3 -batch -noheader "$1" "$2" 2>/dev/null; }
latest() { q "$1" "SELECT max(id) FROM runs"; }

# PIDs of the processes tied to this matrix's work directory, where every
# server's private directory lives: named in their command line (nginx
# master, postmaster), working in it (PostgreSQL backends) or holding a file
# of it open (nginx workers: error.log). One grep and one find, so it is
# cheap enough to poll.
ours() {
    {
        grep -alsF -- "$WORK/work" /proc/[0-9]*/cmdline
        find /proc/[0-9]*/cwd /proc/[0-9]*/fd/* -maxdepth 0 -lname "$WORK/work*" 2>/dev/null
    } | cut -d/ -f3 | sort -un | while read -r p; do
        # grep and find named the directory themselves; they are gone now.
        [ "$p" != $$ ] && [ -d "/proc/$p" ] && echo "$p"
    done
}
# master_pid KIND: the server's root process (a live one of this matrix
# only: a pid file left by an earlier kill may name a reused PID).
master_pid() {
    local files pid
    case $1 in
        nginx|nginx-tls) files=("$WORK"/work/nginx-*/nginx.pid) ;;
        postgres) files=("$WORK"/work/postgres/*/data/postmaster.pid) ;;
        mariadb) files=("$WORK"/work/mariadb-*/mysqld.pid) ;;
        unbound|unbound-dot) mapfile -t files < <(find "$WORK/work" -name unbound.pid 2>/dev/null) ;;
        nsd) mapfile -t files < <(find "$WORK/work" -name nsd.pid 2>/dev/null) ;;
        bind|bind-doh) mapfile -t files < <(find "$WORK/work" -name named.pid 2>/dev/null) ;;
    esac
    for pid in $(head -qn1 "${files[@]}" 2>/dev/null); do
        grep -qaF -- "$WORK/work" "/proc/$pid/cmdline" 2>/dev/null && { echo "$pid"; return; }
    done
}
# server_pids MASTER: the server's processes: its process group (each
# server runs in its own session) and the master's children (PostgreSQL
# backends make sessions of their own).
server_pids() {
    [ -n "$1" ] || return 0
    { pgrep -g "$1"; pgrep -P "$1"; echo "$1"; } | sort -un
}
# left_running: what is still running a few seconds after scalelab ended.
left_running() {
    local n
    for _ in $(seq 50); do
        n=$(ours | wc -l)
        [ "$n" = 0 ] && break
        sleep 0.1
    done
    echo "$n"
}
# cgroups_left PID: cgroups still named after a dead scalelab PID (its
# placement and tracking cgroups are `scalelab-PID-*`) 5 s after it died:
# the issue allows "a few seconds" for its watchdog to remove them.
cgroups_left() {
    local n i
    for i in $(seq 50); do
        # Its cgroups, and the private network namespaces: the DNS lab's
        # `scalelab-PURPOSE-PID-N`, the router lab's `slr-PID-N-{a,r,b}`
        # (veths and nftables tables live and die inside those).
        n=$(( $(find /sys/fs/cgroup -maxdepth 5 -type d -name "scalelab-$1-*" 2>/dev/null | wc -l) \
            + $(ip netns list 2>/dev/null | grep -cE -- "^(scalelab-[a-z]*-$1-|slr-$1-)") ))
        [ "$n" = 0 ] && break
        sleep 0.1
    done
    echo "$n"
}
# wait_trials STORE N [SECS]: until the latest run has N trials.
wait_trials() {
    for _ in $(seq $((${3:-60} * 10))); do
        [ "$(q "$1" "SELECT count(*) FROM trials WHERE run_id = (SELECT max(id) FROM runs)")" -ge "$2" ] 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
# check_run STORE RUN POINTS MIN_S: "trials=N dups=D short=S failed=F".
check_run() {
    q "$1" "SELECT 'trials=' || count(*) || ' dups=' || (count(*) - count(DISTINCT system || '/' || point_index || '/' || trial))
      || ' short=' || (SELECT count(*) FROM trials t JOIN measurements m ON m.trial_id = t.id WHERE t.run_id = $2 AND m.duration_s < $4)
      || ' failed=' || (SELECT count(*) FROM trials WHERE run_id = $2 AND status != 'ok')
      FROM trials WHERE run_id = $2"
}

scenario_kill9() {
    local kind=$1 dir=$WORK/kill9-$1 points=$((QUICK ? 4 : 8))
    # The latest moment to kill at: past startup and a few trials.
    local kill_max=2.5
    [ "$kind" = postgres ] && kill_max=5
    [ "$kind" = mariadb ] && kill_max=10
    mkdir -p "$dir"
    recipe "$kind" "$dir/exp.toml" "$points"
    local store=$dir/s.sqlite run= lost=0 left=0 cgroups=0 pid ids= before after
    for i in $(seq "$KILLS"); do
        if [ -z "$run" ]; then
            "$SCALELAB" --store "$store" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>&1 &
        else
            "$SCALELAB" --store "$store" run "$dir/exp.toml" --resume "$run" -o "$dir/r.html" >/dev/null 2>&1 &
        fi
        pid=$!
        # A random moment: startup, server start, warmup, window, between trials.
        sleep "$(python3 -c "import random; print(round(random.uniform(0.1, $kill_max), 2))")"
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        left=$((left + $(left_running)))
        cgroups=$((cgroups + $(cgroups_left "$pid")))
        [ -z "$run" ] && run=$(latest "$store")
        [ -z "$run" ] && continue
        before=$(q "$store" "SELECT group_concat(id) FROM trials WHERE run_id = $run")
        for id in ${ids//,/ }; do
            case ",$before," in *",$id,"*) ;; *) lost=$((lost + 1)) ;; esac
        done
        ids=$before
    done
    local status=0
    if [ -z "$run" ]; then
        "$SCALELAB" --store "$store" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>"$dir/err" || status=$?
        run=$(latest "$store")
    else
        "$SCALELAB" --store "$store" run "$dir/exp.toml" --resume "$run" -o "$dir/r.html" >/dev/null 2>"$dir/err" || status=$?
    fi
    after=$(q "$store" "SELECT group_concat(id) FROM trials WHERE run_id = $run")
    for id in ${ids//,/ }; do
        case ",$after," in *",$id,"*) ;; *) lost=$((lost + 1)) ;; esac
    done
    left=$((left + $(left_running)))
    local got
    got=$(check_run "$store" "$run" "$points" 0.35)
    local ok=1
    [ "$status" = 0 ] && [ "$got" = "trials=$points dups=0 short=0 failed=0" ] && [ "$lost" = 0 ] && [ "$left" = 0 ] && [ "$cgroups" = 0 ] && ok=0
    row "kill9-$kind" "$KILLS kill -9 + resume: $points trials once, none lost/short, 0 left" \
        "$KILLS kills, exit $status, $got, lost=$lost, left running=$left, cgroups left=$cgroups" $ok
}

# scenario_signal KIND SIG
scenario_signal() {
    local kind=$1 sig=$2 dir=$WORK/$2-$1
    mkdir -p "$dir"
    # The server stays up between points, so 0.7 s after trial 1 is stored
    # trial 2's window is under way (a slow server stop would otherwise be).
    DURATION=2s WARMUP=0s RESTART=never recipe "$kind" "$dir/exp.toml" 2
    local store=$dir/s.sqlite
    "$SCALELAB" --store "$store" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>"$dir/err" &
    local pid=$!
    wait_trials "$store" 1
    sleep 0.7
    kill "-$sig" "$pid"
    wait "$pid"
    local code=$? run
    run=$(latest "$store")
    local stored events left
    stored=$(q "$store" "SELECT count(*) FROM trials WHERE run_id = $run")
    events=$(q "$store" "SELECT count(*) FROM run_events WHERE run_id = $run AND kind = 'trial_interrupted'")
    left=$(left_running)
    local hint=0
    grep -q -- "--store $store run" "$dir/err" && hint=1
    "$SCALELAB" --store "$store" run "$dir/exp.toml" --resume "$run" -o "$dir/r.html" >/dev/null 2>&1
    local resumed=$? got
    got=$(check_run "$store" "$run" 2 1.9)
    local ok=1
    [ "$code" = 130 ] && [ "$stored" = 1 ] && [ "$events" = 1 ] && [ "$hint" = 1 ] && [ "$left" = 0 ] \
        && [ "$resumed" = 0 ] && [ "$got" = "trials=2 dups=0 short=0 failed=0" ] && ok=0
    row "${sig,,}-$kind" "exit 130, trial 2 an event not a trial, resume: 2 full trials" \
        "exit $code, stored $stored + $events event(s), hint with --store=$hint, left=$left; resume exit $resumed, $got" $ok
}

# scenario_server KIND WHAT(whole|master|sigstop)
scenario_server() {
    local kind=$1 what=$2 dir=$WORK/server-$2-$1
    mkdir -p "$dir"
    local dur=3s
    [ "$what" = sigstop ] && dur=6s
    DURATION=$dur WARMUP=0s RESTART=per_trial recipe "$kind" "$dir/exp.toml" 2
    local store=$dir/s.sqlite
    "$SCALELAB" --store "$store" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>"$dir/err" &
    local pid=$! master=
    if [ "$kind" = router ]; then
        router_fault "$pid" "$what"
    else
        for _ in $(seq 300); do
            master=$(master_pid "$kind")
            [ -n "$master" ] && break
            sleep 0.1
        done
        # Into the trial's window: a DNS lab's servers write their pid files
        # seconds before the load starts (the debug build encodes the query
        # set meanwhile), so wait for the load's packets on the lab's `lo`.
        case $kind in unbound|unbound-dot|nsd|bind|bind-doh) dns_window "$pid"; sleep 0.3 ;; *) sleep 0.8 ;; esac
        local victims
        case $what in
            whole) victims=$(server_pids "$master"); kill -9 $victims 2>/dev/null ;;
            master) kill -9 "$master" 2>/dev/null ;;
            sigstop)
                victims=$(server_pids "$master")
                kill -STOP $victims 2>/dev/null
                sleep 3
                kill -CONT $victims 2>/dev/null ;;
        esac
    fi
    wait "$pid"
    local code=$? run first second left
    run=$(latest "$store")
    # The trials in the order they ran (the points' order is seeded
    # random): the fault hits the first.
    first=$(q "$store" "SELECT status || ':' || coalesce(error, '') FROM trials WHERE run_id = $run ORDER BY id LIMIT 1")
    second=$(q "$store" "SELECT status FROM trials WHERE run_id = $run ORDER BY id LIMIT 1 OFFSET 1")
    left=$(( $(left_running) + $(cgroups_left "$pid") ))
    local ok=1
    if [ "$what" = sigstop ]; then
        local stall stalled=0
        if [ "$kind" = router ]; then
            # The paused seconds' frames are lost in the trial's one step.
            local step='$.forward.search.steps[0].trial'
            stall=$(q "$store" "SELECT 'lost ' || coalesce(json_extract(context, '$step.lost'), 'no step')
                || ' of ' || coalesce(json_extract(context, '$step.sent'), 0) || ' frames'
                FROM trials WHERE run_id = $run AND point_index = 0")
            case $stall in "lost "[1-9]*) stalled=1 ;; esac
        else
            stall=$(q "$store" "SELECT (SELECT count(*) FROM json_each(tl.per_second) WHERE value = 0) || ' empty s, '
                || json_extract(m.errors, '$.timeout') || ' timeouts'
                FROM trials t JOIN timelines tl ON tl.trial_id = t.id JOIN measurements m ON m.trial_id = t.id
                WHERE t.run_id = $run AND t.point_index = 0")
            case $stall in 0\ empty\ s,\ 0\ timeouts|"") ;; *) stalled=1 ;; esac
        fi
        [ "$stalled" = 1 ] && [ "$second" = ok ] && [ "$left" = 0 ] && { [ "$code" = 0 ] || [ "$code" = 3 ]; } && ok=0
        row "server-sigstop-$kind" "3 s stall visible in trial 1 (empty seconds/timeouts), trial 2 ok, 0 left" \
            "exit $code, trial 1 ${first%%:*} ($stall), trial 2 $second, left=$left" $ok
        return
    fi
    # Killed before the window opened, the trial fails on its load setup
    # instead ("cannot connect"): any stored reason will do.
    case $first in failed:?*) [ "$second" = ok ] && [ "$code" = 3 ] && [ "$left" = 0 ] && ok=0 ;; esac
    row "server-$what-$kind" "trial 1 failed with its reason (server died), trial 2 ok, exit 3, 0 left" \
        "exit $code, trial 1 ${first:0:60}, trial 2 $second, left=$left" $ok
}

# dns_window SCALELAB_PID: waits (up to 30 s) until the DNS lab of that
# scalelab process carries the load: over 1000 packets on its `lo`
# (readiness checks send a handful).
dns_window() {
    local ns n
    for _ in $(seq 300); do
        ns=$(ip netns list 2>/dev/null | awk '{print $1}' | grep -m1 -- "^scalelab-dns-$1-")
        n=0
        [ -n "$ns" ] && n=$(ip -n "$ns" -s link show lo 2>/dev/null | awk 'NR == 4 { print $2 }')
        [ "${n:-0}" -gt 1000 ] && return
        sleep 0.1
    done
}

# router_fault SCALELAB_PID WHAT: the router's faults, 0.8 s into the
# first trial of the lab that scalelab process built.
router_fault() {
    local r=
    for _ in $(seq 300); do
        r=$(ip netns list 2>/dev/null | awk '{print $1}' | grep -m1 -E -- "^slr-$1-[0-9]+-r$")
        [ -n "$r" ] && break
        sleep 0.1
    done
    [ -n "$r" ] || return
    sleep 0.8
    case $2 in
        whole) ip netns del "$r" ;;
        master) ip -n "$r" link del r1 ;;
        sigstop)
            ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=0
            sleep 3
            ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1 2>/dev/null ;;
    esac
}

scenario_busy_port() {
    local dir=$WORK/busy-port
    mkdir -p "$dir"
    recipe nginx "$dir/exp.toml" 3
    python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$dir/port" &
    local holder=$!
    for _ in $(seq 50); do [ -s "$dir/port" ] && break; sleep 0.1; done
    local port
    port=$(cat "$dir/port")
    sed -i "s/^worker_processes = 2/worker_processes = 2\nport = $port/" "$dir/exp.toml"
    local start=$SECONDS
    "$SCALELAB" --store "$dir/s.sqlite" run "$dir/exp.toml" >/dev/null 2>"$dir/err"
    local code=$? took=$((SECONDS - start))
    kill "$holder"; wait "$holder" 2>/dev/null
    local trials
    trials=$(q "$dir/s.sqlite" "SELECT count(*) FROM trials")
    local ok=1
    grep -q "port $port is already in use" "$dir/err" && [ "$code" = 2 ] && [ "${trials:-0}" = 0 ] && [ "$took" -lt 10 ] && ok=0
    row "busy-port" "refused once before the sweep, exit 2, port named, 0 trials" \
        "exit $code in ${took}s, $(grep -o 'port [0-9]* is already in use by [^;]*' "$dir/err" | head -1), trials=${trials:-0}" $ok
}

scenario_full_fs() {
    local dir=$WORK/full-fs
    mkdir -p "$dir/mnt"
    MNT=$dir/mnt
    mount -t tmpfs -o size=160k tmpfs "$MNT" || { row full-fs "clear error" "cannot mount a tmpfs (needs root)" 1; MNT=; return; }
    recipe nginx "$dir/exp.toml" 40
    "$SCALELAB" --store "$MNT/s.sqlite" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>"$dir/err"
    local code=$? left
    left=$(left_running)
    local err
    err=$(grep -m1 '^error' "$dir/err")
    local readable
    readable=$(q "$MNT/s.sqlite" "SELECT count(*) FROM trials t JOIN measurements m ON m.trial_id = t.id")
    local ok=1
    [ "$code" = 2 ] && grep -qi "full" <<<"$err" && [ "$left" = 0 ] && [ "${readable:-0}" -gt 0 ] && ok=0
    row "full-fs" "clear error naming the full disk, exit 2, stored trials readable, 0 left" \
        "exit $code, '${err:0:70}', $readable trials readable, left=$left" $ok
    umount "$MNT" && MNT=
}

scenario_concurrent_resumes() {
    local dir=$WORK/two-resumes
    mkdir -p "$dir"
    recipe nginx "$dir/exp.toml" 6
    local store=$dir/s.sqlite
    "$SCALELAB" --store "$store" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>&1 &
    local pid=$!
    wait_trials "$store" 2
    kill -9 "$pid"; wait "$pid" 2>/dev/null
    local run
    run=$(latest "$store")
    "$SCALELAB" --store "$store" run "$dir/exp.toml" --resume "$run" -o "$dir/a.html" >/dev/null 2>"$dir/a.err" &
    local a=$!
    "$SCALELAB" --store "$store" run "$dir/exp.toml" --resume "$run" -o "$dir/b.html" >/dev/null 2>"$dir/b.err" &
    local b=$!
    wait "$a"; local ca=$?
    wait "$b"; local cb=$?
    local got refused unique left
    got=$(check_run "$store" "$run" 6 0.35)
    refused=$(cat "$dir/a.err" "$dir/b.err" | grep -c "is being run right now")
    unique=$(cat "$dir/a.err" "$dir/b.err" | grep -c "UNIQUE")
    left=$(left_running)
    local ok=1
    { [ "$ca.$cb" = 0.2 ] || [ "$ca.$cb" = 2.0 ]; } && [ "$refused" = 1 ] && [ "$unique" = 0 ] \
        && [ "$got" = "trials=6 dups=0 short=0 failed=0" ] && [ "$left" = 0 ] && ok=0
    row "two-resumes" "one resumes, the other refused clearly (exit 2), 6 trials once" \
        "exits $ca/$cb, refusals $refused, UNIQUE errors $unique, $got, left=$left" $ok
}

scenario_fuzz() {
    local log=$WORK/fuzz.log
    (cd "$ROOT" && cargo test --all-targets fuzz 2>&1) >"$log"
    local code=$? passed
    passed=$(grep -o '[0-9]* passed' "$log" | awk '{s += $1} END {print s + 0}')
    local ok=1
    [ "$code" = 0 ] && [ "$passed" -gt 0 ] && ok=0
    row "parser-fuzz" "the proptest fuzz over spec and CLI: no panic" \
        "cargo test fuzz: exit $code, $passed test(s) passed" $ok
}

# --- issue 24: remote (remote helper) ---
# Multi-host rows in a lab of network namespaces with real sshd
# (scripts/netns-lab.sh), its state in $WORK/lab, torn down by cleanup.
# The agents live in $WORK/agents (SCALELAB_AGENT_DIR), not the hosts'
# shared /var/tmp/scalelab-agent.
LAB_DIR=
LAB_PREFIX=flt$(($$ % 100000))
LAB_SSH=
lab_up() {
    LAB_DIR=$WORK/lab
    local out
    out=$(SCALELAB_LAB_DIR=$LAB_DIR SCALELAB_LAB_PREFIX=$LAB_PREFIX "$ROOT/scripts/netns-lab.sh" up "$1") || return 1
    LAB_SSH=$(sed -n "s/^export SCALELAB_SSH_COMMAND='\(.*\)'$/\1/p" <<<"$out")
}
lab_down() {
    SCALELAB_LAB_DIR=$LAB_DIR SCALELAB_LAB_PREFIX=$LAB_PREFIX "$ROOT/scripts/netns-lab.sh" down >/dev/null 2>&1
    LAB_DIR=
}
# lab_scalelab ARGS: scalelab on the coordinator host h0.
lab_scalelab() {
    ip netns exec "$LAB_PREFIX-h0" env SCALELAB_SSH_COMMAND="$LAB_SSH" \
        SCALELAB_AGENT_DIR="$WORK/agents" "$SCALELAB" "$@"
}
# lab_scalelab_bg ARGS...: lab_scalelab in the background, with LAB_PID
# scalelab's own PID (ip netns exec and env exec it). A backgrounded
# function's $! is its subshell: kill -9 of that left scalelab running,
# and the kill -9 rows then measured a run that was never killed.
lab_scalelab_bg() {
    ip netns exec "$LAB_PREFIX-h0" env SCALELAB_SSH_COMMAND="$LAB_SSH" \
        SCALELAB_AGENT_DIR="$WORK/agents" "$SCALELAB" "$@" &
    LAB_PID=$!
}
# lab_agents HOST: PIDs of scalelab agents in the lab host's namespace.
lab_agents() {
    local p
    for p in $(ip netns pids "$LAB_PREFIX-h$1" 2>/dev/null); do
        { tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | grep -q " agent --workdir" && echo "$p"
    done
}
# lab_left: agents and nginx processes still in the lab hosts h1..h3.
lab_left() {
    local h p n=0
    for h in 1 2 3; do
        for p in $(ip netns pids "$LAB_PREFIX-h$h" 2>/dev/null); do
            { tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | grep -qE " agent --workdir|^nginx" && n=$((n + 1))
        done
    done
    echo "$n"
}
lab_recipe() {
    local clients=$2 points=$3 duration=$4
    printf '%s\n' 'name = "faults-remote"' '[hosts]' 'server = "root@198.18.0.11"' \
        "clients = [$clients]" '[server]' 'kind = "nginx"' 'worker_processes = 1' \
        '[load]' 'kind = "http"' 'path = "/"' '[sweep]' "connections = [$(seq -s, 2 2 $((2 * points)))]" \
        '[trials]' "duration = \"$duration\"" 'warmup = "0s"' 'min = 1' 'max = 1' >"$1"
}

scenario_deploy_truncated() {
    local dir=$WORK/deploy-truncated
    mkdir -p "$dir"
    lab_up 2 || { row deploy-truncated "lab up" "scripts/netns-lab.sh up failed" 1; return; }
    lab_recipe "$dir/exp.toml" '"root@198.18.0.12"' 1 500ms
    # 1. kill -9 of the coordinator while it copies the agent.
    lab_scalelab_bg --store "$dir/s.sqlite" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>&1
    local pid=$LAB_PID caught=no
    for _ in $(seq 400); do
        compgen -G "$WORK/agents/scalelab-*.part-*" >/dev/null && { caught=yes; break; }
        sleep 0.01
    done
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    sleep 1 # the remote shell sees its input end and removes its copy
    local want final partial=0
    want=$(sha256sum <"$SCALELAB" | cut -d' ' -f1)
    for final in "$WORK"/agents/scalelab-*; do
        case $final in *.part-*) continue ;; esac
        [ -f "$final" ] && [ "$(sha256sum <"$final" | cut -d' ' -f1)" != "$want" ] && partial=$((partial + 1))
    done
    # 2. A truncated file under the final name (as the old deploy left).
    lab_scalelab --store "$dir/s.sqlite" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>"$dir/err1"
    final=$(find "$WORK/agents" -maxdepth 1 -name 'scalelab-*' ! -name '*.part-*' | head -1)
    local size
    size=$(stat -c %s "$final" 2>/dev/null || echo 0)
    truncate -s $((size / 2)) "$final"
    lab_scalelab --store "$dir/s.sqlite" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>"$dir/err2"
    local code=$? same=no parts left
    [ "$(sha256sum <"$final" | cut -d' ' -f1)" = "$want" ] && same=yes
    parts=$(find "$WORK/agents" -name '*.part-*' | wc -l)
    left=$(lab_left)
    lab_down
    local ok=1
    [ "$partial" = 0 ] && [ "$code" = 0 ] && [ "$same" = yes ] && [ "$parts" = 0 ] && [ "$left" = 0 ] && ok=0
    row "deploy-truncated" "kill -9 mid-copy: no partial file under the final name; truncated agent replaced, run exit 0, hash matches" \
        "killed mid-copy: $caught, partial finals=$partial; after truncation: exit $code, sha256 matches: $same, temp copies=$parts, left=$left" $ok
}

scenario_lost_agent_resume() {
    local dir=$WORK/lost-agent
    mkdir -p "$dir"
    lab_up 3 || { row lost-agent-resume "lab up" "scripts/netns-lab.sh up failed" 1; return; }
    lab_recipe "$dir/exp.toml" '"root@198.18.0.12", "root@198.18.0.13"' 3 3s
    local store=$dir/s.sqlite
    lab_scalelab_bg --store "$store" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>"$dir/err1"
    local pid=$LAB_PID victim=
    for _ in $(seq 300); do
        victim=$(lab_agents 3 | head -1)
        [ -n "$victim" ] && break
        sleep 0.1
    done
    sleep 1.5 # into the first trial
    [ -n "$victim" ] && kill -9 "$victim"
    wait "$pid"
    local code=$? run
    run=$(latest "$store")
    local first
    first=$(q "$store" "SELECT group_concat(trial_status, ' ') FROM (SELECT point_index || ':' || status || coalesce('/' || failure_cause, '') AS trial_status FROM trials WHERE run_id = $run ORDER BY point_index)")
    lab_scalelab --store "$store" run "$dir/exp.toml" --resume "$run" -o "$dir/r.html" >/dev/null 2>"$dir/err2"
    local code2=$? said got left
    said=$(grep -o 'retrying [0-9]* trial(s)[^)]*)' "$dir/err2")
    got=$(check_run "$store" "$run" 3 2.5)
    left=$(lab_left)
    lab_down
    local ok=1
    [ "$first" = "0:failed/lost_host 1:ok 2:ok" ] && [ "$code2" = 0 ] && [ -n "$said" ] \
        && [ "$got" = "trials=3 dups=0 short=0 failed=0" ] && [ "$left" = 0 ] && ok=0
    row "lost-agent-resume" "kill -9 of a client's agent mid-trial: that trial fails (lost_host), the rest run; resume retries it once" \
        "run exit $code: $first; resume exit $code2: '$said', $got, left=$left" $ok
}

scenario_pg_disk_full() {
    local dir=$WORK/pg-disk-full
    mkdir -p "$dir/mnt"
    MNT=$dir/mnt
    mount -t tmpfs -o size=80m,mode=755 tmpfs "$MNT" || { row pg-disk-full "named cause" "cannot mount a tmpfs (needs root)" 1; MNT=; return; }
    printf '%s\n' 'name = "faults-disk-full"' '[server]' 'kind = "postgres"' 'shared_buffers = "16MB"' \
        'max_connections = 20' '[load]' 'kind = "pg"' 'scale = 10' 'script = "select-only"' \
        '[sweep]' 'connections = [1]' '[trials]' 'duration = "300ms"' 'warmup = "0s"' 'min = 1' 'max = 1' >"$dir/exp.toml"
    SCALELAB_WORKDIR=$MNT "$SCALELAB" --store "$dir/s.sqlite" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>&1
    local code=$? err cause left
    err=$(q "$dir/s.sqlite" "SELECT error FROM trials")
    cause=$(q "$dir/s.sqlite" "SELECT failure_cause FROM trials")
    left=$(left_running)
    umount "$MNT" && MNT=
    local ok=1
    grep -q "no space left on device on .*(from server.log)" <<<"$err" && [ "$cause" = disk_full ] && [ "$left" = 0 ] && ok=0
    row "pg-disk-full" "pgbench load on an 80 MB tmpfs: the trial's error names the full disk, cause disk_full" \
        "exit $code, cause=$cause, '$(grep -o 'no space left on device on [^:]*' <<<"$err" | sed "s|$WORK|\$WORK|")', left=$left" $ok
}
# --- end issue 24: remote ---
# --- issue 24: self-stop (window helper) ---
# scenario_self_stop KIND SIG(SIGTSTP|SIGSTOP): scalelab itself stopped for
# 5 s in trial 2's 3 s window (Ctrl-Z, then fg), continued, left to finish.
# No stored ok trial may hold a window longer than its duration, the 1 s
# timeout's drain and the runner's 0.5 s slack; the stopped trial is a run
# event naming the stop (not a trial), the run ends resumable (exit 130)
# and --resume measures it again; nothing is left running.
scenario_self_stop() {
    local kind=$1 sig=$2 dir=$WORK/self-$2-$1 longest=4.5
    mkdir -p "$dir"
    DURATION=3s WARMUP=0s RESTART=never recipe "$kind" "$dir/exp.toml" 2
    local store=$dir/s.sqlite
    # Job control gives scalelab a process group of its own, under this
    # shell: in a group whose parent is gone (an orphaned one, as when this
    # script runs in the background of a shell that exited) the kernel
    # drops SIGTSTP.
    set -m
    "$SCALELAB" --store "$store" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>"$dir/err" &
    local pid=$!
    set +m
    # Into trial 2's window: scalelab's `held-watch` thread runs in measured
    # windows only (a DNS lab builds its query set for seconds first).
    local window=0
    wait_trials "$store" 1
    for _ in $(seq 600); do
        grep -qx held-watch /proc/"$pid"/task/*/comm 2>/dev/null && { window=1; break; }
        sleep 0.05
    done
    sleep 0.7
    kill "-$sig" "$pid"
    sleep 0.2
    local state
    state=$(awk '/^State:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
    sleep 4.8
    kill -CONT "$pid"
    wait "$pid"
    local code=$? run stored events long left bang=0
    run=$(latest "$store")
    stored=$(q "$store" "SELECT count(*) FROM trials WHERE run_id = $run")
    events=$(q "$store" "SELECT count(*) FROM run_events WHERE run_id = $run
        AND kind = 'trial_interrupted' AND detail LIKE 'scalelab was stopped for %'")
    long=$(q "$store" "SELECT count(*) FROM trials t JOIN measurements m ON m.trial_id = t.id
        WHERE t.run_id = $run AND t.status = 'ok' AND m.duration_s > $longest")
    grep -q '^  ! .*was stopped for' "$dir/err" && bang=1
    left=$(left_running)
    "$SCALELAB" --store "$store" run "$dir/exp.toml" --resume "$run" -o "$dir/r.html" >/dev/null 2>&1
    local resumed=$? got after
    got=$(check_run "$store" "$run" 2 2.9)
    after=$(q "$store" "SELECT count(*) FROM trials t JOIN measurements m ON m.trial_id = t.id
        WHERE t.run_id = $run AND m.duration_s > $longest")
    left=$((left + $(left_running) + $(cgroups_left "$pid")))
    local name=self-stop-$kind ok=1
    [ "$sig" = SIGSTOP ] && name=self-sigstop-$kind
    [ "$window" = 1 ] && [ "$state" = T ] && [ "$code" = 130 ] && [ "$stored" = 1 ] && [ "$events" = 1 ] && [ "$long" = 0 ] \
        && [ "$bang" = 1 ] && [ "$resumed" = 0 ] && [ "$got" = "trials=2 dups=0 short=0 failed=0" ] \
        && [ "$after" = 0 ] && [ "$left" = 0 ] && ok=0
    row "$name" "5 s $sig of scalelab: exit 130, trial 2 an event naming the stop, no window > ${longest}s stored, resume: 2 full trials, 0 left" \
        "in window=$window, state $state, exit $code, stored $stored + $events event(s), ! line=$bang, long=$long; resume exit $resumed, $got, long=$after, left=$left" $ok
}
# --- end issue 24: self-stop ---
# --- issue 24: leftover paths and cgroups (leftovers helper) ---
# leftovers-KIND: kill -9 of scalelab mid-trial (server up, pinned with
# server_cpus so it has placement cgroups) and again while `--profile`'s
# perf records; each time, within 5 s, every path and cgroup named after
# the killed PID must be gone: run, lab and perf directories in the work
# directory, the postmaster's socket directory, /tmp/scalelab-*-PID-*
# (PostgreSQL sockets, ssh control directories) and the cgroups
# scalelab-PID-* (placement and tracking), plus its lab namespaces.

# owned_paths PID BEFORE: the private paths that run made: top-level
# entries of the work directory that were not in the list BEFORE (the kept
# PostgreSQL clusters aside), the postmaster's socket directory (line 5 of
# postmaster.pid), and what /tmp holds under the PID's name.
owned_paths() {
    {
        ls -1 "$SCALELAB_WORKDIR" 2>/dev/null | grep -vx postgres | grep -vxFf "$2" \
            | sed "s|^|$SCALELAB_WORKDIR/|"
        # (a stale pid file of an earlier kill may name one long gone)
        sed -n 5p "$SCALELAB_WORKDIR"/postgres/*/data/postmaster.pid 2>/dev/null \
            | while read -r d; do [ -e "$d" ] && echo "$d"; done
        ls -1d /tmp/scalelab-*-"$1" /tmp/scalelab-*-"$1"-* 2>/dev/null
    } | grep -v '^$' | sort -u
}
# paths_left FILE: how many of the paths listed in FILE still exist, after
# up to 5 s.
paths_left() {
    local n p
    for _ in $(seq 50); do
        n=0
        while read -r p; do [ -e "$p" ] && n=$((n + 1)); done <"$1"
        [ "$n" = 0 ] && break
        sleep 0.1
    done
    echo "$n"
}
# cgroups_named PID: how many cgroups are named after PID now.
cgroups_named() {
    find /sys/fs/cgroup -maxdepth 5 -type d -name "scalelab-$1-*" 2>/dev/null | wc -l
}
# leftovers_kill KIND DIR MOMENT(trial|perf): one run killed at MOMENT;
# prints "made P paths C cgroups, left L paths M cgroups/namespaces", or
# "not reached" when the run ended first.
leftovers_kill() {
    local kind=$1 dir=$2 moment=$3 pid reached=0
    ls -1 "$SCALELAB_WORKDIR" >"$dir/before" 2>/dev/null
    "$SCALELAB" --store "$dir/s.sqlite" run "$dir/exp.toml" --profile -o "$dir/r.html" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 900); do
        if [ "$moment" = perf ]; then
            compgen -G "$SCALELAB_WORKDIR/perf-$pid-*" >/dev/null && reached=1
        elif [ "$(cgroups_named "$pid")" -gt 0 ]; then
            { [ "$kind" = router ] || [ -n "$(master_pid "$kind")" ]; } && reached=1
        fi
        [ "$reached" = 1 ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    [ "$reached" = 1 ] && sleep 0.8 # into the window
    owned_paths "$pid" "$dir/before" >"$dir/paths"
    local cgroups
    cgroups=$(cgroups_named "$pid")
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    local left_paths left_cgroups
    left_paths=$(paths_left "$dir/paths")
    left_cgroups=$(cgroups_left "$pid")
    if [ "$reached" = 1 ]; then
        echo "made $(wc -l <"$dir/paths") paths $cgroups cgroups, left $left_paths paths $left_cgroups cgroups/namespaces"
    else
        echo "not reached, left $left_paths paths $left_cgroups cgroups/namespaces"
    fi
    echo "$left_paths $left_cgroups" >"$dir/left-$moment"
}
scenario_leftovers() {
    local kind=$1 dir=$WORK/leftovers-$1
    mkdir -p "$dir"
    DURATION=3s WARMUP=0s RESTART=never recipe "$kind" "$dir/exp.toml" 1
    sed -i 's/^\[sweep\]$/[sweep]\nserver_cpus = [1]/' "$dir/exp.toml"
    local trial perf ok=1
    trial=$(leftovers_kill "$kind" "$dir" trial)
    perf=$(leftovers_kill "$kind" "$dir" perf)
    # The mid-trial kill must have found the server up; the perf moment
    # exists only for kinds with a process to profile.
    case $trial in made*) [ "$(cat "$dir/left-trial" "$dir/left-perf")" = "0 0
0 0" ] && ok=0 ;; esac
    row "leftovers-$kind" "kill -9 mid-trial and while perf records: 0 paths, 0 cgroups of the PID left after 5 s" \
        "mid-trial: $trial; perf: $perf" $ok
}
# --- end issue 24 (leftovers helper) ---
# --- issue 24, items 5 and 6 (policy helper): no packet before the policy,
# a read-only store, a missing store directory ---------------------------

# scenario_no_dns_before_policy: `load http` to a host name, with
# /etc/resolv.conf (in a private mount namespace) naming a UDP listener
# on a private loopback address that counts the queries it gets.
scenario_no_dns_before_policy() {
    local dir=$WORK/no-dns
    mkdir -p "$dir"
    local addr=127.53.$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))
    printf 'nameserver %s\noptions timeout:1 attempts:1\n' "$addr" >"$dir/resolv.conf"
    python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((sys.argv[1], 53)); s.settimeout(8); n=0
try:
    while True: s.recvfrom(2048); n += 1
except socket.timeout: pass
print(n)' "$addr" >"$dir/count" &
    local counter=$!
    sleep 0.3
    unshare -m --propagation private sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' \
        "$dir/resolv.conf" "$SCALELAB" load http http://8.8.8.8.nip.io/ -d 1s >/dev/null 2>"$dir/err"
    local code=$?
    wait "$counter"
    local queries
    queries=$(cat "$dir/count")
    local ok=1
    [ "$code" = 2 ] && [ "$queries" = 0 ] && grep -q '\[hosts\]' "$dir/err" && ok=0
    row "no-dns-before-policy" "host name refused, exit 2, 0 DNS queries sent" \
        "exit $code, $queries DNS queries, '$(head -c 90 "$dir/err")'" $ok
}

# scenario_read_only_store: `list` and `report` read a store on a
# read-only bind mount; `run` is refused naming the read-only location.
scenario_read_only_store() {
    local dir=$WORK/ro-store
    mkdir -p "$dir/ro"
    cp "$ROOT/tests/fixtures/stores/quickstart-v1.sqlite" "$dir/ro/s.sqlite"
    "$SCALELAB" --store "$dir/ro/s.sqlite" list >/dev/null 2>&1 # upgrade it while writable
    recipe nginx "$dir/exp.toml" 1
    local script='mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && shift && exec "$@"'
    unshare -m --propagation private sh -c "$script" "$dir/ro" x \
        "$SCALELAB" --store "$dir/ro/s.sqlite" list >"$dir/list" 2>&1
    local list=$?
    unshare -m --propagation private sh -c "$script" "$dir/ro" x \
        "$SCALELAB" --store "$dir/ro/s.sqlite" report 1 -o "$dir/r.html" >/dev/null 2>&1
    local report=$?
    unshare -m --propagation private sh -c "$script" "$dir/ro" x \
        "$SCALELAB" --store "$dir/ro/s.sqlite" run "$dir/exp.toml" >/dev/null 2>"$dir/err"
    local run=$?
    local ok=1
    [ "$list.$report.$run" = 0.0.2 ] && grep -q "read-only location" "$dir/err" && ok=0
    row "read-only-store" "list/report read it (exit 0), run refused naming it (exit 2)" \
        "list $list, report $report, run $run: '$(grep -o 'is in a read-only location' "$dir/err")'" $ok
}

# scenario_store_dir_missing: --store in a directory that does not exist.
scenario_store_dir_missing() {
    local dir=$WORK/no-store-dir
    mkdir -p "$dir"
    recipe nginx "$dir/exp.toml" 1
    "$SCALELAB" --store "$dir/nonexistent/dir/s.sqlite" run "$dir/exp.toml" >/dev/null 2>"$dir/err"
    local code=$?
    local ok=1
    [ "$code" = 2 ] && [ ! -e "$dir/nonexistent" ] && grep -q "mkdir -p" "$dir/err" && ok=0
    row "store-dir-missing" "refused naming the directory, exit 2, nothing created" \
        "exit $code, created: $([ -e "$dir/nonexistent" ] && echo yes || echo no)" $ok
}
# --- end of issue 24, items 5 and 6 ------------------------------------------

# --- issue 30: energy (energy helper) -----------------------------------------
# A power meter whose command hangs: the first run is killed at its 5 s
# timeout with its process group and not run again in the trial; the run
# completes, every trial is stored with the hang named once and no watts.
scenario_energy_meter_hangs() {
    local dir=$WORK/energy-hang
    mkdir -p "$dir"
    recipe nginx "$dir/exp.toml" 2
    local marker="6000.$RANDOM$RANDOM"
    printf '[probe]\nenergy = "command"\nenergy_command = "sleep %s"\n' "$marker" >>"$dir/exp.toml"
    "$SCALELAB" --store "$dir/s.sqlite" run "$dir/exp.toml" >/dev/null 2>"$dir/err"
    local code=$?
    local trials ok_trials named watts meters
    trials=$(q "$dir/s.sqlite" "SELECT count(*) FROM trials")
    ok_trials=$(q "$dir/s.sqlite" "SELECT count(*) FROM trials WHERE status = 'ok'")
    # Named: killed at its 5 s timeout, or cut off at the window's end.
    named=$(q "$dir/s.sqlite" "SELECT count(*) FROM probes WHERE summary LIKE '%energy_command%killed%'")
    watts=$(q "$dir/s.sqlite" "SELECT count(*) FROM probes WHERE json_extract(summary, '$.watts') IS NOT NULL")
    # The marker as a regex that grep's own command line does not match.
    meters=$(grep -alsE -- "${marker%%.*}[.]${marker#*.}" /proc/[0-9]*/cmdline | wc -l)
    local ok=1
    [ "$code" = 0 ] && [ "${trials:-0}" = 2 ] && [ "$ok_trials" = 2 ] && [ "$named" = 2 ] &&
        [ "$watts" = 0 ] && [ "$meters" = 0 ] && ok=0
    row "energy-meter-hangs" "exit 0, 2 ok trials, the hang named in each, no watts, no meter left" \
        "exit $code, $ok_trials/${trials:-0} ok, named in $named, watts in $watts, meters left $meters" $ok
}
# --- end issue 30: energy -------------------------------------------------------

# --- issue 36 (faults helper) ---------------------------------------------------
# meter_run DIR [PROBE LINES...]: one nginx run, server pinned apart from the
# client (server_cpus = 1), 2 trials of 2 s; prints "EXIT WMIN WMAX CPU W
# NAMED LEFT": the windows' range in s, the server's CPU use over the
# throughput (util / requests per s, in µs: the machine's drift between
# runs moves both alike and cancels, while a window stretched past the
# load lowers the util alone), the watts stored, the trials whose warnings
# name the meter, and the meter processes left (marker `sleep 600N.<pid>`).
meter_run() {
    local dir=$1; shift
    mkdir -p "$dir"
    { printf '%s\n' 'name = "faults-meter"' '[server]' 'kind = "nginx"' 'server_cpus = 1' \
        '[load]' 'kind = "http"' 'path = "/"' '[sweep]' 'connections = [4]' \
        '[trials]' 'duration = "2s"' 'warmup = "300ms"' 'min = 2' 'max = 2' '[probe]'
      printf '%s\n' "$@"; } >"$dir/exp.toml"
    "$SCALELAB" --store "$dir/s.sqlite" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>"$dir/err"
    local code=$?
    local figures named left
    figures=$(q "$dir/s.sqlite" "SELECT printf('%.2f %.2f %.1f %s', min(w), max(w), avg(c), coalesce(group_concat(DISTINCT watts), '-')) FROM (SELECT json_extract(p.summary, '\$.window_s') AS w, json_extract(p.summary, '\$.server_cpu_util') / m.rps * 1e6 AS c, round(json_extract(p.summary, '\$.watts'), 1) AS watts FROM probes p JOIN measurements m USING (trial_id))")
    named=$(q "$dir/s.sqlite" "SELECT count(*) FROM probes WHERE json_extract(summary, '\$.warnings') LIKE '%energy%'")
    left=$(grep -alsE -- "600[0-9][.]$$" /proc/[0-9]*/cmdline | wc -l)
    echo "$code ${figures:-- - - -} ${named:-0} $left"
}

# scenario_meters: energy off, then each misbehaving meter. Each must keep
# the trial's 2 s window (within 0.5 s: the old meters added 1 to 20 s) and the server's CPU over the
# throughput (within 35% of energy off: separate runs on this shared
# machine differ by up to 30% even so; the window is what a meter bent, a
# held meter took the CPU to 1% of it), store the right watts or none, name what
# went wrong, and leave no meter process.
scenario_meters() {
    local base=$WORK/meters off off_cpu
    off=$(meter_run "$base/off" 'energy = "off"')
    off_cpu=$(cut -d' ' -f4 <<<"$off")
    local name cmd watts want_named
    while IFS='#' read -r name cmd watts want_named; do
        local got code wmin wmax cpu w named left
        got=$(meter_run "$base/$name" 'energy = "command"' "energy_command = \"$cmd\"")
        read -r code wmin wmax cpu w named left <<<"$got"
        local ok=1
        if [ "$code" = 0 ] && [ "$w" = "$watts" ] && [ "$left" = 0 ] && [ "$named" -ge "$want_named" ] &&
            awk -v a="$wmin" -v b="$wmax" -v c="$cpu" -v o="$off_cpu" \
                'BEGIN { exit !(a > 1.5 && b < 2.5 && o > 0 && c / o > 0.65 && c / o < 1.35) }'; then
            ok=0
        fi
        row "meter-$name" "window 2 s, server CPU/throughput as energy off ($off_cpu us), watts $watts, named, none left" \
            "exit $code, window $wmin-$wmax s, CPU/throughput $cpu us, watts $w, named in $named, left $left" $ok
    done <<METERS
slow#sleep 1; echo 150 W#150.0#0
hung#sleep 6001.$$#-#2
chatty#echo 120 W; yes chatter#120.0#0
flood#yes junk | head -c 100000; echo 120 W#-#2
child-holding#sleep 6002.$$ & echo 100 W#100.0#0
overflowing#echo 1e308 W#-#2
METERS
}

# scenario_check_bisect: `git bisect run` over six commits with `check`
# as its test: a typo in the store's name, a corrupt store and a bad flag
# abort the bisect (exit 128), a baseline whose every trial was
# client-bound skips every commit (125); none names a first bad commit.
scenario_check_bisect() {
    local dir=$WORK/check-bisect
    mkdir -p "$dir/repo"
    recipe nginx "$dir/exp.toml" 1
    sed -i 's/^min = 1$/min = 3/; s/^max = 1$/max = 3/' "$dir/exp.toml"
    for _ in 1 2; do
        "$SCALELAB" --store "$dir/good.sqlite" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>&1
    done
    cp "$dir/good.sqlite" "$dir/bound.sqlite"
    q "$dir/bound.sqlite" "UPDATE trials SET context = json_set(context, '\$.client_bound', json('true'), '\$.client_bound_reason', 'faults.sh')"
    echo garbage >"$dir/corrupt.sqlite"
    (cd "$dir/repo" && git init -q && for i in 1 2 3 4 5 6; do
        echo "$i" >rev && git add rev && git -c user.name=f -c user.email=f@example.invalid commit -qm "c$i"
    done)
    local observed="" ok=0 case script want out got
    while IFS='|' read -r case script want; do
        out=$(cd "$dir/repo" && git bisect start HEAD HEAD~5 >/dev/null 2>&1 && git bisect run sh -c "$script" 2>&1; git bisect reset >/dev/null 2>&1)
        got=other
        grep -q "is the first bad commit" <<<"$out" && got=named
        grep -q "bisect run failed" <<<"$out" && got=aborted
        grep -q "only 'skip'ped commits left" <<<"$out" && got=skipped
        observed+="$case: $got; "
        [ "$got" = "$want" ] || ok=1
    done <<CASES
typo|"$SCALELAB" check "$dir/goood.sqlite:1" "$dir/good.sqlite:2"|aborted
corrupt|"$SCALELAB" check "$dir/corrupt.sqlite:1" "$dir/good.sqlite:2"|aborted
bad-flag|"$SCALELAB" check --max-regresion 5 "$dir/good.sqlite:1" "$dir/good.sqlite:2"|aborted
nothing-checked|"$SCALELAB" check "$dir/bound.sqlite:1" "$dir/good.sqlite:2"|skipped
CASES
    row "check-bisect" "git bisect run: typo/corrupt/bad flag abort, nothing checked skips, no commit named" \
        "$observed" $ok
}

# scenario_external_kill9: kill -9 of the coordinator while the recipe's
# `start` command keeps an `external` server running on lab host h1 (over
# ssh, no agent): its `stop` command runs there (the reaper), and --resume
# completes every trial (it met "Address already in use").
scenario_external_kill9() {
    local dir=$WORK/external-kill9
    mkdir -p "$dir"
    lab_up 2 || { row external-kill9 "lab up" "scripts/netns-lab.sh up failed" 1; return; }
    local p=$dir/server.pid
    printf '%s\n' 'name = "faults-external"' '[hosts]' 'server = "root@198.18.0.11"' \
        'clients = ["root@198.18.0.12"]' '[server]' 'kind = "external"' 'url = "http://198.18.0.11:8080/"' \
        "start = 'cd $dir; setsid python3 -m http.server 8080 --bind 198.18.0.11 </dev/null >/dev/null 2>&1 & echo \$! > $p'" \
        "stop = 'kill \$(cat $p) && rm -f $p'" "pid_command = 'cat $p'" \
        '[load]' 'kind = "http"' 'path = "/"' '[sweep]' 'connections = [1, 2, 3]' \
        '[trials]' 'duration = "1s"' 'warmup = "0s"' 'min = 1' 'max = 1' >"$dir/exp.toml"
    lab_scalelab_bg --store "$dir/s.sqlite" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>&1
    local pid=$LAB_PID servers=0 left=1
    # After the first trial is stored (the run exists to resume), while
    # the server runs for the next.
    for _ in $(seq 300); do
        [ -s "$p" ] && [ "$(q "$dir/s.sqlite" "SELECT count(*) FROM trials" 2>/dev/null)" -ge 1 ] 2>/dev/null && break
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    h1_servers() {
        local x
        for x in $(ip netns pids "$LAB_PREFIX-h1" 2>/dev/null); do
            { tr '\0' ' ' <"/proc/$x/cmdline"; } 2>/dev/null | grep -q 'http.server' && echo "$x"
        done
    }
    for _ in $(seq 150); do
        servers=$(h1_servers | wc -l)
        [ "$servers" = 0 ] && { left=0; break; }
        sleep 0.1
    done
    local run code got
    run=$(latest "$dir/s.sqlite")
    lab_scalelab --store "$dir/s.sqlite" run "$dir/exp.toml" --resume "$run" -o "$dir/r.html" >/dev/null 2>"$dir/err"
    code=$?
    got=$(q "$dir/s.sqlite" "SELECT count(*) || ' trials, ' || sum(status = 'ok') || ' ok' FROM trials WHERE run_id = $run")
    h1_servers | xargs -r kill 2>/dev/null # leave nothing, whatever happened
    lab_down
    local ok=1
    [ "$left" = 0 ] && [ "$code" = 0 ] && [ "$got" = "3 trials, 3 ok" ] && ok=0
    row "external-kill9" "kill -9: the external server on h1 stopped by its stop command; resume exit 0, 3 ok trials" \
        "server left after 15 s: $servers; resume exit $code, $got$( [ "$code" = 0 ] || printf '; %s' "$(tail -c 300 "$dir/err" | tr '\n|' '  ')")" $ok
}

# scenario_healed_partition: lab host h1 (the server's) cut off for 9 s
# mid-trial while h0 drops its TCP resets (a stateful firewall that forgot
# the flow): h1 never learns that the old session ended. The reconnect
# stops the old agent with its server and watchdog; nothing is left on h1
# after the run.
scenario_healed_partition() {
    local dir=$WORK/healed-partition
    mkdir -p "$dir"
    lab_up 2 || { row healed-partition "lab up" "scripts/netns-lab.sh up failed" 1; return; }
    lab_recipe "$dir/exp.toml" '"root@198.18.0.12"' 3 3s
    ip netns exec "$LAB_PREFIX-h0" nft add table inet partition &&
        ip netns exec "$LAB_PREFIX-h0" nft add chain inet partition out '{ type filter hook output priority 0 ; }' &&
        ip netns exec "$LAB_PREFIX-h0" nft add rule inet partition out tcp flags '&' rst == rst drop ||
        { lab_down; row healed-partition "nft" "cannot drop h0's resets (nft)" 1; return; }
    lab_scalelab_bg --store "$dir/s.sqlite" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>"$dir/err"
    local pid=$LAB_PID
    for _ in $(seq 300); do
        [ -n "$(lab_agents 1)" ] && break
        sleep 0.1
    done
    sleep 1.5 # into the first trial
    ip -n "$LAB_PREFIX-br" link set p1 down
    sleep 9
    ip -n "$LAB_PREFIX-br" link set p1 up
    wait "$pid"
    local code=$? left said
    left=$(lab_left)
    said=$(grep -c 'had outlived its session; stopped' "$dir/err")
    lab_down
    local ok=1
    [ "$left" = 0 ] && [ "$said" -ge 1 ] && ok=0
    row "healed-partition" "h1 cut off 9 s, its resets lost: the reconnect stops the old agent and its nginx, 0 left after the run" \
        "run exit $code, stale agent stopped (said $said time(s)), left on the lab hosts: $left" $ok
}
# --- end issue 36 -----------------------------------------------------------------

# --- issue 40: AF_XDP ---
# kill -9 of `scalelab load dns --generator xdp` at 3 moments while it
# sends into a sink (a veth whose far end has no address): 2 s later the
# interface holds no XDP program, no scalelab_xsk program nor its XSKMAP
# exists anywhere (bench/bpf-objects.py asks bpf() itself; the map holds
# the AF_XDP socket, the socket its pinned UMEM), and the process is gone.
scenario_xdp_kill9() {
    local g=slfx-g-$$ s=slfx-s-$$ i pid mac attached=0 progs=0 objs=0 alive=0 n=3
    ip netns add "$g"; ip netns add "$s"
    ip link add x0 netns "$g" type veth peer name x1 netns "$s"
    ip -n "$g" addr add 198.18.45.1/24 dev x0
    ip -n "$g" link set x0 up; ip -n "$s" link set x1 up
    mac=$(ip -n "$s" -j link show x1 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
    ip -n "$g" neigh replace 198.18.45.2 lladdr "$mac" dev x0 nud permanent
    printf 'h1.bench.test A\n' >"$WORK/xdp-q.txt"
    xdp_on() { ip -n "$g" -j link show x0 | grep -q '"xdp"'; }
    for i in $(seq "$n"); do
        ip netns exec "$g" "$SCALELAB" load dns 198.18.45.2:53 --generator xdp -Q 200000 \
            -d 60s --timeout 1s --queries "$WORK/xdp-q.txt" >/dev/null 2>&1 &
        pid=$!
        for _ in $(seq 100); do xdp_on && break; sleep 0.1; done
        xdp_on && attached=$((attached + 1))
        sleep "0.$((RANDOM % 9 + 1))"
        kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
        sleep 2
        xdp_on && progs=$((progs + 1))
        [ "$(python3 "$ROOT/bench/bpf-objects.py")" = "programs 0 xskmaps 0" ] || objs=$((objs + 1))
        kill -0 "$pid" 2>/dev/null && alive=$((alive + 1))
    done
    ip netns del "$g"; ip netns del "$s"
    local ok=1
    [ "$attached" = "$n" ] && [ "$progs" = 0 ] && [ "$objs" = 0 ] && [ "$alive" = 0 ] && ok=0
    row "xdp-kill9" "$n kill -9 of an XDP run: no program on the link, no program/XSKMAP (UMEM) left, no process" \
        "$n kills ($attached attached first): on the link=$progs, BPF objects left=$objs, alive=$alive" $ok
}
# --- end issue 40 ---

# --- issue 46: misc (misc helper) ---
# An XDP program another tool left attached (kxdpgun leaves its own): the
# xdp generator names it (name, id) and the command that detaches it, once;
# after that command it attaches again (and the sink never answers: exit 4).
scenario_xdp_attached() {
    local g=slfa-g-$$ s=slfa-s-$$ mac out status id name again ok=1
    ip netns add "$g"; ip netns add "$s"
    ip link add x0 netns "$g" type veth peer name x1 netns "$s"
    ip -n "$g" addr add 198.18.46.1/24 dev x0
    ip -n "$g" link set x0 up; ip -n "$s" link set x1 up
    mac=$(ip -n "$s" -j link show x1 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
    ip -n "$g" neigh replace 198.18.46.2 lladdr "$mac" dev x0 nud permanent
    printf 'h1.bench.test A\n' >"$WORK/xdpa-q.txt"
    ip netns exec "$g" kxdpgun -t 1 -Q 100 -i "$WORK/xdpa-q.txt" 198.18.46.2 >/dev/null 2>&1
    read -r id name < <(ip -n "$g" -d -j link show x0 | python3 -c 'import json,sys; p=json.load(sys.stdin)[0]["xdp"]["prog"]; print(p["id"], p["name"])')
    out=$(ip netns exec "$g" "$SCALELAB" load dns 198.18.46.2:53 --generator xdp -Q 1000 -d 300ms \
        --timeout 300ms --queries "$WORK/xdpa-q.txt" 2>&1 >/dev/null); status=$?
    ip -n "$g" link set dev x0 xdp off
    ip netns exec "$g" "$SCALELAB" load dns 198.18.46.2:53 --generator xdp -Q 1000 -d 300ms \
        --timeout 300ms --queries "$WORK/xdpa-q.txt" >/dev/null 2>&1; again=$?
    local left=0
    ip -n "$g" -j link show x0 | grep -q '"xdp"' && left=1
    ip netns del "$g"; ip netns del "$s"
    local named=0 once=0 raw=0
    case $out in *"XDP program \`$name\` (id $id)"*"ip link set dev x0 xdp off"*) named=1 ;; esac
    [ "$(grep -o 'already has' <<<"$out" | wc -l)" = 1 ] && once=1
    case $out in *"os error 16"*) raw=1 ;; esac
    [ "$status" = 2 ] && [ "$named" = 1 ] && [ "$once" = 1 ] && [ "$raw" = 0 ] && [ "$again" = 4 ] && [ "$left" = 0 ] && ok=0
    row "xdp-attached" "kxdpgun's program left on the link: exit 2 naming it and 'ip link set dev x0 xdp off', once; after it, attaches (exit 4 into the sink)" \
        "exit $status, named $name id $id=$named, said once=$once, raw EBUSY=$raw; after detach exit $again, left attached=$left: $(head -c 300 <<<"$out" | tr '\n' ' ')" $ok
}

# [trials] runs = 3, kill -9 in repeat 2: --resume of the killed run
# finishes it and starts repeat 3; three runs of one group and label, each
# point once in each, nothing left running.
scenario_resume_runs3() {
    local dir=$WORK/runs3 points=2 pid second status=0 ok=1
    mkdir -p "$dir"
    DURATION=300ms recipe nginx "$dir/exp.toml" "$points"
    echo 'runs = 3' >>"$dir/exp.toml"
    "$SCALELAB" --store "$dir/s.sqlite" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1200); do
        [ "$(q "$dir/s.sqlite" "SELECT count(*) FROM runs")" = 2 ] 2>/dev/null && break
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    second=$(latest "$dir/s.sqlite")
    "$SCALELAB" --store "$dir/s.sqlite" run "$dir/exp.toml" --resume "$second" -o "$dir/r.html" \
        >"$dir/out" 2>"$dir/err" || status=$?
    local runs group labels per left
    runs=$(q "$dir/s.sqlite" "SELECT count(*) FROM runs")
    group=$(q "$dir/s.sqlite" "SELECT count(*) FROM runs WHERE repeat_of = (SELECT min(id) FROM runs) AND repeats = 3 AND status = 'finished'")
    labels=$(q "$dir/s.sqlite" "SELECT count(DISTINCT label) FROM runs")
    per=$(q "$dir/s.sqlite" "SELECT group_concat(n) FROM (SELECT count(DISTINCT system || '/' || point_index || '/' || trial) || '/' || count(*) AS n FROM trials WHERE status = 'ok' GROUP BY run_id ORDER BY run_id)")
    left=$(left_running)
    [ "$status" = 0 ] && [ "$runs" = 3 ] && [ "$group" = 3 ] && [ "$labels" = 1 ] \
        && [ "$per" = "$points/$points,$points/$points,$points/$points" ] && [ "$left" = 0 ] \
        && grep -q '3 repeats of' "$dir/out" && ok=0
    row "resume-runs3" "runs = 3, kill -9 in repeat 2, --resume: 3 finished runs of one group and label, each point once, 0 left" \
        "killed in run $second; resume exit $status: runs=$runs, finished in group=$group, labels=$labels, ok trials per run (distinct/all)=$per, left running=$left; $(grep -m1 'repeats of run' "$dir/err")" $ok
}
# --- end issue 46: misc ---
# --- issue 46: agentless stalls (agentless helper) ---
# nginx on lab host h1 without an agent (`agent = false`: a POSIX sh over
# ssh), loaded from h2, 2 trials of 3 s sampled every 500 ms; one stall
# 1 s into trial 1's window (once h1's access log holds a request from h2):
#   agentless-probe-frozen  its probe shell SIGSTOPped 6 s: that trial is
#                           failed (lost_host, "the probe's window ran"),
#                           no ok trial has a probe window past its load's
#   agentless-sshd-frozen   every sshd of h1 SIGSTOPped 9 s: "stopped
#                           answering over ssh", not "the server died"
#   agentless-network-cut   h1's bridge port down 9 s: "the host stopped
#                           answering over ssh", a cause on every failure
# each then resumed: every trial ok, nothing left on h1 (nginx, shells) or
# in the work directory (scalelab-probe-*.sh, scalelab-bare-*);
#   agentless-disk-full     h1's work directory a full 256 KiB tmpfs (in
#                           h1's own mount namespace): "the host's disk is
#                           full: DIR (N bytes free)", cause disk_full
bare_recipe() {
    printf '%s\n' 'name = "faults-agentless"' '[hosts]' 'server = "root@198.18.0.11"' \
        'clients = ["root@198.18.0.12"]' 'agent = false' '[server]' 'kind = "nginx"' \
        'worker_processes = 1' "access_log_path = \"$2\"" '[load]' 'kind = "http"' 'path = "/"' \
        '[sweep]' 'connections = [2]' '[trials]' 'duration = "3s"' 'warmup = "0s"' \
        "min = $3" "max = $3" 'sample_interval = "500ms"' >"$1"
}
# lab_matching HOST TEXT: PIDs in the lab host's namespace whose command
# line holds TEXT.
lab_matching() {
    local p
    for p in $(ip netns pids "$LAB_PREFIX-h$1" 2>/dev/null); do
        { tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | grep -qF -- "$2" && echo "$p"
    done
}
# bare_left DIR: what the run left on h1 and in the work directory.
bare_left() {
    local n
    n=$(( $(lab_matching 1 nginx | wc -l) + $(lab_matching 1 scalelab-probe- | wc -l) + $(lab_matching 1 scalelab-bare- | wc -l) ))
    n=$((n + $(find "$1" -maxdepth 1 -name 'scalelab-probe-*' -o -maxdepth 1 -name 'scalelab-bare-*' | wc -l)))
    echo "$n"
}
# scenario_agentless_stall NAME: the stall NAME (probe, sshd, network).
scenario_agentless_stall() {
    local name=$1 dir=$WORK/agentless-$1 label
    case $1 in probe) label="probe-frozen" ;; sshd) label="sshd-frozen" ;; *) label="network-cut" ;; esac
    mkdir -p "$dir/work"
    lab_up 2 || { row "agentless-$label" "lab up" "scripts/netns-lab.sh up failed" 1; return; }
    bare_recipe "$dir/exp.toml" "$dir/access.log" 2
    local store=$dir/s.sqlite
    SCALELAB_WORKDIR=$dir/work lab_scalelab_bg --store "$store" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>"$dir/err1"
    local pid=$LAB_PID victims=
    for _ in $(seq 900); do
        grep -q '^198.18.0.12 ' "$dir/access.log" 2>/dev/null && break
        sleep 0.1
    done
    sleep 1
    case $name in
        probe) victims=$(lab_matching 1 scalelab-probe-); kill -STOP $victims; sleep 6; kill -CONT $victims ;;
        sshd) victims=$(lab_matching 1 sshd); kill -STOP $victims; sleep 9; kill -CONT $victims ;;
        network) ip -n "$LAB_PREFIX-br" link set p1 down; sleep 9; ip -n "$LAB_PREFIX-br" link set p1 up ;;
    esac
    wait "$pid"
    local code=$? run first bent
    run=$(latest "$store")
    first=$(q "$store" "SELECT status || coalesce('/' || failure_cause, '') || ': ' || coalesce(substr(error, 1, 60), '') FROM trials WHERE run_id = $run ORDER BY id LIMIT 1")
    bent=$(q "$store" "SELECT count(*) FROM trials t JOIN probes p ON p.trial_id = t.id JOIN measurements m ON m.trial_id = t.id WHERE t.run_id = $run AND t.status = 'ok' AND json_extract(p.summary, '\$.window_s') > m.duration_s + 1.0")
    local nocause
    nocause=$(q "$store" "SELECT count(*) FROM trials WHERE run_id = $run AND status = 'failed' AND failure_cause IS NULL")
    SCALELAB_WORKDIR=$dir/work lab_scalelab --store "$store" run "$dir/exp.toml" --resume "$run" -o "$dir/r.html" >/dev/null 2>"$dir/err2"
    local code2=$? said got left
    said=$(grep -o 'retrying [0-9]* trial(s)[^)]*)' "$dir/err2")
    got=$(check_run "$store" "$run" 1 2.5)
    sleep 2 # the hosts' shells see their sessions end
    left=$(bare_left "$dir/work")
    lab_down
    local want ok=1
    case $name in
        probe) want="the probe's window ran" ;;
        sshd) want="the host stopped answering over ssh" ;;
        network) want="the host stopped answering over ssh" ;;
    esac
    case $first in "failed/lost_host: $want"*) [ "$bent" = 0 ] && [ "$nocause" = 0 ] && [ "$code2" = 0 ] && [ -n "$said" ] \
        && [ "$got" = "trials=2 dups=0 short=0 failed=0" ] && [ "$left" = 0 ] && ok=0 ;; esac
    row "agentless-$label" "trial 1 failed/lost_host '$want...', no bent ok window, resume retries it, nothing left" \
        "run exit $code: '$first...', bent ok windows=$bent, failed without cause=$nocause; resume exit $code2: '$said', $got, left=$left" $ok
}
scenario_agentless_disk_full() {
    local dir=$WORK/agentless-disk-full
    mkdir -p "$dir/work"
    lab_up 2 || { row agentless-disk-full "lab up" "scripts/netns-lab.sh up failed" 1; return; }
    bare_recipe "$dir/exp.toml" "$dir/access.log" 1
    local sshd
    sshd=$(lab_matching 1 sshd | head -1)
    nsenter -t "$sshd" -m -- mount -t tmpfs -o size=256k,mode=755 tmpfs "$dir/work" &&
        nsenter -t "$sshd" -m -- dd if=/dev/zero of="$dir/work/filler" bs=1024 status=none 2>/dev/null
    SCALELAB_WORKDIR=$dir/work lab_scalelab --store "$dir/s.sqlite" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>&1
    local code=$? err cause left
    err=$(q "$dir/s.sqlite" "SELECT error FROM trials")
    cause=$(q "$dir/s.sqlite" "SELECT failure_cause FROM trials")
    left=$(lab_matching 1 nginx | wc -l)
    nsenter -t "$sshd" -m -- umount "$dir/work"
    lab_down
    local ok=1
    grep -q "the host's disk is full: $dir/work ([0-9]* bytes free)" <<<"$err" && [ "$cause" = disk_full ] && [ "$left" = 0 ] && ok=0
    row "agentless-disk-full" "h1's work dir a full tmpfs: 'the host's disk is full: DIR (N bytes free)', cause disk_full" \
        "exit $code, cause=$cause, '$(grep -o "the host's disk is full: [^;]*" <<<"$err" | sed "s|$WORK|\$WORK|")', left=$left" $ok
}
# scenario_tls_keys_left: after the kill -9 rows of nginx-tls,
# unbound-dot and bind-doh, no private key of a start is left in the work
# directory.
scenario_tls_keys_left() {
    local n
    n=$(find "$WORK/work" -name server.key 2>/dev/null | wc -l)
    row "tls-keys-left" "kill -9 of HTTPS runs: no server key left" "$n key files left" \
        "$([ "$n" = 0 ] && echo 0 || echo 1)"
}

# scenario_tls_mid_handshake: an external https server that reads each
# ClientHello and closes: both trials failed, each naming the close, the
# sweep went on to its second point, exit 4 (nothing measured).
scenario_tls_mid_handshake() {
    local dir=$WORK/tls-mid-handshake port closer status=0
    mkdir -p "$dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    python3 - "$port" <<'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
s.settimeout(60)
while True:
    c, _ = s.accept()
    c.settimeout(1)
    try:
        c.recv(512)
    except OSError:
        pass
    c.close()
PY
    closer=$!
    printf '%s\n' 'name = "faults-tls-close"' '[server]' 'kind = "external"' \
        "url = \"https://127.0.0.1:$port/\"" '[load]' 'kind = "http"' 'tls_verify = false' \
        'timeout = "1s"' '[sweep]' 'connections = [1, 2]' \
        '[trials]' 'duration = "400ms"' 'warmup = "0s"' 'min = 1' 'max = 1' >"$dir/exp.toml"
    local store=$dir/s.sqlite
    "$SCALELAB" --store "$store" run "$dir/exp.toml" -o "$dir/r.html" >/dev/null 2>"$dir/err" || status=$?
    kill "$closer" 2>/dev/null
    wait "$closer" 2>/dev/null
    local run failed named
    run=$(latest "$store")
    failed=$(q "$store" "SELECT count(*) FROM trials WHERE run_id = $run AND status = 'failed'")
    named=$(q "$store" "SELECT count(*) FROM trials WHERE run_id = $run AND error LIKE '%closed the connection during the TLS handshake%'")
    local ok=1
    [ "$status" = 4 ] && [ "$failed" = 2 ] && [ "$named" = 2 ] && ok=0
    row "tls-mid-handshake" "exit 4, 2 trials failed naming the close" \
        "exit $status, $failed failed, $named naming the close" $ok
}

scenario_agentless_stalls() {
    scenario_agentless_stall probe
    scenario_agentless_stall sshd
    scenario_agentless_stall network
    scenario_agentless_disk_full
}
# --- end issue 46: agentless stalls ---

echo "fault matrix: kinds '$KINDS', $KILLS kills per kind, work in $WORK" >&2
scenario_tls() {
    scenario_kill9 nginx-tls
    scenario_signal nginx-tls SIGINT
    scenario_server nginx-tls whole
    scenario_kill9 unbound-dot
    scenario_server unbound-dot whole
    scenario_kill9 bind-doh
    scenario_server bind-doh whole
    scenario_tls_keys_left
    scenario_tls_mid_handshake
}

if [ -n "${ONLY:-}" ]; then
    # ONLY="external_kill9 meters": just these scenarios (their function
    # names without `scenario_`; per-kind ones take the kinds in KINDS).
    for f in $ONLY; do "scenario_$f"; done
else
for kind in $KINDS; do
    scenario_kill9 "$kind"
    scenario_signal "$kind" SIGINT
    scenario_signal "$kind" SIGTERM
    scenario_server "$kind" whole
    scenario_server "$kind" master
    scenario_server "$kind" sigstop
    scenario_leftovers "$kind" # issue 24 (leftovers helper)
done
# --- issue 24: self-stop (window helper) ---
for kind in $KINDS; do
    scenario_self_stop "$kind" SIGTSTP
    scenario_self_stop "$kind" SIGSTOP
done
# --- end issue 24: self-stop ---
scenario_busy_port
scenario_full_fs
scenario_concurrent_resumes
scenario_fuzz
# --- issue 24: remote (remote helper) ---
scenario_deploy_truncated
scenario_lost_agent_resume
scenario_pg_disk_full
# --- end issue 24: remote ---
# --- issue 24: policy and small fixes (policy helper) ---
scenario_no_dns_before_policy
scenario_read_only_store
scenario_store_dir_missing
# --- end issue 24: policy ---
# --- issue 30: energy (energy helper) ---
scenario_energy_meter_hangs
# --- end issue 30: energy ---
# --- issue 36 (faults helper) ---
scenario_meters
scenario_check_bisect
scenario_external_kill9
scenario_healed_partition
# --- end issue 36 ---
# --- issue 40: AF_XDP ---
scenario_xdp_kill9
# --- end issue 40 ---
# --- issue 46: misc (misc helper) ---
scenario_xdp_attached
scenario_resume_runs3
# --- end issue 46: misc ---
# --- issue 46: agentless stalls (agentless helper) ---
scenario_agentless_stalls
# --- end issue 46: agentless stalls ---
scenario_tls # issue 50
fi

echo
echo "| scenario | expected | observed | result |"
echo "|---|---|---|---|"
for r in "${ROWS[@]}"; do
    IFS='|' read -r s e o v <<<"$r"
    echo "| $s | $e | $o | $v |"
done
exit $FAILED
