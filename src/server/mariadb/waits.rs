//! MariaDB's own wait counters (`SHOW GLOBAL STATUS`), read at the
//! measured window's two ends for the limiter
//! (`probe::limiter::server_waits`).

use crate::probe::limiter::server_waits::WaitCounters;
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
    })
}
