#!/usr/bin/env bash
# Clean and incremental build times of two revisions, side by side.
#
# Usage: bench/build-time.sh [BEFORE] [AFTER] [ROUNDS] [TARGETS]
#   BEFORE, AFTER: git revisions (default: d316028, the tree before the
#   crates of issue 48, and HEAD); ROUNDS: how many A B pairs (default 2);
#   TARGETS: `all` (default: every target, the suite's build) or `bin`
#   (the libraries and the binary, a user's `cargo build`).
#
# Each revision is checked out once into a temporary worktree. Each round
# builds A then B from an empty target directory (`cargo build --workspace
# --all-targets`, the suite's build), then touches one file of the report and
# builds again (the incremental case a change to the
# report pays). Alternating A B A B spreads a drift of the machine (another
# process, the page cache) over both. Dependencies are fetched before the
# first round, so no round downloads anything. Prints one line per build
# and the medians; writes nothing outside its temporary directory. The
# suite builds with CARGO_INCREMENTAL=0 (scripts/test.sh): set it here too
# to time the suite's build; the setting used is printed first.
set -euo pipefail

before=${1:-d316028}
after=${2:-HEAD}
rounds=${3:-2}
case ${4:-all} in
  all) targets=(--workspace --all-targets) ;;
  bin) targets=(--workspace) ;;
  *) echo "build-time.sh: TARGETS is all or bin, not '$4'" >&2; exit 2 ;;
esac
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(mktemp -d)
cleanup() {
  for side in a b; do
    if [[ -d "$work/$side" ]]; then
      git -C "$repo" worktree remove --force "$work/$side" || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-unset}, targets: ${4:-all}, $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at the start"
git -C "$repo" worktree add --detach --quiet "$work/a" "$before"
git -C "$repo" worktree add --detach --quiet "$work/b" "$after"
for side in a b; do (cd "$work/$side" && cargo fetch --quiet); done

# The seconds `cargo build` of the chosen targets takes in $1 with target
# directory $2.
build() {
  local start end
  start=$(date +%s.%N)
  (cd "$1" && CARGO_TARGET_DIR="$2" cargo build "${targets[@]}" --quiet)
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" 'BEGIN { print e - s }'
}

# The report's number formatter in either tree: the top crate's before the
# results crate, crates/results' report/ after it, its judging/ since the
# judging layer.
report_file() {
  if [[ -f "$1/crates/results/src/judging/format.rs" ]]; then
    echo crates/results/src/judging/format.rs
  elif [[ -f "$1/crates/results/src/report/format.rs" ]]; then  # 06b15e1..0ab0835
    echo crates/results/src/report/format.rs
  else
    echo src/report/format.rs
  fi
}

declare -A clean incremental
for round in $(seq 1 "$rounds"); do
  for side in a b; do
    target="$work/target-$side-$round"
    c=$(build "$work/$side" "$target")
    touched=$(report_file "$work/$side")
    touch "$work/$side/$touched"
    i=$(build "$work/$side" "$target")
    rm -rf "$target"
    clean[$side]+="$c "
    incremental[$side]+="$i "
    printf 'round %s %s (%s): clean %.1f s, after touching %s %.1f s\n' \
      "$round" "$side" "$([[ $side == a ]] && echo "$before" || echo "$after")" "$c" "$touched" "$i"
  done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
for side in a b; do
  printf '%s: clean median %.1f s, incremental median %.1f s\n' \
    "$([[ $side == a ]] && echo "$before" || echo "$after")" \
    "$(echo "${clean[$side]}" | median)" "$(echo "${incremental[$side]}" | median)"
done
