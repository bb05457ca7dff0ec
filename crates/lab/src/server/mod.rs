//! Server lifecycles: the systems under test.
//!
//! A [`Server`] writes its server's config into a private run directory,
//! starts the real server as a child (no systemd) on a loopback port, waits
//! until it answers, and stops it: at the end, on error, on Ctrl-C (through
//! [`Shutdown`]) and on drop. Every managed kind starts its server through
//! [`crate::sys::lifecycle::ServerProcess`] (own session, tracking cgroup, watchdog), so
//! a stop takes the whole server down and nothing outlives `kill -9` of
//! scalelab; read [`crate::sys::lifecycle`] before adding a kind. [`ports`] checks that
//! nothing else listens on the server's port. The `external` kind names a
//! server that is already running and has no lifecycle.
//!
//! Settings arrive as a TOML table (the experiment's `[server]` merged with a
//! system's overrides and the sweep point); each kind compiles it once, when
//! the experiment is validated, into its typed settings behind a
//! [`ServerPlan`], so unknown or mistyped fields are reported by name and
//! every server is built from its plan. The
//! data a server holds is not among them: the workload declares it, and the
//! runner hands it to [`Server::start`] as a [`Dataset`]; the target decides
//! how to build and cache it.

pub mod bare;
pub(crate) mod bounded;
pub mod conf_path;
pub mod diagnose;
pub mod dns;
pub mod external;
#[cfg(any(test, feature = "test-support"))]
mod fake;
#[cfg(any(test, feature = "test-support"))]
mod fake_rule;
mod kind;
pub mod listener;
pub mod mariadb;
pub mod nginx;
pub mod nginx_tls;
pub mod plan;
pub mod ports;
pub mod postgres;
pub mod router;
pub mod rundir;

pub use kind::{listen_address, ServerKind};
pub use plan::ServerPlan;
pub use scalelab_record::server::{
    DatasetInfo, ServerDescription, ServerFacts, ServerFactsReader, ServerFigure,
};

/// Every server kind scalelab can run: adding a kind is its module plus one
/// line here.
pub const KINDS: &[&ServerKind] = &[
    &nginx::SERVER_KIND,
    &postgres::SERVER_KIND,
    &mariadb::SERVER_KIND,
    &external::SERVER_KIND,
    &dns::nsd::SERVER_KIND,
    &dns::unbound::SERVER_KIND,
    &dns::bind::SERVER_KIND,
    &dns::resolver::SERVER_KIND,
    &router::SERVER_KIND,
    #[cfg(any(test, feature = "test-support"))]
    &fake::SERVER_KIND,
    #[cfg(any(test, feature = "test-support"))]
    &fake_rule::SERVER_KIND,
];

use crate::model::Dataset;
use crate::placement::Placement;
use crate::shutdown::Shutdown;
use crate::sys::lifecycle::ServerProcess;
use std::path::{Path, PathBuf};

/// Where a started server can be reached: a URL for HTTP, a libpq
/// connection string for PostgreSQL, and so on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The address in the form the kind's load driver takes.
    pub uri: String,
    /// The CA certificate (PEM) that verifies the server's TLS
    /// certificate, where the server serves TLS with the one its start
    /// made ([`crate::tls::cert`]); the load is handed it.
    pub ca_pem: Option<String>,
}

/// What [`Server::liveness`] found.
#[derive(Clone, Debug, PartialEq)]
pub enum Liveness {
    /// The server runs.
    Running,
    /// The server is gone (it died, or was stopped).
    Gone,
    /// Its host did not answer the question; why, and whether the server
    /// itself still answered its protocol.
    Unknown(String),
}

/// Why a server could not be configured, started or stopped. Every variant
/// names the server kind (`kind`) and says what went wrong (`message`).
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Its settings table is invalid.
    #[error("{kind} settings: {message}")]
    Settings {
        /// The server kind (`nginx`, `postgres`, ...).
        kind: &'static str,
        /// The field at fault and what a valid value looks like.
        message: String,
    },
    /// It could not be started.
    #[error("could not start {kind}: {message}")]
    Start {
        /// The server kind (`nginx`, `postgres`, ...).
        kind: &'static str,
        /// What failed, with the server's own output where there is some.
        message: String,
    },
    /// It could not be started: the file system of its directory is full
    /// (a host without an agent said so).
    #[error("could not start {kind}: {message}")]
    DiskFull {
        /// The server kind (`nginx`, `postgres`, ...).
        kind: &'static str,
        /// Where, the bytes free there, and the fix.
        message: String,
    },
    /// It could not be stopped completely.
    #[error("could not stop {kind}: {message}")]
    Stop {
        /// The server kind (`nginx`, `postgres`, ...).
        kind: &'static str,
        /// Which step of the shutdown failed.
        message: String,
    },
    /// It started but did not answer in time.
    #[error("{kind} did not become ready within {waited_s:.0}s: {message}")]
    NotReady {
        /// The server kind (`nginx`, `postgres`, ...).
        kind: &'static str,
        /// Seconds waited.
        waited_s: f64,
        /// The last readiness check's error.
        message: String,
    },
    /// Its binaries are not installed.
    #[error("{kind} is not installed: {message}; run `scalelab doctor --install`")]
    Missing {
        /// The server kind (`nginx`, `postgres`, ...).
        kind: &'static str,
        /// The binary or package that is missing.
        message: String,
    },
    /// Ctrl-C arrived while waiting.
    #[error("interrupted")]
    Interrupted,
    /// A file or directory operation failed.
    #[error("i/o error on {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl ServerError {
    /// A settings error of `kind` (wraps [`crate::kinds::parse_settings`]).
    pub fn settings(kind: &'static str, message: String) -> Self {
        ServerError::Settings { kind, message }
    }

    /// A failed stop of `kind`: what was left running, or why.
    pub fn stop(kind: &'static str, what: impl std::fmt::Display) -> Self {
        ServerError::Stop {
            kind,
            message: what.to_string(),
        }
    }

    /// An i/o error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        ServerError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A server under test.
pub trait Server: Send {
    /// The kind's registry name (`nginx`, `postgres`, ...).
    fn kind(&self) -> &'static str;
    /// Starts the server inside `placement`, holding `dataset` (the one the
    /// workload declares, if any), and waits until it answers. A kind that
    /// cannot hold the dataset refuses it ([`refuse_dataset`]).
    fn start(
        &mut self,
        placement: &Placement,
        dataset: Option<&Dataset>,
        shutdown: &Shutdown,
    ) -> Result<Endpoint, ServerError>;
    /// Stops the server and waits until its processes are gone. Idempotent.
    fn stop(&mut self) -> Result<(), ServerError>;
    /// The started server's process, when the kind runs one through
    /// [`ServerProcess`]: `is_running`, `root_pid` and `processes` read it
    /// unless the kind says otherwise.
    fn server_process(&self) -> Option<&ServerProcess> {
        None
    }
    /// Whether the server process is still alive (used to tell "the server
    /// died" apart from other trial failures).
    fn is_running(&self) -> bool {
        self.server_process().is_some_and(ServerProcess::is_running)
    }
    /// Whether the server still runs, or why that cannot be told (its
    /// host stopped answering over ssh, and the server's own protocol
    /// says whether it still served): what tells "the server died" apart
    /// from a host that cannot be asked.
    fn liveness(&self) -> Liveness {
        match self.is_running() {
            true => Liveness::Running,
            false => Liveness::Gone,
        }
    }
    /// PID of the server's root process, for the probe's process tree.
    fn root_pid(&self) -> Option<u32> {
        self.server_process().map(ServerProcess::pid)
    }
    /// Why the server's processes cannot be told apart from the rest of
    /// its machine when [`Self::root_pid`] is `None` (an `external` server
    /// without `pid` whose listener was not found): the probe keeps it as a
    /// warning, and the trial's background is unknown, never noisy.
    fn unidentified(&self) -> Option<String> {
        None
    }
    /// Every live process of the server (see [`ServerProcess::processes`]).
    fn processes(&self) -> Vec<u32> {
        self.server_process()
            .map(ServerProcess::processes)
            .unwrap_or_default()
    }
    /// The port the server listens on, when scalelab manages the server.
    fn listen_port(&self) -> Option<u16> {
        None
    }
    /// Checks that no process but this server listens on its port
    /// ([`ports::ensure_exclusive`]); run before every trial.
    fn check_port(&self) -> Result<(), ports::PortError> {
        match self.listen_port() {
            Some(port) => ports::ensure_exclusive(port, &self.processes()),
            None => Ok(()),
        }
    }
    /// The server's version string, e.g. `nginx/1.22.1`.
    fn version(&self) -> Option<String>;
    /// The config the server actually runs with, as text.
    fn effective_config(&self) -> Option<String>;
    /// The loaded dataset, if the target has one.
    fn dataset(&self) -> Option<DatasetInfo> {
        None
    }
    /// Facts worth recording with every trial beyond the version and
    /// config (the router's lab: queues, RPS, firewall, namespaces).
    fn describe(&self) -> Option<ServerFacts> {
        None
    }
    /// The loopback port the settings fix, if any (`None`: a free port is
    /// picked at start). The runner refuses a busy fixed port before a sweep.
    fn fixed_port(&self) -> Option<u16> {
        None
    }
    /// The server's own log file, on the file system that holds its data,
    /// when the kind keeps one here ([`diagnose::disk_full`] reads it after
    /// a failure). Still valid after a failed start.
    fn server_log(&self) -> Option<std::path::PathBuf> {
        None
    }
    /// The server's own wait counters, read at the measured window's ends
    /// (`probe::limiter::server_waits`); `None`: the kind keeps none here.
    fn wait_counters(&self) -> Option<crate::probe::limiter::server_waits::WaitCounters> {
        None
    }
    /// Each worker's requests so far, in the server's own worker order,
    /// read at the measured window's ends (`probe::limiter::balance`);
    /// `None`: the kind counts none per worker (nginx's are global).
    fn worker_requests(&self) -> Option<Vec<u64>> {
        None
    }
}

/// The registered server kind called `name`, or an error listing the kinds.
pub fn kind(name: &str) -> Result<&'static ServerKind, ServerError> {
    crate::kinds::lookup("server", KINDS, name).map_err(|message| ServerError::Settings {
        kind: "server",
        message,
    })
}

/// The names of the registered server kinds, in registry order.
pub fn kind_names() -> Vec<&'static str> {
    crate::kinds::names(KINDS)
}

/// Checks `kind`'s settings table and compiles it into its typed plan,
/// without starting anything (spec validation; tests). A dataset field
/// among them is refused with where it goes now. Build the server with
/// [`ServerPlan::build`].
pub fn compile(
    kind: &'static ServerKind,
    settings: &toml::Table,
) -> Result<Box<dyn ServerPlan>, ServerError> {
    crate::model::dataset::refuse_in_server(settings)
        .map_err(|m| ServerError::settings(kind.name, m))?;
    (kind.compile)(settings)
}

/// The error of a kind that holds no data when a workload declares some
/// (an HTTP server asked for pgbench's tables): `Ok` without a dataset.
pub fn refuse_dataset(kind: &'static str, dataset: Option<&Dataset>) -> Result<(), ServerError> {
    match dataset {
        None => Ok(()),
        Some(d) => Err(wrong_dataset(kind, "no dataset", d)),
    }
}

/// The error of a kind asked to hold a dataset it cannot: `holds` says
/// what it does hold and which workload declares that.
pub fn wrong_dataset(kind: &'static str, holds: &str, declared: &Dataset) -> ServerError {
    ServerError::Start {
        kind,
        message: format!(
            "{kind} holds {holds}, but the workload declares {}; use a load kind that speaks to {kind}",
            declared.describe()
        ),
    }
}

/// Stops the server process `server` holds, if any (`signal`, then SIGKILL
/// after `grace`: [`ServerProcess::stop`]), and leaves `None` in its place.
/// Stopping twice is stopping once.
pub fn stop_process(
    kind: &'static str,
    server: &mut Option<ServerProcess>,
    signal: libc::c_int,
    grace: std::time::Duration,
) -> Result<(), ServerError> {
    match server.take() {
        Some(mut process) => process
            .stop(signal, grace)
            .map_err(|e| ServerError::stop(kind, e)),
        None => Ok(()),
    }
}

/// Removes what killed scalelab processes left on this machine and their
/// reapers could not remove: the empty cgroups and the servers' private
/// directories (in `base_dir` and `/tmp`) of owners that are dead. Returns
/// what it removed.
pub fn reclaim_leftovers(base_dir: &Path) -> Vec<PathBuf> {
    let mut removed = crate::placement::reclaim_stale();
    removed.extend(external::reclaim_stale_stops(base_dir));
    removed.extend(rundir::reclaim_stale(base_dir));
    removed
}
