//! One AF_XDP socket in copy mode with its own UMEM: half the frames
//! stock the fill ring for answers, half carry what we transmit.

use super::ring::Ring;
use super::{sys_error, XdpError};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Bytes per UMEM frame (a chunk; the kernel's smallest is 2048).
pub(crate) const FRAME: usize = 2048;
/// Frames in each ring, and in each half of the UMEM.
const RING: u32 = 2048;
/// `sendto` kicks per [`Xsk::kick`] before the rest is left for the next
/// one.
const KICKS: usize = 64;
/// `XDP_MAX_TX_SKB_BUDGET` (Linux 6.17+): frames one copy-mode `sendto`
/// may move (32 before it, and where it is refused).
const XDP_MAX_TX_SKB_BUDGET: libc::c_int = 9;

/// An XDP socket bound to one interface queue.
pub(crate) struct Xsk {
    fd: OwnedFd,
    umem: *mut u8,
    umem_len: usize,
    fill: Ring<u64>,
    comp: Ring<u64>,
    rx: Ring<libc::xdp_desc>,
    tx: Ring<libc::xdp_desc>,
    /// TX frames (UMEM offsets) free to fill.
    free_tx: Vec<u64>,
}

fn setopt<T>(fd: RawFd, opt: libc::c_int, value: &T, what: &'static str) -> Result<(), XdpError> {
    // SAFETY: `value` is a live T of the size passed.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_XDP,
            opt,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(sys_error(what));
    }
    Ok(())
}

/// The send buffer asked for (bytes; root may exceed `wmem_max`).
const SEND_BUFFER: libc::c_int = 16 << 20;

fn sock_setopt(fd: RawFd, opt: libc::c_int, value: libc::c_int) -> std::io::Result<()> {
    // SAFETY: an int option, passed by pointer with its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn getopt<T: Default>(fd: RawFd, opt: libc::c_int, what: &'static str) -> Result<T, XdpError> {
    let mut value = T::default();
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` is writable for `len` bytes, which the kernel may shorten.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_XDP,
            opt,
            (&mut value as *mut T).cast(),
            &mut len,
        )
    };
    if r < 0 {
        return Err(sys_error(what));
    }
    Ok(value)
}

fn map_ring<T: Copy>(
    fd: RawFd,
    pgoff: u64,
    o: &libc::xdp_ring_offset,
) -> Result<Ring<T>, XdpError> {
    Ring::map(fd, pgoff, o, RING).map_err(|source| XdpError::Sys {
        what: "mapping a ring",
        source,
    })
}

impl Xsk {
    /// An XDP socket on queue `queue` of interface `ifindex`, its fill
    /// ring stocked.
    pub(crate) fn open(ifindex: u32, queue: u32) -> Result<Xsk, XdpError> {
        // SAFETY: plain socket(2).
        let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(sys_error("opening an AF_XDP socket"));
        }
        // SAFETY: a new descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let umem_len = 2 * RING as usize * FRAME;
        // SAFETY: a fresh anonymous private mapping.
        let umem = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                umem_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if umem == libc::MAP_FAILED {
            return Err(sys_error("mapping the UMEM"));
        }
        let umem = umem.cast::<u8>();
        let xsk = Self::rings(fd, umem, umem_len, ifindex, queue);
        if xsk.is_err() {
            // SAFETY: the mapping above, referenced by nothing else now.
            unsafe { libc::munmap(umem.cast(), umem_len) };
        }
        xsk
    }

    fn rings(
        fd: OwnedFd,
        umem: *mut u8,
        umem_len: usize,
        ifindex: u32,
        queue: u32,
    ) -> Result<Xsk, XdpError> {
        let raw = fd.as_raw_fd();
        let reg = libc::xdp_umem_reg {
            addr: umem as u64,
            len: umem_len as u64,
            chunk_size: FRAME as u32,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        setopt(raw, libc::XDP_UMEM_REG, &reg, "registering the UMEM")?;
        for opt in [
            libc::XDP_UMEM_FILL_RING,
            libc::XDP_UMEM_COMPLETION_RING,
            libc::XDP_RX_RING,
            libc::XDP_TX_RING,
        ] {
            setopt(raw, opt, &RING, "sizing the rings")?;
        }
        let off: OffsetsHolder = getopt(raw, libc::XDP_MMAP_OFFSETS, "reading ring offsets")?;
        let off = off.0;
        let mut xsk = Xsk {
            fill: map_ring(raw, libc::XDP_UMEM_PGOFF_FILL_RING, &off.fr)?,
            comp: map_ring(raw, libc::XDP_UMEM_PGOFF_COMPLETION_RING, &off.cr)?,
            rx: map_ring(raw, libc::XDP_PGOFF_RX_RING as u64, &off.rx)?,
            tx: map_ring(raw, libc::XDP_PGOFF_TX_RING as u64, &off.tx)?,
            free_tx: (RING as u64..2 * RING as u64)
                .map(|i| i * FRAME as u64)
                .collect(),
            fd,
            umem,
            umem_len,
        };
        xsk.fill.produce((0..RING as u64).map(|i| i * FRAME as u64));
        // One kick may move the whole ring; older kernels keep 32.
        let _ = setopt(raw, XDP_MAX_TX_SKB_BUDGET, &RING, "raising the TX budget");
        // Copy mode charges every frame in flight (an skb until the
        // receiver frees it) to the socket: with the default send buffer
        // (~270 frames) a kick stops short with EAGAIN whenever the far
        // end's backlog is a few hundred frames deep.
        let _ = sock_setopt(raw, libc::SO_SNDBUFFORCE, SEND_BUFFER);
        let sa = libc::sockaddr_xdp {
            sxdp_family: libc::AF_XDP as u16,
            sxdp_flags: libc::XDP_COPY,
            sxdp_ifindex: ifindex,
            sxdp_queue_id: queue,
            sxdp_shared_umem_fd: 0,
        };
        bind_queue(raw, &sa)?;
        Ok(xsk)
    }

    /// The socket's descriptor (for the XSKMAP and `poll`).
    pub(crate) fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Takes back the frames the kernel has sent.
    fn reclaim(&mut self) {
        let n = self.comp.ready();
        for i in 0..n {
            self.free_tx.push(self.comp.peek(i));
        }
        self.comp.release(n);
    }

    /// Fills up to `n` frames with `fill(i, frame) -> length` and queues
    /// them on the TX ring; returns how many were queued. They leave at
    /// the next [`Xsk::kick`].
    pub(crate) fn transmit(
        &mut self,
        n: usize,
        mut fill: impl FnMut(usize, &mut [u8]) -> usize,
    ) -> usize {
        self.reclaim();
        let k = n.min(self.free_tx.len()).min(self.tx.free() as usize);
        let mut descs = [libc::xdp_desc {
            addr: 0,
            len: 0,
            options: 0,
        }; 64];
        let mut done = 0;
        while done < k {
            let chunk = (k - done).min(descs.len());
            for (j, d) in descs.iter_mut().enumerate().take(chunk) {
                let addr = self.free_tx.pop().expect("k <= free frames");
                let frame = self.frame_mut(addr);
                let len = fill(done + j, frame);
                *d = libc::xdp_desc {
                    addr,
                    len: len as u32,
                    options: 0,
                };
            }
            self.tx.produce(descs[..chunk].iter().copied());
            done += chunk;
        }
        done
    }

    /// Makes the kernel transmit what waits on the TX ring (copy mode
    /// needs a `sendto` for it), a bounded number of times.
    pub(crate) fn kick(&mut self) {
        for _ in 0..KICKS {
            if self.tx.unconsumed() == 0 {
                return;
            }
            // SAFETY: sendto with no buffer is the AF_XDP TX wake-up.
            let r = unsafe {
                libc::sendto(
                    self.fd(),
                    std::ptr::null(),
                    0,
                    libc::MSG_DONTWAIT,
                    std::ptr::null(),
                    0,
                )
            };
            if r < 0 {
                let e = std::io::Error::last_os_error().raw_os_error();
                if !matches!(e, Some(libc::EAGAIN | libc::EBUSY | libc::ENOBUFS)) {
                    return;
                }
            }
            self.reclaim();
        }
    }

    /// Kicks until the kernel has taken every queued frame, for at most
    /// `limit`; says whether it did.
    pub(crate) fn drain(&mut self, limit: std::time::Duration) -> bool {
        let started = std::time::Instant::now();
        while self.tx.unconsumed() > 0 {
            if started.elapsed() > limit {
                return false;
            }
            self.kick();
        }
        true
    }

    fn frame_mut(&mut self, addr: u64) -> &mut [u8] {
        let at = addr as usize;
        assert!(at + FRAME <= self.umem_len, "a UMEM offset out of range");
        // SAFETY: the frame lies in the UMEM (checked), and is ours: it
        // was free, so neither the kernel nor another slice holds it.
        unsafe { std::slice::from_raw_parts_mut(self.umem.add(at), FRAME) }
    }

    /// Hands up to `max` received frames to `each`, then returns them to
    /// the fill ring; returns how many came.
    pub(crate) fn receive(&mut self, max: usize, mut each: impl FnMut(&[u8])) -> usize {
        let n = self.rx.ready().min(max as u32);
        let mut addrs = [0u64; 64];
        let mut done = 0;
        while done < n {
            let chunk = (n - done).min(addrs.len() as u32);
            for j in 0..chunk {
                let d = self.rx.peek(done + j);
                let at = d.addr as usize;
                let len = (d.len as usize).min(FRAME - at % FRAME);
                assert!(at + len <= self.umem_len, "a UMEM offset out of range");
                // SAFETY: the kernel handed us this frame on the RX ring and
                // does not touch it until it is back on the fill ring.
                let frame = unsafe { std::slice::from_raw_parts(self.umem.add(at), len) };
                each(frame);
                addrs[j as usize] = d.addr - d.addr % FRAME as u64;
            }
            self.fill.produce(addrs[..chunk as usize].iter().copied());
            done += chunk;
        }
        self.rx.release(n);
        n as usize
    }

    /// Frames the kernel dropped for this socket since it opened (its RX
    /// ring full, or no fill frame free), from `XDP_STATISTICS`.
    pub(crate) fn drops(&self) -> u64 {
        getopt::<StatsHolder>(self.fd(), libc::XDP_STATISTICS, "reading XDP statistics")
            .map_or(0, |s| s.0.rx_dropped + s.0.rx_ring_full)
    }
}

impl Drop for Xsk {
    fn drop(&mut self) {
        // SAFETY: the UMEM mapping made in `open`; the rings (dropped after
        // this) and the socket no longer use it once we return, and the
        // kernel keeps its own reference while the socket lives.
        unsafe { libc::munmap(self.umem.cast(), self.umem_len) };
    }
}

/// `xdp_mmap_offsets`, defaulted to zero for `getopt`.
#[repr(transparent)]
struct OffsetsHolder(libc::xdp_mmap_offsets);
impl Default for OffsetsHolder {
    fn default() -> Self {
        // SAFETY: plain integers; zero is valid.
        OffsetsHolder(unsafe { std::mem::zeroed() })
    }
}

/// `xdp_statistics`, defaulted to zero for `getopt`.
#[repr(transparent)]
struct StatsHolder(libc::xdp_statistics);
impl Default for StatsHolder {
    fn default() -> Self {
        // SAFETY: plain integers; zero is valid.
        StatsHolder(unsafe { std::mem::zeroed() })
    }
}

/// How long a bind waits for a queue that another socket still holds: the
/// kernel releases a closed AF_XDP socket's queue in deferred work, so
/// right after another generator exits (kxdpgun, an earlier run) the bind
/// may see EBUSY for a moment on a loaded machine.
const QUEUE_RELEASE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Binds `raw` to the queue of `sa`, retrying an EBUSY every 20 ms for up
/// to [`QUEUE_RELEASE_WAIT`].
fn bind_queue(raw: RawFd, sa: &libc::sockaddr_xdp) -> Result<(), XdpError> {
    let deadline = std::time::Instant::now() + QUEUE_RELEASE_WAIT;
    loop {
        // SAFETY: `sa` is a valid sockaddr_xdp of the size passed.
        let r = unsafe {
            libc::bind(
                raw,
                (sa as *const libc::sockaddr_xdp).cast(),
                std::mem::size_of_val(sa) as libc::socklen_t,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let source = std::io::Error::last_os_error();
        if source.raw_os_error() != Some(libc::EBUSY) || std::time::Instant::now() >= deadline {
            return Err(XdpError::Sys {
                what: "binding the AF_XDP socket to the interface queue",
                source,
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
