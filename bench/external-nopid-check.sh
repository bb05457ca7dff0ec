#!/usr/bin/env bash
# Issue 46, 3.1: `check` of a real 50% slowdown of an `external` nginx
# started by hand, without `pid`. The nginx serves a static file behind
# `limit_req` (delays, never refuses): 2000 r/s for the baseline (3 runs,
# `--repeat 3`), 1000 r/s for the candidate (3 runs); then
# `scalelab check base.sqlite latest`, which should exit 1 (a regression).
# Before the fix the server's own CPU counted as other processes', the
# trials were `noisy`, and check exited 125 ("rerun it on a quiet machine").
# Prints check's exit code, its reason, the load average, and each
# candidate trial's server PID and background. About 40 s.
#
# usage: bench/external-nopid-check.sh
set -uo pipefail
source "$(dirname "$0")/scalelab-bin.sh"
source "$(dirname "$0")/external-nginx.sh"
dir=$(mktemp -d /tmp/scalelab-nopid-check.XXXXXX)
stop_nginx() {
    local p
    p=$(cat "$dir/nginx.pid" 2>/dev/null) || return 0
    kill -QUIT "$p" 2>/dev/null
    while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
    rm -f "$dir/nginx.pid"
}
trap 'stop_nginx; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
external_nginx_recipe_without_pid nopid-check "$port" > "$dir/r.toml"
runs() { # STORE RATE
    stop_nginx
    external_nginx_conf "$dir" "$port" \
        "limit_req_zone \$binary_remote_addr zone=z:1m rate=$2r/s;" \
        "limit_req zone=z burst=100000;"
    nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" || exit 1
    SCALELAB_WORKDIR="$dir/work" "$SCALELAB" --store "$1" run "$dir/r.toml" --repeat 3 \
        -o "$dir/report.html" >/dev/null 2>"$dir/err" || { echo "run failed:"; cat "$dir/err"; exit 1; }
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
runs "$dir/base.sqlite" 2000
runs "$dir/s.sqlite" 1000
"$SCALELAB" --store "$dir/s.sqlite" check "$dir/base.sqlite" latest > "$dir/check" 2>&1
code=$?
echo "check exit code: $code"
sed 's/^/  /' "$dir/check"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$SCALELAB" --store "$dir/s.sqlite" export latest --format json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
for t in d.get("trials", []):
    p = t.get("probe") or {}
    b = p.get("background") or {}
    print("  trial: server pid %s, server CPU-s %s, other CPU-s %.2f, noisy %s, unknown %s" % (
        p.get("server_pid"), p.get("server_cpu_s"), b.get("other_cpu_s", float("nan")),
        b.get("noisy"), b.get("server_unknown", False)))
' || true
exit 0
