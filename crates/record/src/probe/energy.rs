//! A trial's energy, as its probe summary stores it: the lab's
//! `probe::energy` meters measure it.

use serde::{Deserialize, Serialize};

/// What measured the energy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnergySource {
    /// Powercap RAPL counters.
    Rapl,
    /// A hwmon device.
    Hwmon,
    /// `energy_command`, run on the server's host by the probe.
    Command,
    /// `energy_command` run over ssh at the window's start and end only.
    CommandOverSsh,
}

/// Energy over the window, in the trial's probe summary (`energy`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnergySummary {
    /// What measured it.
    pub source: EnergySource,
    /// The domains summed: `package-0`, `package-0/dram`, `hwmon:<name>/<sensor>`,
    /// or the command.
    pub domains: Vec<String>,
    /// Joules used in the seconds measured.
    pub joules: f64,
    /// Seconds of the window the energy covers (the window minus intervals
    /// without a reading).
    pub measured_s: f64,
    /// Counter wraps crossed (RAPL counters wrap at `max_energy_range_uj`).
    pub wraps: u32,
    /// Whether the load generator ran on the measured hardware, so its
    /// energy is in the figure (a local run: client and server share the
    /// package).
    #[serde(default)]
    pub client_shares_meter: bool,
}

impl EnergySummary {
    /// Mean watts over the seconds measured; `None` without any.
    pub fn watts(&self) -> Option<f64> {
        (self.measured_s > 0.0).then(|| self.joules / self.measured_s)
    }
}
