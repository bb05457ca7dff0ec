//! What a blocked thread waits on, from its state (`/proc/PID/task/TID/stat`)
//! and its current system call (`/proc/PID/task/TID/syscall`: the number
//! and six arguments). Pure: descriptors are looked up through
//! [`FdLookup`], which the sampler backs with `/proc`.
//!
//! The rule that tells a lock from the network without the thread's stack:
//! a wait on descriptors that include a socket is a network wait (a server
//! waiting for a client's next request); an untimed wait whose descriptors
//! are no socket (PostgreSQL's latch: a signalfd and a pipe) waits for
//! another thread of the server to signal it, which is what a lock wait is
//! (`ProcSleep` waits on its latch this way; `LWLockAcquire` on a
//! semaphore, a futex). A timed wait with no socket is a background
//! thread's rest.

pub use crate::procfs::pid::Syscall;
use libc::c_long;

/// What a sampled thread was doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitClass {
    /// On a CPU or runnable.
    Running,
    /// A futex, a semaphore, or an untimed wait on local events.
    Lock,
    /// Storage.
    Io,
    /// A socket.
    Network,
    /// A timer, or a timed wait on local events.
    Idle,
    /// Anything else.
    Other,
}

/// What a descriptor of the thread's process is, as far as waits go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FdKind {
    /// A socket.
    Socket,
    /// A regular file or block device.
    File,
    /// An epoll instance, and whether it watches a socket.
    Epoll {
        /// Some descriptor it watches is a socket.
        watches_socket: bool,
    },
    /// A pipe, eventfd, signalfd, timerfd...
    Event,
}

/// Looks descriptors of one process up.
pub trait FdLookup {
    /// What descriptor `fd` is, or `None` when it cannot be read (closed).
    fn kind(&mut self, fd: u64) -> Option<FdKind>;
}

/// The thread's class from its state letter and, for a sleeping thread, its
/// system call.
pub fn classify(state: char, call: Option<Syscall>, fds: &mut dyn FdLookup) -> WaitClass {
    match state {
        'R' => return WaitClass::Running,
        'D' => return WaitClass::Io,
        _ => {}
    }
    match call {
        Some(Syscall::Running) => WaitClass::Running,
        Some(Syscall::In { nr, args }) => by_call(nr, &args, fds),
        Some(Syscall::None) => WaitClass::Io,
        None => WaitClass::Other,
    }
}

/// A wait on descriptors: a socket among them is the network; else an
/// untimed wait is a lock or event, a timed one a rest.
fn on_descriptors(watches_socket: bool, untimed: bool) -> WaitClass {
    match (watches_socket, untimed) {
        (true, _) => WaitClass::Network,
        (false, true) => WaitClass::Lock,
        (false, false) => WaitClass::Idle,
    }
}

/// An `int` timeout of -1 (no timeout), as the register shows it.
fn infinite_ms(arg: u64) -> bool {
    arg as u32 == u32::MAX
}

fn by_call(nr: c_long, a: &[u64; 6], fds: &mut dyn FdLookup) -> WaitClass {
    use libc::*;
    const LOCKS: &[c_long] = &[SYS_futex, SYS_semop, SYS_semtimedop];
    const FILE_IO: &[c_long] = &[
        SYS_pread64,
        SYS_preadv,
        SYS_pwrite64,
        SYS_pwritev,
        SYS_fsync,
        SYS_fdatasync,
        SYS_sync_file_range,
        SYS_io_getevents,
        SYS_io_uring_enter,
        SYS_openat,
    ];
    const ON_FD: &[c_long] = &[
        SYS_read,
        SYS_readv,
        SYS_write,
        SYS_writev,
        SYS_recvfrom,
        SYS_recvmsg,
        SYS_recvmmsg,
        SYS_sendto,
        SYS_sendmsg,
        SYS_accept,
        SYS_accept4,
    ];
    const RESTS: &[c_long] = &[
        SYS_nanosleep,
        SYS_clock_nanosleep,
        SYS_wait4,
        SYS_waitid,
        SYS_rt_sigsuspend,
        SYS_rt_sigtimedwait,
    ];
    if LOCKS.contains(&nr) {
        return WaitClass::Lock;
    }
    if FILE_IO.contains(&nr) {
        return WaitClass::Io;
    }
    if RESTS.contains(&nr) || legacy_rest(nr) {
        return WaitClass::Idle;
    }
    if ON_FD.contains(&nr) {
        return match fds.kind(a[0]) {
            Some(FdKind::Socket) => WaitClass::Network,
            Some(FdKind::File) => WaitClass::Io,
            Some(FdKind::Event) => WaitClass::Lock,
            Some(FdKind::Epoll { .. }) | None => WaitClass::Other,
        };
    }
    if nr == SYS_epoll_pwait || legacy_epoll_wait(nr) {
        return epoll(fds, a[0], infinite_ms(a[3]));
    }
    if nr == SYS_epoll_pwait2 {
        return epoll(fds, a[0], a[3] == 0);
    }
    // poll, ppoll, select, pselect6: the descriptors are in the thread's
    // memory, not read here; servers poll sockets.
    if [SYS_ppoll, SYS_pselect6].contains(&nr) || legacy_poll(nr) {
        return WaitClass::Network;
    }
    WaitClass::Other
}

fn epoll(fds: &mut dyn FdLookup, epfd: u64, untimed: bool) -> WaitClass {
    match fds.kind(epfd) {
        Some(FdKind::Epoll { watches_socket }) => on_descriptors(watches_socket, untimed),
        _ => WaitClass::Other,
    }
}

#[cfg(target_arch = "x86_64")]
fn legacy_epoll_wait(nr: c_long) -> bool {
    nr == libc::SYS_epoll_wait
}
#[cfg(not(target_arch = "x86_64"))]
fn legacy_epoll_wait(_: c_long) -> bool {
    false
}
#[cfg(target_arch = "x86_64")]
fn legacy_poll(nr: c_long) -> bool {
    [libc::SYS_poll, libc::SYS_select].contains(&nr)
}
#[cfg(not(target_arch = "x86_64"))]
fn legacy_poll(_: c_long) -> bool {
    false
}
#[cfg(target_arch = "x86_64")]
fn legacy_rest(nr: c_long) -> bool {
    nr == libc::SYS_pause
}
#[cfg(not(target_arch = "x86_64"))]
fn legacy_rest(_: c_long) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Fds(HashMap<u64, FdKind>);
    impl FdLookup for Fds {
        fn kind(&mut self, fd: u64) -> Option<FdKind> {
            self.0.get(&fd).copied()
        }
    }

    /// A PostgreSQL backend's descriptors, as seen under pgbench tpcb-like:
    /// fd 4 the client wait set (socket 7, signalfd 8, pipe 3), fd 9 the
    /// latch wait set (signalfd and pipe only).
    fn backend() -> Fds {
        Fds(HashMap::from([
            (
                4,
                FdKind::Epoll {
                    watches_socket: true,
                },
            ),
            (
                9,
                FdKind::Epoll {
                    watches_socket: false,
                },
            ),
            (7, FdKind::Socket),
            (3, FdKind::Event),
            (11, FdKind::File),
        ]))
    }

    fn call(text: &str) -> Option<Syscall> {
        crate::procfs::pid::parse_syscall(text)
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_backend_waiting_on_a_row_lock_is_a_lock_wait_and_on_its_client_a_network_wait() {
        let mut fds = backend();
        // Captured: `232 0x9 0x560a182e7568 0x1 0xffffffff ...` (epoll_wait, no timeout).
        let lock = call("232 0x9 0x560a182e7568 0x1 0xffffffff 0xffffffffffffffff 0x0 0x7ffd 0x7f");
        assert_eq!(classify('S', lock, &mut fds), WaitClass::Lock);
        let client =
            call("232 0x4 0x560a182e7568 0x1 0xffffffff 0xffffffffffffffff 0x0 0x7ffd 0x7f");
        assert_eq!(classify('S', client, &mut fds), WaitClass::Network);
        // The checkpointer: epoll_wait on its latch with a 300 s timeout.
        let rest = call("232 0x9 0x560a182e7568 0x1 0x493e0 0x493e0 0x0 0x7ffd 0x7f");
        assert_eq!(classify('S', rest, &mut fds), WaitClass::Idle);
        // recvfrom on the socket; read on a data file; read on a pipe.
        assert_eq!(
            classify('S', call("45 0x7 0x1 0x2 0x0 0x0 0x0 0x1 0x2"), &mut fds),
            WaitClass::Network
        );
        assert_eq!(
            classify('S', call("0 0xb 0x1 0x2 0x0 0x0 0x0 0x1 0x2"), &mut fds),
            WaitClass::Io
        );
        assert_eq!(
            classify('S', call("0 0x3 0x1 0x2 0x0 0x0 0x0 0x1 0x2"), &mut fds),
            WaitClass::Lock
        );
    }

    #[test]
    fn states_futexes_and_files() {
        let mut fds = backend();
        let futex = format!("{} 0x7f00 0x80 0x2 0x0 0x0 0x0 0x1 0x2", libc::SYS_futex);
        assert_eq!(classify('S', call(&futex), &mut fds), WaitClass::Lock);
        let fsync = format!("{} 0xb 0x0 0x0 0x0 0x0 0x0 0x1 0x2", libc::SYS_fsync);
        assert_eq!(classify('S', call(&fsync), &mut fds), WaitClass::Io);
        assert_eq!(classify('R', call(&futex), &mut fds), WaitClass::Running);
        assert_eq!(classify('D', None, &mut fds), WaitClass::Io);
        assert_eq!(classify('S', call("running"), &mut fds), WaitClass::Running);
        assert_eq!(
            classify('S', call("-1 0x7ffd 0x55"), &mut fds),
            WaitClass::Io
        );
    }
}
