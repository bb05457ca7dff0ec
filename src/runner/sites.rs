//! Where a run's pieces run: the server and the load on this machine, or on
//! the hosts of the experiment's `[hosts]` through their agents. The trial
//! asks this module for its load and its server probe, and does not care
//! which.

use super::failure::Failure;
use super::RunError;
use crate::load::{self, LoadResult, LoadSpec};
use crate::probe::energy::{EnergyChoice, EnergyConfig};
use crate::probe::{Environment, HostFingerprint, PortableFingerprint};
use crate::probe::{ProbeData, Sampler, SamplerConfig};
use crate::recipe::plan::PointPlan;
use crate::recipe::Experiment;
use crate::remote::bare::interval::IntervalProbe;
use crate::remote::cluster::{Cluster, SharedAgent};
use crate::remote::lock;
use crate::remote::portable;
use crate::remote::protocol::{Reply, Request};
use crate::remote::ssh::Ssh;
use crate::remote::Host;
use crate::shutdown::Shutdown;
use crate::store::context::{ClientShare, Coordination};
use std::path::Path;
use std::time::Duration;

/// Connects every host of `[hosts]` (none: `None`). Load to their
/// addresses is allowed from here on; any other non-loopback address is
/// still refused.
pub fn connect(exp: &Experiment, base_dir: &Path) -> Result<Option<Cluster>, RunError> {
    if exp.hosts.is_local() {
        return Ok(None);
    }
    check_lab_hosts(exp)?;
    crate::wire::policy::allow(&exp.hosts.addresses());
    crate::wire::policy::allow_names(&exp.hosts.names());
    let workdir = base_dir.display().to_string();
    Ok(Some(Cluster::connect(
        &exp.hosts,
        &workdir,
        &hosts_without_agent(exp),
    )?))
}

/// Refuses, before any ssh starts, a host in the benchmark range that is
/// not reached through a lab ([`crate::wire::policy::check_benchmark_host`]).
fn check_lab_hosts(exp: &Experiment) -> Result<(), RunError> {
    for host in exp.hosts.all() {
        let Some(std::net::IpAddr::V4(ip)) = host.ip() else {
            continue;
        };
        if crate::wire::policy::is_benchmark_range(ip) {
            let route = crate::sys::route::route_to(ip);
            crate::wire::policy::check_benchmark_host(&host.destination, ip, route.as_ref())
                .map_err(RunError::NoLab)?;
        }
    }
    Ok(())
}

/// The server hosts where no system's server runs under an agent
/// (`external` servers, and systems with `agent = false`): they get none.
fn hosts_without_agent(exp: &Experiment) -> Vec<Host> {
    let systems = &exp.plan.systems;
    let mut out: Vec<Host> = Vec::new();
    for host in systems.iter().filter_map(|s| s.host.as_ref()) {
        let on_it = systems.iter().filter(|s| s.host.as_ref() == Some(host));
        if on_it
            .clone()
            .all(|s| !s.server_kind.runs_under_agent || !s.agent)
            && !out.contains(host)
        {
            out.push(host.clone());
        }
    }
    out
}

/// Where the server under test runs.
#[derive(Clone)]
pub enum ServerSite {
    /// On this machine.
    Local,
    /// On the server host, managed by its agent, listening on its address.
    Agent(SharedAgent),
    /// On a server host without an agent (an `external` server, or a
    /// managed one with `agent = false`, maybe on another OS): its
    /// commands and probe run over plain ssh.
    Ssh(Ssh, Host),
}

/// Where system `system`'s server runs: under its host's agent when its
/// kind runs under one, else over plain ssh; here without a host.
pub fn server_site(exp: &Experiment, cluster: Option<&Cluster>, system: usize) -> ServerSite {
    let plan = &exp.plan.systems[system];
    let (Some(c), Some(host)) = (cluster, plan.host.as_ref()) else {
        return ServerSite::Local;
    };
    match (c.server_agent(host), host.ip()) {
        (Some(agent), Some(_)) if plan.server_kind.runs_under_agent && plan.agent => {
            ServerSite::Agent(agent.clone())
        }
        _ => ServerSite::Ssh(c.ssh().clone(), host.clone()),
    }
}

/// The run's environment: this machine's fingerprint, plus each remote
/// host's under `hosts` (so `compare` diffs the server hosts of two runs),
/// every system's server host among them. A server host without an agent
/// gets what `uname` and `sysctl` tell.
pub fn environment(exp: &Experiment, cluster: Option<&Cluster>) -> Environment {
    let mut env = Environment::local(crate::probe::capture());
    if let Some(c) = cluster {
        for host in hosts_without_agent(exp) {
            env.hosts
                .insert(host.to_string(), portable_fingerprint(c.ssh(), &host));
        }
        for (host, fp) in c.fingerprints() {
            let fp = match fp {
                Ok(fp) => HostFingerprint::Agent(Box::new(fp)),
                Err(e) => HostFingerprint::Unreachable {
                    error: e.to_string(),
                },
            };
            env.hosts.insert(host.to_string(), fp);
        }
    }
    env
}

/// `uname` and a few `sysctl`s of a host without an agent.
fn portable_fingerprint(ssh: &Ssh, host: &Host) -> HostFingerprint {
    let script = "echo \"uname=$(uname -srm)\"; \
        for k in hw.model hw.ncpu hw.physmem kern.osrelease kern.hz; do \
        v=$(sysctl -n $k 2>/dev/null) && echo \"$k=$v\"; done; true";
    match ssh.run(host, script, None, Duration::from_secs(15)) {
        Ok(text) => {
            let mut fp = PortableFingerprint::parse(&text);
            // Fed on stdin: root's login shell may be csh.
            let nics = crate::probe::nic_script::NIC_SCRIPT.as_bytes();
            if let Ok(text) = ssh.run(host, "/bin/sh", Some(nics), Duration::from_secs(15)) {
                fp.nics = crate::probe::nic_script::parse_nics(&text);
            }
            HostFingerprint::Portable(fp)
        }
        Err(e) => HostFingerprint::Unreachable {
            error: e.to_string(),
        },
    }
}

/// Checks the energy source before the run starts: on this machine, a
/// source named but missing is an error, and `auto` that finds nothing
/// says [`crate::probe::energy::NO_COUNTER`] once. A server host's agent
/// opens its own source at each trial (an error there fails the trial with
/// the reason); plain ssh can only run `energy_command`.
pub fn check_energy(site: &ServerSite, energy: &EnergyConfig) -> Result<(), RunError> {
    if !matches!(site, ServerSite::Local) {
        return Ok(());
    }
    match crate::probe::energy::open(energy) {
        Ok(Some(_)) => Ok(()),
        Ok(None) if energy.choice == EnergyChoice::Auto => {
            eprintln!("{}", crate::probe::energy::NO_COUNTER);
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(e) => Err(RunError::Spec(e.to_string())),
    }
}

/// Whether the load generator runs on the hardware the energy source
/// measures: on this machine with a local server.
pub fn client_shares_meter(site: &ServerSite) -> bool {
    matches!(site, ServerSite::Local)
}

/// The server probe of one trial: here, in the server host's agent, or
/// over plain ssh by one long-lived shell on the host (with the energy
/// command's readings at the window's ends, when one is set).
pub enum ServerProbe {
    Local(Sampler),
    Remote(SharedAgent),
    Shell(IntervalProbe, Option<ShellEnergy>),
}

/// `energy_command` read over ssh at the window's start, on its own thread
/// (a meter that takes a second, as IPMI does, delays neither the probe
/// nor the load); read again after the probe's last sample, so the window's
/// samples never wait for it.
pub struct ShellEnergy {
    ssh: Ssh,
    host: Host,
    command: String,
    first: std::thread::JoinHandle<Option<f64>>,
}

impl ShellEnergy {
    fn start(ssh: &Ssh, host: &Host, command: String) -> ShellEnergy {
        let (s, h, c) = (ssh.clone(), host.clone(), command.clone());
        let first = std::thread::spawn(move || portable::energy_reading(&s, &h, &c));
        ShellEnergy {
            ssh: ssh.clone(),
            host: host.clone(),
            command,
            first,
        }
    }

    /// Adds the window's energy (two readings) to `data`.
    fn finish(self, data: &mut ProbeData) {
        let first = self.first.join().ok().flatten();
        let last = portable::energy_reading(&self.ssh, &self.host, &self.command);
        let s = &mut data.summary;
        let (energy, warning) =
            crate::probe::energy::two_readings::summarize(&self.command, first, last, s.window_s);
        s.warnings.extend(warning);
        s.watts = energy.as_ref().and_then(|e| e.watts());
        s.energy = energy;
    }
}

impl ServerProbe {
    pub fn start(
        site: &ServerSite,
        interval: Duration,
        root_pid: Option<u32>,
        (energy, syscalls): (&EnergyConfig, crate::probe::work::SyscallMode),
        base_dir: &Path,
    ) -> Result<ServerProbe, Failure> {
        match site {
            ServerSite::Local => {
                let config = SamplerConfig {
                    interval,
                    energy: energy.clone(),
                    syscalls,
                };
                Sampler::start(config, root_pid)
                    .map(ServerProbe::Local)
                    .map_err(|e| Failure::plain(e.to_string()))
            }
            ServerSite::Ssh(ssh, host) => {
                // Only a command can be run over plain ssh.
                let command = energy.command.clone().filter(|_| {
                    matches!(energy.choice, EnergyChoice::Command | EnergyChoice::Auto)
                });
                let energy = command.map(|c| ShellEnergy::start(ssh, host, c));
                let dir = base_dir.display().to_string();
                IntervalProbe::start(ssh, host, &dir, interval, root_pid)
                    .map(|p| ServerProbe::Shell(p, energy))
                    .map_err(Failure::probe_start)
            }
            ServerSite::Agent(agent) => {
                let ms = interval.as_millis() as u64;
                let request = Request::ProbeStart {
                    interval_ms: ms,
                    energy: energy.clone(),
                    syscalls,
                };
                lock(agent)
                    .call(request, Duration::from_secs(30))
                    .map_err(|e| Failure::plain(e.to_string()))?;
                Ok(ServerProbe::Remote(agent.clone()))
            }
        }
    }

    pub fn stop(self) -> ProbeData {
        match self {
            ServerProbe::Local(s) => s.stop(),
            ServerProbe::Shell(p, energy) => {
                let mut data = p.stop();
                if let Some(e) = energy {
                    e.finish(&mut data);
                }
                data
            }
            ServerProbe::Remote(agent) => {
                match lock(&agent).call(Request::ProbeStop, Duration::from_secs(30)) {
                    Ok(Reply::Probe(data)) => *data,
                    other => {
                        let mut data = ProbeData::default();
                        data.summary.warnings.push(format!(
                            "no server metrics from the server host: {}",
                            match other {
                                Err(e) => e.to_string(),
                                Ok(r) => format!("unexpected reply {r:?}"),
                            }
                        ));
                        data
                    }
                }
            }
        }
    }
}

/// A load run's outcome, with the per-client split of a multi-host run.
pub struct LoadRun {
    pub result: LoadResult,
    pub clients: Vec<ClientShare>,
    /// How evenly the client hosts started, and what coordination cost.
    pub coordination: Option<Coordination>,
    /// The client host whose agent was held still longest, if one was.
    pub held_host: Option<String>,
}

/// One trial's load, aimed at its server: a driver built once here (for
/// the warmup and the measured window alike), or the compiled settings the
/// client hosts' agents are sent.
pub enum TrialLoad<'a> {
    /// On this machine.
    Local(Box<dyn load::Driver>),
    /// Split over the client hosts.
    Clients {
        cluster: &'a Cluster,
        kind: &'static load::LoadKind,
        /// The load's settings as TOML text, for the agents.
        settings: std::borrow::Cow<'a, str>,
        endpoint: String,
    },
}

impl<'a> TrialLoad<'a> {
    /// The load of `planned` aimed at `endpoint`: here, or over the client
    /// hosts of `cluster` when it has some. A server serving TLS with its
    /// own CA hands the load that CA (`ca_pem` among its settings).
    pub fn new(
        cluster: Option<&'a Cluster>,
        kind: &'static load::LoadKind,
        planned: &'a PointPlan,
        endpoint: &crate::server::Endpoint,
    ) -> Result<TrialLoad<'a>, Failure> {
        let setup = |e: &dyn std::fmt::Display| Failure::plain(format!("load setup failed: {e}"));
        let settings = match &endpoint.ca_pem {
            None => std::borrow::Cow::Borrowed(planned.load_text.as_str()),
            Some(pem) => {
                std::borrow::Cow::Owned(with_ca(&planned.load_text, pem).map_err(|e| setup(&e))?)
            }
        };
        match cluster.filter(|c| !c.clients.is_empty()) {
            Some(cluster) => Ok(TrialLoad::Clients {
                cluster,
                kind,
                settings,
                endpoint: endpoint.uri.clone(),
            }),
            None => {
                let driver = match settings {
                    std::borrow::Cow::Borrowed(_) => planned.load.driver(&endpoint.uri),
                    std::borrow::Cow::Owned(text) => text
                        .parse::<toml::Table>()
                        .map_err(|e| load::LoadError::Spec(e.to_string()))
                        .and_then(|t| load::compile(kind, &t))
                        .and_then(|plan| plan.driver(&endpoint.uri)),
                }
                .map_err(|e| setup(&e))?;
                Ok(TrialLoad::Local(driver))
            }
        }
    }

    /// Runs `spec` here, or split over the client hosts. A lost client
    /// host is a failure with that cause ([`Failure::remote_load`]).
    pub fn run(&self, spec: &LoadSpec, shutdown: &Shutdown) -> Result<LoadRun, Failure> {
        match self {
            TrialLoad::Local(driver) => {
                let result = load::held::run_watched(driver.as_ref(), spec, shutdown)
                    .map_err(|e| Failure::plain(e.to_string()))?;
                Ok(LoadRun {
                    result,
                    clients: Vec::new(),
                    coordination: None,
                    held_host: None,
                })
            }
            TrialLoad::Clients {
                cluster,
                kind,
                settings,
                endpoint,
            } => run_on_clients(cluster, kind.name, settings, endpoint, spec, shutdown),
        }
    }
}

/// The load's settings (TOML text) with the server's CA added as
/// `ca_pem`, unless they turn checking off.
fn with_ca(load_text: &str, pem: &str) -> Result<String, toml::de::Error> {
    let mut t: toml::Table = load_text.parse()?;
    if t.get("tls_verify").and_then(toml::Value::as_bool) != Some(false) {
        t.insert("ca_pem".into(), pem.into());
    }
    Ok(toml::to_string(&t).unwrap_or_default())
}

/// Runs `spec` split over the client hosts of `cluster`.
fn run_on_clients(
    cluster: &Cluster,
    kind: &str,
    settings: &str,
    endpoint: &str,
    spec: &LoadSpec,
    shutdown: &Shutdown,
) -> Result<LoadRun, Failure> {
    let out = cluster
        .run_load(kind, settings, endpoint, spec, shutdown)
        .map_err(|e| Failure::remote_load(&e))?;
    let first = out.parts.iter().map(|p| p.started_ns).min().unwrap_or(0);
    let cpus = cluster_cpus(cluster);
    let held_host = out
        .parts
        .iter()
        .filter(|p| !p.result.held.is_zero())
        .max_by_key(|p| p.result.held)
        .map(|p| p.host.to_string());
    let clients = out
        .parts
        .iter()
        .map(|p| ClientShare {
            host: p.host.to_string(),
            requests: p.result.requests,
            rps: p.result.rps(),
            connections: p.result.connections_opened,
            client_cpu_s: p.result.client_cpu.0,
            start_offset_us: (p.started_ns - first) as f64 / 1e3,
            client_bound: crate::probe::client_bound_reason(
                p.result.client_cpu.0,
                p.result.elapsed.as_secs_f64(),
                cpus.get(&p.host.to_string()).copied().unwrap_or(1),
            ),
        })
        .collect();
    Ok(LoadRun {
        result: out.merged,
        clients,
        coordination: Some(Coordination {
            start_skew_us: out.start_skew.as_secs_f64() * 1e6,
            overhead_us: out.overhead.as_secs_f64() * 1e6,
        }),
        held_host,
    })
}

fn cluster_cpus(c: &Cluster) -> std::collections::HashMap<String, usize> {
    c.clients
        .iter()
        .map(|a| {
            let a = lock(a);
            (a.host.to_string(), a.facts.cpus.max(1))
        })
        .collect()
}
