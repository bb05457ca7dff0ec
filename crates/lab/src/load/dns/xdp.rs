//! The DNS generator over AF_XDP: each flight is a UDP source port (a
//! consecutive range, reserved by binding ordinary UDP sockets to it, so
//! nothing else on the host takes it); queries are framed into the UMEM
//! and sent in batches on the TX ring; the redirect program hands the
//! answers to those ports back on the RX ring. The matching by ID and
//! question, the latency, RCODE and loss accounting are the worker's, as
//! over sockets.

use super::sys::{self, Batch, BATCH, BUF_LEN};
use super::transport::Transport;
use crate::load::xdp::attach::Attached;
use crate::load::xdp::frame::{self, Flow, HEADERS};
use crate::load::xdp::path::{self, Path};
use crate::load::xdp::XdpError;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::time::Duration;

/// Where source port ranges are drawn from (below Linux's default
/// ephemeral range, 32768-60999, so connect()ed sockets rarely collide).
const PORTS_FROM: u16 = 20_000;
const PORTS_SPAN: u16 = 12_000;

/// One thread's AF_XDP end.
pub(super) struct XdpTransport {
    xdp: Attached,
    path: Path,
    server: SocketAddrV4,
    first_port: u16,
    /// The sockets that hold the source ports for the run.
    reserved: Vec<UdpSocket>,
    ip_id: u16,
}

/// Binds `n` consecutive UDP ports on `ip`, trying a few ranges.
fn reserve_ports(ip: Ipv4Addr, n: usize) -> Result<(u16, Vec<UdpSocket>), XdpError> {
    let span = usize::from(PORTS_SPAN).saturating_sub(n).max(1);
    let seed = std::process::id() as usize
        ^ (std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos() as usize));
    for attempt in 0..32 {
        let first = PORTS_FROM + ((seed.wrapping_mul(2654435761) + attempt * 7919) % span) as u16;
        let socks: Result<Vec<_>, _> = (0..n)
            .map(|i| UdpSocket::bind(SocketAddrV4::new(ip, first + i as u16)))
            .collect();
        if let Ok(socks) = socks {
            return Ok((first, socks));
        }
    }
    Err(XdpError::Sys {
        what: "reserving consecutive UDP source ports",
        source: std::io::Error::from(std::io::ErrorKind::AddrInUse),
    })
}

impl XdpTransport {
    /// The XDP end for queries to `server` on `flights` source ports, in
    /// this thread's namespace (`netns`, when it joined one: the fix an
    /// error gives names it).
    pub(super) fn open(
        server: SocketAddrV4,
        flights: usize,
        netns: Option<&str>,
    ) -> Result<XdpTransport, XdpError> {
        let path = path::resolve(server)?;
        let (first_port, reserved) = reserve_ports(path.src, flights)?;
        let last = first_port + flights as u16 - 1;
        let xdp = Attached::new(&path, first_port..=last, netns)?;
        Ok(XdpTransport {
            xdp,
            path,
            server,
            first_port,
            reserved,
            ip_id: 0,
        })
    }

    /// Says which path the load took.
    pub(super) fn describe(&self) -> String {
        format!(
            "generator xdp: AF_XDP (copy mode) on {} queue 0, from {} ports {}-{}",
            self.path.ifname,
            self.path.src,
            self.first_port,
            self.first_port as usize + self.reserved.len() - 1
        )
    }
}

impl Transport for XdpTransport {
    fn send(&mut self, flight: usize, batch: &mut Batch, n: usize) -> std::io::Result<usize> {
        let flow = Flow {
            src_mac: self.path.src_mac,
            dst_mac: self.path.next_hop_mac,
            src: SocketAddrV4::new(self.path.src, self.first_port + flight as u16),
            dst: self.server,
        };
        let mut id = self.ip_id;
        let sent = self.xdp.xsk.transmit(n, |i, frame| {
            let len = batch.lens[i];
            frame[HEADERS..HEADERS + len].copy_from_slice(&batch.bufs[i][..len]);
            id = id.wrapping_add(1);
            frame::write_headers(frame, &flow, len, id)
        });
        self.ip_id = id;
        Ok(sent)
    }

    fn flush(&mut self) {
        self.xdp.xsk.kick();
    }

    fn recv(&mut self, batch: &mut Batch) -> std::io::Result<usize> {
        let mut k = 0;
        let (server, first) = (self.server, self.first_port);
        let flights = self.reserved.len();
        self.xdp.xsk.receive(BATCH, |f| {
            let Some(d) = frame::parse_udp(f) else { return };
            let flight = usize::from(d.to_port.wrapping_sub(first));
            if d.from != server || flight >= flights {
                return;
            }
            let payload = &f[d.payload.0..d.payload.1];
            let len = payload.len().min(BUF_LEN);
            batch.bufs[k][..len].copy_from_slice(&payload[..len]);
            batch.lens[k] = len;
            batch.from[k] = flight as u16;
            k += 1;
        });
        Ok(k)
    }

    fn wait(&self, timeout: Duration) {
        sys::wait_readable(&[self.xdp.xsk.fd()], timeout);
    }

    fn drops(&self) -> u64 {
        self.xdp.xsk.drops()
    }
}
