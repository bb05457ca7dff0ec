//! A server scalelab does not manage, named by its URL or connection
//! string. It is either already running, or started and stopped by the
//! user's own `start` and `stop` commands, with `pid_command` printing its
//! PID for the probe. Without `pid` or `pid_command`, the server is the
//! process that listens on the URL's port ([`super::listener`]), found
//! after each start. On a server host named in `[hosts]`, the commands run
//! there over ssh (a host that cannot run scalelab, such as FreeBSD); here,
//! through `sh -c`.

use super::{Endpoint, Placement, Server, ServerError, Shutdown};
use serde::Deserialize;
use std::time::Duration;

const KIND: &str = "external";

/// The `external` server kind: nothing to install, no lifecycle.
pub const SERVER_KIND: super::ServerKind = super::ServerKind {
    name: KIND,
    serves: None,
    parallelism: &[],
    requires: &[],
    compile: |t| Ok(Box::new(ExternalSettings::parse(t)?)),
    runs_under_agent: false,
    listens_on_host_address: false,
    dns_lab: None,
    start_estimate: std::time::Duration::ZERO,
    facts: None,
};

/// The `external` kind's settings: the server's URL or connection string,
/// and the user's own commands, if any, that start it, stop it and print
/// its PID.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalSettings {
    /// `http://127.0.0.1:8080/`, `host=127.0.0.1 port=5432 dbname=bench`, ...
    pub url: String,
    /// A label for the version column of reports (nothing is queried).
    pub version: Option<String>,
    /// Root PID of the server, so the probe can sample it.
    pub pid: Option<u32>,
    /// Shell command that starts the server (and returns); run at each start.
    pub start: Option<String>,
    /// Shell command that stops the server; run at each stop.
    pub stop: Option<String>,
    /// Shell command that prints the server's root PID (for the probe and
    /// to tell whether it still runs), e.g. `cat /var/run/nginx.pid`.
    pub pid_command: Option<String>,
}

pub use super::plan::CommandRunner;

/// `sh -c` on this machine, bounded in time.
pub struct LocalShell;

impl CommandRunner for LocalShell {
    fn argv(&self, command: &str) -> Vec<std::ffi::OsString> {
        vec!["/bin/sh".into(), "-c".into(), command.into()]
    }

    /// From `/proc`: the listening sockets of this network namespace.
    fn listening(&self, port: u16) -> Result<super::listener::Listening, String> {
        Ok(super::listener::local(port))
    }

    fn run(&self, command: &str, limit: Duration) -> Result<String, String> {
        let mut child = std::process::Command::new("sh")
            .args(["-c", command])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let deadline = std::time::Instant::now() + limit;
        loop {
            match child.try_wait().map_err(|e| e.to_string())? {
                Some(_) => break,
                None if std::time::Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("still running after {:.0}s", limit.as_secs_f64()));
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "exited with {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// After a `start` command: waits until the URL's `host:port` accepts TCP
/// connections (URLs of the `scheme://host:port/...` form; others are
/// not waited for).
fn wait_for_listener(url: &str, shutdown: &Shutdown) -> Result<(), ServerError> {
    let Some((_, rest)) = url.split_once("://") else {
        return Ok(());
    };
    let authority = rest.split('/').next().unwrap_or("");
    let Some((host, port)) = authority.rsplit_once(':') else {
        return Ok(());
    };
    // A name the experiment does not name is not resolved here: the load
    // refuses it with the reason, before any packet.
    let Some(addr) = port
        .parse()
        .ok()
        .and_then(|port| crate::wire::policy::resolve(host, port).ok())
    else {
        return Ok(());
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        if std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300)).is_ok() {
            return Ok(());
        }
        if shutdown.sleep(Duration::from_millis(100)) {
            return Err(ServerError::Interrupted);
        }
    }
    Err(ServerError::NotReady {
        kind: KIND,
        waited_s: 30.0,
        message: format!("nothing accepts connections at {addr} after the start command"),
    })
}

/// How long the user's start and stop commands may take.
const COMMAND_LIMIT: Duration = Duration::from_secs(60);

impl ExternalSettings {
    /// Reads the `[server]` table, naming the field at fault.
    pub fn parse(t: &toml::Table) -> Result<Self, ServerError> {
        let s: ExternalSettings =
            crate::kinds::parse_settings(t).map_err(|m| ServerError::settings(KIND, m))?;
        if s.url.trim().is_empty() {
            return Err(ServerError::Settings {
                kind: KIND,
                message: "`url` must name the running server".into(),
            });
        }
        Ok(s)
    }
}

/// An external server's plan is its checked settings: it is built here,
/// or with its commands run over ssh on a server host without an agent.
impl super::plan::ServerPlan for ExternalSettings {
    fn build(&self, base_dir: &std::path::Path) -> Result<Box<dyn Server>, ServerError> {
        Ok(Box::new(External::with_shell(
            self.clone(),
            Box::new(LocalShell),
            base_dir,
        )))
    }

    fn build_with_shell(
        &self,
        shell: Box<dyn CommandRunner>,
        base_dir: &std::path::Path,
    ) -> Result<Box<dyn Server>, ServerError> {
        Ok(Box::new(External::with_shell(
            self.clone(),
            shell,
            base_dir,
        )))
    }
}

/// The directories (`<base_dir>/external-stop-<PID>-…/argv`, the argv
/// NUL-separated) that keep a started server's stop command until it ran:
/// if scalelab and its reaper were both killed, the next run's reclaim runs
/// it ([`reclaim_stale_stops`]) before its first trial, `--resume` too.
const STOP_DIR: &str = "external-stop-";

/// Keeps `argv` in a fresh [`STOP_DIR`] (removed when dropped); `None`
/// when it cannot be written (the reaper still has it).
fn keep_stop(
    base_dir: &std::path::Path,
    argv: &[std::ffi::OsString],
) -> Option<crate::owned::OwnedDir> {
    use std::os::unix::ffi::OsStrExt;
    let dir = crate::owned::OwnedDir::create(base_dir, STOP_DIR).ok()?;
    let mut bytes = Vec::new();
    for w in argv {
        bytes.extend_from_slice(w.as_bytes());
        bytes.push(0);
    }
    std::fs::write(dir.path().join("argv"), bytes).ok()?;
    Some(dir)
}

/// Runs the stop command kept by every dead owner's `STOP_DIR` under
/// `base_dir` (at most `COMMAND_LIMIT` each), then removes the directory;
/// returns the directories removed.
pub fn reclaim_stale_stops(base_dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    crate::owned::reclaim_stale(base_dir, STOP_DIR, |dir| {
        if let Ok(bytes) = std::fs::read(dir.join("argv")) {
            run_kept(&bytes);
        }
        crate::owned::remove_tree(dir)
    })
}

/// Runs a kept argv, bounded by [`COMMAND_LIMIT`]; its output is dropped.
fn run_kept(bytes: &[u8]) {
    use std::os::unix::ffi::OsStrExt;
    let words: Vec<&std::ffi::OsStr> = bytes
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(std::ffi::OsStr::from_bytes)
        .collect();
    let Some((program, args)) = words.split_first() else {
        return;
    };
    let Ok(mut child) = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    else {
        return;
    };
    let deadline = std::time::Instant::now() + COMMAND_LIMIT;
    while matches!(child.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A server scalelab does not manage: already running, or started and
/// stopped by the user's commands, here or on a host over ssh.
pub struct External {
    settings: ExternalSettings,
    shell: Box<dyn CommandRunner>,
    /// Where the stop command is kept while the server runs ([`STOP_DIR`]).
    base_dir: std::path::PathBuf,
    /// The kept stop command of the running server.
    pending_stop: Option<crate::owned::OwnedDir>,
    /// The PID `pid_command` printed after the last start.
    started_pid: Option<u32>,
    /// Without `pid` and `pid_command`: the process listening on the
    /// URL's port after the last start, or why none was told apart.
    listener: Option<Result<u32, super::listener::Unidentified>>,
    started: bool,
}

impl External {
    /// The commands run through `shell` (over ssh for a server host); the
    /// stop command is kept under `base_dir` while the server runs.
    pub fn with_shell(
        settings: ExternalSettings,
        shell: Box<dyn CommandRunner>,
        base_dir: &std::path::Path,
    ) -> Self {
        External {
            settings,
            shell,
            base_dir: base_dir.to_path_buf(),
            pending_stop: None,
            started_pid: None,
            listener: None,
            started: false,
        }
    }

    /// The server's root process by its listener on the URL's port, when
    /// neither `pid` nor `pid_command` names it.
    fn find_listener(&self) -> Option<Result<u32, super::listener::Unidentified>> {
        use super::listener::{identify, url_port, Unidentified};
        if self.settings.pid.is_some() || self.settings.pid_command.is_some() {
            return None;
        }
        let Some(port) = url_port(&self.settings.url) else {
            return Some(Err(Unidentified::NoPort {
                url: self.settings.url.clone(),
            }));
        };
        Some(match self.shell.listening(port) {
            Ok(l) => identify(&l, port),
            Err(e) => Err(Unidentified::Unreadable(e)),
        })
    }

    fn command(&self, what: &str, command: &str) -> Result<String, ServerError> {
        self.shell
            .run(command, COMMAND_LIMIT)
            .map_err(|e| ServerError::Start {
                kind: KIND,
                message: format!("the {what} command `{command}` failed: {e}"),
            })
    }

    /// Registers the stop command with the reaper and keeps it in a
    /// [`STOP_DIR`] for the next run (`on`), or forgets both.
    fn guard(&mut self, on: bool) {
        let Some(stop) = &self.settings.stop else {
            return;
        };
        let argv = self.shell.argv(stop);
        let words: Vec<&std::ffi::OsStr> = argv.iter().map(|w| w.as_os_str()).collect();
        if on {
            crate::owned::register(crate::owned::Removal::Command, &words);
            self.pending_stop = keep_stop(&self.base_dir, &argv);
        } else {
            crate::owned::forget(crate::owned::Removal::Command, &words);
            self.pending_stop = None;
        }
    }

    /// The PID `pid_command` prints now, if it prints one.
    fn current_pid(&self) -> Option<u32> {
        let cmd = self.settings.pid_command.as_deref()?;
        self.shell
            .run(cmd, Duration::from_secs(15))
            .ok()?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    }

    /// The server's PID where it runs (which may be another host).
    pub fn server_pid(&self) -> Option<u32> {
        let found = self
            .listener
            .as_ref()
            .and_then(|l| l.as_ref().ok().copied());
        self.started_pid.or(self.settings.pid).or(found)
    }
}

impl Server for External {
    fn kind(&self) -> &'static str {
        KIND
    }

    /// The dataset is the user's: an external server holds what it holds,
    /// and the workload's declaration only tells the driver its shape.
    fn start(
        &mut self,
        placement: &Placement,
        _dataset: Option<&crate::model::Dataset>,
        _shutdown: &Shutdown,
    ) -> Result<Endpoint, ServerError> {
        if placement.cpus.is_some() || placement.memory.is_some() {
            return Err(ServerError::Settings {
                kind: KIND,
                message: "server_cpus and server_memory need a server scalelab starts; pin an external server yourself"
                    .into(),
            });
        }
        if let Some(cmd) = self.settings.start.clone() {
            // From before the start until its stop: if scalelab is killed,
            // the reaper runs the stop command (it outlived kill -9, and
            // every later trial and --resume met "Address already in use").
            self.guard(true);
            if let Err(e) = self.command("start", &cmd) {
                self.guard(false);
                return Err(e);
            }
            self.started = true;
            wait_for_listener(&self.settings.url, _shutdown)?;
        }
        if self.settings.pid_command.is_some() {
            self.started_pid = self.current_pid();
            if self.started_pid.is_none() {
                return Err(ServerError::Start {
                    kind: KIND,
                    message: "`pid_command` printed no PID after the start".into(),
                });
            }
        }
        self.listener = self.find_listener();
        Ok(Endpoint {
            ca_pem: None,
            uri: self.settings.url.clone(),
        })
    }

    fn stop(&mut self) -> Result<(), ServerError> {
        if !std::mem::take(&mut self.started) {
            return Ok(());
        }
        self.started_pid = None;
        self.listener = None;
        let stopped = match self.settings.stop.clone() {
            Some(cmd) => self.command("stop", &cmd).map(|_| ()),
            None => Ok(()),
        };
        self.guard(false);
        stopped
    }

    fn is_running(&self) -> bool {
        if self.settings.pid_command.is_some() {
            return self.current_pid().is_some();
        }
        self.settings
            .pid
            .map_or(true, crate::sys::process::is_alive)
    }

    /// The PID where the server runs: on a server host named in `[hosts]`
    /// that is the host's PID, which the runner probes there over ssh.
    fn root_pid(&self) -> Option<u32> {
        self.server_pid()
    }

    fn unidentified(&self) -> Option<String> {
        match &self.listener {
            Some(Err(why)) => Some(why.advice()),
            Some(Ok(_)) | None => None,
        }
    }

    fn version(&self) -> Option<String> {
        self.settings.version.clone()
    }

    fn effective_config(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: String) -> ExternalSettings {
        ExternalSettings {
            url,
            version: None,
            pid: None,
            start: None,
            stop: None,
            pid_command: None,
        }
    }

    fn started(url: String, base: &std::path::Path) -> External {
        let mut t = External::with_shell(settings(url), Box::new(LocalShell), base);
        let placement = Placement::unconstrained();
        t.start(&placement, None, &Shutdown::new()).unwrap();
        t
    }

    #[test]
    fn without_pid_the_server_is_the_process_listening_on_the_urls_port() {
        let base = tempfile::tempdir().unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let t = started(format!("http://127.0.0.1:{port}/"), base.path());
        assert_eq!(t.root_pid(), Some(std::process::id()));
        assert_eq!(t.unidentified(), None);
    }

    #[test]
    fn a_port_nobody_listens_on_leaves_the_server_unknown_with_the_fix_named() {
        let base = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let t = started(format!("http://127.0.0.1:{port}/"), base.path());
        assert_eq!(t.root_pid(), None);
        let why = t.unidentified().expect("a reason");
        assert!(
            why.contains(&format!("nothing listens on port {port}")),
            "{why}"
        );
        assert!(why.contains("cannot be told apart"), "{why}");
        assert!(why.contains("`pid` or `pid_command`"), "{why}");
        // The probe of such a trial: a sampler without a server counts no
        // server CPU (a load alone is known); the trial, told the server
        // was not found, makes it unknown and never noisy.
        let config = crate::probe::SamplerConfig {
            interval: Duration::from_millis(50),
            ..Default::default()
        };
        let sampler = crate::probe::Sampler::start(config, t.root_pid()).unwrap();
        std::thread::sleep(Duration::from_millis(120));
        let b = sampler.stop().summary.background.expect("a background");
        assert!(!b.server_unknown, "{b:?}");
        let b = crate::probe::background::Background { noisy: true, ..b }.server_not_told_apart();
        assert!(b.server_unknown && !b.noisy, "{b:?}");
        assert!(b.describe().starts_with("unknown:"), "{}", b.describe());
        // With `pid` given, nothing is looked up.
        let mut with_pid = settings(format!("http://127.0.0.1:{port}/"));
        with_pid.pid = Some(std::process::id());
        let t = External::with_shell(with_pid, Box::new(LocalShell), base.path());
        assert_eq!(t.find_listener(), None);
    }
}
