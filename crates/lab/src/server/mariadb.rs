//! A managed MariaDB: `mariadb-install-db` into a private directory, then
//! `mariadbd --defaults-file=...` in the foreground through
//! [`ServerProcess`] (its own session, tracking cgroup and watchdog), on a
//! 127.0.0.1 port.
//!
//! Each start gets a fresh directory under `BASE/mariadb-XXXXXX/` (`my.cnf`,
//! `data/`, `error.log`, `init.sql`), removed at stop, and the dataset the
//! workload declares ([`Dataset::Sysbench`], handed to [`Server::start`]) is
//! built into it: one load per server start.
//! An init file creates the database `sbtest` and the TCP user
//! `sbtest`/`sbtest` on 127.0.0.1, so the endpoint is
//! `mysql://sbtest:sbtest@127.0.0.1:PORT/sbtest`.
//!
//! The server runs as the invoking user (`user = root` when root), so it
//! never switches credentials itself. It is stopped with SIGTERM (a clean
//! InnoDB shutdown), then as a whole by [`ServerProcess::stop`].

mod settings;

pub use settings::{MariadbSettings, ThreadHandling};

use super::{DatasetInfo, Endpoint, Placement, Server, ServerError, Shutdown};
use crate::model::{Dataset, SetupAddr, SetupSession};
use crate::sys::lifecycle::ServerProcess;
use crate::sys::process::{self, log_tail, WaitError};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

mod bare;
mod waits;

const KIND: &str = "mariadb";

/// The `mariadb` server kind.
pub const SERVER_KIND: super::ServerKind = super::ServerKind {
    name: KIND,
    serves: Some(crate::model::Protocol::MYSQL),
    parallelism: &["thread_pool_size"],
    requires: &[crate::kinds::Requirement {
        what: "MariaDB server",
        package: "mariadb-server",
        paths: &["/usr/sbin/mariadbd", "/usr/sbin/mysqld"],
    }],
    compile: |t| Ok(Box::new(MariadbSettings::parse(t)?)),
    runs_under_agent: true,
    listens_on_host_address: true,
    dns_lab: None,
    start_estimate: std::time::Duration::from_millis(4000),
    facts: None,
};
const SERVER_BINARIES: &[&str] = &["/usr/sbin/mariadbd", "/usr/sbin/mysqld"];
const INSTALL_DB: &[&str] = &["/usr/bin/mariadb-install-db", "/usr/bin/mysql_install_db"];
const INSTALL_TIMEOUT: Duration = Duration::from_secs(120);
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const STOP_GRACE: Duration = Duration::from_secs(30);
const LOG_LINES: usize = 15;
/// The user the target creates for the workload (sysbench's default name); it owns
/// [`DATABASE`].
pub const USER: &str = "sbtest";
/// [`USER`]'s password (the server listens on loopback only).
pub const PASSWORD: &str = "sbtest";
/// The database the workload's tables live in (sysbench's default name).
pub const DATABASE: &str = "sbtest";

/// The MariaDB target: `mariadbd` on a private data directory made by
/// `mariadb-install-db`, listening on loopback.
pub struct Mariadb {
    settings: MariadbSettings,
    base_dir: PathBuf,
    dir: Option<crate::owned::OwnedDir>,
    server: Option<ServerProcess>,
    port: u16,
    version: Option<String>,
    effective: Option<String>,
    /// What the workload declared for the current start.
    wanted: Option<Dataset>,
    dataset: Option<DatasetInfo>,
    /// With `tls = true`: the current start's CA, for the load.
    ca_pem: Option<String>,
}

fn start_error(message: impl Into<String>) -> ServerError {
    ServerError::Start {
        kind: KIND,
        message: message.into(),
    }
}

fn find(candidates: &[&str]) -> Result<PathBuf, ServerError> {
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| ServerError::Missing {
            kind: KIND,
            message: format!(
                "none of {} exists (install mariadb-server)",
                candidates.join(", ")
            ),
        })
}

/// The user the server runs as: ours, so it keeps the parent-death signal.
fn server_user() -> String {
    // SAFETY: getuid cannot fail; getpwuid returns a static entry or null.
    unsafe {
        let pw = libc::getpwuid(libc::getuid());
        if pw.is_null() {
            return "root".into();
        }
        std::ffi::CStr::from_ptr((*pw).pw_name)
            .to_string_lossy()
            .into_owned()
    }
}

impl Mariadb {
    /// A MariaDB target from its `[server]` table; nothing starts until `start`. `base_dir`
    /// holds the private data directories.
    pub fn new(settings: &toml::Table, base_dir: &Path) -> Result<Mariadb, ServerError> {
        Ok(Self::with_settings(
            MariadbSettings::parse(settings)?,
            base_dir,
        ))
    }

    /// A MariaDB target from its checked settings (see [`Mariadb::new`]).
    pub fn with_settings(settings: MariadbSettings, base_dir: &Path) -> Mariadb {
        Mariadb {
            settings,
            base_dir: base_dir.to_path_buf(),
            dir: None,
            server: None,
            port: 0,
            version: None,
            effective: None,
            ca_pem: None,
            wanted: None,
            dataset: None,
        }
    }

    /// The endpoint of the running server.
    pub fn url(&self) -> String {
        self.settings.url(self.port)
    }

    /// A setup session to the running server.
    fn session(&self, timeout: Duration) -> Result<Box<dyn SetupSession>, String> {
        let url = self.url();
        let addr = SetupAddr {
            uri: &url,
            netns: None,
            timeout,
        };
        crate::wire::mysql::setup::connect(&addr)
    }

    /// Writes `my.cnf` and `init.sql` and runs `mariadb-install-db` inside
    /// the placement.
    fn prepare(
        &mut self,
        placement: &Placement,
        shutdown: &Shutdown,
    ) -> Result<PathBuf, ServerError> {
        // mariadb-install-db (a shell script) splits the data directory at
        // whitespace and then fails on the pieces; my.cnf itself quotes it.
        super::conf_path::refuse_in_workdir(
            KIND,
            &self.base_dir,
            char::is_whitespace,
            "has whitespace, which mariadb-install-db cannot handle",
        )?;
        let dir = super::rundir::create(&self.base_dir, super::rundir::MARIADB)
            .map_err(|e| ServerError::io(&self.base_dir, e))?;
        let path = dir.path().to_path_buf();
        self.dir = Some(dir);
        super::conf_path::check_socket(KIND, &path.join(settings::SOCKET))?;
        // A private tmpdir: concurrent servers' temporary table names collide in /tmp.
        let tmp = path.join("tmp");
        std::fs::create_dir_all(&tmp).map_err(|e| ServerError::io(&tmp, e))?;
        self.ca_pem = match self.settings.tls {
            true => Some(self.make_cert(&path)?),
            false => None,
        };
        let cnf = self.settings.render(&path, self.port, &server_user());
        write(&path.join("my.cnf"), &cnf)?;
        write(&path.join("init.sql"), &self.settings.init_sql())?;
        self.effective = Some(cnf);
        let mut cmd = Command::new(find(INSTALL_DB)?);
        cmd.arg(format!("--defaults-file={}", path.join("my.cnf").display()))
            .arg(format!("--user={}", server_user()))
            .args(["--skip-test-db", "--auth-root-authentication-method=socket"]);
        let out = path.join("install-db.log");
        let (status, _) = super::bounded::run_bounded(
            cmd,
            KIND,
            "mariadb-install-db",
            &out,
            INSTALL_TIMEOUT,
            shutdown,
            placement,
        )?;
        if !status.success() {
            // The bootstrap server logs its reasons to log-error, not stdout.
            return Err(start_error(format!(
                "mariadb-install-db failed ({status}); last lines of {}:\n{}",
                path.join("error.log").display(),
                log_tail(&path.join("error.log"), LOG_LINES)
            )));
        }
        Ok(path)
    }

    /// This start's CA and certificate in `dir/tls/` (the start's private
    /// directory, which goes with it); the CA's certificate.
    fn make_cert(&self, dir: &Path) -> Result<String, ServerError> {
        let mut ips = vec![self.settings.listen_addr()];
        if ips[0] != std::net::IpAddr::from(std::net::Ipv4Addr::LOCALHOST) {
            ips.push(std::net::Ipv4Addr::LOCALHOST.into());
        }
        crate::tls::cert::make(dir, self.settings.tls_key, &["localhost"], &ips)
            .map(|made| made.ca_pem)
            .map_err(|e| start_error(e.to_string()))
    }

    fn launch(&mut self, dir: &Path, placement: &Placement) -> Result<u32, ServerError> {
        let stderr =
            std::fs::File::create(dir.join("stderr.log")).map_err(|e| ServerError::io(dir, e))?;
        let mut cmd = Command::new(find(SERVER_BINARIES)?);
        // --defaults-file must come first.
        cmd.arg(format!("--defaults-file={}", dir.join("my.cnf").display()));
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        let server = ServerProcess::spawn(cmd, placement).map_err(|e| ServerError::io(dir, e))?;
        let pid = server.pid();
        self.server = Some(server);
        Ok(pid)
    }

    fn start_failure(&self, dir: &Path, what: &str) -> ServerError {
        start_error(format!(
            "{what}; last lines of {}:\n{}",
            dir.join("error.log").display(),
            log_tail(&dir.join("error.log"), LOG_LINES)
        ))
    }

    fn wait_ready(&self, pid: u32, dir: &Path, shutdown: &Shutdown) -> Result<(), ServerError> {
        let waited = process::wait_session_ready(READY_TIMEOUT, shutdown, pid, || {
            self.session(Duration::from_secs(1))
        });
        match waited {
            Ok(()) => Ok(()),
            Err((WaitError::Interrupted, _)) => Err(ServerError::Interrupted),
            Err((WaitError::Died, _)) => {
                Err(self.start_failure(dir, "mariadbd exited during startup"))
            }
            Err((WaitError::TimedOut, last)) => Err(ServerError::NotReady {
                kind: KIND,
                waited_s: READY_TIMEOUT.as_secs_f64(),
                message: format!(
                    "{last}; last lines of error.log:\n{}",
                    log_tail(&dir.join("error.log"), LOG_LINES)
                ),
            }),
        }
    }

    /// Builds the dataset and records version and effective variables.
    fn after_launch(&mut self) -> Result<(), ServerError> {
        let mut s = self
            .session(Duration::from_secs(30))
            .map_err(|e| start_error(format!("cannot connect to the server: {e}")))?;
        self.version = s.server_version();
        if let Some(d) = self.wanted.clone() {
            s.load(&d)
                .map_err(|e| start_error(format!("building the sysbench dataset failed: {e}")))?;
            self.dataset = Some(DatasetInfo {
                description: d.describe(),
                bytes: s.size().unwrap_or(0),
            });
        }
        let dump = s
            .settings_dump(&self.settings.variable_names())
            .map_err(|e| start_error(format!("reading the effective variables: {e}")))?;
        let mut text = self.effective.take().unwrap_or_default();
        text.push_str(&dump);
        self.effective = Some(text);
        Ok(())
    }
}

/// `Ok` for no dataset or sysbench's, the only one a MariaDB holds.
fn holds(dataset: Option<&Dataset>) -> Result<(), ServerError> {
    match dataset {
        None | Some(Dataset::Sysbench { .. }) => Ok(()),
        Some(other) => {
            let holds = "sysbench's dataset (`[load] kind = \"mysql\"`, `tables`)";
            Err(super::wrong_dataset(KIND, holds, other))
        }
    }
}

fn write(path: &Path, text: &str) -> Result<(), ServerError> {
    std::fs::write(path, text).map_err(|e| ServerError::io(path, e))
}

impl Server for Mariadb {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn server_log(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.path().join("error.log"))
    }

    fn wait_counters(&self) -> Option<crate::probe::limiter::server_waits::WaitCounters> {
        self.server.as_ref()?;
        waits::read(&self.url())
    }

    fn start(
        &mut self,
        placement: &Placement,
        dataset: Option<&Dataset>,
        shutdown: &Shutdown,
    ) -> Result<Endpoint, ServerError> {
        self.stop()?;
        holds(dataset)?;
        self.wanted = dataset.cloned();
        self.dataset = None;
        self.port = match self.settings.port {
            Some(p) => p,
            None => process::free_port().map_err(|e| start_error(format!("no free port: {e}")))?,
        };
        let started = self.prepare(placement, shutdown).and_then(|dir| {
            let pid = self.launch(&dir, placement)?;
            self.wait_ready(pid, &dir, shutdown)?;
            self.after_launch()
        });
        if let Err(e) = started {
            let _ = self.stop();
            return Err(e);
        }
        Ok(Endpoint {
            ca_pem: self.ca_pem.clone(),
            uri: self.url(),
        })
    }

    fn stop(&mut self) -> Result<(), ServerError> {
        let stopped = super::stop_process(KIND, &mut self.server, libc::SIGTERM, STOP_GRACE);
        self.dir = None;
        self.ca_pem = None;
        stopped
    }

    fn server_process(&self) -> Option<&ServerProcess> {
        self.server.as_ref()
    }

    fn listen_port(&self) -> Option<u16> {
        self.server.as_ref().map(|_| self.port)
    }

    fn version(&self) -> Option<String> {
        self.version.clone()
    }

    fn effective_config(&self) -> Option<String> {
        self.effective.clone()
    }

    fn dataset(&self) -> Option<DatasetInfo> {
        self.dataset.clone()
    }
}

impl Drop for Mariadb {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
