#!/usr/bin/env bash
# Side-by-side: scalelab's RFC 2544 zero-loss rate against what iperf3 gets
# through the same kind of router lab, 64-byte frames, one direction.
#
#   iperf3:   iperf3 -u -l 18 -b 0 (18-byte payloads make 64-byte Ethernet
#             frames, sent as fast as iperf3 can), client in A, server in B;
#             the packets/s that got through is B's interface RX count (the
#             kernel's, `ip -s link`) over the run.
#   scalelab: scalelab load forward --frame-size 64 -d TRIAL --json, which
#             builds its own lab the same way and runs the search; its result
#             is the highest rate with zero loss.
#
# The lab for iperf3 is built here exactly as scalelab builds its own (three
# namespaces A - R - B, veth pairs, 198.18.0.0/15, static neighbours, IPv6
# off, forwarding on in R, RPS on R's interfaces to CPU 1). Clients run on
# CPU 0, R's forwarding on CPU 1. Rounds alternate A B A B. Each row records
# the CPU share (of both CPUs) used by other processes during the run.
#
# Lab variants (-v), the same for both tools:
#   default:     as above; B's receive stack (IP, UDP, socket) runs where
#                the frame arrived, on R's CPU 1, so CPU 1 forwards and
#                receives.
#   hosts-on-0:  RPS on A's and B's interfaces to CPU 0 (scalelab:
#                --host-rps-cpus 0): B's receive stack runs on the clients'
#                CPU, and R's CPU 1 only forwards.
# -g picks scalelab's generator (default: scalelab's own default).
# For each iperf3 run, where its frames were lost (kernel counters): A's
# veth TX drops (R's input backlog full), R's r1 TX drops (B's backlog
# full), B's UDP receive-buffer errors (B's socket full).
#
# Usage: flock target/bench.lock bench/forward-vs-iperf3.sh [-r ROUNDS] [-d SECONDS] [-t TRIAL] [-v VARIANT] [-g METHOD]
# Environment: SCALELAB (a prebuilt scalelab binary, so nothing compiles
# under the bench lock; default: build target/release/scalelab).
# Takes about ROUNDS * (SECONDS + 2 + ~10 * (TRIAL + 0.2 s)) (-r 3 -d 5 -t 1s:
# ~1.5 min per variant).
set -euo pipefail

ROUNDS=3
SECS=5
TRIAL=1s
VARIANT=default
GENERATOR=
while getopts "r:d:t:v:g:h" opt; do
    case $opt in
        r) ROUNDS=$OPTARG ;;
        d) SECS=$OPTARG ;;
        t) TRIAL=$OPTARG ;;
        v) VARIANT=$OPTARG ;;
        g) GENERATOR=$OPTARG ;;
        *) sed -n '2,35p' "$0"; exit 2 ;;
    esac
done
SCALELAB_FLAGS=()
case $VARIANT in
    default) ;;
    hosts-on-0) SCALELAB_FLAGS+=(--host-rps-cpus 0) ;;
    *) echo "unknown variant $VARIANT; use default or hosts-on-0" >&2; exit 2 ;;
esac
[ -z "$GENERATOR" ] || SCALELAB_FLAGS+=(--generator "$GENERATOR")

for tool in iperf3 ip taskset python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 1; }
done
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs (clients on 0, R on 1)" >&2; exit 1; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/scalelab-bin.sh
. "$ROOT/bench/scalelab-bin.sh"

WORK=$(mktemp -d /tmp/scalelab-bench.XXXXXX)
P=slrbench-$$
A=$P-a R=$P-r B=$P-b
SERVER_PID=
cleanup() {
    # `wait` returns the killed iperf3's 143; under `set -e` that ended the
    # trap here and left the lab's namespaces behind.
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    for ns in "$A" "$R" "$B"; do ip netns del "$ns" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

for ns in "$A" "$R" "$B"; do
    ip netns add "$ns"
    ip netns exec "$ns" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6'
    ip -n "$ns" link set lo up
done
ip -n "$A" link add a0 address 02:00:c6:12:00:01 numtxqueues 1 numrxqueues 1 type veth peer name r0 address 02:00:c6:12:00:02 numtxqueues 1 numrxqueues 1 netns "$R"
ip -n "$B" link add b0 address 02:00:c6:12:00:03 numtxqueues 1 numrxqueues 1 type veth peer name r1 address 02:00:c6:12:00:04 numtxqueues 1 numrxqueues 1 netns "$R"
lab_if() { # ns if addr neighbour lladdr
    ip -n "$1" addr add "$3/24" dev "$2"
    ip -n "$1" link set "$2" up
    ip -n "$1" neigh replace "$4" lladdr "$5" dev "$2" nud permanent
}
lab_if "$A" a0 198.18.0.1 198.18.0.254 02:00:c6:12:00:02
lab_if "$R" r0 198.18.0.254 198.18.0.1 02:00:c6:12:00:01
lab_if "$R" r1 198.19.0.254 198.19.0.1 02:00:c6:12:00:03
lab_if "$B" b0 198.19.0.1 198.19.0.254 02:00:c6:12:00:04
ip -n "$A" route add default via 198.18.0.254
ip -n "$B" route add default via 198.19.0.254
ip netns exec "$R" sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward; echo 2 >/sys/class/net/r0/queues/rx-0/rps_cpus; echo 2 >/sys/class/net/r1/queues/rx-0/rps_cpus'
if [ "$VARIANT" = hosts-on-0 ]; then
    ip netns exec "$A" sh -c 'echo 1 >/sys/class/net/a0/queues/rx-0/rps_cpus'
    ip netns exec "$B" sh -c 'echo 1 >/sys/class/net/b0/queues/rx-0/rps_cpus'
fi

taskset -c 0 ip netns exec "$B" iperf3 -s -B 198.19.0.1 >/dev/null 2>&1 &
SERVER_PID=$!
sleep 0.5

RESULTS=$WORK/results.tsv
: >"$RESULTS"
TICKS=$(getconf CLK_TCK)
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
b0_rx() { ip netns exec "$B" awk '$1=="b0:"{print $3}' /proc/net/dev; }
# "a0_tx_dropped r1_tx_dropped b_udp_rcvbuf_errors"
drops() {
    echo "$(ip netns exec "$A" awk '$1=="a0:"{print $13}' /proc/net/dev)" \
        "$(ip netns exec "$R" awk '$1=="r1:"{print $13}' /proc/net/dev)" \
        "$(ip netns exec "$B" awk '/^Udp: [0-9]/{print $6}' /proc/net/snmp)"
}

# run_one TOOL ROUND: appends "tool round pps client_cpu_s other%".
run_one() {
    local tool=$1 round=$2 out=$WORK/out.txt t0 t1 r0 r1 b0 b1 d0= d1=
    b0=$(busy_ticks)
    t0=$(date +%s.%N)
    if [ "$tool" = iperf3 ]; then
        r0=$(b0_rx)
        d0=$(drops)
        /usr/bin/time -f '%U %S %e' -o "$WORK/time.txt" taskset -c 0 \
            ip netns exec "$A" iperf3 -u -l 18 -b 0 -t "$SECS" -c 198.19.0.1 --json >"$out"
        r1=$(b0_rx)
        d1=$(drops)
    else
        r0=0 r1=0
        /usr/bin/time -f '%U %S %e' -o "$WORK/time.txt" \
            "$SCALELAB" load forward --frame-size 64 -d "$TRIAL" --router-cpus 1 \
            "${SCALELAB_FLAGS[@]}" --json >"$out"
    fi
    t1=$(date +%s.%N)
    python3 - "$tool" "$round" "$out" "$WORK/time.txt" "$((r1 - r0))" "$t0" "$t1" \
        "$(( $(busy_ticks) - b0 ))" "$TICKS" "$d0" "$d1" >>"$RESULTS" <<'PY'
import json, sys
tool, rnd, out, tm, rx, t0, t1, busy, hz, d0, d1 = sys.argv[1:]
j = json.load(open(out))
user, sys_, wall = map(float, open(tm).read().split()[-3:])
elapsed = float(t1) - float(t0)
if tool == "iperf3":
    secs = j["end"]["sum"]["seconds"]
    # Frames that reached B (the kernel's count) per second of sending.
    pps = int(rx) / secs
    sent = j["end"]["sum"]["packets"] / secs
    lost = [b - a for a, b in zip(map(int, d0.split()), map(int, d1.split()))]
    extra = (f"sent {sent:.0f}/s lost {j['end']['sum']['lost_percent']:.1f}%; "
             f"drops: R input {lost[0]}, B backlog {lost[1]}, B socket {lost[2]}")
else:
    pps = j["pps"]
    best = j["best"] or {}
    by = ",".join(d["counted_by"] for d in best.get("directions", []))
    extra = (f"{j['generator']} steps {len(j['steps'])} client_bound {j['client_bound']}"
             f" counted_by {by} reconciled {best.get('reconciled')}")
# Busy CPU beyond the client's own (R's softirq forwarding is the rest of
# the lab's work, so this overstates the noise): share of both CPUs.
other = max(0.0, int(busy) / int(hz) - user - sys_) / (2 * elapsed) * 100
print(f"{tool}\t{rnd}\t{pps:.0f}\t{user + sys_:.2f}\t{other:.0f}\t{extra}")
PY
}

for round in $(seq "$ROUNDS"); do
    run_one iperf3 "$round"
    run_one scalelab "$round"
done

echo "variant $VARIANT"
echo "tool      round   pps(64B)  client_cpu_s  busy_not_client%  detail"
awk -F'\t' '{printf "%-9s %5s %10s %13s %17s  %s\n", $1, $2, $3, $4, $5, $6}' "$RESULTS"
python3 - "$RESULTS" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
by = {}
for tool, rnd, pps, *_ in rows:
    by.setdefault(tool, {})[rnd] = float(pps)
ip, sl = by["iperf3"], by["scalelab"]
ratios = [sl[r] / ip[r] for r in ip if r in sl and ip[r] > 0]
print(f"median pps: iperf3 delivered {statistics.median(ip.values()):.0f}, "
      f"scalelab zero-loss {statistics.median(sl.values()):.0f}")
print(f"scalelab zero-loss / iperf3 delivered, per round: "
      + ", ".join(f"{r:.2f}" for r in ratios)
      + f"; median {statistics.median(ratios):.2f}")
PY
