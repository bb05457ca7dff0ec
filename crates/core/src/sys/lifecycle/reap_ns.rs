//! Removing a named network namespace from the watchdog, after scalelab
//! died: SIGKILL every process still inside it, then do what
//! `ip netns del` does (detach the bind mount under `/run/netns` that keeps
//! the namespace alive, unlink the name). The kernel frees the namespace,
//! with its veths and nftables tables, once nothing holds it.
//!
//! Runs in the forked watchdog, so only raw, async-signal-safe system calls
//! on stack buffers: `stat`, `open`, `getdents64`, `kill`, `umount2`,
//! `unlink`. A process is inside when its `/proc/PID/ns/net` is the same
//! nsfs inode as the namespace's file (proc(5), "/proc/pid/ns/").

use crate::owned::raw::sleep_ms;
use crate::procfs::pid;
use std::ffi::CStr;

/// Kills what runs inside the namespace named by `path`, then removes the
/// name. A path that is not there (not made yet, or gone) is passed over.
///
/// # Safety
/// Call only with raw system calls allowed (the watchdog's forked child).
pub(super) unsafe fn remove(path: &CStr) {
    let mut ns: libc::stat = std::mem::zeroed();
    if libc::stat(path.as_ptr(), &mut ns) == 0 {
        // Processes can fork while we kill: go round until none is found.
        for _ in 0..50 {
            if kill_inside(ns.st_dev, ns.st_ino) == 0 {
                break;
            }
            sleep_ms(20);
        }
    }
    libc::umount2(path.as_ptr(), libc::MNT_DETACH);
    libc::unlink(path.as_ptr());
}

/// SIGKILLs every process whose network namespace is the inode
/// (`dev`, `ino`); returns how many it found.
unsafe fn kill_inside(dev: libc::dev_t, ino: libc::ino_t) -> usize {
    let proc_dir = libc::open(pid::PROC_DIR.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
    if proc_dir < 0 {
        return 0;
    }
    let mut found = 0;
    let mut buf = [0u8; 8192];
    loop {
        let n = libc::syscall(libc::SYS_getdents64, proc_dir, buf.as_mut_ptr(), buf.len());
        if n <= 0 {
            break;
        }
        let mut at = 0usize;
        while at < n as usize {
            // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name.
            let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
            let name = &buf[at + 19..at + reclen];
            if let Some(pid) = pid_of(name) {
                if in_namespace(pid, dev, ino) {
                    libc::kill(pid, libc::SIGKILL);
                    found += 1;
                }
            }
            at += reclen;
        }
    }
    libc::close(proc_dir);
    found
}

/// The PID a `/proc` entry's NUL-terminated name spells, if it is one.
fn pid_of(name: &[u8]) -> Option<libc::pid_t> {
    let digits = &name[..name.iter().position(|&b| b == 0)?];
    if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        digits
            .iter()
            .fold(0, |p, &d| p * 10 + libc::pid_t::from(d - b'0')),
    )
}

/// Whether `/proc/PID/ns/net` is the inode (`dev`, `ino`).
unsafe fn in_namespace(pid: libc::pid_t, dev: libc::dev_t, ino: libc::ino_t) -> bool {
    // "/proc/" + up to 9 digits + "/ns/net" + NUL fits in 32 bytes.
    let mut path = [0u8; 32];
    let mut len = 0;
    for &b in pid::PID_PREFIX {
        path[len] = b;
        len += 1;
    }
    let mut digits = [0u8; 10];
    let (mut d, mut p) = (0, pid);
    loop {
        digits[d] = b'0' + (p % 10) as u8;
        d += 1;
        p /= 10;
        if p == 0 {
            break;
        }
    }
    while d > 0 {
        d -= 1;
        path[len] = digits[d];
        len += 1;
    }
    for &b in pid::NETNS_SUFFIX {
        path[len] = b;
        len += 1;
    }
    let mut st: libc::stat = std::mem::zeroed();
    libc::stat(path.as_ptr().cast(), &mut st) == 0 && st.st_dev == dev && st.st_ino == ino
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_names_that_are_pids() {
        assert_eq!(pid_of(b"1234\0"), Some(1234));
        assert_eq!(pid_of(b"self\0"), None);
        assert_eq!(pid_of(b"\0"), None);
        assert_eq!(pid_of(b"12a\0"), None);
    }

    #[test]
    fn our_own_namespace_is_found_by_inode() {
        // SAFETY: a zeroed `stat` is a valid value; stat fills the struct we
        // own from a NUL-terminated literal path.
        let me = unsafe {
            let mut me: libc::stat = std::mem::zeroed();
            let path = std::ffi::CString::new(crate::procfs::me::THREAD_NETNS).unwrap();
            assert_eq!(libc::stat(path.as_ptr(), &mut me), 0);
            me
        };
        let pid = std::process::id() as libc::pid_t;
        // SAFETY: only stat, on a path built in a stack buffer.
        let (same, other) = unsafe {
            (
                in_namespace(pid, me.st_dev, me.st_ino),
                in_namespace(pid, me.st_dev, me.st_ino + 1),
            )
        };
        assert!(same && !other);
    }
}
