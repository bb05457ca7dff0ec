//! Waits as the server itself counts them, read at the window's two ends
//! (a kind that keeps such counters says so through
//! `server::Server::wait_counters`). MariaDB's InnoDB counts its row-lock
//! waits (`Innodb_row_lock_waits`, and `Innodb_row_lock_time` in
//! milliseconds); its thread pool, its threads (`Threadpool_threads`,
//! `Threadpool_idle_threads`). A futex wait the limiter samples can be
//! either: a row lock, or a pool thread waiting for work. The server's
//! counters tell them apart. Where `performance_schema` is on, its
//! `events_waits_summary_global_by_event_name` adds the time every
//! instrumented wait took, by class ([`SchemaWaits`]): the pool's own
//! conditions (`wait/synch/cond/threadpool/%`), the server's other
//! mutexes, rwlocks and conditions (`wait/synch/%`) and table locks
//! (`wait/lock/%`).

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
    /// performance_schema's wait totals; `None` where it is off.
    pub schema: Option<SchemaWaits>,
}

/// performance_schema's wait time so far by class, in picoseconds
/// (`SUM_TIMER_WAIT` of `events_waits_summary_global_by_event_name`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaWaits {
    /// `wait/synch/cond/threadpool/%`: pool threads waiting for work (and
    /// the pool's timer).
    pub pool_ps: u64,
    /// Every other `wait/synch/%`: the server's and InnoDB's mutexes,
    /// rwlocks and conditions.
    pub synch_ps: u64,
    /// `wait/lock/%`: table locks (metadata and handler).
    pub lock_ps: u64,
}

impl SchemaWaits {
    /// Adds one summary row: an event name and its `SUM_TIMER_WAIT`.
    pub fn add(&mut self, event: &str, ps: u64) {
        if event.starts_with("wait/synch/cond/threadpool/") {
            self.pool_ps += ps;
        } else if event.starts_with("wait/synch/") {
            self.synch_ps += ps;
        } else if event.starts_with("wait/lock/") {
            self.lock_ps += ps;
        }
    }
}

/// Seconds performance_schema counted in a window, by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SchemaWaitSeconds {
    /// In the thread pool's own conditions (`wait/synch/cond/threadpool/%`).
    pub pool_s: f64,
    /// On the server's other mutexes, rwlocks and conditions (`wait/synch/%`).
    pub synch_s: f64,
    /// On table locks (`wait/lock/%`).
    pub lock_s: f64,
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
    /// performance_schema's waits in the window; `None` where it is off.
    pub schema: Option<SchemaWaitSeconds>,
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
            schema: start.schema.zip(end.schema).and_then(|(a, b)| {
                let s = |x: u64, y: u64| Some(y.checked_sub(x)? as f64 / 1e12);
                Some(SchemaWaitSeconds {
                    pool_s: s(a.pool_ps, b.pool_ps)?,
                    synch_s: s(a.synch_ps, b.synch_ps)?,
                    lock_s: s(a.lock_ps, b.lock_ps)?,
                })
            }),
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
            schema: Some(SchemaWaits {
                pool_ps: 1_000_000_000_000,
                synch_ps: 0,
                lock_ps: 5,
            }),
        };
        let b = WaitCounters {
            row_lock_waits: 14,
            row_lock_time_ms: 3000,
            pool_threads: Some(6),
            pool_idle_threads: Some(3),
            schema: None,
        };
        let w = ServerWaits::between(&a, &b).unwrap();
        assert_eq!((w.row_lock_waits, w.row_lock_wait_s), (4, 0.5));
        assert_eq!(w.pool_threads, Some(6));
        assert!(w.pooled());
        assert_eq!(ServerWaits::between(&b, &a), None, "a restart in between");
        assert_eq!(w.schema, None, "performance_schema off at one end");
        let mut c = a;
        let mut end = a.schema.unwrap();
        end.add("wait/synch/cond/threadpool/worker_cond", 3_500_000_000_000);
        end.add("wait/synch/mutex/innodb/lock_wait_mutex", 250_000_000_000);
        end.add("wait/lock/table/sql/handler", 1_000_000_000);
        end.add("idle", 9_000_000_000_000);
        c.schema = Some(end);
        let w = ServerWaits::between(&a, &c).unwrap().schema.unwrap();
        assert_eq!((w.pool_s, w.synch_s, w.lock_s), (3.5, 0.25, 0.001));
    }
}
