#!/usr/bin/env bash
# Verdicts between runs, checked on real runs (issue 35): identical runs
# split into two labels must rarely differ (A/A), `check` against a 3-run
# baseline must not call an identical candidate a regression, a real server
# change (nginx writing its access log) must be found, and `history` must
# not take one outlying run for a change point.
#
#   bench/between-runs.sh collect DIR [A_RUNS] [B_RUNS]   # the runs (quickstart, ~2 min each)
#   bench/between-runs.sh analyse DIR                     # the rates, from DIR/runs.sqlite
#
# collect interleaves the runs A A B A A B ...: A is recipes/quickstart.toml
# as written (access_log = false), B the same recipe with nginx writing its
# access log to a file (access_log = true), a genuine server change
# measured by nginx's own log. Every run goes into DIR/runs.sqlite with its
# label ("access log off" / "access log on"). analyse relabels copies of
# that store to form sides (it never writes the original) and runs
# `scalelab compare`, `check` and `history` on them; Apache Otava is run on
# the same history series when it is installed (pip install apache-otava).
# SCALELAB=BIN picks the binary (default target/release/scalelab).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SCALELAB:-target/release/scalelab}
cmd=${1:?usage: bench/between-runs.sh collect|analyse DIR [A_RUNS] [B_RUNS]}
dir=${2:?usage: bench/between-runs.sh collect|analyse DIR [A_RUNS] [B_RUNS]}
mkdir -p "$dir"
case "$cmd" in
collect)
  a_runs=${3:-12}
  b_runs=${4:-6}
  sed 's/^access_log = false /access_log = true  /' recipes/quickstart.toml >"$dir/access-log-on.toml"
  grep -q '^access_log = true' "$dir/access-log-on.toml"
  a=0 b=0 i=0
  while ((a < a_runs || b < b_runs)); do
    i=$((i + 1))
    if (((i % 3 == 0 && b < b_runs) || a >= a_runs)); then
      b=$((b + 1)) recipe="$dir/access-log-on.toml" label="access log on"
    else
      a=$((a + 1)) recipe=recipes/quickstart.toml label="access log off"
    fi
    echo "between-runs: run $i ($label), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    timeout 900 "$bin" --store "$dir/runs.sqlite" run "$recipe" --label "$label" \
      -o "$dir/report-$i.html" >"$dir/run-$i.txt" 2>&1 || echo "between-runs: run $i exited $?" >&2
  done
  ;;
analyse)
  exec python3 bench/between_runs.py "$bin" "$dir"
  ;;
*)
  echo "usage: bench/between-runs.sh collect|analyse DIR [A_RUNS] [B_RUNS]" >&2
  exit 2
  ;;
esac
