//! The one way a server process is started and stopped. Every server kind
//! uses [`ServerProcess`]; a new kind follows these rules:
//!
//! 1. **Foreground, direct child.** Run the server's own binary in the
//!    foreground (`nginx -g 'daemon off;'`, `postgres -D`, `mariadbd`,
//!    `nsd -d`, `named -f`, `unbound -d`), never a wrapper that daemonizes
//!    (`pg_ctl`, `mysqld_safe`) or switches user by forking (`runuser`,
//!    `su`): pass the user to [`ServerProcess::spawn_as`] instead. Hand the `Command` to
//!    [`ServerProcess::spawn`] from a thread that lives as long as the
//!    server (the parent-death signal follows the spawning thread).
//! 2. **Its own session.** The child calls `setsid()` before exec, so the
//!    server is its own process group and has no controlling terminal: a
//!    Ctrl-C typed at scalelab (SIGINT to the terminal's foreground group)
//!    never reaches it, and an interrupted trial is not mistaken for "the
//!    server died". scalelab alone decides when the server stops.
//! 3. **A tracking cgroup.** Besides the placement's cgroups (CPU, memory),
//!    every server gets a cgroup of its own (`scalelab-<pid>-server-<n>`,
//!    on the unified hierarchy if mounted, else a v1 one) that it joins
//!    before exec. A process group is not enough on its own: PostgreSQL's
//!    backends each call `setsid()`, and a process can always leave its
//!    group, but not its cgroup. Where no cgroup can be made (not root, no
//!    delegation) the process group is the fallback.
//! 4. **Stop the whole server, not a walk of the root's children.**
//!    [`ServerProcess::stop`] sends the kind's graceful signal to the root,
//!    waits out its grace, then SIGKILLs every process still in the cgroup
//!    or process group until none is left, and removes the cgroup. Workers
//!    re-parented after their master died are found this way too (nginx
//!    workers that outlive a killed master keep a `reuseport` socket and
//!    silently serve the next run otherwise).
//! 5. **Nothing outlives `kill -9` of scalelab.** The server gets
//!    `PR_SET_PDEATHSIG` = SIGKILL (set after the uid switch, which would
//!    clear it), and a [`watchdog`] process per server waits on a pipe whose
//!    write end only scalelab holds. When scalelab dies however it dies, the
//!    pipe reads end-of-file and the watchdog SIGKILLs the process group and
//!    every process in the server's cgroups (tracking and placement), then
//!    removes those cgroups, within milliseconds. The cgroups and the
//!    kind's private directories are also registered with
//!    [`crate::owned`]'s reaper, which removes them even for a kind with no
//!    process (the router's placement) and reclaims a dead owner's at the
//!    next run.
//!
//! A kind that creates other resources (network namespaces, veth pairs)
//! must tie them to a process of the server where it can (a namespace made
//! by `unshare` without a bind mount dies with its last process) and remove
//! them by name on stop; a leftover of a dead run is reclaimed on the next
//! start, as the PostgreSQL target does with its data directory. Private
//! directories are made with `scalelab::server::rundir::create` (named
//! `<prefix><PID>-<random>`, registered with the reaper), and a new prefix
//! joins `scalelab::server::rundir::reclaim_stale`.

mod reap_ns;
pub mod watchdog;

use super::process;
use crate::owned;
use crate::placement::cgroup::Cgroup;
use crate::placement::{cgroup_name, hierarchy, Placement, CGROUP_PREFIX};
use std::io;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use watchdog::Watchdog;

/// How long processes left after the graceful stop get to die from SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// A started server: its root process, the cgroup that tracks every process
/// it forks, and the watchdog that kills them all if scalelab dies.
///
/// Field order matters on drop: the watchdog is released last.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    tracking: Option<Cgroup>,
    watchdog: Option<Watchdog>,
    stopped: bool,
}

/// Processes that were still alive after the stop's SIGKILLs.
#[derive(Debug, thiserror::Error)]
#[error("processes {0:?} of the server were still alive 5 s after SIGKILL")]
pub struct Leftover(pub Vec<u32>);

impl ServerProcess {
    /// Spawns `cmd` as a server inside `placement`, in its own session and
    /// tracking cgroup, with the parent-death signal and a watchdog.
    pub fn spawn(cmd: Command, placement: &Placement) -> io::Result<ServerProcess> {
        Self::spawn_as(cmd, placement, None)
    }

    /// [`ServerProcess::spawn`], switching to `user` (uid, gid) in the child
    /// once it has joined its cgroups (which needs root), right before exec.
    /// Do not use `Command::uid` for a server: std switches before the
    /// cgroups are joined.
    pub fn spawn_as(
        mut cmd: Command,
        placement: &Placement,
        user: Option<(u32, u32)>,
    ) -> io::Result<ServerProcess> {
        use std::os::unix::process::CommandExt;
        let tracking = tracking_cgroup();
        let procs = match &tracking {
            Some(cg) => Some(cg.procs_file().map_err(io::Error::other)?),
            None => None,
        };
        placement.configure(&mut cmd);
        // SAFETY: runs between fork and exec, after std's uid/gid switch;
        // only raw async-signal-safe calls on data built before fork.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the closure runs in the child between fork and exec and
        // makes only async-signal-safe calls on data captured before fork.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(io::Error::last_os_error());
                }
                if let Some(p) = &procs {
                    crate::placement::cgroup::join_raw(p)?;
                }
                if let Some((uid, gid)) = user {
                    if libc::setgroups(0, std::ptr::null()) != 0
                        || libc::setgid(gid) != 0
                        || libc::setuid(uid) != 0
                    {
                        return Err(io::Error::last_os_error());
                    }
                }
                // After the uid switch, which clears it.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // scalelab may have died before the prctl: then nobody will.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn()?;
        let mut cgroups = placement.cgroup_dirs();
        cgroups.extend(tracking.as_ref().map(|c| c.dir.clone()));
        let watchdog = match Watchdog::start(child.id(), &cgroups) {
            Ok(w) => w,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        Ok(ServerProcess {
            child,
            tracking,
            watchdog: Some(watchdog),
            stopped: false,
        })
    }

    /// PID of the root process (the server's master or postmaster).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// PID of the watchdog guarding this server.
    pub fn watchdog_pid(&self) -> Option<u32> {
        self.watchdog.as_ref().map(Watchdog::pid)
    }

    /// The tracking cgroup's directory, if one could be made.
    pub fn tracking_cgroup(&self) -> Option<PathBuf> {
        self.tracking.as_ref().map(|c| c.dir.clone())
    }

    /// The root's exit status if it has exited (reaping it), for setup
    /// commands run as a [`ServerProcess`] (initdb, mariadb-install-db).
    pub fn try_wait(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        self.child.try_wait()
    }

    /// Whether the root process is alive (not exited, not a zombie).
    pub fn is_running(&self) -> bool {
        !self.stopped && process::is_alive(self.pid())
    }

    /// Every live process of the server: those in its tracking cgroup and
    /// those in its process group.
    pub fn processes(&self) -> Vec<u32> {
        let mut pids = self.tracking.as_ref().map(Cgroup::pids).unwrap_or_default();
        if !self.stopped {
            pids.extend(process::group_members(self.pid()));
        }
        pids.sort_unstable();
        pids.dedup();
        pids.retain(|&p| process::is_alive(p));
        pids
    }

    /// Stops the server: `signal` to the root, up to `grace` for it to exit,
    /// then SIGKILL for every process left in its cgroup or group, until
    /// none is. Removes the tracking cgroup and releases the watchdog.
    /// Idempotent.
    pub fn stop(&mut self, signal: libc::c_int, grace: Duration) -> Result<(), Leftover> {
        if self.stopped {
            return Ok(());
        }
        let root = self.pid();
        if process::is_alive(root) {
            process::signal(root, signal);
            process::wait_gone(root, grace);
        }
        let end = Instant::now() + KILL_WAIT;
        let left = loop {
            let left = self.processes();
            if left.is_empty() || Instant::now() >= end {
                break left;
            }
            for &pid in &left {
                process::signal(pid, libc::SIGKILL);
            }
            process::reap(root);
            std::thread::sleep(Duration::from_millis(10));
        };
        let _ = self.child.try_wait();
        process::reap(root);
        self.stopped = true;
        if !left.is_empty() {
            // The watchdog, dropped unreleased with this value, tries again.
            return Err(Leftover(left));
        }
        if let Some(cg) = self.tracking.take() {
            let _ = cg.remove();
        }
        if let Some(mut w) = self.watchdog.take() {
            w.release();
        }
        Ok(())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.stop(libc::SIGKILL, Duration::ZERO);
    }
}

/// A fresh tracking cgroup in the first hierarchy that accepts one.
fn tracking_cgroup() -> Option<Cgroup> {
    static SERIAL: AtomicU32 = AtomicU32::new(0);
    let n = SERIAL.fetch_add(1, Ordering::Relaxed);
    let name = cgroup_name(&format!("server-{n}"));
    hierarchy::locate_tracking_here().iter().find_map(|h| {
        // Empty cgroups of a scalelab that is gone (its reaper gave up on
        // one whose killed processes took too long to leave) go first.
        owned::reclaim_stale(&h.parent, CGROUP_PREFIX, owned::remove_cgroup);
        Cgroup::make(h, &name, &[]).ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn an_empty_cgroup_of_a_dead_scalelab_is_reclaimed() {
        let Some(h) = hierarchy::locate_tracking_here().into_iter().next() else {
            panic!("no cgroup hierarchy to track servers in");
        };
        let mut gone = Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        let stale = h.parent.join(format!("scalelab-{}-server-0", gone.id()));
        std::fs::create_dir(&stale).unwrap();
        let fresh = tracking_cgroup().unwrap();
        let removed = !stale.exists();
        let _ = std::fs::remove_dir(&stale);
        drop(fresh);
        assert!(removed, "{} was left", stale.display());
    }

    #[test]
    fn the_server_runs_in_its_own_session() {
        let mut s = ServerProcess::spawn(sh("sleep 30"), &Placement::unconstrained()).unwrap();
        let pid = s.pid();
        assert_eq!(process::session_of(pid), Some(pid), "setsid before exec");
        assert_ne!(
            process::session_of(pid),
            process::session_of(std::process::id())
        );
        s.stop(libc::SIGTERM, Duration::from_secs(2)).unwrap();
        assert!(!process::is_alive(pid));
    }

    #[test]
    fn stop_kills_what_the_root_left_behind() {
        // The root forks a child that ignores SIGTERM and escapes into its
        // own session (as a PostgreSQL backend does), then the root exits.
        let mut s = ServerProcess::spawn(
            sh("setsid sh -c 'trap \"\" TERM; sleep 30' & sleep 30"),
            &Placement::unconstrained(),
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while s.processes().len() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let all = s.processes();
        assert!(all.len() >= 3, "{all:?}");
        process::signal(s.pid(), libc::SIGKILL);
        s.stop(libc::SIGTERM, Duration::from_millis(200)).unwrap();
        let alive: Vec<u32> = all.into_iter().filter(|&p| process::is_alive(p)).collect();
        assert!(alive.is_empty(), "left behind: {alive:?}");
    }
}
