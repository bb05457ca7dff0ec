//! Reads the machine's files into [`Facts`]: nothing is parsed here that
//! `parse` can parse, and a missing file is a `None`.

use super::files::{self, of};
use super::parse::{self, IdleState, ProcTicks};
use super::{Facts, BUSY_SHARE};
use crate::procfs;
use std::time::{Duration, Instant};

fn text(path: &str) -> Option<String> {
    trimmed(std::fs::read_to_string(path).ok())
}

/// A file's text, trimmed.
fn trimmed(text: Option<String>) -> Option<String> {
    text.map(|s| s.trim().to_string())
}

/// The online CPUs.
pub fn online_cpus() -> Vec<usize> {
    crate::placement::online_cpu_list()
}

/// Reads every knob, sampling `/proc/stat` and the processes over
/// `window` for steal and busy processes. `server_cpus`: where the server
/// will run (`None`: unpinned).
pub fn gather(server_cpus: Option<&[usize]>, window: Duration) -> Facts {
    let online = online_cpus();
    let per_cpu = |pattern: &str| -> Vec<(usize, String)> {
        (online.iter())
            .filter_map(|&c| Some((c, text(&of(pattern, c))?)))
            .collect()
    };
    let before = (trimmed(procfs::stat::text()), proc_ticks(), Instant::now());
    std::thread::sleep(window);
    let after = (trimmed(procfs::stat::text()), proc_ticks(), Instant::now());
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let ticks = after.2.duration_since(before.2).as_secs_f64() * hz;
    let skip = [std::process::id(), crate::owned::reaper_pid().unwrap_or(0)];
    Facts {
        governors: per_cpu(files::GOVERNOR),
        epps: per_cpu(files::EPP),
        no_turbo: text(files::NO_TURBO),
        boost: text(files::BOOST),
        smt: text("/sys/devices/system/cpu/smt/control"),
        idle_states: idle_states(),
        irqbalance: pids_of_irqbalance(),
        irqs: irq_affinities(),
        cmdline: trimmed(procfs::system::cmdline()).unwrap_or_default(),
        isolated: text("/sys/devices/system/cpu/isolated"),
        nohz_full: text("/sys/devices/system/cpu/nohz_full"),
        aslr: text(files::ASLR),
        thp: text("/sys/kernel/mm/transparent_hugepage/enabled")
            .map(|t| crate::probe::text::selected(&t)),
        numa_balancing: text(files::NUMA_BALANCING),
        perf_event_paranoid: text(files::PERF_EVENT_PARANOID),
        swap_used_bytes: trimmed(procfs::system::meminfo())
            .and_then(|m| procfs::system::swap_used_bytes(&m)),
        steal_share: steal(before.0.as_deref(), after.0.as_deref()),
        loadavg: trimmed(procfs::loadavg::text()).map(|t| {
            let l = procfs::loadavg::parse_loadavg(&t);
            [l.one, l.five, l.fifteen]
        }),
        busy: parse::busy(&before.1, &after.1, ticks, BUSY_SHARE, &skip),
        server_cpus: server_cpus.map(<[usize]>::to_vec),
        online,
    }
}

/// Steal's share of all CPUs' time between two `/proc/stat` texts.
fn steal(before: Option<&str>, after: Option<&str>) -> Option<f64> {
    let (b, a) = (before?, after?);
    let (b, a) = (
        procfs::stat::parse_proc_stat(b).total,
        procfs::stat::parse_proc_stat(a).total,
    );
    let split = crate::probe::cpu::split(&b, &a);
    Some(split.steal)
}

/// cpu0's cpuidle states, in order.
fn idle_states() -> Vec<IdleState> {
    (0..)
        .map_while(|k| {
            let dir = format!("/sys/devices/system/cpu/cpu0/cpuidle/state{k}");
            Some(IdleState {
                name: text(&format!("{dir}/name"))?,
                disable: text(&format!("{dir}/disable")).unwrap_or_else(|| "0".into()),
                latency_us: text(&format!("{dir}/latency")).unwrap_or_else(|| "?".into()),
            })
        })
        .collect()
}

/// Every process whose `/proc/PID/comm` is exactly `irqbalance`.
pub fn pids_of_irqbalance() -> Vec<u32> {
    let procs: Vec<(u32, String)> = (crate::procfs::sockets::all_pids().into_iter())
        .filter_map(|pid| Some((pid, procfs::pid::comm(pid).ok()?)))
        .collect();
    parse::pids_named(&procs, "irqbalance")
}

/// Each IRQ's `smp_affinity_list`, by IRQ number.
pub fn irq_affinities() -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = (procfs::system::irqs().into_iter())
        .filter_map(|irq| Some((irq, text(&of(files::IRQ_AFFINITY, irq))?)))
        .collect();
    out.sort_unstable();
    out
}

/// Every process's CPU ticks now.
fn proc_ticks() -> Vec<ProcTicks> {
    (crate::procfs::sockets::all_pids().into_iter())
        .filter_map(|pid| {
            let s = crate::procfs::pid::stat(pid)?;
            Some(ProcTicks {
                pid,
                ticks: s.own_ticks(),
                comm: s.comm,
            })
        })
        .collect()
}
