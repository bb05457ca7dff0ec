#!/usr/bin/env bash
# `git bisect run` with `scalelab check` as its test: a scripted git
# repository of seven commits, each changing the config of an nginx that
# the recipe starts as an `external` server; the FIFTH commit slows it
# (`limit_req`, 300 requests/s, delaying and never refusing, on a static
# file). The script records a baseline set (BASE runs of the first commit
# in base.sqlite), lets `git bisect run` walk the history, and fails unless
# bisect names the fifth commit.
#
# Each run: one point (4 connections), 3 trials of 1 s; about 5 s a run,
# two minutes in all. Everything lives in a mktemp dir under /tmp, removed on
# exit; nginx listens on a free loopback port.
#
# usage: bench/bisect-demo.sh [BASE]      (BASE baseline runs, default 5)
set -uo pipefail
BASE=${1:-5}
source "$(dirname "$0")/scalelab-bin.sh"
source "$(dirname "$0")/external-nginx.sh"
dir=$(mktemp -d /tmp/scalelab-bisect.XXXXXX)
trap 'kill $(cat "$dir/nginx.pid" 2>/dev/null) 2>/dev/null; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$dir/live" "$dir/repo"

# The fixed part of the server; `make install` below copies the
# repository's http.conf and location.conf into $dir/live.
external_nginx_conf "$dir" "$port" "include $dir/live/http.conf;" "include $dir/live/location.conf;"
external_nginx_recipe bisect-demo "$dir" "$port" > "$dir/r.toml"

# The scripted history: one config change per commit.
cd "$dir/repo" || exit 1
git init -q -b main
git config user.email demo@scalelab.invalid
git config user.name "bisect demo"
printf 'install:\n\tcp http.conf location.conf %s/live/\n' "$dir" > Makefile
commit() { git add -A && git commit -q -m "$1" && git rev-parse --short HEAD; }
: > http.conf; : > location.conf
c1=$(commit "1: serve the static file")
echo 'default_type text/plain;' >> http.conf
c2=$(commit "2: default type text/plain")
echo 'add_header X-Demo bisect;' >> location.conf
c3=$(commit "3: an X-Demo header")
echo 'keepalive_requests 10000;' >> http.conf
c4=$(commit "4: more requests per keep-alive connection")
echo 'limit_req_zone $binary_remote_addr zone=flood:1m rate=300r/s;' >> http.conf
echo 'limit_req zone=flood burst=10000;' >> location.conf
c5=$(commit "5: protect the server from floods")
echo 'expires 1h;' >> location.conf
c6=$(commit "6: cache for an hour")
echo 'etag off;' >> location.conf
c7=$(commit "7: no etags")
git log --oneline --reverse

export SCALELAB_WORKDIR=$dir/work
sl() { "$SCALELAB" "$@"; }
echo "== baseline: $BASE runs of $c1 into base.sqlite"
git checkout -q "$c1" && make -s install
for i in $(seq 1 "$BASE"); do
    sl --store "$dir/base.sqlite" run "$dir/r.toml" --label "$c1" --commit "$c1" \
        -o "$dir/report.html" >/dev/null 2>"$dir/err" || { cat "$dir/err"; exit 1; }
done
sl history bisect-demo "$dir/base.sqlite"

echo "== git bisect start $c7 $c1 && git bisect run ..."
export SCALELAB dir
git bisect start "$c7" "$c1" >/dev/null || exit 1
# A build or a run that fails is no verdict on the commit: exit 125 skips it.
# The rate limit takes the server from thousands of requests/s to 300 (over
# 90% down); on this busy 2-CPU machine one run has been seen 70% under the
# baseline with nothing changed, so only a drop of more than 80% counts.
git bisect run sh -c '
    make -s install || exit 125
    rev=$(git rev-parse --short HEAD)
    "$SCALELAB" --store "$dir/cand.sqlite" run "$dir/r.toml" --label "$rev" --commit "$rev" \
        -o "$dir/report.html" >/dev/null 2>"$dir/err" || { cat "$dir/err"; exit 125; }
    "$SCALELAB" --store "$dir/cand.sqlite" check "$dir/base.sqlite" latest --max-regression 80%
' 2>&1 | tee "$dir/bisect.log"
first_bad=$(sed -n 's/^\([0-9a-f]*\) is the first bad commit$/\1/p' "$dir/bisect.log")
git bisect reset >/dev/null 2>&1

echo "== scalelab history over the runs bisect made, in the order it made them"
sl history bisect-demo "$dir/cand.sqlite"

echo "== every commit once, in order, into hist.sqlite: scalelab history finds the change"
for c in "$c1" "$c2" "$c3" "$c4" "$c5" "$c6" "$c7"; do
    git checkout -q "$c" && make -s install
    sl --store "$dir/hist.sqlite" run "$dir/r.toml" --label "$c" --commit "$c" \
        -o "$dir/report.html" >/dev/null 2>"$dir/err" || { cat "$dir/err"; exit 1; }
done
git checkout -q main
# HISTORY_HTML=FILE keeps the history page (docs/img's screenshot is of it).
sl history bisect-demo "$dir/hist.sqlite" ${HISTORY_HTML:+--html "$HISTORY_HTML"}
case $first_bad in
    "$c5"*) echo "PASS: git bisect names the fifth commit, $c5"; exit 0 ;;
    *) echo "FAIL: git bisect named '${first_bad:-nothing}', the fifth commit is $c5"; exit 1 ;;
esac
