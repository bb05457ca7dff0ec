//! The mounts of `/proc/self/mountinfo` and the cgroup membership of
//! `/proc/PID/cgroup`: pure parsers of their text ([`super::me`] reads
//! this process's), for `placement` to find its cgroup hierarchies.

use std::path::PathBuf;

/// One line of `/proc/self/mountinfo`, the fields scalelab needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// The root of the mount within its filesystem (for cgroups: the cgroup
    /// path that appears at the mount point).
    pub root: String,
    /// Where it is mounted in this process's mount namespace.
    pub mount_point: PathBuf,
    /// `cgroup` for a v1 hierarchy, `cgroup2` for the unified one.
    pub fstype: String,
    /// The per-superblock options; for v1 cgroups they name the
    /// controllers the hierarchy serves (`memory`, `cpuset`, `pids`, ...).
    pub super_options: Vec<String>,
}

/// Parses `/proc/self/mountinfo` (proc(5)): `id parent maj:min root mount
/// options [optional...] - fstype source super_options`.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let l: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            Some(Mount {
                root: unescape(l.get(3)?),
                mount_point: PathBuf::from(unescape(l.get(4)?)),
                fstype: r.first()?.to_string(),
                super_options: r.get(2).map(|o| o.split(',').map(String::from).collect())?,
            })
        })
        .collect()
}

/// Undoes mountinfo's octal escapes (`\040` is a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match (bytes[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One line of `/proc/<pid>/cgroup`: `hierarchy-id:controllers:path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Membership {
    /// The hierarchy's number; 0 is the v2 hierarchy.
    pub hierarchy_id: u32,
    /// Empty for the v2 hierarchy (`0::/path`).
    pub controllers: Vec<String>,
    /// The process's cgroup, relative to the hierarchy's root (`/` for the
    /// root cgroup).
    pub path: String,
}

/// Parses `/proc/<pid>/cgroup` (cgroups(7)); lines that do not have the
/// `id:controllers:path` shape are skipped.
pub fn parse_proc_cgroup(text: &str) -> Vec<Membership> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let id = parts.next()?.parse().ok()?;
            let controllers = parts.next()?;
            Some(Membership {
                hierarchy_id: id,
                controllers: controllers
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(String::from)
                    .collect(),
                path: parts.next()?.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_undone() {
        let m = parse_mountinfo("1 2 0:1 / /mnt/a\\040b rw - tmpfs x rw\n");
        assert_eq!(m[0].mount_point, PathBuf::from("/mnt/a b"));
        assert_eq!(m[0].fstype, "tmpfs");
        assert_eq!(parse_mountinfo("garbage\n"), vec![]);
    }

    #[test]
    fn cgroup_lines_give_their_hierarchy_controllers_and_path() {
        let m = parse_proc_cgroup("4:memory:/process_api/0534\n0::/\nnonsense\n");
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[0].hierarchy_id, m[0].controllers.clone()),
            (4, vec!["memory".to_string()])
        );
        assert_eq!(m[0].path, "/process_api/0534");
        assert!(m[1].controllers.is_empty() && m[1].path == "/");
    }
}
