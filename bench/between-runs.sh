#!/usr/bin/env bash
# Verdicts between runs, checked on real runs (issue 35): identical runs
# split into two labels must rarely differ (A/A), `check` against a 3-run
# baseline must not call an identical candidate a regression, a real server
# change (nginx writing its access log) must be found, and `history` must
# not take one outlying run for a change point.
#
#   bench/between-runs.sh collect DIR [A_RUNS] [B_RUNS]   # the runs (quickstart, ~2 min each)
#   bench/between-runs.sh analyse DIR                     # the rates, from DIR/runs.sqlite
#   bench/between-runs.sh collect-real DIR [RUNS]         # a real change, pinned (~30 s a run)
#   bench/between-runs.sh analyse-real DIR                # its verdicts, from DIR/real.sqlite
#   bench/between-runs.sh collect-floor DIR [A_RUNS] [B_RUNS]  # short pinned runs (~10 s each)
#   bench/between-runs.sh analyse-floor DIR               # claims beyond the noise floor (issue 47)
#
# collect-real: nginx with one worker pinned to the last CPU (server_cpus
# = 1, the load generator on the other), saturated at 16-256 connections,
# with its access log off, then on (a write(2) per request), alternating
# off on off on ...; the access log goes to DIR/access-N.log, and its line
# count is nginx's own count of the requests it served, which the script
# sets beside the requests scalelab counted (warmup 0 s, so the two cover
# the same requests). analyse then judges off against on, 3 runs a side.
# REAL_PATH=/1k.bin serves a static file instead of \`return 200\`: on a
# quiet 2-CPU machine nginx's \`return 200\` on one CPU outruns the load
# generator on the other (148k/s, client-bound), a static file does not.
#
# collect interleaves the runs A A B A A B ...: A is recipes/quickstart.toml
# as written (access_log = false), B the same recipe with nginx writing its
# access log to a file (access_log = true), a genuine server change
# measured by nginx's own log. Every run goes into DIR/runs.sqlite with its
# label ("access log off" / "access log on"). analyse relabels copies of
# that store to form sides (it never writes the original) and runs
# `scalelab compare`, `check` and `history` on them; Apache Otava is run on
# the same history series when it is installed (pip install apache-otava).
# collect-floor (issue 47): the short form for a loaded machine: nginx
# pinned to the last CPU (server_cpus = 1) serving a 1 KiB file, the load
# generator on the other, at 16 and 64 connections, 4 trials of 1 s a
# point; A_RUNS runs with the access log off (the A/A runs) interleaved
# with B_RUNS with it on (the real change, about -12% here), into
# DIR/floor.sqlite. analyse-floor splits the A/A runs 3 against 3 (at
# least 40 splits) and counts the claims under the floor rule and, from the
# same verdicts, under the old one (p < 0.05 and the ratio beyond the
# floor: a claim plus `within_floor`), then finds the real change at the
# runs a side that `compare`'s planning line asks for.
# FLOOR_CONNECTIONS ("16, 64"), FLOOR_DURATION (1s) and FLOOR_WARMUP
# (300ms) shorten it further; before each run it waits up to QUIET_WAIT
# seconds (180) for the CPUs to be idle.
# SCALELAB=BIN picks the binary (default target/release/scalelab).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SCALELAB:-target/release/scalelab}
cmd=${1:?usage: bench/between-runs.sh collect|analyse DIR [A_RUNS] [B_RUNS]}
dir=${2:?usage: bench/between-runs.sh collect|analyse DIR [A_RUNS] [B_RUNS]}
mkdir -p "$dir"
# quiet SECONDS: waits, at most SECONDS, until the CPUs are idle (other
# processes busy under 10% of them over one second, from /proc/stat);
# prints that share and fails when the machine never got quiet.
quiet() {
  local end=$((SECONDS + $1)) busy=100 u n s i w q sq st t1 i1
  while ((SECONDS < end)); do
    read -r _ u n s i w q sq st _ </proc/stat
    t1=$((u + n + s + i + w + q + sq + st)) i1=$((i + w))
    sleep 1
    read -r _ u n s i w q sq st _ </proc/stat
    busy=$((100 * ((u + n + s + i + w + q + sq + st - t1) - (i + w - i1)) / (u + n + s + i + w + q + sq + st - t1)))
    if ((busy < 10)); then echo "$busy"; return 0; fi
  done
  echo "$busy"
  return 1
}
# pinned_recipe NAME LOG ACCESS_LOG_PATH PATH CONNECTIONS DURATION WARMUP:
# nginx with one worker pinned to the last CPU, its access log on (LOG
# true, to ACCESS_LOG_PATH) or off, 4 trials a point.
pinned_recipe() {
  cat <<TOML
name = "$1"
[server]
kind = "nginx"
server_cpus = 1
access_log = $2
$($2 && echo "access_log_path = \"$3\"")
[load]
kind = "http"
path = "$4"
[sweep]
connections = [$5]
[trials]
duration = "$6"
warmup = "$7"
min = 4
max = 4
restart = "per_point"
TOML
}
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
collect-real)
  runs=${3:-4}
  for i in $(seq 1 $((2 * runs))); do
    if ((i % 2)); then label="log off" log=false; else label="log on" log=true; fi
    pinned_recipe pinned-access-log "$log" "$dir/access-$i.log" "${REAL_PATH:-/}" "16, 64, 256" \
      1500ms 0s >"$dir/real-$i.toml"
    echo "between-runs: real $i ($label), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    timeout 600 "$bin" --store "$dir/real.sqlite" run "$dir/real-$i.toml" --label "$label" \
      -o "$dir/real-$i.html" >"$dir/real-$i.txt" 2>&1 || echo "between-runs: real $i exited $?" >&2
    if $log; then
      served=$(wc -l <"$dir/access-$i.log")
      counted=$(python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute('select sum(m.requests) from measurements m join trials t on t.id=m.trial_id where t.run_id=(select max(id) from runs)').fetchone()[0])" "$dir/real.sqlite")
      echo "between-runs: real $i: nginx logged $served requests, scalelab counted $counted" >&2
    fi
  done
  ;;
collect-floor)
  a_runs=${3:-16}
  b_runs=${4:-8}
  a=0 b=0 i=0
  while ((a < a_runs || b < b_runs)); do
    i=$((i + 1))
    if (((i % 3 == 0 && b < b_runs) || a >= a_runs)); then
      b=$((b + 1)) log=true label="log on"
    else
      a=$((a + 1)) log=false label="log off"
    fi
    pinned_recipe floor-pinned "$log" "$dir/access-$i.log" /1k.bin "${FLOOR_CONNECTIONS:-16, 64}" \
      "${FLOOR_DURATION:-1s}" "${FLOOR_WARMUP:-300ms}" >"$dir/floor-$i.toml"
    # Other tenants (builds) halve a pinned nginx: wait for a quiet moment.
    if busy=$(quiet "${QUIET_WAIT:-180}"); then why="quiet, CPUs $busy% busy"; else
      why="not quiet after ${QUIET_WAIT:-180} s (CPUs $busy% busy), run anyway"; fi
    echo "between-runs: floor $i ($label), $why, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    timeout 300 "$bin" --store "$dir/floor.sqlite" run "$dir/floor-$i.toml" --label "$label" \
      -o "$dir/floor-$i.html" >"$dir/floor-$i.txt" 2>&1 || echo "between-runs: floor $i exited $?" >&2
    rm -f "$dir/access-$i.log"
  done
  ;;
analyse)
  exec python3 bench/between_runs.py "$bin" "$dir"
  ;;
analyse-floor)
  exec python3 bench/between_runs.py "$bin" "$dir" floor
  ;;
analyse-real)
  exec python3 bench/between_runs.py "$bin" "$dir" real
  ;;
*)
  echo "usage: bench/between-runs.sh collect|collect-real|collect-floor|analyse|analyse-real|analyse-floor DIR [RUNS...]" >&2
  exit 2
  ;;
esac
