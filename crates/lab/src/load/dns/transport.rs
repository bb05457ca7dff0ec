//! How a DNS load thread moves datagrams: [`Transport`], with the path
//! chosen by [`Generator`]. A thread's queries go out on `flights`
//! (a UDP socket each, or a UDP source port each under XDP), every flight
//! with its own 65,536 query IDs.
//!
//! - `SocketTransport`: connected UDP sockets, `sendmmsg`/`recvmmsg`;
//! - `super::xdp::XdpTransport`: one AF_XDP socket, frames built here.
//!
//! `super::worker` opens the one its plan's [`super::Generator`] asks for.

use super::sys::{self, Batch, BATCH};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// One thread's way of sending queries and reading answers.
pub(super) trait Transport {
    /// Sends the first `n` datagrams of `batch` (lengths in `lens`) on
    /// flight `flight`; returns how many the kernel took.
    fn send(&mut self, flight: usize, batch: &mut Batch, n: usize) -> std::io::Result<usize>;
    /// Makes what `send` queued leave (XDP: one kick for every batch of a
    /// round); sockets send at once and need nothing.
    fn flush(&mut self) {}
    /// Reads up to [`BATCH`] answers into `batch` (`from` says each one's
    /// flight); `Ok(0)` once every flight was read empty.
    fn recv(&mut self, batch: &mut Batch) -> std::io::Result<usize>;
    /// Sleeps until an answer may be waiting or `timeout` passes.
    fn wait(&self, timeout: Duration);
    /// Answers the kernel dropped before this thread read them, since the
    /// transport opened.
    fn drops(&self) -> u64;
    /// What the connections met (TCP, DoT, DoH); nothing over UDP.
    fn counts(&self) -> StreamCounts {
        StreamCounts::default()
    }
    /// DoT: what the first connection's TLS handshake settled.
    fn negotiated(&self) -> Option<crate::tls::client::Negotiated> {
        None
    }
}

/// What a thread's connections met, summed over the threads for the
/// run's note.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamCounts {
    /// Connections opened again: closed by the server, a GOAWAY, or their
    /// HTTP/2 stream IDs spent.
    pub reconnects: u64,
    /// DoH: responses whose status was not 200.
    pub not_ok: u64,
    /// DoH: streams the server reset.
    pub reset: u64,
}

impl StreamCounts {
    /// Adds another thread's counts.
    pub fn add(&mut self, o: &StreamCounts) {
        self.reconnects += o.reconnects;
        self.not_ok += o.not_ok;
        self.reset += o.reset;
    }

    /// The run's note over `transport`; `None` when nothing happened.
    pub fn note(&self, transport: super::DnsTransport) -> Option<String> {
        let mut said = Vec::new();
        if self.reconnects > 0 {
            said.push(format!(
                "{} connections were opened again (closed by the server{})",
                self.reconnects,
                match transport {
                    super::DnsTransport::Doh => ", a GOAWAY, or their stream IDs spent",
                    _ => "",
                }
            ));
        }
        if self.not_ok > 0 {
            said.push(format!(
                "{} responses had a status other than 200",
                self.not_ok
            ));
        }
        if self.reset > 0 {
            said.push(format!("the server reset {} streams", self.reset));
        }
        let over = match transport {
            super::DnsTransport::Udp => "UDP",
            super::DnsTransport::Tcp => "TCP",
            super::DnsTransport::Dot => "TLS",
            super::DnsTransport::Doh => "HTTPS",
        };
        (!said.is_empty()).then(|| {
            format!(
                "DNS over {over}: {}; the queries they carried timed out",
                said.join("; ")
            )
        })
    }
}

/// Connected, non-blocking UDP sockets, one per flight.
pub(super) struct SocketTransport {
    /// The sockets, held open (`fds` are theirs).
    _socks: Vec<socket2::Socket>,
    fds: Vec<std::os::fd::RawFd>,
    /// The socket `recv` reads next; `socks.len()` after a full pass.
    cursor: usize,
}

impl SocketTransport {
    pub(super) fn open(server: SocketAddr, flights: usize) -> std::io::Result<SocketTransport> {
        let socks = (0..flights)
            .map(|_| sys::connected_socket(server))
            .collect::<std::io::Result<Vec<_>>>()?;
        let fds = socks.iter().map(|s| s.as_raw_fd()).collect();
        Ok(SocketTransport {
            _socks: socks,
            fds,
            cursor: 0,
        })
    }
}

impl Transport for SocketTransport {
    fn send(&mut self, flight: usize, batch: &mut Batch, n: usize) -> std::io::Result<usize> {
        batch.send(self.fds[flight], n)
    }

    /// Reads each socket until a short batch, then the next; the pass
    /// ends (`Ok(0)`) after the last socket, and the next call starts a
    /// new one. An error leaves the cursor, so that socket is read again.
    fn recv(&mut self, batch: &mut Batch) -> std::io::Result<usize> {
        while self.cursor < self.fds.len() {
            let s = self.cursor;
            let n = batch.recv(self.fds[s])?;
            if n < BATCH {
                self.cursor += 1;
            }
            if n > 0 {
                batch.from[..n].fill(s as u16);
                return Ok(n);
            }
        }
        self.cursor = 0;
        Ok(0)
    }

    fn wait(&self, timeout: Duration) {
        sys::wait_readable(&self.fds, timeout);
    }

    fn drops(&self) -> u64 {
        self.fds
            .iter()
            .filter_map(|&fd| sys::receive_drops(fd))
            .sum()
    }
}
