#!/usr/bin/env python3
"""Splits a client's `perf script` samples (perf record -e cpu-clock -g) into
where the CPU went, so two HTTP clients can be compared per request.

Usage: perf script -i FILE | bench/cpu-breakdown.py REQUESTS [LABEL] [--tsv PATH]

Each sample's stack (leaf first, as perf script prints it) is put in the
first matching bucket:
  softirq rx   the receive path run in our context for packets loopback
               delivers (mostly the *peer's* socket: net_rx_action,
               __netif_receive_skb, tcp_v4_rcv), wherever it was entered
  sched        context switches and wakeups (schedule, finish_task_switch)
  epoll        epoll_wait / epoll_ctl bodies
  tcp send     write/sendto/sendmsg bodies (tcp_sendmsg and the IP output path)
  tcp recv     read/recvfrom/recvmsg bodies (tcp_recvmsg)
  conn setup   socket/connect/bind/setsockopt bodies
  close        close bodies and the deferred __fput/tcp_close
  syscall e/x  syscall entry and exit themselves (do_syscall_64 and
               entry_SYSCALL_64 as the leaf, exit-to-user work)
  other kernel anything else in the kernel (page faults, timers, ...)
  user alloc   malloc/free/realloc in user space
  user         all other user-space code
Prints samples, share and microseconds of CPU per request per bucket.
With --tsv PATH, also appends "LABEL<TAB>bucket<TAB>us/req" rows (one per
bucket, and "total") to PATH, for a summary over several runs.
"""
import re
import sys

BUCKETS = [
    ("softirq rx", r"net_rx_action|__netif_receive_skb|process_backlog|tcp_v4_rcv|ip_rcv"),
    ("sched", r"^(schedule|__schedule|finish_task_switch|try_to_wake_up|schedule_hrtimeout_range)"),
    ("epoll", r"__x64_sys_epoll|do_epoll_|ep_poll|ep_insert|ep_remove|eventpoll_release"),
    ("tcp send", r"__x64_sys_(write|sendto|sendmsg|writev)\b|ksys_write|io_send"),
    ("tcp recv", r"__x64_sys_(read|recvfrom|recvmsg|readv)\b|ksys_read|io_recv"),
    ("conn setup", r"__x64_sys_(socket|connect|bind|setsockopt|getsockopt)\b|io_connect|io_socket"),
    ("close", r"__x64_sys_close\b|__fput|tcp_close|io_close"),
]
ALLOC = re.compile(r"^(malloc|free|realloc|calloc|_int_malloc|_int_free|cfree|__libc_malloc|__libc_free|__rust_alloc|__rust_dealloc|__rdl_alloc|__rust_realloc)")
ENTRY = re.compile(r"^(entry_SYSCALL|do_syscall_64|syscall_exit|syscall_return|__x64_sys|exit_to_user|arch_exit|syscall_enter|x64_sys_call)")


def classify(frames):
    """frames: list of (symbol, is_kernel), leaf first."""
    if not frames:
        return "other kernel"
    if not frames[0][1]:
        return "user alloc" if ALLOC.match(frames[0][0]) else "user"
    kern = [s for s, k in frames if k]
    for name, pat in BUCKETS:
        rx = re.compile(pat)
        for s in kern:
            if rx.search(s):
                # Only count sched when it is the leaf's neighbourhood.
                return name
    if ENTRY.match(kern[0]):
        return "syscall e/x"
    return "other kernel"


def main():
    args = sys.argv[1:]
    tsv = None
    if "--tsv" in args:
        i = args.index("--tsv")
        tsv = args[i + 1]
        del args[i : i + 2]
    requests = int(args[0])
    label = args[1] if len(args) > 1 else ""
    counts, period_ns = {}, 0
    frames, header = [], None
    sample_re = re.compile(r":\s+(\d+)\s+cpu-clock")
    for line in list(sys.stdin) + [""]:
        line = line.rstrip("\n")
        if not line.strip():
            if header is not None:
                b = classify(frames)
                counts[b] = counts.get(b, 0) + 1
            header, frames = None, []
            continue
        if not line.startswith(("\t", " ")):
            header = line
            m = sample_re.search(line)
            if m:
                period_ns = int(m.group(1))
            continue
        parts = line.strip().split(None, 1)
        if len(parts) < 2:
            continue
        sym = re.sub(r"\+0x[0-9a-f]+ .*$", "", parts[1])
        sym = re.sub(r" \(.*\)$", "", sym)
        frames.append((sym, "[kernel.kallsyms]" in line))
    total = sum(counts.values())
    order = [b for b, _ in BUCKETS] + ["syscall e/x", "other kernel", "user alloc", "user"]
    print(f"{label}: {total} samples of {period_ns / 1000:.0f}us, {requests} requests")
    for b in order:
        n = counts.get(b, 0)
        us = n * period_ns / 1000 / requests if requests else 0
        print(f"  {b:<13}{n:>8}{100 * n / max(total, 1):>7.1f}%{us:>9.2f} us/req")
    print(f"  {'total':<13}{total:>8}{100.0:>7.1f}%{total * period_ns / 1000 / max(requests, 1):>9.2f} us/req")
    if tsv:
        with open(tsv, "a") as out:
            for b in order + ["total"]:
                n = total if b == "total" else counts.get(b, 0)
                out.write(f"{label}\t{b}\t{n * period_ns / 1000 / max(requests, 1):.4f}\n")


main()
