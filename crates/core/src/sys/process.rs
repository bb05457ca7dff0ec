//! Child-process helpers shared by the targets: reading process state from
//! /proc, waiting for readiness, and stopping by PID (never by pattern).
//! Servers themselves, and the setup commands that run as they do, are
//! started through [`super::lifecycle`].

use crate::model::SetupSession;
use crate::shutdown::Shutdown;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Whether `pid` exists and is not a zombie. `kill -0` succeeds on zombies,
/// so this reads the state from /proc instead.
pub fn is_alive(pid: u32) -> bool {
    !crate::procfs::pid::has_exited(pid)
}

/// Sends `sig` to `pid`; errors (the process is gone) are ignored.
pub fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: plain syscall on a PID we started.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// Reaps `pid` if it is our exited child; harmless otherwise.
pub fn reap(pid: u32) {
    // SAFETY: non-blocking waitpid on a specific PID.
    unsafe {
        let mut status = 0;
        libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG);
    }
}

/// Waits until `pid` is gone (or a zombie), reaping it if it is our child.
pub fn wait_gone(pid: u32, timeout: Duration) -> bool {
    let end = Instant::now() + timeout;
    loop {
        reap(pid);
        if !is_alive(pid) {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops `pid` gracefully with `sig`, escalating to SIGKILL after `grace`.
pub fn stop_pid(pid: u32, sig: libc::c_int, grace: Duration) {
    if !is_alive(pid) {
        reap(pid);
        return;
    }
    signal(pid, sig);
    if !wait_gone(pid, grace) {
        signal(pid, libc::SIGKILL);
        wait_gone(pid, Duration::from_secs(5));
    }
}

/// Polls `ready` every 50 ms until it returns true, `timeout` passes, or
/// shutdown is triggered. `alive` is checked too so a crashed server fails
/// fast instead of waiting out the timeout.
pub fn wait_ready(
    timeout: Duration,
    shutdown: &Shutdown,
    mut alive: impl FnMut() -> bool,
    mut ready: impl FnMut() -> bool,
) -> Result<(), WaitError> {
    let end = Instant::now() + timeout;
    loop {
        if ready() {
            return Ok(());
        }
        if shutdown.is_triggered() {
            return Err(WaitError::Interrupted);
        }
        if !alive() {
            return Err(WaitError::Died);
        }
        if Instant::now() >= end {
            return Err(WaitError::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// [`wait_ready`] for a server whose readiness is a setup session that
/// answers (`select 1`, a DNS question): `open` opens one per poll. On
/// failure it also gives the last session error, for the message.
pub fn wait_session_ready(
    timeout: Duration,
    shutdown: &Shutdown,
    pid: u32,
    mut open: impl FnMut() -> Result<Box<dyn SetupSession>, String>,
) -> Result<(), (WaitError, String)> {
    let mut last = String::new();
    let ready = || match open().and_then(|mut s| s.ready()) {
        Ok(()) => true,
        Err(e) => {
            last = e;
            false
        }
    };
    wait_ready(timeout, shutdown, || is_alive(pid), ready).map_err(|w| (w, last))
}

/// Why [`wait_ready`] gave up.
#[derive(Debug, PartialEq, Eq)]
pub enum WaitError {
    /// The timeout passed without the server answering.
    TimedOut,
    /// The server's process exited (or became a zombie) first.
    Died,
    /// Ctrl-C (the shutdown flag) arrived first.
    Interrupted,
}

/// Whether a TCP connect to `addr` succeeds within 200 ms.
pub fn tcp_accepts(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
}

/// A loopback TCP port that was free a moment ago.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The last `n` lines of a log file, for error messages.
pub fn log_tail(path: &std::path::Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The session ID of `pid`.
pub fn session_of(pid: u32) -> Option<u32> {
    crate::procfs::pid::stat(pid).map(|s| s.session)
}

/// Every process whose process group is `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    (crate::procfs::sockets::all_pids().into_iter())
        .filter(|&pid| crate::procfs::pid::stat(pid).is_some_and(|s| s.pgrp == pgid))
        .collect()
}

/// Direct children of `pid`, from `/proc/<pid>/task/*/children`.
pub fn children_of(pid: u32) -> Vec<u32> {
    crate::procfs::pid::children(pid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    #[allow(clippy::zombie_processes)] // stop_pid reaps it: that is the test
    fn stop_pid_reaps_a_child() {
        let child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        assert!(is_alive(pid));
        stop_pid(pid, libc::SIGTERM, Duration::from_secs(2));
        assert!(!is_alive(pid));
    }

    #[test]
    fn wait_session_ready_keeps_the_last_session_error() {
        let mut tries = 0;
        let r = wait_session_ready(Duration::from_secs(5), &Shutdown::new(), u32::MAX, || {
            tries += 1;
            Err(format!("refused #{tries}"))
        });
        assert_eq!(r, Err((WaitError::Died, "refused #1".to_string())));
    }

    #[test]
    fn wait_ready_reports_a_dead_server() {
        let r = wait_ready(Duration::from_secs(5), &Shutdown::new(), || false, || false);
        assert_eq!(r, Err(WaitError::Died));
    }
}
