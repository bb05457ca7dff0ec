#!/usr/bin/env bash
# The whole test suite: set up (installs nginx, PostgreSQL, ...), lint, test.
# Tests start real servers on loopback; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[[ -x "$HOME/.cargo/bin/cargo" ]] && export PATH="$HOME/.cargo/bin:$PATH"
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test --all-targets 2>&1
