//! Live counters of a run in progress, for the progress lines that
//! `load pg -P` and `load mysql --report-interval` print while a run goes
//! (pgbench's `progress: ... tps, lat ... ms stddev ...`, sysbench's
//! `[ 1s ] thds: ... tps: ...`). The workers add to them as transactions
//! end; a reporter thread reads the difference between two snapshots.
//! Off the hot path unless asked for: the drivers count only when handed
//! one.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters the workers add to while a run goes.
#[derive(Debug, Default)]
pub struct Live {
    done: AtomicU64,
    failed: AtomicU64,
    /// Sum of the completed transactions' latencies, in microseconds.
    latency_us: AtomicU64,
    /// Sum of their squares, in microseconds squared.
    latency_us2: AtomicU64,
}

/// The counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Completed transactions.
    pub done: u64,
    /// Failed transactions.
    pub failed: u64,
    /// Sum of completed transactions' latencies (us).
    pub latency_us: u64,
    /// Sum of their squares (us^2).
    pub latency_us2: u64,
}

impl Live {
    /// A completed transaction that took `latency_us`.
    pub fn done(&self, latency_us: u64) {
        self.done.fetch_add(1, Ordering::Relaxed);
        self.latency_us.fetch_add(latency_us, Ordering::Relaxed);
        let sq = latency_us.saturating_mul(latency_us);
        self.latency_us2.fetch_add(sq, Ordering::Relaxed);
    }

    /// A failed transaction.
    pub fn failed(&self) {
        self.failed.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            done: self.done.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            latency_us: self.latency_us.load(Ordering::Relaxed),
            latency_us2: self.latency_us2.load(Ordering::Relaxed),
        }
    }
}

/// What happened between two snapshots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Transactions completed in it.
    pub done: u64,
    /// Transactions failed in it.
    pub failed: u64,
    /// Their mean latency, microseconds (0 when none completed).
    pub mean_us: f64,
    /// Their latency's standard deviation (population, as pgbench's
    /// progress report computes it from a sum and a sum of squares),
    /// microseconds.
    pub stddev_us: f64,
}

impl Snapshot {
    /// The interval from `earlier` to `self`.
    pub fn since(&self, earlier: &Snapshot) -> Interval {
        let done = self.done.saturating_sub(earlier.done);
        let sum = self.latency_us.saturating_sub(earlier.latency_us) as f64;
        let sum2 = self.latency_us2.saturating_sub(earlier.latency_us2) as f64;
        let (mean_us, stddev_us) = if done == 0 {
            (0.0, 0.0)
        } else {
            let n = done as f64;
            let mean = sum / n;
            (mean, (sum2 / n - mean * mean).max(0.0).sqrt())
        };
        Interval {
            done,
            failed: self.failed.saturating_sub(earlier.failed),
            mean_us,
            stddev_us,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_has_the_mean_and_stddev_of_its_own_transactions() {
        let live = Live::default();
        live.done(1000);
        let first = live.snapshot();
        for us in [100, 200, 300, 400] {
            live.done(us);
        }
        live.failed();
        let i = live.snapshot().since(&first);
        assert_eq!((i.done, i.failed), (4, 1));
        assert_eq!(i.mean_us, 250.0);
        // Population stddev of 100, 200, 300, 400: sqrt(12500).
        assert!(
            (i.stddev_us - 12500f64.sqrt()).abs() < 1e-9,
            "{}",
            i.stddev_us
        );
        let none = live.snapshot().since(&live.snapshot());
        assert_eq!((none.done, none.mean_us, none.stddev_us), (0, 0.0, 0.0));
    }
}
