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
# No loop between sibling modules and no top-level import against the layer
# diagram (CONTRIBUTING.md, "Layers"); exits 1 on either.
python3 scripts/module-loops.py
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
# Tests write only inside their own temporary directories: every file of the
# working tree (ignored ones too, such as the quickstart's report and store)
# is the same, to the byte count and modification time, after the suite.
tree_state() {
  find . \( -path ./target -o -path ./.git \) -prune -o -type f -printf '%p %s %T@\n' | sort
}
before=$(tree_state)
cargo test --workspace --all-targets 2>&1
after=$(tree_state)
if [[ "$before" != "$after" ]]; then
  echo "test: the suite changed files in the working directory (a test must write only in its own temporary directory):" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
