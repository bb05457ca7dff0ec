//! `/proc/stat`: CPU time per CPU and in total, and the run queue.

use super::data::CpuSplit;
pub use crate::procfs::stat::{CpuTimes, ProcStat};

/// How the time between two readings was spent. Counters that went
/// backwards (the kernel's idle/iowait accounting can) count as zero.
pub fn split(before: &CpuTimes, after: &CpuTimes) -> CpuSplit {
    let d = |a: u64, b: u64| b.saturating_sub(a) as f64;
    let parts = [
        d(before.user, after.user),
        d(before.nice, after.nice),
        d(before.system, after.system),
        d(before.irq, after.irq),
        d(before.softirq, after.softirq),
        d(before.iowait, after.iowait),
        d(before.steal, after.steal),
        d(before.idle, after.idle),
    ];
    let total: f64 = parts.iter().sum();
    if total <= 0.0 {
        return CpuSplit::default();
    }
    let [user, nice, system, irq, softirq, iowait, steal, idle] = parts.map(|p| p / total);
    CpuSplit {
        user,
        nice,
        system,
        irq,
        softirq,
        iowait,
        steal,
        idle,
        busy: (1.0 - idle - iowait).max(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procfs::stat::parse_proc_stat;

    // Captured on the project VM (2 vCPUs); one fixture for procfs::stat's
    // and the probe's tests.
    const BEFORE: &str = include_str!("../../../../tests/fixtures/proc/stat-before.txt");
    const AFTER: &str = include_str!("../../../../tests/fixtures/proc/stat-after.txt");

    #[test]
    fn split_is_fractions_of_elapsed_time() {
        let (b, a) = (parse_proc_stat(BEFORE), parse_proc_stat(AFTER));
        // cpu0: 100 user + 10 nice of 110 jiffies: fully busy.
        let c0 = split(&b.per_cpu[0].1, &a.per_cpu[0].1);
        assert!((c0.user - 100.0 / 110.0).abs() < 1e-12);
        assert!((c0.busy - 1.0).abs() < 1e-12);
        // cpu1: 50 sys, 30 idle, 5 irq, 10 softirq, 30 steal = 125.
        let c1 = split(&b.per_cpu[1].1, &a.per_cpu[1].1);
        assert!((c1.idle - 30.0 / 125.0).abs() < 1e-12);
        assert!((c1.steal - 30.0 / 125.0).abs() < 1e-12);
        assert!((c1.busy - 95.0 / 125.0).abs() < 1e-12);
        let all = split(&b.total, &a.total);
        let sum = all.user
            + all.nice
            + all.system
            + all.irq
            + all.softirq
            + all.iowait
            + all.steal
            + all.idle;
        assert!((sum - 1.0).abs() < 1e-12);
        assert!((all.busy - 205.0 / 235.0).abs() < 1e-12);
    }

    #[test]
    fn no_elapsed_time_and_backwards_counters_are_harmless() {
        let t = parse_proc_stat(BEFORE).total;
        assert_eq!(split(&t, &t), CpuSplit::default());
        let mut back = t;
        back.idle -= 5;
        back.user += 10;
        let s = split(&t, &back);
        assert_eq!(s.idle, 0.0);
        assert_eq!(s.busy, 1.0);
    }
}
