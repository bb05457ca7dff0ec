//! Paths and cgroups scalelab owns: named after their owner, removed when
//! the owner dies however it dies, and reclaimed by the next run if that
//! failed.
//!
//! Every directory or cgroup scalelab makes is called
//! `<prefix><owner PID>-<rest>` ([`OwnedDir::create`], and the placement's
//! cgroups `scalelab-<PID>-<n>`). Three things then keep `kill -9` from
//! leaving them behind:
//!
//! 1. **The reaper.** The first thing an owner registers forks one small
//!    process (the `reaper` module) that waits on a pipe only scalelab writes to.
//!    Each registered path, cgroup or command goes down the pipe as it is
//!    made, and its removal as it is cleaned up normally; when the pipe
//!    reads end-of-file (scalelab is gone) the reaper stops the ssh masters
//!    (`ssh -O exit`), writes back the system settings `run --tune`
//!    changed and wakes what it paused, removes the directories, and removes the cgroups
//!    (retrying while the server's own watchdog empties them), then exits.
//! 2. **Reclaim.** [`reclaim_stale`] removes the entries of a directory
//!    whose name is `<prefix><PID>-...` and whose owner is dead, for when
//!    the reaper itself could not finish (the machine rebooted, a cgroup
//!    stayed busy). `runner::reclaim_leftovers` calls it for every kind at
//!    the start of each run.
//! 3. **Only ours.** Nothing is ever removed by a broad pattern: the exact
//!    prefix of one kind, then a PID that is not alive ([`owner_alive`]).
//!
//! PID reuse: a PID is recycled once its process is gone, so a live process
//! with the owner's PID may be a stranger. [`owner_alive`] treats the owner
//! as alive only if that process started before the entry was last
//! modified (the owner made the entry, so it started first). A stranger
//! that started within a couple of seconds of the entry's last change is
//! still taken for the owner: the entry is then kept, never wrongly
//! removed, and goes at a later run.

pub(crate) mod raw;
mod reaper;

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How a registered entry is removed when its owner dies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// A directory and everything in it.
    Tree,
    /// A cgroup directory (`rmdir`, retried while busy).
    Cgroup,
    /// A command to run (its argv, absolute program path first): an
    /// `ssh -O exit` that stops a control master.
    Command,
    /// A system setting to put back: the words are a file and the value
    /// the reaper writes back into it (`run --tune`'s changes).
    Restore,
    /// A stopped process to wake: the word is its PID, sent `SIGCONT`
    /// (`run --tune`'s paused irqbalance).
    Resume,
}

/// `<prefix><our PID>-`: the start of the name of everything of one kind
/// this process makes.
pub fn owned_prefix(prefix: &str) -> String {
    format!("{prefix}{}-", std::process::id())
}

/// The owner PID in `name` if it is `<prefix><PID>` or `<prefix><PID>-...`.
pub fn owner_of(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let digits = rest.split_once('-').map_or(rest, |(pid, _)| pid);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Whether the owner `pid` of an entry last modified at `modified` is
/// alive: the process exists, is no zombie, and started before the entry
/// changed (a later start means the PID was reused; see the module doc).
pub fn owner_alive(pid: u32, modified: SystemTime) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let Some(ticks) = crate::procfs::pid::start_ticks(pid) else {
        return false;
    };
    match crate::procfs::pid::started_at(ticks) {
        // The boot time is whole seconds: allow that much and a tick.
        Some(start) => start <= modified + Duration::from_secs(2),
        // Unknown start: alive, to be safe.
        None => true,
    }
}

/// Removes the entries `dir/<prefix><PID>[-...]` whose owner is dead with
/// `remove`, and returns those removed. Others' entries, live owners'
/// entries and names that do not fit are left alone.
pub fn reclaim_stale(
    dir: &Path,
    prefix: &str,
    mut remove: impl FnMut(&Path) -> io::Result<()>,
) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| owner_of(n, prefix)) else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let modified = meta.modified().unwrap_or(SystemTime::now());
        if !owner_alive(pid, modified) && remove(&entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed
}

/// [`reclaim_stale`]'s removal for a directory tree.
pub fn remove_tree(path: &Path) -> io::Result<()> {
    std::fs::remove_dir_all(path)
}

/// [`reclaim_stale`]'s removal for a cgroup: `rmdir`, which fails while a
/// process is still inside (that cgroup is then kept).
pub fn remove_cgroup(path: &Path) -> io::Result<()> {
    std::fs::remove_dir(path)
}

/// Tells the reaper to remove `what` if this process dies before
/// [`forget`] is called for it. Best effort: an entry the reaper cannot
/// take (no reaper could be forked, too long a path) is left to the next
/// run's [`reclaim_stale`], and a warning says so.
pub fn register(removal: Removal, what: &[&std::ffi::OsStr]) {
    if let Err(e) = reaper::send(reaper::Op::Add, removal, what) {
        let words: Vec<String> = what.iter().map(|w| w.to_string_lossy().into()).collect();
        eprintln!(
            "scalelab: warning: `{}` is not guarded against a kill of scalelab \
             (the next run reclaims it): {e}",
            words.join(" ")
        );
    }
}

/// Tells the reaper that `what` (as registered) was cleaned up normally.
pub fn forget(removal: Removal, what: &[&std::ffi::OsStr]) {
    let _ = reaper::send(reaper::Op::Remove, removal, what);
}

/// The reaper's PID, if one was started.
pub fn reaper_pid() -> Option<u32> {
    reaper::pid()
}

/// A directory `base/<prefix><our PID>-<random>`, registered with the
/// reaper; removed (and forgotten) when dropped.
#[derive(Debug)]
pub struct OwnedDir {
    dir: Option<tempfile::TempDir>,
}

impl OwnedDir {
    /// Creates the directory (and `base`), after reclaiming the same
    /// kind's directories of dead owners in `base`.
    pub fn create(base: &Path, prefix: &str) -> io::Result<OwnedDir> {
        std::fs::create_dir_all(base)?;
        reclaim_stale(base, prefix, remove_tree);
        let dir = tempfile::Builder::new()
            .prefix(&owned_prefix(prefix))
            .tempdir_in(base)?;
        register(Removal::Tree, &[dir.path().as_os_str()]);
        Ok(OwnedDir { dir: Some(dir) })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.as_ref().expect("present until dropped").path()
    }
}

impl Drop for OwnedDir {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let path = dir.path().to_path_buf();
            let _ = dir.close();
            forget(Removal::Tree, &[path.as_os_str()]);
        }
    }
}

#[cfg(test)]
mod tests;
