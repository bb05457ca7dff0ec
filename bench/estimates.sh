#!/usr/bin/env bash
# How well `scalelab run`'s estimate predicts a run's length: runs every
# seed recipe's `--quick` variant once, each into a store of its own in a
# temporary directory and with a work directory of its own
# (SCALELAB_WORKDIR), so every run is a first run that builds its datasets
# as a new user's does, and prints per recipe the estimate `run` printed
# before its first trial, the measured wall time from start to exit, their
# ratio and whether the measured time lies within +-30% of the estimate
# (of its range, when the stopping rule gives one: 0.7 x least to 1.3 x
# most). The load average before and after each run says how busy the rest
# of the machine was; other developers' builds and tests stretch a run, so
# read a miss beside its load.
#
# Usage: bench/estimates.sh [RECIPE ...]   (names without .toml; default:
#   the seven seeds of docs/guides/README.md)
# Environment: SCALELAB (a prebuilt scalelab binary; default: build
#   target/release/scalelab), KEEP (unset; 1 keeps the temporary directory
#   with each run's store, stdout and stderr). Takes about 13 minutes for
#   all seven.
# Exit status: 0 when every estimate holds, 1 when one misses.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=bench/scalelab-bin.sh
. bench/scalelab-bin.sh

SEEDS=(pgbench-smp-scaling pg-readonly-dbsize nginx-short-lived ipv4-forwarding
    bind-threads nginx-return200 mysql-threads)
[ $# -gt 0 ] && SEEDS=("$@")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/scalelab-estimates.XXXXXX")
chmod 755 "$tmp" # the postgres user must reach its cluster inside
if [ -n "${KEEP:-}" ]; then
    echo "keeping the stores and logs in $tmp" >&2
else
    trap 'rm -rf "$tmp"' EXIT
fi

# Seconds of one of `clock`'s figures: 850ms, 1.8s, 42s, 3m05s, 1h20m.
seconds() {
    local t=$1
    case $t in
    *ms) awk -v v="${t%ms}" 'BEGIN { print v / 1000 }' ;;
    *h*m) local h=${t%%h*} m=${t#*h}; m=${m%m}; echo $((10#$h * 3600 + 10#$m * 60)) ;;
    *m*s) local m=${t%%m*} s=${t#*m}; s=${s%s}; echo $((10#$m * 60 + 10#$s)) ;;
    *s) echo "${t%s}" ;;
    *) echo "cannot read the figure '$t'" >&2; return 1 ;;
    esac
}

printf '%-22s %10s %10s %7s %6s  %s\n' recipe estimate measured ratio within "load before -> after"
misses=0
for name in "${SEEDS[@]}"; do
    recipe=recipes/$name.toml
    [ -f "$recipe" ] || { echo "no recipe $recipe" >&2; exit 2; }
    load_before=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s.%N)
    rc=0
    SCALELAB_WORKDIR="$tmp/work-$name" "$SCALELAB" run "$recipe" --quick --store "$tmp/$name.sqlite" \
        -o "$tmp/$name.html" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
    if [ "$rc" -ne 0 ] || grep -q "FAILED" "$tmp/$name.err"; then
        echo "$name: run failed (exit $rc, or failed trials); its stderr:" >&2
        tail -5 "$tmp/$name.err" >&2
        misses=$((misses + 1))
        continue
    fi
    end=$(date +%s.%N)
    load_after=$(cut -d' ' -f1 /proc/loadavg)
    line=$(grep -m1 '^estimated ' "$tmp/$name.err" || true)
    [ -n "$line" ] || { echo "$name: no estimate line in stderr" >&2; exit 2; }
    span=${line#estimated }
    span=${span%%:*}
    lo=$(seconds "${span%% to *}")
    hi=$(seconds "${span##* to }")
    measured=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    verdict=$(awk -v lo="$lo" -v hi="$hi" -v m="$measured" \
        'BEGIN { print (m >= 0.7 * lo && m <= 1.3 * hi) ? "yes" : "NO" }')
    ratio=$(awk -v lo="$lo" -v hi="$hi" -v m="$measured" \
        'BEGIN { printf "%.2f", m / ((lo + hi) / 2) }')
    [ "$verdict" = yes ] || misses=$((misses + 1))
    printf '%-22s %10s %9ss %7s %6s  %s -> %s\n' "$name" "$span" "$measured" "$ratio" \
        "$verdict" "$load_before" "$load_after"
done
echo "(estimate: the span \`scalelab run --quick\` printed; ratio: measured / its middle)"
[ "$misses" -eq 0 ]
