//! The environment fingerprint stored with every run: the facts about the
//! machine that change results (kernel, CPUs, idle and frequency handling,
//! memory, network sysctls, limits). Anything unreadable is recorded as
//! `unavailable`, never an error. Documented in `docs/probe-metrics.md`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub use super::nic::UNAVAILABLE;
pub use super::text::{meminfo_bytes, selected};

/// Sysctls recorded with every run (the network stack's queue, port,
/// buffer and TCP settings, and a few scheduler/VM ones).
pub const SYSCTLS: &[&str] = &[
    "net.core.somaxconn",
    "net.core.netdev_max_backlog",
    "net.core.rmem_default",
    "net.core.rmem_max",
    "net.core.wmem_default",
    "net.core.wmem_max",
    "net.core.default_qdisc",
    "net.core.busy_poll",
    "net.core.busy_read",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_max_tw_buckets",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_fastopen",
    "fs.file-max",
    "fs.nr_open",
    "vm.swappiness",
    "kernel.numa_balancing",
    "kernel.sched_autogroup_enabled",
];

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
/// the system under test. Captured once per run by [`capture`] and stored with it
/// (`Run::environment`); compare two with [`super::diff()`]. A source that cannot be read is
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

/// Reads the fingerprint of this machine. Never fails.
pub fn capture() -> Fingerprint {
    let cpuinfo = read("/proc/cpuinfo");
    let meminfo = read("/proc/meminfo");
    let online_list = crate::placement::online_cpu_list();
    let no_cpufreq = || "none: no cpufreq".to_string();
    let cpufreq = |f: &str| {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu0/cpufreq/{f}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| no_cpufreq())
    };
    let (soft, hard) = rlimit_nofile();
    Fingerprint {
        scalelab_version: env!("CARGO_PKG_VERSION").to_string(),
        hostname: read_or("/proc/sys/kernel/hostname"),
        kernel_release: read_or("/proc/sys/kernel/osrelease"),
        kernel_version: read_or("/proc/sys/kernel/version"),
        kernel_cmdline: read_or("/proc/cmdline"),
        cpu_model: cpu_model(&cpuinfo).unwrap_or_else(|| UNAVAILABLE.into()),
        online_cpus: online_list.len() as u32,
        online_cpu_list: crate::placement::affinity::format_cpu_list(&online_list),
        mem_total_bytes: meminfo_bytes(&meminfo, "MemTotal"),
        swap_total_bytes: meminfo_bytes(&meminfo, "SwapTotal"),
        virtualization: virtualization(&cpuinfo),
        clocksource: read_or("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        cpufreq_driver: cpufreq("scaling_driver"),
        cpufreq_governor: cpufreq("scaling_governor"),
        cpuidle_driver: read_or("/sys/devices/system/cpu/cpuidle/current_driver"),
        cpuidle_governor: first_readable(&[
            "/sys/devices/system/cpu/cpuidle/current_governor",
            "/sys/devices/system/cpu/cpuidle/current_governor_ro",
        ]),
        haltpoll: dir_values(Path::new("/sys/module/haltpoll/parameters")),
        thp_enabled: selected(&read_or("/sys/kernel/mm/transparent_hugepage/enabled")),
        thp_defrag: selected(&read_or("/sys/kernel/mm/transparent_hugepage/defrag")),
        smt: read_or("/sys/devices/system/cpu/smt/control"),
        sysctls: SYSCTLS
            .iter()
            .map(|k| {
                (
                    k.to_string(),
                    read_or(&format!("/proc/sys/{}", k.replace('.', "/"))),
                )
            })
            .collect(),
        rlimit_nofile_soft: soft,
        rlimit_nofile_hard: hard,
        nics: super::nic::capture(),
        machine: None,
    }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The file's text with whitespace collapsed, or `unavailable`.
fn read_or(path: &str) -> String {
    match std::fs::read_to_string(path) {
        Ok(s) => collapse(&s),
        Err(_) => UNAVAILABLE.into(),
    }
}

fn first_readable(paths: &[&str]) -> String {
    paths
        .iter()
        .map(|p| read_or(p))
        .find(|v| v != UNAVAILABLE)
        .unwrap_or_else(|| UNAVAILABLE.into())
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every file in `dir` as name -> value (empty when `dir` is missing).
fn dir_values(dir: &Path) -> BTreeMap<String, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let value = std::fs::read_to_string(e.path())
                .map(|v| collapse(&v))
                .unwrap_or_else(|_| UNAVAILABLE.into());
            Some((name, value))
        })
        .collect()
}

/// The CPU model: x86's `model name`, else arm's `Hardware` / `CPU part`.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Hardware", "cpu model", "CPU part"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == *key).then(|| v.trim().to_string())
            })
        })
}

pub fn hypervisor_flag(cpuinfo: &str) -> bool {
    cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|f| f == "hypervisor"))
}

fn virtualization(cpuinfo: &str) -> Virtualization {
    let hypervisor_flag = hypervisor_flag(cpuinfo);
    let detect_virt = run_quietly("systemd-detect-virt", Duration::from_secs(2))
        .unwrap_or_else(|| UNAVAILABLE.into());
    Virtualization {
        is_vm: hypervisor_flag || !matches!(detect_virt.as_str(), "none" | UNAVAILABLE | ""),
        hypervisor_flag,
        sys_vendor: read_or("/sys/class/dmi/id/sys_vendor"),
        detect_virt,
    }
}

/// Runs `program` and returns its trimmed stdout, or `None` if it cannot
/// run or takes longer than `timeout` (then it is killed by its PID).
fn run_quietly(program: &str, timeout: Duration) -> Option<String> {
    let mut child = Command::new(program)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let end = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    Some(out.trim().to_string())
}

fn rlimit_nofile() -> (String, String) {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return (UNAVAILABLE.into(), UNAVAILABLE.into());
    }
    let show = |v: libc::rlim_t| {
        if v == libc::RLIM_INFINITY {
            "unlimited".to_string()
        } else {
            v.to_string()
        }
    };
    (show(r.rlim_cur), show(r.rlim_max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers_on_captured_text() {
        let cpuinfo =
            "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu vme hypervisor lahf_lm\n";
        assert_eq!(cpu_model(cpuinfo).as_deref(), Some("AMD EPYC"));
        assert!(hypervisor_flag(cpuinfo));
        assert!(!hypervisor_flag("flags\t\t: fpu vme\n"));
        assert_eq!(cpu_model("BogoMIPS: 1\n"), None);
        let meminfo = "MemTotal:       24684356 kB\nSwapTotal:             0 kB\n";
        assert_eq!(meminfo_bytes(meminfo, "MemTotal"), Some(24684356 * 1024));
        assert_eq!(meminfo_bytes(meminfo, "SwapTotal"), Some(0));
        assert_eq!(meminfo_bytes(meminfo, "Nope"), None);
        assert_eq!(selected("always [madvise] never\n"), "madvise");
        assert_eq!(
            selected("always defer defer+madvise [madvise] never"),
            "madvise"
        );
        assert_eq!(collapse("32768\t60999\n"), "32768 60999");
    }

    #[test]
    fn missing_files_read_as_unavailable() {
        assert_eq!(read_or("/nonexistent/scalelab"), UNAVAILABLE);
        assert!(dir_values(Path::new("/nonexistent/scalelab")).is_empty());
        assert_eq!(
            run_quietly("/nonexistent/scalelab", Duration::from_secs(1)),
            None
        );
    }

    #[test]
    fn a_hung_command_is_cut_off() {
        let t = Instant::now();
        assert_eq!(run_quietly("yes", Duration::from_millis(100)), None);
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}
