# Sourced by the bench scripts (not run): a private network namespace whose
# lo steers each packet's receive work to the CPU that reads the receiving
# socket (RPS + RFS), as two machines would. On the host's lo, the sender's
# CPU runs the receiver's TCP receive in its softirq, so a loopback client
# pays for part of the server's receive and the server for the client's.
# The host's lo is untouched; net.core.rps_sock_flow_entries (global) is
# raised to 4096 if lower and put back by rfs_netns_down.
#
#   rfs_netns_up NAME CPU...   creates NAME, sets IN_NS=(ip netns exec NAME)
#   rfs_netns_down             deletes it and restores the sysctl

IN_NS=()
RFS_NS=
RFS_FLOW_ENTRIES_BEFORE=

rfs_netns_up() {
    local name=$1 mask=0 cpu now
    shift
    [ "$(id -u)" = 0 ] || { echo "the RPS/RFS namespace needs root" >&2; return 2; }
    for cpu in "$@"; do mask=$((mask | (1 << cpu))); done
    ip netns add "$name"
    RFS_NS=$name
    IN_NS=(ip netns exec "$name")
    "${IN_NS[@]}" ip link set lo up
    "${IN_NS[@]}" sh -c "q=/sys/class/net/lo/queues/rx-0
        printf '%x\n' $mask >\$q/rps_cpus; echo 4096 >\$q/rps_flow_cnt"
    now=$(cat /proc/sys/net/core/rps_sock_flow_entries)
    if [ "$now" -lt 4096 ]; then
        RFS_FLOW_ENTRIES_BEFORE=$now
        echo 4096 >/proc/sys/net/core/rps_sock_flow_entries
    fi
}

rfs_netns_down() {
    if [ -n "$RFS_NS" ]; then
        ip netns del "$RFS_NS" 2>/dev/null || true
        RFS_NS=
    fi
    if [ -n "$RFS_FLOW_ENTRIES_BEFORE" ]; then
        echo "$RFS_FLOW_ENTRIES_BEFORE" >/proc/sys/net/core/rps_sock_flow_entries
        RFS_FLOW_ENTRIES_BEFORE=
    fi
}
