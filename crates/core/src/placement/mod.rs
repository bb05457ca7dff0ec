//! Where the server may run: CPU pinning and cgroup memory limits.
//!
//! A [`Placement`] is created per server start from the sweep point's
//! `server_cpus` / `server_memory`, applied in the child before exec (so the
//! whole process tree inherits it), and removed by name when dropped.
//!
//! CPUs are pinned twice, belt and braces: a cpuset cgroup (which the server
//! cannot widen) and `sched_setaffinity` in the child. Memory is limited with
//! the memory cgroup, with swap disabled for the cgroup where the kernel
//! accounts swap. A requested limit whose controller is missing is an error:
//! a placement never runs the server unconstrained without saying so.

pub mod affinity;
pub(crate) mod cgroup;
pub mod hierarchy;

use crate::units::Bytes;
use cgroup::{Cgroup, Controller};
use hierarchy::Version;
use std::ffi::CString;
use std::path::PathBuf;
use std::process::Command;

/// Why a placement could not be made. Every message says what to change.
#[derive(Debug, thiserror::Error)]
pub enum PlacementError {
    /// `server_cpus` names a CPU that is not online.
    #[error("cannot pin to CPUs {cpus:?}: the online CPUs are {online}")]
    NoSuchCpu {
        /// The CPU numbers asked for.
        cpus: Vec<usize>,
        /// The online CPUs, as a cpu list (`0-3,6`).
        online: String,
    },
    /// `server_cpus` is an empty list.
    #[error("the server CPU list is empty; list at least one CPU or leave it unset")]
    NoCpus,
    /// `server_memory` is 0.
    #[error("a memory limit of 0 bytes cannot run anything; give a size such as 256M")]
    ZeroMemory,
    /// A limit was asked for whose cgroup controller is not mounted.
    #[error(
        "the cgroup `{controller}` controller is not available on this machine \
         (no v1 hierarchy mounted with it, and not listed in a v2 mount's cgroup.controllers); \
         mount it, or remove the setting that needs it ({})",
        needed_by(controller)
    )]
    ControllerMissing {
        /// The controller's name (`memory`, `cpuset`).
        controller: &'static str,
    },
    /// The cgroup to be created exists and still holds processes (another
    /// run may own it); an empty leftover is replaced instead.
    #[error(
        "the cgroup {path} already exists and has processes in it (another scalelab run?); \
         stop them or pick another name"
    )]
    Busy {
        /// The cgroup's directory.
        path: String,
    },
    /// Reading or writing a cgroup file failed.
    #[error("cgroup setup failed at {path}: {message}")]
    Cgroup {
        /// The file or directory that failed.
        path: String,
        /// The OS error, with a hint where one is known.
        message: String,
    },
}

fn needed_by(controller: &str) -> &'static str {
    if controller == "memory" {
        "server_memory"
    } else {
        "server_cpus"
    }
}

/// Resource constraints for one server start.
#[derive(Debug, Default)]
pub struct Placement {
    /// CPUs the server may run on (`None`: any).
    pub cpus: Option<Vec<usize>>,
    /// Memory limit (`None`: unlimited).
    pub memory: Option<Bytes>,
    cgroups: Vec<Cgroup>,
    /// Each cgroup's `cgroup.procs`, prepared before fork.
    procs_files: Vec<CString>,
}

impl Placement {
    /// No constraints.
    pub fn unconstrained() -> Self {
        Placement::default()
    }

    /// Creates the placement: cgroups named `scalelab-<our PID>-<name>`
    /// (sanitised) for the limits requested. Nothing is created when both are `None`.
    pub fn create(
        name: &str,
        cpus: Option<Vec<usize>>,
        memory: Option<Bytes>,
    ) -> Result<Self, PlacementError> {
        if let Some(c) = &cpus {
            check_cpus(c)?;
        }
        if memory == Some(Bytes(0)) {
            return Err(PlacementError::ZeroMemory);
        }
        let mut placement = Placement {
            cpus,
            memory,
            ..Placement::default()
        };
        let dir_name = cgroup_name(name);
        for (h, controllers) in hierarchies(placement.memory.is_some(), placement.cpus.is_some())? {
            // On any error below, `cg` and the placement drop, removing
            // every cgroup made so far.
            let cg = Cgroup::make(&h, &dir_name, &controllers)?;
            placement.apply_limits(&cg, &controllers)?;
            placement.procs_files.push(cg.procs_file()?);
            placement.cgroups.push(cg);
        }
        Ok(placement)
    }

    fn apply_limits(&self, cg: &Cgroup, controllers: &[Controller]) -> Result<(), PlacementError> {
        for c in controllers {
            match (c, &self.cpus, self.memory) {
                (Controller::Cpuset, Some(cpus), _) => {
                    cg.set_cpus(&affinity::format_cpu_list(cpus))?
                }
                (Controller::Memory, _, Some(limit)) => cg.set_memory(limit.0)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// Arranges for the child spawned by `cmd` to start inside this
    /// placement: it joins each cgroup and pins itself before exec, so every
    /// process it forks inherits both.
    pub fn configure(&self, cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        if self.procs_files.is_empty() && self.cpus.is_none() {
            return;
        }
        let procs = self.procs_files.clone();
        let set = self.cpus.as_deref().map(affinity::cpu_set);
        // SAFETY: the closure runs between fork and exec. It only makes raw
        // open/write/close/sched_setaffinity calls on data built before fork
        // (no allocation, no locks), all async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                for p in &procs {
                    cgroup::join_raw(p)?;
                }
                if let Some(set) = &set {
                    affinity::set_current_raw(set)?;
                }
                Ok(())
            });
        }
    }

    /// The CPUs left for the load generator: the online CPUs not given to
    /// the server, or `None` when the server may use them all.
    pub fn client_cpus(&self) -> Option<Vec<usize>> {
        let server = self.cpus.as_ref()?;
        let rest: Vec<usize> = online_cpu_list()
            .into_iter()
            .filter(|c| !server.contains(c))
            .collect();
        if rest.is_empty() {
            None
        } else {
            Some(rest)
        }
    }

    /// The cgroup directories this placement created.
    pub fn cgroup_dirs(&self) -> Vec<PathBuf> {
        self.cgroups.iter().map(|c| c.dir.clone()).collect()
    }

    /// What is stored with the trial about this placement.
    pub fn describe(&self) -> PlacementFacts {
        PlacementFacts {
            cpus: self.cpus.clone(),
            memory_bytes: self.memory.map(|b| b.0),
            cgroups: self
                .cgroups
                .iter()
                .map(|c| CgroupFacts {
                    path: c.dir.display().to_string(),
                    version: c.version,
                })
                .collect(),
            affinity: self.cpus.as_deref().map(affinity::format_cpu_list),
        }
    }

    /// Removes the cgroups now (moving any process still inside to the
    /// parent cgroup first), reporting failure. Idempotent; dropping the
    /// placement removes them too.
    pub fn remove(&mut self) -> Result<(), PlacementError> {
        let mut first_error = None;
        for cg in self.cgroups.drain(..) {
            if let Err(e) = cg.remove() {
                first_error.get_or_insert(e);
            }
        }
        self.procs_files.clear();
        first_error.map_or(Ok(()), Err)
    }
}

/// A placement as stored with each trial.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PlacementFacts {
    /// The server's CPUs; `None`: not pinned.
    pub cpus: Option<Vec<usize>>,
    /// The server's cgroup memory limit; `None`: none.
    pub memory_bytes: Option<u64>,
    /// The cgroups created for it.
    pub cgroups: Vec<CgroupFacts>,
    /// `cpus` as a CPU list (`1-3`).
    pub affinity: Option<String>,
}

/// One cgroup of a placement, as stored.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CgroupFacts {
    /// Its directory.
    pub path: String,
    /// `v1` or `v2`.
    pub version: Version,
}

/// The hierarchies serving the wanted controllers, one entry per cgroup
/// directory to create (on v2 both controllers share one).
fn hierarchies(
    memory: bool,
    cpus: bool,
) -> Result<Vec<(hierarchy::Hierarchy, Vec<Controller>)>, PlacementError> {
    let wanted = [(memory, Controller::Memory), (cpus, Controller::Cpuset)];
    let mut groups: Vec<(hierarchy::Hierarchy, Vec<Controller>)> = Vec::new();
    for (_, c) in wanted.into_iter().filter(|(want, _)| *want) {
        let h = hierarchy::locate_here(c)?;
        match groups.iter_mut().find(|(g, _)| g.parent == h.parent) {
            Some((_, cs)) => cs.push(c),
            None => groups.push((h, vec![c])),
        }
    }
    Ok(groups)
}

fn check_cpus(cpus: &[usize]) -> Result<(), PlacementError> {
    if cpus.is_empty() {
        return Err(PlacementError::NoCpus);
    }
    let online = online_cpu_list();
    if cpus.iter().any(|c| !online.contains(c)) {
        return Err(PlacementError::NoSuchCpu {
            cpus: cpus.to_vec(),
            online: affinity::format_cpu_list(&online),
        });
    }
    Ok(())
}

/// The start of every cgroup's name; the owner's PID follows
/// (`scalelab-<PID>-<name>`).
pub const CGROUP_PREFIX: &str = "scalelab-";

/// `scalelab-<our PID>-<name>` with anything but `[A-Za-z0-9_.-]` in
/// `name` replaced by `_`: the owner's PID lets the next run reclaim the
/// cgroups of a scalelab that was killed ([`reclaim_stale`]).
pub fn cgroup_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .take(100)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = if clean.is_empty() {
        "placement"
    } else {
        &clean
    };
    format!("{}{clean}", crate::owned::owned_prefix(CGROUP_PREFIX))
}

/// Removes the cgroups `scalelab-<PID>-*` of dead scalelab processes, in
/// every hierarchy where this process would make its own (placement and
/// tracking), after killing what still runs in them (`cgroup.kill`, else SIGKILL);
/// returns those removed.
pub fn reclaim_stale() -> Vec<PathBuf> {
    let mut parents: Vec<PathBuf> = [Controller::Memory, Controller::Cpuset]
        .into_iter()
        .filter_map(|c| hierarchy::locate_here(c).ok())
        .chain(hierarchy::locate_tracking_here())
        .map(|h| h.parent)
        .collect();
    parents.sort();
    parents.dedup();
    parents
        .iter()
        .flat_map(|p| crate::owned::reclaim_stale(p, CGROUP_PREFIX, kill_and_remove))
        .collect()
}

/// How long [`kill_and_remove`] waits for a dead owner's processes to go.
const KILL_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Kills every process left in a dead owner's cgroup (a server whose agent
/// and watchdog were killed together left nginx workers there, outside any
/// watch), then removes it: `cgroup.kill` where the kernel has it (v2,
/// 5.14), else SIGKILL to each PID in `cgroup.procs`; the `rmdir` is
/// retried while they die, up to [`KILL_WAIT`]. Only called for a cgroup
/// named after a dead scalelab PID, so nothing in it is anyone else's.
fn kill_and_remove(path: &std::path::Path) -> std::io::Result<()> {
    if std::fs::write(path.join("cgroup.kill"), "1").is_err() {
        let procs = std::fs::read_to_string(path.join("cgroup.procs")).unwrap_or_default();
        for pid in procs
            .split_whitespace()
            .filter_map(|p| p.parse::<libc::pid_t>().ok())
        {
            // SAFETY: kill has no memory preconditions; the PID was just
            // read from the dead owner's own cgroup.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    let deadline = std::time::Instant::now() + KILL_WAIT;
    loop {
        match crate::owned::remove_cgroup(path) {
            Err(e)
                if e.raw_os_error() == Some(libc::EBUSY)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            other => return other,
        }
    }
}

/// Number of online CPUs.
pub fn online_cpus() -> usize {
    online_cpu_list().len().max(1)
}

/// The online CPUs, from `/sys/devices/system/cpu/online` (falling back to
/// `0..sysconf(_SC_NPROCESSORS_ONLN)`).
pub fn online_cpu_list() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| affinity::parse_cpu_list(&t).ok())
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| {
            // SAFETY: sysconf has no preconditions.
            let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
            (0..n.max(1) as usize).collect()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised() {
        let me = std::process::id();
        assert_eq!(cgroup_name("nginx w=2"), format!("scalelab-{me}-nginx_w_2"));
        assert_eq!(cgroup_name("../etc"), format!("scalelab-{me}-.._etc"));
        assert_eq!(cgroup_name(""), format!("scalelab-{me}-placement"));
        assert!(cgroup_name(&"x".repeat(500)).len() <= 120);
    }

    #[test]
    fn bad_cpu_lists_are_rejected_before_touching_cgroups() {
        let e = Placement::create("t", Some(vec![]), None).unwrap_err();
        assert!(matches!(e, PlacementError::NoCpus));
        let e = Placement::create("t", Some(vec![4096]), None).unwrap_err();
        assert!(e.to_string().contains("online CPUs are"), "{e}");
        let e = Placement::create("t", None, Some(Bytes(0))).unwrap_err();
        assert!(e.to_string().contains("256M"), "{e}");
    }

    #[test]
    fn unconstrained_touches_nothing() {
        let p = Placement::unconstrained();
        assert_eq!(p.client_cpus(), None);
        assert!(p.cgroup_dirs().is_empty());
        let mut cmd = Command::new("true");
        p.configure(&mut cmd);
        assert!(cmd.status().unwrap().success());
    }

    #[test]
    fn client_gets_the_other_cpus() {
        let online = online_cpu_list();
        let p = Placement {
            cpus: Some(vec![online[0]]),
            ..Placement::default()
        };
        let rest = p.client_cpus().unwrap_or_default();
        assert_eq!(rest, online[1..].to_vec());
        let all = Placement {
            cpus: Some(online),
            ..Placement::default()
        };
        assert_eq!(all.client_cpus(), None);
    }
}
