//! The environment fingerprint stored with every run: the facts about the
//! machine that change results (kernel, CPUs, idle and frequency handling,
//! memory, network sysctls, limits). Anything unreadable is recorded as
//! `unavailable`, never an error. Documented in `docs/probe-metrics.md`.

use crate::procfs::sysctl;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub use super::nic::UNAVAILABLE;
pub use super::text::{meminfo_bytes, selected};
pub use crate::procfs::system::{cpu_model, hypervisor_flag};
pub use scalelab_record::environment::fingerprint::{Fingerprint, Virtualization};

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

/// Reads the fingerprint of this machine. Never fails.
pub fn capture() -> Fingerprint {
    let cpuinfo = crate::procfs::system::cpuinfo().unwrap_or_default();
    let meminfo = crate::procfs::system::meminfo().unwrap_or_default();
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
        hostname: read_or(sysctl::HOSTNAME),
        kernel_release: read_or(sysctl::OSRELEASE),
        kernel_version: read_or(sysctl::VERSION),
        kernel_cmdline: or_unavailable(crate::procfs::system::cmdline()),
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
            .map(|k| (k.to_string(), or_unavailable(sysctl::read(k).ok())))
            .collect(),
        rlimit_nofile_soft: soft,
        rlimit_nofile_hard: hard,
        nics: super::nic::capture(),
        machine: None,
    }
}

/// The file's text with whitespace collapsed, or `unavailable`.
fn read_or(path: &str) -> String {
    or_unavailable(std::fs::read_to_string(path).ok())
}

/// A file's text with whitespace collapsed, or `unavailable` for none.
fn or_unavailable(text: Option<String>) -> String {
    text.map_or_else(|| UNAVAILABLE.into(), |s| collapse(&s))
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
