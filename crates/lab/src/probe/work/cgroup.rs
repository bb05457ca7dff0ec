//! The server's cgroup as perf counts it: the unified (v2) hierarchy's
//! cgroup of its root process, and that cgroup's `cpu.stat`.

use crate::procfs::mounts::{parse_mountinfo, parse_proc_cgroup, Membership, Mount};
use crate::procfs::{me, pid};
use std::path::PathBuf;

/// A server's cgroup in the unified hierarchy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerCgroup {
    /// Its path as `/proc/PID/cgroup` names it (`/scalelab-…-server-0`).
    pub path: String,
    /// Its directory under the unified mount.
    pub dir: PathBuf,
}

impl ServerCgroup {
    /// The cgroup of process `root_pid`, or why it cannot be counted.
    pub fn of(root_pid: u32) -> Result<ServerCgroup, String> {
        let membership = pid::cgroup(root_pid)
            .map_err(|e| format!("cannot read the server's cgroup (process {root_pid}): {e}"))?;
        let mounts = me::mountinfo().map_err(|e| format!("cannot read the mount table: {e}"))?;
        locate(&parse_mountinfo(&mounts), &parse_proc_cgroup(&membership))
    }

    /// The cgroup's `cpu.stat`, or `None` when it cannot be read.
    pub fn cpu_stat(&self) -> Option<CpuStat> {
        let text = std::fs::read_to_string(self.dir.join("cpu.stat")).ok()?;
        parse_cpu_stat(&text)
    }
}

/// Where perf counts a process of `membership`: its v2 cgroup under the
/// unified mount. A v1 `perf_event` hierarchy takes perf's cgroup events
/// instead, and the root cgroup holds every process: neither is the
/// server's own.
pub fn locate(mounts: &[Mount], membership: &[Membership]) -> Result<ServerCgroup, String> {
    if let Some(m) = mounts
        .iter()
        .find(|m| m.fstype == "cgroup" && m.super_options.iter().any(|o| o == "perf_event"))
    {
        return Err(format!(
            "the perf_event controller is the v1 hierarchy at {}, where the server has no cgroup of its own",
            m.mount_point.display()
        ));
    }
    let path = membership
        .iter()
        .find(|c| c.hierarchy_id == 0)
        .map(|c| c.path.clone())
        .ok_or("the server is in no cgroup of the unified (v2) hierarchy")?;
    if path == "/" {
        return Err("the server is in the root cgroup, shared with every process: no cgroup of its own to count".into());
    }
    let mount = mounts
        .iter()
        .find(|m| m.fstype == "cgroup2" && path.starts_with(&m.root))
        .ok_or("no unified (cgroup2) hierarchy is mounted")?;
    let relative = path
        .strip_prefix(mount.root.as_str())
        .unwrap_or(&path)
        .trim_start_matches('/');
    Ok(ServerCgroup {
        dir: mount.mount_point.join(relative),
        path,
    })
}

/// The CPU time fields of a v2 `cpu.stat`, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuStat {
    /// `user_usec`.
    pub user_usec: u64,
    /// `system_usec`.
    pub system_usec: u64,
}

impl CpuStat {
    /// The growth from `start`.
    pub fn since(self, start: CpuStat) -> CpuStat {
        CpuStat {
            user_usec: self.user_usec.saturating_sub(start.user_usec),
            system_usec: self.system_usec.saturating_sub(start.system_usec),
        }
    }

    /// User seconds.
    pub fn user_s(self) -> f64 {
        self.user_usec as f64 / 1e6
    }

    /// System seconds.
    pub fn system_s(self) -> f64 {
        self.system_usec as f64 / 1e6
    }
}

/// Parses `cpu.stat` (`usage_usec N`, `user_usec N`, `system_usec N`,
/// ...); `None` without both fields.
pub fn parse_cpu_stat(text: &str) -> Option<CpuStat> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == name).then(|| v.trim().parse().ok()).flatten()
        })
    };
    Some(CpuStat {
        user_usec: field("user_usec")?,
        system_usec: field("system_usec")?,
    })
}
