//! From the address load goes to, the path its frames take: the
//! interface (by the routing table), our address on it, and both MACs
//! (ours by `SIOCGIFHWADDR`, the next hop's from the neighbour table).
//! Everything is read in the calling thread's network namespace
//! (`/proc/thread-self/net`), so a thread that joined a lab sees the lab's.

use super::XdpError;
pub(crate) use crate::procfs::net::{neighbour, route};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::time::{Duration, Instant};

/// How long the next hop's MAC may take to resolve.
const NEIGHBOUR_WAIT: Duration = Duration::from_secs(2);

/// The way out to one destination.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Path {
    /// The interface's name.
    pub ifname: String,
    /// Its index.
    pub ifindex: u32,
    /// Our address on it (the kernel's source address for `dest`).
    pub src: Ipv4Addr,
    /// Its MAC.
    pub src_mac: [u8; 6],
    /// The next hop: the route's gateway, or `dest` itself when on-link.
    pub next_hop: Ipv4Addr,
    /// The next hop's MAC.
    pub next_hop_mac: [u8; 6],
}

fn read(file: &str) -> String {
    crate::procfs::me::thread_net(file).unwrap_or_default()
}

/// The path to `dest` from this thread's namespace. When the next hop's
/// MAC is not in the neighbour table yet, an empty datagram to `dest`'s
/// discard port (9) through the kernel's own stack makes it resolve.
pub(crate) fn resolve(dest: SocketAddrV4) -> Result<Path, XdpError> {
    let no = |reason: &str| XdpError::NoPath {
        dest: *dest.ip(),
        reason: reason.to_string(),
    };
    if dest.ip().is_loopback() {
        return Err(no("it is a loopback address"));
    }
    let sock = UdpSocket::bind("0.0.0.0:0").map_err(|e| no(&e.to_string()))?;
    sock.connect(dest)
        .map_err(|e| no(&format!("no route ({e})")))?;
    let src = match sock.local_addr() {
        Ok(SocketAddr::V4(a)) => *a.ip(),
        _ => return Err(no("no IPv4 source address")),
    };
    if src == *dest.ip() {
        return Err(no(
            "it is this namespace's own address (the kernel loops it back)",
        ));
    }
    let (ifname, gateway) = route(&read("route"), *dest.ip())
        .ok_or_else(|| no("it is local or has no route in the main table"))?;
    let ifindex = ifindex(&ifname).ok_or_else(|| no(&format!("no interface {ifname}")))?;
    let src_mac =
        hw_addr(&ifname).ok_or_else(|| no(&format!("{ifname} has no MAC (not Ethernet)")))?;
    let hop = gateway.unwrap_or(*dest.ip());
    if neighbour(&read("arp"), hop, &ifname).is_none() {
        let _ = sock.send_to(&[], SocketAddrV4::new(*dest.ip(), 9));
    }
    let started = Instant::now();
    let next_hop_mac = loop {
        if let Some(mac) = neighbour(&read("arp"), hop, &ifname) {
            break mac;
        }
        if started.elapsed() > NEIGHBOUR_WAIT {
            return Err(no(&format!(
                "{hop}'s MAC on {ifname} did not resolve in {NEIGHBOUR_WAIT:?}"
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ok(Path {
        ifname,
        ifindex,
        src,
        src_mac,
        next_hop: hop,
        next_hop_mac,
    })
}

fn ifindex(name: &str) -> Option<u32> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: a NUL-terminated name; the call reads only it.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    (i != 0).then_some(i)
}

/// The interface's Ethernet address, asked on a socket of this thread's
/// namespace.
pub(crate) fn hw_addr(name: &str) -> Option<[u8; 6]> {
    let sock = UdpSocket::bind("0.0.0.0:0").ok()?;
    // SAFETY: ifreq is plain data; zero is a valid empty request.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    let bytes = name.as_bytes();
    if bytes.len() >= req.ifr_name.len() {
        return None;
    }
    for (d, s) in req.ifr_name.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    use std::os::fd::AsRawFd;
    // SAFETY: `req` is a valid ifreq the kernel fills.
    let r = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFHWADDR, &mut req) };
    // SAFETY: after SIOCGIFHWADDR the union holds `ifru_hwaddr`.
    let hw = unsafe { req.ifr_ifru.ifru_hwaddr };
    if r < 0 || hw.sa_family != libc::ARPHRD_ETHER {
        return None;
    }
    let mut mac = [0u8; 6];
    for (m, b) in mac.iter_mut().zip(hw.sa_data) {
        *m = b as u8;
    }
    Some(mac)
}
