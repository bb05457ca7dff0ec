#!/usr/bin/env bash
# scalelab's AF_XDP generators against the fastest peers, side by side:
# DNS against kxdpgun (knot-dnsutils) in one sink lab, forwarding against
# trafgen (netsniff-ng); and the DNS answers against NSD's and Unbound's
# own counters.
#
#   sink lab: namespace G (the generators) joined by a veth to namespace S,
#             whose end has no address: S's IP layer drops every frame
#             (forwarding is off in a new namespace). G reaches 198.18.43.2
#             through a permanent neighbour entry for S's MAC. No link
#             leads out of either namespace. The generators are pinned to
#             GEN_CPU, and S's receive work runs there too, inline (no RPS):
#             with it on another CPU, S's backlog (netdev_max_backlog)
#             overflows and the veth refuses frames (copy-mode AF_XDP sees
#             EBUSY, trafgen stops at EAGAIN), so the sink, not the
#             generator, would be measured.
#   counted:  frames by G's veth TX counter (`ip -s -j link`: frames S took),
#             over the nominal sending time (-d); CPU by /usr/bin/time
#             (user + sys: copy-mode AF_XDP's and the packet ring's kernel
#             transmit path, and S's drop, inline).
#   1. unbounded: `kxdpgun -Q 100M` and `scalelab load dns --generator xdp
#      -Q 100M`, alternating A B A B, -r ROUNDS rounds.
#   2. fixed-rate steps (STEPS, queries/s): each tool asked for the rate;
#      the rate the veth saw, per tool.
#   3. forwarding, alternating, -r ROUNDS rounds, in the same sink, the
#      same CPU, 64-byte frames: trafgen (AF_PACKET TX ring, with
#      TRAFGEN_OPTS) against `scalelab load forward --sink 198.18.43.2`
#      with --generator xdp and packet_ring, all unbounded for -d s,
#      counted by g0's TX counter (scalelab reconciles its own count with
#      it: IPv6 is off in G, so the kernel sends nothing of its own).
#      trafgen exits at its first EAGAIN ("Flushing TX_RING failed"):
#      its socket's send buffer (net.core.wmem_default, 212992 bytes) is
#      full of skbs S's backlog still holds, which happens at once when S's
#      receive work runs on another CPU and now and then inline when the
#      machine is busy (ksoftirqd waits). In a child namespace the
#      net.core.[rw]mem_* sysctls are read-only (trafgen's --no-sock-mem
#      only silences its failed writes) and trafgen sets no SO_SNDBUF, so
#      the inline sink is its best case; a short round says "stopped
#      early". scalelab's senders count an EAGAIN and go on.
#   4. answers: NSD at 198.18.44.2 and Unbound (stub to NSD) at
#      198.18.44.3 in namespace N, scalelab in namespace C, at CHECK_RATE
#      queries/s for -d s: scalelab's answers against `nsd-control`'s
#      num.queries and `unbound-control`'s total.num.queries.
# Each phase prints the load average before it: other work on the machine
# shows there, and moves both tools of a round alike.
#
# Usage: flock target/bench.lock bench/xdp-ab.sh [-r ROUNDS] [-d SECONDS]
# Environment: SCALELAB (a prebuilt binary; default: build target/release),
#   STEPS ("250000 500000 1000000"), CHECK_RATE (20000), GEN_CPU (0),
#   SINK_CPU (1), PHASES ("dns forward answers": the phases to run),
#   TRAFGEN_OPTS ("-S 65536KiB -k 100": a 64 MiB ring of 32768 frames,
#   flushed every 100 us; trafgen 0.6.8 reads "-S 64MiB" as 1 MiB. Its
#   default 512 KiB ring, -q, 1 and 8 MiB rings were no faster here).
#   Takes about (5 * ROUNDS + 2 * steps + 2) * (SECONDS + 3) s.
set -euo pipefail

ROUNDS=4
SECS=3
while getopts "r:d:h" opt; do
    case $opt in
        r) ROUNDS=$OPTARG ;;
        d) SECS=$OPTARG ;;
        *) sed -n '2,54p' "$0"; exit 2 ;;
    esac
done
STEPS=${STEPS:-250000 500000 1000000}
CHECK_RATE=${CHECK_RATE:-20000}
GEN_CPU=${GEN_CPU:-0}
SINK_CPU=${SINK_CPU:-1}
PHASES=${PHASES:-dns forward answers}
TRAFGEN_OPTS=${TRAFGEN_OPTS:--S 65536KiB -k 100}
phase() { case " $PHASES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
for tool in kxdpgun trafgen nsd nsd-control unbound unbound-control taskset /usr/bin/time ip python3; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (apt-get install knot-dnsutils netsniff-ng nsd unbound)" >&2; exit 2; }
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/scalelab-bin.sh
. "$ROOT/bench/scalelab-bin.sh"
WORK=$(mktemp -d /tmp/scalelab-xdp-ab.XXXXXX)
G=slxab-g-$$ S=slxab-s-$$ C=slxab-c-$$ N=slxab-n-$$
cleanup() {
    for pidfile in "$WORK/nsd.pid" "$WORK/unbound.pid"; do
        [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
    done
    sleep 0.5
    for ns in $G $S $C $N; do ip netns del "$ns" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

load() { cut -d' ' -f1-3 /proc/loadavg; }
tx_packets() { # namespace interface
    ip -n "$1" -s -j link show "$2" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["packets"])'
}

# --- the sink lab -----------------------------------------------------------
ip netns add "$G"; ip netns add "$S"
ip link add g0 netns "$G" type veth peer name s0 netns "$S"
ip -n "$G" addr add 198.18.43.1/24 dev g0
ip -n "$G" link set lo up; ip -n "$G" link set g0 up; ip -n "$S" link set s0 up
SINK_MAC=$(ip -n "$S" -j link show s0 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
ip -n "$G" neigh replace 198.18.43.2 lladdr "$SINK_MAC" dev g0 nud permanent
ip netns exec "$S" sh -c 'echo 0 > /sys/class/net/s0/queues/rx-0/rps_cpus'
# No IPv6 in G: router solicitations and MLD reports would add the
# kernel's own frames to g0's TX counter.
ip netns exec "$G" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.g0.disable_ipv6=1
printf 'h1.bench.test A\nh2.bench.test A\nh3.bench.test AAAA\n' >"$WORK/q.txt"
: >"$WORK/rows.tsv"

# One run of `tool` at `rate` for SECS s, pinned; appends a row
# "phase tool round rate frames/s cpu_ns/frame own_count".
run_one() {
    local phase=$1 tool=$2 round=$3 rate=$4 before after own
    before=$(tx_packets "$G" g0)
    case $tool in
        kxdpgun)
            /usr/bin/time -f '%U %S' -o "$WORK/time" ip netns exec "$G" \
                kxdpgun -t "$SECS" -Q "$rate" -F "$GEN_CPU" -i "$WORK/q.txt" 198.18.43.2 \
                >"$WORK/out" 2>&1
            # kxdpgun attaches its program over netlink and leaves it there.
            ip -n "$G" link set g0 xdp off
            own=$(awk '/^total queries:/{print $3}' "$WORK/out") ;;
        scalelab)
            /usr/bin/time -f '%U %S' -o "$WORK/time" ip netns exec "$G" \
                taskset -c "$GEN_CPU" "$SCALELAB" load dns 198.18.43.2:53 --generator xdp \
                -t 1 -c 32 -Q "$rate" -d "${SECS}s" --timeout 1s --queries "$WORK/q.txt" \
                --json >"$WORK/out" 2>"$WORK/err" || [ $? -eq 4 ]
            # Nothing answers in the sink: exit 4, and the count is in the error.
            own=$(grep -o 'none of [0-9]*' "$WORK/err" | awk '{print $3}') ;;
        trafgen)
            # shellcheck disable=SC2086
            /usr/bin/time -f '%U %S' -o "$WORK/time" ip netns exec "$G" timeout -s INT "$SECS" \
                taskset -c "$GEN_CPU" trafgen --dev g0 --conf "$WORK/trafgen.cfg" --cpus 1 \
                --no-sock-mem --notouch-irq $TRAFGEN_OPTS >"$WORK/out" 2>&1 || [ $? -eq 124 ]
            own=$(awk '/packets\)$/{gsub(/[()]/, "", $(NF-1)); print $(NF-1)}' "$WORK/out")
            # It exits at its first EAGAIN: say so, the round is short.
            if grep -q 'TX_RING failed' "$WORK/out"; then
                own="$own (stopped early: $(grep -m1 'TX_RING failed' "$WORK/out"))"
            fi ;;
        forward-xdp | forward-ring)
            local method=xdp
            [ "$tool" = forward-ring ] && method=packet_ring
            /usr/bin/time -f '%U %S' -o "$WORK/time" ip netns exec "$G" taskset -c "$GEN_CPU" \
                "$SCALELAB" load forward --sink 198.18.43.2 --generator "$method" \
                --frame-size 64 -d "${SECS}s" --json >"$WORK/out"
            own=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["sent"], "reconciled" if j["reconciled"] else "NOT reconciled")' "$WORK/out") ;;
    esac
    after=$(tx_packets "$G" g0)
    python3 - "$phase" "$tool" "$round" "$rate" "$((after - before))" "$SECS" "$WORK/time" "$own" \
        >>"$WORK/rows.tsv" <<'PY'
import sys
phase, tool, rnd, rate, frames, secs, tm, own = sys.argv[1:]
user, sys_ = map(float, open(tm).read().split()[-2:])
frames = int(frames)
print(f"{phase}\t{tool}\t{rnd}\t{rate}\t{frames / float(secs):.0f}\t"
      f"{(user + sys_) / max(frames, 1) * 1e9:.0f}\t{own}")
PY
    tail -1 "$WORK/rows.tsv" >&2
}

if phase dns; then
    echo "# 1. unbounded, $ROUNDS rounds of ${SECS}s; load average before: $(load)"
    for round in $(seq "$ROUNDS"); do
        for tool in kxdpgun scalelab; do run_one unbounded "$tool" "$round" 100000000; done
    done
    echo "# 2. fixed-rate steps ($STEPS); load average before: $(load)"
    for rate in $STEPS; do
        for tool in kxdpgun scalelab; do run_one step "$tool" 1 "$rate"; done
    done
fi
if phase forward; then
    echo "# 3. forwarding into the same sink, 64-byte frames, $ROUNDS rounds, trafgen $TRAFGEN_OPTS;" \
        "load average before: $(load)"
    GEN_MAC=$(ip -n "$G" -j link show g0 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
    # 60 bytes as sent: 14 + 20 + 8 + 18 of fill; the FCS makes 64.
    echo "{ eth(da=$SINK_MAC, sa=$GEN_MAC, type=0x0800), ipv4(saddr=198.18.43.1, daddr=198.18.43.2, ttl=64, df), udp(sp=9, dp=9), fill(0x00, 18) }" >"$WORK/trafgen.cfg"
    for round in $(seq "$ROUNDS"); do
        for tool in trafgen forward-xdp forward-ring; do run_one forward "$tool" "$round" 0; done
    done
fi
echo "# load average after the sink phases: $(load)"
echo "phase      tool      round  asked/s     sent/s (veth)  cpu_ns/frame  own count"
awk -F'\t' '{printf "%-10s %-9s %5s %10s %14s %13s  %s\n", $1, $2, $3, $4, $5, $6, $7}' "$WORK/rows.tsv"
python3 - "$WORK/rows.tsv" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
by = {}
for phase, tool, rnd, rate, pps, cpu, own in rows:
    by.setdefault((phase, rate, rnd), {})[tool] = (float(pps), float(cpu))
def pair(phase, ours, theirs):
    rounds = [v for (p, _, _), v in by.items() if p == phase and ours in v and theirs in v
              and v[theirs][0] > 0]
    if not rounds:
        return
    sent = [v[ours][0] / v[theirs][0] for v in rounds]
    cpu = [v[ours][1] / v[theirs][1] for v in rounds if v[theirs][1] > 0]
    med = lambda t: statistics.median(v[t][0] for v in rounds)
    medcpu = lambda t: statistics.median(v[t][1] for v in rounds)
    print(f"{phase}: {ours}/{theirs} sent per round " + ", ".join(f"{r:.2f}" for r in sent)
          + f"; median {statistics.median(sent):.2f} ({med(ours):.0f} v {med(theirs):.0f}/s); "
          f"CPU ns per frame {medcpu(ours):.0f} v {medcpu(theirs):.0f}"
          + (f" (ratio median {statistics.median(cpu):.2f})" if cpu else ""))
pair("unbounded", "scalelab", "kxdpgun")
pair("forward", "forward-xdp", "trafgen")
pair("forward", "forward-ring", "trafgen")
for (p, rate, _), v in by.items():
    if p == "step":
        print(f"step {int(rate):>9}/s: " + ", ".join(
            f"{t} {v[t][0] / int(rate):.2f} of it" for t in sorted(v)))
PY

# --- 4. answers against the servers' own counters ---------------------------
phase answers || exit 0
ip netns add "$C"; ip netns add "$N"
ip link add c0 netns "$C" type veth peer name n0 netns "$N"
ip -n "$C" addr add 198.18.44.1/24 dev c0
ip -n "$N" addr add 198.18.44.2/24 dev n0
ip -n "$N" addr add 198.18.44.3/24 dev n0
for ns in $C $N; do ip -n "$ns" link set lo up; done
ip -n "$C" link set c0 up; ip -n "$N" link set n0 up
{
    printf '$TTL 3600\n@ IN SOA ns.bench.test. h.bench.test. 1 3600 600 86400 3600\n'
    printf '@ IN NS ns.bench.test.\nns IN A 198.18.44.2\n'
    for i in $(seq 1 200); do printf 'h%d IN A 198.18.1.%d\n' "$i" "$((i % 250))"; done
} >"$WORK/bench.test.zone"
cat >"$WORK/nsd.conf" <<EOF
server:
  ip-address: 198.18.44.2
  server-count: 1
  username: ""
  chroot: ""
  zonesdir: "$WORK"
  database: ""
  pidfile: "$WORK/nsd.pid"
  xfrdfile: "$WORK/xfrd.state"
  zonelistfile: "$WORK/zone.list"
  logfile: "$WORK/nsd.log"
  rrl-ratelimit: 0
  rrl-whitelist-ratelimit: 0
remote-control:
  control-enable: yes
  control-interface: "$WORK/nsd.ctl"
zone:
  name: bench.test
  zonefile: "$WORK/bench.test.zone"
EOF
cat >"$WORK/unbound.conf" <<EOF
server:
  interface: 198.18.44.3
  num-threads: 1
  username: ""
  chroot: ""
  directory: "$WORK"
  pidfile: "$WORK/unbound.pid"
  use-syslog: no
  logfile: "$WORK/unbound.log"
  access-control: 198.18.44.0/24 allow
  module-config: "iterator"
  qname-minimisation: no
  local-zone: "." refuse
  local-zone: "test." nodefault
  local-zone: "bench.test." transparent
stub-zone:
  name: "bench.test."
  stub-addr: 198.18.44.2
remote-control:
  control-enable: yes
  control-interface: "$WORK/unbound.ctl"
  control-use-cert: no
EOF
ip netns exec "$N" taskset -c "$SINK_CPU" nsd -c "$WORK/nsd.conf"
ip netns exec "$N" taskset -c "$SINK_CPU" unbound -c "$WORK/unbound.conf"
for _ in $(seq 50); do
    [ -S "$WORK/nsd.ctl" ] && [ -S "$WORK/unbound.ctl" ] && break
    sleep 0.1
done
for i in $(seq 1 200); do echo "h$i.bench.test A"; done >"$WORK/check.txt"
counter() { # server
    case $1 in
        nsd) nsd-control -c "$WORK/nsd.conf" stats_noreset | awk -F= '$1=="num.queries"{print $2}' ;;
        unbound) unbound-control -c "$WORK/unbound.conf" stats_noreset |
            awk -F= '$1=="total.num.queries"{print $2}' ;;
    esac
}
echo "# 4. answers at $CHECK_RATE queries/s for ${SECS}s; load average before: $(load)"
for server in nsd unbound; do
    addr=198.18.44.2
    [ "$server" = unbound ] && addr=198.18.44.3
    before=$(counter "$server")
    ip netns exec "$C" taskset -c "$GEN_CPU" "$SCALELAB" load dns "$addr:53" --generator xdp \
        -t 1 -c 4 -Q "$CHECK_RATE" -d "${SECS}s" --queries "$WORK/check.txt" --json \
        >"$WORK/check.json"
    after=$(counter "$server")
    python3 - "$server" "$WORK/check.json" "$((after - before))" <<'PY'
import json, sys
server, path, counted = sys.argv[1], sys.argv[2], int(sys.argv[3])
j = json.load(open(path))
answered = j["responses"]
diff = abs(answered - counted) / max(counted, 1) * 100
lat = j.get("latency_us") or j.get("latency") or {}
print(f"{server}: scalelab sent {j['sent']}, answered {answered}, lost {j['lost']}; "
      f"{server} counted {counted}; difference {diff:.3f}% (want <= 0.1%); "
      f"latency {json.dumps(lat)}; notes {j['notes']}")
PY
done
