//! A server that is already running, named by its URL or connection string.
//! scalelab neither starts nor stops it.

use super::{Endpoint, Placement, Shutdown, Target, TargetError};
use serde::Deserialize;

const KIND: &str = "external";

/// The `external` server kind: nothing to install, no lifecycle.
pub const SERVER_KIND: super::ServerKind = super::ServerKind {
    name: KIND,
    requires: &[],
    check: |t| ExternalSettings::parse(t).map(|_| ()),
    build: |t, _base_dir| Ok(Box::new(External::new(t)?)),
};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalSettings {
    /// `http://127.0.0.1:8080/`, `host=127.0.0.1 port=5432 dbname=bench`, ...
    pub url: String,
    /// A label for the version column of reports (nothing is queried).
    pub version: Option<String>,
    /// Root PID of the server, so the probe can sample it.
    pub pid: Option<u32>,
}

impl ExternalSettings {
    pub fn parse(t: &toml::Table) -> Result<Self, TargetError> {
        let s: ExternalSettings =
            crate::kinds::parse_settings(t).map_err(|m| TargetError::settings(KIND, m))?;
        if s.url.trim().is_empty() {
            return Err(TargetError::Settings {
                kind: KIND,
                message: "`url` must name the running server".into(),
            });
        }
        Ok(s)
    }
}

pub struct External {
    settings: ExternalSettings,
}

impl External {
    pub fn new(t: &toml::Table) -> Result<Self, TargetError> {
        Ok(External {
            settings: ExternalSettings::parse(t)?,
        })
    }
}

impl Target for External {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn start(
        &mut self,
        placement: &Placement,
        _shutdown: &Shutdown,
    ) -> Result<Endpoint, TargetError> {
        if placement.cpus.is_some() || placement.memory.is_some() {
            return Err(TargetError::Settings {
                kind: KIND,
                message: "server_cpus and server_memory need a server scalelab starts; pin an external server yourself"
                    .into(),
            });
        }
        Ok(Endpoint {
            uri: self.settings.url.clone(),
        })
    }

    fn stop(&mut self) -> Result<(), TargetError> {
        Ok(())
    }

    fn is_running(&self) -> bool {
        self.settings.pid.map_or(true, super::process::is_alive)
    }

    fn root_pid(&self) -> Option<u32> {
        self.settings.pid
    }

    fn version(&self) -> Option<String> {
        self.settings.version.clone()
    }

    fn effective_config(&self) -> Option<String> {
        None
    }
}
