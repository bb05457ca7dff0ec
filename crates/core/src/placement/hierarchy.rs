//! Finding the cgroup hierarchy that serves a controller: v1 (a mount per
//! controller) or v2 (the unified mount), from `/proc/self/mountinfo` and
//! `/proc/self/cgroup` (which [`crate::procfs::mounts`] parses). Pure,
//! but for [`locate_here`], which reads them.
//!
//! Where scalelab's cgroups go:
//! - v1: under the cgroup this process is already in, in that controller's
//!   hierarchy, so limits set by whatever runs scalelab still apply to the
//!   server (v1 allows processes in non-leaf cgroups).
//! - v2: directly under the top of the unified mount. A non-root v2 cgroup
//!   that holds processes cannot hand controllers to children (the
//!   "no internal processes" rule), and scalelab's own cgroup holds scalelab.

use super::PlacementError;
use crate::procfs::me;
pub use crate::procfs::mounts::{parse_mountinfo, parse_proc_cgroup, Membership, Mount};
use std::path::{Path, PathBuf};

/// The cgroup version of a hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Version {
    /// Legacy: one mount per controller (or group of controllers), with
    /// processes allowed in any cgroup.
    V1,
    /// Unified: one mount for every controller; only leaves hold processes.
    V2,
}

/// The controllers scalelab uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Controller {
    /// `memory`: the `server_memory` limit (and swap off for the cgroup).
    Memory,
    /// `cpuset`: the `server_cpus` pinning the server cannot widen.
    Cpuset,
}

impl Controller {
    /// The controller's name as the kernel spells it in mount options,
    /// `/proc/<pid>/cgroup` and `cgroup.controllers`.
    pub fn name(self) -> &'static str {
        match self {
            Controller::Memory => "memory",
            Controller::Cpuset => "cpuset",
        }
    }
}

/// Where cgroups for one controller are created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hierarchy {
    /// Which cgroup version the hierarchy is: it decides the file names
    /// written (`memory.max` or `memory.limit_in_bytes`, ...).
    pub version: Version,
    /// The directory under which `scalelab-<name>` is created.
    pub parent: PathBuf,
}

/// Finds the hierarchy serving `controller`. `v2_controllers` reads a v2
/// mount's `cgroup.controllers` (injected so this stays testable).
pub fn locate(
    controller: Controller,
    mounts: &[Mount],
    membership: &[Membership],
    v2_controllers: impl Fn(&Path) -> Option<String>,
) -> Option<Hierarchy> {
    let name = controller.name();
    let v1 = mounts
        .iter()
        .find(|m| m.fstype == "cgroup" && m.super_options.iter().any(|o| o == name));
    if let Some(m) = v1 {
        let own = membership
            .iter()
            .find(|c| c.controllers.iter().any(|n| n == name))
            .map(|c| c.path.as_str())
            .unwrap_or("/");
        return Some(Hierarchy {
            version: Version::V1,
            parent: under_mount(m, own),
        });
    }
    mounts
        .iter()
        .filter(|m| m.fstype == "cgroup2")
        .find(|m| {
            v2_controllers(&m.mount_point)
                .is_some_and(|list| list.split_whitespace().any(|c| c == name))
        })
        .map(|m| Hierarchy {
            version: Version::V2,
            parent: m.mount_point.clone(),
        })
}

/// A hierarchy where scalelab can make a cgroup only to keep track of a
/// server's processes (no controller needed): the unified (v2) mount if
/// there is one, else a v1 hierarchy (`pids` first), under our own cgroup.
pub fn locate_tracking(mounts: &[Mount], membership: &[Membership]) -> Vec<Hierarchy> {
    let v2 = mounts
        .iter()
        .filter(|m| m.fstype == "cgroup2")
        .map(|m| Hierarchy {
            version: Version::V2,
            parent: m.mount_point.clone(),
        });
    let rank = |m: &Mount| !m.super_options.iter().any(|o| o == "pids");
    let mut v1: Vec<&Mount> = mounts.iter().filter(|m| m.fstype == "cgroup").collect();
    v1.sort_by_key(|m| rank(m));
    let v1 = v1.into_iter().filter_map(|m| {
        let own = membership.iter().find(|c| {
            c.controllers
                .iter()
                .any(|n| m.super_options.iter().any(|o| o == n))
        })?;
        Some(Hierarchy {
            version: Version::V1,
            parent: under_mount(m, &own.path),
        })
    });
    v2.chain(v1).collect()
}

/// [`locate_tracking`] for this machine.
pub fn locate_tracking_here() -> Vec<Hierarchy> {
    let (Ok(mountinfo), Ok(membership)) = (mountinfo(), cgroup()) else {
        return Vec::new();
    };
    locate_tracking(
        &parse_mountinfo(&mountinfo),
        &parse_proc_cgroup(&membership),
    )
}

/// The directory of cgroup `path` inside mount `m` (whose root may be a
/// sub-cgroup, as in containers).
fn under_mount(m: &Mount, path: &str) -> PathBuf {
    let root = m.root.trim_end_matches('/');
    let rel = path
        .strip_prefix(root)
        .unwrap_or(path)
        .trim_start_matches('/');
    if rel.is_empty() {
        m.mount_point.clone()
    } else {
        m.mount_point.join(rel)
    }
}

/// Locates every controller on this machine, naming what is missing.
pub fn locate_here(controller: Controller) -> Result<Hierarchy, PlacementError> {
    let mountinfo = mountinfo()?;
    let membership = cgroup()?;
    locate(
        controller,
        &parse_mountinfo(&mountinfo),
        &parse_proc_cgroup(&membership),
        |mount| std::fs::read_to_string(mount.join("cgroup.controllers")).ok(),
    )
    .ok_or(PlacementError::ControllerMissing {
        controller: controller.name(),
    })
}

/// This process's `mountinfo`, or the error naming it.
fn mountinfo() -> Result<String, PlacementError> {
    me::mountinfo().map_err(|e| unreadable(me::MOUNTINFO, &e))
}

/// This process's `/proc/self/cgroup`, or the error naming it.
fn cgroup() -> Result<String, PlacementError> {
    me::cgroup().map_err(|e| unreadable(me::CGROUP, &e))
}

fn unreadable(path: &str, e: &std::io::Error) -> PlacementError {
    PlacementError::Cgroup {
        path: path.to_string(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured from this project's Debian 12 VM (cgroup v1, hybrid).
    const MOUNTINFO_V1: &str = "\
23 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const CGROUP_V1: &str = "\
4:memory:/process_api/0534
3:cpuset:/
0::/
";
    // A typical systemd machine with only the unified hierarchy.
    const MOUNTINFO_V2: &str =
        "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";

    #[test]
    fn v1_cgroups_nest_under_our_own() {
        let mounts = parse_mountinfo(MOUNTINFO_V1);
        let member = parse_proc_cgroup(CGROUP_V1);
        let mem = locate(Controller::Memory, &mounts, &member, |_| None).unwrap();
        assert_eq!(mem.version, Version::V1);
        assert_eq!(
            mem.parent,
            PathBuf::from("/sys/fs/cgroup/memory/process_api/0534")
        );
        let cpuset = locate(Controller::Cpuset, &mounts, &member, |_| None).unwrap();
        assert_eq!(cpuset.parent, PathBuf::from("/sys/fs/cgroup/cpuset"));
    }

    #[test]
    fn v2_is_found_by_its_controllers_file() {
        let mounts = parse_mountinfo(MOUNTINFO_V2);
        let member = parse_proc_cgroup("0::/user.slice/session-1.scope\n");
        let with = |_: &Path| Some("cpuset cpu io memory pids\n".to_string());
        let h = locate(Controller::Memory, &mounts, &member, with).unwrap();
        assert_eq!(h.version, Version::V2);
        assert_eq!(h.parent, PathBuf::from("/sys/fs/cgroup"));
        let without = |_: &Path| Some("cpu io pids\n".to_string());
        assert_eq!(locate(Controller::Cpuset, &mounts, &member, without), None);
    }

    #[test]
    fn a_missing_controller_is_none() {
        // The unified mount on the v1 machine has only hugetlb.
        let mounts = parse_mountinfo(MOUNTINFO_V1);
        let h = locate(Controller::Memory, &mounts[..2], &[], |_| {
            Some("hugetlb".into())
        });
        assert_eq!(h, None);
    }

    #[test]
    fn container_mount_roots_are_stripped() {
        let line = "50 40 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n";
        let mounts = parse_mountinfo(line);
        let member = parse_proc_cgroup("4:memory:/docker/abc\n");
        let h = locate(Controller::Memory, &mounts, &member, |_| None).unwrap();
        assert_eq!(h.parent, PathBuf::from("/sys/fs/cgroup/memory"));
    }

    #[test]
    fn tracking_prefers_the_unified_mount_then_v1_under_our_cgroup() {
        let mounts = parse_mountinfo(MOUNTINFO_V1);
        let member = parse_proc_cgroup(CGROUP_V1);
        let found = locate_tracking(&mounts, &member);
        assert_eq!(found[0].parent, PathBuf::from("/sys/fs/cgroup/unified"));
        assert_eq!(found[0].version, Version::V2);
        let v1: Vec<PathBuf> = found[1..].iter().map(|h| h.parent.clone()).collect();
        assert_eq!(
            v1,
            [
                PathBuf::from("/sys/fs/cgroup/cpuset"),
                PathBuf::from("/sys/fs/cgroup/memory/process_api/0534")
            ]
        );
    }
}
