//! What a server kind is: one value in the [`KINDS`](super::KINDS) registry.

use super::plan::ServerPlan;
use super::ServerError;
use crate::kinds::Requirement;
use std::net::IpAddr;
use std::path::Path;

/// Compiles a kind's settings table into its typed plan (the kind's
/// settings parsing: the one place its table is read).
pub type CompileServer = fn(&toml::Table) -> Result<Box<dyn ServerPlan>, ServerError>;

/// Builds a DNS lab of one kind for `scalelab dns lab` (settings, base
/// directory), like [`CompileServer`] and [`ServerPlan::build`] in one,
/// with the lab's own type.
pub type BuildDnsLab = fn(&toml::Table, &Path) -> Result<super::dns::DnsLab, ServerError>;

/// The settings key that makes a server listen on an address of its host
/// (see [`ServerKind::listens_on_host_address`]).
const LISTEN_SETTING: &str = "listen";

/// One server kind (`nginx`, `postgres`, `external`, ...): its settings,
/// its lifecycle (the [`Server`](super::Server) it builds) and what it needs installed. A
/// kind's module defines one of these as `SERVER_KIND` and the registry
/// lists it; nothing else matches on its name.
#[derive(Clone, Copy)]
pub struct ServerKind {
    /// The `kind` in an experiment's `[server]` table.
    pub name: &'static str,
    /// The protocol it serves, which the run's load kind must speak;
    /// `None`: whatever its URL names (`external`).
    pub serves: Option<crate::model::Protocol>,
    /// The settings that count the server's parallel workers (processes,
    /// threads, queues, CPUs): a sweep over one of them is a concurrency
    /// axis, and the report fits the USL to it. Limits such as
    /// `max_connections` are not listed: they cap concurrency, not count it.
    pub parallelism: &'static [&'static str],
    /// What must be installed to run it (`scalelab doctor` and
    /// `scripts/setup.sh` read this).
    pub requires: &'static [Requirement],
    /// Checks a settings table and compiles it into the kind's typed
    /// [`ServerPlan`], without starting anything.
    pub compile: CompileServer,
    /// Whether scalelab starts and stops the server itself, so that on
    /// another host it runs under that host's agent. `false` for a server
    /// that is already running (`external`): the host gets no agent, and
    /// the server's own commands run over plain ssh.
    pub runs_under_agent: bool,
    /// Whether the server can listen on its host's address (its settings
    /// take `listen`): only such a kind runs on another host under an
    /// agent, which sets the address ([`ServerKind::settings_on_host`]).
    pub listens_on_host_address: bool,
    /// How `scalelab dns lab` builds it (`None`: not a lab of its own).
    pub dns_lab: Option<BuildDnsLab>,
    /// How long one start takes on this project's 2-CPU VM, its lab
    /// (namespaces, zones, cold cache) included and its dataset left out
    /// ([`crate::model::Dataset::build_estimate`]): what `run`'s estimate
    /// adds per server start (`bench/estimates.sh` checks it).
    pub start_estimate: std::time::Duration,
    /// Reads the kind's stored facts about itself (`Server::describe`)
    /// back, handed to the store in the catalog (`None`: it records none).
    pub facts: Option<super::ServerFactsReader>,
}

/// The address `settings` tell a server to listen on (set by
/// [`ServerKind::settings_on_host`]), if any.
pub fn listen_address(settings: &toml::Table) -> Option<IpAddr> {
    settings.get(LISTEN_SETTING)?.as_str()?.parse().ok()
}

impl ServerKind {
    /// `settings` for this kind's server on the host at `ip`: with the
    /// host's address to listen on when the kind
    /// [listens on it](ServerKind::listens_on_host_address), else as given.
    pub fn settings_on_host(&self, settings: &toml::Table, ip: IpAddr) -> toml::Table {
        let mut settings = settings.clone();
        if self.listens_on_host_address {
            settings.insert(LISTEN_SETTING.into(), toml::Value::String(ip.to_string()));
        }
        settings
    }
}

impl crate::kinds::Kind for ServerKind {
    fn name(&self) -> &'static str {
        self.name
    }
}

impl std::fmt::Debug for ServerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerKind")
            .field("name", &self.name)
            .field("runs_under_agent", &self.runs_under_agent)
            .field("listens_on_host_address", &self.listens_on_host_address)
            .finish_non_exhaustive()
    }
}
