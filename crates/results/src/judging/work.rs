//! The work per operation at a point: the kernel's counts of the server's
//! work (`record::probe::work`) over each trial's window, divided by the
//! operations the trial completed, and the median over the trials.
//!
//! A count per operation moves only when the work moves: the same code on
//! a slower machine makes the same system calls per request. So it tells
//! "the code changed" from "the machine changed", and it is a measure of
//! its own between runs (`work_change`).

use crate::analysis::summary::median;
use crate::record::probe::work::WorkCounts;
use crate::store::Trial;
use serde::Serialize;

/// How many named calls a point shows, most first.
pub const TOP_CALLS: usize = 5;

/// One named figure per operation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PerOp {
    /// The name (`write`, `context switches`).
    pub name: String,
    /// Median over the trials of the count divided by the trial's
    /// operations.
    pub per_op: f64,
}

/// The median work per operation over a point's trials, each figure over
/// the trials that counted it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WorkPerOp {
    /// Trials whose window was counted.
    pub trials: usize,
    /// System calls per operation, every call.
    pub syscalls: Option<f64>,
    /// The most frequent named calls per operation, most first
    /// ([`TOP_CALLS`] of them).
    pub top_syscalls: Vec<PerOp>,
    /// Read-family system calls per operation (`/proc/PID/io`'s `syscr`),
    /// counted in every trial.
    pub read_calls: Option<f64>,
    /// Write-family system calls per operation (`syscw`), counted in
    /// every trial.
    pub write_calls: Option<f64>,
    /// Context switches per operation (perf's count).
    pub context_switches: Option<f64>,
    /// CPU migrations per operation.
    pub cpu_migrations: Option<f64>,
    /// Minor page faults per operation.
    pub minor_faults: Option<f64>,
    /// Major page faults per operation.
    pub major_faults: Option<f64>,
    /// User-mode CPU microseconds per operation (the cgroup's `cpu.stat`).
    pub user_us: Option<f64>,
    /// Kernel CPU microseconds per operation.
    pub system_us: Option<f64>,
    /// Soft-interrupt microseconds per operation on the server's own CPUs
    /// (`/proc/stat`'s softirq time of the CPUs it was pinned to, where the
    /// load is never placed): network processing the cgroup's `cpu.stat`
    /// does not charge to the server. `None` for a server not pinned.
    pub softirq_us: Option<f64>,
    /// Instructions per operation, where a PMU counted them.
    pub instructions: Option<f64>,
    /// Cycles per operation, where a PMU counted them.
    pub cycles: Option<f64>,
    /// Instructions per cycle, the median of the trials'.
    pub ipc: Option<f64>,
    /// LLC read misses per operation.
    pub llc_misses: Option<f64>,
    /// Branch misses per operation.
    pub branch_misses: Option<f64>,
    /// What the counting could not give, as the first counted trial says
    /// ("hardware counters: unavailable: no PMU ...").
    pub unavailable: Vec<String>,
}

/// A trial's counts with its operations, when both are there.
fn counted(t: &Trial) -> Option<(&WorkCounts, f64)> {
    let ops = t.measurement.as_ref()?.requests;
    let work = t.probe.as_ref()?.work.as_ref()?;
    (ops > 0).then_some((work, ops as f64))
}

/// A per-trial figure of the counted trials, per operation.
pub fn per_op_values(trials: &[&Trial], read: impl Fn(&WorkCounts) -> Option<f64>) -> Vec<f64> {
    trials
        .iter()
        .filter_map(|t| {
            let (w, ops) = counted(t)?;
            Some(read(w)? / ops)
        })
        .filter(|v| v.is_finite())
        .collect()
}

/// The read-family calls' name in comparisons (`read`, `readv`,
/// `pread64`, `sendfile`: the kernel's `syscr`).
pub const READ_CALLS: &str = "read-family calls";
/// The write-family calls' name (`write`, `writev`, `pwrite64`,
/// `sendfile`: `syscw`).
pub const WRITE_CALLS: &str = "write-family calls";

/// Reads one count of a trial's counts.
pub type ReadCount = Box<dyn Fn(&WorkCounts) -> Option<f64>>;

/// The named figures a comparison looks at, each with how to read it
/// from one trial's counts.
pub fn figures(trials: &[&Trial]) -> Vec<(String, ReadCount)> {
    let mut out: Vec<(String, ReadCount)> = vec![
        (
            "system calls".into(),
            Box::new(|w| w.syscalls.map(|v| v as f64)),
        ),
        (
            READ_CALLS.into(),
            Box::new(|w| w.io_calls.map(|c| c.reads as f64)),
        ),
        (
            WRITE_CALLS.into(),
            Box::new(|w| w.io_calls.map(|c| c.writes as f64)),
        ),
        (
            "context switches".into(),
            Box::new(|w| w.context_switches.map(|v| v as f64)),
        ),
        (
            "CPU migrations".into(),
            Box::new(|w| w.cpu_migrations.map(|v| v as f64)),
        ),
        (
            "minor faults".into(),
            Box::new(|w| w.minor_faults.map(|v| v as f64)),
        ),
        (
            "major faults".into(),
            Box::new(|w| w.major_faults.map(|v| v as f64)),
        ),
        (
            "instructions".into(),
            Box::new(|w| w.hardware.as_ref()?.instructions.map(|v| v as f64)),
        ),
    ];
    for name in call_names(trials) {
        let label = format!("{name}(2)");
        out.push((label, Box::new(move |w| w.syscall(&name).map(|v| v as f64))));
    }
    out
}

/// Every named call some counted trial made, in first-seen order.
fn call_names(trials: &[&Trial]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (w, _) in trials.iter().filter_map(|t| counted(t)) {
        for c in w.top_syscalls.iter().filter(|c| c.count > 0) {
            if !names.contains(&c.name) {
                names.push(c.name.clone());
            }
        }
    }
    names
}

/// The soft-interrupt seconds of a trial's window on the CPUs the server
/// was pinned to (each CPU's softirq share of its time, times the window);
/// `None` for a server not pinned, or a CPU the probe did not read.
pub fn server_softirq_s(t: &Trial) -> Option<f64> {
    let cpus = t.context.placement.as_ref()?.cpus.as_ref()?;
    let probe = t.probe.as_ref()?;
    let mut seconds = 0.0;
    for &cpu in cpus {
        let c = probe.per_cpu.iter().find(|c| c.cpu as usize == cpu)?;
        seconds += c.split.softirq * probe.window_s;
    }
    Some(seconds)
}

/// The point's work per operation; `None` when no trial was counted.
pub fn of_point(ok: &[&Trial]) -> Option<WorkPerOp> {
    let first = ok.iter().find_map(|t| counted(t))?.0;
    let med = |read: &dyn Fn(&WorkCounts) -> Option<f64>| median(&per_op_values(ok, read));
    let hw = |read: fn(&crate::record::probe::work::HardwareCounts) -> Option<u64>| {
        move |w: &WorkCounts| w.hardware.as_ref().and_then(read).map(|v| v as f64)
    };
    let mut top: Vec<PerOp> = call_names(ok)
        .into_iter()
        .filter_map(|name| {
            let per_op = med(&|w: &WorkCounts| w.syscall(&name).map(|v| v as f64))?;
            Some(PerOp { name, per_op })
        })
        .collect();
    top.sort_by(|a, b| b.per_op.total_cmp(&a.per_op));
    top.truncate(TOP_CALLS);
    Some(WorkPerOp {
        trials: ok.iter().filter(|t| counted(t).is_some()).count(),
        syscalls: med(&|w| w.syscalls.map(|v| v as f64)),
        top_syscalls: top,
        read_calls: med(&|w| w.io_calls.map(|c| c.reads as f64)),
        write_calls: med(&|w| w.io_calls.map(|c| c.writes as f64)),
        context_switches: med(&|w| w.context_switches.map(|v| v as f64)),
        cpu_migrations: med(&|w| w.cpu_migrations.map(|v| v as f64)),
        minor_faults: med(&|w| w.minor_faults.map(|v| v as f64)),
        major_faults: med(&|w| w.major_faults.map(|v| v as f64)),
        user_us: med(&|w| w.user_s.map(|s| s * 1e6)),
        system_us: med(&|w| w.system_s.map(|s| s * 1e6)),
        softirq_us: median(
            &ok.iter()
                .filter_map(|t| Some(server_softirq_s(t)? * 1e6 / counted(t)?.1))
                .filter(|v| v.is_finite())
                .collect::<Vec<f64>>(),
        ),
        instructions: med(&hw(|h| h.instructions)),
        cycles: med(&hw(|h| h.cycles)),
        ipc: median(
            &ok.iter()
                .filter_map(|t| counted(t)?.0.hardware.as_ref()?.ipc())
                .collect::<Vec<f64>>(),
        ),
        llc_misses: med(&hw(|h| h.llc_misses)),
        branch_misses: med(&hw(|h| h.branch_misses)),
        unavailable: first.unavailable.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::probe::{CpuSplit, PerCpu};

    /// A trial of 1000 requests over a 2 s window whose CPU 1 spent 10%
    /// of its time in softirqs and CPU 0 40%.
    fn trial(pinned: Option<Vec<usize>>) -> Trial {
        let mut t = crate::judging::test_support::run_data(&["a"]).trials[0].clone();
        t.measurement.as_mut().unwrap().requests = 1000;
        let p = t.probe.as_mut().unwrap();
        p.window_s = 2.0;
        p.work = Some(WorkCounts {
            syscalls: Some(3000),
            ..WorkCounts::default()
        });
        p.per_cpu = [(0, 0.4), (1, 0.1)]
            .into_iter()
            .map(|(cpu, softirq)| PerCpu {
                cpu,
                split: CpuSplit {
                    softirq,
                    ..CpuSplit::default()
                },
                freq_mhz: None,
            })
            .collect();
        t.context.placement = pinned.map(|cpus| crate::placement::PlacementFacts {
            cpus: Some(cpus),
            memory_bytes: None,
            cgroups: Vec::new(),
            affinity: None,
        });
        t
    }

    #[test]
    fn softirq_time_is_the_pinned_servers_cpus_only() {
        let pinned = trial(Some(vec![1]));
        // 10% of CPU 1's 2 s, over 1000 requests: 200 µs each; CPU 0's
        // softirqs (the load's side) are not the server's.
        let w = of_point(&[&pinned]).unwrap();
        assert!((w.softirq_us.unwrap() - 200.0).abs() < 1e-6, "{w:?}");
        assert_eq!(w.syscalls, Some(3.0));
        let unpinned = trial(None);
        assert_eq!(of_point(&[&unpinned]).unwrap().softirq_us, None);
        let unread = trial(Some(vec![5]));
        assert_eq!(
            server_softirq_s(&unread),
            None,
            "a CPU the probe did not read"
        );
    }
}
