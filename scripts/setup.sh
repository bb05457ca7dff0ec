#!/usr/bin/env bash
# Installs what scalelab's recipes, tests and benchmarks need on Debian:
# the real servers (started by scalelab itself, never by systemd) and the
# peer tools. Idempotent: apt runs only when something is missing.
set -euo pipefail

packages=(nginx postgresql postgresql-contrib wrk time iproute2 procps util-linux python3 ca-certificates nsd unbound bind9 bind9-utils dnsperf)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing packages ${missing[*]}; run as root (or with sudo)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null; then
  [[ -x "$HOME/.cargo/bin/cargo" ]] && export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null; then
  echo "setup: no Rust toolchain found (cargo); install Rust 1.80 or newer" >&2
  exit 1
fi
echo "setup: ready ($(cargo --version))"
