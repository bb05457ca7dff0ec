//! This process's and this thread's own files: `/proc/self` (its
//! executable, its threads, its cgroups and mounts) and
//! `/proc/thread-self` (the calling thread's schedstat, network namespace
//! and that namespace's `net` tables).

use std::path::{Path, PathBuf};

/// This process's mount table (proc(5) `mountinfo`).
pub const MOUNTINFO: &str = "/proc/self/mountinfo";
/// This process's cgroup membership (`/proc/self/cgroup`).
pub const CGROUP: &str = "/proc/self/cgroup";
/// The calling thread's schedstat.
pub const THREAD_SCHEDSTAT: &str = "/proc/thread-self/schedstat";
/// The calling thread's network namespace file.
pub const THREAD_NETNS: &str = "/proc/thread-self/ns/net";
/// PID 1's network namespace file (the host's, unless `/proc/1` is hidden).
pub const INIT_NETNS: &str = "/proc/1/ns/net";

/// This process's [`MOUNTINFO`].
pub fn mountinfo() -> std::io::Result<String> {
    std::fs::read_to_string(MOUNTINFO)
}

/// This process's [`CGROUP`].
pub fn cgroup() -> std::io::Result<String> {
    std::fs::read_to_string(CGROUP)
}

/// The bytes of this process's own executable (`/proc/self/exe`).
pub fn exe() -> std::io::Result<Vec<u8>> {
    std::fs::read("/proc/self/exe")
}

/// Each thread of this process: `(tid, its /proc/self/task/TID directory)`;
/// empty when the directory cannot be read.
pub fn tasks() -> Vec<(u32, PathBuf)> {
    task_dirs(Path::new("/proc/self/task")).unwrap_or_default()
}

/// The numbered entries of a `task` directory.
pub(crate) fn task_dirs(dir: &Path) -> std::io::Result<Vec<(u32, PathBuf)>> {
    Ok(std::fs::read_dir(dir)?
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path())))
        .collect())
}

/// A table of the calling thread's network namespace
/// (`/proc/thread-self/net/FILE`: `snmp`, `netstat`, `dev`, `arp`).
pub fn thread_net(file: &str) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/thread-self/net/{file}"))
}
