//! `[hosts]`: where the server under test runs and where load is generated.
//! With no `[hosts]`, everything runs on this machine.

use crate::model::Host;
use serde::Deserialize;

/// `[hosts]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHosts {
    /// The server host (`user@address`); absent: this machine.
    pub server: Option<String>,
    /// The client hosts that share the load; empty: this machine.
    #[serde(default)]
    pub clients: Vec<String>,
    /// `false`: the server hosts get no agent; their managed servers and
    /// probe run over plain ssh with the host's own `sh` and tools.
    pub agent: Option<bool>,
}

/// The checked `[hosts]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hosts {
    /// Where the server under test runs; `None`: this machine.
    pub server: Option<Host>,
    /// The server hosts `[[system]] host` names, each once (a system's
    /// own host overrides `server`).
    pub systems: Vec<Host>,
    /// Where load is generated; empty: this machine. The sweep's
    /// concurrency and rate are totals, split evenly over these.
    pub clients: Vec<Host>,
    /// Whether server hosts get an agent (`[hosts] agent`, default `true`);
    /// a system's own `agent` overrides it.
    pub agent: bool,
}

impl Default for Hosts {
    fn default() -> Self {
        Hosts {
            server: None,
            systems: Vec::new(),
            clients: Vec::new(),
            agent: true,
        }
    }
}

impl Hosts {
    /// Everything on this machine.
    pub fn is_local(&self) -> bool {
        self.server.is_none() && self.systems.is_empty() && self.clients.is_empty()
    }

    /// Every remote host, servers first, each once.
    pub fn all(&self) -> Vec<Host> {
        let mut all: Vec<Host> = self.server.iter().cloned().collect();
        for c in self.systems.iter().chain(&self.clients) {
            if !all.contains(c) {
                all.push(c.clone());
            }
        }
        all
    }

    /// The host names (ssh aliases, not IP addresses) named, which may be
    /// resolved and load may go to.
    pub fn names(&self) -> Vec<String> {
        self.all()
            .iter()
            .filter(|h| h.ip().is_none())
            .map(|h| h.address().to_string())
            .collect()
    }

    /// The IP addresses named, which load may go to.
    pub fn addresses(&self) -> Vec<std::net::IpAddr> {
        self.all().iter().filter_map(Host::ip).collect()
    }
}

/// Checks `[hosts]`; an error is (field, message, fix).
pub fn check(raw: &RawHosts) -> Result<Hosts, (String, String, String)> {
    let fix = "write hosts like \"root@198.18.0.11\" (see docs/experiment-format.md, [hosts])";
    let server = match &raw.server {
        Some(s) => Some(Host::parse(s).map_err(|m| ("server".into(), m, fix.into()))?),
        None => None,
    };
    let mut clients = Vec::new();
    for c in &raw.clients {
        let host = Host::parse(c).map_err(|m| ("clients".to_string(), m, fix.to_string()))?;
        if clients.contains(&host) {
            return Err((
                "clients".into(),
                format!("`{c}` is named twice"),
                "name each client host once".into(),
            ));
        }
        clients.push(host);
    }
    Ok(Hosts {
        server,
        systems: Vec::new(),
        clients,
        agent: raw.agent.unwrap_or(true),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_checked_and_listed_once() {
        let raw = RawHosts {
            server: Some("root@198.18.0.11".into()),
            clients: vec!["root@198.18.0.12".into(), "root@198.18.0.11".into()],
            agent: None,
        };
        let h = check(&raw).unwrap();
        assert_eq!(h.all().len(), 2);
        assert_eq!(h.addresses().len(), 2);
        assert!(h.names().is_empty());
        assert!(!h.is_local());
        let dup = RawHosts {
            server: None,
            clients: vec!["a".into(), "a".into()],
            agent: None,
        };
        assert!(check(&dup).unwrap_err().1.contains("twice"));
        assert!(check(&RawHosts::default()).unwrap().is_local());
    }
}
