#!/usr/bin/env bash
# scalelab's DNS generator against dnsperf and resperf, side by side, in the
# DNS lab (a private network namespace holding only lo; `scalelab dns lab`).
#
# 1. Against NSD (pinned to CPU 1), one thread each: alternating runs of
#    `dnsperf -T 1 -c 1` and `scalelab load dns -t 1 -c 1` (both -q 100,
#    pinned to CPU 0), in one lab. Reports median qps and client CPU
#    (user + system, /usr/bin/time) per 10k answered queries, and the median
#    per-round ratios (want: qps ratio >= 1, CPU ratio <= 1), also over the
#    quiet rounds (the rest of the machine used < 25% of the CPUs in both).
# 2. Against Unbound (pinned to CPU 1), a fresh lab (cold cache) per run:
#    alternating `resperf -m MAX -r RAMP` and `scalelab load dns --ramp RAMP
#    --max-rate MAX`. Reports both maximum throughputs and their ratio (want
#    >= 0.9), and whether either fell behind its schedule.
# TRANSPORT=tcp runs part 1 over TCP: `dnsperf -m tcp` against
# `scalelab load dns --transport tcp`, one connection each with up to 100
# queries in flight on it (NSD serves TCP as it is). TRANSPORT=dot runs
# it over DNS over TLS (`dnsperf -m dot` against `--transport dot`)
# against an Unbound lab serving port 853 with its own certificate
# (`tls = true`; scalelab checks it with the lab's CA, dnsperf checks
# none). TRANSPORT=doh runs it over DNS over HTTPS, HTTP/2 on Unbound's
# port 443 (`dnsperf -m doh`, POST, against `--transport doh`, POST; each
# keeps up to 100 streams in flight on its connection). LAB=unbound runs
# part 1 against Unbound for any transport (the answers then come from its
# cache); LAB=bind against BIND (`tls = true` for dot and doh). Measured
# 2026-12-08 (RAMP_ROUNDS=0 ROUNDS=4, other load 0% in every round): BIND
# over DoT 61,035 qps for dnsperf against 69,488 for scalelab (1.12x, client
# CPU per answer 1.03x); over DoH 47,257 against 48,452 (1.03x, CPU 0.75x):
# BIND on its one CPU is the limit, so both tools reach about its rate.
# Per-run lines go to stderr.
#
# Usage: flock target/bench.lock bench/dns-vs-dnsperf.sh
# Environment: DURATION (s per NSD run, 4), ROUNDS (NSD alternations, 6),
#   RAMP (s, 15), MAX_RATE (qps, 60000), RAMP_ROUNDS (3), SERVER_CPU (1),
#   CLIENT_CPU (0), TRANSPORT (udp), LAB (nsd; unbound for dot and doh;
#   bind). Takes about 2*ROUNDS*DURATION + 2*RAMP_ROUNDS*(RAMP+8) s.
set -euo pipefail

DURATION=${DURATION:-4}
ROUNDS=${ROUNDS:-6}
RAMP=${RAMP:-15}
MAX_RATE=${MAX_RATE:-60000}
RAMP_ROUNDS=${RAMP_ROUNDS:-3}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
TRANSPORT=${TRANSPORT:-udp}
export TRANSPORT
case "$TRANSPORT" in
dot | doh) LAB=${LAB:-unbound} LAB_SETTINGS="tls = true" ;;
*) LAB=${LAB:-nsd} LAB_SETTINGS="" ;;
esac
case "$TRANSPORT/$LAB" in
dot/nsd | doh/nsd) echo "TRANSPORT=$TRANSPORT needs LAB=unbound" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
for tool in dnsperf resperf taskset /usr/bin/time ip; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (scripts/setup.sh installs it)" >&2; exit 2; }
done
# shellcheck source=bench/scalelab-bin.sh
. bench/scalelab-bin.sh
export SCALELAB_WORKDIR=${SCALELAB_WORKDIR:-/var/tmp/scalelab-bench}

WORK=$(mktemp -d /tmp/dns-vs-dnsperf.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
"$SCALELAB" dns queries --names 10000 --zipf 1 --reverse-share 0.3 --count 200000 \
    -o "$WORK/nsd.txt" >/dev/null
"$SCALELAB" dns queries --names 20000 --zipf 1 --reverse-share 0.3 \
    --count $((MAX_RATE * RAMP)) -o "$WORK/ramp.txt" >/dev/null

# The script run inside each lab: "$1" says what to run.
cat >"$WORK/inside.sh" <<'INSIDE'
#!/usr/bin/env bash
# Inside the lab: SCALELAB_DNS_SERVER and SCALELAB_DNS_NETNS are set.
set -euo pipefail
mode=$1 tool=$2 out=$WORK/run.out cpu=$WORK/cpu.out
host=${SCALELAB_DNS_SERVER%:*}
HZ=$(getconf CLK_TCK) NCPU=$(nproc)
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
# CPU ticks of the lab's servers (every process in the namespace).
server_ticks() {
    local t=0 p
    for p in $(ip netns pids "$SCALELAB_DNS_NETNS"); do
        t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}
b0=$(busy_ticks) s0=$(server_ticks)
case "$mode/$tool" in
nsd/dnsperf)
    taskset -c "$CLIENT_CPU" /usr/bin/time -f "%U %S %e" -o "$cpu" \
        dnsperf -s "$host" -m "$TRANSPORT" -d "$WORK/nsd.txt" -l "$DURATION" -T 1 -c 1 -q 100 >"$out" 2>&1
    qps=$(awk '/Queries per second:/ {print $4}' "$out")
    n=$(awk '/Queries completed:/ {print $3}' "$out")
    behind=- ;;
nsd/scalelab)
    target=$SCALELAB_DNS_SERVER tls=()
    if [ "$TRANSPORT" = dot ]; then target=$SCALELAB_DNS_DOT tls=(--cacert "$SCALELAB_DNS_CA"); fi
    if [ "$TRANSPORT" = doh ]; then target=$SCALELAB_DNS_DOH tls=(--cacert "$SCALELAB_DNS_CA"); fi
    taskset -c "$CLIENT_CPU" /usr/bin/time -f "%U %S %e" -o "$cpu" \
        "$SCALELAB" load dns "$target" --queries "$WORK/nsd.txt" "${tls[@]}" \
        -d "${DURATION}s" -t 1 -c 1 -q 100 --transport "$TRANSPORT" >"$out" 2>&1
    qps=$(awk '/Queries per second:/ {print $4}' "$out")
    n=$(awk '/Queries completed:/ {print $3}' "$out")
    behind=- ;;
ramp/resperf)
    taskset -c "$CLIENT_CPU" /usr/bin/time -f "%U %S %e" -o "$cpu" \
        resperf -s "$host" -d "$WORK/ramp.txt" -m "$MAX_RATE" -r "$RAMP" -c 0 -t 5 \
        -P "$WORK/resperf.plot" >"$out" 2>&1 || true
    qps=$(awk '/Maximum throughput:/ {print $3}' "$out")
    n=$(awk '/Queries completed:/ {print $3}' "$out")
    behind=$(grep -c "Fell behind" "$out" || true) ;;
ramp/scalelab)
    taskset -c "$CLIENT_CPU" /usr/bin/time -f "%U %S %e" -o "$cpu" \
        "$SCALELAB" load dns "$SCALELAB_DNS_SERVER" --queries "$WORK/ramp.txt" -t 1 -c 4 \
        --ramp "${RAMP}s" --max-rate "$MAX_RATE" --timeout 5s >"$out" 2>&1
    qps=$(awk '/Maximum throughput:/ {print $3}' "$out")
    n=$(awk '/Queries completed:/ {print $3}' "$out")
    behind=$(grep -c "fell behind" "$out" || true) ;;
esac
b1=$(busy_ticks) s1=$(server_ticks)
awk -v qps="${qps:-0}" -v n="${n:-0}" -v behind="$behind" -v busy=$((b1 - b0)) -v srv=$((s1 - s0)) \
    -v hz="$HZ" -v ncpu="$NCPU" \
    '{ cpu = $1 + $2; other = ((busy - srv) / hz - cpu) / (ncpu * $3) * 100
       printf "%s %s %.2f %.0f %s\n", qps, n, cpu, (other > 0 ? other : 0), behind }' "$cpu"
INSIDE
chmod +x "$WORK/inside.sh"
export WORK DURATION RAMP MAX_RATE CLIENT_CPU SCALELAB

RESULTS="$WORK/results"
: >"$RESULTS"
# Part 1: one NSD lab, tools alternating, first tool alternating by round.
"$SCALELAB" dns lab "$LAB" --settings "$LAB_SETTINGS" --names 10000 --server-cpus "$SERVER_CPU" -- bash -c '
for round in $(seq '"$ROUNDS"'); do
    if [ $((round % 2)) = 1 ]; then order="dnsperf scalelab"; else order="scalelab dnsperf"; fi
    for tool in $order; do
        read -r qps n cpu other behind < <("$WORK/inside.sh" nsd "$tool")
        echo "nsd $tool $round qps=$qps answered=$n cpu_s=$cpu other_load=$other%" >&2
        echo "nsd $round $tool $qps $n $cpu $other $behind" >>"$WORK/results"
    done
done'
# Part 2: a fresh Unbound lab for every run.
for round in $(seq "$RAMP_ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then order="resperf scalelab"; else order="scalelab resperf"; fi
    for tool in $order; do
        line=$("$SCALELAB" dns lab unbound --names 20000 --server-cpus "$SERVER_CPU" \
            -- "$WORK/inside.sh" ramp "$tool")
        read -r qps n cpu other behind <<<"$line"
        echo "ramp $tool $round max_qps=$qps answered=$n cpu_s=$cpu other_load=$other% fell_behind=$behind" >&2
        echo "ramp $round $tool $qps $n $cpu $other $behind" >>"$RESULTS"
    done
done

awk -v QUIET=25 -v LAB="$LAB" -v TRANSPORT="$TRANSPORT" '
function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    peer = ($1 == "nsd") ? "dnsperf" : "resperf"
    q[$1, $3] = q[$1, $3] " " $4
    c[$1, $3] = c[$1, $3] " " ($5 > 0 ? $6 / $5 * 10000 : 0)
    r_q[$1, $2, $3] = $4; r_c[$1, $2, $3] = ($5 > 0 ? $6 / $5 * 10000 : 0); r_o[$1, $2, $3] = $7
    if ($8 != "-" && $8 > 0) behind[$1, $3]++
    if (($1, $2, peer) in r_q && ($1, $2, "scalelab") in r_q && r_q[$1, $2, peer] > 0) {
        qr[$1] = qr[$1] " " r_q[$1, $2, "scalelab"] / r_q[$1, $2, peer]
        cr[$1] = cr[$1] " " r_c[$1, $2, "scalelab"] / r_c[$1, $2, peer]
        if (r_o[$1, $2, "scalelab"] < QUIET && r_o[$1, $2, peer] < QUIET) {
            quiet[$1] = quiet[$1] " " r_q[$1, $2, "scalelab"] / r_q[$1, $2, peer]; nq[$1]++
        }
    }
}
END {
    printf "%s over %s, one thread each (qps; client CPU s per 10k answered):\n", LAB, TRANSPORT
    printf "  dnsperf %8.0f qps %6.3f s | scalelab %8.0f qps %6.3f s | ratio qps %.2f, CPU %.2f | quiet rounds qps %s\n",
        median(q["nsd", "dnsperf"]), median(c["nsd", "dnsperf"]), median(q["nsd", "scalelab"]),
        median(c["nsd", "scalelab"]), median(qr["nsd"]), median(cr["nsd"]),
        nq["nsd"] ? sprintf("%.2f (%d)", median(quiet["nsd"]), nq["nsd"]) : "none"
    printf "Unbound, fresh per run, ramp maximum throughput:\n"
    printf "  resperf %8.0f qps (fell behind in %d runs) | scalelab %8.0f qps (fell behind in %d runs) | ratio %.2f\n",
        median(q["ramp", "resperf"]), behind["ramp", "resperf"], median(q["ramp", "scalelab"]),
        behind["ramp", "scalelab"], median(qr["ramp"])
    print "(ratios are medians of per-round scalelab/peer; want qps >= 1.0 and CPU <= 1.0 against"
    print " dnsperf, ramp maximum >= 0.9 against resperf; quiet: other load < " QUIET "% in both runs)"
}' "$RESULTS"
