//! The router under test (`[server] kind = "router"`): scalelab builds the
//! lab A — R — B (three network namespaces joined by veth pairs, addresses
//! in 198.18.0.0/15, forwarding on in R) with R's settings applied, and the
//! `forward` load drives packets from A through R to B.
//!
//! - [`settings`]: the typed settings and their checks;
//! - [`topology`] (in [`crate::model`], since the `forward` load reads it
//!   too): names and addresses of the nodes (the seam where real hosts will
//!   replace namespaces);
//! - [`lab`]: building, configuring and removing the namespaces, and
//!   removing what a killed run left.
//!
//! The server's CPUs (`server_cpus`) are R's CPUs: forwarding on veth runs in
//! softirq context, which RPS on R's interfaces places on those CPUs.

pub mod lab;
pub mod settings;

use super::{Endpoint, Server, ServerError};
use crate::model::topology;
use crate::placement::Placement;
use crate::shutdown::Shutdown;
use lab::Lab;
pub use settings::RouterSettings;

const KIND: &str = "router";

/// The registry entry: `[server] kind = "router"`.
pub const SERVER_KIND: super::ServerKind = super::ServerKind {
    name: KIND,
    serves: Some(crate::model::Protocol::FRAMES),
    parallelism: &["queues", "rps_cpus", "xps_cpus"],
    requires: &[
        crate::kinds::Requirement {
            what: "ip (router lab namespaces and veths)",
            package: "iproute2",
            paths: &["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"],
        },
        crate::kinds::Requirement {
            what: "nft (router firewall rules)",
            package: "nftables",
            paths: &["/usr/sbin/nft", "/sbin/nft"],
        },
        crate::kinds::Requirement {
            what: "ethtool (router GRO/GSO settings)",
            package: "ethtool",
            paths: &["/usr/sbin/ethtool", "/sbin/ethtool"],
        },
    ],
    compile: |t| {
        let settings = RouterSettings::parse(t)?;
        Ok(super::plan::of(settings, |s, _base| {
            Ok(Box::new(Router::from_settings(s.clone())))
        }))
    },
    runs_under_agent: true,
    listens_on_host_address: false,
    dns_lab: None,
    start_estimate: std::time::Duration::from_millis(1000),
    facts: Some(super::ServerFactsReader::of::<RouterFacts>()),
};

/// The router target: owns at most one lab at a time, built by
/// [`Server::start`] (or [`Router::build`]) and removed by `stop` or drop.
/// It runs no process of its own, so `root_pid` is `None` and the version is
/// the kernel's.
pub struct Router {
    settings: RouterSettings,
    lab: Option<Lab>,
    /// R's CPUs as placed by the runner (RPS mask), for the description.
    rps: Option<Vec<usize>>,
}

impl Router {
    /// A router from a `[server]` table, checked by
    /// [`RouterSettings::parse`]. Nothing is built until it starts.
    pub fn new(t: &toml::Table) -> Result<Self, ServerError> {
        Ok(Router::from_settings(RouterSettings::parse(t)?))
    }

    /// A router from settings already checked.
    pub fn from_settings(settings: RouterSettings) -> Self {
        Router {
            settings,
            lab: None,
            rps: None,
        }
    }

    /// The lab's node names, once started.
    pub fn topology(&self) -> Option<&topology::Topology> {
        self.lab.as_ref().map(|l| &l.topology)
    }

    /// Builds the lab outside the runner (`scalelab load forward`), with R's
    /// CPUs given directly.
    pub fn build(&mut self, r_cpus: Option<Vec<usize>>) -> Result<Endpoint, ServerError> {
        self.stop()?;
        let rps = self.settings.rps_cpus.clone().or(r_cpus);
        let lab = Lab::build(&self.settings, rps.as_deref())?;
        let uri = lab.topology.to_uri();
        self.lab = Some(lab);
        self.rps = rps;
        Ok(Endpoint { ca_pem: None, uri })
    }

    /// R's settings as recorded with every trial.
    pub fn describe(&self) -> RouterFacts {
        RouterFacts {
            settings: self.settings.clone(),
            rps_cpus: self.rps.clone(),
            queues: self.settings.queues(),
            mtu: self.settings.mtu(),
            namespaces: self.topology().map(|t| t.namespaces().map(str::to_string)),
        }
    }
}

/// What the router records about its lab with every trial
/// (`Server::describe`), stored as its context's `server_settings`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RouterFacts {
    /// The `[server]` settings, checked.
    pub settings: RouterSettings,
    /// The CPUs RPS steers R's received packets to (the setting, or the
    /// server's CPUs); `None`: RPS off.
    pub rps_cpus: Option<Vec<usize>>,
    /// RX and TX queues of every veth.
    pub queues: u32,
    /// MTU of every lab link.
    pub mtu: u32,
    /// The lab's namespaces (A, R, B), once started.
    pub namespaces: Option<[String; 3]>,
}

impl super::ServerDescription for RouterFacts {
    fn to_json(&self) -> serde_json::Value {
        // Plain data: serialising it to a JSON value cannot fail.
        serde_json::to_value(self).unwrap_or_default()
    }
    fn clone_box(&self) -> Box<dyn super::ServerDescription> {
        Box::new(self.clone())
    }
    fn chart_figures(&self) -> Vec<super::ServerFigure> {
        let link = self.settings.link_gbit.map(|value| super::ServerFigure {
            name: crate::model::topology::LINK_GBIT,
            value,
        });
        link.into_iter().collect()
    }
}

impl Server for Router {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn start(
        &mut self,
        placement: &Placement,
        dataset: Option<&crate::model::Dataset>,
        shutdown: &Shutdown,
    ) -> Result<Endpoint, ServerError> {
        crate::server::refuse_dataset(KIND, dataset)?;
        if placement.memory.is_some() {
            return Err(ServerError::Settings {
                kind: KIND,
                message:
                    "server_memory does not apply to the router (it runs no process); leave it out"
                        .into(),
            });
        }
        if shutdown.is_triggered() {
            return Err(ServerError::Interrupted);
        }
        self.build(placement.cpus.clone())
    }

    fn stop(&mut self) -> Result<(), ServerError> {
        match self.lab.take() {
            Some(mut lab) => lab.remove(),
            None => Ok(()),
        }
    }

    fn is_running(&self) -> bool {
        self.lab.as_ref().is_some_and(Lab::intact)
    }

    fn version(&self) -> Option<String> {
        crate::procfs::sysctl::read_file(crate::procfs::sysctl::OSRELEASE)
            .ok()
            .map(|v| format!("linux/{}", v.trim()))
    }

    fn effective_config(&self) -> Option<String> {
        // As a JSON value's text (keys sorted), as it always was.
        serde_json::to_value(self.describe())
            .ok()
            .map(|v| v.to_string())
    }

    fn describe(&self) -> Option<super::ServerFacts> {
        Some(super::ServerFacts::new(Router::describe(self)))
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

#[cfg(test)]
mod facts_tests {
    use super::*;

    #[test]
    fn a_router_reads_typed_and_another_shape_is_kept_as_it_was() {
        let router = r#"{"mtu":1500,"namespaces":["a","r","b"],"queues":1,"rps_cpus":[1],"settings":{"firewall":"none","firewall_rules":null,"gro":null,"gso":null,"host_rps_cpus":null,"link_gbit":10.0,"mtu":null,"queues":null,"rps_cpus":null,"sysctls":{},"xps_cpus":null}}"#;
        let facts: super::super::ServerFacts = serde_json::from_str(router).unwrap();
        let facts = facts.resolved(&[SERVER_KIND.facts.unwrap()]);
        assert!(facts.get::<RouterFacts>().is_some());
        let link = super::super::ServerFigure {
            name: crate::model::topology::LINK_GBIT,
            value: 10.0,
        };
        assert_eq!(facts.chart_figures(), [link]);
        let stored: serde_json::Value = serde_json::from_str(router).unwrap();
        assert_eq!(serde_json::to_value(&facts).unwrap(), stored);
        let other = r#"{"settings":{"link_gbit":10.0,"retired_setting":true}}"#;
        let facts: super::super::ServerFacts = serde_json::from_str(other).unwrap();
        let facts = facts.resolved(&[SERVER_KIND.facts.unwrap()]);
        assert!(!facts.is_read());
        assert_eq!(
            facts.chart_figures(),
            [],
            "nothing is read from a shape not understood"
        );
        let stored: serde_json::Value = serde_json::from_str(other).unwrap();
        assert_eq!(serde_json::to_value(&facts).unwrap(), stored);
    }
}
