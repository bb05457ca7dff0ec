//! Private network namespaces that hold only `lo`: the DNS lab's walls.
//!
//! A [`Netns`] is created with `ip netns add` under an exact name that
//! carries the creating process's PID (`scalelab-<purpose>-<pid>-<n>`), so a
//! later run can tell a dead run's leftovers from a live run's namespace and
//! remove exactly those ([`reclaim_stale`]). Servers are started inside with
//! [`Netns::configure`] (the child calls `setns()` before exec); load
//! generator threads join with [`crate::procfs::netns::join`] before they
//! open sockets: the one join, whose error type this module shares. Dropping
//! the value kills whatever still runs inside and deletes the namespace.
//!
//! Each namespace has a [`Watchdog`] from the moment before it is made: a
//! process that outlives scalelab and removes the namespace's name when
//! scalelab dies, `kill -9` included (the servers inside have watchdogs of
//! their own that kill them, and the kernel frees the namespace with its
//! last process). [`reclaim_stale`] remains for a watchdog killed too.

use super::lifecycle::watchdog::Watchdog;
use crate::procfs::net::{parse_net_dev, NetCounters};
pub use crate::procfs::netns::NetnsError;
use crate::procfs::netns::{open, read_net_file, NETNS_DIR};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Every namespace scalelab creates starts with this.
const PREFIX: &str = "scalelab-";

/// A named network namespace that this process created and will delete.
#[derive(Debug)]
pub struct Netns {
    name: String,
    /// Removes the namespace if scalelab dies; released after a normal
    /// removal.
    guard: Option<Watchdog>,
}

static SEQ: AtomicU32 = AtomicU32::new(0);

impl Netns {
    /// Removes dead runs' namespaces for `purpose`, then creates a fresh one
    /// holding only `lo` (brought up).
    pub fn create(purpose: &str) -> Result<Netns, NetnsError> {
        reclaim_stale();
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let name = format!("{PREFIX}{purpose}-{}-{n}", std::process::id());
        remove(&name);
        let guard =
            Watchdog::for_namespaces(&[Path::new(NETNS_DIR).join(&name)]).map_err(|source| {
                NetnsError::Guard {
                    name: name.clone(),
                    source,
                }
            })?;
        // From here on, dropping `ns` removes the namespace (or the guard does).
        let ns = Netns {
            name,
            guard: Some(guard),
        };
        ip(&["netns", "add", &ns.name]).map_err(|message| NetnsError::Create {
            name: ns.name.clone(),
            message,
        })?;
        ip(&["-n", &ns.name, "link", "set", "lo", "up"]).map_err(|message| NetnsError::Create {
            name: ns.name.clone(),
            message,
        })?;
        Ok(ns)
    }

    /// The namespace's full name, as `ip netns` and [`crate::procfs::netns::join`] know it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Makes `cmd`'s child join this namespace before it execs.
    pub fn configure(&self, cmd: &mut Command) -> Result<(), NetnsError> {
        use std::os::unix::process::CommandExt;
        let fd = open(&self.name)?;
        // SAFETY: setns on an fd opened before fork is async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok(())
    }

    /// Network interfaces inside the namespace with their packet counters.
    pub fn interfaces(&self) -> Vec<NetCounters> {
        read_net_file(&self.name, "dev")
            .map(|text| parse_net_dev(&text))
            .unwrap_or_default()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        remove(&self.name);
        if let Some(mut guard) = self.guard.take() {
            if exists(&self.name) {
                // `ip netns del` failed: the unreleased guard tries its way.
                drop(guard);
            } else {
                guard.release();
            }
        }
    }
}

/// Whether the calling thread runs in a private network namespace: one
/// named under `/run/netns` (inside `ip netns exec`, or after [`crate::procfs::netns::join`]),
/// or, where PID 1's is readable, any other than PID 1's. A host that hides
/// `/proc/1` (hidepid, a container) no longer makes `ip netns exec` look
/// like the host's namespace.
pub fn in_private_namespace() -> bool {
    let own = ns_id(Path::new(crate::procfs::me::THREAD_NETNS));
    let named: Vec<(u64, u64)> = std::fs::read_dir(NETNS_DIR)
        .map(|d| d.flatten().filter_map(|e| ns_id(&e.path())).collect())
        .unwrap_or_default();
    private_by(own, ns_id(Path::new(crate::procfs::me::INIT_NETNS)), &named)
}

/// A namespace's identity: the (device, inode) of its file.
fn ns_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The decision of [`in_private_namespace`]: `own` is one of the `named`
/// namespaces, or differs from PID 1's when that is known.
fn private_by(own: Option<(u64, u64)>, pid1: Option<(u64, u64)>, named: &[(u64, u64)]) -> bool {
    let Some(own) = own else {
        return false;
    };
    named.contains(&own) || pid1.is_some_and(|p| p != own)
}

/// The PID a scalelab namespace name was created by, if it is one.
fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let mut parts = rest.rsplitn(3, '-');
    let _seq: u32 = parts.next()?.parse().ok()?;
    parts.next()?.parse().ok()
}

/// Whether the creating process still runs. Any live process with that PID
/// counts: keeping a recycled PID's leftover for one more run is harmless,
/// removing a live run's lab is not.
fn owner_alive(pid: u32) -> bool {
    super::process::is_alive(pid)
}

/// Removes every scalelab namespace whose creating process is gone, with
/// whatever still runs inside. Returns the names removed.
pub fn reclaim_stale() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(NETNS_DIR) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(pid) = owner_pid(&name) {
            if !owner_alive(pid) {
                remove(&name);
                removed.push(name);
            }
        }
    }
    removed
}

/// Kills the processes inside namespace `name` and deletes it.
pub fn remove(name: &str) {
    if !Path::new(NETNS_DIR).join(name).exists() {
        return;
    }
    for _ in 0..3 {
        let pids = pids_in(name);
        if pids.is_empty() {
            break;
        }
        for &pid in &pids {
            super::process::signal(pid, libc::SIGKILL);
        }
        for pid in pids {
            super::process::wait_gone(pid, Duration::from_secs(2));
        }
    }
    let _ = ip(&["netns", "del", name]);
}

/// PIDs of the processes running inside namespace `name`.
pub fn pids_in(name: &str) -> Vec<u32> {
    Command::new("ip")
        .args(["netns", "pids", name])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether namespace `name` exists.
pub fn exists(name: &str) -> bool {
    PathBuf::from(NETNS_DIR).join(name).exists()
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("could not run `ip` (install iproute2): {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_namespace_is_private_without_reading_pid_1() {
        // Issue 36: with /proc/1 unreadable, `ip netns exec` was refused as
        // not private (the check compared only with PID 1's namespace).
        let (host, lab) = (Some((4, 100)), Some((4, 200)));
        assert!(private_by(lab, None, &[(4, 200)]), "named, PID 1 unknown");
        assert!(
            !private_by(host, None, &[(4, 200)]),
            "not named, PID 1 unknown"
        );
        assert!(private_by(lab, host, &[]), "other than PID 1's");
        assert!(!private_by(host, host, &[(4, 200)]));
        assert!(!private_by(None, host, &[]));
        // A real named namespace, entered by a thread, is found among the
        // named ones (the identities compared are the kernel's own).
        let ns = Netns::create("privcheck").unwrap();
        let path = Path::new(NETNS_DIR).join(ns.name());
        let name = ns.name().to_string();
        let seen = std::thread::spawn(move || {
            crate::procfs::netns::join(&name).unwrap();
            ns_id(Path::new(crate::procfs::me::THREAD_NETNS))
        })
        .join()
        .unwrap();
        assert_eq!(seen, ns_id(&path));
        assert_ne!(seen, ns_id(Path::new(crate::procfs::me::THREAD_NETNS)));
    }

    #[test]
    fn names_carry_their_owner() {
        assert_eq!(owner_pid("scalelab-dns-1234-0"), Some(1234));
        assert_eq!(owner_pid("scalelab-dns-lab-77-3"), Some(77));
        assert_eq!(owner_pid("other-1234-0"), None);
        assert_eq!(owner_pid("scalelab-dns"), None);
    }
}
