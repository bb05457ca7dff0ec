//! A managed server on a host without an agent: a [`Server`] whose
//! lifecycle is the [`script`](super::script) run by one long-lived shell
//! on the host. It starts the host's own binary with the configuration
//! the kind writes here too, waits until it answers, and stops it by PID;
//! a failed start brings the server's logs back in its error.

use super::script::server_script;
use super::session::{written, Session, SessionError};
use crate::model::{Dataset, SetupAddr, SetupSession};
use crate::placement::Placement;
use crate::remote::ssh::Ssh;
use crate::remote::Host;
use crate::server::bare::{BareHost, BareReady, BareServer, HostOs};
use crate::server::{DatasetInfo, Endpoint, Liveness, Server, ServerError, ServerPlan};
use crate::shutdown::Shutdown;
use std::time::{Duration, Instant};

/// How long the server may take to answer after its start (a database
/// on a slow host: MariaDB's limit on Linux).
const READY_LIMIT: Duration = Duration::from_secs(60);

/// How long the shell may take to start it, its steps (`initdb`,
/// `mariadb-install-db`) included: PostgreSQL's start limit on Linux.
const LAUNCH_LIMIT: Duration = Duration::from_secs(120);

/// The start of a bare server's private directory name on its host.
pub const DIR_PREFIX: &str = "scalelab-bare-";

/// A server of a kind's [`BareServer`], run on `host` by its shell.
pub struct AgentlessServer {
    ssh: Ssh,
    host: Host,
    server: BareServer,
    dir: String,
    pin: Option<String>,
    session: Option<Session>,
    pid: Option<u32>,
    version: Option<String>,
    dataset: Option<DatasetInfo>,
    effective: Option<String>,
}

/// The host's OS, from `uname -s` over ssh.
pub fn host_os(ssh: &Ssh, host: &Host) -> Result<HostOs, String> {
    ssh.run(host, "uname -s", None, Duration::from_secs(15))
        .map(|t| HostOs::from_uname(&t))
        .map_err(|e| e.to_string())
}

/// Builds `plan`'s server for `host`, in a fresh private directory under
/// `base_dir` there, pinned to `cpus` with the OS's own command. A memory
/// limit needs cgroups and is refused, as is a pin on an OS without a
/// command for it.
pub fn build(
    ssh: &Ssh,
    host: &Host,
    plan: &dyn ServerPlan,
    base_dir: &std::path::Path,
    cpus: Option<Vec<usize>>,
    memory: Option<u64>,
) -> Result<Box<dyn Server>, ServerError> {
    let refuse = |message: String| ServerError::Settings {
        kind: "server",
        message: format!("host {host} (no agent): {message}"),
    };
    if memory.is_some() {
        return Err(refuse(
            "server_memory needs a cgroup, which only an agent on Linux makes; leave it out for this host"
                .into(),
        ));
    }
    let os = host_os(ssh, host).map_err(refuse)?;
    let pin = match cpus {
        Some(list) => Some(os.pin_command(&list).map_err(refuse)?),
        None => None,
    };
    let dir = format!(
        "{}/{DIR_PREFIX}{}-{}",
        base_dir.display(),
        std::process::id(),
        unique()
    );
    let bare_host = BareHost {
        dir: dir.clone().into(),
        port: pick_port(host),
        os,
    };
    let server = plan.bare(&bare_host)?;
    Ok(Box::new(AgentlessServer {
        ssh: ssh.clone(),
        host: host.clone(),
        server,
        dir,
        pin,
        session: None,
        pid: None,
        version: None,
        dataset: None,
        effective: None,
    }))
}

/// A number no other directory of this process has had.
pub(crate) fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    (N.fetch_add(1, Ordering::SeqCst) << 32) | nanos
}

/// A port in 20000..40000 that nothing on `host` accepts connections on,
/// as seen from here (the kind's fixed `port`, if any, wins over it).
fn pick_port(host: &Host) -> u16 {
    let mut rng = crate::rng::SplitMix64(unique());
    let mut port = 20000 + rng.below(20000) as u16;
    if let Some(ip) = host.ip() {
        for _ in 0..10 {
            let addr = std::net::SocketAddr::new(ip, port);
            if std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
                break;
            }
            port = 20000 + rng.below(20000) as u16;
        }
    }
    port
}

impl AgentlessServer {
    fn error(&self, message: String) -> ServerError {
        ServerError::Start {
            kind: self.server.kind,
            message: format!("on {} (no agent): {message}", self.host),
        }
    }

    /// A session that could not start: a full disk is its own error.
    fn session_error(&self, e: SessionError) -> ServerError {
        match e {
            SessionError::DiskFull(message) => ServerError::DiskFull {
                kind: self.server.kind,
                message: format!("on {} (no agent): {message}", self.host),
            },
            SessionError::Ssh(message) => self.error(message),
        }
    }

    /// The server's logs from its host, as the script prints them.
    fn logs(&self) -> String {
        let Some(s) = self.session.as_ref() else {
            return String::new();
        };
        if s.send("log").is_err() {
            return String::new();
        }
        match s.until(&["#end"], Duration::from_secs(10)) {
            Ok(lines) => lines
                .iter()
                .filter(|l| !l.starts_with('#'))
                .cloned()
                .collect::<Vec<_>>()
                .join("\n"),
            Err(e) => e,
        }
    }

    /// Whether the script still sees the server running.
    fn alive(&self) -> bool {
        self.status() == Liveness::Running
    }

    /// What the script says of the server; when the host does not answer
    /// over ssh, why, and whether the server itself still answers its
    /// protocol (the second channel: the port the load used).
    fn status(&self) -> Liveness {
        let Some(s) = self.session.as_ref() else {
            return Liveness::Gone;
        };
        let said = s
            .send("status")
            .and_then(|()| s.until(&["#running", "#gone"], Duration::from_secs(10)));
        match said {
            Ok(l) if l.last().is_some_and(|l| l == "#running") => Liveness::Running,
            Ok(_) => Liveness::Gone,
            Err(e) => {
                let server = match self.answers() {
                    Ok(()) => format!(
                        "the server itself still answered at {}",
                        self.server.endpoint
                    ),
                    Err(why) => format!(
                        "the server does not answer at {} either ({why})",
                        self.server.endpoint
                    ),
                };
                Liveness::Unknown(format!("{e}; {server}"))
            }
        }
    }

    /// Starts the script and reads its lines up to `#started PID`.
    fn launch(&mut self) -> Result<u32, ServerError> {
        let script =
            server_script(&self.server, &self.dir, self.pin.as_deref()).ok_or_else(|| {
                self.error("a file holds the script's here-document delimiter".into())
            })?;
        let what = format!("{} on {}", self.server.kind, self.host);
        let name = format!("{DIR_PREFIX}{}.sh", unique());
        let parent = std::path::Path::new(&self.dir)
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "/tmp".into());
        let session = Session::start_remote(&self.ssh, &self.host, &parent, &name, &script, what)
            .map_err(|e| self.session_error(e))?;
        let lines = session
            .until(&["#started", "#error"], LAUNCH_LIMIT)
            .map_err(|e| self.error(e))?;
        self.session = Some(session);
        for l in &lines {
            if let Some(v) = l.strip_prefix("#version ") {
                // `nginx version: nginx/1.22.1`: the part after the label.
                let v = v.rsplit_once(": ").map_or(v, |(_, after)| after);
                self.version = Some(v.trim().to_string()).filter(|v| !v.is_empty());
            }
        }
        let last = lines.last().map(String::as_str).unwrap_or("");
        if let Some(e) = last.strip_prefix("#error ") {
            if let e @ SessionError::DiskFull(_) = written("", &parent, &lines, e) {
                return Err(self.session_error(e));
            }
            let log: Vec<&str> = lines
                .iter()
                .map(String::as_str)
                .filter(|l| !l.starts_with('#'))
                .collect();
            return Err(match log.is_empty() {
                true => self.error(e.to_string()),
                false => self.error(format!("{e}; its log says:\n{}", log.join("\n"))),
            });
        }
        last.strip_prefix("#started ")
            .and_then(|p| p.trim().parse().ok())
            .ok_or_else(|| self.error(format!("unexpected line `{last}`")))
    }

    /// A setup session to the server, for a kind that has one (a database).
    fn setup_session(&self, timeout: Duration) -> Option<Result<Box<dyn SetupSession>, String>> {
        let addr = |uri| SetupAddr {
            uri,
            netns: None,
            timeout,
        };
        match &self.server.ready {
            BareReady::Http(..) => None,
            BareReady::Postgres(uri) => Some(crate::wire::pg::setup::connect(&addr(uri))),
            BareReady::Mysql(uri) => Some(crate::wire::mysql::setup::connect(&addr(uri))),
        }
    }

    /// Whether the server answers its protocol's request, or why not.
    fn answers(&self) -> Result<(), String> {
        match &self.server.ready {
            BareReady::Http(addr, port) => crate::server::nginx::answers(*addr, *port)
                .then_some(())
                .ok_or_else(|| "no HTTP 200".to_string()),
            BareReady::Postgres(_) | BareReady::Mysql(_) => {
                match self.setup_session(Duration::from_secs(1)) {
                    Some(Ok(_)) => Ok(()),
                    Some(Err(e)) => Err(e),
                    None => Err("no session".into()),
                }
            }
        }
    }

    /// After it answers: loads `dataset` over a setup session (a database
    /// starts empty in its fresh private directory) and records its size
    /// and the settings the server reports.
    fn after_ready(&mut self, dataset: Option<&Dataset>) -> Result<(), ServerError> {
        self.effective = Some(self.server.config.clone());
        let Some(session) = self.setup_session(Duration::from_secs(10)) else {
            return Ok(());
        };
        let mut session = session.map_err(|e| self.error(format!("cannot connect: {e}")))?;
        if let Some(d) = dataset {
            session
                .load(d)
                .map_err(|e| self.error(format!("building {} failed: {e}", d.describe())))?;
            let bytes = session
                .size()
                .map_err(|e| self.error(format!("reading the dataset's size: {e}")))?;
            self.dataset = Some(DatasetInfo {
                description: d.describe(),
                bytes,
            });
        }
        // An unreadable settings view leaves the dump out, as on Linux.
        let dump = session.settings_dump(&[]).unwrap_or_default();
        self.effective = Some(self.server.config.clone() + &dump);
        Ok(())
    }

    /// Waits until the server answers, is gone, or [`READY_LIMIT`] passes.
    fn wait_ready(&mut self, shutdown: &Shutdown) -> Result<(), ServerError> {
        let deadline = Instant::now() + READY_LIMIT;
        let mut checked = Instant::now();
        loop {
            let last = match self.answers() {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            if checked.elapsed() > Duration::from_millis(500) {
                checked = Instant::now();
                if !self.alive() {
                    let log = self.logs();
                    return Err(self.error(format!(
                        "it exited during startup; its log says:\n{}",
                        log.trim()
                    )));
                }
            }
            if Instant::now() > deadline {
                let log = self.logs();
                return Err(ServerError::NotReady {
                    kind: self.server.kind,
                    waited_s: READY_LIMIT.as_secs_f64(),
                    message: format!(
                        "no answer at {} on {} (no agent; last: {last}); its log says:\n{}",
                        self.server.endpoint,
                        self.host,
                        log.trim()
                    ),
                });
            }
            if shutdown.sleep(Duration::from_millis(50)) {
                return Err(ServerError::Interrupted);
            }
        }
    }
}

impl Server for AgentlessServer {
    fn kind(&self) -> &'static str {
        self.server.kind
    }

    /// The placement was made into the start command (`cpuset -l`,
    /// `taskset -c`) when the target was built; the local one is unused.
    fn start(
        &mut self,
        _placement: &Placement,
        dataset: Option<&Dataset>,
        shutdown: &Shutdown,
    ) -> Result<Endpoint, ServerError> {
        (self.server.dataset)(dataset)?;
        self.stop()?;
        self.dataset = None;
        let pid = self.launch()?;
        self.pid = Some(pid);
        if let Err(e) = self
            .wait_ready(shutdown)
            .and_then(|()| self.after_ready(dataset))
        {
            let _ = self.stop();
            return Err(e);
        }
        Ok(Endpoint {
            ca_pem: None,
            uri: self.server.endpoint.clone(),
        })
    }

    fn stop(&mut self) -> Result<(), ServerError> {
        self.pid = None;
        let Some(mut s) = self.session.take() else {
            return Ok(());
        };
        let said = s
            .send("stop")
            .and_then(|()| s.until(&["#stopped"], Duration::from_secs(30)));
        s.close(Duration::from_secs(10));
        said.map(|_| ()).map_err(|e| ServerError::Stop {
            kind: self.server.kind,
            message: format!("on {} (no agent): {e}", self.host),
        })
    }

    fn is_running(&self) -> bool {
        self.pid.is_some() && self.alive()
    }

    fn liveness(&self) -> Liveness {
        match self.pid {
            Some(_) => self.status(),
            None => Liveness::Gone,
        }
    }

    /// The server's PID on its host, which the runner probes there.
    fn root_pid(&self) -> Option<u32> {
        self.pid
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

impl Drop for AgentlessServer {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
