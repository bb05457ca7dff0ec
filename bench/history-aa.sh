#!/usr/bin/env bash
# The change-point method's false-positive rate on A/A histories: HISTORIES
# histories of RUNS runs each (default 20 x 5) of one recipe against the
# same, unchanged nginx, each history in its own store; `scalelab history`
# should find no change point in any of them. Prints each history's run
# medians and change points, then the share of histories with one.
#
# The nginx is an `external` server the recipe starts and stops (private
# temp dir, loopback port, 1 worker pinned to CPU 1); scalelab is pinned to
# CPU 0. Each run: one point (4 connections), 3 trials of 1 s. About 5 s
# per run: 8 to 9 minutes for the default.
#
# usage: bench/history-aa.sh [HISTORIES] [RUNS]
set -uo pipefail
HISTORIES=${1:-20}
RUNS=${2:-5}
source "$(dirname "$0")/scalelab-bin.sh"
source "$(dirname "$0")/external-nginx.sh"
dir=$(mktemp -d /tmp/scalelab-history-aa.XXXXXX)
trap 'kill $(cat "$dir/nginx.pid" 2>/dev/null) 2>/dev/null; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
external_nginx_conf "$dir" "$port"
external_nginx_recipe history-aa "$dir" "$port" "taskset -c 1" > "$dir/aa.toml"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
positives=0
for h in $(seq 1 "$HISTORIES"); do
    store="$dir/h$h.sqlite"
    for r in $(seq 1 "$RUNS"); do
        SCALELAB_WORKDIR="$dir/work" taskset -c 0 "$SCALELAB" --store "$store" run "$dir/aa.toml" \
            --commit "h$h-r$r" -o "$dir/report.html" >/dev/null 2>"$dir/err" \
            || { echo "run failed:"; cat "$dir/err"; exit 1; }
    done
    json=$("$SCALELAB" history history-aa "$store" --json)
    found=$(python3 -c 'import json,sys; h=json.load(sys.stdin); print(sum(len(p["change_points"]) for p in h["points"]))' <<<"$json")
    medians=$(python3 -c 'import json,sys; h=json.load(sys.stdin); print(" ".join("%.0f" % v["value"] for v in h["points"][0]["values"]))' <<<"$json")
    echo "history $h: medians $medians req/s; change points: $found"
    [ "$found" -gt 0 ] && positives=$((positives + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "false positives: $positives of $HISTORIES A/A histories of $RUNS runs"
