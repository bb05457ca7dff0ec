//! The environment fingerprint stored with every run: the facts about the
//! machine that change results (kernel, CPUs, idle and frequency handling,
//! memory, network sysctls, limits), as the store keeps them. The lab's
//! `probe::fingerprint::capture` reads them; anything unreadable is
//! `unavailable`, never an error. Documented in `docs/probe-metrics.md`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Whether and how the machine is virtualised.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Virtualization {
    /// True if any signal below says so.
    pub is_vm: bool,
    /// The `hypervisor` CPU flag in /proc/cpuinfo.
    pub hypervisor_flag: bool,
    /// /sys/class/dmi/id/sys_vendor.
    pub sys_vendor: String,
    /// Output of `systemd-detect-virt` (`none` on bare metal).
    pub detect_virt: String,
}

/// The environment a run was measured in: everything that could make two runs differ besides
/// the system under test. Captured once per run by the lab's `probe::capture` and stored with it
/// (`Run::environment`); compare two with [`super::diff::diff`]. A source that cannot be read is
/// recorded as `unavailable`, never as an error.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The crate version of the scalelab that measured.
    pub scalelab_version: String,
    /// `/proc/sys/kernel/hostname`.
    pub hostname: String,
    /// `uname -r`.
    pub kernel_release: String,
    /// `uname -v`.
    pub kernel_version: String,
    /// /proc/cmdline.
    pub kernel_cmdline: String,
    /// `model name` in /proc/cpuinfo (on arm: `Hardware` / `CPU part`).
    pub cpu_model: String,
    /// Number of online CPUs.
    pub online_cpus: u32,
    /// Kernel CPU list, e.g. `0-1`.
    pub online_cpu_list: String,
    /// `MemTotal` in /proc/meminfo; `None` when it could not be read.
    pub mem_total_bytes: Option<u64>,
    /// `SwapTotal` in /proc/meminfo; `None` when it could not be read.
    pub swap_total_bytes: Option<u64>,
    /// Whether this is a VM, and the evidence.
    pub virtualization: Virtualization,
    /// The kernel's current clocksource (`tsc`, `kvm-clock`, ...): it sets the cost of every
    /// timestamp the load generator takes.
    pub clocksource: String,
    /// cpufreq driver of cpu0, or `none: no cpufreq`.
    pub cpufreq_driver: String,
    /// cpufreq governor of cpu0, or `none: no cpufreq`.
    pub cpufreq_governor: String,
    /// `/sys/devices/system/cpu/cpuidle/current_driver` (`haltpoll`, `intel_idle`, ...).
    pub cpuidle_driver: String,
    /// The cpuidle governor (`current_governor`, or `current_governor_ro`).
    pub cpuidle_governor: String,
    /// /sys/module/haltpoll/parameters/*, empty when the module is absent.
    pub haltpoll: BTreeMap<String, String>,
    /// Selected value of `transparent_hugepage/enabled`.
    pub thp_enabled: String,
    /// Selected value of `transparent_hugepage/defrag`.
    pub thp_defrag: String,
    /// /sys/devices/system/cpu/smt/control (`on`, `off`, `notsupported`).
    pub smt: String,
    /// The sysctls in `SYSCTLS` (dotted name to value), whitespace
    /// collapsed (`32768 60999`).
    pub sysctls: BTreeMap<String, String>,
    /// Soft RLIMIT_NOFILE of this process (`unlimited` or a number).
    pub rlimit_nofile_soft: String,
    /// Hard RLIMIT_NOFILE of this process (`unlimited` or a number).
    pub rlimit_nofile_hard: String,
    /// Every interface that is up, loopback aside: driver, channels,
    /// rings, offloads, RPS/XPS masks (`probe::nic`); empty in runs
    /// stored before it was recorded (and then not written back).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nics: BTreeMap<String, super::nic::NicSettings>,
    /// The machine checked at the run's start (`probe::machine`): governor,
    /// turbo, IRQs, ASLR, swap, neighbours, and what `run --tune` changed.
    /// `None` for a remote host's and in runs stored before it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<super::machine::MachineReadings>,
}
