//! Waits as the server itself counts them, read at the window's two ends
//! (a kind that keeps such counters says so through
//! `server::Target::wait_counters`). MariaDB's InnoDB counts its row-lock
//! waits (`Innodb_row_lock_waits`, and `Innodb_row_lock_time` in
//! milliseconds); its thread pool, its threads (`Threadpool_threads`,
//! `Threadpool_idle_threads`). A futex wait the limiter samples can be
//! either: a row lock, or a pool thread waiting for work. The server's
//! counters tell them apart.

use serde::{Deserialize, Serialize};

/// A reading of the server's own wait counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitCounters {
    /// `Innodb_row_lock_waits`: row-lock waits so far.
    pub row_lock_waits: u64,
    /// `Innodb_row_lock_time`: milliseconds spent waiting for row locks so far.
    pub row_lock_time_ms: u64,
    /// `Threadpool_threads`: threads in the pool (`None`: one thread per connection).
    pub pool_threads: Option<u64>,
    /// `Threadpool_idle_threads`: of them, idle (waiting for work).
    pub pool_idle_threads: Option<u64>,
}

/// The server's own wait figures over a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerWaits {
    /// Row-lock waits in the window (`Innodb_row_lock_waits`).
    pub row_lock_waits: u64,
    /// Seconds waited for row locks in the window (`Innodb_row_lock_time`).
    pub row_lock_wait_s: f64,
    /// Threads in the pool at the window's end (`Threadpool_threads`); `None` with one
    /// thread per connection.
    pub pool_threads: Option<u64>,
    /// Of them idle, waiting for work (`Threadpool_idle_threads`).
    pub pool_idle_threads: Option<u64>,
}

impl ServerWaits {
    /// The growth from `start` to `end` (a counter that went down, the
    /// server restarted: none).
    pub fn between(start: &WaitCounters, end: &WaitCounters) -> Option<ServerWaits> {
        Some(ServerWaits {
            row_lock_waits: end.row_lock_waits.checked_sub(start.row_lock_waits)?,
            row_lock_wait_s: end.row_lock_time_ms.checked_sub(start.row_lock_time_ms)? as f64
                / 1000.0,
            pool_threads: end.pool_threads,
            pool_idle_threads: end.pool_idle_threads,
        })
    }

    /// Whether the server runs a thread pool.
    pub fn pooled(&self) -> bool {
        self.pool_threads.is_some_and(|t| t > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_the_growth_between_its_ends() {
        let a = WaitCounters {
            row_lock_waits: 10,
            row_lock_time_ms: 2500,
            pool_threads: Some(4),
            pool_idle_threads: Some(1),
        };
        let b = WaitCounters {
            row_lock_waits: 14,
            row_lock_time_ms: 3000,
            pool_threads: Some(6),
            pool_idle_threads: Some(3),
        };
        let w = ServerWaits::between(&a, &b).unwrap();
        assert_eq!((w.row_lock_waits, w.row_lock_wait_s), (4, 0.5));
        assert_eq!(w.pool_threads, Some(6));
        assert!(w.pooled());
        assert_eq!(ServerWaits::between(&b, &a), None, "a restart in between");
    }
}
