//! `AF_PACKET` with `PACKET_TX_RING` (PACKET_MMAP, TPACKET_V2) and
//! `PACKET_QDISC_BYPASS`: whole Ethernet/IPv4/UDP frames are written into a
//! ring shared with the kernel, and one non-blocking `send(2)` per batch
//! hands every queued slot to the interface's driver.
//!
//! Each slot starts with a `virtio_net_hdr` (`PACKET_VNET_HDR`) whose
//! `hdr_len` is the whole frame, so the kernel copies the frame into the
//! skb instead of pointing the skb's pages at the ring: a forwarded skb
//! is orphaned (its ring slot released) long before it is read, and a
//! slot written again would change a frame still in flight.

use super::{Route, Transmit};
use crate::load::forward::frame::{self, FrameSize};
use crate::load::xdp;
use std::io::{Error, Result};
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// Slots in the ring: far more than a batch, so slots the kernel has not
/// released yet are rarely in the way.
const RING_FRAMES: usize = 1024;
/// `struct virtio_net_hdr` (flags, gso_type, hdr_len, gso_size, csum_start,
/// csum_offset): no offload, the whole frame copied.
const VNET_HDR: usize = 10;
/// Where a slot's data starts: TPACKET2_HDRLEN less the sockaddr_ll.
const DATA_OFFSET: usize = libc::TPACKET2_HDRLEN - std::mem::size_of::<libc::sockaddr_ll>();
const ETH_HDR: usize = 14;
const IP_HDR: usize = 20;
const UDP_HDR: usize = 8;
/// Where a frame's payload starts.
pub(super) const PAYLOAD_AT: usize = ETH_HDR + IP_HDR + UDP_HDR;

/// The ring transmitter.
pub struct PacketRing {
    fd: OwnedFd,
    map: *mut u8,
    map_len: usize,
    slot: usize,
    next: usize,
    /// The frame as sent (FCS excluded), payload header left blank.
    template: Vec<u8>,
    /// Transmissions the interface dropped, whose slot the kernel queued
    /// again (see [`PacketRing::kick`]).
    resent: u64,
}

// SAFETY: the mapping is owned by this value alone.
unsafe impl Send for PacketRing {}

fn check(rc: libc::c_int) -> Result<()> {
    if rc < 0 {
        return Err(Error::last_os_error());
    }
    Ok(())
}

fn set_int(fd: libc::c_int, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> Result<()> {
    // SAFETY: setsockopt with an int option on our socket.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
}

impl PacketRing {
    pub fn open(route: &Route, frame: FrameSize) -> Result<PacketRing> {
        let template = template(route, frame)?;
        // SAFETY: a plain socket(2); protocol 0 receives nothing.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) };
        check(raw)?;
        // SAFETY: raw is a socket we just opened and own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let version = libc::tpacket_versions::TPACKET_V2 as libc::c_int;
        set_int(raw, libc::SOL_PACKET, libc::PACKET_VERSION, version)?;
        set_int(raw, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, 1)?;
        set_int(raw, libc::SOL_PACKET, libc::PACKET_VNET_HDR, 1)?;
        let _ = set_int(raw, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, 16 << 20);
        let slot = (DATA_OFFSET + VNET_HDR + template.len()).next_power_of_two();
        let block = slot.max(4096);
        let req = libc::tpacket_req {
            tp_block_size: block as u32,
            tp_block_nr: (RING_FRAMES * slot / block) as u32,
            tp_frame_size: slot as u32,
            tp_frame_nr: (RING_FRAMES * slot / block * (block / slot)) as u32,
        };
        // SAFETY: setsockopt with a tpacket_req on our socket.
        check(unsafe {
            libc::setsockopt(
                raw,
                libc::SOL_PACKET,
                libc::PACKET_TX_RING,
                (&req as *const libc::tpacket_req).cast(),
                std::mem::size_of::<libc::tpacket_req>() as libc::socklen_t,
            )
        })?;
        let map_len = (req.tp_block_size * req.tp_block_nr) as usize;
        // SAFETY: maps the ring the kernel just allocated for this socket.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                raw,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(Error::last_os_error());
        }
        let ring = PacketRing {
            fd,
            map: map.cast(),
            map_len,
            slot,
            next: 0,
            template,
            resent: 0,
        };
        ring.bind(&route.ifname)?;
        Ok(ring)
    }

    fn bind(&self, ifname: &str) -> Result<()> {
        let name = std::ffi::CString::new(ifname).map_err(Error::other)?;
        // SAFETY: a NUL-terminated name.
        let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if index == 0 {
            return Err(Error::last_os_error());
        }
        // SAFETY: a zeroed sockaddr_ll is valid; the fields set make it ours.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = (libc::ETH_P_IP as u16).to_be();
        addr.sll_ifindex = index as i32;
        // SAFETY: bind(2) with a sockaddr_ll of the right length.
        check(unsafe {
            libc::bind(
                self.fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })
    }

    fn slots(&self) -> usize {
        self.map_len / self.slot
    }

    /// The status word of slot `i`, which the kernel writes too.
    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: slot i lies inside the mapping; tp_status is its first,
        // 4-byte aligned field.
        unsafe { &*(self.map.add(i * self.slot) as *const AtomicU32) }
    }

    /// Writes frame `seq` into slot `i` and marks it for sending.
    fn fill(&mut self, i: usize, seq: u64, ts_ns: u64) {
        let len = self.template.len();
        // SAFETY: slot i is ours (status AVAILABLE) and holds DATA_OFFSET +
        // VNET_HDR + len bytes (slot size was chosen so).
        unsafe {
            let base = self.map.add(i * self.slot);
            let hdr = &mut *(base as *mut libc::tpacket2_hdr);
            hdr.tp_len = (VNET_HDR + len) as u32;
            let data = std::slice::from_raw_parts_mut(base.add(DATA_OFFSET), VNET_HDR + len);
            data[..VNET_HDR].fill(0);
            // hdr_len (bytes 2..4, little-endian virtio16): copy it all.
            data[2..4].copy_from_slice(&(len as u16).to_le_bytes());
            data[VNET_HDR..].copy_from_slice(&self.template);
            let payload = VNET_HDR + ETH_HDR + IP_HDR + UDP_HDR;
            frame::encode(&mut data[payload..], seq, ts_ns);
        }
        self.status(i)
            .store(libc::TP_STATUS_SEND_REQUEST, Ordering::Release);
    }

    /// Hands queued slots to the kernel (`flags` 0: all of them, waiting
    /// until they are sent). When the interface drops a frame (veth: R's
    /// input queue is full) the kernel stops there with ENOBUFS and marks
    /// that slot queued again, so the frame goes out once more on the next
    /// call: the drop is counted as a frame sent and lost (`resent`). On
    /// EAGAIN (send buffer full) the slots simply stay queued.
    fn kick(&mut self, flags: libc::c_int) -> Result<()> {
        loop {
            // SAFETY: send(2) with no buffer: the ring's queued slots are sent.
            let rc = unsafe { libc::send(self.fd.as_raw_fd(), std::ptr::null(), 0, flags) };
            if rc >= 0 {
                break;
            }
            let e = Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::ENOBUFS) => self.resent += 1,
                Some(libc::EAGAIN) => {}
                _ => return Err(e),
            }
            if flags & libc::MSG_DONTWAIT != 0 {
                break;
            }
        }
        Ok(())
    }
}

impl Transmit for PacketRing {
    fn send(&mut self, n: usize, seq: u64, ts_ns: u64) -> Result<usize> {
        let mut taken = 0;
        while taken < n {
            let i = self.next;
            let status = self.status(i).load(Ordering::Acquire);
            if status & libc::TP_STATUS_WRONG_FORMAT != 0 {
                return Err(Error::other(
                    "the kernel refused a frame in the TX ring (wrong format)",
                ));
            }
            // Queued or in flight, not yet released: the ring is full.
            if status & (libc::TP_STATUS_SEND_REQUEST | libc::TP_STATUS_SENDING) != 0 {
                break;
            }
            self.fill(i, seq + taken as u64, ts_ns);
            self.next = (i + 1) % self.slots();
            taken += 1;
        }
        // Even with nothing new: slots an earlier call left queued go now.
        self.kick(libc::MSG_DONTWAIT)?;
        Ok(taken)
    }

    fn finish(&mut self) -> Result<()> {
        self.kick(0)
    }

    fn resent(&self) -> u64 {
        self.resent
    }
}

impl Drop for PacketRing {
    fn drop(&mut self) {
        // SAFETY: unmaps the mapping made in open, used by nobody after.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

/// The frame `route` sends, FCS excluded: Ethernet to the next hop, IPv4
/// (DF, TTL 64), UDP without checksum (allowed over IPv4), blank payload.
pub(super) fn template(route: &Route, frame: FrameSize) -> Result<Vec<u8>> {
    let own = own_mac(&route.ifname)?;
    let next_hop = neighbour_mac(route.gateway, &route.ifname)?;
    let payload = frame.payload();
    let mut f = Vec::with_capacity(ETH_HDR + IP_HDR + UDP_HDR + payload);
    f.extend_from_slice(&next_hop);
    f.extend_from_slice(&own);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let mut ip = [0u8; IP_HDR];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&((IP_HDR + UDP_HDR + payload) as u16).to_be_bytes());
    ip[6] = 0x40;
    ip[8] = 64;
    ip[9] = libc::IPPROTO_UDP as u8;
    ip[12..16].copy_from_slice(&route.from.ip().octets());
    ip[16..20].copy_from_slice(&route.to.ip().octets());
    let sum = xdp::frame::ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&route.from.port().to_be_bytes());
    f.extend_from_slice(&route.to.port().to_be_bytes());
    f.extend_from_slice(&((UDP_HDR + payload) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.resize(f.len() + payload, 0);
    Ok(f)
}

/// The interface's own link-layer address (SIOCGIFHWADDR).
fn own_mac(ifname: &str) -> Result<[u8; 6]> {
    xdp::path::hw_addr(ifname)
        .ok_or_else(|| Error::other(format!("{ifname} has no Ethernet address")))
}

/// The next hop's link-layer address from this thread's namespace's
/// neighbour table (`/proc/thread-self/net/arp`).
fn neighbour_mac(gateway: Ipv4Addr, ifname: &str) -> Result<[u8; 6]> {
    let table = crate::procfs::me::thread_net("arp")?;
    xdp::path::neighbour(&table, gateway, ifname).ok_or_else(|| {
        Error::other(format!(
            "no resolved neighbour entry for {gateway} on {ifname}; the packet_ring \
             and xdp generators send to the next hop's link-layer address, so the lab needs a \
             static neighbour (`ip neigh replace {gateway} lladdr .. dev {ifname} nud permanent`)"
        ))
    })
}
