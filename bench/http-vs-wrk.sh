#!/usr/bin/env bash
# Side-by-side: `scalelab load http` against wrk on the same nginx.
#
# Starts its own nginx (private tempdir, loopback port, 1 worker pinned to
# CPU 1), pins both clients to CPU 0, and alternates A B A B for ROUNDS
# rounds in two modes:
#   keepalive: wrk -t1 -cC            vs  scalelab load http -t1 -cC
#   close:     wrk ... -H 'Connection: close'  vs  scalelab ... --connreqs 1
# Both clients' CPU (user+sys) is taken the same external way, with
# /usr/bin/time. Prints per mode: median req/s, median CPU seconds per 100k
# requests, and the ratios scalelab/wrk.
#
# Two variants, always both, each with its own nginx:
#   lo    the host's loopback as it is. Loopback delivers a packet in the
#         sender's context, so each client's CPU also pays nginx's TCP
#         receive of the requests (and nginx pays the clients' receive).
#   rfs   a private network namespace whose lo steers receive processing
#         to the CPU of the socket's reader (RPS + RFS: rps_cpus 3,
#         rps_flow_cnt 4096, net.core.rps_sock_flow_entries >= 4096, the
#         last restored afterwards), so each side pays its own receive, as
#         between two machines. But the sender now pays an IPI to the other
#         CPU (net_rps_send_ipi), on this VM 2-3 us of client CPU per
#         request (a VM exit), more than the receive it moves away: read
#         it as a second view, not as the two-machine figure. Needs root;
#         without it the variant says so.
#
# -P profiles instead: ROUNDS alternating runs per variant, mode and tool
# under `perf record -e cpu-clock -g`, printed as microseconds of client CPU
# per request in buckets (bench/cpu-breakdown.py), plus one run each under
# `perf stat` and `strace -c -f`. It ends with the median of each bucket
# and scalelab's kernel TCP work over wrk's total, a bound below what any
# client reaches (it must also poll and enter syscalls).
#
# -T serves HTTPS instead (nginx `listen ... ssl`, TLS 1.2 and 1.3, an
# ECDSA P-256 certificate made here by `openssl req`): close mode is then a
# TLS handshake per request. wrk never checks the certificate, so scalelab
# runs with -k too; each tool resumes sessions as it does by default.
# ACCESS_LOG=1 turns nginx's access log on (`$ssl_session_reused`) and
# prints after each run how many of its requests came on a resumed session.
#
# Usage: bench/http-vs-wrk.sh [-r ROUNDS] [-d SECONDS] [-c CONNS] [-p PATH] [-V "lo rfs"] [-P] [-T]
# Environment: SCALELAB (a prebuilt scalelab binary, so nothing compiles
# under the bench lock; default: build target/release/scalelab), COOLDOWN (3),
# COALESCE (unset; 1 adds scalelab's opt-in --coalesce), FLOOR (unset; 1
# adds a third client to each round, bench/floor-client.c built with cc: the
# least an epoll client can do per request, with no clock, histogram or
# parsing, to show how low any client of this design could go).
# Takes about 2 variants * 2 tools * ROUNDS * (2 * SECONDS + COOLDOWN) s:
# under 3 min for -r 4 -d 3; -P -r 3 -d 3 -V lo about 2.5 min.
set -euo pipefail

ROUNDS=5
SECS=5
CONNS=50
URL_PATH=/
VARIANTS="lo rfs"
PROFILE=
TLS=
COOLDOWN=${COOLDOWN:-3}
while getopts "r:d:c:p:V:PTh" opt; do
    case $opt in
        r) ROUNDS=$OPTARG ;;
        d) SECS=$OPTARG ;;
        c) CONNS=$OPTARG ;;
        p) URL_PATH=$OPTARG ;;
        V) VARIANTS=$OPTARG ;;
        P) PROFILE=1 ;;
        T) TLS=1 ;;
        *) sed -n '2,48p' "$0"; exit 2 ;;
    esac
done
case " $VARIANTS " in
    *" lo "*) ;;
    *) echo "-V must include lo: the rfs variant is only shown beside the default" >&2; exit 2 ;;
esac
if [[ " $VARIANTS " == *" rfs "* ]] && [ "$(id -u)" != 0 ]; then
    echo "rfs variant skipped: it needs root (a network namespace and sysctls)"
    VARIANTS=lo
fi

for tool in wrk nginx taskset python3 /usr/bin/time ${TLS:+openssl}; do
    command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 1; }
done
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs (client on 0, nginx on 1)" >&2; exit 1; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/scalelab-bin.sh
. "$ROOT/bench/scalelab-bin.sh"
TOOLS="wrk scalelab"
if [ -n "${FLOOR:-}" ]; then
    command -v cc >/dev/null || { echo "missing: cc (for FLOOR=1)" >&2; exit 1; }
    FLOOR_BIN=$(mktemp /tmp/scalelab-floor-client.XXXXXX)
    cc -O2 -Wall -o "$FLOOR_BIN" "$ROOT/bench/floor-client.c"
    TOOLS="wrk scalelab floor"
fi
if [ -n "$PROFILE" ]; then
    for tool in perf strace; do
        command -v "$tool" >/dev/null || { echo "missing: $tool (for -P)" >&2; exit 1; }
    done
fi

WORK=$(mktemp -d /tmp/scalelab-bench.XXXXXX)
NS=scalelab-bench-$$
declare -A NGINX_PID NGINX_WORKER
FLOW_ENTRIES_BEFORE=
stop_nginx() {
    local pid=$1
    kill -0 "$pid" 2>/dev/null || return 0
    kill -QUIT "$pid"
    for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
cleanup() {
    for v in "${!NGINX_PID[@]}"; do stop_nginx "${NGINX_PID[$v]}"; done
    ip netns del "$NS" 2>/dev/null || true
    if [ -n "$FLOW_ENTRIES_BEFORE" ]; then
        echo "$FLOW_ENTRIES_BEFORE" >/proc/sys/net/core/rps_sock_flow_entries
    fi
    rm -rf "$WORK"
    rm -f "${FLOOR_BIN:-}"
}
trap cleanup EXIT INT TERM

# in_variant VARIANT CMD...: runs CMD on that variant's network (ip netns
# exec and taskset exec what they run, so a background CMD's $! is its PID).
in_variant() {
    local v=$1
    shift
    if [ "$v" = rfs ]; then exec ip netns exec "$NS" "$@"; else exec "$@"; fi
}

# The rfs variant's namespace: its lo steers each packet's receive to the
# CPU where the receiving socket was last read.
make_rfs_namespace() {
    ip netns add "$NS"
    ip netns exec "$NS" ip link set lo up
    ip netns exec "$NS" sh -c 'q=/sys/class/net/lo/queues/rx-0; echo 3 >$q/rps_cpus; echo 4096 >$q/rps_flow_cnt'
    local now
    now=$(cat /proc/sys/net/core/rps_sock_flow_entries)
    if [ "$now" -lt 4096 ]; then
        FLOW_ENTRIES_BEFORE=$now
        echo 4096 >/proc/sys/net/core/rps_sock_flow_entries
    fi
}

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
SCHEME=http${TLS:+s}
URL="$SCHEME://127.0.0.1:$PORT$URL_PATH"

# start_nginx VARIANT: one worker on CPU 1, in the variant's network.
start_nginx() {
    local v=$1 dir=$WORK/$1
    mkdir -p "$dir"
    head -c 1024 /dev/zero | tr '\0' 'x' >"$dir/1k.bin"
    local ssl="" certs="" access=off
    [ -n "${ACCESS_LOG:-}" ] && access="$dir/access.log reuse"
    if [ -n "$TLS" ]; then
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
            -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 \
            -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null
        ssl=" ssl"
        certs="ssl_certificate $dir/cert.pem; ssl_certificate_key $dir/key.pem; ssl_protocols TLSv1.2 TLSv1.3;"
    fi
    cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile 12000;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 10000; }
http {
    log_format reuse '\$connection_requests \$ssl_session_reused';
    access_log $access;
    client_body_temp_path $dir/client_body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$PORT$ssl reuseport backlog=4096;
        $certs
        root $dir;
        location = / { return 200 "{}"; }
        location = /1k.bin { }
    }
}
EOF
    (in_variant "$v" taskset -c 1 nginx -p "$dir" -c "$dir/nginx.conf") &
    NGINX_PID[$v]=$!
    for _ in $(seq 100); do
        (in_variant "$v" curl -ksf -o /dev/null "$URL") 2>/dev/null && break
        sleep 0.05
    done
    (in_variant "$v" curl -ksf -o /dev/null "$URL") ||
        { echo "nginx ($v) did not answer at $URL" >&2; cat "$dir/error.log" >&2; exit 1; }
    # The master's PID is $! (nothing forks on the way); nginx's own pid
    # file must agree, or stopping it would miss it.
    [ "$(cat "$dir/nginx.pid")" = "${NGINX_PID[$v]}" ] ||
        { echo "nginx ($v): pid file $(cat "$dir/nginx.pid") is not \$! ${NGINX_PID[$v]}" >&2; exit 1; }
    NGINX_WORKER[$v]=$(awk '{print $1}' "/proc/${NGINX_PID[$v]}/task/${NGINX_PID[$v]}/children")
}

for v in $VARIANTS; do
    if [ "$v" = rfs ]; then make_rfs_namespace; fi
    start_nginx "$v"
done

RESULTS=$WORK/results.tsv
: >"$RESULTS"
TICKS=$(getconf CLK_TCK)

# CPU ticks: all CPUs busy, and a variant's nginx worker.
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
nginx_ticks() { awk '{print $14+$15}' "/proc/${NGINX_WORKER[$1]}/stat"; }

# client_cmd TOOL MODE: sets CMD to the client's command line.
client_cmd() {
    if [ "$1" = floor ]; then
        CMD=("$FLOOR_BIN" 127.0.0.1 "$PORT" "$URL_PATH" "$CONNS" "$SECS" "$2")
        return
    elif [ "$1" = wrk ]; then
        CMD=(wrk -t1 -c"$CONNS" -d"${SECS}s")
        [ "$2" = close ] && CMD+=(-H 'Connection: close')
    else
        CMD=("$SCALELAB" load http -t1 -c"$CONNS" -d"${SECS}s" --json ${COALESCE:+--coalesce} ${TLS:+-k})
        [ "$2" = close ] && CMD+=(--connreqs 1)
    fi
    CMD+=("$URL")
}

# parse_client TOOL OUTPUT: prints "rps requests" from a client's output.
parse_client() {
    python3 - "$1" "$2" <<'PY'
import json, re, sys
tool, out = sys.argv[1:]
text = open(out).read()
if tool == "floor":
    m = re.search(r"requests (\d+) seconds ([\d.]+)", text)
    reqs = int(m.group(1))
    rps = reqs / float(m.group(2))
elif tool == "wrk":
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    reqs = int(re.search(r"(\d+) requests in", text).group(1))
    errs = re.search(r"Socket errors: (.*)", text)
    if errs:
        print(f"wrk: socket errors {errs.group(1)}", file=sys.stderr)
else:
    j = json.loads(text[text.index("{"):])
    rps, reqs = j["rps"], j["requests"]
    bad = {k: v for k, v in j["errors"].items() if v}
    if bad or j["notes"]:
        print(f"scalelab: errors {bad} notes {j['notes']}", file=sys.stderr)
print(f"{rps:.1f} {reqs}")
PY
}

# run_one VARIANT TOOL MODE ROUND: appends "variant mode tool round rps
# requests cpu_s other%", where other% is the CPU share (of both CPUs) used
# by neither the client nor nginx during the run: noise from the rest of
# the machine (in rfs, also receive softirqs that land while CPU 1 idles).
run_one() {
    local v=$1 tool=$2 mode=$3 round=$4 b0 n0 b1 n1 rps reqs
    client_cmd "$tool" "$mode"
    b0=$(busy_ticks) n0=$(nginx_ticks "$v")
    (in_variant "$v" /usr/bin/time -f '%U %S %e' -o "$WORK/time.txt" taskset -c 0 "${CMD[@]}") >"$WORK/out.txt"
    b1=$(busy_ticks) n1=$(nginx_ticks "$v")
    read -r rps reqs < <(parse_client "$tool" "$WORK/out.txt")
    python3 - "$v" "$mode" "$tool" "$round" "$rps" "$reqs" "$WORK/time.txt" \
        $((b1 - b0)) $((n1 - n0)) "$TICKS" >>"$RESULTS" <<'PY'
import sys
v, mode, tool, rnd, rps, reqs, tm, busy, ngx, hz = sys.argv[1:]
user, sys_, wall = map(float, open(tm).read().split()[-3:])
other = (int(busy) / int(hz) - int(ngx) / int(hz) - user - sys_) / (2 * wall) * 100
print(f"{v}\t{mode}\t{tool}\t{rnd}\t{rps}\t{reqs}\t{user + sys_:.3f}\t{max(other, 0):.0f}")
PY
}

# profile_one VARIANT TOOL MODE ROUND: in round 1, perf stat and strace -c
# of one run each (CPU per request, context switches and syscalls per
# request); in every round, one run under perf record, whose breakdown is
# printed and appended to $PROFILES for the summary.
profile_one() {
    local v=$1 tool=$2 mode=$3 round=$4 rps reqs label="$1 $3 $2"
    client_cmd "$tool" "$mode"
    if [ "$round" = 1 ]; then
        (in_variant "$v" perf stat -x, -e task-clock,context-switches -o "$WORK/stat.txt" \
            taskset -c 0 "${CMD[@]}") >"$WORK/out.txt"
        read -r rps reqs < <(parse_client "$tool" "$WORK/out.txt")
        awk -F, -v r="$reqs" -v l="$label" -v rps="$rps" '
            $3 == "task-clock" { t = $1 } $3 == "context-switches" { c = $1 }
            END { printf "%s: perf stat: %.0f req/s, %.2f us task-clock and %.3f context switches per request\n", l, rps, t * 1000 / r, c / r }' \
            "$WORK/stat.txt"
        cool "$mode"
        (in_variant "$v" strace -c -f -o "$WORK/strace.txt" taskset -c 0 "${CMD[@]}") >"$WORK/out.txt" 2>/dev/null
        read -r rps reqs < <(parse_client "$tool" "$WORK/out.txt")
        awk -v r="$reqs" -v l="$label" '
            $1 ~ /^[0-9]/ && NF >= 5 && $NF != "total" { n[$NF] = $4; all += $4 }
            END { printf "%s: strace -c: %.2f syscalls per request:", l, all / r
                  for (k in n) if (n[k] / r >= 0.01) printf " %s %.2f", k, n[k] / r; print "" }' "$WORK/strace.txt"
        cool "$mode"
    fi
    (in_variant "$v" perf record -q -e cpu-clock -g -o "$WORK/perf.data" \
        taskset -c 0 "${CMD[@]}") >"$WORK/out.txt" 2>/dev/null
    read -r rps reqs < <(parse_client "$tool" "$WORK/out.txt")
    perf script -i "$WORK/perf.data" 2>/dev/null |
        python3 "$ROOT/bench/cpu-breakdown.py" "$reqs" "$label: round $round, perf record" --tsv "$PROFILES"
    rm -f "$WORK/perf.data"
    cool "$mode"
}

# profile_summary: per variant and mode, the median microseconds per request
# of each bucket over the rounds, and what they bound. The kernel's TCP work
# (the buckets named in TCP_WORK) is what the same packets on the wire cost;
# a client can change only the rest (its own code, polling, sleeping and
# syscall entry), and it cannot remove polling and syscall entry. So
# "scalelab's TCP work / wrk's total" is a bound no client reaches; FLOOR=1
# measures how close a client that does nothing else gets.
profile_summary() {
    python3 - "$PROFILES" <<'PY'
import statistics as st, sys
TCP_WORK = ("softirq rx", "tcp send", "tcp recv", "conn setup", "close")
runs = {}
for line in open(sys.argv[1]):
    label, bucket, us = line.rstrip("\n").split("\t")
    key = tuple(label.split(":")[0].split())  # (variant, mode, tool)
    rnd = label.split("round ")[1].split(",")[0]
    runs.setdefault(key, {}).setdefault(rnd, {})[bucket] = float(us)
med = {k: {b: st.median(r[b] for r in rounds.values()) for b in next(iter(rounds.values()))}
       for k, rounds in runs.items()}
print()
print("median us of client CPU per request over the perf record rounds")
for (v, mode, tool), m in sorted(med.items()):
    if tool != "scalelab" or (v, mode, "wrk") not in med:
        continue
    w = med[(v, mode, "wrk")]
    n = len(runs[(v, mode, tool)])
    print(f"{v} {mode} ({n} rounds each)")
    for b in m:
        print(f"  {b:<13}{w[b]:>9.2f} wrk{m[b]:>9.2f} scalelab")
    tcp = sum(m[b] for b in TCP_WORK)
    own = m["total"] - tcp
    print(f"  scalelab: kernel TCP work {tcp:.2f} us; polling, sleeping, syscall entry and its own code {own:.2f} us")
    print(f"  CPU ratio {m['total'] / w['total']:.2f}x; its kernel TCP work alone is {tcp / w['total']:.2f}x "
          f"wrk's total (every client also polls and enters syscalls: FLOOR=1 measures the least it can add)")
PY
}

# Lets TIME_WAIT sockets age out so close mode never runs out of ports.
cool() { if [ "$1" = close ]; then sleep "$COOLDOWN"; fi; }

echo "nginx $(nginx -v 2>&1 | sed 's/.*\///') on CPU 1, clients on CPU 0, $URL; variants: $VARIANTS"
if [ -n "$PROFILE" ]; then
    echo "profile: $ROUNDS rounds of ${SECS}s runs per variant, mode and tool, alternating, -t1 -c$CONNS"
    PROFILES=$WORK/profiles.tsv
    : >"$PROFILES"
    for mode in keepalive close; do
        for round in $(seq "$ROUNDS"); do
            for v in $VARIANTS; do
                for tool in wrk scalelab; do profile_one "$v" "$tool" "$mode" "$round"; done
            done
        done
    done
    profile_summary
    exit 0
fi

echo "$ROUNDS rounds x ${SECS}s, -t1 -c$CONNS, alternating wrk / scalelab${COALESCE:+ --coalesce}"
for mode in keepalive close; do
    for round in $(seq "$ROUNDS"); do
        for v in $VARIANTS; do
            for tool in $TOOLS; do
                run_one "$v" "$tool" "$mode" "$round"
                if [ -n "${ACCESS_LOG:-}" ]; then
                    awk -v t="$tool" '{ n++; if ($2 == "r") r++ } END { printf "  %s: nginx logged %d requests, %d on a resumed session\n", t, n, r }' "$WORK/$v/access.log"
                    : >"$WORK/$v/access.log"
                fi
                tail -n1 "$RESULTS" | awk -F'\t' '{printf "  %-4s %-9s %-8s round %s: %10.0f req/s  cpu %.2fs  other load %s%%\n", $1, $2, $3, $4, $5, $7, $8}'
                cool "$mode"
            done
        done
    done
done

python3 - "$RESULTS" "$VARIANTS" <<'PY'
import statistics as st, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
QUIET = 25
NAMES = {"lo": "lo: host loopback, receive in the sender's context (the default)",
         "rfs": "rfs: namespace lo with RPS+RFS, receive on the reader's CPU, the sender pays an IPI per packet batch"}
rps_of = lambda r: float(r[4])
cpu_of = lambda r: float(r[6]) / int(r[5])
ratio = lambda pairs, f: st.median(f(s) / f(w) for s, w in pairs)
for v in sys.argv[2].split():
    print()
    print(NAMES[v])
    print(f"{'mode':<10}{'tool':<10}{'median req/s':>14}{'cpu s/100k req':>16}{'runs':>6}")
    for mode in ("keepalive", "close"):
        mine = [r for r in rows if r[0] == v and r[1] == mode]
        med = {}
        for tool in ("wrk", "scalelab", "floor"):
            runs = [r for r in mine if r[2] == tool]
            if not runs:
                continue
            med[tool] = (st.median(map(rps_of, runs)), st.median(cpu_of(r) * 1e5 for r in runs))
            spread = f"{min(map(rps_of, runs)):.0f}-{max(map(rps_of, runs)):.0f}"
            print(f"{mode:<10}{tool:<10}{med[tool][0]:>14.0f}{med[tool][1]:>16.3f}{len(runs):>6}   req/s range {spread}")
        (wr, wc), (sr, sc) = med["wrk"], med["scalelab"]
        print(f"{mode:<10}{'ratio':<10}{sr / wr:>13.2f}x{sc / wc:>15.2f}x        scalelab/wrk of the medians")
        # Each round runs wrk then scalelab back to back: the per-round ratio
        # cancels slow drifts in machine load.
        by = {(r[2], r[3]): r for r in mine}
        pairs = [(by[("scalelab", n)], by[("wrk", n)]) for (t, n) in by if t == "wrk" and ("scalelab", n) in by]
        print(f"{mode:<10}{'paired':<10}{ratio(pairs, rps_of):>13.2f}x{ratio(pairs, cpu_of):>15.2f}x        median of per-round scalelab/wrk")
        quiet = [(s, w) for s, w in pairs if float(s[7]) < QUIET and float(w[7]) < QUIET]
        if quiet:
            print(f"{mode:<10}{'quiet':<10}{ratio(quiet, rps_of):>13.2f}x{ratio(quiet, cpu_of):>15.2f}x        same, {len(quiet)} rounds where other load < {QUIET}% in both runs")
        floors = [(by[("floor", n)], by[("wrk", n)]) for (t, n) in by if t == "wrk" and ("floor", n) in by]
        if floors:
            print(f"{mode:<10}{'floor':<10}{ratio(floors, rps_of):>13.2f}x{ratio(floors, cpu_of):>15.2f}x        median of per-round floor-client/wrk")
print("(req/s: higher is better; cpu s per 100k requests: lower is better)")
PY
