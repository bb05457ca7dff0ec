//! A start line shared by the drivers: worker threads arrive after their
//! warm-up and start measuring together.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A start line for the workers and the thread that times them. Waits are
/// bounded, so a worker that never arrives cannot hang the run.
pub(crate) struct Gate {
    arrived: Mutex<u32>,
    all: Condvar,
    total: u32,
    limit: Duration,
}

impl Gate {
    /// A gate for `total` arrivals; nobody waits longer than `limit`.
    pub fn new(total: u32, limit: Duration) -> Self {
        Gate {
            arrived: Mutex::new(0),
            all: Condvar::new(),
            total,
            limit,
        }
    }

    /// Arrives, then waits until all have arrived or the limit passed.
    pub fn arrive_and_wait(&self) {
        let end = Instant::now() + self.limit;
        let mut n = self.arrived.lock().unwrap_or_else(|e| e.into_inner());
        *n += 1;
        self.all.notify_all();
        while *n < self.total {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            n = self
                .all
                .wait_timeout(n, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}
