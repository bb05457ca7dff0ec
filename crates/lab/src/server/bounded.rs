//! Setup commands (initdb, mariadb-install-db) run to completion as a
//! server is: in its own session, cgroup and watchdog, bounded in time and
//! by Ctrl-C, so nothing they start outlives scalelab.

use crate::placement::Placement;
use crate::server::ServerError;
use crate::shutdown::Shutdown;
use crate::sys::lifecycle::ServerProcess;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Runs a setup command (initdb, mariadb-install-db) to completion inside
/// `placement` (whose cgroups its watchdog then also removes), bounded by
/// `limit` and `shutdown`; its output goes to `out` and is returned.
pub fn run_bounded(
    mut cmd: Command,
    kind: &'static str,
    what: &str,
    out: &Path,
    limit: Duration,
    shutdown: &Shutdown,
    placement: &Placement,
) -> Result<(ExitStatus, String), ServerError> {
    let start_error = |message: String| ServerError::Start { kind, message };
    let file = std::fs::File::create(out).map_err(|e| ServerError::io(out, e))?;
    let err = file.try_clone().map_err(|e| ServerError::io(out, e))?;
    cmd.stdin(Stdio::null()).stdout(file).stderr(err);
    // As a server: its own session, cgroup and watchdog, so it and whatever
    // it starts die with scalelab, even by kill -9.
    let mut child = ServerProcess::spawn(cmd, placement)
        .map_err(|e| start_error(format!("cannot run {what}: {e}")))?;
    let end = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if shutdown.is_triggered() || Instant::now() >= end => {
                let _ = child.stop(libc::SIGTERM, Duration::from_secs(2));
                if shutdown.is_triggered() {
                    return Err(ServerError::Interrupted);
                }
                return Err(start_error(format!(
                    "{what} did not finish within {limit:?}"
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(start_error(format!("waiting for {what}: {e}"))),
        }
    };
    // Anything it left running goes with it.
    let _ = child.stop(libc::SIGKILL, Duration::ZERO);
    Ok((status, std::fs::read_to_string(out).unwrap_or_default()))
}
