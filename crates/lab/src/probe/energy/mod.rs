//! Energy: joules over the sampled window, from the first source the
//! `[probe] energy` setting allows (see `docs/energy.md`).
//!
//! - `rapl`: the powercap RAPL counters (`energy_uj` of every package
//!   and DRAM domain), wrap handled with `max_energy_range_uj`;
//! - `hwmon`: a hwmon device's `energy*_input` (µJ counters) or
//!   `power*_input` (µW readings);
//! - `command`: a user command that prints watts, run once per probe
//!   interval on its own thread (`worker`), never on the probe's clock;
//!   on an `external` server's host, [`two_readings`] runs it over ssh.
//!
//! The sysfs readers read under [`sysfs_root`]: `/sys`, or the directory
//! named by `SCALELAB_SYSFS_ROOT` (the tests' fixture trees). The meter
//! (`meter`) turns consecutive readings into joules per interval.

pub(crate) mod command;
pub(crate) mod hwmon;
pub mod meter;
pub(crate) mod rapl;
pub mod two_readings;
pub(crate) mod worker;

pub use command::parse_watts;
pub(crate) use meter::Meter;
pub(crate) use worker::EnergyWorker;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The environment variable that moves the sysfs root (for tests: a
/// fixture tree standing in for `/sys`).
pub const SYSFS_ROOT_ENV: &str = "SCALELAB_SYSFS_ROOT";

/// The line the runner prints once when `energy = "auto"` finds nothing.
pub const NO_COUNTER: &str = "no energy counter on this host";

/// Where the sysfs readers read: `$SCALELAB_SYSFS_ROOT`, else `/sys`.
pub fn sysfs_root() -> PathBuf {
    std::env::var_os(SYSFS_ROOT_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/sys"))
}

/// Which energy source the probe reads (`[probe] energy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnergyChoice {
    /// The first of rapl, hwmon and command (when `energy_command` is set)
    /// that exists; none: the probe says so once, nothing else changes.
    #[default]
    Auto,
    /// Powercap RAPL; an error when the host has none.
    Rapl,
    /// A hwmon energy or power sensor; an error when the host has none.
    Hwmon,
    /// `energy_command`, run once per sample.
    Command,
    /// No energy measurement.
    Off,
}

impl EnergyChoice {
    /// Every choice with its word in the experiment file.
    pub const ALL: [(EnergyChoice, &'static str); 5] = [
        (EnergyChoice::Auto, "auto"),
        (EnergyChoice::Rapl, "rapl"),
        (EnergyChoice::Hwmon, "hwmon"),
        (EnergyChoice::Command, "command"),
        (EnergyChoice::Off, "off"),
    ];

    /// The choice a word of the experiment file names.
    pub fn parse(word: &str) -> Option<EnergyChoice> {
        Self::ALL.iter().find(|(_, w)| *w == word).map(|(c, _)| *c)
    }
}

/// The probe's energy settings (`[probe]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnergyConfig {
    /// Which source.
    pub choice: EnergyChoice,
    /// `energy_command`: a shell command that prints watts.
    pub command: Option<String>,
}

pub use scalelab_record::probe::energy::{EnergySource, EnergySummary};

/// Why an energy source could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EnergyError {
    /// `energy = "rapl"` or `"hwmon"`, but the host has no such counter.
    #[error("[probe] energy = \"{choice}\", but {missing}; use energy = \"auto\" (or \"off\") on this host")]
    Missing {
        /// The word asked for.
        choice: &'static str,
        /// What was looked for and not found.
        missing: String,
    },
    /// `energy = "command"` without `energy_command`.
    #[error(
        "[probe] energy = \"command\" needs energy_command = \"...\" (a command that prints watts)"
    )]
    NoCommand,
}

/// Opens the source `config` asks for on this host; `Ok(None)`: `off`, or
/// `auto` found nothing.
pub fn open(config: &EnergyConfig) -> Result<Option<Meter>, EnergyError> {
    open_under(config, &sysfs_root())
}

/// As [`open`], reading the sysfs tree at `root`.
pub(crate) fn open_under(
    config: &EnergyConfig,
    root: &std::path::Path,
) -> Result<Option<Meter>, EnergyError> {
    let missing = |choice: &'static str, what: &str| EnergyError::Missing {
        choice,
        missing: format!("{what} under {}", root.display()),
    };
    let command = || config.command.clone().map(Meter::command);
    match config.choice {
        EnergyChoice::Off => Ok(None),
        EnergyChoice::Rapl => rapl::open(root).map(Some).ok_or_else(|| {
            missing(
                "rapl",
                "there is no readable class/powercap/intel-rapl:N/energy_uj",
            )
        }),
        EnergyChoice::Hwmon => hwmon::open(root).map(Some).ok_or_else(|| {
            missing(
                "hwmon",
                "no class/hwmon/hwmon*/ has an energy*_input or power*_input",
            )
        }),
        EnergyChoice::Command => command().map(Some).ok_or(EnergyError::NoCommand),
        EnergyChoice::Auto => Ok(rapl::open(root)
            .or_else(|| hwmon::open(root))
            .or_else(command)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_parses_to_its_choice() {
        for (choice, word) in EnergyChoice::ALL {
            assert_eq!(EnergyChoice::parse(word), Some(choice));
            let json = serde_json::to_string(&choice).unwrap();
            assert_eq!(json, format!("\"{word}\""));
        }
        assert_eq!(EnergyChoice::parse("ipmi"), None);
    }

    #[test]
    fn watts_are_joules_over_the_seconds_measured() {
        let s = EnergySummary {
            source: EnergySource::Rapl,
            domains: vec!["package-0".into()],
            joules: 50.0,
            measured_s: 2.0,
            wraps: 0,
            client_shares_meter: true,
        };
        assert_eq!(s.watts(), Some(25.0));
        assert_eq!(
            EnergySummary {
                measured_s: 0.0,
                ..s
            }
            .watts(),
            None
        );
    }
}
