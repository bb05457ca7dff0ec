#!/usr/bin/env bash
# What the limiter costs: the probe's own CPU (the sampler thread, which
# now also reads every server thread's schedstat at each sample and its
# state and system call TICKS_PER_SAMPLE = 4 times per interval), as a
# share of one CPU, over real trials of a server with many threads.
#
# Runs PostgreSQL tpcb-like at scale 1 with CONNS clients (CONNS + 5
# server processes) for TRIALS trials of SECS seconds at the default 1 s
# interval, and again at INTERVAL_FAST (100 ms, ten times the reads), then
# prints each trial's sampler_cpu_util (the sampler thread's
# CLOCK_THREAD_CPUTIME_ID over the window, stored with every trial) and
# the median. The budget is 1% of one CPU (0.01).
#
# Measured on the project's 2-vCPU VM at load average ~20 (seven other
# builds), debug build, tpcb-like 16 clients, 22 server threads, 10 s trials:
#   this branch, 1 s interval:   0.58-0.61% of one CPU (5.5-5.7 ms/sample,
#                                the sample and its 4 wait-state ticks)
#   this branch, 100 ms:         3.9-4.8%  (3.8-4.8 ms/sample, no ticks between)
#   main without the limiter:    1 s 0.25-0.27% (2.3-2.5 ms/sample),
#                                100 ms 2.4-2.7%
# So the limiter adds about 0.33% of one CPU at the default 1 s interval:
# the probe stays under its 1% budget there.
#
# Issue 37's look-back (woken::LOOKBACK: every wait-state sample reads the
# threads' system calls twice, 5 ms apart, and the schedstat of those
# asleep on a lock), release builds, same bench, on the same VM at load
# average 2.9-3.7 from other developers' work:
#   with the look-back (4eee60e), 1 s:  0.43-0.46% of one CPU (3.9-4.3 ms/sample)
#                                100 ms: 2.05-2.12% (2.05-2.11 ms/sample)
#   before it (5b43c54),          1 s:  0.31-0.32% (2.8-2.9 ms/sample)
#                                100 ms: 1.89-1.98%
# So the look-back adds about 0.13% of one CPU at the default interval,
# and the probe stays under its 1% budget there.
#
# Usage: bench/limiter-cost.sh
# Environment: CONNS (16), SECS (10), TRIALS (3), INTERVAL_FAST (100ms),
# SCALELAB (a prebuilt binary; default: build target/release/scalelab).
set -euo pipefail
CONNS=${CONNS:-16}
SECS=${SECS:-10}
TRIALS=${TRIALS:-3}
INTERVAL_FAST=${INTERVAL_FAST:-100ms}
command -v sqlite3 >/dev/null || { echo "missing: sqlite3 (scripts/setup.sh installs it)" >&2; exit 2; }
# shellcheck source=bench/scalelab-bin.sh
. "$(dirname "$0")/scalelab-bin.sh"
dir=$(mktemp -d)
chmod 755 "$dir" # the postgres user must reach its data dir under it
trap 'rm -rf "$dir"' EXIT

for interval in 1s "$INTERVAL_FAST"; do
    cat >"$dir/exp.toml" <<EOF
name = "limiter-cost"
[server]
kind = "postgres"
[load]
kind = "pg"
scale = 1
script = "tpcb-like"
[sweep]
connections = [$CONNS]
[trials]
duration = "${SECS}s"
warmup = "1s"
min = $TRIALS
max = $TRIALS
sample_interval = "$interval"
[[system]]
label = "pg"
EOF
    store="$dir/s-$interval.sqlite"
    (cd "$dir" && SCALELAB_WORKDIR="$dir/work" "$SCALELAB" --store "$store" run "$dir/exp.toml" -o "$dir/r.html" >"$dir/run.log" 2>&1) ||
        { echo "the run failed (exit $?):" >&2; tail -5 "$dir/run.log" >&2; exit 1; }
    echo "interval $interval: sampler CPU per trial (share of one CPU), server threads seen"
    sqlite3 "$store" "SELECT printf('  %.5f  %.2f ms/sample  %d threads  limiter: %s',
            json_extract(p.summary, '\$.sampler_cpu_util'),
            1000.0 * json_extract(p.summary, '\$.sampler_cpu_s') / json_extract(p.summary, '\$.samples'),
            json_extract(p.summary, '\$.limiter.threads_seen'),
            json_extract(t.context, '\$.limiter.kind'))
        FROM probes p JOIN trials t ON t.id = p.trial_id ORDER BY t.id"
done
