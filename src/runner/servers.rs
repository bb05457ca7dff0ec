//! The servers a run keeps: one per system, restarted according to the
//! experiment's restart policy or when its settings or its dataset change
//! (the compiled point's restart key). The dataset is the one the load
//! kind declares for the trial ([`crate::load::LoadPlan::dataset`]); the
//! server is started holding it. Every server is built from its compiled
//! [`crate::server::ServerPlan`].

use super::failure::Failure;
use super::sites::ServerSite;
use crate::placement::Placement;
use crate::recipe::plan::PointPlan;
use crate::recipe::sweep::server_cpu_list;
use crate::recipe::Restart;
use crate::remote::bare::server as bare;
use crate::remote::server::RemoteServer;
use crate::remote::ssh::SshShell;
use crate::server::{self, Endpoint, Server, ServerError, ServerKind};
use crate::shutdown::Shutdown;
use crate::store::FailureCause;
use std::path::Path;

/// A running server. Field order matters: the target (and its processes)
/// is dropped before the placement (and its cgroups).
pub struct ActiveServer {
    pub target: Box<dyn Server>,
    pub placement: Placement,
    pub endpoint: Endpoint,
    key: String,
    point: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Server(#[from] ServerError),
    #[error(transparent)]
    Placement(#[from] crate::placement::PlacementError),
    /// The start failed and the server's log or file system says the disk
    /// is full ([`server::diagnose::disk_full`]): named first, since the
    /// error the start saw (a reset connection) does not say it.
    #[error("{cause}: {source}")]
    DiskFull {
        /// `no space left on device on DIR (from LOG)`.
        cause: String,
        /// The start's own error.
        source: ServerError,
    },
}

impl StartError {
    /// The trial's failure when its server (or its dataset load) did not
    /// start: a full disk when the server's log or file system says so,
    /// else a failed start.
    pub fn failure(&self) -> Failure {
        let cause = match self {
            StartError::DiskFull { .. } => FailureCause::DiskFull,
            StartError::Server(ServerError::DiskFull { .. }) => FailureCause::DiskFull,
            StartError::Server(_) | StartError::Placement(_) => FailureCause::ServerStart,
        };
        Failure {
            message: format!("server failed to start: {self}"),
            cause: Some(cause),
        }
    }
}

/// The server one trial wants. Same restart key, same server: the dataset
/// is part of it, so a point on other data (a `load.scale` axis) gets a
/// server holding that data whatever the restart policy.
#[derive(Clone, Copy)]
pub struct Wanted<'a> {
    /// The sweep point's index (the per-point restart policy counts them).
    pub point: u32,
    /// The system's server kind.
    pub kind: &'static ServerKind,
    /// The compiled server, its resources and the dataset at the point.
    pub planned: &'a PointPlan,
}

/// One slot per system.
pub struct Servers {
    slots: Vec<Option<ActiveServer>>,
    /// Where each system's server runs (its host, `[hosts] server`, or here).
    sites: Vec<ServerSite>,
}

impl Servers {
    /// One slot per system, whose servers run at `sites` (one each).
    pub fn new(sites: Vec<ServerSite>) -> Self {
        Servers {
            slots: sites.iter().map(|_| None).collect(),
            sites,
        }
    }

    /// Where system `system`'s server runs, for the probe.
    pub fn site(&self, system: usize) -> &ServerSite {
        &self.sites[system]
    }

    /// Builds the system's target and its placement: here, or through the
    /// server host's agent (which makes the placement there).
    fn build(
        &self,
        system: usize,
        wanted: &Wanted<'_>,
        base_dir: &Path,
    ) -> Result<(Box<dyn Server>, Placement), StartError> {
        let planned = wanted.planned;
        let cpus = planned.server_cpus.map(server_cpu_list);
        if let ServerSite::Ssh(ssh, host) = &self.sites[system] {
            if wanted.kind.runs_under_agent {
                let memory = planned.server_memory.map(|b| b.0);
                let plan = planned.server.as_ref();
                let target = bare::build(ssh, host, plan, base_dir, cpus, memory)?;
                return Ok((target, Placement::unconstrained()));
            }
            let shell = SshShell {
                ssh: ssh.clone(),
                host: host.clone(),
            };
            let target = planned.server.build_with_shell(Box::new(shell), base_dir)?;
            return Ok((target, Placement::unconstrained()));
        }
        if let ServerSite::Agent(agent) = &self.sites[system] {
            let target = RemoteServer::new(
                agent.clone(),
                wanted.kind.name,
                &planned.server_text,
                cpus,
                planned.server_memory.map(|b| b.0),
            );
            return Ok((Box::new(target), Placement::unconstrained()));
        }
        let placement = Placement::create(&system.to_string(), cpus, planned.server_memory)?;
        let target = planned.server.build(base_dir)?;
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
    ) -> Result<&mut ActiveServer, StartError> {
        let (point, key) = (wanted.point, &wanted.planned.restart_key);
        let keep = match &self.slots[system] {
            Some(s) if s.key == *key && s.target.is_running() => match policy {
                Restart::Never => true,
                Restart::PerPoint => s.point == point,
                Restart::PerTrial => false,
            },
            _ => false,
        };
        if !keep {
            self.stop(system);
            let (mut target, placement) = self.build(system, wanted, base_dir)?;
            let endpoint = target
                .start(&placement, wanted.planned.dataset.as_ref(), shutdown)
                .map_err(
                    |source| match server::diagnose::disk_full(target.as_ref()) {
                        Some(cause) => StartError::DiskFull { cause, source },
                        None => StartError::Server(source),
                    },
                )?;
            self.slots[system] = Some(ActiveServer {
                target,
                placement,
                endpoint,
                key: key.clone(),
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
        let start = || ServerError::Start {
            kind: "postgres",
            message: "Connection reset by peer".into(),
        };
        let full = StartError::DiskFull {
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
        let plain = StartError::Server(start()).failure();
        assert_eq!(plain.cause, Some(FailureCause::ServerStart));
    }
}
