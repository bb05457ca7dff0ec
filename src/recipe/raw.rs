//! The experiment file as written: serde structs that reject unknown keys.
//! `validate` turns this into the checked [`super::Experiment`].

use serde::Deserialize;

/// The whole experiment file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExperiment {
    /// `name`.
    pub name: String,
    /// `description`.
    #[serde(default)]
    pub description: String,
    /// `[server]`: `kind` and its settings.
    pub server: toml::Table,
    /// `[load]`: `kind`, the common load keys and the kind's settings.
    pub load: toml::Table,
    /// `[sweep]`: axis name to its list of values.
    #[serde(default)]
    pub sweep: toml::Table,
    /// `[trials]`.
    #[serde(default)]
    pub trials: RawTrials,
    /// `[[system]]`: the compared systems.
    #[serde(default)]
    pub system: Vec<RawSystem>,
    /// `[quick]`: what `--quick` changes.
    pub quick: Option<RawQuick>,
    /// `[hosts]`.
    #[serde(default)]
    pub hosts: super::hosts::RawHosts,
    /// `[profile]`.
    pub profile: Option<RawProfile>,
    /// `[probe]`.
    #[serde(default)]
    pub probe: RawProbe,
    /// `[machine]`.
    #[serde(default)]
    pub machine: RawMachine,
}

/// `[machine]`: what is done to this machine for the run.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMachine {
    /// Apply the tune profile for the run and put it back after (`run --tune`).
    pub tune: Option<bool>,
}

/// `[probe]`: what the probe measures besides `/proc`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProbe {
    /// `auto`, `rapl`, `hwmon`, `command` or `off`.
    pub energy: Option<String>,
    /// A command that prints watts (`energy = "command"`).
    pub energy_command: Option<String>,
    /// `off` (the default) or `exact`: whether the server's system calls
    /// are counted (`probe::work`).
    pub syscalls: Option<String>,
}

/// `[profile]`: flame graphs of the server at each system's peak and
/// collapse points.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    /// `false` keeps the table but turns profiling off.
    pub enabled: Option<bool>,
    /// Samples per second per CPU.
    pub frequency: Option<i64>,
}

/// `[trials]` as written; durations are strings such as `"10s"`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTrials {
    /// Measured window.
    pub duration: Option<String>,
    /// Load before measuring, discarded: a duration, or `auto`.
    pub warmup: Option<String>,
    /// `warmup = "auto"`'s cap.
    pub warmup_max: Option<String>,
    /// The timeline's bucket width.
    pub bucket: Option<String>,
    /// `mark` or `exclude` unsteady trials.
    pub unsteady: Option<String>,
    /// Pause between trials.
    pub cooldown: Option<String>,
    /// Fewest trials per point and system.
    pub min: Option<i64>,
    /// Most trials per point and system.
    pub max: Option<i64>,
    /// Target relative half-width of the median's 95% CI.
    pub target_ci: Option<f64>,
    /// Time budget per point.
    pub budget: Option<String>,
    /// `never`, `per_point` or `per_trial`.
    pub restart: Option<String>,
    /// `median` or `best`.
    pub headline: Option<String>,
    /// Relative differences below it are no difference.
    pub noise: Option<f64>,
    /// The probe's sampling interval.
    pub sample_interval: Option<String>,
    /// Whole runs of the sweep, each stored as its own run with one label.
    pub runs: Option<i64>,
    /// `random` (the default) or `sweep`: the order trials run in.
    pub order: Option<String>,
}

impl RawTrials {
    /// Fields set in `over` replace those here (`--quick`).
    pub fn overlay(&mut self, over: &RawTrials) {
        macro_rules! take {
            ($($f:ident),*) => { $( if over.$f.is_some() { self.$f = over.$f.clone(); } )* };
        }
        take!(
            duration,
            warmup,
            cooldown,
            min,
            max,
            target_ci,
            budget,
            restart,
            headline,
            noise,
            sample_interval,
            runs,
            order,
            warmup_max,
            bucket,
            unsteady
        );
    }
}

/// One `[[system]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSystem {
    /// Its label in reports.
    pub label: String,
    /// Whether it is the baseline.
    #[serde(default)]
    pub baseline: bool,
    /// Its server host (`user@address`), overriding `[hosts] server`.
    pub host: Option<String>,
    /// `false`: its server host gets no agent (overrides `[hosts] agent`).
    pub agent: Option<bool>,
    /// Server settings it overrides.
    #[serde(default)]
    pub server: toml::Table,
    /// Load settings it overrides.
    #[serde(default)]
    pub load: toml::Table,
}

/// `[quick]` as written: what `--quick` replaces.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawQuick {
    /// The sweep it runs instead.
    #[serde(default)]
    pub sweep: toml::Table,
    /// `[trials]` fields it overrides.
    #[serde(default)]
    pub trials: RawTrials,
    /// Server settings it overrides.
    #[serde(default)]
    pub server: toml::Table,
    /// Load settings it overrides.
    #[serde(default)]
    pub load: toml::Table,
}
