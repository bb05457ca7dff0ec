//! What a load kind is: one value in the [`KINDS`](super::KINDS) registry.

use super::{Driver, ErrorKind, LoadError};
use crate::kinds::Requirement;
use crate::model::Dataset;
use crate::units::RateUnit;

/// Builds a driver from its settings table, aimed at an endpoint.
pub type BuildDriver = fn(&toml::Table, &str) -> Result<Box<dyn Driver>, LoadError>;

/// One load generator kind (`http`, `pg`, ...): everything the rest of
/// scalelab needs to know about it. A kind's module defines one of these as
/// `LOAD_KIND` and the registry lists it; nothing else matches on its name.
#[derive(Clone, Copy)]
pub struct LoadKind {
    /// The `kind` in an experiment's `[load]` table.
    pub name: &'static str,
    /// What its throughput counts.
    pub unit: RateUnit,
    /// The failures its driver can count (the columns its reports show).
    pub error_kinds: &'static [ErrorKind],
    /// What must be installed on the load machine.
    pub requires: &'static [Requirement],
    /// Checks the kind-specific settings (the `[load]` table minus the
    /// common load fields) without building anything.
    pub check: fn(&toml::Table) -> Result<(), LoadError>,
    /// Builds the driver from its settings, aimed at an endpoint (a URL, a
    /// libpq connection string, ...).
    pub build: BuildDriver,
    /// The dataset its settings declare (pg's `scale`, mysql's `tables`,
    /// dns's `names`), which the runner hands to the server target; `None`
    /// when the workload needs none or uses what the server already holds.
    pub dataset: fn(&toml::Table) -> Result<Option<Dataset>, LoadError>,
}

impl crate::kinds::Kind for LoadKind {
    fn name(&self) -> &'static str {
        self.name
    }
}

impl std::fmt::Debug for LoadKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadKind")
            .field("name", &self.name)
            .field("unit", &self.unit)
            .finish_non_exhaustive()
    }
}
