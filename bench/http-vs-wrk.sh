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
# Usage: bench/http-vs-wrk.sh [-r ROUNDS] [-d SECONDS] [-c CONNS] [-p PATH]
set -euo pipefail

ROUNDS=5
SECS=5
CONNS=50
URL_PATH=/
COOLDOWN=${COOLDOWN:-3}
while getopts "r:d:c:p:h" opt; do
    case $opt in
        r) ROUNDS=$OPTARG ;;
        d) SECS=$OPTARG ;;
        c) CONNS=$OPTARG ;;
        p) URL_PATH=$OPTARG ;;
        *) sed -n '2,14p' "$0"; exit 2 ;;
    esac
done

for tool in wrk nginx taskset python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 1; }
done
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs (client on 0, nginx on 1)" >&2; exit 1; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
(cd "$ROOT" && cargo build --release --quiet)
SCALELAB=$ROOT/target/release/scalelab

WORK=$(mktemp -d /tmp/scalelab-bench.XXXXXX)
NGINX_PID=
cleanup() {
    if [ -n "$NGINX_PID" ] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -QUIT "$NGINX_PID"
        for _ in $(seq 100); do
            kill -0 "$NGINX_PID" 2>/dev/null || break
            sleep 0.05
        done
        kill -KILL "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
head -c 1024 /dev/zero | tr '\0' 'x' >"$WORK/1k.bin"
cat >"$WORK/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile 12000;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 10000; }
http {
    access_log off;
    client_body_temp_path $WORK/client_body;
    proxy_temp_path $WORK/proxy;
    fastcgi_temp_path $WORK/fastcgi;
    uwsgi_temp_path $WORK/uwsgi;
    scgi_temp_path $WORK/scgi;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$PORT reuseport backlog=4096;
        root $WORK;
        location = / { return 200 "{}"; }
        location = /1k.bin { }
    }
}
EOF
taskset -c 1 nginx -p "$WORK" -c "$WORK/nginx.conf" &
NGINX_PID=$!
URL="http://127.0.0.1:$PORT$URL_PATH"
for _ in $(seq 100); do
    curl -sf -o /dev/null "$URL" 2>/dev/null && break
    sleep 0.05
done
curl -sf -o /dev/null "$URL" || { echo "nginx did not answer at $URL" >&2; cat "$WORK/error.log" >&2; exit 1; }

RESULTS=$WORK/results.tsv
: >"$RESULTS"
NGINX_WORKER=$(cat "/proc/$NGINX_PID/task/$NGINX_PID/children" | awk '{print $1}')
TICKS=$(getconf CLK_TCK)

# CPU ticks: all CPUs busy, and nginx's worker.
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
nginx_ticks() { awk '{print $14+$15}' "/proc/$NGINX_WORKER/stat"; }

# run_one TOOL MODE ROUND: appends "mode tool round rps requests cpu_s
# other%", where other% is the CPU share (of both CPUs) used by neither the
# client nor nginx during the run: noise from the rest of the machine.
run_one() {
    local tool=$1 mode=$2 round=$3 out=$WORK/out.txt cmd b0 n0 b1 n1
    if [ "$tool" = wrk ]; then
        cmd=(wrk -t1 -c"$CONNS" -d"${SECS}s")
        [ "$mode" = close ] && cmd+=(-H 'Connection: close')
    else
        cmd=("$SCALELAB" load http -t1 -c"$CONNS" -d"${SECS}s" --json)
        [ "$mode" = close ] && cmd+=(--connreqs 1)
    fi
    b0=$(busy_ticks) n0=$(nginx_ticks)
    /usr/bin/time -f '%U %S %e' -o "$WORK/time.txt" taskset -c 0 "${cmd[@]}" "$URL" >"$out"
    b1=$(busy_ticks) n1=$(nginx_ticks)
    python3 - "$tool" "$mode" "$round" "$out" "$WORK/time.txt" \
        $((b1 - b0)) $((n1 - n0)) "$TICKS" >>"$RESULTS" <<'PY'
import json, re, sys
tool, mode, rnd, out, tm, busy, ngx, hz = sys.argv[1:]
text = open(out).read()
if tool == "wrk":
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    reqs = int(re.search(r"(\d+) requests in", text).group(1))
    errs = re.search(r"Socket errors: (.*)", text)
    if errs:
        print(f"wrk {mode} round {rnd}: socket errors {errs.group(1)}", file=sys.stderr)
else:
    j = json.loads(text)
    rps, reqs = j["rps"], j["requests"]
    bad = {k: v for k, v in j["errors"].items() if v}
    if bad or j["notes"]:
        print(f"scalelab {mode} round {rnd}: errors {bad} notes {j['notes']}", file=sys.stderr)
user, sys_, wall = map(float, open(tm).read().split()[-3:])
other = (int(busy) / int(hz) - int(ngx) / int(hz) - user - sys_) / (2 * wall) * 100
print(f"{mode}\t{tool}\t{rnd}\t{rps:.1f}\t{reqs}\t{user + sys_:.3f}\t{max(other, 0):.0f}")
PY
}

echo "nginx $(nginx -v 2>&1 | sed 's/.*\///') on CPU 1, clients on CPU 0, $URL"
echo "$ROUNDS rounds x ${SECS}s, -t1 -c$CONNS, alternating wrk / scalelab"
for mode in keepalive close; do
    for round in $(seq "$ROUNDS"); do
        for tool in wrk scalelab; do
            run_one "$tool" "$mode" "$round"
            tail -n1 "$RESULTS" | awk -F'\t' '{printf "  %-9s %-8s round %s: %10.0f req/s  cpu %.2fs  other load %s%%\n", $1, $2, $3, $4, $6, $7}'
            # Let TIME_WAIT sockets age out so close mode never runs out of ports.
            [ "$mode" = close ] && sleep "$COOLDOWN"
        done
    done
done

python3 - "$RESULTS" <<'PY'
import statistics as st, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
QUIET = 25
print()
print(f"{'mode':<10}{'tool':<10}{'median req/s':>14}{'cpu s/100k req':>16}{'runs':>6}")
for mode in ("keepalive", "close"):
    med = {}
    for tool in ("wrk", "scalelab"):
        runs = [r for r in rows if r[0] == mode and r[1] == tool]
        rps = st.median(float(r[3]) for r in runs)
        cpu = st.median(float(r[5]) / int(r[4]) * 1e5 for r in runs)
        med[tool] = (rps, cpu)
        spread = f"{min(float(r[3]) for r in runs):.0f}-{max(float(r[3]) for r in runs):.0f}"
        print(f"{mode:<10}{tool:<10}{rps:>14.0f}{cpu:>16.3f}{len(runs):>6}   req/s range {spread}")
    (wr, wc), (sr, sc) = med["wrk"], med["scalelab"]
    print(f"{mode:<10}{'ratio':<10}{sr / wr:>13.2f}x{sc / wc:>15.2f}x        scalelab/wrk of the medians")
    # Each round runs wrk then scalelab back to back: the per-round ratio
    # cancels slow drifts in machine load.
    by = {(r[1], r[2]): r for r in rows if r[0] == mode}
    pairs = [(by[("scalelab", n)], by[("wrk", n)]) for (t, n) in by if t == "wrk" and ("scalelab", n) in by]
    rr = st.median(float(s[3]) / float(w[3]) for s, w in pairs)
    cr = st.median((float(s[5]) / int(s[4])) / (float(w[5]) / int(w[4])) for s, w in pairs)
    print(f"{mode:<10}{'paired':<10}{rr:>13.2f}x{cr:>15.2f}x        median of per-round scalelab/wrk")
    quiet = [(s, w) for s, w in pairs if float(s[6]) < QUIET and float(w[6]) < QUIET]
    if quiet:
        rr = st.median(float(s[3]) / float(w[3]) for s, w in quiet)
        cr = st.median((float(s[5]) / int(s[4])) / (float(w[5]) / int(w[4])) for s, w in quiet)
        print(f"{mode:<10}{'quiet':<10}{rr:>13.2f}x{cr:>15.2f}x        same, {len(quiet)} rounds where other load < {QUIET}% in both runs")
print("(req/s: higher is better; cpu s per 100k requests: lower is better)")
PY
