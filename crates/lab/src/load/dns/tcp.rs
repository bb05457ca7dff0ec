//! DNS over TCP (RFC 7766): one connection per flight, each message with
//! its two-byte length in front, many queries in flight on a connection at
//! once (pipelined; answers may come in any order, matched by ID as over
//! UDP). A round's queries of a flight leave in one write.
//!
//! A connection the server closes is opened again at once; the queries it
//! carried time out, as lost datagrams would, and the run's note counts
//! the reconnections.
//!
//! DNS over TLS (RFC 7858) is the same framing inside TLS: each flight's
//! connection finishes its handshake before the run (blocking, within the
//! connect timeout), then rustls's connection runs as a sans-IO state
//! machine over the non-blocking socket (`write_tls`, `read_tls`,
//! `process_new_packets`), as under the HTTP driver's loops.

use super::sys::{Batch, BATCH, BUF_LEN};
use super::transport::Transport;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

/// What a DoT or DoH connection needs: the run's client configuration
/// (its ALPN `dot` or `h2`) and the name the server's certificate is
/// checked against.
#[derive(Clone)]
pub(super) struct DnsTls {
    /// Shared by every connection of the run.
    pub config: Arc<rustls::ClientConfig>,
    /// The server's name or address.
    pub name: rustls::pki_types::ServerName<'static>,
}

/// How long a (re)connect may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// A stream connection to the server, cleartext or inside TLS (its
/// handshake done), non-blocking: what DoT and DoH share with TCP.
pub(super) struct Conn {
    pub sock: TcpStream,
    /// Bytes the socket did not take yet.
    pub out: Vec<u8>,
    /// DoT and DoH: the connection's TLS state, its handshake done.
    pub tls: Option<rustls::ClientConnection>,
}

impl Conn {
    /// Connects to `server` (within the connect timeout) and, with `tls`,
    /// finishes the handshake.
    pub fn open(server: SocketAddr, tls: Option<&DnsTls>) -> io::Result<Conn> {
        let mut sock = TcpStream::connect_timeout(&server, CONNECT_TIMEOUT)?;
        sock.set_nodelay(true)?;
        let tls = tls.map(|t| handshake(&mut sock, t, server)).transpose()?;
        sock.set_nonblocking(true)?;
        Ok(Conn {
            sock,
            out: Vec::new(),
            tls,
        })
    }

    /// Queues one whole message. Over TLS it is its own record, as
    /// dnsperf's one `SSL_write` per query: NSD 4.6 reads one message per
    /// time its socket wakes it, so queries that shared a record with
    /// others waited in its TLS buffer (4 to 6 of 2,000 lost at the end of a
    /// run, `tests/it/dns.rs`, before this).
    pub fn queue_message(&mut self, message: &[u8]) -> io::Result<()> {
        match &mut self.tls {
            Some(tls) => tls.writer().write_all(message),
            None => {
                self.out.extend_from_slice(message);
                Ok(())
            }
        }
    }

    /// Writes what the socket takes of `out` (over TLS: all of it into
    /// rustls, then what the socket takes of its records).
    pub fn flush(&mut self) -> io::Result<()> {
        if let Some(tls) = &mut self.tls {
            if !self.out.is_empty() {
                tls.writer().write_all(&self.out)?;
                self.out.clear();
            }
            while tls.wants_write() {
                match tls.write_tls(&mut self.sock) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            return Ok(());
        }
        while !self.out.is_empty() {
            match self.sock.write(&self.out) {
                Ok(n) => {
                    self.out.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Appends what has arrived to `inbuf`; `Ok(false)` once the server
    /// closed.
    pub fn fill(&mut self, inbuf: &mut Vec<u8>) -> io::Result<bool> {
        let mut buf = [0u8; 16 * 1024];
        if let Some(tls) = &mut self.tls {
            return fill_tls(tls, &mut self.sock, inbuf, &mut buf);
        }
        loop {
            match self.sock.read(&mut buf) {
                Ok(0) => return Ok(false),
                Ok(n) => inbuf.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Sleeps until one of `conns` is readable or `timeout` passes.
pub(super) fn wait_any<'a>(conns: impl Iterator<Item = &'a Conn>, timeout: Duration) {
    let fds: Vec<_> = conns.map(|c| c.sock.as_raw_fd()).collect();
    super::sys::wait_readable(&fds, timeout);
}

/// What the first TLS connection of `conns` settled in its handshake.
pub(super) fn first_negotiated<'a>(
    mut conns: impl Iterator<Item = &'a Conn>,
) -> Option<crate::tls::client::Negotiated> {
    let tls = conns.find_map(|c| c.tls.as_ref())?;
    Some(crate::tls::client::Negotiated::of(tls))
}

struct Flight {
    conn: Conn,
    /// Bytes read and not yet a whole message.
    inbuf: Vec<u8>,
    /// Where the next message starts in `inbuf`.
    at: usize,
}

impl Flight {
    fn open(server: SocketAddr, tls: Option<&DnsTls>) -> io::Result<Flight> {
        Ok(Flight {
            conn: Conn::open(server, tls)?,
            inbuf: Vec::with_capacity(64 * 1024),
            at: 0,
        })
    }

    /// Reads what has arrived; `Ok(false)` once the server closed.
    fn fill(&mut self) -> io::Result<bool> {
        if self.at > 0 {
            self.inbuf.drain(..self.at);
            self.at = 0;
        }
        self.conn.fill(&mut self.inbuf)
    }

    /// The next whole message, copied into `dst` (at most `BUF_LEN`
    /// bytes: a longer answer's header and question still parse); its
    /// length, or `None` until one is there.
    fn next_message(&mut self, dst: &mut [u8; BUF_LEN]) -> Option<usize> {
        let b = &self.inbuf[self.at..];
        let len = usize::from(u16::from_be_bytes([*b.first()?, *b.get(1)?]));
        let msg = b.get(2..2 + len)?;
        let n = len.min(BUF_LEN);
        dst[..n].copy_from_slice(&msg[..n]);
        self.at += 2 + len;
        Some(n)
    }

    fn has_message(&self) -> bool {
        let b = &self.inbuf[self.at..];
        b.len() >= 2 && b.len() >= 2 + usize::from(u16::from_be_bytes([b[0], b[1]]))
    }
}

/// Finishes a TLS handshake on the blocking `sock` (within the connect
/// timeout); a certificate that does not verify is said with the fix.
fn handshake(
    sock: &mut TcpStream,
    tls: &DnsTls,
    server: SocketAddr,
) -> io::Result<rustls::ClientConnection> {
    let said = |e: &rustls::Error| crate::tls::client::describe(e, &server.to_string());
    let mut conn = rustls::ClientConnection::new(tls.config.clone(), tls.name.clone())
        .map_err(|e| io::Error::other(said(&e)))?;
    // The queries in flight are bounded by their IDs; rustls need not
    // refuse plaintext the socket has not taken yet.
    conn.set_buffer_limit(None);
    sock.set_read_timeout(Some(CONNECT_TIMEOUT))?;
    sock.set_write_timeout(Some(CONNECT_TIMEOUT))?;
    while conn.is_handshaking() {
        if let Err(e) = conn.complete_io(sock) {
            let inner = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
            return Err(match inner {
                Some(t) => io::Error::other(said(t)),
                None => {
                    io::Error::new(e.kind(), format!("TLS handshake with {server} failed: {e}"))
                }
            });
        }
    }
    sock.set_read_timeout(None)?;
    sock.set_write_timeout(None)?;
    Ok(conn)
}

/// Reads the TLS records that have arrived on `sock` and appends their
/// plaintext to `inbuf`; `Ok(false)` once the server closed.
fn fill_tls(
    tls: &mut rustls::ClientConnection,
    sock: &mut TcpStream,
    inbuf: &mut Vec<u8>,
    buf: &mut [u8],
) -> io::Result<bool> {
    loop {
        let open = match tls.read_tls(sock) {
            Ok(0) => false,
            Ok(_) => true,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        tls.process_new_packets().map_err(io::Error::other)?;
        loop {
            match tls.reader().read(buf) {
                Ok(0) => return Ok(false),
                Ok(n) => inbuf.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        if !open {
            return Ok(false);
        }
    }
}

/// DNS over TCP: a connection per flight; `None` while a flight's
/// connection is closed and could not be opened again (the next send
/// tries).
pub(super) struct TcpTransport {
    server: SocketAddr,
    flights: Vec<Option<Flight>>,
    /// The flight `recv` reads next; `flights.len()` after a full pass.
    cursor: usize,
    /// Connections the server closed, opened again.
    reconnects: u64,
    /// DoT: what each connection's TLS needs.
    tls: Option<DnsTls>,
}

impl TcpTransport {
    /// Connects `flights` connections to `server` (from the thread's
    /// network namespace), each inside TLS when `tls` says.
    pub(super) fn open(
        server: SocketAddr,
        flights: usize,
        tls: Option<DnsTls>,
    ) -> io::Result<TcpTransport> {
        let what = match tls {
            Some(_) => "DNS over TLS",
            None => "DNS over TCP",
        };
        let flights = (0..flights)
            .map(|_| Flight::open(server, tls.as_ref()).map(Some))
            .collect::<io::Result<Vec<_>>>()
            .map_err(|e| io::Error::new(e.kind(), format!("{what} to {server}: {e}")))?;
        Ok(TcpTransport {
            server,
            flights,
            cursor: 0,
            reconnects: 0,
            tls,
        })
    }

    /// Opens flight `f` again after its connection closed.
    fn reopen(&mut self, f: usize) -> io::Result<()> {
        self.flights[f] = None;
        self.flights[f] = Some(Flight::open(self.server, self.tls.as_ref())?);
        self.reconnects += 1;
        Ok(())
    }
}

impl Transport for TcpTransport {
    fn send(&mut self, flight: usize, batch: &mut Batch, n: usize) -> io::Result<usize> {
        if self.flights[flight].is_none() {
            self.reopen(flight)?;
        }
        let Some(f) = self.flights[flight].as_mut() else {
            return Ok(0);
        };
        let mut framed = [0u8; 2 + BUF_LEN];
        let mut queued = Ok(());
        for i in 0..n {
            let len = batch.lens[i];
            framed[..2].copy_from_slice(&(len as u16).to_be_bytes());
            framed[2..2 + len].copy_from_slice(&batch.bufs[i][..len]);
            queued = queued.and_then(|()| f.conn.queue_message(&framed[..2 + len]));
        }
        if queued.and_then(|()| f.conn.flush()).is_err() {
            self.reopen(flight)?;
        }
        Ok(n)
    }

    /// Reads each flight's connection and hands over its whole messages;
    /// a connection the server closed is opened again once its messages
    /// are out (an error of that is returned once, past the flight).
    fn recv(&mut self, batch: &mut Batch) -> io::Result<usize> {
        while self.cursor < self.flights.len() {
            let s = self.cursor;
            let Some(f) = self.flights[s].as_mut() else {
                self.cursor += 1;
                continue;
            };
            let open = f.conn.flush().and_then(|()| f.fill());
            let mut k = 0;
            while k < BATCH {
                let Some(len) = f.next_message(&mut batch.bufs[k]) else {
                    break;
                };
                batch.lens[k] = len;
                batch.from[k] = s as u16;
                k += 1;
            }
            if k > 0 {
                if k < BATCH && matches!(open, Ok(true)) {
                    self.cursor += 1;
                }
                return Ok(k);
            }
            self.cursor += 1;
            if !matches!(open, Ok(true)) {
                self.reopen(s)?;
            }
        }
        self.cursor = 0;
        Ok(0)
    }

    fn wait(&self, timeout: Duration) {
        let open = || self.flights.iter().flatten();
        if open().any(Flight::has_message) {
            return;
        }
        wait_any(open().map(|f| &f.conn), timeout);
    }

    fn drops(&self) -> u64 {
        0
    }

    fn negotiated(&self) -> Option<crate::tls::client::Negotiated> {
        first_negotiated(self.flights.iter().flatten().map(|f| &f.conn))
    }

    fn counts(&self) -> super::transport::StreamCounts {
        super::transport::StreamCounts {
            reconnects: self.reconnects,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TCP server that answers each length-prefixed query with itself
    /// (its ID and all), two queries per write, out of order.
    #[test]
    fn length_prefixed_messages_go_out_and_come_back_whole() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let echo = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 1024];
            while got.len() < 2 * (2 + 12) {
                let n = s.read(&mut buf).unwrap();
                got.extend_from_slice(&buf[..n]);
            }
            let (a, b) = got.split_at(14);
            s.write_all(&[b, a].concat()).unwrap();
            // Closed once the client has read the answers: then opened again.
            std::thread::sleep(Duration::from_millis(300));
            drop(s);
            listener.accept().unwrap()
        });
        let mut t = TcpTransport::open(addr, 1, None).unwrap();
        let mut batch = Batch::new();
        for (i, id) in [7u8, 9].into_iter().enumerate() {
            batch.bufs[i][..12].copy_from_slice(&[0, id, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
            batch.lens[i] = 12;
        }
        assert_eq!(t.send(0, &mut batch, 2).unwrap(), 2);
        let mut got = Vec::new();
        for _ in 0..100 {
            t.wait(Duration::from_millis(20));
            let n = t.recv(&mut batch).unwrap();
            got.extend((0..n).map(|i| (batch.bufs[i][1], batch.lens[i], batch.from[i])));
            if got.len() == 2 {
                break;
            }
        }
        assert_eq!(got, [(9, 12, 0), (7, 12, 0)]);
        for _ in 0..100 {
            t.wait(Duration::from_millis(20));
            assert_eq!(t.recv(&mut batch).unwrap(), 0);
            if t.reconnects == 1 {
                break;
            }
        }
        let _reopened = echo.join().unwrap();
        let note = t.counts().note(crate::load::dns::DnsTransport::Tcp);
        assert_eq!(
            note.as_deref(),
            Some(
                "DNS over TCP: 1 connections were opened again (closed by the server); the \
                 queries they carried timed out"
            )
        );
    }
}
