//! Server lifecycles: the systems under test.
//!
//! A [`Target`] writes its server's config into a private run directory,
//! starts the real server as a child (no systemd) on a loopback port, waits
//! until it answers, and stops it by PID: at the end, on error, on Ctrl-C
//! (through [`Shutdown`]) and on drop. The `external` kind names a server
//! that is already running and has no lifecycle.
//!
//! Settings arrive as a TOML table (the experiment's `[server]` merged with a
//! system's overrides and the sweep point); each kind deserializes its own
//! typed settings, so unknown or mistyped fields are reported by name.

pub mod dns;
pub mod external;
pub mod nginx;
pub mod postgres;
pub mod process;
pub mod requirements;

use crate::placement::Placement;
use crate::shutdown::Shutdown;
use std::path::{Path, PathBuf};

/// Where a started server can be reached: a URL for HTTP, a libpq
/// connection string for PostgreSQL, and so on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub uri: String,
}

/// Facts about the data a server was loaded with (recorded with the trial).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DatasetInfo {
    pub description: String,
    pub bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("{kind} settings: {message}")]
    Settings { kind: &'static str, message: String },
    #[error("could not start {kind}: {message}")]
    Start { kind: &'static str, message: String },
    #[error("{kind} did not become ready within {waited_s:.0}s: {message}")]
    NotReady {
        kind: &'static str,
        waited_s: f64,
        message: String,
    },
    #[error("{kind} is not installed: {message}; run `scalelab doctor --install`")]
    Missing { kind: &'static str, message: String },
    #[error("interrupted")]
    Interrupted,
    #[error("i/o error on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl TargetError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        TargetError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A server under test.
pub trait Target: Send {
    fn kind(&self) -> &'static str;
    /// Starts the server inside `placement` and waits until it answers.
    fn start(
        &mut self,
        placement: &Placement,
        shutdown: &Shutdown,
    ) -> Result<Endpoint, TargetError>;
    /// Stops the server and waits until its processes are gone. Idempotent.
    fn stop(&mut self) -> Result<(), TargetError>;
    /// Whether the server process is still alive (used to tell "the server
    /// died" apart from other trial failures).
    fn is_running(&self) -> bool;
    /// PID of the server's root process, for the probe's process tree.
    fn root_pid(&self) -> Option<u32>;
    /// The server's version string, e.g. `nginx/1.22.1`.
    fn version(&self) -> Option<String>;
    /// The config the server actually runs with, as text.
    fn effective_config(&self) -> Option<String>;
    /// The loaded dataset, if the target has one.
    fn dataset(&self) -> Option<DatasetInfo> {
        None
    }
}

/// Builds the target for `kind` from its settings table. `base_dir` is the
/// directory under which private run directories are created.
pub fn build(
    kind: &str,
    settings: &toml::Table,
    base_dir: &Path,
) -> Result<Box<dyn Target>, TargetError> {
    match kind {
        "nginx" => Ok(Box::new(nginx::Nginx::new(settings, base_dir)?)),
        "postgres" => Ok(Box::new(postgres::Postgres::new(settings, base_dir)?)),
        "external" => Ok(Box::new(external::External::new(settings)?)),
        "nsd" => Ok(Box::new(dns::nsd::target(settings, base_dir)?)),
        "unbound" => Ok(Box::new(dns::unbound::target(settings, base_dir)?)),
        "bind" => Ok(Box::new(dns::bind::target(settings, base_dir)?)),
        other => Err(TargetError::Settings {
            kind: "server",
            message: format!(
                "unknown server kind `{other}`; expected one of: {}",
                KINDS.join(", ")
            ),
        }),
    }
}

/// Server kinds scalelab can run.
pub const KINDS: &[&str] = &["nginx", "postgres", "external", "nsd", "unbound", "bind"];

/// Checks a settings table without starting anything (spec validation).
pub fn check_settings(kind: &str, settings: &toml::Table) -> Result<(), TargetError> {
    match kind {
        "nginx" => nginx::NginxSettings::parse(settings).map(|_| ()),
        "postgres" => postgres::PostgresSettings::parse(settings).map(|_| ()),
        "external" => external::ExternalSettings::parse(settings).map(|_| ()),
        "nsd" => dns::nsd::NsdSettings::parse(settings).map(|_| ()),
        "unbound" => dns::unbound::UnboundSettings::parse(settings).map(|_| ()),
        "bind" => dns::bind::BindSettings::parse(settings).map(|_| ()),
        other => Err(TargetError::Settings {
            kind: "server",
            message: format!(
                "unknown server kind `{other}`; expected one of: {}",
                KINDS.join(", ")
            ),
        }),
    }
}

/// Deserializes a settings table into a kind's typed settings, turning serde's
/// message into one that names the field.
pub fn parse_settings<T: serde::de::DeserializeOwned>(
    kind: &'static str,
    settings: &toml::Table,
) -> Result<T, TargetError> {
    toml::Value::Table(settings.clone())
        .try_into()
        .map_err(|e: toml::de::Error| TargetError::Settings {
            kind,
            message: e.message().to_string(),
        })
}
