//! The UDP syscalls the DNS generator batches: `sendmmsg`/`recvmmsg` on
//! connected, non-blocking sockets, and `poll` to sleep until one is readable.

use std::net::SocketAddr;
use std::os::fd::RawFd;

/// Datagrams moved per syscall.
pub const BATCH: usize = 64;
/// Largest response read (EDNS-less UDP answers fit in 512; leave room).
pub const BUF_LEN: usize = 1232;

/// A connected, non-blocking UDP socket in the calling thread's namespace.
pub fn connected_socket(server: SocketAddr) -> std::io::Result<socket2::Socket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(
        Domain::for_address(server),
        Type::DGRAM,
        Some(Protocol::UDP),
    )?;
    let _ = s.set_recv_buffer_size(4 << 20);
    let _ = s.set_send_buffer_size(4 << 20);
    s.set_nonblocking(true)?;
    s.connect(&server.into())?;
    Ok(s)
}

/// Reusable buffers and headers for one batch of datagrams.
pub struct Batch {
    pub bufs: Vec<[u8; BUF_LEN]>,
    pub lens: [usize; BATCH],
    /// The flight each received datagram came on.
    pub from: [u16; BATCH],
    iov: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

// SAFETY: the raw pointers in `iov`/`hdrs` point into `bufs`, which the
// Batch owns; it moves to its worker thread once and is used only there.
unsafe impl Send for Batch {}

impl Batch {
    pub fn new() -> Box<Batch> {
        let mut b = Box::new(Batch {
            bufs: vec![[0u8; BUF_LEN]; BATCH],
            lens: [0; BATCH],
            from: [0; BATCH],
            iov: Vec::with_capacity(BATCH),
            hdrs: Vec::with_capacity(BATCH),
        });
        for i in 0..BATCH {
            let base = b.bufs[i].as_mut_ptr().cast();
            b.iov.push(libc::iovec {
                iov_base: base,
                iov_len: BUF_LEN,
            });
        }
        for i in 0..BATCH {
            // SAFETY: mmsghdr is plain data; zero is a valid empty header.
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_iov = &mut b.iov[i];
            h.msg_hdr.msg_iovlen = 1;
            b.hdrs.push(h);
        }
        b
    }

    /// Sends the first `n` buffers (lengths in `lens`) on `fd`; returns how
    /// many datagrams the kernel took.
    pub fn send(&mut self, fd: RawFd, n: usize) -> std::io::Result<usize> {
        for i in 0..n {
            self.iov[i].iov_len = self.lens[i];
        }
        // SAFETY: the first n headers point at valid iovecs and buffers.
        let r = unsafe { libc::sendmmsg(fd, self.hdrs.as_mut_ptr(), n as u32, 0) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(r as usize)
    }

    /// Receives up to BATCH datagrams without blocking; lengths land in
    /// `lens`. `Ok(0)` when nothing is waiting.
    pub fn recv(&mut self, fd: RawFd) -> std::io::Result<usize> {
        for i in 0..BATCH {
            self.iov[i].iov_len = BUF_LEN;
        }
        // SAFETY: every header points at a BUF_LEN buffer we own.
        let r = unsafe {
            libc::recvmmsg(
                fd,
                self.hdrs.as_mut_ptr(),
                BATCH as u32,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::WouldBlock {
                return Ok(0);
            }
            return Err(e);
        }
        for i in 0..r as usize {
            self.lens[i] = self.hdrs[i].msg_len as usize;
        }
        Ok(r as usize)
    }
}

/// `SO_MEMINFO` from asm-generic/socket.h (the libc crate names only its
/// offsets, such as `SK_MEMINFO_DROPS`).
const SO_MEMINFO: libc::c_int = 55;

/// Datagrams the kernel dropped on `fd` since it opened, because its
/// receive buffer was full (`SO_MEMINFO`'s `SK_MEMINFO_DROPS`, the count
/// `ss -m` prints as `d`). `None` where the kernel does not say.
pub fn receive_drops(fd: RawFd) -> Option<u64> {
    let mut info = [0u32; libc::SK_MEMINFO_DROPS as usize + 1];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: `info` is writable for `len` bytes, which the kernel may shorten.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_MEMINFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    let drops = libc::SK_MEMINFO_DROPS as usize;
    let filled = len as usize / std::mem::size_of::<u32>();
    (r == 0 && filled > drops).then(|| u64::from(info[drops]))
}

/// Sleeps until one of `socks` is readable or `timeout` passes
/// (nanosecond precision, so fixed-rate schedules need not spin).
pub fn wait_readable(socks: &[RawFd], timeout: std::time::Duration) {
    let mut fds: Vec<libc::pollfd> = socks
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: fds and ts are valid for the call's duration.
    unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        );
    }
}
