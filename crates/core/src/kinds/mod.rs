//! What every kind of every family shares: its settings parser and what it
//! needs installed.
//!
//! A *kind* is one value in a family's registry: `scalelab::load::KINDS`
//! (load generators) and `scalelab::server::KINDS` (servers). Each entry says
//! its name, how to check and build its settings, and what it needs; nothing
//! else in the code matches on a kind's name.

#![forbid(unsafe_code)]

pub mod plain;
pub mod requirements;

pub use requirements::{Requirement, BENCH_TOOLS, PROFILER, TEST_SHELLS, TEST_TOOLS};

/// Deserializes a kind's settings table (the experiment's `[server]` or
/// `[load]` table) into its typed settings. The error names the unknown or
/// mistyped field and says in plain words what to write
/// ([`plain`]); each family wraps it in its own error type.
pub fn parse_settings<T: serde::de::DeserializeOwned>(settings: &toml::Table) -> Result<T, String> {
    plain::from_value(toml::Value::Table(settings.clone()))
}

/// An entry of a family's registry: a kind has a name.
pub trait Kind: 'static {
    /// The name experiments and commands give it.
    fn name(&self) -> &'static str;
}

/// The entry of `registry` called `name`, or an error message saying that
/// `family` (`server`, `load`, ...) has no such kind and listing those it
/// has: the one place a kind's name is looked up.
pub fn lookup<K: Kind>(
    family: &str,
    registry: &[&'static K],
    name: &str,
) -> Result<&'static K, String> {
    registry
        .iter()
        .copied()
        .find(|k| k.name() == name)
        .ok_or_else(|| {
            format!(
                "unknown {family} kind `{name}`; expected one of: {}",
                names(registry).join(", ")
            )
        })
}

/// The names of a registry's kinds, in registry order.
pub fn names<K: Kind>(registry: &[&'static K]) -> Vec<&'static str> {
    registry.iter().map(|k| k.name()).collect()
}
