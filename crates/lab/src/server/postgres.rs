//! A managed PostgreSQL: initdb, start, stop, and pgbench's dataset.
//!
//! The dataset is the workload's ([`Dataset::Pgbench`], handed to
//! [`Server::start`]); how it is cached is this target's. The cluster lives
//! under `BASE/postgres/scale-<S>-<hash>/` (`data/`, `server.log`,
//! `dataset.json`; S is 0 without a dataset), where the hash covers what
//! initdb and the dataset depend on (server binary and version). It is kept
//! across trials and runs: a marker written after initdb and the dataset
//! load say it is complete, so a later start at the same scale reuses it,
//! and an interrupted build is redone. Settings that only need a restart
//! (`shared_buffers`, ...) go to `data/scalelab.conf`, rewritten at every
//! start, so changing them never forces a re-init.
//!
//! PostgreSQL refuses to run as root, so as root `initdb` runs as
//! `postgres` through `runuser`, and the server runs as `postgres` by a
//! uid switch in the child. The server listens on 127.0.0.1 and a private
//! socket directory and trusts local connections. The `postgres` binary
//! itself runs in the foreground through [`ServerProcess`] (not `pg_ctl`,
//! which daemonizes and would outlive a killed scalelab), inside the
//! placement, so every server process inherits its CPU and memory limits
//! and a stop or a dead scalelab takes down every backend too. Under a
//! memory limit, every start first drops the cluster's files from the page
//! cache, so the limit bounds the dataset's cache however it was cached
//! before (a reused cluster, another run).

mod bare;
mod os;
mod settings;

pub use settings::{ConfValue, PostgresSettings};

use super::rundir;
use super::{DatasetInfo, Endpoint, Placement, Server, ServerError, Shutdown};
use crate::model::{Dataset, SetupAddr, SetupSession};
use crate::owned::{self, OwnedDir};
use crate::sys::lifecycle::ServerProcess;
use crate::sys::process::{self, log_tail};
use os::ServerUser;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

const KIND: &str = "postgres";

/// The `postgres` server kind.
pub const SERVER_KIND: super::ServerKind = super::ServerKind {
    name: KIND,
    serves: Some(crate::model::Protocol::POSTGRES),
    parallelism: &[],
    requires: &[
        crate::kinds::Requirement {
            what: "PostgreSQL server",
            package: "postgresql",
            paths: &["/usr/lib/postgresql/*/bin/postgres"],
        },
        crate::kinds::Requirement {
            what: "runuser (PostgreSQL refuses root)",
            package: "util-linux",
            paths: &["/usr/sbin/runuser", "/sbin/runuser"],
        },
    ],
    compile: |t| Ok(Box::new(PostgresSettings::parse(t)?)),
    runs_under_agent: true,
    listens_on_host_address: true,
    dns_lab: None,
    start_estimate: std::time::Duration::from_millis(2000),
    facts: None,
};
const INITDB_ARGS: &[&str] = &[
    "-U",
    "postgres",
    "--auth=trust",
    "--encoding=UTF8",
    "--locale=C",
    "--no-sync",
];
const START_TIMEOUT: Duration = Duration::from_secs(120);
const READY_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
const LOG_LINES: usize = 15;

/// Written once the cluster (and dataset, if any) is complete.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Marker {
    scale: u32,
    version: String,
}

struct Running {
    server: ServerProcess,
    port: u16,
    /// Private socket directory (`/tmp/scalelab-pg-<PID>-<random>`), short
    /// enough for the socket path limit; removed when dropped, and by the
    /// reaper if scalelab is killed. With `tls = true` it also holds the
    /// start's CA, certificate and key (`tls/`).
    _socket_dir: OwnedDir,
    /// With `tls = true`: the CA's certificate, for the load.
    ca_pem: Option<String>,
}

/// The PostgreSQL target: `postgres` on a private cluster made by `initdb` (reused while its
/// settings and dataset still match, see the module doc), listening on loopback (or the
/// `[hosts]` address).
pub struct Postgres {
    settings: PostgresSettings,
    bin_dir: PathBuf,
    version: String,
    user: ServerUser,
    base_dir: PathBuf,
    /// Covers what initdb and the dataset depend on (see the module doc).
    hash: u64,
    /// The pgbench scale of the cluster in use (0: no dataset).
    scale: u32,
    instance: PathBuf,
    running: Option<Running>,
    dataset: Option<DatasetInfo>,
    effective: Option<String>,
}

fn start_error(message: impl Into<String>) -> ServerError {
    ServerError::Start {
        kind: KIND,
        message: message.into(),
    }
}

impl Postgres {
    /// A PostgreSQL target from its `[server]` table; finds the binaries but starts nothing
    /// until `start`. `base_dir` holds the clusters.
    pub fn new(settings: &toml::Table, base_dir: &Path) -> Result<Postgres, ServerError> {
        Self::with_settings(PostgresSettings::parse(settings)?, base_dir)
    }

    /// A PostgreSQL target from its checked settings (see [`Postgres::new`]).
    pub fn with_settings(
        settings: PostgresSettings,
        base_dir: &Path,
    ) -> Result<Postgres, ServerError> {
        let bin_dir = match &settings.bin_dir {
            Some(d) => d.clone(),
            None => os::newest_bin_dir().ok_or_else(|| ServerError::Missing {
                kind: KIND,
                message: "no /usr/lib/postgresql/*/bin/postgres found (install postgresql, \
                          or set bin_dir)"
                    .into(),
            })?,
        };
        for tool in ["postgres", "initdb"] {
            if !bin_dir.join(tool).is_file() {
                return Err(ServerError::Missing {
                    kind: KIND,
                    message: format!(
                        "{} does not exist (check bin_dir)",
                        bin_dir.join(tool).display()
                    ),
                });
            }
        }
        let version = server_version(&bin_dir)?;
        let hash = os::stable_hash(&[
            &version,
            &bin_dir.display().to_string(),
            &INITDB_ARGS.join(" "),
        ]);
        Ok(Postgres {
            settings,
            bin_dir,
            version,
            user: ServerUser::detect()?,
            base_dir: base_dir.to_path_buf(),
            hash,
            scale: 0,
            instance: instance_dir(base_dir, 0, hash),
            running: None,
            dataset: None,
            effective: None,
        })
    }

    /// The cluster's data directory (`PGDATA`).
    pub fn data_dir(&self) -> PathBuf {
        self.instance.join("data")
    }

    /// The server's log file (its stderr).
    pub fn log_path(&self) -> PathBuf {
        self.instance.join("server.log")
    }

    /// The PID of the scalelab process that started the running server.
    fn owner_path(&self) -> PathBuf {
        self.instance.join("owner.pid")
    }

    /// A server still running on this data directory is left over when the
    /// scalelab that started it is gone (killed before it could stop it):
    /// stop it. One whose owner is alive belongs to a concurrent run.
    fn reclaim_leftover(&self) -> Result<(), ServerError> {
        let data = self.data_dir();
        let Some(pid) = os::postmaster_pid(&data).filter(|&p| os::is_server_process(p)) else {
            os::remove_stale_lock(&data);
            return Ok(());
        };
        let owner: Option<u32> = std::fs::read_to_string(self.owner_path())
            .ok()
            .and_then(|t| t.trim().parse().ok());
        if let Some(o) = owner.filter(|&o| o != std::process::id() && process::is_alive(o)) {
            return Err(start_error(format!(
                "{} is in use by a postgres (pid {pid}) that scalelab process {o} started; \
                 wait for that run, or use another SCALELAB_WORKDIR",
                data.display()
            )));
        }
        let socket_dir = os::postmaster_socket_dir(&data);
        self.kill_leftovers();
        os::remove_stale_lock(&data);
        // The dead run's private socket directory, if the reaper left it.
        let ours = |d: &PathBuf| {
            d.parent() == Some(Path::new(rundir::TMP_BASE))
                && d.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| owned::owner_of(n, rundir::PG_SOCKETS))
                    .is_some()
        };
        if let Some(dir) = socket_dir.filter(ours) {
            let _ = std::fs::remove_dir_all(dir);
        }
        Ok(())
    }

    fn marker_path(&self) -> PathBuf {
        self.instance.join("dataset.json")
    }

    /// The libpq connection string of the running server.
    pub fn conninfo(&self) -> Option<String> {
        self.running.as_ref().map(|r| {
            format!(
                "host={} port={} user=postgres dbname=postgres",
                self.settings.listen_addr(),
                r.port
            )
        })
    }

    /// A setup session to the running server.
    fn session(&self, timeout: Duration) -> Result<Box<dyn SetupSession>, String> {
        let info = self
            .conninfo()
            .ok_or_else(|| "the server is not running".to_string())?;
        let addr = SetupAddr {
            uri: &info,
            netns: None,
            timeout,
        };
        crate::wire::pg::setup::connect(&addr)
    }

    /// A setup session to the running server.
    fn connect(&self) -> Result<Box<dyn SetupSession>, ServerError> {
        self.session(Duration::from_secs(10))
            .map_err(|e| start_error(format!("cannot connect to the server: {e}")))
    }

    /// The dataset of the cluster in use (none at scale 0).
    fn wanted_dataset(&self) -> Option<Dataset> {
        let scale = self.scale;
        (scale > 0).then_some(Dataset::Pgbench { scale })
    }

    /// Switches to the cluster of `dataset` (one per scale), refusing data
    /// a PostgreSQL does not hold.
    fn use_dataset(&mut self, dataset: Option<&Dataset>) -> Result<(), ServerError> {
        holds(dataset)?;
        self.scale = match dataset {
            Some(Dataset::Pgbench { scale }) => *scale,
            _ => 0,
        };
        self.instance = instance_dir(&self.base_dir, self.scale, self.hash);
        Ok(())
    }

    /// Creates the directories the server user needs, owned by it.
    fn prepare_dirs(&self) -> Result<(), ServerError> {
        let parent = self.base_dir.join("postgres");
        std::fs::create_dir_all(&self.instance).map_err(|e| ServerError::io(&self.instance, e))?;
        os::make_traversable(&self.base_dir)?;
        os::make_traversable(&parent)?;
        self.user.own(&self.instance)?;
        self.user.check_writable(&self.instance)
    }

    /// Whether a complete cluster for this scale and version is on disk.
    fn is_complete(&self) -> bool {
        let marker: Option<Marker> = std::fs::read_to_string(self.marker_path())
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        marker.is_some_and(|m| m.scale == self.scale && m.version == self.version)
            && self.data_dir().join("PG_VERSION").is_file()
    }

    fn initdb(&self, shutdown: &Shutdown) -> Result<(), ServerError> {
        let data = self.data_dir();
        let _ = std::fs::remove_file(self.marker_path());
        if data.exists() {
            std::fs::remove_dir_all(&data).map_err(|e| ServerError::io(&data, e))?;
        }
        let mut cmd = self.user.command(&self.bin_dir.join("initdb"));
        cmd.args(INITDB_ARGS).arg("-D").arg(&data);
        let (status, output) = self.run_bounded(cmd, "initdb", START_TIMEOUT, shutdown)?;
        if !status.success() {
            return Err(start_error(format!("initdb failed ({status}):\n{output}")));
        }
        let conf = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf).map_err(|e| ServerError::io(&conf, e))?;
        text.push_str(
            "\n# Per-start settings written by scalelab.\ninclude_if_exists = 'scalelab.conf'\n",
        );
        std::fs::write(&conf, text).map_err(|e| ServerError::io(&conf, e))
    }

    fn write_marker(&self) -> Result<(), ServerError> {
        let m = Marker {
            scale: self.scale,
            version: self.version.clone(),
        };
        let path = self.marker_path();
        let text = serde_json::to_string_pretty(&m).unwrap_or_default();
        std::fs::write(&path, text).map_err(|e| ServerError::io(&path, e))
    }

    fn write_conf(&self, port: u16, socket_dir: &Path) -> Result<String, ServerError> {
        let data = self.data_dir();
        let conf = self.settings.render_conf(port, socket_dir);
        let path = data.join("scalelab.conf");
        std::fs::write(&path, &conf).map_err(|e| ServerError::io(&path, e))?;
        let hba = data.join("pg_hba.conf");
        let rules = self.settings.hba_rules();
        std::fs::write(&hba, rules).map_err(|e| ServerError::io(&hba, e))?;
        Ok(conf)
    }

    fn socket_dir(&self) -> Result<OwnedDir, ServerError> {
        let base = Path::new(rundir::TMP_BASE);
        let dir = rundir::create(base, rundir::PG_SOCKETS).map_err(|e| ServerError::io(base, e))?;
        self.user.own(dir.path())?;
        Ok(dir)
    }

    /// With `tls = true`, this start's CA and certificate in `dir/tls/`
    /// (the socket directory, which goes with the start), given to the
    /// server user (PostgreSQL refuses a key others can read); its CA's
    /// certificate.
    fn make_cert(&self, dir: &Path) -> Result<Option<String>, ServerError> {
        if !self.settings.tls {
            return Ok(None);
        }
        let mut ips = vec![self.settings.listen_addr()];
        if ips[0] != std::net::IpAddr::from(std::net::Ipv4Addr::LOCALHOST) {
            ips.push(std::net::Ipv4Addr::LOCALHOST.into());
        }
        let made = crate::tls::cert::make(dir, self.settings.tls_key, &["localhost"], &ips)
            .map_err(|e| start_error(e.to_string()))?;
        for path in [dir.join("tls"), made.cert_file, made.key_file, made.ca_file] {
            self.user.own(&path)?;
        }
        Ok(Some(made.ca_pem))
    }

    /// Starts on the configured port, or on a free one; a free port taken by
    /// someone else before the server binds it is retried with another.
    fn launch_on_a_port(
        &self,
        placement: &Placement,
        shutdown: &Shutdown,
    ) -> Result<(ServerProcess, u16, OwnedDir, String, Option<String>), ServerError> {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let port = match self.settings.port {
                Some(p) => p,
                None => {
                    process::free_port().map_err(|e| start_error(format!("no free port: {e}")))?
                }
            };
            let socket_dir = self.socket_dir()?;
            let ca_pem = self.make_cert(socket_dir.path())?;
            let conf = self.write_conf(port, socket_dir.path())?;
            match self.launch(placement, port, shutdown) {
                Ok(server) => return Ok((server, port, socket_dir, conf, ca_pem)),
                Err(e) if self.settings.port.is_none() && attempts < 3 && port_taken(&e) => {
                    continue
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Starts `postgres -D DATA` in the foreground inside the placement and
    /// waits until it accepts TCP connections on `port`.
    fn launch(
        &self,
        placement: &Placement,
        port: u16,
        shutdown: &Shutdown,
    ) -> Result<ServerProcess, ServerError> {
        let data = self.data_dir();
        let log = self.log_path();
        let file = std::fs::File::create(&log).map_err(|e| ServerError::io(&log, e))?;
        let err = file.try_clone().map_err(|e| ServerError::io(&log, e))?;
        self.user.own(&log)?;
        let mut cmd = Command::new(self.bin_dir.join("postgres"));
        cmd.arg("-D").arg(&data).current_dir(&data);
        cmd.stdin(Stdio::null()).stdout(file).stderr(err);
        let mut server = ServerProcess::spawn_as(cmd, placement, self.user.ids())
            .map_err(|e| start_error(format!("cannot run postgres: {e}")))?;
        let pid = server.pid();
        let addr = ([127, 0, 0, 1], port).into();
        let waited = process::wait_ready(
            START_TIMEOUT,
            shutdown,
            || process::is_alive(pid),
            || process::tcp_accepts(addr),
        );
        let failure = match waited {
            Ok(()) => return Ok(server),
            Err(process::WaitError::Interrupted) => None,
            Err(process::WaitError::Died) => Some("postgres exited during startup"),
            Err(process::WaitError::TimedOut) => Some("postgres did not listen in time"),
        };
        let _ = server.stop(libc::SIGQUIT, Duration::from_secs(2));
        self.kill_leftovers();
        match failure {
            None => Err(ServerError::Interrupted),
            Some(what) => Err(start_error(format!(
                "{what}; last lines of {}:\n{}",
                log.display(),
                log_tail(&log, LOG_LINES)
            ))),
        }
    }

    /// Waits until the server answers a query.
    fn wait_ready(&self, pid: u32, shutdown: &Shutdown) -> Result<(), ServerError> {
        let waited = process::wait_session_ready(READY_TIMEOUT, shutdown, pid, || {
            self.session(Duration::from_secs(1))
        });
        match waited {
            Ok(()) => Ok(()),
            Err((process::WaitError::Interrupted, _)) => Err(ServerError::Interrupted),
            Err((w, last_error)) => Err(ServerError::NotReady {
                kind: KIND,
                waited_s: READY_TIMEOUT.as_secs_f64(),
                message: format!(
                    "{} ({last_error}); last lines of {}:\n{}",
                    if w == process::WaitError::Died {
                        "the server exited"
                    } else {
                        "no answer"
                    },
                    self.log_path().display(),
                    log_tail(&self.log_path(), LOG_LINES)
                ),
            }),
        }
    }

    /// After the server is up: builds the dataset on a fresh cluster, then
    /// records the dataset size and the effective settings.
    fn after_launch(
        &mut self,
        fresh: bool,
        conf: String,
        shutdown: &Shutdown,
    ) -> Result<(), ServerError> {
        let pid = self.running.as_ref().map_or(0, |r| r.server.pid());
        self.wait_ready(pid, shutdown)?;
        let mut session = self.connect()?;
        let wanted = self.wanted_dataset();
        if fresh {
            if let Some(d) = &wanted {
                session.load(d).map_err(|e| {
                    start_error(format!(
                        "building the pgbench dataset at scale {} failed: {e}",
                        self.scale
                    ))
                })?;
            }
            self.write_marker()?;
        }
        if let Some(d) = wanted {
            let bytes = session
                .size()
                .map_err(|e| start_error(format!("reading the database size: {e}")))?;
            self.dataset = Some(DatasetInfo {
                description: d.describe(),
                bytes,
            });
        }
        // An unreadable pg_settings leaves the dump out, as it always did.
        self.effective = Some(conf + &session.settings_dump(&[]).unwrap_or_default());
        Ok(())
    }

    /// Ends every process still working in the data directory: the
    /// postmaster from `postmaster.pid`, then any orphaned backends.
    fn kill_leftovers(&self) {
        os::stop_server_processes(&self.data_dir());
    }

    /// Runs a server command to completion, its output in the instance
    /// directory.
    fn run_bounded(
        &self,
        cmd: Command,
        what: &str,
        limit: Duration,
        shutdown: &Shutdown,
    ) -> Result<(ExitStatus, String), ServerError> {
        let out = self
            .instance
            .join(format!("{}.out", what.replace(' ', "-")));
        super::bounded::run_bounded(
            cmd,
            KIND,
            what,
            &out,
            limit,
            shutdown,
            &Placement::unconstrained(),
        )
    }
}

/// `Ok` for no dataset or pgbench's, the only one a PostgreSQL holds.
fn holds(dataset: Option<&Dataset>) -> Result<(), ServerError> {
    match dataset {
        None | Some(Dataset::Pgbench { .. }) => Ok(()),
        Some(other) => {
            let holds = "pgbench's dataset (`[load] kind = \"pg\"`, `scale`)";
            Err(super::wrong_dataset(KIND, holds, other))
        }
    }
}

/// `BASE/postgres/scale-<S>-<hash>`: one cluster per scale and server build.
fn instance_dir(base_dir: &Path, scale: u32, hash: u64) -> PathBuf {
    base_dir
        .join("postgres")
        .join(format!("scale-{scale}-{hash:016x}"))
}

fn port_taken(e: &ServerError) -> bool {
    e.to_string().contains("could not bind")
}

fn server_version(bin_dir: &Path) -> Result<String, ServerError> {
    let out = Command::new(bin_dir.join("postgres"))
        .arg("--version")
        .output()
        .map_err(|e| ServerError::Missing {
            kind: KIND,
            message: format!("cannot run {}/postgres: {e}", bin_dir.display()),
        })?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Server for Postgres {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn server_log(&self) -> Option<PathBuf> {
        Some(self.log_path())
    }

    fn fixed_port(&self) -> Option<u16> {
        self.settings.port
    }

    fn start(
        &mut self,
        placement: &Placement,
        dataset: Option<&Dataset>,
        shutdown: &Shutdown,
    ) -> Result<Endpoint, ServerError> {
        self.stop()?;
        self.use_dataset(dataset)?;
        self.dataset = None;
        self.prepare_dirs()?;
        self.reclaim_leftover()?;
        let fresh = !self.is_complete();
        if fresh {
            self.initdb(shutdown)?;
        }
        if placement.memory.is_some() {
            os::drop_cached(&self.data_dir())?;
        }
        let (server, port, socket_dir, conf, ca_pem) =
            self.launch_on_a_port(placement, shutdown)?;
        let owner = self.owner_path();
        std::fs::write(&owner, std::process::id().to_string())
            .map_err(|e| ServerError::io(&owner, e))?;
        self.running = Some(Running {
            server,
            port,
            _socket_dir: socket_dir,
            ca_pem,
        });
        if let Err(e) = self.after_launch(fresh, conf, shutdown) {
            let _ = self.stop();
            return Err(e);
        }
        let ca_pem = self.running.as_ref().and_then(|r| r.ca_pem.clone());
        let mut uri = self.conninfo().unwrap_or_default();
        if ca_pem.is_some() {
            uri.push_str(" sslmode=verify-full");
        }
        Ok(Endpoint { ca_pem, uri })
    }

    fn stop(&mut self) -> Result<(), ServerError> {
        let Some(mut running) = self.running.take() else {
            return Ok(());
        };
        // SIGINT is PostgreSQL's fast shutdown: abort transactions, close
        // connections, checkpoint, exit.
        let stopped = running.server.stop(libc::SIGINT, STOP_TIMEOUT);
        self.kill_leftovers();
        let _ = std::fs::remove_file(self.owner_path());
        stopped.map_err(|e| ServerError::stop(KIND, e))
    }

    fn server_process(&self) -> Option<&ServerProcess> {
        self.running.as_ref().map(|r| &r.server)
    }

    fn listen_port(&self) -> Option<u16> {
        self.running.as_ref().map(|r| r.port)
    }

    fn version(&self) -> Option<String> {
        Some(self.version.clone())
    }

    fn effective_config(&self) -> Option<String> {
        self.effective.clone()
    }

    fn dataset(&self) -> Option<DatasetInfo> {
        self.dataset.clone()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
