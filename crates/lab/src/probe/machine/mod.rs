//! The machine checked before a run (issue 47): the knobs that bias a
//! measurement (frequency, turbo, idle states, IRQs, ASLR, NUMA
//! balancing, swap, neighbours), read by `scalelab doctor --machine` and
//! at the start of every run, stored in the fingerprint
//! ([`super::Fingerprint::machine`]) so `compare` names a difference.
//!
//! Three steps, each its own file: `read` gathers the files' text into
//! [`Facts`]; `parse` holds the pure parsers; [`readings`] and
//! `warn::warnings` turn the facts into what is stored and what is said.
//! A knob this machine lacks is `unavailable: <reason>`, never a guess.

mod parse;
mod read;
mod warn;

pub use parse::{moved_off, IdleState};
pub use read::{gather, irq_affinities, online_cpus, pids_of_irqbalance};
pub use warn::warnings;

pub use scalelab_record::environment::machine::{MachineReadings, Reading};
use std::collections::BTreeMap;

/// The files the knobs live in (`{cpu}` is a CPU number, `{irq}` an IRQ).
pub mod files {
    /// cpufreq's governor of one CPU.
    pub const GOVERNOR: &str = "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor";
    /// The governors a CPU offers.
    pub const GOVERNORS: &str =
        "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_available_governors";
    /// The energy-performance preference (intel_pstate, amd-pstate).
    pub const EPP: &str = "/sys/devices/system/cpu/cpu{cpu}/cpufreq/energy_performance_preference";
    /// intel_pstate's turbo switch (`1`: turbo off).
    pub const NO_TURBO: &str = "/sys/devices/system/cpu/intel_pstate/no_turbo";
    /// acpi-cpufreq's (and amd-pstate's) boost switch (`0`: boost off).
    pub const BOOST: &str = "/sys/devices/system/cpu/cpufreq/boost";
    /// An IRQ's allowed CPUs.
    pub const IRQ_AFFINITY: &str = crate::procfs::system::IRQ_AFFINITY;
    /// ASLR (`2`: full randomisation).
    pub const ASLR: &str = crate::procfs::sysctl::ASLR;
    /// Automatic NUMA balancing.
    pub const NUMA_BALANCING: &str = crate::procfs::sysctl::NUMA_BALANCING;
    /// Who may use perf events.
    pub const PERF_EVENT_PARANOID: &str = crate::procfs::sysctl::PERF_EVENT_PARANOID;

    /// `pattern` with its `{cpu}` or `{irq}` filled in.
    pub fn of(pattern: &str, n: impl std::fmt::Display) -> String {
        pattern
            .replace("{cpu}", &n.to_string())
            .replace("{irq}", &n.to_string())
    }
}

/// What [`read::gather`] found: the files' text, barely touched. Every
/// `None` or empty list is a knob this machine lacks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    /// The online CPUs.
    pub online: Vec<usize>,
    /// The CPUs the server may run on; `None`: unpinned (every CPU).
    pub server_cpus: Option<Vec<usize>>,
    /// `scaling_governor` of each CPU that has one.
    pub governors: Vec<(usize, String)>,
    /// `energy_performance_preference` of each CPU that has one.
    pub epps: Vec<(usize, String)>,
    /// `intel_pstate/no_turbo`.
    pub no_turbo: Option<String>,
    /// `cpufreq/boost`.
    pub boost: Option<String>,
    /// `smt/control`.
    pub smt: Option<String>,
    /// cpu0's cpuidle states in order.
    pub idle_states: Vec<IdleState>,
    /// The PIDs whose comm is exactly `irqbalance`.
    pub irqbalance: Vec<u32>,
    /// Each IRQ's `smp_affinity_list`.
    pub irqs: Vec<(u32, String)>,
    /// `/proc/cmdline`.
    pub cmdline: String,
    /// `/sys/devices/system/cpu/isolated`.
    pub isolated: Option<String>,
    /// `/sys/devices/system/cpu/nohz_full`.
    pub nohz_full: Option<String>,
    /// `randomize_va_space`.
    pub aslr: Option<String>,
    /// The selected `transparent_hugepage/enabled`.
    pub thp: Option<String>,
    /// `numa_balancing`.
    pub numa_balancing: Option<String>,
    /// `perf_event_paranoid`.
    pub perf_event_paranoid: Option<String>,
    /// Swap in use, bytes.
    pub swap_used_bytes: Option<u64>,
    /// Steal's share of all CPUs over the sampling window (0..1).
    pub steal_share: Option<f64>,
    /// `/proc/loadavg`'s three averages.
    pub loadavg: Option<[f64; 3]>,
    /// Other processes that used at least [`BUSY_SHARE`] of a CPU over the
    /// sampling window: (comm, PID, share of one CPU).
    pub busy: Vec<(String, u32, f64)>,
}

/// How long the check watches the machine for steal and busy processes.
pub const CHECK_WINDOW: std::time::Duration = std::time::Duration::from_millis(300);

/// A process using this share of one CPU before the run is "busy".
pub const BUSY_SHARE: f64 = 0.10;

/// The stored readings of `f`.
pub fn readings(f: &Facts) -> MachineReadings {
    let no_cpufreq = "no cpufreq driver (/sys/devices/system/cpu/cpu0/cpufreq is absent)";
    let server = f.server_cpus.clone().unwrap_or_else(|| f.online.clone());
    let on = parse::irqs_on(&f.irqs, &server);
    let list = crate::placement::affinity::format_cpu_list(&server);
    let from_cmdline = |param: &str, file: &str, sys: &Option<String>| {
        let cmd = parse::cmdline_param(&f.cmdline, param).unwrap_or("none");
        let sys = match sys.as_deref() {
            None => format!("no {file}"),
            Some("") => "none".into(),
            Some(s) => s.into(),
        };
        Reading(format!("{param}={cmd}; kernel: {sys}"))
    };
    MachineReadings {
        governor: Reading::or(parse::per_cpu(&f.governors), no_cpufreq),
        epp: Reading::or(
            parse::per_cpu(&f.epps),
            "no energy_performance_preference (no intel_pstate or amd-pstate in active mode)",
        ),
        turbo: turbo(f),
        smt: Reading::or(f.smt.clone(), "no /sys/devices/system/cpu/smt/control"),
        deepest_cstate: Reading::or(
            parse::deepest_enabled(&f.idle_states),
            "no enabled cpuidle state (/sys/devices/system/cpu/cpu0/cpuidle)",
        ),
        irqbalance: Reading(match f.irqbalance.as_slice() {
            [] => "not running".into(),
            pids => format!("running (PID {})", join(pids)),
        }),
        server_cpus: Reading(match &f.server_cpus {
            Some(_) => list.clone(),
            None => format!("{list} (unpinned: every CPU)"),
        }),
        irqs_on_server_cpus: match f.irqs.len() {
            0 => Reading::unavailable("no IRQ lists an smp_affinity_list in /proc/irq"),
            n => Reading(format!("{} of {n}", on.len())),
        },
        irq_affinity: (f.irqs.iter())
            .map(|(irq, l)| (irq.to_string(), l.trim().to_string()))
            .collect(),
        isolcpus: from_cmdline("isolcpus", "/sys/devices/system/cpu/isolated", &f.isolated),
        nohz_full: from_cmdline(
            "nohz_full",
            "/sys/devices/system/cpu/nohz_full",
            &f.nohz_full,
        ),
        aslr: Reading::or(f.aslr.clone(), "no /proc/sys/kernel/randomize_va_space"),
        thp: Reading::or(f.thp.clone(), "no transparent_hugepage in /sys/kernel/mm"),
        numa_balancing: Reading::or(
            f.numa_balancing.clone(),
            "no /proc/sys/kernel/numa_balancing (a kernel without NUMA balancing)",
        ),
        perf_event_paranoid: Reading::or(
            f.perf_event_paranoid.clone(),
            "no /proc/sys/kernel/perf_event_paranoid (a kernel without perf events)",
        ),
        swap_used: Reading::or(
            f.swap_used_bytes.map(|b| format!("{} MiB", b >> 20)),
            "no SwapTotal/SwapFree in /proc/meminfo",
        ),
        steal: Reading::or(
            f.steal_share.map(|s| format!("{:.1}%", s * 100.0)),
            "no /proc/stat",
        ),
        loadavg: Reading::or(
            f.loadavg.map(|[a, b, c]| format!("{a:.2} {b:.2} {c:.2}")),
            "no /proc/loadavg",
        ),
        busy_processes: Reading(busy_list(&f.busy)),
        tuned: BTreeMap::new(),
    }
}

fn turbo(f: &Facts) -> Reading {
    let on_off = |on: bool| if on { "on" } else { "off" };
    match (&f.no_turbo, &f.boost) {
        (Some(v), _) => Reading(format!(
            "{} (intel_pstate/no_turbo = {v})",
            on_off(v == "0")
        )),
        (None, Some(v)) => Reading(format!("{} (cpufreq/boost = {v})", on_off(v != "0"))),
        (None, None) => {
            Reading::unavailable("no intel_pstate/no_turbo or cpufreq/boost (no cpufreq driver)")
        }
    }
}

fn busy_list(busy: &[(String, u32, f64)]) -> String {
    if busy.is_empty() {
        return "none".into();
    }
    let each: Vec<String> = (busy.iter())
        .map(|(comm, pid, share)| format!("{comm} (PID {pid}, {:.0}% of a CPU)", share * 100.0))
        .collect();
    each.join(", ")
}

fn join(pids: &[u32]) -> String {
    let each: Vec<String> = pids.iter().map(u32::to_string).collect();
    each.join(", ")
}

#[cfg(test)]
mod tests;
