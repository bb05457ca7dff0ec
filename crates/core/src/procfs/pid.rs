//! One process's files: `/proc/PID/stat`, the context-switch lines of
//! `/proc/PID/status`, `/proc/PID/task/TID/schedstat` and `syscall`,
//! `comm`, `cwd`, `io`, its threads and their `children`, its descriptors
//! (`fd`, `fdinfo`), its namespace's `net` tables, and the start time
//! that tells a process from a later one that reused its PID.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The fields of `/proc/PID/stat` scalelab uses (proc(5) numbering).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PidStat {
    /// The process id (1).
    pub pid: u32,
    /// The command name (2), without its parentheses.
    pub comm: String,
    /// `R`, `S`, `D`, `Z`, ... (3).
    pub state: char,
    /// The parent's process id (4).
    pub ppid: u32,
    /// The process group (5).
    pub pgrp: u32,
    /// The session (6).
    pub session: u32,
    /// Clock ticks (USER_HZ) in user mode, all threads (14).
    pub utime: u64,
    /// Clock ticks in system mode, all threads (15).
    pub stime: u64,
    /// User ticks of waited-for children, accumulated when they are reaped (16).
    pub cutime: u64,
    /// System ticks of waited-for children (17).
    pub cstime: u64,
    /// Major page faults (a page read from storage) (12).
    pub majflt: u64,
    /// Major page faults of reaped children (13).
    pub cmajflt: u64,
    /// Threads (20).
    pub num_threads: u32,
    /// Start time in clock ticks after boot (22).
    pub starttime: u64,
    /// Virtual memory size in bytes (23).
    pub vsize_bytes: u64,
    /// Resident set size in pages (24).
    pub rss_pages: u64,
    /// The CPU it last ran on (39); `None` on a kernel that does not say.
    pub processor: Option<u32>,
}

impl PidStat {
    /// Exited and waiting to be reaped (`Z`), or dead (`X`).
    pub fn is_zombie(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
    /// User and system ticks of the process itself.
    pub fn own_ticks(&self) -> u64 {
        self.utime + self.stime
    }
    /// Own ticks plus those of reaped children.
    pub fn ticks_with_children(&self) -> u64 {
        self.own_ticks() + self.cutime + self.cstime
    }
}

/// Parses one stat line. The comm may contain spaces and parentheses, so
/// it runs from the first `(` to the last `)`.
pub fn parse_stat(text: &str) -> Option<PidStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text.get(..open)?.trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_string();
    let f: Vec<&str> = text.get(close + 1..)?.split_ascii_whitespace().collect();
    // f[0] is field 3 (state); field n is f[n - 3].
    let num = |n: usize| f.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    // cutime, cstime and rss are signed in the kernel's format.
    let signed = |n: usize| {
        f.get(n - 3)
            .and_then(|v| v.parse::<i64>().ok())
            .map(|v| v.max(0) as u64)
    };
    Some(PidStat {
        pid,
        comm,
        state: f.first()?.chars().next()?,
        ppid: num(4)? as u32,
        pgrp: num(5)? as u32,
        session: num(6)? as u32,
        utime: num(14)?,
        stime: num(15)?,
        cutime: signed(16)?,
        cstime: signed(17)?,
        majflt: num(12)?,
        cmajflt: num(13)?,
        num_threads: num(20)? as u32,
        starttime: num(22)?,
        vsize_bytes: num(23)?,
        rss_pages: signed(24)?,
        processor: num(39).map(|c| c as u32),
    })
}

/// `/proc/PID/stat`, parsed; `None` when the process is gone (or the file
/// does not parse).
pub fn stat(pid: u32) -> Option<PidStat> {
    parse_stat(&stat_text(pid).ok()?)
}

/// The text of `/proc/PID/stat`.
pub fn stat_text(pid: u32) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
}

/// The owner of `/proc/PID`: the process's effective user ID.
pub fn owner(pid: u32) -> std::io::Result<u32> {
    use std::os::unix::fs::MetadataExt;
    Ok(std::fs::metadata(format!("/proc/{pid}"))?.uid())
}

/// Whether `pid` has exited and waits to be reaped, or is dead (`Z`, `X`);
/// false for a process that is gone or alive.
pub fn is_zombie(pid: u32) -> bool {
    stat(pid).is_some_and(|s| s.is_zombie())
}

/// Whether `pid` is gone from `/proc` or a zombie: it runs no more.
pub fn has_exited(pid: u32) -> bool {
    stat(pid).map_or(true, |s| s.is_zombie())
}

/// The start time of a live (non-zombie) `pid`, in clock ticks after boot:
/// with the PID, it names one process, whichever later reuses the PID.
/// `None` when it is gone or a zombie.
pub fn start_ticks(pid: u32) -> Option<u64> {
    stat(pid).filter(|s| !s.is_zombie()).map(|s| s.starttime)
}

/// The wall-clock instant of a start time in `ticks` after boot; `None`
/// when the boot time cannot be read. Good to the second (the boot time is
/// whole seconds) plus a tick.
pub fn started_at(ticks: u64) -> Option<SystemTime> {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(boot_time()? + Duration::from_millis(ticks * 1000 / hz))
}

/// The boot instant, from `btime` in `/proc/stat`.
fn boot_time() -> Option<SystemTime> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let secs = stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// `/proc/PID/status`: `Name:\tvalue` lines.
pub fn status(pid: u32) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
}

/// The value of the `name:` line of a status file, trimmed; `None` when
/// the line is missing.
pub fn status_value<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key == name).then(|| value.trim())
    })
}

/// `(voluntary, involuntary)` context switches from a status file. The
/// kernel reports them for that one task (thread), not the whole process.
pub fn parse_ctx_switches(status: &str) -> (u64, u64) {
    let field = |name| {
        status_value(status, name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (
        field("voluntary_ctxt_switches"),
        field("nonvoluntary_ctxt_switches"),
    )
}

/// The context switches of the task whose status file is `path`
/// (`/proc/PID/status` or `/proc/PID/task/TID/status`); `(0, 0)` when it
/// cannot be read.
pub fn ctx_switches(path: &str) -> (u64, u64) {
    std::fs::read_to_string(path)
        .map(|s| parse_ctx_switches(&s))
        .unwrap_or((0, 0))
}

/// `(ns on CPU, ns runnable but waiting for a CPU)` from a schedstat file.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_ascii_whitespace().map(|v| v.parse::<u64>().ok());
    Some((f.next()??, f.next()??))
}

/// The schedstat file at `path` (`/proc/PID/task/TID/schedstat`,
/// `/proc/thread-self/schedstat`), parsed; `None` when it cannot be read
/// (the task is gone, or the kernel keeps no schedstat).
pub fn schedstat(path: impl AsRef<std::path::Path>) -> Option<(u64, u64)> {
    parse_schedstat(&std::fs::read_to_string(path).ok()?)
}

/// `(ns on CPU, times it arrived on a CPU)`: the first and third fields
/// of a schedstat file. The kernel counts an arrival the moment the task
/// gets a CPU, and adds its on-CPU time as it runs.
pub fn schedstat_runs(path: impl AsRef<std::path::Path>) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut f = text.split_ascii_whitespace().map(|v| v.parse::<u64>().ok());
    let oncpu = f.next()??;
    Some((oncpu, f.nth(1)??))
}

/// The PIDs listed in `/proc`, in its order; an error when it cannot be
/// read ([`super::sockets::all_pids`] makes that empty).
pub fn all() -> std::io::Result<Vec<u32>> {
    Ok(std::fs::read_dir("/proc")?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect())
}

/// `/proc/PID/comm`: the command name, with its newline.
pub fn comm(pid: u32) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
}

/// `/proc/PID/cgroup`: the process's cgroups, one line per hierarchy
/// ([`super::mounts::parse_proc_cgroup`] reads it).
pub fn cgroup(pid: u32) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
}

/// `/proc/PID/cwd`: where the process works.
pub fn cwd(pid: u32) -> std::io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/cwd"))
}

/// `/proc/PID/io`: the process's I/O counters (readable by its owner).
pub fn io(pid: u32) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
}

/// `read_bytes:` of a `/proc/PID/io` text.
pub fn parse_read_bytes(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("read_bytes:"))?
        .trim()
        .parse()
        .ok()
}

/// `syscr:` and `syscw:` of a `/proc/PID/io` text: the read-family and
/// write-family system calls the process and its threads made (the
/// kernel's task I/O accounting counts one per `read`, `readv`, `pread64`,
/// `preadv` and `sendfile` for `syscr`, and one per `write`, `writev`,
/// `pwrite64`, `pwritev` and `sendfile` for `syscw`, whatever their file;
/// `recv` and `send` on a socket are not among them). The process's own
/// file includes its exited threads and the children it has reaped.
pub fn parse_io_calls(text: &str) -> Option<(u64, u64)> {
    let field = |name: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(name))?
            .trim()
            .parse()
            .ok()
    };
    Some((field("syscr:")?, field("syscw:")?))
}

/// A table of the network namespace `pid` is in (`/proc/PID/net/FILE`:
/// `snmp`, `netstat`).
pub fn net_file(pid: u32, file: &str) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/net/{file}"))
}

/// `pid`'s threads: `(tid, its /proc/PID/task/TID directory)`; an error
/// when the process is gone.
pub fn tasks(pid: u32) -> std::io::Result<Vec<(u32, PathBuf)>> {
    super::me::task_dirs(Path::new(&format!("/proc/{pid}/task")))
}

/// The context switches of `pid`'s main thread (its `status` file).
pub fn main_ctx_switches(pid: u32) -> (u64, u64) {
    ctx_switches(&format!("/proc/{pid}/status"))
}

/// The schedstat of thread `tid` of `pid` ([`schedstat`]).
pub fn task_schedstat(pid: u32, tid: u32) -> Option<(u64, u64)> {
    schedstat(format!("/proc/{pid}/task/{tid}/schedstat"))
}

/// The schedstat runs of thread `tid` of `pid` ([`schedstat_runs`]).
pub fn task_schedstat_runs(pid: u32, tid: u32) -> Option<(u64, u64)> {
    schedstat_runs(format!("/proc/{pid}/task/{tid}/schedstat"))
}

/// `/proc/PID/task/TID/syscall`: the call thread `tid` sleeps in.
pub fn task_syscall(pid: u32, tid: u32) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall"))
}

/// The direct children of `pid`, from `/proc/PID/task/*/children`.
pub fn children(pid: u32) -> Vec<u32> {
    (tasks(pid).unwrap_or_default().into_iter())
        .filter_map(|(_, dir)| std::fs::read_to_string(dir.join("children")).ok())
        .flat_map(|text| parse_children(&text))
        .collect()
}

/// The PIDs of a `children` file (`12 34 `).
pub fn parse_children(text: &str) -> Vec<u32> {
    text.split_whitespace()
        .filter_map(|p| p.parse::<u32>().ok())
        .collect()
}

/// What descriptor `fd` of `pid` is (`/proc/PID/fd/FD`'s link:
/// `socket:[123]`, `anon_inode:[eventpoll]`, a path).
pub fn fd_link(pid: u32, fd: u64) -> std::io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
}

/// `/proc/PID/fdinfo/FD`.
pub fn fdinfo(pid: u32, fd: u64) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}"))
}

/// `/proc` itself, for code that must list it without allocating (after
/// a fork: `sys::lifecycle`'s namespace reaper).
pub const PROC_DIR: &std::ffi::CStr = c"/proc";

/// The start of `/proc/PID/...` paths, for code that builds them without
/// allocating (after a fork).
pub const PID_PREFIX: &[u8] = b"/proc/";

/// The rest of `/proc/PID/ns/net` after the PID: a process's network
/// namespace file.
pub const NETNS_SUFFIX: &[u8] = b"/ns/net";

/// A parsed `syscall` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syscall {
    /// The thread is running (the file says `running`).
    Running,
    /// Blocked outside a system call: `-1`. A sleeping thread there waits
    /// for a page fault to be served, from storage: I/O.
    None,
    /// In system call `nr` with these arguments.
    In {
        /// The system call's number.
        nr: std::ffi::c_long,
        /// Its six arguments.
        args: [u64; 6],
    },
}

/// Parses `/proc/PID/task/TID/syscall`: `running`, `-1 sp pc`, or
/// `nr a0 a1 a2 a3 a4 a5 sp pc` in hex.
pub fn parse_syscall(text: &str) -> Option<Syscall> {
    let mut f = text.split_ascii_whitespace();
    let first = f.next()?;
    if first == "running" {
        return Some(Syscall::Running);
    }
    let nr: std::ffi::c_long = first.parse().ok()?;
    if nr < 0 {
        return Some(Syscall::None);
    }
    let mut args = [0u64; 6];
    for a in &mut args {
        let v = f.next()?;
        *a = u64::from_str_radix(v.trim_start_matches("0x"), 16).ok()?;
    }
    Some(Syscall::In { nr, args })
}

/// The descriptors an epoll instance watches, from its fdinfo's `tfd:`
/// lines ([`fdinfo`]).
pub fn epoll_targets(fdinfo: &str) -> std::collections::HashSet<u64> {
    fdinfo
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("tfd:"))
        .filter_map(|rest| rest.split_ascii_whitespace().next()?.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_a_hostile_comm() {
        // A comm with spaces and a parenthesis; captured layout from 6.x.
        let line = "4242 (my (odd) proc) S 4200 4242 4200 0 -1 4194560 600 0 5 2 \
                    150 25 7 3 20 0 3 0 62453 3133440 401 18446744073709551615 1 1 0 0 0 0 0 \
                    0 0 0 0 0 17 1 0 0 0 0 0\n";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.pid, 4242);
        assert_eq!(s.comm, "my (odd) proc");
        assert_eq!(s.state, 'S');
        assert_eq!((s.ppid, s.pgrp, s.session), (4200, 4242, 4200));
        assert_eq!((s.utime, s.stime, s.cutime, s.cstime), (150, 25, 7, 3));
        assert_eq!(s.num_threads, 3);
        assert_eq!((s.majflt, s.cmajflt), (5, 2));
        assert_eq!(s.starttime, 62453);
        assert_eq!(s.vsize_bytes, 3133440);
        assert_eq!(s.rss_pages, 401);
        assert_eq!(s.processor, Some(1));
        assert_eq!(s.ticks_with_children(), 185);
        assert!(!s.is_zombie());
    }

    #[test]
    fn truncated_stat_is_none() {
        assert_eq!(parse_stat("12 (x) S 1 2 3"), None);
        assert_eq!(parse_stat(""), None);
    }

    #[test]
    fn this_process_its_start_and_a_gone_one() {
        let me = std::process::id();
        let s = stat(me).unwrap();
        assert_eq!((s.pid, s.state == 'Z'), (me, false));
        assert_eq!(start_ticks(me), Some(s.starttime));
        let started = started_at(s.starttime).unwrap();
        // Started before now, and not before the machine booted.
        assert!(started <= SystemTime::now() + Duration::from_secs(2));
        assert!(started_at(0).unwrap() <= started);
        assert!(!is_zombie(me) && !has_exited(me));
        // PIDs never reach u32::MAX (pid_max is at most 2^22).
        assert_eq!((stat(u32::MAX), start_ticks(u32::MAX)), (None, None));
        assert!(has_exited(u32::MAX));
    }

    #[test]
    fn status_context_switches() {
        let status = "Name:\tnginx\nThreads:\t1\nvoluntary_ctxt_switches:\t1234\n\
                      nonvoluntary_ctxt_switches:\t56\n";
        assert_eq!(parse_ctx_switches(status), (1234, 56));
        assert_eq!(parse_ctx_switches("Name:\tx\n"), (0, 0));
        assert_eq!(status_value(status, "Name"), Some("nginx"));
        assert_eq!(status_value(status, "Thread"), None);
        let me = super::status(std::process::id()).unwrap();
        assert!(status_value(&me, "Cpus_allowed_list").is_some());
    }

    #[test]
    fn schedstat_fields() {
        assert_eq!(parse_schedstat("1478272 90210 1\n"), Some((1478272, 90210)));
        assert_eq!(parse_schedstat("x"), None);
    }

    #[test]
    fn read_bytes_come_from_the_io_file() {
        let io = "rchar: 10\nwchar: 0\nsyscr: 1\nsyscw: 0\nread_bytes: 4096\nwrite_bytes: 0\n";
        assert_eq!(parse_read_bytes(io), Some(4096));
        assert_eq!(parse_read_bytes("rchar: 1\n"), None);
    }

    #[test]
    fn read_and_write_calls_come_from_the_io_file() {
        let io = "rchar: 10\nwchar: 7\nsyscr: 3\nsyscw: 12\nread_bytes: 0\n";
        assert_eq!(parse_io_calls(io), Some((3, 12)));
        assert_eq!(parse_io_calls("syscr: 3\n"), None, "no syscw");
        assert_eq!(parse_io_calls("syscr: x\nsyscw: 1\n"), None);
    }

    #[test]
    fn this_process_counts_its_own_writes() {
        let me = std::process::id();
        let before = parse_io_calls(&io(me).unwrap()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut f = std::fs::File::create(dir.path().join("w")).unwrap();
        for _ in 0..5 {
            std::io::Write::write_all(&mut f, b"x").unwrap();
        }
        let after = parse_io_calls(&io(me).unwrap()).unwrap();
        assert!(after.1 >= before.1 + 5, "{before:?} → {after:?}");
    }

    #[test]
    fn children_files_list_pids() {
        assert_eq!(parse_children("12 34 \n"), vec![12, 34]);
        assert_eq!(parse_children(""), Vec::<u32>::new());
    }

    #[test]
    fn syscall_files_parse_and_a_truncated_one_does_not() {
        assert_eq!(parse_syscall("running\n"), Some(Syscall::Running));
        assert_eq!(parse_syscall("-1 0x7ffd 0x55"), Some(Syscall::None));
        assert_eq!(
            parse_syscall("232 0x9 0x5 0x1 0xffffffff 0x0 0x0 0x7ffd 0x7f"),
            Some(Syscall::In {
                nr: 232,
                args: [9, 5, 1, 0xffffffff, 0, 0]
            })
        );
        assert_eq!(parse_syscall(""), None);
        assert_eq!(parse_syscall("7 0x1"), None, "truncated");
    }

    #[test]
    fn epoll_fdinfo_lists_its_targets() {
        // Captured from a PostgreSQL 15 backend.
        let info = "pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t1038\n\
tfd:        7 events:       19 data:     560a1834fac8  pos:0 ino:25ab59 sdev:9\n\
tfd:        3 events:       19 data:     560a1834faf8  pos:0 ino:25adfc sdev:f\n";
        assert_eq!(epoll_targets(info), std::collections::HashSet::from([7, 3]));
    }
}
