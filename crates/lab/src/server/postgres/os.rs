//! Operating-system chores for a managed PostgreSQL: the server user,
//! directory ownership, finding the server's processes by PID, and
//! dropping the cluster from the page cache.

use crate::server::ServerError;
use crate::sys::process;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The account PostgreSQL runs as. PostgreSQL refuses to run as root, so
/// as root the server runs as `postgres`; otherwise as the current user.
#[derive(Clone, Debug)]
pub struct ServerUser {
    /// `Some((uid, gid))` when commands must switch to `postgres`.
    switch_to: Option<(u32, u32)>,
}

impl ServerUser {
    pub fn detect() -> Result<Self, ServerError> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Ok(ServerUser { switch_to: None });
        }
        lookup_user("postgres")
            .map(|ids| ServerUser {
                switch_to: Some(ids),
            })
            .ok_or_else(|| ServerError::Missing {
                kind: "postgres",
                message: "there is no `postgres` user to run the server as (PostgreSQL refuses \
                          to run as root)"
                    .into(),
            })
    }

    /// A command that runs `program` as the server user.
    pub fn command(&self, program: &Path) -> Command {
        match self.switch_to {
            Some(_) => {
                let mut c = Command::new("runuser");
                c.args(["-u", "postgres", "--"]).arg(program);
                c
            }
            None => Command::new(program),
        }
    }

    /// The (uid, gid) a server process switches to before exec, if any
    /// (see `ServerProcess::spawn_as`): no wrapper process, so the server
    /// binary itself is scalelab's direct child.
    pub fn ids(&self) -> Option<(u32, u32)> {
        self.switch_to
    }

    /// Gives `path` to the server user (a no-op when not switching).
    pub fn own(&self, path: &Path) -> Result<(), ServerError> {
        if let Some((uid, gid)) = self.switch_to {
            std::os::unix::fs::chown(path, Some(uid), Some(gid))
                .map_err(|e| ServerError::io(path, e))?;
        }
        Ok(())
    }

    /// Checks the server user can write in `dir`, naming the fix if not.
    pub fn check_writable(&self, dir: &Path) -> Result<(), ServerError> {
        if self.switch_to.is_none() {
            return Ok(());
        }
        let ok = self
            .command(Path::new("test"))
            .arg("-w")
            .arg(dir)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if ok {
            return Ok(());
        }
        Err(ServerError::Start {
            kind: "postgres",
            message: format!(
                "the postgres user cannot reach {}: a directory above it is not traversable \
                 (e.g. mode 0700 and owned by root). Use a base directory postgres can \
                 traverse, such as one under /tmp or /var/tmp, or `chmod o+x` the parents",
                dir.display()
            ),
        })
    }
}

fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let cname = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam returns static storage or null; fields are copied
    // out at once.
    unsafe {
        let pw = libc::getpwnam(cname.as_ptr());
        if pw.is_null() {
            None
        } else {
            Some(((*pw).pw_uid, (*pw).pw_gid))
        }
    }
}

/// Adds search (execute) permission for others to `dir`, so the server user
/// can pass through it without being able to list it.
pub fn make_traversable(dir: &Path) -> Result<(), ServerError> {
    let meta = std::fs::metadata(dir).map_err(|e| ServerError::io(dir, e))?;
    let mode = meta.permissions().mode();
    if mode & 0o001 == 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o001))
            .map_err(|e| ServerError::io(dir, e))?;
    }
    Ok(())
}

/// The postmaster PID from `DATA/postmaster.pid`.
pub fn postmaster_pid(data: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    text.lines().next()?.trim().parse().ok()
}

/// Removes `DATA/postmaster.pid` when no PostgreSQL process works in
/// `data`: a lock file left by a server killed with its scalelab. PostgreSQL
/// itself refuses to start over a lock file whose PID is alive, and after a
/// `kill -9` that PID may already belong to another process. With no server
/// process in the data directory, the file locks nothing (PostgreSQL's own
/// documentation allows removing it then).
pub fn remove_stale_lock(data: &Path) {
    let lock = data.join("postmaster.pid");
    if !lock.exists() {
        return;
    }
    let running = processes_in(data).into_iter().any(is_server_process);
    if !running {
        let _ = std::fs::remove_file(&lock);
    }
}

/// The socket directory recorded in `DATA/postmaster.pid` (line 5).
pub fn postmaster_socket_dir(data: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    let dir = text.lines().nth(4)?.trim();
    (!dir.is_empty()).then(|| PathBuf::from(dir))
}

/// Processes whose working directory is `dir`. Every PostgreSQL process
/// changes into its data directory, so this finds a server's processes
/// exactly, even after the postmaster is gone and they were re-parented.
pub fn processes_in(dir: &Path) -> Vec<u32> {
    let Ok(target) = dir.canonicalize() else {
        return Vec::new();
    };
    (crate::procfs::sockets::all_pids().into_iter())
        .filter(|&pid| crate::procfs::pid::cwd(pid).ok().as_deref() == Some(target.as_path()))
        .collect()
}

/// Whether `pid` is a live PostgreSQL server process (by its command name).
/// A zombie is not: a postmaster killed with its scalelab is re-parented to
/// an init that may reap it late, and until then its PID still answers
/// `kill(pid, 0)` and would keep its lock file looking alive.
pub fn is_server_process(pid: u32) -> bool {
    let named = crate::procfs::pid::comm(pid).is_ok_and(|c| c.trim() == "postgres");
    named && !crate::procfs::pid::is_zombie(pid)
}

/// Ends every server process working in `data`: the postmaster from
/// `postmaster.pid` with a fast shutdown (SIGINT, then SIGKILL), then any
/// orphaned backends, which get 5 s to notice and exit on their own.
pub fn stop_server_processes(data: &Path) {
    if let Some(pid) = postmaster_pid(data).filter(|&p| is_server_process(p)) {
        process::stop_pid(pid, libc::SIGINT, Duration::from_secs(10));
    }
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<u32> = processes_in(data)
            .into_iter()
            .filter(|&p| is_server_process(p))
            .collect();
        if left.is_empty() {
            return;
        }
        if Instant::now() >= end {
            for pid in left {
                process::stop_pid(pid, libc::SIGKILL, Duration::from_secs(2));
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Drops the cluster's files (`data`) from the page cache before a start
/// under a memory limit: pages cached by an earlier server (another run's,
/// whose cgroup is gone) are charged to no limit, and the server would read
/// them for free (see [`crate::sys::page_cache`]). The server then starts
/// with a cold cache every time, and what it caches counts against its
/// own limit.
pub fn drop_cached(data: &Path) -> Result<(), ServerError> {
    crate::sys::page_cache::evict_dir(data)
        .map(|_| ())
        .map_err(|e| ServerError::io(&e.path, e.source))
}

/// The newest `/usr/lib/postgresql/<major>/bin` that has a `postgres`.
pub fn newest_bin_dir() -> Option<PathBuf> {
    let entries = std::fs::read_dir("/usr/lib/postgresql").ok()?;
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let major: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").exists().then_some((major, bin))
        })
        .max_by_key(|(major, _)| *major)
        .map(|(_, bin)| bin)
}

/// FNV-1a: a small hash that is stable across builds (std's hasher is not
/// guaranteed to be), used to name dataset directories.
pub fn stable_hash(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_processes_by_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new("sleep")
            .arg("30")
            .current_dir(dir.path())
            .spawn()
            .unwrap();
        let found = processes_in(dir.path());
        crate::sys::process::stop_pid(child.id(), libc::SIGKILL, std::time::Duration::from_secs(2));
        let _ = child.wait();
        assert_eq!(found, vec![child.id()]);
        assert!(processes_in(dir.path()).is_empty());
    }

    #[test]
    fn stable_hash_is_stable() {
        assert_eq!(stable_hash(&["a", "b"]), stable_hash(&["a", "b"]));
        assert_ne!(stable_hash(&["ab", ""]), stable_hash(&["a", "b"]));
        assert_eq!(stable_hash(&[]), 0xcbf2_9ce4_8422_2325);
    }
}

#[cfg(test)]
mod zombie_tests {
    use super::*;
    use crate::procfs::pid::is_zombie;

    #[test]
    fn an_unreaped_child_is_a_zombie_not_a_server() {
        let child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        std::thread::sleep(Duration::from_millis(200));
        assert!(is_zombie(pid), "an exited, unreaped child is a zombie");
        assert!(!is_zombie(std::process::id()));
        assert!(!is_server_process(pid));
        drop(child);
    }
}
