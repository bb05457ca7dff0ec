#!/usr/bin/env bash
# Side-by-side: `scalelab load http --http 2 --streams M` against h2load
# `-m M` on the same nginx (private tempdir, loopback port, 1 worker pinned
# to CPU 1, `listen ... ssl http2` with an ECDSA P-256 certificate made
# here by `openssl req`), both clients pinned to CPU 0, alternating A B A B
# for ROUNDS rounds. HTTPS (ALPN h2) by default; -C runs cleartext HTTP/2
# with prior knowledge (h2c) instead. h2load never checks the certificate,
# so scalelab runs with -k too. Both clients' CPU (user+sys) is taken the
# same external way, with /usr/bin/time. Prints the median req/s and CPU
# per 100k requests of each, and the ratios scalelab/h2load.
#
# Usage: bench/http2-vs-h2load.sh [-r ROUNDS] [-d SECONDS] [-c CONNS] [-m STREAMS] [-C]
# Environment: SCALELAB (a prebuilt scalelab binary; default: build
# target/release/scalelab). Takes about 2 * ROUNDS * SECONDS s.
set -euo pipefail

ROUNDS=5
SECS=3
CONNS=10
STREAMS=10
CLEAR=
while getopts "r:d:c:m:Ch" opt; do
    case $opt in
        r) ROUNDS=$OPTARG ;;
        d) SECS=$OPTARG ;;
        c) CONNS=$OPTARG ;;
        m) STREAMS=$OPTARG ;;
        C) CLEAR=1 ;;
        *) sed -n '2,15p' "$0"; exit 2 ;;
    esac
done
for tool in h2load nginx taskset python3 openssl curl /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (scripts/setup.sh)" >&2; exit 1; }
done
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs (client on 0, nginx on 1)" >&2; exit 1; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/scalelab-bin.sh
. "$ROOT/bench/scalelab-bin.sh"

WORK=$(mktemp -d /tmp/scalelab-bench-h2.XXXXXX)
NGINX_PID=
cleanup() {
    if [ -n "$NGINX_PID" ] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill -QUIT "$NGINX_PID"
        for _ in $(seq 100); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.05; done
        kill -KILL "$NGINX_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
if [ -n "$CLEAR" ]; then
    URL="http://127.0.0.1:$PORT/" LISTEN="http2" CERTS="" K=""
else
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
        -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 \
        -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
    URL="https://127.0.0.1:$PORT/" LISTEN="ssl http2" K="-k"
    CERTS="ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem; ssl_protocols TLSv1.2 TLSv1.3;"
fi
cat >"$WORK/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $WORK/cb; proxy_temp_path $WORK/p; fastcgi_temp_path $WORK/f;
    uwsgi_temp_path $WORK/u; scgi_temp_path $WORK/s;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$PORT $LISTEN;
        $CERTS
        location = / { return 200 "{}"; }
    }
}
CONF
taskset -c 1 nginx -p "$WORK" -c "$WORK/nginx.conf" &
NGINX_PID=$!
for _ in $(seq 100); do
    if [ -n "$CLEAR" ]; then curl -sf --http2-prior-knowledge -o /dev/null "$URL" && break
    else curl -ksf -o /dev/null "$URL" && break; fi
    sleep 0.05
done

RESULTS=$WORK/results.tsv
: >"$RESULTS"
# run_one TOOL ROUND: appends "tool round rps requests cpu_s".
run_one() {
    local tool=$1 round=$2 rps reqs
    if [ "$tool" = h2load ]; then
        CMD=(h2load -c"$CONNS" -m"$STREAMS" -D"$SECS" "$URL")
    else
        CMD=("$SCALELAB" load http --http 2 --streams "$STREAMS" -t1 -c"$CONNS" -d"${SECS}s" --json ${K:+"$K"} "$URL")
    fi
    /usr/bin/time -f '%U %S' -o "$WORK/time.txt" taskset -c 0 "${CMD[@]}" >"$WORK/out.txt"
    read -r rps reqs < <(python3 - "$tool" "$WORK/out.txt" <<'PY'
import json, re, sys
tool, out = sys.argv[1:]
text = open(out).read()
if tool == "h2load":
    rps = float(re.search(r"finished in [\d.]+s, ([\d.]+) req/s", text).group(1))
    m = re.search(r"requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored", text)
    reqs = int(m.group(2))
    if int(m.group(3)) or int(m.group(4)):
        print(f"h2load: {m.group(3)} failed, {m.group(4)} errored", file=sys.stderr)
else:
    j = json.loads(text[text.index("{"):])
    rps, reqs = j["rps"], j["requests"]
    bad = {k: v for k, v in j["errors"].items() if v}
    if bad:
        print(f"scalelab: errors {bad}", file=sys.stderr)
print(f"{rps:.1f} {reqs}")
PY
)
    read -r user sys_ <"$WORK/time.txt"
    echo "$tool $round $rps $reqs $(python3 -c "print($user + $sys_)")" >>"$RESULTS"
    tail -n1 "$RESULTS" | awk '{printf "  %-8s round %s: %10.0f req/s  cpu %.2fs\n", $1, $2, $3, $5}'
}

echo "nginx $(nginx -v 2>&1 | sed 's/.*\///') on CPU 1, clients on CPU 0, $URL, -c$CONNS -m$STREAMS, $ROUNDS rounds x ${SECS}s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
    for tool in h2load scalelab; do run_one "$tool" "$round"; done
done
python3 - "$RESULTS" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {(r[0], r[1]): (float(r[2]), float(r[4]) / int(r[3])) for r in rows}
for tool in ("h2load", "scalelab"):
    mine = [v for (t, _), v in by.items() if t == tool]
    print(f"{tool:<9} median {st.median(v[0] for v in mine):>10.0f} req/s  {st.median(v[1] for v in mine) * 1e5:>7.3f} cpu s/100k req  ({len(mine)} runs)")
pairs = [(by[("scalelab", n)], by[("h2load", n)]) for (t, n) in by if t == "h2load" and ("scalelab", n) in by]
print(f"paired    {st.median(s[0] / h[0] for s, h in pairs):.2f}x req/s, {st.median(s[1] / h[1] for s, h in pairs):.2f}x cpu per request  (median of per-round scalelab/h2load)")
PY
