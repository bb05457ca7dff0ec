//! MariaDB's own wait counters (`SHOW GLOBAL STATUS`), and where
//! `performance_schema` is on its wait summary by event, read at the
//! measured window's two ends for the limiter
//! (`probe::limiter::server_waits`).

use crate::probe::limiter::server_waits::{SchemaWaits, WaitCounters};
use crate::wire::mysql::client::Client;
use crate::wire::mysql::MysqlUrl;
use std::time::Duration;

/// How long a reading may take to connect.
const TIMEOUT: Duration = Duration::from_secs(2);

/// The counters of the server at `url`; `None` when it cannot be read.
pub(super) fn read(url: &str) -> Option<WaitCounters> {
    let url = MysqlUrl::parse(url).ok()?;
    let mut c = Client::connect(&url, TIMEOUT).ok()?;
    Some(WaitCounters {
        row_lock_waits: c.global_status("Innodb_row_lock_waits").ok()?,
        row_lock_time_ms: c.global_status("Innodb_row_lock_time").ok()?,
        pool_threads: c.global_status("Threadpool_threads").ok(),
        pool_idle_threads: c.global_status("Threadpool_idle_threads").ok(),
        schema: schema_waits(&mut c),
    })
}

/// The summary's synchronisation and lock waits, or `None` when
/// performance_schema is off (its tables are then empty, or absent).
fn schema_waits(c: &mut Client) -> Option<SchemaWaits> {
    if c.query_i64("SELECT @@performance_schema").ok()? != 1 {
        return None;
    }
    let rows = c
        .query(
            "SELECT EVENT_NAME, SUM_TIMER_WAIT FROM performance_schema.\
             events_waits_summary_global_by_event_name \
             WHERE (EVENT_NAME LIKE 'wait/synch/%' OR EVENT_NAME LIKE 'wait/lock/%') \
             AND SUM_TIMER_WAIT > 0",
        )
        .ok()?;
    let mut w = SchemaWaits::default();
    for r in &rows {
        let (Some(Some(event)), Some(Some(ps))) = (r.first(), r.get(1)) else {
            continue;
        };
        w.add(event, ps.parse().ok()?);
    }
    Some(w)
}
