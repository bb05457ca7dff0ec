//! The servers a run keeps: one per system, restarted according to the
//! experiment's restart policy or when its settings or its dataset change.
//! The dataset is the one the load kind declares for the trial
//! ([`crate::load::dataset`]); the server is started holding it.

use super::failure::Failure;
use super::sites::ServerSite;
use crate::model::Dataset;
use crate::placement::Placement;
use crate::remote::ssh::SshShell;
use crate::remote::target::RemoteTarget;
use crate::shutdown::Shutdown;
use crate::spec::sweep::{server_cpu_list, Resolved};
use crate::spec::Restart;
use crate::store::FailureCause;
use crate::target::external::External;
use crate::target::{self, Endpoint, Target, TargetError};
use std::path::Path;

/// A running server. Field order matters: the target (and its processes)
/// is dropped before the placement (and its cgroups).
pub struct ActiveServer {
    pub target: Box<dyn Target>,
    pub placement: Placement,
    pub endpoint: Endpoint,
    key: String,
    point: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Placement(#[from] crate::placement::PlacementError),
    /// The start failed and the server's log or file system says the disk
    /// is full ([`target::diagnose::disk_full`]): named first, since the
    /// error the start saw (a reset connection) does not say it.
    #[error("{cause}: {source}")]
    DiskFull {
        /// `no space left on device on DIR (from LOG)`.
        cause: String,
        /// The start's own error.
        source: TargetError,
    },
}

impl ServerError {
    /// The trial's failure when its server (or its dataset load) did not
    /// start: a full disk when the server's log or file system says so,
    /// else a failed start.
    pub fn failure(&self) -> Failure {
        let cause = match self {
            ServerError::DiskFull { .. } => FailureCause::DiskFull,
            ServerError::Target(_) | ServerError::Placement(_) => FailureCause::ServerStart,
        };
        Failure {
            message: format!("server failed to start: {self}"),
            cause: Some(cause),
        }
    }
}

/// Identifies a server configuration: same key, same server. The dataset
/// is part of it, so a point on other data (a `load.scale` axis) gets a
/// server holding that data whatever the restart policy.
fn key_of(r: &Resolved, dataset: Option<&Dataset>) -> String {
    format!(
        "{}|{:?}|{:?}|{:?}|{dataset:?}",
        r.server.kind, r.server.settings, r.server_cpus, r.server_memory
    )
}

/// The server one trial wants.
#[derive(Clone, Copy)]
pub struct Wanted<'a> {
    /// The sweep point's index (the per-point restart policy counts them).
    pub point: u32,
    /// The server's settings and resources at the point.
    pub resolved: &'a Resolved,
    /// The dataset the load declares at the point.
    pub dataset: Option<&'a Dataset>,
}

/// One slot per system.
pub struct Servers {
    slots: Vec<Option<ActiveServer>>,
    /// Where the servers run (`[hosts] server`, or here).
    site: ServerSite,
}

impl Servers {
    pub fn new(systems: usize, site: ServerSite) -> Self {
        Servers {
            slots: (0..systems).map(|_| None).collect(),
            site,
        }
    }

    /// Where the servers run, for the probe.
    pub fn site(&self) -> &ServerSite {
        &self.site
    }

    /// Builds the system's target and its placement: here, or through the
    /// server host's agent (which makes the placement there).
    fn build(
        &self,
        system: usize,
        resolved: &Resolved,
        base_dir: &Path,
    ) -> Result<(Box<dyn Target>, Placement), ServerError> {
        let cpus = resolved.server_cpus.map(server_cpu_list);
        if let ServerSite::Ssh(ssh, host) = &self.site {
            let shell = SshShell {
                ssh: ssh.clone(),
                host: host.clone(),
            };
            let target = External::with_shell(&resolved.server.settings, Box::new(shell))?;
            return Ok((Box::new(target), Placement::unconstrained()));
        }
        if let ServerSite::Agent(agent, ip) = &self.site {
            let kind = target::kind(&resolved.server.kind)?;
            let settings = kind.settings_on_host(&resolved.server.settings, *ip);
            let target = RemoteTarget::new(
                agent.clone(),
                &resolved.server.kind,
                &settings,
                cpus,
                resolved.server_memory.map(|b| b.0),
            );
            return Ok((Box::new(target), Placement::unconstrained()));
        }
        let placement = Placement::create(&system.to_string(), cpus, resolved.server_memory)?;
        let target = target::build(&resolved.server.kind, &resolved.server.settings, base_dir)?;
        Ok((target, placement))
    }

    /// Returns the system's server for this trial, holding `dataset`,
    /// (re)starting it when the policy or a change of settings or dataset
    /// asks for it.
    pub fn ensure(
        &mut self,
        system: usize,
        wanted: &Wanted<'_>,
        policy: Restart,
        base_dir: &Path,
        shutdown: &Shutdown,
    ) -> Result<&mut ActiveServer, ServerError> {
        let Wanted {
            point,
            resolved,
            dataset,
        } = *wanted;
        let key = key_of(resolved, dataset);
        let keep = match &self.slots[system] {
            Some(s) if s.key == key && s.target.is_running() => match policy {
                Restart::Never => true,
                Restart::PerPoint => s.point == point,
                Restart::PerTrial => false,
            },
            _ => false,
        };
        if !keep {
            self.stop(system);
            let (mut target, placement) = self.build(system, resolved, base_dir)?;
            let endpoint = target
                .start(&placement, dataset, shutdown)
                .map_err(
                    |source| match target::diagnose::disk_full(target.as_ref()) {
                        Some(cause) => ServerError::DiskFull { cause, source },
                        None => ServerError::Target(source),
                    },
                )?;
            self.slots[system] = Some(ActiveServer {
                target,
                placement,
                endpoint,
                key,
                point,
            });
        }
        let slot = self.slots[system].as_mut();
        Ok(slot.expect("slot was just filled"))
    }

    /// The system's running server, if any.
    pub fn active(&mut self, system: usize) -> Option<&mut ActiveServer> {
        self.slots.get_mut(system)?.as_mut()
    }

    /// Stops and forgets the system's server (after it died, or at the end).
    pub fn stop(&mut self, system: usize) {
        if let Some(mut s) = self.slots[system].take() {
            let _ = s.target.stop();
        }
    }

    pub fn stop_all(&mut self) {
        for i in 0..self.slots.len() {
            self.stop(i);
        }
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.stop_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_named_as_the_cause_of_a_failed_start() {
        let start = || TargetError::Start {
            kind: "postgres",
            message: "Connection reset by peer".into(),
        };
        let full = ServerError::DiskFull {
            cause: "no space left on device on /w/pg (from server.log)".into(),
            source: start(),
        };
        let f = full.failure();
        assert_eq!(f.cause, Some(FailureCause::DiskFull));
        assert!(
            f.message.starts_with(
                "server failed to start: no space left on device on /w/pg (from server.log): "
            ),
            "{}",
            f.message
        );
        let plain = ServerError::Target(start()).failure();
        assert_eq!(plain.cause, Some(FailureCause::ServerStart));
    }
}
