#!/usr/bin/env bash
# The whole test suite: set up (installs nginx, PostgreSQL, ...), lint, test.
# Tests start real servers on loopback; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
# Incremental caches for one throwaway build only cost disk (0.9 GB).
export CARGO_INCREMENTAL=0
df -h . | awk 'NR == 2 { print "test: " $4 " free on " $6 " before setup" }'
scripts/setup.sh
[[ -x "$HOME/.cargo/bin/cargo" ]] && export PATH="$HOME/.cargo/bin:$PATH"
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test --all-targets 2>&1
