//! Threads woken from a lock and not past it yet: waiting for a CPU, or
//! waking only to find the lock still held.
//!
//! A thread's `syscall` file says `running` whether it is on a CPU or in
//! the run queue, and a woken thread's wait is gone from it. PostgreSQL
//! still shows `Lock` for a backend woken from a lock until it has run past
//! it. Measured beside tpcb-like at scale 1 (16 clients, load 5 on this
//! 2-CPU VM), the backends runnable at a sample that were asleep on their
//! latch 20 ms before had, in between, arrived on a CPU 0 to 116 times for
//! 20 to 65 us each: they keep waking to find the lock still held, and go
//! back to it, while PostgreSQL shows `Lock` throughout.
//!
//! So each wait-state sample looks back: [`LOOKBACK`] before it, the
//! threads asleep on a lock are noted with their on-CPU time and count of
//! arrivals on a CPU (schedstat). A thread runnable at the sample that has
//! run at most [`WAKE_RUN_CPU_NS`] a time on a CPU since (none: woken and
//! still in the run queue) has not got past the lock. Of such samples, the
//! share its schedstat puts in the run queue is counted as the lock, as
//! the server counts it, and apart as `lock_woken`; the rest ran
//! (`threads::runqueue_apart`).
//!
//! Clock-free on purpose: `se.exec_start` of `/proc/PID/task/TID/sched`
//! is on each CPU's task clock, which on this VM lags `CLOCK_MONOTONIC`
//! by that CPU's steal time (12.6 s on one CPU, 13.0 s on the other,
//! growing with the steal), so "not updated for a few ticks" cannot be
//! read against the sampler's clock. Nor does schedstat's on-CPU time
//! move between two reads of a thread on a CPU (the kernel adds it at the
//! tick and at switches): two reads of a running thread 20 us apart were
//! equal in 175 of 200 tries.

use std::collections::HashMap;
use std::time::Duration;

/// How long before each wait-state sample the lock sleepers are noted;
/// the sampler sleeps this long before the sample, only when some thread
/// slept on a lock at the look. Longer, a thread has more time to get past
/// its lock, run a short statement and wait on its client (PostgreSQL:
/// `ClientRead`) and still look not past it: at 20 ms the limiter's lock
/// share read 90.2% and 90.4% against PostgreSQL's 84.5% and 86.3%, at
/// 10 ms 89.1% against 84.3%, at 5 ms 87.5%, 86.0%, 90.3% and 88.0%
/// against 87.6%, 85.4%, 85.3% and 83.8% (tpcb-like, 16 clients, load 4-5).
/// Shorter, it is the sampler's own timer granularity.
pub const LOOKBACK: Duration = Duration::from_millis(5);

/// The most on-CPU time a run, on average since the look, of a thread that
/// has not got past its lock: a wake-up to re-check the lock and sleep
/// again took 20-65 us (above); a tpcb-like statement more.
pub const WAKE_RUN_CPU_NS: u64 = 100_000;

/// The threads asleep on a lock at the look: their on-CPU ns and arrivals
/// on a CPU then.
#[derive(Debug, Default)]
pub struct LockSleepers(HashMap<u32, (u64, u64)>);

impl LockSleepers {
    /// Notes thread `tid` of `pid` asleep on a lock (its schedstat read
    /// now; a thread gone meanwhile is left out).
    pub fn note(&mut self, pid: u32, tid: u32) {
        if let Some(now) = schedstat(pid, tid) {
            self.0.insert(tid, now);
        }
    }

    /// No thread was asleep on a lock.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Thread `tid` of `pid`, found runnable, was asleep on a lock at the
    /// look and has not got past it since (see [`not_past_the_lock`]).
    pub fn not_past(&self, pid: u32, tid: u32) -> bool {
        self.0.get(&tid).is_some_and(|then| {
            schedstat(pid, tid).is_some_and(|now| not_past_the_lock(*then, now))
        })
    }
}

/// Between two `(on-CPU ns, arrivals on a CPU)` readings, the thread ran at
/// most [`WAKE_RUN_CPU_NS`] per arrival (none at all when it did not
/// arrive: woken and still queued).
pub fn not_past_the_lock(then: (u64, u64), now: (u64, u64)) -> bool {
    let ran_ns = now.0.saturating_sub(then.0);
    let runs = now.1.saturating_sub(then.1);
    ran_ns <= WAKE_RUN_CPU_NS * runs
}

fn schedstat(pid: u32, tid: u32) -> Option<(u64, u64)> {
    crate::procfs::pid::task_schedstat_runs(pid, tid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_queued_since_or_waking_briefly_is_not_past_its_lock() {
        // Woken and queued: neither moved.
        assert!(not_past_the_lock((5_000, 10), (5_000, 10)));
        // 40 arrivals of 30 us each: re-checking its lock.
        assert!(not_past_the_lock((5_000, 10), (5_000 + 1_200_000, 50)));
        // One arrival, 800 us of work: past it.
        assert!(!not_past_the_lock((5_000, 10), (805_000, 11)));
        // On a CPU with no arrival counted: impossible but not past.
        assert!(!not_past_the_lock((5_000, 10), (6_000, 10)));
    }

    #[test]
    fn a_thread_asleep_is_not_past_its_wait_and_a_spinning_one_is() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{mpsc, Arc};
        let pid = std::process::id();
        // SAFETY: gettid(2) has no arguments and cannot fail.
        let tid = || unsafe { libc::gettid() } as u32;
        let (tx, rx) = mpsc::channel();
        let (wake, asleep) = mpsc::channel::<()>();
        let sleeper = std::thread::spawn({
            let tx = tx.clone();
            move || {
                tx.send((0, tid())).unwrap();
                let _ = asleep.recv();
            }
        });
        let stop = Arc::new(AtomicBool::new(false));
        let spinner = std::thread::spawn({
            let stop = stop.clone();
            move || {
                tx.send((1, tid())).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            }
        });
        // Sleeper first, spinner second, whichever thread ran first.
        let mut tids = [0u32; 2];
        for _ in 0..2 {
            let (role, t) = rx.recv().unwrap();
            tids[role] = t;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        let then: Vec<_> = tids.iter().map(|t| schedstat(pid, *t).unwrap()).collect();
        // Until the spinner has had 5 ms of CPU (on a loaded machine it
        // may wait for one).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let now: Vec<_> = loop {
            std::thread::sleep(std::time::Duration::from_millis(20));
            let now: Vec<_> = tids.iter().map(|t| schedstat(pid, *t).unwrap()).collect();
            if now[1].0 >= then[1].0 + 5_000_000 || std::time::Instant::now() > deadline {
                break now;
            }
        };
        stop.store(true, Ordering::Relaxed);
        drop(wake);
        sleeper.join().unwrap();
        spinner.join().unwrap();
        assert!(
            not_past_the_lock(then[0], now[0]),
            "asleep: {then:?} {now:?}"
        );
        assert!(
            !not_past_the_lock(then[1], now[1]),
            "spinning: {then:?} {now:?}"
        );
    }
}
