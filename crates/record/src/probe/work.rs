//! What the server's processes did over the measured window, counted by
//! the kernel: system calls (with the named calls counted), context
//! switches, CPU migrations, page faults, CPU time by mode and, where
//! the machine has a PMU, its hardware counters. Divided by the trial's
//! operations, these are the work per operation (Ousterhout's "one level
//! deeper"): two runs that differ in throughput but not in these did the
//! same work at a different price.
//!
//! Every count is whole over the window and the server's cgroup (every
//! process and thread in it, however short-lived). A count the machine
//! cannot give is `None` with its reason in `unavailable`, never 0.

use serde::{Deserialize, Serialize};

/// One named count: a system call's, for example.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedCount {
    /// The name as the kernel spells it (`write`, `epoll_wait`).
    pub name: String,
    /// How many times over the window.
    pub count: u64,
}

/// The hardware counters, where a PMU gave them (scaled for the time the
/// kernel multiplexed them out).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HardwareCounts {
    /// CPU cycles.
    pub cycles: Option<u64>,
    /// Instructions retired.
    pub instructions: Option<u64>,
    /// Last-level cache read misses.
    pub llc_misses: Option<u64>,
    /// Branch mispredictions.
    pub branch_misses: Option<u64>,
}

impl HardwareCounts {
    /// Instructions per cycle, where both were counted.
    pub fn ipc(&self) -> Option<f64> {
        let (i, c) = (self.instructions?, self.cycles?);
        (c > 0).then(|| i as f64 / c as f64)
    }
}

/// The read-family and write-family system calls of the server's
/// processes (the kernel's task I/O accounting, `/proc/PID/io`'s `syscr`
/// and `syscw`): `read`, `readv`, `pread64`, `preadv` and `sendfile`
/// count as reads, and `write`, `writev`, `pwrite64`, `pwritev` and
/// `sendfile` as writes, on any file or socket; `recv*` and `send*` are
/// neither. The kernel keeps them for every task anyway, so counting them
/// costs two reads of a small file per process and window, in every
/// trial.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoCalls {
    /// Read-family calls (`syscr`).
    pub reads: u64,
    /// Write-family calls (`syscw`).
    pub writes: u64,
}

/// The window's counts for the server's cgroup. `docs/probe-metrics.md`
/// says how each is counted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkCounts {
    /// The cgroup counted, as `/proc/PID/cgroup` names it (`/scalelab-…`).
    pub cgroup: String,
    /// Seconds the counters were enabled.
    pub counted_s: f64,
    /// Every system call entered (`raw_syscalls:sys_enter`), with
    /// `[probe] syscalls = "exact"`; `None` otherwise.
    pub syscalls: Option<u64>,
    /// The seconds the system calls were counted over (the whole window);
    /// `None` where they were not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syscalls_counted_s: Option<f64>,
    /// The named calls' counts (`syscalls:sys_enter_NAME`), most first;
    /// the calls outside the named list are `syscalls` less their sum.
    pub top_syscalls: Vec<NamedCount>,
    /// The read- and write-family calls of the server's processes, when
    /// the same processes were there at both ends of the window (a
    /// process that ended takes its counts with it); counted in every
    /// trial, whatever `[probe] syscalls` says. Stores written before
    /// these were counted read as `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_calls: Option<IoCalls>,
    /// Context switches, voluntary and involuntary together.
    pub context_switches: Option<u64>,
    /// Moves of a thread from one CPU to another.
    pub cpu_migrations: Option<u64>,
    /// Minor page faults (no storage read).
    pub minor_faults: Option<u64>,
    /// Major page faults (a storage read).
    pub major_faults: Option<u64>,
    /// CPU seconds in user mode (the cgroup's `cpu.stat` `user_usec`).
    pub user_s: Option<f64>,
    /// CPU seconds in the kernel (`cpu.stat` `system_usec`), softirqs
    /// run in the cgroup's threads' context included.
    pub system_s: Option<f64>,
    /// The hardware counters; `None` where no PMU gave them.
    pub hardware: Option<HardwareCounts>,
    /// Each figure the machine could not give, and why ("hardware
    /// counters: unavailable: no PMU").
    pub unavailable: Vec<String>,
}

impl WorkCounts {
    /// The calls outside the named list: `syscalls` less the named ones.
    pub fn other_syscalls(&self) -> Option<u64> {
        let named: u64 = self.top_syscalls.iter().map(|c| c.count).sum();
        self.syscalls.map(|s| s.saturating_sub(named))
    }

    /// A named call's count; 0 for a call on the list that was not made,
    /// `None` when it is not counted.
    pub fn syscall(&self, name: &str) -> Option<u64> {
        self.top_syscalls
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_other_calls_are_the_total_less_the_named_ones() {
        let w = WorkCounts {
            syscalls: Some(100),
            top_syscalls: vec![
                NamedCount {
                    name: "write".into(),
                    count: 60,
                },
                NamedCount {
                    name: "read".into(),
                    count: 30,
                },
            ],
            ..WorkCounts::default()
        };
        assert_eq!(w.other_syscalls(), Some(10));
        assert_eq!(w.syscall("read"), Some(30));
        assert_eq!(w.syscall("futex"), None);
        assert_eq!(WorkCounts::default().other_syscalls(), None);
    }

    #[test]
    fn ipc_needs_both_counters_and_cycles() {
        let mut h = HardwareCounts {
            cycles: Some(200),
            instructions: Some(300),
            ..HardwareCounts::default()
        };
        assert_eq!(h.ipc(), Some(1.5));
        h.cycles = Some(0);
        assert_eq!(h.ipc(), None);
        h.cycles = None;
        assert_eq!(h.ipc(), None);
    }
}
