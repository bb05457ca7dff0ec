//! The coordinator's view of every remote host of a run: the server host's
//! agent and the client hosts' agents, connected once at the start of the
//! run, and a load run coordinated over all clients.
//!
//! A coordinated trial: every client gets its share of the load
//! ([`super::split`]) and one common start instant, a little in the future
//! on the coordinator's clock, translated into each host's clock with its
//! measured offset ([`super::clock`]). Each client returns its mergeable
//! result; the coordinator merges them as a driver merges its threads.
//!
//! A lost agent (killed, or its ssh session gone) does not end the run:
//! before each trial [`Cluster::heal`] reconnects every lost agent,
//! redeploying it if needed, with a bounded number of attempts and a
//! backoff between them ([`backoff`]). A host that stays gone is an error
//! naming it ([`RemoteError::Gone`]), which ends the run early; a server
//! host that stays gone is set aside instead ([`Cluster::gone`]), so the
//! runner fails only the trials of the systems on it and the others go on.

use super::clock;
use super::conn::{AgentConn, CALL_TIMEOUT};
use super::deploy;
use super::lock;
use super::protocol::{LoadRequest, Reply, Request};
use super::ssh::Ssh;
use super::wire::WireResult;
use super::{Host, RemoteError};
use crate::load::{LoadResult, LoadSpec};
use crate::recipe::hosts::Hosts;
use crate::shutdown::Shutdown;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How far ahead of "now" a coordinated start is set: enough for the
/// request to reach every client over ssh, i.e. several of the slowest
/// client's measured round trips, within these bounds.
const MIN_START_LEAD: Duration = Duration::from_millis(20);
const MAX_START_LEAD: Duration = Duration::from_secs(1);

/// The lead for clients whose offset bounds (half round trips) are given:
/// ten round trips of the slowest, clamped to [20 ms, 1 s].
pub fn start_lead(bounds_ns: &[i64]) -> Duration {
    let worst = bounds_ns.iter().copied().max().unwrap_or(0).max(0) as u64;
    Duration::from_nanos(worst.saturating_mul(20)).clamp(MIN_START_LEAD, MAX_START_LEAD)
}

/// A connected agent, shared between the runner's pieces. Reconnecting
/// replaces the connection inside, so every holder sees the new one.
pub type SharedAgent = Arc<Mutex<AgentConn>>;

/// Reconnection attempts for a lost agent before its host counts as gone.
pub const RECONNECT_ATTEMPTS: u32 = 4;

/// How long a stale agent gets to stop its server after SIGTERM before it
/// is killed (its server's watchdog then stops the server).
const STALE_STOP_S: u32 = 10;

/// Stops agent `pid` on `host` if it still runs: an agent whose ssh
/// session a partition cut, but whose host never saw the connection end,
/// so it kept its server (and the server's watchdog) running, holding the
/// port the new agent's server needs. Only a process that is a scalelab
/// agent is signalled (the PID may have been reused). Whether one was.
fn stop_stale_agent(ssh: &Ssh, host: &Host, pid: u32) -> bool {
    let script = format!(
        "case \"$(tr '\\0' ' ' </proc/{pid}/cmdline 2>/dev/null)\" in \
         *' agent --workdir '*) kill -TERM {pid}; i=0; \
         while kill -0 {pid} 2>/dev/null && [ $i -lt {tries} ]; do sleep 0.1; i=$((i+1)); done; \
         kill -KILL {pid} 2>/dev/null; echo stopped;; esac",
        tries = STALE_STOP_S * 10
    );
    ssh.run(
        host,
        &script,
        None,
        Duration::from_secs(u64::from(STALE_STOP_S) + 10),
    )
    .is_ok_and(|out| out.contains("stopped"))
}

/// The wait before reconnection attempt `attempt` (1-based): none before
/// the first, then 1 s, 2 s, 4 s, ... doubling, at most 8 s. With ssh's
/// 5 s connect timeout, a host that stays gone is named within about 30 s.
pub fn backoff(attempt: u32) -> Duration {
    match attempt {
        0 | 1 => Duration::ZERO,
        n => Duration::from_secs(1 << (n - 2).min(3)),
    }
}

/// An agent that was lost and is connected again.
#[derive(Debug)]
pub struct Reconnected {
    /// Its host.
    pub host: Host,
    /// The attempt that succeeded (1-based).
    pub attempt: u32,
    /// The old agent's PID, when it was still running on the host (its
    /// session lost to a partition that healed) and was stopped, with its
    /// server.
    pub stale_stopped: Option<u32>,
}

/// What [`Cluster::heal`] did.
#[derive(Debug, Default)]
pub struct Healed {
    /// The agents connected again.
    pub reconnected: Vec<Reconnected>,
    /// The server hosts that stayed gone this time, with why: set aside
    /// ([`Cluster::gone`]) and not tried again.
    pub gone: Vec<(Host, RemoteError)>,
}

/// Every agent of a run.
pub struct Cluster {
    ssh: Ssh,
    hosts: Vec<Host>,
    /// The agents' working directory on every host.
    workdir: String,
    /// The agent of each server host that has one, by host.
    pub servers: Vec<(Host, SharedAgent)>,
    pub clients: Vec<SharedAgent>,
    /// Server hosts that stayed gone, with the last error's text.
    gone: Mutex<Vec<(Host, String)>>,
    /// Non-loopback addresses load may go to.
    pub allowed: Vec<std::net::IpAddr>,
}

/// One client's part of a coordinated load.
#[derive(Debug)]
pub struct ClientPart {
    pub host: Host,
    pub result: LoadResult,
    /// When its measured window began, on the coordinator's clock (ns).
    pub started_ns: i128,
}

/// What a coordinated load returned.
#[derive(Debug)]
pub struct ClusterLoad {
    pub merged: LoadResult,
    pub parts: Vec<ClientPart>,
    /// Latest minus earliest client start (coordinator clock), the bound on
    /// how unevenly the clients began.
    pub start_skew: Duration,
    /// Wall time the coordination added beyond the load's own duration.
    pub overhead: Duration,
}

impl Cluster {
    /// Copies the agent to every host that lacks this build and connects,
    /// all hosts at once. An unreachable host fails within seconds, named.
    /// The server hosts in `without_agent` get none (only `external`
    /// servers run there, on a host that may not run scalelab); they are
    /// only reached with plain ssh commands.
    pub fn connect(
        hosts: &Hosts,
        workdir: &str,
        without_agent: &[Host],
    ) -> Result<Cluster, RemoteError> {
        let ssh = Ssh::from_env()?;
        let all = hosts.all();
        let agent_hosts: Vec<Host> = all
            .iter()
            .filter(|h| !without_agent.contains(h) || hosts.clients.contains(h))
            .cloned()
            .collect();
        for host in without_agent.iter().filter(|h| !hosts.clients.contains(h)) {
            // Reachable within seconds, or a clear error naming it.
            ssh.run(host, "true", None, Duration::from_secs(15))?;
        }
        let handles: Vec<_> = agent_hosts
            .iter()
            .map(|h| {
                let (ssh, h, workdir) = (ssh.clone(), h.clone(), workdir.to_string());
                std::thread::spawn(move || {
                    let path = deploy::ensure_agent(&ssh, &h)?;
                    AgentConn::connect(&ssh, &h, &path, &workdir)
                })
            })
            .collect();
        let mut conns = Vec::new();
        let mut first_err = None;
        for (h, handle) in agent_hosts.iter().zip(handles) {
            match handle.join() {
                Ok(Ok(c)) => conns.push((h.clone(), Arc::new(Mutex::new(c)))),
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    first_err.get_or_insert(RemoteError::Agent {
                        host: h.to_string(),
                        message: "connecting failed unexpectedly".into(),
                    });
                }
            }
        }
        if let Some(e) = first_err {
            drop(conns);
            ssh.close(&all);
            return Err(e);
        }
        let find = |h: &Host| conns.iter().find(|(x, _)| x == h).map(|(_, c)| c.clone());
        let servers = hosts
            .server
            .iter()
            .chain(&hosts.systems)
            .filter_map(|h| find(h).map(|a| (h.clone(), a)))
            .collect();
        let cluster = Cluster {
            servers,
            gone: Mutex::new(Vec::new()),
            clients: hosts.clients.iter().filter_map(find).collect(),
            allowed: hosts.addresses(),
            ssh,
            hosts: all,
            workdir: workdir.to_string(),
        };
        Ok(cluster)
    }

    /// Reconnects every agent whose session ended (the agent killed, its
    /// sshd session or the connection gone), redeploying the agent if the
    /// host lost it: at most [`RECONNECT_ATTEMPTS`] attempts each, waiting
    /// [`backoff`] before each. Returns the agents reconnected and the
    /// server hosts set aside as gone; fails with [`RemoteError::Gone`],
    /// naming the host, when a client host stays gone.
    pub fn heal(&self) -> Result<Healed, RemoteError> {
        let mut healed = Healed::default();
        let servers = self.servers.iter().map(|(_, a)| (a, true));
        for (agent, is_server) in servers.chain(self.clients.iter().map(|a| (a, false))) {
            let host = {
                let mut a = lock(agent);
                if a.is_alive() {
                    continue;
                }
                a.host.clone()
            };
            if is_server && self.gone(&host).is_some() {
                continue;
            }
            let began = Instant::now();
            let mut attempt = 0;
            let conn = loop {
                attempt += 1;
                std::thread::sleep(backoff(attempt));
                let tried = deploy::ensure_agent(&self.ssh, &host)
                    .and_then(|path| AgentConn::connect(&self.ssh, &host, &path, &self.workdir));
                match tried {
                    Ok(conn) => break Some(conn),
                    Err(e) if attempt >= RECONNECT_ATTEMPTS => {
                        let gone = RemoteError::Gone {
                            host: host.to_string(),
                            attempts: attempt,
                            waited_s: began.elapsed().as_secs_f64(),
                            last: Box::new(e),
                        };
                        if !is_server {
                            return Err(gone);
                        }
                        lock(&self.gone).push((host.clone(), gone.to_string()));
                        healed.gone.push((host.clone(), gone));
                        break None;
                    }
                    Err(_) => continue,
                }
            };
            let Some(conn) = conn else { continue };
            let new_pid = conn.facts.pid;
            // The old connection is dropped here: its ssh has exited.
            let stale = std::mem::replace(&mut *lock(agent), conn).facts.pid;
            let stale_stopped = stale
                .filter(|p| Some(*p) != new_pid)
                .filter(|p| stop_stale_agent(&self.ssh, &host, *p));
            healed.reconnected.push(Reconnected {
                host,
                attempt,
                stale_stopped,
            });
        }
        Ok(healed)
    }

    /// Why server host `host` is set aside as gone, if it is.
    pub fn gone(&self, host: &Host) -> Option<String> {
        lock(&self.gone)
            .iter()
            .find(|(h, _)| h == host)
            .map(|(_, why)| why.clone())
    }

    /// The agent of server host `host`, if it has one.
    pub fn server_agent(&self, host: &Host) -> Option<&SharedAgent> {
        self.servers.iter().find(|(h, _)| h == host).map(|(_, a)| a)
    }

    /// The hosts whose agent's session has ended (lost since the last
    /// [`Cluster::heal`]).
    pub fn lost_hosts(&self) -> Vec<Host> {
        let mut lost: Vec<Host> = Vec::new();
        for agent in self.servers.iter().map(|(_, a)| a).chain(&self.clients) {
            let mut a = lock(agent);
            if !a.is_alive() && !lost.contains(&a.host) {
                lost.push(a.host.clone());
            }
        }
        lost
    }

    /// [`Cluster::lost_hosts`] that a trial whose server runs on `server`
    /// depends on: that host and the client hosts.
    pub fn lost_hosts_of(&self, server: Option<&Host>) -> Vec<Host> {
        let clients: Vec<Host> = self.clients.iter().map(|a| lock(a).host.clone()).collect();
        self.lost_hosts()
            .into_iter()
            .filter(|h| Some(h) == server || clients.contains(h))
            .collect()
    }

    /// The ssh command line every host is reached with.
    pub fn ssh(&self) -> &Ssh {
        &self.ssh
    }

    /// Every host's environment fingerprint.
    pub fn fingerprints(&self) -> Vec<(Host, Result<crate::probe::Fingerprint, RemoteError>)> {
        let mut out = Vec::new();
        for agent in self.servers.iter().map(|(_, a)| a).chain(&self.clients) {
            let mut a = lock(agent);
            let host = a.host.clone();
            if out.iter().any(|(h, _)| *h == host) {
                continue;
            }
            let fp = match a.call(Request::Fingerprint, CALL_TIMEOUT) {
                Ok(Reply::Fingerprint(f)) => Ok(*f),
                Ok(other) => Err(RemoteError::Agent {
                    host: host.to_string(),
                    message: format!("unexpected reply to fingerprint: {other:?}"),
                }),
                Err(e) => Err(e),
            };
            out.push((host, fp));
        }
        out
    }

    /// Runs `spec` (totals) split over the client hosts, all starting at one
    /// instant. A client that fails or drops its connection fails the whole
    /// load with an error naming that host.
    /// `settings` is the load kind's settings as TOML text, which each
    /// agent compiles once.
    pub fn run_load(
        &self,
        kind: &str,
        settings: &str,
        endpoint: &str,
        spec: &LoadSpec,
        shutdown: &Shutdown,
    ) -> Result<ClusterLoad, RemoteError> {
        let began = Instant::now();
        let shares = super::split::split(spec, self.clients.len());
        let bounds: Vec<i64> = self
            .clients
            .iter()
            .map(|c| lock(c).offset.bound_ns)
            .collect();
        let lead = start_lead(&bounds);
        let start_local = clock::now_ns() + lead.as_nanos() as i128;
        let mut active = Vec::new();
        let limit = lead + spec.duration + spec.timeout + Duration::from_secs(30);
        for (agent, share) in self.clients.iter().zip(shares) {
            let Some(share) = share else { continue };
            let mut a = lock(agent);
            let request = LoadRequest {
                kind: kind.to_string(),
                settings: settings.to_string(),
                endpoint: endpoint.to_string(),
                spec: share,
                start_at_ns: Some(a.offset.to_remote(start_local) as i64),
                allowed: self.allowed.clone(),
            };
            if let Err(e) = a.send(Request::RunLoad(request)) {
                drop(a);
                // The clients already started answer this run's request,
                // cancelled, so no late reply is taken for the next one.
                cancel_all(&active);
                let _ = collect(&active, limit, shutdown);
                return Err(e);
            }
            active.push(agent.clone());
        }
        let parts = collect(&active, limit, shutdown)?;
        let mut merged = LoadResult::new();
        for p in &parts {
            merged.merge(&p.result);
        }
        let starts: Vec<i128> = parts.iter().map(|p| p.started_ns).collect();
        let skew = starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0);
        let overhead = began.elapsed().saturating_sub(merged.elapsed);
        Ok(ClusterLoad {
            merged,
            parts,
            start_skew: Duration::from_nanos(skew.max(0) as u64),
            overhead,
        })
    }

    /// Stops every agent (and so every remote server) and closes the
    /// shared ssh connections.
    pub fn close(&mut self) {
        for a in self.servers.iter().map(|(_, a)| a).chain(&self.clients) {
            lock(a).close();
        }
        self.ssh.close(&self.hosts);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.close();
    }
}

/// Sends `cancel` to every agent in `agents`: each returns what it
/// measured at once.
fn cancel_all(agents: &[SharedAgent]) {
    for a in agents {
        let _ = lock(a).send(Request::Cancel);
    }
}

/// Waits for every active client's load reply, in order. Ctrl-C sends
/// `cancel` to all of them, so they return what they measured at once. A
/// client that fails (or is lost) cancels the others, and every reply is
/// still waited for, so none is left to be read as the next request's; the
/// first failure is returned.
fn collect(
    active: &[SharedAgent],
    limit: Duration,
    shutdown: &Shutdown,
) -> Result<Vec<ClientPart>, RemoteError> {
    let deadline = Instant::now() + limit;
    let mut parts = Vec::new();
    let mut cancelled = false;
    let mut first_err = None;
    for agent in active {
        let got = loop {
            if (shutdown.is_triggered() || first_err.is_some()) && !cancelled {
                cancelled = true;
                cancel_all(active);
            }
            let mut a = lock(agent);
            let left = deadline.saturating_duration_since(Instant::now());
            match a.receive(left.min(Duration::from_millis(200)), "run_load") {
                Err(RemoteError::Timeout { .. }) if !left.is_zero() => continue,
                other => {
                    if matches!(other, Err(RemoteError::Timeout { .. })) {
                        a.abandon(); // its late reply must not answer the next run
                    }
                    break client_part(&mut a, other);
                }
            }
        };
        match got {
            Ok(part) => parts.push(part),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(parts),
    }
}

/// One client's reply to `run_load` as its part of the load.
fn client_part(
    a: &mut AgentConn,
    reply: Result<Reply, RemoteError>,
) -> Result<ClientPart, RemoteError> {
    match reply? {
        Reply::Load(reply) => {
            let host = a.host.clone();
            let result = reply_result(&host, reply.result)?;
            let started_ns = reply.started_ns as i128 - a.offset.offset_ns as i128;
            Ok(ClientPart {
                host,
                result,
                started_ns,
            })
        }
        other => Err(RemoteError::Agent {
            host: a.host.to_string(),
            message: format!("unexpected reply to run_load: {other:?}"),
        }),
    }
}

fn reply_result(host: &Host, w: WireResult) -> Result<LoadResult, RemoteError> {
    w.into_result().map_err(|message| RemoteError::Agent {
        host: host.to_string(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_lead_follows_the_slowest_round_trip() {
        assert_eq!(start_lead(&[]), MIN_START_LEAD);
        // 2.5 ms half round trip: ten 5 ms round trips.
        assert_eq!(start_lead(&[100_000, 2_500_000]), Duration::from_millis(50));
        assert_eq!(start_lead(&[10_000_000_000]), MAX_START_LEAD);
    }

    #[test]
    fn reconnection_backs_off_and_is_bounded() {
        let waits: Vec<u64> = (1..=6).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [0, 1, 2, 4, 8, 8]);
        let total: Duration = (1..=RECONNECT_ATTEMPTS).map(backoff).sum();
        // With ssh's 5 s connect timeout per attempt, a gone host is
        // named within about half a minute.
        assert!(total + Duration::from_secs(5) * RECONNECT_ATTEMPTS <= Duration::from_secs(30));
    }
}
