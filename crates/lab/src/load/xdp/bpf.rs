//! The `bpf()` syscall, only as far as AF_XDP needs it: an XSKMAP, the
//! redirect program (assembled here, 26 instructions), and a BPF link that
//! attaches it to an interface for as long as its descriptor is open.
//!
//! The program, per frame: Ethernet type IPv4, IHL 5, protocol UDP, the
//! destination address ours and the destination port in `ports` ⇒
//! `bpf_redirect_map(xsks, rx_queue_index, XDP_PASS)`; anything else
//! passes to the kernel's stack untouched.

use super::{sys_error, XdpError};
use std::net::Ipv4Addr;
use std::ops::RangeInclusive;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
/// `enum bpf_attach_type`'s `BPF_XDP`.
const BPF_XDP: u32 = 37;
const XDP_PASS: i32 = 2;
const FN_REDIRECT_MAP: i32 = 51;

/// One eBPF instruction (`struct bpf_insn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Insn {
    code: u8,
    /// dst register in the low nibble, src in the high one.
    regs: u8,
    off: i16,
    imm: i32,
}

fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        regs: dst | (src << 4),
        off,
        imm,
    }
}

/// `dst = *(size *)(src + off)`; size code 0x61 word, 0x69 half, 0x71 byte.
fn load(size: u8, dst: u8, src: u8, off: i16) -> Insn {
    insn(size, dst, src, off, 0)
}

const W: u8 = 0x61;
const H: u8 = 0x69;
const B: u8 = 0x71;

/// The redirect program for frames to `ours`, UDP ports `ports`, into
/// the XSKMAP `map_fd`. Jumps to the final `return XDP_PASS` pair are
/// placed by index.
pub(crate) fn program(map_fd: i32, ours: Ipv4Addr, ports: &RangeInclusive<u16>) -> Vec<Insn> {
    const PASS: i16 = 24;
    let ip_le = i32::from_le_bytes(ours.octets());
    let mut p = vec![
        insn(0xbf, 6, 1, 0, 0),                         // 0: r6 = ctx
        load(W, 2, 1, 0),                               // 1: r2 = data
        load(W, 3, 1, 4),                               // 2: r3 = data_end
        insn(0xbf, 4, 2, 0, 0),                         // 3: r4 = r2
        insn(0x07, 4, 0, 0, 42),                        // 4: r4 += 42 (Ethernet, IPv4, UDP)
        insn(0x2d, 4, 3, 0, 0),                         // 5: if r4 > r3 goto pass
        load(H, 4, 2, 12),                              // 6: r4 = ethertype
        insn(0x55, 4, 0, 0, 0x08),                      // 7: if r4 != htons(0x0800) goto pass
        load(B, 4, 2, 14),                              // 8: r4 = version, IHL
        insn(0x55, 4, 0, 0, 0x45),                      // 9
        load(B, 4, 2, 23),                              // 10: r4 = protocol
        insn(0x55, 4, 0, 0, 17),                        // 11: UDP
        load(W, 4, 2, 30),                              // 12: r4 = destination address
        insn(0x56, 4, 0, 0, ip_le),                     // 13: if w4 != ours goto pass (JMP32)
        load(H, 4, 2, 36),                              // 14: r4 = destination port
        insn(0xdc, 4, 0, 0, 16),                        // 15: r4 = be16(r4)
        insn(0xa5, 4, 0, 0, i32::from(*ports.start())), // 16: if r4 < lo goto pass
        insn(0x25, 4, 0, 0, i32::from(*ports.end())),   // 17: if r4 > hi goto pass
        load(W, 2, 6, 16),                              // 18: r2 = rx_queue_index
        insn(0x18, 1, 1, 0, map_fd),                    // 19: r1 = map (BPF_PSEUDO_MAP_FD)
        insn(0, 0, 0, 0, 0),                            // 20: (second half of the 64-bit load)
        insn(0xb7, 3, 0, 0, XDP_PASS),                  // 21: r3 = XDP_PASS if no socket
        insn(0x85, 0, 0, 0, FN_REDIRECT_MAP),           // 22
        insn(0x95, 0, 0, 0, 0),                         // 23: return r0
        insn(0xb7, 0, 0, 0, XDP_PASS),                  // 24 (pass): r0 = XDP_PASS
        insn(0x95, 0, 0, 0, 0),                         // 25: return r0
    ];
    for (i, ins) in p.iter_mut().enumerate() {
        let conditional = ins.code & 0x07 == 0x05 || ins.code & 0x07 == 0x06;
        if conditional && !matches!(ins.code, 0x85 | 0x95) {
            ins.off = PASS - (i as i16 + 1);
        }
    }
    p
}

fn bpf(cmd: libc::c_long, attr: &mut [u64; 16]) -> libc::c_long {
    // SAFETY: `attr` is a zero-padded 128-byte `union bpf_attr` whose
    // fields for `cmd` were filled in; the kernel reads at most its size.
    unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.as_mut_ptr(),
            std::mem::size_of_val(attr),
        )
    }
}

fn words(attr: &mut [u64; 16]) -> &mut [u32; 32] {
    // SAFETY: [u64; 16] and [u32; 32] have the same size, and u32's
    // alignment is smaller: every bit pattern is valid for both.
    unsafe { &mut *(attr as *mut [u64; 16]).cast::<[u32; 32]>() }
}

fn fd_of(r: libc::c_long, what: &'static str) -> Result<OwnedFd, XdpError> {
    if r < 0 {
        return Err(sys_error(what));
    }
    // SAFETY: the kernel just returned this new descriptor; nobody else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(r as i32) })
}

/// A new XSKMAP of `entries` queues.
pub(crate) fn xskmap(entries: u32) -> Result<OwnedFd, XdpError> {
    let mut attr = [0u64; 16];
    let w = words(&mut attr);
    w[..4].copy_from_slice(&[BPF_MAP_TYPE_XSKMAP, 4, 4, entries]);
    fd_of(bpf(BPF_MAP_CREATE, &mut attr), "creating the XSKMAP")
}

/// Puts the XDP socket `xsk` at `queue` in the XSKMAP `map`.
pub(crate) fn set_xsk(map: &OwnedFd, queue: u32, xsk: i32) -> Result<(), XdpError> {
    let key = queue;
    let value = xsk as u32;
    let mut attr = [0u64; 16];
    attr[0] = map.as_raw_fd() as u64;
    attr[1] = std::ptr::addr_of!(key) as u64;
    attr[2] = std::ptr::addr_of!(value) as u64;
    if bpf(BPF_MAP_UPDATE_ELEM, &mut attr) < 0 {
        return Err(sys_error("putting the socket in the XSKMAP"));
    }
    Ok(())
}

/// Loads `insns` as an XDP program.
pub(crate) fn load_xdp(insns: &[Insn]) -> Result<OwnedFd, XdpError> {
    let license = c"GPL";
    let mut log = vec![0u8; 64 * 1024];
    let mut attr = [0u64; 16];
    let w = words(&mut attr);
    w[0] = BPF_PROG_TYPE_XDP;
    w[1] = insns.len() as u32;
    w[6] = 1; // log_level
    w[7] = log.len() as u32;
    w[17] = BPF_XDP; // expected_attach_type, at byte 68
    let name = b"scalelab_xsk\0\0\0\0";
    for (i, chunk) in name.chunks(4).enumerate() {
        w[12 + i] = u32::from_le_bytes(chunk.try_into().expect("4 bytes"));
    }
    attr[1] = insns.as_ptr() as u64;
    attr[2] = license.as_ptr() as u64;
    attr[4] = log.as_mut_ptr() as u64;
    let r = bpf(BPF_PROG_LOAD, &mut attr);
    if r < 0 {
        let source = std::io::Error::last_os_error();
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        return Err(XdpError::Verifier {
            source,
            log: String::from_utf8_lossy(&log[..end]).trim().to_string(),
        });
    }
    fd_of(r, "loading the XDP program")
}

/// Attaches `prog` to interface `ifindex` through a BPF link: the
/// program stays attached while the returned descriptor is open, and the
/// kernel detaches it when the process ends, however it ends.
pub(crate) fn attach(prog: &OwnedFd, ifindex: u32) -> Result<OwnedFd, XdpError> {
    let mut attr = [0u64; 16];
    let w = words(&mut attr);
    w[..4].copy_from_slice(&[prog.as_raw_fd() as u32, ifindex, BPF_XDP, 0]);
    fd_of(
        bpf(BPF_LINK_CREATE, &mut attr),
        "attaching the XDP program (a BPF link)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_branch_lands_on_the_final_pass() {
        let p = program(7, Ipv4Addr::new(198, 18, 0, 1), &(40000..=40003));
        assert_eq!(p.len(), 26);
        for (i, ins) in p.iter().enumerate() {
            if matches!(ins.code, 0x2d | 0x55 | 0x56 | 0xa5 | 0x25) {
                assert_eq!(i as i16 + 1 + ins.off, 24, "insn {i}");
            }
        }
        assert_eq!((p[16].imm, p[17].imm), (40000, 40003));
        assert_eq!(p[13].imm.to_le_bytes(), [198, 18, 0, 1]);
        assert_eq!((p[19].code, p[19].regs, p[19].imm), (0x18, 0x11, 7));
    }
}
