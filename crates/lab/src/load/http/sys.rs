//! The OS calls the socket loop needs beyond mio: a nanosecond monotonic
//! clock, non-blocking connects from a chosen source address, a timerfd
//! for sub-millisecond open-loop pacing, and CPU pinning.

use socket2::{Domain, Socket, Type};
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// CLOCK_MONOTONIC in nanoseconds (a vDSO call, no syscall).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Starts a non-blocking connect. With `source`, the socket is bound to that
/// address first with IP_BIND_ADDRESS_NO_PORT, so the kernel picks the port
/// at connect time from the whole 4-tuple space rather than reserving one
/// per source address up front.
pub fn connect(
    addr: SocketAddr,
    source: Option<Ipv4Addr>,
    nodelay: bool,
) -> io::Result<mio::net::TcpStream> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM.nonblocking(), None)?;
    if let Some(ip) = source {
        set_bind_no_port(socket.as_raw_fd())?;
        socket.bind(&SocketAddr::V4(SocketAddrV4::new(ip, 0)).into())?;
    }
    if nodelay {
        socket.set_nodelay(true)?;
    }
    match socket.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(mio::net::TcpStream::from_std(socket.into()))
}

fn set_bind_no_port(fd: RawFd) -> io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: setsockopt reads an int from the pointer we pass.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A one-shot timerfd on CLOCK_MONOTONIC with nanosecond deadlines
/// (epoll_wait's own timeout only has millisecond resolution).
#[derive(Debug)]
pub struct Timer {
    fd: OwnedFd,
    /// Deadline currently armed (0: none).
    armed_ns: u64,
}

impl Timer {
    pub fn new() -> io::Result<Timer> {
        // SAFETY: plain syscall; the returned fd is owned below.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Timer { fd, armed_ns: 0 })
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Makes sure the timer fires no later than `at_ns`. Re-arming also
    /// resets the expiry count, so the fd never needs to be read.
    pub fn arm_by(&mut self, at_ns: u64, now_ns: u64) {
        let fired = self.armed_ns != 0 && self.armed_ns <= now_ns;
        if self.armed_ns != 0 && !fired && self.armed_ns <= at_ns {
            return;
        }
        let at = at_ns.max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (at / 1_000_000_000) as libc::time_t,
                tv_nsec: (at % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: timerfd_settime reads the spec we pass; old value unused.
        unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        self.armed_ns = at;
    }
}

/// Pins the calling thread to `cpus`.
pub fn pin_current_thread(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// net.ipv4.ip_local_port_range, as written there (`32768\t60999`).
pub fn local_port_range() -> Option<(u32, u32)> {
    crate::procfs::sysctl::local_port_range()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_moves_forward() {
        let a = now_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = now_ns();
        assert!(b - a >= 2_000_000, "{a} {b}");
    }

    #[test]
    fn timer_fires_at_its_deadline() {
        let mut t = Timer::new().unwrap();
        let start = now_ns();
        t.arm_by(start + 3_000_000, start);
        let mut pfd = libc::pollfd {
            fd: t.raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll on one valid fd.
        let n = unsafe { libc::poll(&mut pfd, 1, 1000) };
        assert_eq!(n, 1);
        assert!(now_ns() - start >= 3_000_000);
    }

    #[test]
    fn connect_from_a_second_loopback_address() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let _stream = connect(addr, Some(Ipv4Addr::new(127, 0, 0, 3)), true).unwrap();
        let (_conn, peer) = listener.accept().unwrap();
        assert_eq!(peer.ip(), Ipv4Addr::new(127, 0, 0, 3));
    }
}
