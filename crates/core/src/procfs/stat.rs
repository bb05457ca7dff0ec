//! `/proc/stat`: CPU time per CPU and in total, and the run queue.

/// Cumulative jiffies (USER_HZ ticks) of one `cpu` line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// Time in user mode.
    pub user: u64,
    /// Time in user mode at low priority (nice).
    pub nice: u64,
    /// Time in system mode.
    pub system: u64,
    /// Idle time.
    pub idle: u64,
    /// Idle time waiting for I/O.
    pub iowait: u64,
    /// Time servicing interrupts.
    pub irq: u64,
    /// Time servicing softirqs.
    pub softirq: u64,
    /// Time stolen by the hypervisor.
    pub steal: u64,
}

/// The parts of `/proc/stat` the probe uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcStat {
    /// The `cpu` line: all CPUs together.
    pub total: CpuTimes,
    /// `(cpu number, times)` for each online CPU.
    pub per_cpu: Vec<(u32, CpuTimes)>,
    /// `procs_running`: tasks runnable now.
    pub procs_running: u32,
    /// `procs_blocked`: tasks blocked on I/O now.
    pub procs_blocked: u32,
}

/// Parses the text of `/proc/stat`; a missing or unreadable value is 0.
pub fn parse_proc_stat(text: &str) -> ProcStat {
    let mut out = ProcStat::default();
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        let Some(key) = fields.next() else { continue };
        if key == "cpu" {
            out.total = parse_times(fields);
        } else if let Some(n) = key.strip_prefix("cpu").and_then(|n| n.parse().ok()) {
            out.per_cpu.push((n, parse_times(fields)));
        } else if key == "procs_running" {
            out.procs_running = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0);
        } else if key == "procs_blocked" {
            out.procs_blocked = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0);
        }
    }
    out
}

fn parse_times<'a>(fields: impl Iterator<Item = &'a str>) -> CpuTimes {
    let mut v = [0u64; 8];
    for (slot, f) in v.iter_mut().zip(fields) {
        *slot = f.parse().unwrap_or(0);
    }
    let [user, nice, system, idle, iowait, irq, softirq, steal] = v;
    CpuTimes {
        user,
        nice,
        system,
        idle,
        iowait,
        irq,
        softirq,
        steal,
    }
}

/// This machine's `/proc/stat`, parsed (all zeros when it cannot be read).
pub fn read() -> ProcStat {
    parse_proc_stat(&text().unwrap_or_default())
}

/// The text of `/proc/stat`; `None` when it cannot be read.
pub fn text() -> Option<String> {
    std::fs::read_to_string("/proc/stat").ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured on the project VM (2 vCPUs); one fixture for procfs::stat's
    // and the probe's tests.
    const BEFORE: &str = include_str!("../../../../tests/fixtures/proc/stat-before.txt");
    const AFTER: &str = include_str!("../../../../tests/fixtures/proc/stat-after.txt");

    #[test]
    fn parses_totals_cpus_and_run_queue() {
        let s = parse_proc_stat(BEFORE);
        assert_eq!(s.total.user, 26545);
        assert_eq!(s.total.steal, 184);
        assert_eq!(s.per_cpu.len(), 2);
        assert_eq!(s.per_cpu[1].0, 1);
        assert_eq!(s.per_cpu[1].1.iowait, 591);
        assert_eq!(s.procs_running, 1);
        let a = parse_proc_stat(AFTER);
        assert_eq!((a.procs_running, a.procs_blocked), (3, 1));
    }
}
