//! The machine's readings stored with a run (issue 47): the knobs that bias
//! a measurement, each a string or `unavailable: <why>`. The lab's
//! `probe::machine` reads and judges them; `compare` diffs them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One reading: the value, or `unavailable: <why>` (serialised as that
/// one string, so `compare` shows it as written).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Reading(pub String);

impl Reading {
    /// A value read.
    pub fn value(v: impl Into<String>) -> Reading {
        Reading(v.into())
    }
    /// A knob this machine lacks, and why.
    pub fn unavailable(why: &str) -> Reading {
        Reading(format!("unavailable: {why}"))
    }
    /// A value, or unavailable with `why` when `None`.
    pub fn or(v: Option<String>, why: &str) -> Reading {
        v.map_or_else(|| Reading::unavailable(why), Reading)
    }
}

/// The readings stored with a run (all strings, as the fingerprint's
/// other facts; `docs/probe-metrics.md` says where each comes from).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineReadings {
    /// cpufreq governor (every CPU's, or each CPU's own).
    pub governor: Reading,
    /// Energy-performance preference.
    pub epp: Reading,
    /// Turbo / boost: `on` or `off`, and the file that says so.
    pub turbo: Reading,
    /// SMT control.
    pub smt: Reading,
    /// The deepest enabled C-state of cpu0.
    pub deepest_cstate: Reading,
    /// `running (PID n)` or `not running`.
    pub irqbalance: Reading,
    /// The CPUs the IRQ readings are held against (the server's).
    pub server_cpus: Reading,
    /// How many IRQs may run on the server's CPUs.
    pub irqs_on_server_cpus: Reading,
    /// Each IRQ's `smp_affinity_list`, by IRQ number.
    pub irq_affinity: BTreeMap<String, String>,
    /// `isolcpus=` (command line) and `/sys/devices/system/cpu/isolated`.
    pub isolcpus: Reading,
    /// `nohz_full=` (command line) and `/sys/devices/system/cpu/nohz_full`.
    pub nohz_full: Reading,
    /// `randomize_va_space`.
    pub aslr: Reading,
    /// Transparent huge pages (`enabled`).
    pub thp: Reading,
    /// `numa_balancing`.
    pub numa_balancing: Reading,
    /// `perf_event_paranoid`.
    pub perf_event_paranoid: Reading,
    /// Swap in use (MiB).
    pub swap_used: Reading,
    /// Steal's share of the CPUs over the check's window.
    pub steal: Reading,
    /// The load average at the start (1, 5, 15 minutes).
    pub loadavg: Reading,
    /// Other busy processes, or `none`.
    pub busy_processes: Reading,
    /// What `run --tune` changed: file to `old -> new` (empty: untuned).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tuned: BTreeMap<String, String>,
}
