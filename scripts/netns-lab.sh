#!/usr/bin/env bash
# A lab of hosts for multi-host experiments, made of network namespaces on
# this machine:
#
#   scripts/netns-lab.sh up N     # N+1 hosts: sl-lab-h0 (the coordinator) .. sl-lab-hN
#   scripts/netns-lab.sh status   # the hosts, their addresses and sshd PIDs
#   scripts/netns-lab.sh down     # removes everything `up` made
#
# Every host namespace holds `lo` and one veth, `eth0`, addressed
# 198.18.0.(10+i)/24 (198.18.0.0/15 is the range RFC 2544 reserves for
# benchmarking). The veths' other ends sit on the bridge `br0` inside the
# namespace sl-lab-br, which has no other port: nothing in the lab can reach
# anything outside it, and nothing outside can reach in.
#
# Each host runs its own sshd on its address (port 22) with a generated host
# key, and accepts the lab's generated client key for root. `up` prints the
# SCALELAB_SSH_COMMAND to use, e.g. from the coordinator host:
#
#   eval "$(scripts/netns-lab.sh up 3)"
#   ip netns exec sl-lab-h0 $SCALELAB_SSH_COMMAND root@198.18.0.11 uname -a
#
# SCALELAB_LAB_PREFIX (default sl-lab) names the namespaces, so several labs
# (one per test) can be up at once.
#
# State (keys, sshd configs, PID files, the list of namespaces made) lives in
# $SCALELAB_LAB_DIR (default /var/tmp/scalelab-lab). `down` removes exactly
# the namespaces listed there and kills exactly the sshd PIDs recorded there,
# so it never touches anything it did not make. `up` on a lab that is already
# up takes it down first only if the same user in the same login session
# (terminal) made it ($LAB_DIR/owner); a lab made by anyone else is left
# alone, and `up` says whose it is and how to make one of your own
# (SCALELAB_LAB_DIR and SCALELAB_LAB_PREFIX). An `up` that fails, or is
# stopped by Ctrl-C or SIGTERM, takes down what it had made so far.
set -euo pipefail

LAB_DIR=${SCALELAB_LAB_DIR:-/var/tmp/scalelab-lab}
# Namespace names start with this; tests give each lab its own.
PREFIX=${SCALELAB_LAB_PREFIX:-sl-lab}
BRIDGE_NS=$PREFIX-br
SUBNET=198.18.0
FIRST_HOST=10

die() {
  echo "netns-lab: $*" >&2
  exit 1
}

need() {
  command -v "$1" >/dev/null || die "$1 is missing; fix: apt-get install -y $2"
}

host_ns() { echo "$PREFIX-h$1"; }

# Who makes a lab: the user and the login session (a terminal's session id),
# so two people, or two terminals, never take down each other's lab.
owner() { echo "user=$(id -un) session=$(ps -o sid= -p $$ | tr -d ' ')"; }

# Refuses to go on when $LAB_DIR holds a lab that another owner made.
refuse_others_lab() {
  [[ -f $LAB_DIR/namespaces ]] || return 0
  local made_by
  made_by=$(cat "$LAB_DIR/owner" 2>/dev/null || echo "an unknown owner")
  [[ $made_by == "$(owner)" ]] && return 0
  die "a lab is already up in $LAB_DIR, made by $made_by (this is $(owner)); \
it is left alone. If it is yours, take it down with \
'SCALELAB_LAB_DIR=$LAB_DIR scripts/netns-lab.sh down' first; for a lab of your own, \
set SCALELAB_LAB_DIR and SCALELAB_LAB_PREFIX (e.g. SCALELAB_LAB_DIR=/var/tmp/lab-\$USER \
SCALELAB_LAB_PREFIX=lab2)"
}
host_addr() { echo "$SUBNET.$((FIRST_HOST + $1))"; }

ssh_command() {
  echo "ssh -i $LAB_DIR/client_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o ConnectTimeout=5"
}

down() {
  [[ -d $LAB_DIR ]] || return 0
  local pidfile pid ns
  for pidfile in "$LAB_DIR"/sshd-*.pid; do
    [[ -f $pidfile ]] || continue
    pid=$(cat "$pidfile")
    # Kill only the sshd we started: its PID file names it, and its
    # command line must still be our config.
    if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$LAB_DIR/"; then
      kill "$pid" 2>/dev/null || true
    fi
  done
  if [[ -f $LAB_DIR/namespaces ]]; then
    while read -r ns; do
      [[ -n $ns ]] || continue
      ip netns list | grep -qx "$ns\( (id: [0-9]*)\)\?" || continue
      # Anything still running in the namespace was started in the lab
      # (an agent, a server under test): stop it by PID before deleting.
      for pid in $(ip netns pids "$ns" 2>/dev/null); do
        kill -9 "$pid" 2>/dev/null || true
      done
      ip netns del "$ns" 2>/dev/null || true
    done <"$LAB_DIR/namespaces"
  fi
  rm -rf "$LAB_DIR"
}

write_sshd_config() {
  local i=$1 addr
  addr=$(host_addr "$i")
  cat >"$LAB_DIR/sshd-$i.conf" <<EOF
ListenAddress $addr
Port 22
HostKey $LAB_DIR/host_key
PidFile $LAB_DIR/sshd-$i.pid
AuthorizedKeysFile $LAB_DIR/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
PrintMotd no
MaxSessions 64
MaxStartups 64:30:128
AcceptEnv SCALELAB_*
Subsystem sftp internal-sftp
EOF
}

# The mount point of this machine's file system of type $1 (the first
# one), or nothing.
mount_point_of() {
  awk -v type="$1" '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == type) print $5; break } }' \
    /proc/self/mountinfo | head -n 1
}

# Starts host $1's sshd in namespace $2. `ip netns exec` gives the host a
# fresh /sys, without this machine's cgroup and tracefs mounts; a real host
# has them: a server's tracking cgroup (and the probe's counts of its work)
# lives in the unified cgroup hierarchy, and the probe finds its syscall
# tracepoints in tracefs. So both are mounted again, at their own mount
# points, in the host's private mount namespace: they go when the host's
# sshd and sessions do, and nothing is mounted outside the lab.
#
# $3 and $4 are the mount points of cgroup2 and tracefs (mount_point_of),
# read before the lab's traps are set: a signal trapped while bash expands
# a command substitution can break bash's parse of it.
start_sshd() {
  local i=$1 ns=$2 cgroup2=$3 tracefs=$4
  # shellcheck disable=SC2016 # $1 to $3 are the inner shell's arguments
  ip netns exec "$ns" sh -c '
    if [ -n "$1" ]; then
      [ "$1" = /sys/fs/cgroup ] || mount -t tmpfs -o mode=755 tmpfs /sys/fs/cgroup || true
      mkdir -p "$1" && mount -t cgroup2 cgroup2 "$1" || true
    fi
    if [ -n "$2" ]; then mount -t tracefs tracefs "$2" || true; fi
    exec /usr/sbin/sshd -f "$3"' sh "$cgroup2" "$tracefs" "$LAB_DIR/sshd-$i.conf"
}

up() {
  local n=$1 i ns addr cgroup2 tracefs
  [[ $PREFIX =~ ^[a-z0-9-]{1,10}$ ]] || die "SCALELAB_LAB_PREFIX must be 1-10 of a-z, 0-9 and -, got '$PREFIX'"
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 40)) || die "up takes a number of hosts from 1 to 40, got '$n'; fix: scripts/netns-lab.sh up 3"
  [[ $(id -u) -eq 0 ]] || die "must run as root (it creates network namespaces)"
  need ip iproute2
  need sshd openssh-server
  need ssh-keygen openssh-client
  refuse_others_lab
  down
  cgroup2=$(mount_point_of cgroup2)
  tracefs=$(mount_point_of tracefs)
  # A half-made lab is taken down: on a failed step, Ctrl-C or SIGTERM,
  # everything recorded so far (namespaces, sshd PID files) goes, and
  # whatever runs inside the namespaces made so far is killed by `down`.
  trap 'trap - EXIT; down' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  mkdir -p "$LAB_DIR" /run/sshd
  chmod 700 "$LAB_DIR"
  owner >"$LAB_DIR/owner"
  ssh-keygen -q -t ed25519 -N '' -C scalelab-lab-host -f "$LAB_DIR/host_key"
  ssh-keygen -q -t ed25519 -N '' -C scalelab-lab-client -f "$LAB_DIR/client_key"
  cp "$LAB_DIR/client_key.pub" "$LAB_DIR/authorized_keys"
  : >"$LAB_DIR/namespaces"

  # Each namespace is recorded before it is made, so a signal between the
  # two never leaves one that `down` does not know of.
  echo "$BRIDGE_NS" >>"$LAB_DIR/namespaces"
  ip netns add "$BRIDGE_NS"
  ip -n "$BRIDGE_NS" link set lo up
  ip -n "$BRIDGE_NS" link add br0 type bridge
  ip -n "$BRIDGE_NS" link set br0 up

  for ((i = 0; i <= n; i++)); do
    ns=$(host_ns "$i")
    addr=$(host_addr "$i")
    echo "$ns" >>"$LAB_DIR/namespaces"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    # Create the pair inside the host namespace, then move its peer to the
    # bridge: no interface of the lab ever exists in the root namespace.
    ip -n "$ns" link add eth0 type veth peer name "p$i" netns "$BRIDGE_NS"
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$BRIDGE_NS" link set "p$i" master br0
    ip -n "$BRIDGE_NS" link set "p$i" up
    write_sshd_config "$i"
    start_sshd "$i" "$ns" "$cgroup2" "$tracefs"
  done
  for ((i = 0; i <= n; i++)); do
    wait_for_sshd "$i"
  done
  trap - EXIT INT TERM
  echo "# netns-lab: $((n + 1)) hosts up: $(host_addr 0) (coordinator, $(host_ns 0)) .. $(host_addr "$n")" >&2
  echo "export SCALELAB_SSH_COMMAND='$(ssh_command)'"
  echo "export SCALELAB_LAB_COORDINATOR_NS=$(host_ns 0)"
}

wait_for_sshd() {
  local i=$1 tries
  for ((tries = 0; tries < 50; tries++)); do
    if ip netns exec "$(host_ns 0)" $(ssh_command) "root@$(host_addr "$i")" true 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  die "sshd on $(host_addr "$i") did not answer within 5 s; see its config $LAB_DIR/sshd-$i.conf"
}

status() {
  [[ -f $LAB_DIR/namespaces ]] || {
    echo "netns-lab: down"
    return 0
  }
  local ns i=0
  grep -v "^$BRIDGE_NS\$" "$LAB_DIR/namespaces" | while read -r ns; do
    echo "$ns $(host_addr "$i") sshd=$(cat "$LAB_DIR/sshd-$i.pid" 2>/dev/null || echo none)"
    i=$((i + 1))
  done
  echo "export SCALELAB_SSH_COMMAND='$(ssh_command)'"
}

case ${1:-} in
  up) up "${2:-}" ;;
  down) down ;;
  status) status ;;
  *) die "usage: scripts/netns-lab.sh up N | status | down" ;;
esac
