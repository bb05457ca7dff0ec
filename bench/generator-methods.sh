#!/usr/bin/env bash
# The packet generator's methods, raw: how many 64-byte frames/s each one
# hands to the kernel on this machine, into a sink that costs little.
#
#   methods:  sendmmsg (UDP socket), packet_ring (AF_PACKET PACKET_TX_RING +
#             PACKET_QDISC_BYPASS), io_uring (linked IORING_OP_SEND batches),
#             each as `scalelab load forward --generator M`.
#   sink:     scalelab's own lab with forwarding off in R
#             (--sysctl net.ipv4.ip_forward=0): R's IP layer drops every
#             frame after one route lookup, on R's CPU (RPS to CPU 1), and
#             nothing reaches B, so B's receiver costs nothing.
#   rate:     one unpaceable trial (-R 20M frames/s for -d SECONDS); the
#             figure is the trial's sent_pps: frames the kernel took per
#             second of sending, which the trial reconciles with the
#             sending interface's own TX count (`reconciled`).
#
# The generator runs on CPU 0, R on CPU 1. Rounds alternate the methods.
# Each row records the CPU share (of both CPUs) used by processes other than
# scalelab during the run (R's softirq work counts there, so it overstates).
#
# Usage: flock target/bench.lock bench/generator-methods.sh [-r ROUNDS] [-d SECONDS]
# Environment: SCALELAB (a prebuilt scalelab binary, so nothing compiles
# under the bench lock; default: build target/release/scalelab).
# Takes about 3 * ROUNDS * (1.25 * SECONDS + 1) s: ~40 s for -r 4 -d 2.
set -euo pipefail

ROUNDS=4
SECS=2
while getopts "r:d:h" opt; do
    case $opt in
        r) ROUNDS=$OPTARG ;;
        d) SECS=$OPTARG ;;
        *) sed -n '2,24p' "$0"; exit 2 ;;
    esac
done
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs (generator on 0, R on 1)" >&2; exit 1; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/scalelab-bin.sh
. "$ROOT/bench/scalelab-bin.sh"
WORK=$(mktemp -d /tmp/scalelab-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT INT TERM
RESULTS=$WORK/results.tsv
: >"$RESULTS"
TICKS=$(getconf CLK_TCK)
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }

for round in $(seq "$ROUNDS"); do
    for method in sendmmsg packet_ring io_uring; do
        b0=$(busy_ticks)
        t0=$(date +%s.%N)
        # Exit 4: no rate "passed" (the sink drops everything), as meant.
        /usr/bin/time -f '%U %S' -o "$WORK/time.txt" "$SCALELAB" load forward \
            --generator "$method" -R 20000000 -d "${SECS}s" --router-cpus 1 \
            --sysctl net.ipv4.ip_forward=0 --json >"$WORK/out.json" || [ $? -eq 4 ]
        t1=$(date +%s.%N)
        python3 - "$method" "$round" "$WORK/out.json" "$WORK/time.txt" "$t0" "$t1" \
            "$(( $(busy_ticks) - b0 ))" "$TICKS" >>"$RESULTS" <<'PY'
import json, sys
method, rnd, out, tm, t0, t1, busy, hz = sys.argv[1:]
j = json.load(open(out))
t = j["steps"][0]["trial"]
d = t["directions"][0]
user, sys_ = map(float, open(tm).read().split()[-2:])
elapsed = float(t1) - float(t0)
other = max(0.0, int(busy) / int(hz) - user - sys_) / (2 * elapsed) * 100
cpu_ns = (user + sys_) / max(t["sent"], 1) * 1e9
print(f"{method}\t{rnd}\t{t['sent_pps']:.0f}\t{cpu_ns:.0f}\t{other:.0f}\t"
      f"sent {t['sent']} iface_tx {d['sent_kernel']} reconciled {t['reconciled']} "
      f"send_errors {t['send_errors']}")
PY
    done
done

echo "method       round   sent_pps(64B)  cpu_ns/frame  busy_not_scalelab%  detail"
awk -F'\t' '{printf "%-12s %5s %15s %13s %19s  %s\n", $1, $2, $3, $4, $5, $6}' "$RESULTS"
python3 - "$RESULTS" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    m, rnd, pps, *_ = line.rstrip("\n").split("\t")
    by.setdefault(m, {})[rnd] = float(pps)
base = by["sendmmsg"]
for m, v in by.items():
    ratios = [v[r] / base[r] for r in v if base.get(r)]
    print(f"{m:12} median {statistics.median(v.values()):>10.0f} frames/s; "
          f"vs sendmmsg per round " + ", ".join(f"{x:.2f}" for x in ratios)
          + f"; median {statistics.median(ratios):.2f}")
PY
