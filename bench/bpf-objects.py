#!/usr/bin/env python3
"""Counts the BPF objects scalelab's AF_XDP generator makes, system-wide,
through the bpf() syscall itself (bpftool need not be installed, and `ss
--xdp` needs CONFIG_XDP_SOCKETS_DIAG, which kernels often leave out):

    programs  XDP programs named scalelab_xsk
    xskmaps   XSKMAPs with 64 entries and no name (scalelab's; an XSKMAP
              holds its AF_XDP sockets, and a socket holds its UMEM pinned)

Prints "programs N xskmaps M". Needs root (CAP_SYS_ADMIN)."""
import ctypes
import struct
import sys

SYS_BPF = 321  # x86_64
PROG_GET_NEXT_ID, MAP_GET_NEXT_ID = 11, 12
PROG_GET_FD_BY_ID, MAP_GET_FD_BY_ID = 13, 14
OBJ_GET_INFO_BY_FD = 15
MAP_TYPE_XSKMAP = 17
libc = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr.ljust(128, b"\0"), 128)
    return libc.syscall(SYS_BPF, cmd, buf, 128), buf


def ids(cmd):
    start = 0
    while True:
        r, buf = bpf(cmd, struct.pack("I", start))
        if r < 0:
            return
        start = struct.unpack_from("I", buf, 4)[0]
        yield start


def info(get_fd, obj_id, size):
    fd, _ = bpf(get_fd, struct.pack("I", obj_id))
    if fd < 0:
        return None
    out = ctypes.create_string_buffer(size)
    r, _ = bpf(OBJ_GET_INFO_BY_FD, struct.pack("IIQ", fd, size, ctypes.addressof(out)))
    libc.close(fd)
    return out.raw if r == 0 else None


def name(raw, at):
    return raw[at:at + 16].split(b"\0")[0].decode(errors="replace")


programs = sum(
    1 for i in ids(PROG_GET_NEXT_ID)
    if (raw := info(PROG_GET_FD_BY_ID, i, 256)) and name(raw, 64) == "scalelab_xsk")
xskmaps = 0
for i in ids(MAP_GET_NEXT_ID):
    raw = info(MAP_GET_FD_BY_ID, i, 128)
    if raw and struct.unpack_from("I", raw, 0)[0] == MAP_TYPE_XSKMAP \
            and struct.unpack_from("I", raw, 16)[0] == 64 and name(raw, 24) == "":
        xskmaps += 1
print(f"programs {programs} xskmaps {xskmaps}")
sys.exit(0)
