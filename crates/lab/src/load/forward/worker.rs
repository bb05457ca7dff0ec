//! The socket loops: a paced sender (handing batches to one of the
//! [`super::tx`] methods) and a `recvmmsg(2)` receiver, each on its own
//! thread inside its node's network namespace. Each pre-aggregates what it
//! saw; the trial merges them once at the end.

use super::frame::{self, FrameSize, SeqTracker};
use super::tx::{self, Generator, MsgBatch, Route};
use crate::load::histogram::new_histogram;
use crate::load::http::sys::{now_ns, pin_current_thread};
use crate::procfs::netns;
use crate::shutdown::Shutdown;
use hdrhistogram::Histogram;
use socket2::{Domain, Socket, Type};
use std::net::SocketAddrV4;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use super::tx::BATCH;

/// One direction's sending job.
#[derive(Clone, Debug)]
pub struct SendJob {
    /// The namespace to send from; `None`: the calling thread's own.
    pub netns: Option<String>,
    pub route: Route,
    pub generator: Generator,
    pub frame: FrameSize,
    /// Frames/s; `None` sends as fast as the generator can.
    pub rate: Option<f64>,
    pub duration: Duration,
    pub cpu: Option<usize>,
}

/// What a sender did.
#[derive(Clone, Copy, Debug, Default)]
pub struct SendStats {
    /// Frames the kernel accepted, plus any it dropped at the sending
    /// interface and the method sent again ([`tx::Transmit::resent`]).
    pub sent: u64,
    /// Failed send calls (ENOBUFS and the like); their frames are not sent.
    pub errors: u64,
    pub elapsed: Duration,
}

fn socket_in(job_ns: &str, bind: SocketAddrV4) -> std::io::Result<Socket> {
    netns::join(job_ns).map_err(std::io::Error::other)?;
    let s = Socket::new(Domain::IPV4, Type::DGRAM, None)?;
    s.bind(&bind.into())?;
    Ok(s)
}

/// Sends `job.frame` frames to `job.to` at `job.rate` for `job.duration`,
/// `BATCH` at a time: a batch goes out whenever the schedule says that many
/// frames are due, so the rate holds on average over any ~BATCH frames.
pub fn send(job: &SendJob, stop: &Shutdown) -> std::io::Result<SendStats> {
    if let Some(cpu) = job.cpu {
        let _ = pin_current_thread(&[cpu]);
    }
    // SAFETY: prctl on this thread only; 1ns slack makes short sleeps exact.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64) };
    if let Some(ns) = &job.netns {
        netns::join(ns).map_err(std::io::Error::other)?;
    }
    let mut tx = tx::open(job.generator, &job.route, job.frame)?;
    let mut stats = SendStats::default();
    let start = Instant::now();
    let mut seq = 0u64;
    // A paced sender sends exactly the frames its schedule holds, catching
    // up after a late wakeup, within a grace period past the duration.
    let budget = job
        .rate
        .map(|r| (r * job.duration.as_secs_f64()).round() as u64);
    let deadline = job.duration + job.duration / 4;
    while !stop.is_triggered() {
        let elapsed = start.elapsed();
        let done = stats.sent + stats.errors;
        let finished = match budget {
            Some(n) => done >= n || elapsed >= deadline,
            None => elapsed >= job.duration,
        };
        if finished {
            break;
        }
        let due = match job.rate {
            Some(rate) => {
                let scheduled =
                    ((rate * elapsed.as_secs_f64()) as u64).min(budget.unwrap_or(u64::MAX));
                let behind = scheduled.saturating_sub(done);
                // A batch spans at most ~100µs of the schedule.
                let want = ((rate * 100e-6) as u64).clamp(1, BATCH as u64);
                if behind < want.min(budget.unwrap_or(u64::MAX) - done) {
                    // Spin through short waits, as hardware-less generators
                    // do: a sleeping thread on a busy machine wakes late and
                    // loses its CPU to others, and the schedule slips.
                    let wait = (done + want) as f64 / rate - elapsed.as_secs_f64();
                    if wait > 2e-3 {
                        std::thread::sleep(Duration::from_secs_f64(wait - 1e-3));
                    } else {
                        std::hint::spin_loop();
                    }
                    continue;
                }
                behind.min(BATCH as u64) as usize
            }
            None => BATCH,
        };
        let n = match tx.send(due, seq, now_ns()) {
            Ok(n) => n,
            Err(e) => match e.raw_os_error() {
                Some(libc::ENOBUFS) | Some(libc::EAGAIN) | Some(libc::ECONNREFUSED) => {
                    stats.errors += 1;
                    continue;
                }
                _ => return Err(e),
            },
        };
        stats.sent += n as u64;
        seq += due as u64;
    }
    tx.finish()?;
    stats.sent += tx.resent();
    stats.elapsed = start.elapsed();
    Ok(stats)
}

/// One direction's receiving job.
#[derive(Clone, Debug)]
pub struct RecvJob {
    pub netns: String,
    pub bind: SocketAddrV4,
    pub frame: FrameSize,
    pub cpu: Option<usize>,
}

/// What a receiver saw.
#[derive(Clone, Debug)]
pub struct RecvStats {
    pub seq: SeqTracker,
    /// Datagrams read from the socket, ours or not.
    pub datagrams: u64,
    /// One-way latency of each frame, in microseconds.
    pub latency: Histogram<u64>,
}

/// A bound receiving socket, made ready before any frame is sent.
pub struct Receiver {
    sock: Socket,
    job: RecvJob,
}

impl Receiver {
    pub fn bind(job: RecvJob) -> std::io::Result<Receiver> {
        let sock = std::thread::scope(|s| {
            s.spawn(|| {
                let sock = socket_in(&job.netns, job.bind)?;
                force_rcvbuf(&sock, 64 << 20)?;
                sock.set_read_timeout(Some(Duration::from_millis(10)))?;
                Ok::<_, std::io::Error>(sock)
            })
            .join()
            .map_err(|_| std::io::Error::other("receiver setup panicked"))?
        })?;
        Ok(Receiver { sock, job })
    }

    /// Reads until `stop` is set, counting every frame of ours.
    pub fn run(self, stop: &AtomicBool) -> std::io::Result<RecvStats> {
        if let Some(cpu) = self.job.cpu {
            let _ = pin_current_thread(&[cpu]);
        }
        let fd = self.sock.as_raw_fd();
        let len = self.job.frame.payload().max(frame::HEADER) + 64;
        let mut batch = MsgBatch::new(len);
        let mut stats = RecvStats {
            seq: SeqTracker::default(),
            datagrams: 0,
            latency: new_histogram(),
        };
        loop {
            // SAFETY: msgs point at live buffers of `len` bytes.
            let n = unsafe {
                libc::recvmmsg(
                    fd,
                    batch.msgs.as_mut_ptr(),
                    BATCH as u32,
                    0,
                    std::ptr::null_mut(),
                )
            };
            if n <= 0 {
                let e = std::io::Error::last_os_error();
                let idle = matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR));
                if n < 0 && !idle {
                    return Err(e);
                }
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                continue;
            }
            let now = now_ns();
            for (m, b) in batch.msgs.iter().zip(&batch.bufs).take(n as usize) {
                stats.datagrams += 1;
                if let Some((seq, ts)) = frame::decode(&b[..m.msg_len as usize]) {
                    stats.seq.observe(seq);
                    let _ = stats.latency.record((now.saturating_sub(ts) / 1000).max(1));
                }
            }
        }
        Ok(stats)
    }
}

/// SO_RCVBUFFORCE (root may exceed rmem_max), falling back to SO_RCVBUF.
fn force_rcvbuf(sock: &Socket, bytes: usize) -> std::io::Result<()> {
    let v = bytes as libc::c_int;
    // SAFETY: setsockopt with an int option on our socket.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        sock.set_recv_buffer_size(bytes)?;
    }
    Ok(())
}

/// The MTU of interface `ifname` inside namespace `ns` (SIOCGIFMTU).
pub fn link_mtu(ns: &str, ifname: &str) -> Result<u32, netns::NetnsError> {
    let owned = ns.to_string();
    netns::in_netns(ns, move || {
        own_link_mtu(ifname).map_err(|source| netns::NetnsError::Read {
            name: owned.clone(),
            what: "the link MTU",
            source,
        })
    })
}

/// The MTU of interface `ifname` in the calling thread's namespace
/// (SIOCGIFMTU).
pub fn own_link_mtu(ifname: &str) -> std::io::Result<u32> {
    let sock = Socket::new(Domain::IPV4, Type::DGRAM, None)?;
    // SAFETY: ifreq zeroed, name copied with a terminating NUL; the
    // ioctl writes only into the struct.
    unsafe {
        let mut req: libc::ifreq = std::mem::zeroed();
        for (d, s) in req.ifr_name.iter_mut().zip(ifname.bytes().take(15)) {
            *d = s as libc::c_char;
        }
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFMTU, &mut req) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(req.ifr_ifru.ifru_mtu as u32)
    }
}
