//! The few questions about this process's files that need a system call:
//! whether standard output is a terminal and how wide it is, and whether a
//! path may be written (`access(2)`). The store and the report ask them
//! here, so that their crate holds no `unsafe`.

use std::path::Path;

/// Standard output's width in columns when it is a terminal (`None`: not a
/// terminal; `Some(None)`: a terminal whose width the kernel does not say).
pub fn stdout_width() -> Option<Option<u16>> {
    // SAFETY: isatty only reads the descriptor's state.
    if unsafe { libc::isatty(libc::STDOUT_FILENO) } != 1 {
        return None;
    }
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one winsize into the struct we own.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    Some((ok && ws.ws_col > 0).then_some(ws.ws_col))
}

/// Whether this process may write `path` (`access(2)`, so a read-only
/// mount counts even for root).
pub fn may_write(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_of_ours_may_be_written_and_a_missing_one_may_not() {
        let dir = tempfile::tempdir().unwrap();
        assert!(may_write(dir.path()));
        assert!(!may_write(&dir.path().join("missing")));
        assert!(!may_write(Path::new("bad\0path")));
    }
}
