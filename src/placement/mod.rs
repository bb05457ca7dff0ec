//! Where the server may run: CPU pinning and cgroup memory limits.
//!
//! A [`Placement`] is created per server start from the sweep point's
//! `server_cpus` / `server_memory`, applied in the child before exec (so the
//! whole process tree inherits it), and removed by name when dropped.

use crate::units::Bytes;
use std::process::Command;

#[derive(Debug, thiserror::Error)]
pub enum PlacementError {
    #[error("cannot pin to CPUs {cpus:?}: this machine has CPUs 0..{online}")]
    NoSuchCpu { cpus: Vec<usize>, online: usize },
    #[error("cgroup setup failed at {path}: {message}")]
    Cgroup { path: String, message: String },
}

/// Resource constraints for one server start.
#[derive(Debug, Default)]
pub struct Placement {
    /// CPUs the server may run on (`None`: any).
    pub cpus: Option<Vec<usize>>,
    /// Memory limit (`None`: unlimited).
    pub memory: Option<Bytes>,
}

impl Placement {
    /// No constraints.
    pub fn unconstrained() -> Self {
        Placement::default()
    }

    /// Creates the placement named `name` (cgroups are named after it).
    pub fn create(
        _name: &str,
        cpus: Option<Vec<usize>>,
        memory: Option<Bytes>,
    ) -> Result<Self, PlacementError> {
        if let Some(c) = &cpus {
            let online = online_cpus();
            if c.iter().any(|&i| i >= online) {
                return Err(PlacementError::NoSuchCpu {
                    cpus: c.clone(),
                    online,
                });
            }
        }
        if memory.is_some() {
            return Err(PlacementError::Cgroup {
                path: "(memory)".into(),
                message: "memory limits are not implemented yet".into(),
            });
        }
        Ok(Placement { cpus, memory })
    }

    /// Arranges for the child spawned by `cmd` to start inside this placement.
    pub fn configure(&self, cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        if let Some(cpus) = self.cpus.clone() {
            // SAFETY: sched_setaffinity is async-signal-safe; the set is built
            // before fork by the closure capture.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for c in &cpus {
                    libc::CPU_SET(*c, &mut set);
                }
                cmd.pre_exec(move || {
                    if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
    }

    /// The CPUs left for the load generator: the online CPUs not given to
    /// the server, or `None` when the server may use them all.
    pub fn client_cpus(&self) -> Option<Vec<usize>> {
        let server = self.cpus.as_ref()?;
        let rest: Vec<usize> = (0..online_cpus()).filter(|c| !server.contains(c)).collect();
        if rest.is_empty() {
            None
        } else {
            Some(rest)
        }
    }

    /// A JSON description stored with the trial.
    pub fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "cpus": self.cpus,
            "memory_bytes": self.memory.map(|b| b.0),
        })
    }
}

/// Number of online CPUs.
pub fn online_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
