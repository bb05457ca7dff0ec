//! The reaper: a small process forked from scalelab for every server (and
//! every lab namespace), which waits for scalelab to go away and then kills
//! what the server left, or removes the namespaces the lab made.
//!
//! scalelab holds the write end of a pipe; the watchdog blocks in `read` on
//! the other end. The kernel closes scalelab's end however scalelab ends,
//! `kill -9` included, so `read` returning end-of-file means "the
//! coordinator is gone": the watchdog then SIGKILLs the server's process
//! group and every process in the server's cgroups, removes those cgroups,
//! and exits. A lab's watchdog ([`Watchdog::for_namespaces`]) instead
//! kills whatever still runs inside the lab's named network namespaces and
//! removes them, as `ip netns del` does (see `reap_ns`). A normal stop
//! writes one byte first, which tells the watchdog to exit without touching
//! anything (scalelab has already cleaned up).
//!
//! The watchdog is forked without exec, so between `fork` and `_exit` it
//! makes only raw, async-signal-safe system calls on data prepared before
//! the fork (no allocation, no locks): a multithreaded parent's locks may
//! be held by threads that do not exist in the child.

use super::reap_ns;
use crate::owned::raw::{self, sleep_ms};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// The paths a watchdog needs, as C strings built before the fork.
struct CgroupPaths {
    dir: CString,
    procs: CString,
    kill: CString,
}

/// What the watchdog kills and removes when scalelab dies.
struct Plan {
    /// The server's process group (0: none, a lab's namespaces only).
    pgid: libc::pid_t,
    cgroups: Vec<CgroupPaths>,
    /// Named network namespaces (`/run/netns/NAME`) to remove.
    namespaces: Vec<CString>,
}

/// A running watchdog. [`Watchdog::release`] tells it that the server was
/// stopped cleanly; dropping it without that makes it kill the server.
#[derive(Debug)]
pub struct Watchdog {
    pid: libc::pid_t,
    pipe: Option<OwnedFd>,
}

fn c_path(p: &std::path::Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

impl Watchdog {
    /// Forks the watchdog for the server whose process group is `pgid` and
    /// whose processes are inside `cgroups` (directories; may be empty).
    pub fn start(pgid: u32, cgroups: &[PathBuf]) -> io::Result<Watchdog> {
        Self::fork(Plan {
            pgid: pgid as libc::pid_t,
            cgroups: cgroups
                .iter()
                .map(|d| {
                    Ok(CgroupPaths {
                        dir: c_path(d)?,
                        procs: c_path(&d.join("cgroup.procs"))?,
                        kill: c_path(&d.join("cgroup.kill"))?,
                    })
                })
                .collect::<io::Result<_>>()?,
            namespaces: Vec::new(),
        })
    }

    /// Forks a watchdog that removes the named network namespaces at
    /// `paths` (their files under `/run/netns`) when scalelab dies. Paths
    /// that do not exist (yet, or any more) are passed over.
    pub fn for_namespaces(paths: &[PathBuf]) -> io::Result<Watchdog> {
        Self::fork(Plan {
            pgid: 0,
            cgroups: Vec::new(),
            namespaces: paths.iter().map(|p| c_path(p)).collect::<io::Result<_>>()?,
        })
    }

    fn fork(plan: Plan) -> io::Result<Watchdog> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 fills the two-element array on success.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both fds were just created and are owned here.
        let (read_end, write_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: the child runs only `watch`, which is async-signal-safe.
        match unsafe { libc::fork() } {
            -1 => Err(io::Error::last_os_error()),
            0 => watch(read_end.as_raw_fd(), &plan),
            pid => {
                drop(read_end);
                Ok(Watchdog {
                    pid,
                    pipe: Some(write_end),
                })
            }
        }
    }

    /// The watchdog's PID.
    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// Tells the watchdog the server was stopped normally, and reaps it.
    pub fn release(&mut self) {
        if let Some(pipe) = self.pipe.take() {
            // SAFETY: a one-byte write to a pipe we own; the watchdog exits on it.
            unsafe {
                libc::write(pipe.as_raw_fd(), b"s".as_ptr().cast(), 1);
            }
        }
        self.reap();
    }

    /// Closes the pipe (if still open) and waits for the watchdog to exit.
    fn reap(&mut self) {
        self.pipe = None;
        // SAFETY: blocking waitpid on our own child, which exits once its
        // pipe is closed.
        unsafe {
            let mut status = 0;
            while libc::waitpid(self.pid, &mut status, 0) == -1
                && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
            {}
        }
    }
}

impl Drop for Watchdog {
    /// Dropped without [`Watchdog::release`]: the server was not stopped
    /// cleanly, so the watchdog kills whatever is left, as if scalelab died.
    fn drop(&mut self) {
        if self.pipe.is_some() {
            self.reap();
        }
    }
}

/// The watchdog's whole life, in the forked child. Never returns.
fn watch(read_fd: libc::c_int, plan: &Plan) -> ! {
    // SAFETY: raw system calls only, on fds and C strings prepared before fork.
    unsafe {
        // Its own session, holding nothing of scalelab's but the pipe: no
        // sockets, no store, no other watchdog's pipe, and no stdout a
        // caller may be reading to EOF.
        raw::detach(read_fd);
        let mut byte = [0u8; 1];
        if raw::read_fd3(&mut byte) != 1 {
            kill_everything(plan);
        }
        libc::_exit(0)
    }
}

/// SIGKILLs the process group and every process in the cgroups until they
/// are empty, then removes the cgroups and the namespaces.
unsafe fn kill_everything(plan: &Plan) {
    kill_group(plan.pgid);
    for cg in &plan.cgroups {
        write_one(&cg.kill);
    }
    for _ in 0..250 {
        let mut any = false;
        for cg in &plan.cgroups {
            any |= kill_procs(&cg.procs) > 0;
        }
        kill_group(plan.pgid);
        if !any {
            break;
        }
        sleep_ms(20);
    }
    for cg in &plan.cgroups {
        // Exited tasks leave a cgroup asynchronously: retry while busy, up
        // to 10 s (a loaded machine's dying server can be slow to go).
        for _ in 0..500 {
            if libc::rmdir(cg.dir.as_ptr()) == 0 || *libc::__errno_location() != libc::EBUSY {
                break;
            }
            sleep_ms(20);
        }
    }
    for ns in &plan.namespaces {
        reap_ns::remove(ns);
    }
}

/// SIGKILLs process group `pgid` (none when 0: `kill(0)` would mean ours).
unsafe fn kill_group(pgid: libc::pid_t) {
    if pgid > 0 {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// Writes "1" to `path` (cgroup v2's `cgroup.kill`); absent on v1, ignored.
unsafe fn write_one(path: &CString) {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY);
    if fd >= 0 {
        libc::write(fd, b"1".as_ptr().cast(), 1);
        libc::close(fd);
    }
}

/// SIGKILLs every PID listed in a `cgroup.procs` file; returns how many.
unsafe fn kill_procs(procs: &CString) -> usize {
    let fd = libc::open(procs.as_ptr(), libc::O_RDONLY);
    if fd < 0 {
        return 0;
    }
    let mut buf = [0u8; 4096];
    let mut pid: libc::pid_t = 0;
    let mut killed = 0;
    loop {
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        if n <= 0 {
            break;
        }
        for &b in &buf[..n as usize] {
            if b.is_ascii_digit() {
                pid = pid
                    .saturating_mul(10)
                    .saturating_add(libc::pid_t::from(b - b'0'));
            } else if pid > 0 {
                libc::kill(pid, libc::SIGKILL);
                killed += 1;
                pid = 0;
            }
        }
    }
    if pid > 0 {
        libc::kill(pid, libc::SIGKILL);
        killed += 1;
    }
    libc::close(fd);
    killed
}
