//! Raw, async-signal-safe system calls for processes forked without exec
//! from a multithreaded scalelab (the reaper, the servers' watchdogs):
//! between `fork` and `_exit` they may not allocate or take a lock, since a
//! lock may be held by a thread that does not exist in the child. Each
//! function here is only `open`/`read`/`close`/`dup2`/`getdents64`/... on
//! memory prepared before the fork or on the stack.

use std::ffi::CStr;

/// Makes the forked child independent of scalelab's terminal and
/// descriptors: its own session (a terminal's Ctrl-C never reaches it),
/// the usual termination signals ignored, `keep` moved to descriptor 3,
/// every other descriptor closed, and stdin/stdout/stderr on `/dev/null`
/// (so no caller reading scalelab's output to EOF waits for it).
///
/// # Safety
/// Call only in a forked child, before it runs anything else.
pub(crate) unsafe fn detach(keep: libc::c_int) {
    libc::setsid();
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        libc::signal(sig, libc::SIG_IGN);
    }
    libc::dup2(keep, 3);
    close_from(4);
    let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
    if null >= 0 {
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
        if null > 3 {
            libc::close(null);
        }
    }
}

/// Closes every fd from `first` up (close_range, or a loop on old kernels).
unsafe fn close_from(first: libc::c_int) {
    if libc::syscall(
        libc::SYS_close_range,
        first as libc::c_uint,
        libc::c_uint::MAX,
        0,
    ) != 0
    {
        for fd in first..65536 {
            libc::close(fd);
        }
    }
}

/// Reads one byte from descriptor 3, retrying on EINTR: 1 when a byte
/// came, 0 at end-of-file, -1 on error.
///
/// # Safety
/// Raw `read` into `buf`.
pub(crate) unsafe fn read_fd3(buf: &mut [u8]) -> isize {
    loop {
        let n = libc::read(3, buf.as_mut_ptr().cast(), buf.len());
        if n >= 0 || *libc::__errno_location() != libc::EINTR {
            return n;
        }
    }
}

/// Sleeps `ms` milliseconds (raw `nanosleep`; under one second).
///
/// # Safety
/// Raw `nanosleep`.
pub(crate) unsafe fn sleep_ms(ms: libc::c_long) {
    let ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: ms * 1_000_000,
    };
    libc::nanosleep(&ts, std::ptr::null_mut());
}

/// How deep [`remove_tree`] descends; scalelab's directories are shallow
/// (a run directory's `html/`, `tmp/`), deeper ones go at the next run.
const MAX_DEPTH: usize = 8;

/// Removes `path` and everything under it (without following symlinks),
/// as `rm -rf` does, with raw `openat`/`getdents64`/`unlinkat`.
///
/// # Safety
/// Raw system calls only; `path` is NUL-terminated.
pub(crate) unsafe fn remove_tree(path: &CStr) {
    remove_at(libc::AT_FDCWD, path.as_ptr(), 0);
}

/// Removes `name` relative to directory `dirfd`: a file, or a directory
/// after its contents.
unsafe fn remove_at(dirfd: libc::c_int, name: *const libc::c_char, depth: usize) {
    if libc::unlinkat(dirfd, name, 0) == 0 {
        return;
    }
    let errno = *libc::__errno_location();
    if errno != libc::EISDIR && errno != libc::EPERM {
        return;
    }
    let fd = libc::openat(
        dirfd,
        name,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
    );
    if fd < 0 {
        return;
    }
    if depth < MAX_DEPTH {
        // Removing entries while reading the directory may skip some: go
        // round again until a pass removes nothing.
        while empty_dir(fd, depth) > 0 {
            libc::lseek(fd, 0, libc::SEEK_SET);
        }
    }
    libc::close(fd);
    libc::unlinkat(dirfd, name, libc::AT_REMOVEDIR);
}

/// One pass over directory `fd`, removing each entry; returns how many
/// entries it saw (other than `.` and `..`).
unsafe fn empty_dir(fd: libc::c_int, depth: usize) -> usize {
    let mut buf = [0u8; 2048];
    let mut seen = 0;
    loop {
        let n = libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len());
        if n <= 0 {
            return seen;
        }
        let mut at = 0usize;
        while at < n as usize {
            // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name.
            let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
            let name = &buf[at + 19..at + reclen];
            if name[0] != 0 && !name.starts_with(b".\0") && !name.starts_with(b"..\0") {
                remove_at(fd, name.as_ptr().cast(), depth + 1);
                seen += 1;
            }
            at += reclen;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remove_tree_removes_nested_files_and_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("scalelab-1-x");
        std::fs::create_dir_all(top.join("a/b/c")).unwrap();
        for i in 0..300 {
            // More entries than one getdents64 buffer holds.
            std::fs::write(top.join(format!("a/file-with-a-long-name-{i:04}")), "x").unwrap();
        }
        std::fs::write(top.join("a/b/c/deep"), "x").unwrap();
        std::os::unix::fs::symlink(tmp.path(), top.join("link")).unwrap();
        let keep = tmp.path().join("kept");
        std::fs::write(&keep, "x").unwrap();
        let c = std::ffi::CString::new(top.to_str().unwrap()).unwrap();
        // SAFETY: raw calls on a NUL-terminated path we own.
        unsafe { remove_tree(&c) };
        assert!(!top.exists(), "{} is left", top.display());
        assert!(keep.exists(), "the symlink was followed");
    }
}
