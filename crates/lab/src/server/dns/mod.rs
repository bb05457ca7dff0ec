//! The DNS lab: a private network namespace holding only `lo`, with NSD
//! serving the lab's zones at 127.0.0.2 and, for the resolver kinds, BIND 9
//! or Unbound at 127.0.0.1 resolving through it.
//!
//! Nothing can leave: the namespace has no interface but `lo`, and the
//! resolvers' root points at a dead loopback address besides (see
//! `zones::DEAD_ROOT_ADDR`). The load generator joins the namespace through
//! the endpoint (`dns://127.0.0.1:53?netns=NAME`). Stopping the target kills
//! both servers and deletes the namespace. A `kill -9` of scalelab leaves
//! nothing either: each server's watchdog kills it and the namespace's own
//! watchdog removes the namespace (see [`crate::sys::netns`]); should that
//! watchdog be killed too, the next lab created removes the namespace
//! ([`crate::sys::netns::reclaim_stale`]).
//!
//! Kinds: `nsd` (the authoritative server is the target), `unbound` and
//! `bind` (the resolver is the target; NSD is its upstream).
//!
//! The zones hold the dataset the workload declares ([`Dataset::DnsZones`],
//! from the dns load's `names`), written afresh at every start. When the
//! workload asks for a veth path (`DnsZones::veth`: the xdp generator,
//! which cannot send over loopback), the lab also gets a client namespace
//! joined to it by one veth pair ([`veth`]); the target listens on its end
//! too, and the endpoint names both ways in
//! (`dns://127.0.0.1:53?netns=LAB&veth=198.19.254.2:53@CLIENT`).

pub mod bind;
pub mod nsd;
pub(crate) mod resolver;
pub mod unbound;
pub mod veth;
pub(crate) mod zones;

use super::{DatasetInfo, Endpoint, Placement, Server, ServerError, Shutdown};
use crate::model::{dns_names as names, Dataset, SetupAddr};
use crate::sys::lifecycle::ServerProcess;
use crate::sys::netns::Netns;
use crate::sys::process::{self, WaitError};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Every DNS lab runs NSD.
pub const NSD_PACKAGE: crate::kinds::Requirement = crate::kinds::Requirement {
    what: "NSD (the DNS lab's authoritative server)",
    package: "nsd",
    paths: &["/usr/sbin/nsd"],
};
/// The lab's namespace is made with `ip netns`.
pub const IPROUTE: crate::kinds::Requirement = crate::kinds::Requirement {
    what: "ip (the DNS lab's network namespaces)",
    package: "iproute2",
    paths: &["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"],
};

/// How long a server may take to answer its first question.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// How to start one of the lab's servers in the foreground.
pub struct Launch {
    /// The server's binary (found by [`binary`]).
    pub program: PathBuf,
    /// Its arguments: foreground mode and the config file in the run
    /// directory.
    pub args: Vec<OsString>,
    /// The config it runs with, as written.
    pub config: String,
    /// Its own log file, if it keeps one besides stderr.
    pub log: Option<PathBuf>,
    /// Where it also serves DNS over TLS, and with which CA.
    pub tls: Option<LaunchTls>,
}

/// A lab server's DNS over TLS (and HTTPS, where it serves it): the
/// ports on its address, and the CA (PEM) of the certificate this start
/// made in its directory.
#[derive(Clone, Debug)]
pub struct LaunchTls {
    /// The CA's certificate, which the load verifies the server's with.
    pub ca_pem: String,
    /// The DoT port, beside 53.
    pub port: u16,
    /// The DoH port, if it serves DNS over HTTPS.
    pub doh_port: Option<u16>,
}

/// What a lab server is prepared with.
pub struct Prepare<'a> {
    /// The run directory its files go in.
    pub dir: &'a Path,
    /// The zones it serves or stubs.
    pub zones: &'a [String],
    /// With an address, it also listens there (the lab's end of the veth
    /// path, [`veth::LAB_ADDR`]) and answers queries from [`veth::NET`].
    pub veth: Option<&'a str>,
}

/// One server kind of the lab (NSD, Unbound, BIND).
pub trait LabServer: Send {
    /// Its kind's name (`nsd`, `unbound`, `bind`), for messages and the
    /// run directory's file names.
    fn kind(&self) -> &'static str;
    /// Writes the server's files into `at.dir` and says how to start it.
    fn prepare(&self, at: &Prepare<'_>) -> Result<Launch, ServerError>;
    /// The installed version, such as `unbound 1.17.1`.
    fn version(&self) -> Option<String>;
    /// Each worker's requests so far, read from the running server whose
    /// files are in `dir` (`Server::worker_requests`).
    fn worker_requests(&self, _dir: &Path) -> Option<Vec<u64>> {
        None
    }
}

/// This start's CA and a certificate for `addr` (and `localhost`), in
/// `dir`, for a lab server that serves TLS; the error names `kind`.
pub fn start_cert(
    kind: &'static str,
    dir: &Path,
    key: crate::tls::cert::KeyType,
    addr: &str,
) -> Result<crate::tls::cert::ServerCert, ServerError> {
    let ip: std::net::IpAddr = addr.parse().expect("a lab address");
    crate::tls::cert::make(dir, key, &["localhost"], &[ip]).map_err(|e| ServerError::Start {
        kind,
        message: e.to_string(),
    })
}

/// A certificate's paths under `/x/tls`, for tests of a rendered config.
#[cfg(test)]
pub(crate) fn paths_only_cert() -> crate::tls::cert::ServerCert {
    crate::tls::cert::ServerCert {
        ca_pem: String::new(),
        ca_file: "/x/tls/ca.pem".into(),
        cert_file: "/x/tls/server.pem".into(),
        key_file: "/x/tls/server.key".into(),
    }
}

/// The installed binary at the first existing path, or a "not installed" error.
pub fn binary(kind: &'static str, paths: &[&str], package: &str) -> Result<PathBuf, ServerError> {
    paths
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .ok_or_else(|| ServerError::Missing {
            kind,
            message: format!(
                "none of {} exists (Debian package {package})",
                paths.join(", ")
            ),
        })
}

/// First line of a version command's output (stdout or stderr).
pub fn version_line(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// A running server inside the lab.
struct Running {
    kind: &'static str,
    process: ServerProcess,
    dir: PathBuf,
    log: Option<PathBuf>,
}

impl Running {
    fn log_tail(&self) -> String {
        let mut text = process::log_tail(&self.dir.join(format!("{}.stderr", self.kind)), 8);
        if let Some(log) = &self.log {
            let more = process::log_tail(log, 8);
            if !more.is_empty() {
                text = format!("{text}\n{more}");
            }
        }
        text.trim().to_string()
    }

    fn stop(&mut self) {
        let _ = self.process.stop(libc::SIGTERM, Duration::from_secs(5));
    }
}

/// A started lab. Field order is drop order: servers, then the namespace,
/// then the directory.
struct Lab {
    servers: Vec<Running>,
    /// The client end of the veth path, when the workload asked for one.
    client: Option<Netns>,
    netns: Netns,
    configs: String,
    /// The target's DNS over TLS, when it serves it.
    tls: Option<LaunchTls>,
    dir: crate::owned::OwnedDir,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for s in self.servers.iter_mut().rev() {
            s.stop();
        }
    }
}

/// A DNS lab target: NSD alone, or NSD plus a resolver (the last server).
pub struct DnsLab {
    kind: &'static str,
    /// Hosts in the zones of the current start (0: only the zones' own
    /// records, when the workload declares no dataset).
    hosts: u32,
    /// The current start has a veth path (the workload asked for one).
    veth: bool,
    servers: Vec<Box<dyn LabServer>>,
    base_dir: PathBuf,
    lab: Option<Lab>,
    dataset: Option<DatasetInfo>,
}

impl DnsLab {
    /// `servers` start in order; the last one is the target under test.
    pub fn new(kind: &'static str, servers: Vec<Box<dyn LabServer>>, base_dir: &Path) -> DnsLab {
        DnsLab {
            kind,
            hosts: 0,
            veth: false,
            servers,
            base_dir: base_dir.to_path_buf(),
            lab: None,
            dataset: None,
        }
    }

    /// The zones' hosts for `dataset` and whether it asks for a veth
    /// path, refusing data a DNS lab does not hold.
    fn hosts_of(&self, dataset: Option<&Dataset>) -> Result<(u32, bool), ServerError> {
        match dataset {
            None => Ok((0, false)),
            Some(Dataset::DnsZones { hosts, veth }) if *hosts <= names::MAX_HOSTS => {
                Ok((*hosts, *veth))
            }
            Some(other) => {
                let holds = format!(
                    "zones of up to {} hosts (`[load] kind = \"dns\"`, `names`)",
                    names::MAX_HOSTS
                );
                Err(super::wrong_dataset(self.kind, &holds, other))
            }
        }
    }

    /// The lab's namespace while it runs.
    pub fn netns(&self) -> Option<&Netns> {
        self.lab.as_ref().map(|l| &l.netns)
    }

    /// The client namespace of the lab's veth path, while it runs with one.
    pub fn client_netns(&self) -> Option<&Netns> {
        self.lab.as_ref().and_then(|l| l.client.as_ref())
    }

    /// The lab's run directory while it runs (configs, logs, zones, the
    /// Unbound control socket).
    pub fn run_dir(&self) -> Option<&Path> {
        self.lab.as_ref().map(|l| l.dir.path())
    }

    fn target_addr(&self) -> &'static str {
        if self.servers.len() > 1 {
            zones::RESOLVER_ADDR
        } else {
            zones::AUTH_ADDR
        }
    }

    /// Writes the zone files; returns the zones and their bytes.
    fn write_zones(&self, dir: &Path) -> Result<(Vec<String>, u64), ServerError> {
        let zone_dir = dir.join("zones");
        std::fs::create_dir_all(&zone_dir).map_err(|e| ServerError::io(&zone_dir, e))?;
        let all = names::all_zones(self.hosts);
        let mut bytes = 0;
        for z in &all {
            let f = zone_dir.join(zones::file_name(z));
            let text = zones::render(z, self.hosts);
            bytes += text.len() as u64;
            std::fs::write(&f, text).map_err(|e| ServerError::io(&f, e))?;
        }
        Ok((all, bytes))
    }

    fn start_one(
        &self,
        server: &dyn LabServer,
        lab: &Lab,
        dir: &Path,
        zone_list: &[String],
        veth: Option<&str>,
        placement: &Placement,
    ) -> Result<(Running, Launch), ServerError> {
        let launch = server.prepare(&Prepare {
            dir,
            zones: zone_list,
            veth,
        })?;
        let kind = server.kind();
        let stderr_path = dir.join(format!("{kind}.stderr"));
        let stderr =
            std::fs::File::create(&stderr_path).map_err(|e| ServerError::io(&stderr_path, e))?;
        let mut cmd = Command::new(&launch.program);
        cmd.args(&launch.args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        lab.netns
            .configure(&mut cmd)
            .map_err(|e| ServerError::Start {
                kind: self.kind,
                message: e.to_string(),
            })?;
        let process = ServerProcess::spawn(cmd, placement).map_err(|e| ServerError::Start {
            kind: self.kind,
            message: format!("{}: {e}", launch.program.display()),
        })?;
        Ok((
            Running {
                kind,
                process,
                dir: dir.to_path_buf(),
                log: launch.log.clone(),
            },
            launch,
        ))
    }

    /// Waits until `running` answers a question for the lab's zone at `addr`.
    fn wait_answers(
        &self,
        running: &Running,
        netns: &str,
        addr: &str,
        shutdown: &Shutdown,
    ) -> Result<(), ServerError> {
        let server = format!("{addr}:53");
        let name = format!("ns.{}", names::FORWARD_ZONE);
        let pid = running.process.pid();
        let session = SetupAddr {
            uri: &server,
            netns: Some(netns),
            timeout: Duration::from_millis(300),
        };
        let r = process::wait_session_ready(READY_TIMEOUT, shutdown, pid, || {
            crate::wire::dns::setup::connect(&session)
        });
        match r {
            Ok(()) => Ok(()),
            Err((WaitError::Interrupted, _)) => Err(ServerError::Interrupted),
            Err((WaitError::Died, _)) => Err(ServerError::Start {
                kind: running.kind,
                message: format!(
                    "{} exited during startup; its log ends:\n{}",
                    running.kind,
                    running.log_tail()
                ),
            }),
            Err((WaitError::TimedOut, last)) => Err(ServerError::NotReady {
                kind: running.kind,
                waited_s: READY_TIMEOUT.as_secs_f64(),
                message: format!(
                    "no NOERROR answer for {name} at {server} ({last}); its log ends:\n{}",
                    running.log_tail()
                ),
            }),
        }
    }

    fn start_lab(&mut self, placement: &Placement, shutdown: &Shutdown) -> Result<(), ServerError> {
        let dir = crate::server::rundir::create(&self.base_dir, crate::server::rundir::DNS_LAB)
            .map_err(|e| ServerError::io(&self.base_dir, e))?;
        let netns = Netns::create("dns").map_err(|e| ServerError::Start {
            kind: self.kind,
            message: e.to_string(),
        })?;
        let path = dir.path().to_path_buf();
        let (zone_list, bytes) = self.write_zones(&path)?;
        self.dataset = (self.hosts > 0).then(|| DatasetInfo {
            description: Dataset::DnsZones {
                hosts: self.hosts,
                veth: self.veth,
            }
            .describe(),
            bytes,
        });
        let client = match self.veth {
            true => Some(veth::client(self.kind, &netns)?),
            false => None,
        };
        let mut lab = Lab {
            servers: Vec::new(),
            client,
            netns,
            configs: String::new(),
            tls: None,
            dir,
        };
        let last = self.servers.len() - 1;
        for (i, server) in self.servers.iter().enumerate() {
            let veth = (i == last && self.veth).then_some(veth::LAB_ADDR);
            let (running, launch) =
                self.start_one(server.as_ref(), &lab, &path, &zone_list, veth, placement)?;
            lab.configs
                .push_str(&format!("# {} config\n{}\n", server.kind(), launch.config));
            if i == last {
                lab.tls = launch.tls;
            }
            lab.servers.push(running);
            let addr = if i == last {
                self.target_addr()
            } else {
                zones::AUTH_ADDR
            };
            let ns = lab.netns.name().to_string();
            let running = lab.servers.last().expect("just pushed");
            self.wait_answers(running, &ns, addr, shutdown)?;
            if let (Some(veth), Some(client)) = (veth, &lab.client) {
                self.wait_answers(running, client.name(), veth, shutdown)?;
            }
        }
        self.lab = Some(lab);
        Ok(())
    }
}

impl Server for DnsLab {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn start(
        &mut self,
        placement: &Placement,
        dataset: Option<&Dataset>,
        shutdown: &Shutdown,
    ) -> Result<Endpoint, ServerError> {
        self.stop()?;
        (self.hosts, self.veth) = self.hosts_of(dataset)?;
        self.dataset = None;
        self.start_lab(placement, shutdown)?;
        let ns = self.netns().expect("lab started").name();
        let via = self
            .client_netns()
            .map(|c| format!("&veth={}:53@{}", veth::LAB_ADDR, c.name()))
            .unwrap_or_default();
        let tls = self.lab.as_ref().and_then(|l| l.tls.clone());
        let dot = tls
            .as_ref()
            .map(|t| format!("&dot={}:{}", self.target_addr(), t.port))
            .unwrap_or_default();
        let doh = tls
            .as_ref()
            .and_then(|t| t.doh_port)
            .map(|p| format!("&doh={}:{p}", self.target_addr()))
            .unwrap_or_default();
        Ok(Endpoint {
            ca_pem: tls.map(|t| t.ca_pem),
            uri: format!("dns://{}:53?netns={ns}{via}{dot}{doh}", self.target_addr()),
        })
    }

    fn stop(&mut self) -> Result<(), ServerError> {
        self.lab = None;
        Ok(())
    }

    fn is_running(&self) -> bool {
        self.lab
            .as_ref()
            .is_some_and(|l| l.servers.iter().all(|s| s.process.is_running()))
    }

    fn root_pid(&self) -> Option<u32> {
        self.lab
            .as_ref()
            .and_then(|l| l.servers.last())
            .map(|s| s.process.pid())
    }

    fn version(&self) -> Option<String> {
        let v: Vec<String> = self
            .servers
            .iter()
            .rev()
            .filter_map(|s| s.version())
            .collect();
        (!v.is_empty()).then(|| v.join("; "))
    }

    fn effective_config(&self) -> Option<String> {
        self.lab.as_ref().map(|l| l.configs.clone())
    }

    fn dataset(&self) -> Option<DatasetInfo> {
        self.dataset.clone()
    }

    fn worker_requests(&self) -> Option<Vec<u64>> {
        self.servers.last()?.worker_requests(self.run_dir()?)
    }
}

impl Drop for DnsLab {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The default of a lab's thread and process counts.
fn one() -> u32 {
    1
}

/// Checks a thread count.
pub fn check_threads(kind: &'static str, field: &str, n: u32) -> Result<(), ServerError> {
    if n == 0 || n > 256 {
        return Err(ServerError::Settings {
            kind,
            message: format!("{field} must be 1 to 256"),
        });
    }
    Ok(())
}
