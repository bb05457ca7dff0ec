//! `scalelab agent`: the far end of a coordinator's ssh session. It reads
//! one request per line on stdin, runs it with the same targets, drivers and
//! probes that run locally, and answers one line on stdout.
//!
//! What it is sent is compiled once: a server's settings once per start
//! request, a load's once per (kind, settings, endpoint), whose driver
//! then serves every run of it (a trial's warmup and its measured window).
//!
//! A reader thread owns stdin: it hands requests to the main loop and acts
//! on `cancel` at once (by triggering the running load's shutdown). When
//! stdin closes (the coordinator died or the connection dropped), the agent
//! stops whatever it runs, stops its server and exits.

use super::clock::now_ns;
use super::lock;
use super::protocol::{
    parse_request, LoadReply, LoadRequest, Reply, Request, ServerInfo, ServerRequest,
    PROTOCOL_VERSION,
};
use super::wire::WireResult;
use crate::load;
use crate::placement::Placement;
use crate::probe::{Sampler, SamplerConfig};
use crate::server::{self, Server};
use crate::shutdown::Shutdown;
use crate::units::Bytes;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The longest an agent waits for a scheduled start: a start further ahead
/// than this is a coordinator bug, not a plan.
const MAX_START_WAIT: Duration = Duration::from_secs(60);

/// A server this agent started. The target drops (stops) before the
/// placement (its cgroups).
struct AgentServer {
    target: Box<dyn Server>,
    _placement: Placement,
}

/// The driver of the last load request, and what it was built from.
struct CachedDriver {
    kind: String,
    settings: String,
    endpoint: String,
    driver: Box<dyn load::Driver>,
}

struct Agent {
    base_dir: PathBuf,
    server: Option<AgentServer>,
    driver: Option<CachedDriver>,
    sampler: Option<Sampler>,
    /// Shutdown of the load in progress, shared with the reader for `cancel`.
    current: Arc<Mutex<Shutdown>>,
    /// Triggered when stdin closes.
    gone: Shutdown,
}

/// Runs the agent until `exit`, the end of stdin, or `signalled` (SIGTERM:
/// a reconnecting coordinator stops an agent that outlived its session).
/// Returns the exit code.
pub fn run(base_dir: PathBuf, signalled: &Shutdown) -> i32 {
    server::reclaim_leftovers(&base_dir);
    let current = Arc::new(Mutex::new(Shutdown::new()));
    let gone = Shutdown::new();
    let (tx, rx) = mpsc::channel::<Result<Request, String>>();
    spawn_reader(tx.clone(), current.clone(), gone.clone());
    spawn_signal_watch(signalled.clone(), tx, current.clone(), gone.clone());
    let mut agent = Agent {
        base_dir,
        server: None,
        driver: None,
        sampler: None,
        current,
        gone,
    };
    let mut out = std::io::stdout().lock();
    while let Ok(msg) = rx.recv() {
        let (reply, exit) = match msg {
            Ok(Request::Exit) => (Reply::Done, true),
            Ok(request) => (agent.handle(request), false),
            // A version mismatch or garbage: say so, then leave.
            Err(message) => (Reply::Error { message }, true),
        };
        let mut line = serde_json::to_string(&reply).unwrap_or_default();
        line.push('\n');
        if out
            .write_all(line.as_bytes())
            .and_then(|_| out.flush())
            .is_err()
            || exit
        {
            break;
        }
    }
    agent.stop_server();
    0
}

/// Ends the agent as a closed stdin does once `signalled` is triggered: the
/// load in progress stops, then the server.
fn spawn_signal_watch(
    signalled: Shutdown,
    tx: mpsc::Sender<Result<Request, String>>,
    current: Arc<Mutex<Shutdown>>,
    gone: Shutdown,
) {
    std::thread::spawn(move || {
        while !signalled.sleep(Duration::from_secs(3600)) {}
        gone.trigger();
        lock(&current).trigger();
        let _ = tx.send(Ok(Request::Exit));
    });
}

fn spawn_reader(
    tx: mpsc::Sender<Result<Request, String>>,
    current: Arc<Mutex<Shutdown>>,
    gone: Shutdown,
) {
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            let parsed = parse_request(&line);
            if let Ok(Request::Cancel) = parsed {
                lock(&current).trigger();
                continue;
            }
            if tx.send(parsed).is_err() {
                break;
            }
        }
        gone.trigger();
        lock(&current).trigger();
        let _ = tx.send(Ok(Request::Exit));
    });
}

impl Agent {
    fn handle(&mut self, request: Request) -> Reply {
        match request {
            Request::Hello => Reply::Hello {
                protocol: PROTOCOL_VERSION,
                version: env!("CARGO_PKG_VERSION").into(),
                hostname: crate::probe::fingerprint::capture().hostname,
                cpus: crate::placement::online_cpus(),
                pid: Some(std::process::id()),
            },
            Request::Clock => Reply::Clock {
                unix_ns: now_ns() as i64,
            },
            Request::StartServer(s) => self.start_server(&s),
            Request::ServerStatus => Reply::ServerStatus {
                running: self.server.as_ref().is_some_and(|s| s.target.is_running()),
            },
            Request::StopServer => {
                self.stop_server();
                Reply::Done
            }
            Request::ProbeStart {
                interval_ms,
                energy,
                syscalls,
            } => self.probe_start(interval_ms, energy, syscalls),
            Request::ProbeStop => match self.sampler.take() {
                Some(s) => Reply::Probe(Box::new(s.stop())),
                None => error("probe_stop without probe_start"),
            },
            Request::Fingerprint => {
                Reply::Fingerprint(Box::new(crate::probe::fingerprint::capture()))
            }
            Request::RunLoad(l) => self.run_load(&l),
            // Handled by the reader; never reaches here.
            Request::Cancel | Request::Exit => Reply::Done,
        }
    }

    fn start_server(&mut self, s: &ServerRequest) -> Reply {
        self.stop_server();
        let settings: toml::Table = match s.settings.parse() {
            Ok(t) => t,
            Err(e) => return error(format!("server settings: {e}")),
        };
        // The server listens on this host's address from [hosts]: the
        // target's own readiness and dataset sessions may reach it.
        if let Some(ip) = server::listen_address(&settings) {
            crate::wire::policy::allow(&[ip]);
        }
        let placement =
            match Placement::create("agent", s.server_cpus.clone(), s.server_memory.map(Bytes)) {
                Ok(p) => p,
                Err(e) => return error(format!("placement: {e}")),
            };
        let built = server::kind(&s.kind)
            .and_then(|kind| server::compile(kind, &settings))
            .and_then(|plan| plan.build(&self.base_dir));
        let mut target = match built {
            Ok(t) => t,
            Err(e) => return error(e.to_string()),
        };
        match target.start(&placement, s.dataset.as_ref(), &self.gone) {
            Ok(endpoint) => {
                let info = ServerInfo {
                    endpoint: endpoint.uri,
                    version: target.version(),
                    config: target.effective_config(),
                    dataset: target.dataset(),
                    root_pid: target.root_pid(),
                    placement: placement.describe(),
                };
                self.server = Some(AgentServer {
                    target,
                    _placement: placement,
                });
                Reply::ServerStarted(info)
            }
            Err(e) => match server::diagnose::disk_full(target.as_ref()) {
                Some(cause) => error(format!("server failed to start: {cause}: {e}")),
                None => error(format!("server failed to start: {e}")),
            },
        }
    }

    fn stop_server(&mut self) {
        if let Some(mut s) = self.server.take() {
            let _ = s.target.stop();
        }
    }

    fn probe_start(
        &mut self,
        interval_ms: u64,
        energy: crate::probe::energy::EnergyConfig,
        syscalls: crate::probe::work::SyscallMode,
    ) -> Reply {
        let pid = self.server.as_ref().and_then(|s| s.target.root_pid());
        let config = SamplerConfig {
            interval: Duration::from_millis(interval_ms),
            energy,
            syscalls,
        };
        match Sampler::start(config, pid) {
            Ok(s) => {
                self.sampler = Some(s);
                Reply::Done
            }
            Err(e) => error(e.to_string()),
        }
    }

    /// Makes the cached driver the one `l` asks for: the last one when it
    /// asks for the same load, else compiled from its settings and built.
    fn prepare_driver(&mut self, l: &LoadRequest) -> Result<(), String> {
        let same = self.driver.as_ref().is_some_and(|c| {
            (&c.kind, &c.settings, &c.endpoint) == (&l.kind, &l.settings, &l.endpoint)
        });
        if !same {
            self.driver = None;
            let settings: toml::Table = l
                .settings
                .parse()
                .map_err(|e| format!("load settings: {e}"))?;
            let driver = load::kind(&l.kind)
                .and_then(|kind| load::compile(kind, &settings))
                .and_then(|plan| plan.driver(&l.endpoint))
                .map_err(|e| format!("load setup failed: {e}"))?;
            self.driver = Some(CachedDriver {
                kind: l.kind.clone(),
                settings: l.settings.clone(),
                endpoint: l.endpoint.clone(),
                driver,
            });
        }
        Ok(())
    }

    fn run_load(&mut self, l: &LoadRequest) -> Reply {
        crate::wire::policy::allow(&l.allowed);
        if let Err(message) = self.prepare_driver(l) {
            return error(message);
        }
        let shutdown = Shutdown::new();
        *lock(&self.current) = shutdown.clone();
        if self.gone.is_triggered() {
            return error("the coordinator is gone");
        }
        if let Some(at) = l.start_at_ns {
            let wait = (at as i128 - now_ns()).max(0) as u64;
            let wait = Duration::from_nanos(wait);
            if wait > MAX_START_WAIT {
                return error(format!(
                    "the start instant is {:.0}s away; clocks differ by more than the agent waits",
                    wait.as_secs_f64()
                ));
            }
            if shutdown.sleep(wait) {
                return error("cancelled before the start");
            }
        }
        let started_ns = now_ns() as i64;
        let Some(cached) = self.driver.as_ref() else {
            return error("no driver");
        };
        match load::held::run_watched(cached.driver.as_ref(), &l.spec, &shutdown) {
            Ok(r) => Reply::Load(Box::new(LoadReply {
                result: WireResult::from(&r),
                started_ns,
            })),
            Err(e) => error(format!("load failed: {e}")),
        }
    }
}

fn error(message: impl Into<String>) -> Reply {
    Reply::Error {
        message: message.into(),
    }
}
