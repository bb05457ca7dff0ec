#!/usr/bin/env bash
# The whole suite's time (the README's test command, `scripts/test.sh`:
# set-up, lint, docs, build and every test) of two revisions, side by side.
#
# Usage: bench/suite-time.sh [BEFORE] [AFTER] [ROUNDS]
#   BEFORE, AFTER: git revisions (default: d316028, the tree before the
#   crates of issue 48, and HEAD); ROUNDS: how many A B pairs (default 1:
#   one suite takes 15 minutes on the project's 2-CPU VM).
#
# Each round clones each revision afresh into a temporary directory (so
# every build is clean, as on CI) and runs its own `scripts/test.sh`,
# A then B. Prints each suite's seconds, exit code and test counts (and
# a failed suite's failing tests), keeping each log in the temporary
# directory until the end; writes nothing outside it. Run it on an
# otherwise idle machine: the suites' own builds and timing tests share
# the 2 CPUs with nothing else.
set -euo pipefail

before=${1:-d316028}
after=${2:-HEAD}
rounds=${3:-1}
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for round in $(seq 1 "$rounds"); do
  for side in a b; do
    rev=$([[ $side == a ]] && echo "$before" || echo "$after")
    clone="$work/$side-$round"
    git clone --quiet "$repo" "$clone"
    git -C "$clone" checkout --quiet --detach "$rev"
    log="$work/$side-$round.log"
    start=$(date +%s.%N)
    rc=0
    (cd "$clone" && scripts/test.sh) >"$log" 2>&1 || rc=$?
    end=$(date +%s.%N)
    # The test binaries' "test result" lines: passed and failed, summed.
    counts=$(awk '/^test result:/ { p += $4; f += $6 } END { printf "%d passed, %d failed", p, f }' "$log")
    printf 'round %s %s (%s): %.0f s, exit %s, %s\n' \
      "$round" "$side" "$rev" "$(awk -v s="$start" -v e="$end" 'BEGIN { print e - s }')" "$rc" "$counts"
    # A failed suite's time stops at its first failing test binary (cargo
    # runs no binary after it), so it is no suite time: name what failed.
    if [[ $rc != 0 ]]; then
      grep -E '^test .* FAILED$|^error: test failed|^---- .* stdout ----$' "$log" | sed 's/^/    /' || true
      echo "    (round $round $side is a failed suite: its time is not comparable)"
    fi
    rm -rf "$clone"
  done
done
