#!/usr/bin/env bash
# Does `compare` name a change of the work per request from one run a
# side, and say "the machine, not the code" when only the machine changed?
#
# code:    PAIRS pairs of single runs of nginx (1 worker, return 200,
#          connections 16 and 64, 3 trials of 1.5 s), access_log off then
#          on (nginx writes one log line per request: one more write(2)).
#          A pair passes when `compare --json` says at every point that
#          write(2) per request changed, by 1.0 ± 0.1, and claims no
#          throughput change (one run a side: `?`).
# machine: PAIRS pairs of single runs of nginx pinned to one CPU
#          (`server_cpus = 1`), the second with a busy loop pinned to the
#          server's CPU (taskset), the recipe unchanged. A pair passes when
#          throughput fell and `compare` says the work per request is the
#          same, "the machine, not the code".
#
# Measured on the project's 2-CPU VM (release build, while other builds ran
# at nice 19 beside it: load average 1.6 before, 3.2 after): code 10 of 10
# pairs (write(2) +1.000 and +1.001 per request at connections 16 and 64,
# throughput -56% to +17% and never claimed), machine 10 of 10 (system
# calls 2.02-2.12 per request, the runs of a pair at most 0.05 apart,
# throughput -52% to +37%: the builds beside it moved it more than the hog).
# COUNT=io (2026-12-08, nothing else running, load average 0.3 before, 1.9
# after): code 10 of 10 (write-family calls +1.000 per request at both
# points, throughput -20% to +15%, never claimed), machine 10 of 10
# (write-family calls 1.000 per request on both sides, throughput -9% to
# -42%).
#
# Usage: bench/work-per-request.sh [code|machine|both]   (root)
# Environment: PAIRS (10), SCALELAB (a prebuilt binary; default: build
# target/release/scalelab), COUNT: `syscalls` (default: every call
# counted, `[probe] syscalls = "exact"`, judged on write(2) and on the
# system calls) or `io` (the counts taken in every trial at no cost,
# judged on the write-family calls of /proc/PID/io's syscw: nginx's
# writev of the response and, with access_log on, its write of the line).
set -euo pipefail
what=${1:-both}
PAIRS=${PAIRS:-10}
COUNT=${COUNT:-syscalls}
case $COUNT in
    syscalls) probe='[probe]
syscalls = "exact"' code_figure='write(2)' machine_figure='system calls' ;;
    io) probe='' code_figure='write-family calls' machine_figure='write-family calls' ;;
    *) echo "work-per-request.sh: COUNT is syscalls or io, not '$COUNT'" >&2; exit 2 ;;
esac
# shellcheck source=bench/scalelab-bin.sh
. "$(dirname "$0")/scalelab-bin.sh"
dir=$(mktemp -d)
hog=""
cleanup() {
    [[ -n $hog ]] && kill "$hog" 2>/dev/null && wait "$hog" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

recipe() { # name access_log extra-server-line
    cat >"$dir/$1.toml" <<EOF
name = "work-per-request"
[server]
kind = "nginx"
worker_processes = 1
access_log = $2
$3
[load]
kind = "http"
path = "/"
[sweep]
connections = [16, 64]
[trials]
duration = "1500ms"
warmup = "300ms"
min = 3
max = 3
$probe
[[system]]
label = "nginx"
EOF
}

run() { # store recipe label
    (cd "$dir" && SCALELAB_WORKDIR="$dir/work" "$SCALELAB" --store "$1" run "$dir/$2.toml" --label "$3" -o "$dir/r.html" >"$dir/run.log" 2>&1) ||
        { echo "the run failed:" >&2; tail -5 "$dir/run.log" >&2; exit 1; }
}

# Reads compare --json on stdin; prints "pass" or "fail" and the figures.
judge() {
    python3 -c '
import json, sys
mode, code_figure, machine_figure = sys.argv[1:4]
c = json.load(sys.stdin)["comparisons"][0]
verdicts = [p["comparison"]["verdict"]["verdict"] for p in c["points"]]
ratios = ["%+.1f%%" % ((p["comparison"]["ratio"] - 1) * 100) for p in c["points"]]
claimed = [v for v in verdicts if v in ("faster", "slower")]
ok = bool(c["work"]) and len(c["work"]) == len(c["points"])
figures = []
for line in c["work"]:
    counts = {k["figure"]: k for k in line["work"]["counts"]}
    changed = [k["figure"] for k in counts.values() if k["changed"]]
    if mode == "code":
        w = counts.get(code_figure)
        d = w["b"] - w["a"] if w else float("nan")
        figures.append("%s write %+.3f/req, changed %s" % (line["point"], d, changed))
        ok = ok and w is not None and w["changed"] and 0.9 <= d <= 1.1
    else:
        s = counts[machine_figure]
        figures.append("%s calls %.3f -> %.3f/req, changed %s" % (line["point"], s["a"], s["b"], changed))
        ok = ok and not changed and "the machine, not the code" in line["sentence"]
ok = ok and not claimed
print(("pass" if ok else "fail"), "throughput", " ".join(ratios), "verdicts", verdicts, "|", "; ".join(figures))
' "$1" "$code_figure" "$machine_figure"
}

pairs() { # mode
    local mode=$1 passed=0
    for i in $(seq "$PAIRS"); do
        local store="$dir/$mode-$i.sqlite"
        if [[ $mode == code ]]; then
            recipe off false ""; recipe on true ""
            run "$store" off off
            run "$store" on on
        else
            recipe pinned false "server_cpus = 1"
            run "$store" pinned quiet
            # The server's CPU: the last online CPU, where server_cpus = 1 pins it.
            cpu=$(awk -F- '{ print $NF }' /sys/devices/system/cpu/online)
            taskset -c "$cpu" sh -c 'while :; do :; done' &
            hog=$!
            run "$store" pinned hogged
            kill "$hog"; wait "$hog" 2>/dev/null || true; hog=""
        fi
        result=$("$SCALELAB" --store "$store" compare 1 2 --json | judge "$mode")
        echo "  $mode pair $i: $result"
        [[ $result == pass* ]] && passed=$((passed + 1))
    done
    echo "$mode: $passed of $PAIRS pairs passed"
}

echo "counts: $COUNT; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
[[ $what == code || $what == both ]] && pairs code
[[ $what == machine || $what == both ]] && pairs machine
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
