//! This process, which runs the load generator: its CPU time and how long
//! its threads waited for a CPU, minus the sampler thread's share.

use crate::procfs::pid::schedstat;
use std::collections::HashMap;

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the timespec we own.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time of the whole process (all threads, exited ones included).
pub fn process_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// CPU time of the calling thread, to the nanosecond.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Nanoseconds since boot, suspend included: the clock of the `starttime`
/// field in `/proc/<pid>/stat`.
pub fn boottime_ns() -> u64 {
    clock_ns(libc::CLOCK_BOOTTIME)
}

/// The calling thread's kernel thread ID (`gettid(2)`), as in
/// `/proc/self/task/<tid>`.
pub fn current_tid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

/// Run-queue wait of this process's threads (except one: the sampler),
/// from `/proc/self/task/<tid>/schedstat`, tracked per thread so threads
/// that start or end mid-window count correctly (a thread that exits loses
/// its wait since the previous sample).
#[derive(Debug)]
pub struct RunqTracker {
    exclude: u32,
    last: HashMap<u32, u64>,
    baseline_taken: bool,
}

impl RunqTracker {
    /// A tracker of every thread of this process but `exclude_tid` (the
    /// sampler's own, from [`current_tid`]); the first [`Self::observe`]
    /// only takes the baseline.
    pub fn new(exclude_tid: u32) -> Self {
        RunqTracker {
            exclude: exclude_tid,
            last: HashMap::new(),
            baseline_taken: false,
        }
    }

    /// Nanoseconds waited since the previous call (0 on the first call).
    pub fn observe(&mut self) -> u64 {
        let mut now = HashMap::new();
        for (tid, dir) in crate::procfs::me::tasks() {
            if tid == self.exclude {
                continue;
            }
            if let Some((_, wait)) = schedstat(dir.join("schedstat")) {
                now.insert(tid, wait);
            }
        }
        let waited = if self.baseline_taken {
            waited_since(&self.last, &now)
        } else {
            0
        };
        self.baseline_taken = true;
        self.last = now;
        waited
    }
}

/// Σ per-thread growth; a thread not seen before started in the window.
fn waited_since(before: &HashMap<u32, u64>, now: &HashMap<u32, u64>) -> u64 {
    now.iter()
        .map(|(tid, &w)| w.saturating_sub(before.get(tid).copied().unwrap_or(0)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_threads_count_whole_exited_ones_drop_out() {
        let before = HashMap::from([(1, 100), (2, 50)]);
        let now = HashMap::from([(1, 130), (3, 20)]);
        assert_eq!(waited_since(&before, &now), 50);
    }

    #[test]
    fn clocks_move_forward() {
        let a = thread_cpu_ns();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_ns() > a);
        assert!(process_cpu_ns() >= thread_cpu_ns());
        assert!(boottime_ns() > 0);
        let mut r = RunqTracker::new(current_tid());
        assert_eq!(r.observe(), 0);
    }
}
