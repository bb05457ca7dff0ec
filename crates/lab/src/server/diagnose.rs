//! Why a server failed, when the cause is in its environment rather than
//! in what the client saw: a full disk shows to the client as a reset
//! connection, and only the server's log (or the file system) says why.
//! Generic over kinds: each kind names its log ([`Server::server_log`]).

use super::Server;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// How much of the end of a log is searched.
const LOG_TAIL_BYTES: u64 = 256 * 1024;

/// What servers write into their logs when their disk is full:
/// `strerror(ENOSPC)` (nginx, MariaDB's `Errcode: 28`, PostgreSQL's WAL
/// writes), PostgreSQL's hint after a short write (`could not extend file
/// ...: wrote only 4096 of 8192 bytes`, no errno), MariaDB's own words.
const NO_SPACE: [&str; 3] = [
    "No space left on device",
    "Check free disk space",
    "Disk is full",
];

/// `no space left on device on DIR (from LOG)` when the last 256 KiB of
/// the server's log say so (`No space left on device`, PostgreSQL's `Check
/// free disk space`, MariaDB's `Disk is full`), or `... (the file system is
/// full)` when its directory has no free block left; `None` otherwise, or
/// when the kind keeps no log here.
pub fn disk_full(target: &dyn Server) -> Option<String> {
    let log = target.server_log()?;
    let dir = log.parent()?;
    let name = log.file_name()?.to_string_lossy().into_owned();
    if log_tail_mentions(&log, &NO_SPACE) {
        return Some(format!(
            "no space left on device on {} (from {name})",
            dir.display()
        ));
    }
    (free_blocks(dir) == Some(0)).then(|| {
        format!(
            "no space left on device on {} (the file system is full)",
            dir.display()
        )
    })
}

/// Whether the last [`LOG_TAIL_BYTES`] of `log` contain any of `needles`.
fn log_tail_mentions(log: &Path, needles: &[&str]) -> bool {
    let Ok(mut f) = std::fs::File::open(log) else {
        return false;
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if f.seek(SeekFrom::Start(len.saturating_sub(LOG_TAIL_BYTES)))
        .is_err()
    {
        return false;
    }
    let mut bytes = Vec::new();
    if f.read_to_end(&mut bytes).is_err() {
        return false;
    }
    let text = String::from_utf8_lossy(&bytes);
    needles.iter().any(|n| text.contains(n))
}

/// Blocks free to unprivileged users on the file system holding `dir`.
fn free_blocks(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statvfs is a valid value for the call to fill.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a valid out-pointer.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    (rc == 0).then_some(st.f_bavail as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_line_is_found_at_the_end_of_a_long_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let mut text = "LOG:  checkpoint\n".repeat(50_000);
        text.push_str(
            "PANIC:  could not write to file \"pg_wal/xlogtemp.79\": No space left on device\n",
        );
        std::fs::write(&log, text).unwrap();
        assert!(log_tail_mentions(&log, &NO_SPACE));
        // PostgreSQL's short write names no errno, only its hint.
        std::fs::write(
            &log,
            "ERROR:  could not extend file \"base/5/16390\": wrote only 4096 of 8192 bytes at block 3298\n\
             HINT:  Check free disk space.\n",
        )
        .unwrap();
        assert!(log_tail_mentions(&log, &NO_SPACE));
        std::fs::write(&log, "LOG:  database system is ready\n").unwrap();
        assert!(!log_tail_mentions(&log, &NO_SPACE));
        assert!(!log_tail_mentions(
            &dir.path().join("absent.log"),
            &NO_SPACE
        ));
    }

    #[test]
    fn a_directory_with_room_has_free_blocks() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_blocks(dir.path()).is_some_and(|n| n > 0));
        assert_eq!(free_blocks(&dir.path().join("absent")), None);
    }
}
