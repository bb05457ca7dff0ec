//! What a server kind is: one value in the [`KINDS`](super::KINDS) registry.

use super::{Target, TargetError};
use crate::kinds::Requirement;
use std::path::Path;

/// Builds a (not yet started) server from its settings table and a base
/// directory for its private run directories.
pub type BuildTarget = fn(&toml::Table, &Path) -> Result<Box<dyn Target>, TargetError>;

/// One server kind (`nginx`, `postgres`, `external`, ...): its settings,
/// its lifecycle (the [`Target`] it builds) and what it needs installed. A
/// kind's module defines one of these as `SERVER_KIND` and the registry
/// lists it; nothing else matches on its name.
#[derive(Clone, Copy)]
pub struct ServerKind {
    /// The `kind` in an experiment's `[server]` table.
    pub name: &'static str,
    /// The settings that count the server's parallel workers (processes,
    /// threads, queues, CPUs): a sweep over one of them is a concurrency
    /// axis, and the report fits the USL to it. Limits such as
    /// `max_connections` are not listed: they cap concurrency, not count it.
    pub parallelism: &'static [&'static str],
    /// What must be installed to run it (`scalelab doctor` and
    /// `scripts/setup.sh` read this).
    pub requires: &'static [Requirement],
    /// Checks a settings table without starting anything.
    pub check: fn(&toml::Table) -> Result<(), TargetError>,
    /// Builds the (not yet started) server from its settings; private run
    /// directories go under the given base directory.
    pub build: BuildTarget,
}

impl std::fmt::Debug for ServerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerKind")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
