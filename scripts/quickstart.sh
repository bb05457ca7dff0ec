#!/usr/bin/env bash
# The main job: set up, build, run recipes/quickstart.toml (a real nginx
# concurrency sweep, 1 worker vs 2 workers), print the table, write the
# HTML report. Extra arguments go to `scalelab run` (e.g. --quick).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[[ -x "$HOME/.cargo/bin/cargo" ]] && export PATH="$HOME/.cargo/bin:$PATH"
cargo build --release --quiet
exec target/release/scalelab run recipes/quickstart.toml "$@"
