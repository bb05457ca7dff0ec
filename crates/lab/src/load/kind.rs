//! What a load kind is: one value in the [`KINDS`](super::KINDS) registry.

use super::{Driver, ErrorKind, LoadError};
use crate::kinds::Requirement;
use crate::model::Dataset;
use crate::units::RateUnit;

/// Compiles a load kind's settings table (the `[load]` table minus the
/// common load fields) into its typed plan: the kind's settings parsing,
/// the one place its table is read.
pub type CompileLoad = fn(&toml::Table) -> Result<Box<dyn LoadPlan>, LoadError>;

/// A load kind's compiled settings: its typed settings struct, checked,
/// the dataset they declare, and how a driver is built from them. The
/// experiment is compiled into these once, before a run starts.
pub trait LoadPlan: Send + Sync {
    /// The driver, aimed at `endpoint` (a URL, a libpq connection string,
    /// ...). Nothing connects until it runs.
    fn driver(&self, endpoint: &str) -> Result<Box<dyn Driver>, LoadError>;
    /// The dataset the settings declare (pg's `scale`, mysql's `tables`,
    /// dns's `names`), which the runner hands to the server target; `None`
    /// when the workload needs none or uses what the server already holds.
    fn dataset(&self) -> Option<Dataset>;
    /// Measured windows of `duration` one trial runs, the fewest and the
    /// most: 1, or a search's steps (`forward`: half its `max_steps` to
    /// all of them); what `run`'s estimate multiplies by.
    fn windows_per_trial(&self) -> std::ops::RangeInclusive<u32> {
        1..=1
    }
    /// The most load threads these settings can run, and why; `None`: no
    /// limit. A recipe that leaves `threads` out gets this many (at most);
    /// one that asks for more is refused when it is checked.
    fn threads_at_most(&self) -> Option<ThreadLimit> {
        None
    }
}

/// A load kind's limit on its threads ([`LoadPlan::threads_at_most`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadLimit {
    /// The most threads.
    pub threads: u32,
    /// Why, and what to change instead (for the error).
    pub why: &'static str,
}

/// Builds a kind's driver from its settings `S`, aimed at an endpoint.
pub type DriverFrom<S> = fn(&S, &str) -> Result<Box<dyn Driver>, LoadError>;

/// The plan of a kind whose settings are the struct `S`: `driver` builds
/// its driver from them, `dataset` reads the dataset they declare.
pub fn plan<S: Send + Sync + 'static>(
    settings: S,
    driver: DriverFrom<S>,
    dataset: fn(&S) -> Option<Dataset>,
) -> Box<dyn LoadPlan> {
    searching_plan(settings, driver, dataset, |_| 1..=1)
}

/// [`plan`] for a kind whose trial is a search of `windows(&S)` measured
/// windows ([`LoadPlan::windows_per_trial`]).
pub fn searching_plan<S: Send + Sync + 'static>(
    settings: S,
    driver: DriverFrom<S>,
    dataset: fn(&S) -> Option<Dataset>,
    windows: fn(&S) -> std::ops::RangeInclusive<u32>,
) -> Box<dyn LoadPlan> {
    Box::new(Compiled {
        settings,
        driver,
        dataset,
        windows,
    })
}

/// A kind whose settings declare no dataset (for [`plan`]).
pub fn no_dataset<S>(_: &S) -> Option<Dataset> {
    None
}

struct Compiled<S> {
    settings: S,
    driver: DriverFrom<S>,
    dataset: fn(&S) -> Option<Dataset>,
    windows: fn(&S) -> std::ops::RangeInclusive<u32>,
}

impl<S: Send + Sync> LoadPlan for Compiled<S> {
    fn driver(&self, endpoint: &str) -> Result<Box<dyn Driver>, LoadError> {
        (self.driver)(&self.settings, endpoint)
    }

    fn dataset(&self) -> Option<Dataset> {
        (self.dataset)(&self.settings)
    }

    fn windows_per_trial(&self) -> std::ops::RangeInclusive<u32> {
        (self.windows)(&self.settings)
    }
}

/// One load generator kind (`http`, `pg`, ...): everything the rest of
/// scalelab needs to know about it. A kind's module defines one of these as
/// `LOAD_KIND` and the registry lists it; nothing else matches on its name.
#[derive(Clone, Copy)]
pub struct LoadKind {
    /// The `kind` in an experiment's `[load]` table.
    pub name: &'static str,
    /// The protocol it speaks, which every system's server must serve.
    pub protocol: crate::model::Protocol,
    /// What its throughput counts.
    pub unit: RateUnit,
    /// The failures its driver can count (the columns its reports show).
    pub error_kinds: &'static [ErrorKind],
    /// What must be installed on the load machine.
    pub requires: &'static [Requirement],
    /// Checks the kind-specific settings (the `[load]` table minus the
    /// common load fields) and compiles them into the kind's [`LoadPlan`]
    /// (its driver and its dataset), without building anything.
    pub compile: CompileLoad,
    /// How its trial facts are read back from the store
    /// ([`super::facts::TrialFacts`]); `None`: it records none.
    pub facts: Option<super::facts::FactsReader>,
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
