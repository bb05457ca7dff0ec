#!/usr/bin/env bash
# Installs what scalelab's recipes, tests and benchmarks need on Debian:
# the real servers (started by scalelab itself, never by systemd) and the
# peer tools. Idempotent: apt runs only when something is missing.
#
# The servers' packages are not listed here: each server and load kind
# declares what it needs in its registry entry, and `scalelab doctor
# --packages` prints them. So this script first installs what building
# scalelab needs, builds it, then asks it.
set -euo pipefail
cd "$(dirname "$0")/.."

# Building scalelab (a C compiler for the bundled SQLite) and the scripts.
base=(gcc libc6-dev time iproute2 procps util-linux python3 ca-certificates)

install_missing() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing packages ${missing[*]}; run as root (or with sudo)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
  apt-get clean # the downloaded .debs are not needed again
}

install_missing "${base[@]}"

# Multi-host runs reach other hosts with the system ssh client; the tests
# and scripts/netns-lab.sh run a real sshd in each lab host.
remote=(openssh-client openssh-server)
install_missing "${remote[@]}"

if ! command -v cargo >/dev/null; then
  [[ -x "$HOME/.cargo/bin/cargo" ]] && export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null; then
  echo "setup: no Rust toolchain found (cargo); install Rust 1.80 or newer" >&2
  exit 1
fi

# Every registered kind's packages, and the benchmarks' peer tools.
mapfile -t kinds < <(cargo run --quiet --bin scalelab -- doctor --packages)
if ((${#kinds[@]} == 0)); then
  echo "setup: \`scalelab doctor --packages\` listed nothing" >&2
  exit 1
fi
install_missing "${kinds[@]}"

# The probe counts system calls, and the profiler records off-CPU stacks,
# through tracepoints, which the kernel serves in tracefs. A new machine
# may boot without it mounted (perf mounts it on first use, so a machine
# that ran perf has it); mount it where the kernel documents it.
if [[ -d /sys/kernel/tracing && ! -d /sys/kernel/tracing/events ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: tracefs is not mounted; run as root (or with sudo) to mount it" >&2
    exit 1
  fi
  echo "setup: mounting tracefs at /sys/kernel/tracing"
  mount -t tracefs nodev /sys/kernel/tracing
fi
echo "setup: ready ($(cargo --version))"
