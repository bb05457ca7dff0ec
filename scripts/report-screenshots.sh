#!/usr/bin/env bash
# The screenshots issue 15 is judged by: the HTML reports of three --quick
# recipes and a `compare --html` of two quickstart runs, each validated with
# tidy and taken with headless Chromium at 1400 px wide.
#
#   scripts/report-screenshots.sh [OUT_DIR]     (default: ./report-shots)
#
# SCALELAB_BIN=path uses that binary instead of building the release one.
# The runs take about 2 minutes together (pgbench-smp-scaling ~50 s,
# pg-readonly-dbsize ~30 s plus building its datasets once, nginx-server-cpus
# and each quickstart ~10 s); they hold target/bench.lock when it
# exists, so they never overlap a benchmark. Needs chromium and tidy
# (`scalelab doctor --packages` lists both, so scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-report-shots}")
mkdir -p "$out"
bin=${SCALELAB_BIN:-target/release/scalelab}
[[ -n ${SCALELAB_BIN:-} ]] || cargo build --release --quiet
store="$out/runs.sqlite"
lock=target/bench.lock # the benches take it too (CONTRIBUTING.md)
locked() { if [[ -e $lock ]]; then flock "$lock" "$@"; else "$@"; fi; }

run() { # recipe -> run id
  locked "$bin" --store "$store" run "recipes/$1.toml" --quick -o "$out/$1-quick.html" </dev/null >&2
  "$bin" --store "$store" export latest --format json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["run"]["id"])'
}

for r in pgbench-smp-scaling pg-readonly-dbsize nginx-server-cpus; do run "$r" >/dev/null; done
a=$(run quickstart)
b=$(run quickstart)
# Exit 5: nothing comparable (every shared point client-bound); the page still says so.
"$bin" --store "$store" compare "$a" "$b" --html "$out/compare-quickstart.html" >"$out/compare-quickstart.txt" ||
  [[ $? == 5 ]]

for page in "$out"/*-quick.html "$out/compare-quickstart.html"; do
  tidy -errors -q "$page" || { echo "tidy found problems in $page" >&2; exit 1; }
  profile=$(mktemp -d)
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --window-size=1400,20000 \
    --screenshot="${page%.html}.png" "file://$page" >/dev/null 2>&1
  rm -rf "$profile"
  echo "${page%.html}.png"
done
