//! The experiment file as written: serde structs that reject unknown keys.
//! `validate` turns this into the checked [`super::Experiment`].

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExperiment {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub server: toml::Table,
    pub load: toml::Table,
    #[serde(default)]
    pub sweep: toml::Table,
    #[serde(default)]
    pub trials: RawTrials,
    #[serde(default)]
    pub system: Vec<RawSystem>,
    pub quick: Option<RawQuick>,
    pub profile: Option<RawProfile>,
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

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTrials {
    pub duration: Option<String>,
    pub warmup: Option<String>,
    pub cooldown: Option<String>,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub target_ci: Option<f64>,
    pub budget: Option<String>,
    pub restart: Option<String>,
    pub headline: Option<String>,
    pub noise: Option<f64>,
    pub sample_interval: Option<String>,
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
            sample_interval
        );
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSystem {
    pub label: String,
    #[serde(default)]
    pub baseline: bool,
    #[serde(default)]
    pub server: toml::Table,
    #[serde(default)]
    pub load: toml::Table,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawQuick {
    #[serde(default)]
    pub sweep: toml::Table,
    #[serde(default)]
    pub trials: RawTrials,
    #[serde(default)]
    pub server: toml::Table,
    #[serde(default)]
    pub load: toml::Table,
}
