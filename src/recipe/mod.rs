//! The experiment file: parsing, validation, sweep expansion.
//!
//! The format is documented in `docs/experiment-format.md`. Raw serde
//! structs ([`raw`]) are checked and cross-checked by [`validate`] into an
//! [`Experiment`]; every error names the file, the line, the field and the
//! fix ([`SpecError`]).

#![forbid(unsafe_code)]

pub mod diff;
pub mod error;
#[cfg(test)]
mod fuzz;
pub mod hosts;
pub mod locate;
pub mod plan;
mod probe;
pub mod raw;
mod servers;
pub mod steady;
pub mod sweep;
pub mod validate;

pub use error::SpecError;
pub use sweep::{Axis, AxisTarget};

use crate::analysis::summary::Headline;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A server or load component: its kind and its kind-specific settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Component {
    /// The kind's registry name.
    pub kind: String,
    /// Its kind-specific settings.
    pub settings: toml::Table,
}

/// Load settings shared by every driver (the rest of `[load]` is passed to
/// the driver as kind-specific settings).
#[derive(Clone, Debug, PartialEq)]
pub struct LoadCommon {
    /// Concurrent connections.
    pub connections: u32,
    /// `None`: one thread per client CPU, at most one per connection.
    pub threads: Option<u32>,
    /// The open-loop rate per second; `None`: closed loop.
    pub rate: Option<f64>,
    /// Requests per connection; `None`: unlimited.
    pub connreqs: Option<u32>,
    /// How long a request may take before it counts as a timeout.
    pub timeout: Duration,
}

/// When the server is restarted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restart {
    /// Only when its settings change.
    Never,
    /// At every new sweep point.
    PerPoint,
    /// Before every trial (empties caches, as seed 002 restarts named).
    PerTrial,
}

/// How trials are run and when a point has enough of them (`[trials]`).
#[derive(Clone, Debug, PartialEq)]
pub struct TrialPolicy {
    /// Measured window of each trial.
    pub duration: Duration,
    /// Load before measuring, discarded (with `warmup = "auto"`, its
    /// first step: [`steady::auto_warmup_step`]).
    pub warmup: Duration,
    /// Timeline buckets, unsteady trials and the automatic warm-up.
    pub steady: steady::SteadyPolicy,
    /// Pause between trials.
    pub cooldown: Duration,
    /// Fewest trials per point and system.
    pub min_trials: u32,
    /// Most trials per point and system.
    pub max_trials: u32,
    /// Target relative half-width of the 95% CI of the median.
    pub target_ci: f64,
    /// Time budget per point (all systems).
    pub budget: Option<Duration>,
    /// When the server is restarted.
    pub restart: Restart,
    /// The headline statistic.
    pub headline: Headline,
    /// Relative differences under this are "no difference".
    pub noise: f64,
    /// The probe's sampling interval.
    pub sample_interval: Duration,
    /// Whole runs of the sweep (`[trials] runs`, `run --repeat`): repeats
    /// of one system, each its own run with one label, so verdicts between
    /// runs have runs to count ([`crate::analysis::between`]).
    pub runs: u32,
    /// The order trials run in (`[trials] order`).
    pub order: TrialOrder,
}

/// The order trials run in (`[trials] order`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrialOrder {
    /// The default: the systems of a point in a seeded random order in
    /// each round, and the points of the sweep in a seeded random order
    /// (points that share a server start and dataset kept together, the
    /// groups and the points inside each shuffled).
    Random,
    /// The order written: the systems as listed in every round, the points
    /// in sweep order (a ramp that must rise).
    Sweep,
}

impl TrialOrder {
    /// The word the recipe and the store use: `random` or `sweep`.
    pub fn as_str(self) -> &'static str {
        match self {
            TrialOrder::Random => "random",
            TrialOrder::Sweep => "sweep",
        }
    }
}

/// Most repeats of a sweep (`[trials] runs`).
pub const MAX_RUNS: u32 = 100;

/// One compared system: a label plus overrides.
#[derive(Clone, Debug, PartialEq)]
pub struct System {
    /// Its label in reports.
    pub label: String,
    /// Whether it is the baseline.
    pub baseline: bool,
    /// Its own server host (`[[system]] host`); `None`: `[hosts] server`.
    pub host: Option<crate::model::Host>,
    /// Its own `agent`; `None`: `[hosts] agent`.
    pub agent: Option<bool>,
    /// Server settings it overrides; with a `kind` of its own, its whole
    /// server (only `[server]`'s resource keys carry over).
    pub server: toml::Table,
    /// Load settings it overrides.
    pub load: toml::Table,
}

/// A validated experiment.
#[derive(Clone, Debug, PartialEq)]
pub struct Experiment {
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: String,
    /// The file it was read from.
    pub path: PathBuf,
    /// The file's text, stored with the run.
    pub text: String,
    /// Run with `--quick`.
    pub quick: bool,
    /// `[server]`.
    pub server: Component,
    /// `[load]`: its kind and kind-specific settings.
    pub load: Component,
    /// `[load]`: the keys every driver shares.
    pub load_common: LoadCommon,
    /// `[sweep]`, in the order written.
    pub axes: Vec<Axis>,
    /// `[trials]`.
    pub trials: TrialPolicy,
    /// `[[system]]`, in the order written.
    pub systems: Vec<System>,
    /// `[hosts]`: where the server and the load run (default: here).
    pub hosts: hosts::Hosts,
    /// Flame graphs at the peak and collapse points (`[profile]` or
    /// `run --profile`); `None`: no profiling.
    pub profile: Option<ProfilePolicy>,
    /// `[probe]`: the energy source.
    pub energy: crate::probe::energy::EnergyConfig,
    /// `[probe] syscalls`: how the server's system calls are counted.
    pub syscalls: crate::probe::work::SyscallMode,
    /// `[machine]`: what is done to this machine for the run.
    pub machine: MachinePolicy,
    /// Every (system, point) pair compiled: what the runner executes.
    pub plan: std::sync::Arc<plan::Plan>,
}

/// `[machine]`: what is done to this machine for the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MachinePolicy {
    /// Apply the tune profile (`runner::tune`) for the run, put back after
    /// (`[machine] tune = true` or `run --tune`).
    pub tune: bool,
}

/// How the server is profiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProfilePolicy {
    /// `perf record -F`: samples per second per CPU.
    pub frequency: u32,
}

impl Default for ProfilePolicy {
    fn default() -> Self {
        ProfilePolicy {
            frequency: crate::profile::DEFAULT_FREQUENCY,
        }
    }
}

impl Experiment {
    /// Reads and validates an experiment file.
    pub fn load(path: &Path, quick: bool) -> Result<Experiment, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|e| SpecError {
            file: path.to_path_buf(),
            line: None,
            field: String::new(),
            message: format!("cannot read the experiment file: {e}"),
            fix: Some("check the path; recipes live in recipes/".into()),
        })?;
        Self::parse(path, &text, quick)
    }

    /// Validates experiment text; `path` is only used in messages.
    pub fn parse(path: &Path, text: &str, quick: bool) -> Result<Experiment, SpecError> {
        validate::validate(path, text, quick)
    }

    /// The baseline system's label.
    pub fn baseline(&self) -> &str {
        self.systems
            .iter()
            .find(|s| s.baseline)
            .map(|s| s.label.as_str())
            .unwrap_or(self.systems[0].label.as_str())
    }

    /// The server kind of system `system`: its own, else `[server]`'s.
    pub fn server_kind_of(&self, system: usize) -> &str {
        self.systems[system]
            .server
            .get("kind")
            .and_then(toml::Value::as_str)
            .unwrap_or(&self.server.kind)
    }

    /// Where system `system`'s server runs: its own host, else `[hosts]
    /// server`; `None`: this machine.
    pub fn server_host_of(&self, system: usize) -> Option<&crate::model::Host> {
        self.systems[system]
            .host
            .as_ref()
            .or(self.hosts.server.as_ref())
    }

    /// Whether system `system`'s server host runs an agent: its own
    /// `agent`, else `[hosts] agent` (default `true`).
    pub fn server_agent_of(&self, system: usize) -> bool {
        self.systems[system].agent.unwrap_or(self.hosts.agent)
    }

    /// The sweep's points, in order.
    pub fn points(&self) -> Vec<crate::model::Point> {
        sweep::expand(&self.axes)
    }
}
