//! A non-blocking TCP or Unix-socket stream registered with `mio`: the
//! socket a request/response connection ([`super::Conn`]) owns; or TCP
//! inside TLS, rustls's connection as a sans-IO state machine over the
//! socket ([`TlsStream`]).

use mio::event::Source;
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// A connection's socket: TCP (with `TCP_NODELAY`), a Unix socket, or TCP
/// inside TLS.
pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream>),
}

/// TCP inside TLS, its handshake done: reads hand over plaintext, writes
/// take it. A read shorter than its buffer means the socket was read
/// until it would block and rustls holds no more plaintext, as a short
/// read of a plain socket means (the connection's edge-triggered loop
/// relies on it).
pub(crate) struct TlsStream {
    sock: TcpStream,
    conn: rustls::ClientConnection,
    /// The socket blocks ([`Stream::set_blocking`]): a read returns the
    /// plaintext it has rather than wait for more.
    blocking: std::cell::Cell<bool>,
    /// Bytes read before TLS that the protocol has yet to see (MySQL's
    /// greeting), handed over first.
    replay: Vec<u8>,
}

impl TlsStream {
    /// Writes the TLS records rustls holds, as far as the socket takes them.
    fn flush_records(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            self.conn.write_tls(&mut self.sock)?;
        }
        Ok(())
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = self.replay.len().min(buf.len());
        buf[..n].copy_from_slice(&self.replay[..n]);
        self.replay.drain(..n);
        if n == buf.len() {
            return Ok(n);
        }
        loop {
            match self.conn.reader().read(&mut buf[n..]) {
                Ok(0) if n == 0 => return Ok(0),
                Ok(k) => {
                    n += k;
                    if n == buf.len() || k == 0 {
                        return Ok(n);
                    }
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if n > 0 && self.blocking.get() {
                        return Ok(n);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && n == 0 => return Ok(0),
                Err(e) => return if n > 0 { Ok(n) } else { Err(e) },
            }
            match self.conn.read_tls(&mut self.sock) {
                Ok(0) => {
                    // The peer closed: what it sent before is read first.
                    self.conn.process_new_packets().map_err(io::Error::other)?;
                    if self.conn.reader().read(&mut buf[n..]).is_ok_and(|k| k > 0) {
                        continue;
                    }
                    return Ok(n);
                }
                Ok(_) => {
                    self.conn.process_new_packets().map_err(io::Error::other)?;
                    match self.flush_records() {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(e),
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && n > 0 => return Ok(n),
                Err(e) => return Err(e),
            }
        }
    }

    /// Takes `buf` once the records of earlier writes have left; what the
    /// socket does not take now leaves at the next read, write or
    /// writable event ([`Stream::flush_pending`]).
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.flush_records()?;
        let n = self.conn.writer().write(buf)?;
        match self.flush_records() {
            Ok(()) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(n),
            Err(e) => Err(e),
        }
    }
}

impl Stream {
    /// The socket's descriptor.
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(t) => t.sock.as_raw_fd(),
        }
    }

    /// TCP inside TLS on `sock`, a connected blocking socket that has
    /// finished whatever the protocol says before TLS (PostgreSQL's
    /// SSLRequest): the handshake runs here, blocking, within `wait`, and
    /// the stream is non-blocking after it. A handshake that fails is an
    /// error in words with the fix ([`crate::tls::client::describe`]).
    /// `replay` is what was read before TLS and the protocol has yet to
    /// see; reads hand it over first.
    pub fn tls(
        mut sock: std::net::TcpStream,
        config: &std::sync::Arc<rustls::ClientConfig>,
        name: &rustls::pki_types::ServerName<'static>,
        wait: Duration,
        replay: Vec<u8>,
    ) -> io::Result<(Stream, crate::tls::client::Negotiated)> {
        let target = sock
            .peer_addr()
            .map_or("the server".into(), |a| a.to_string());
        let said = |e: &rustls::Error| io::Error::other(crate::tls::client::describe(e, &target));
        let mut conn =
            rustls::ClientConnection::new(config.clone(), name.clone()).map_err(|e| said(&e))?;
        sock.set_read_timeout(Some(wait))?;
        sock.set_write_timeout(Some(wait))?;
        while conn.is_handshaking() {
            if let Err(e) = conn.complete_io(&mut sock) {
                return Err(
                    match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                        Some(t) => said(t),
                        None => io::Error::new(
                            e.kind(),
                            format!("TLS handshake with {target} failed: {e}"),
                        ),
                    },
                );
            }
        }
        let negotiated = crate::tls::client::Negotiated::of(&conn);
        sock.set_read_timeout(None)?;
        sock.set_write_timeout(None)?;
        sock.set_nonblocking(true)?;
        let sock = TcpStream::from_std(sock);
        let tls = TlsStream {
            sock,
            conn,
            blocking: std::cell::Cell::new(false),
            replay,
        };
        Ok((Stream::Tls(Box::new(tls)), negotiated))
    }

    /// Writes what TLS still holds of earlier writes (a writable event);
    /// nothing for a plain socket.
    pub fn flush_pending(&mut self) -> io::Result<()> {
        match self {
            Stream::Tls(t) => t.flush_records(),
            Stream::Tcp(_) | Stream::Unix(_) => Ok(()),
        }
    }

    /// Starts a non-blocking TCP connect; completion is signalled as
    /// writable.
    pub fn tcp(addr: SocketAddr) -> io::Result<Stream> {
        let s = TcpStream::connect(addr)?;
        // libpq sets TCP_NODELAY too: requests are single writes.
        s.set_nodelay(true)?;
        Ok(Stream::Tcp(s))
    }

    /// Starts a non-blocking connect to the Unix socket at `path`.
    pub fn unix(path: &Path) -> io::Result<Stream> {
        Ok(Stream::Unix(UnixStream::connect(path)?))
    }

    /// Whether a pending connect has completed (Ok(false): not yet).
    pub fn connected(&self) -> io::Result<bool> {
        let (err, peer) = match self {
            Stream::Tcp(s) => (s.take_error()?, s.peer_addr().map(|_| ())),
            Stream::Unix(s) => (s.take_error()?, s.peer_addr().map(|_| ())),
            Stream::Tls(t) => (t.sock.take_error()?, t.sock.peer_addr().map(|_| ())),
        };
        if let Some(e) = err {
            return Err(e);
        }
        match peer {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Registers the socket for read and write readiness under `token`.
    pub fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        let interest = Interest::READABLE | Interest::WRITABLE;
        match self {
            Stream::Tcp(s) => s.register(registry, token, interest),
            Stream::Unix(s) => s.register(registry, token, interest),
            Stream::Tls(t) => t.sock.register(registry, token, interest),
        }
    }

    /// Switches to blocking I/O where each read or write waits at most
    /// `wait` (then fails with WouldBlock). Still registered with the poll.
    pub fn set_blocking(&self, wait: Duration) -> io::Result<()> {
        let sock = match self {
            Stream::Tcp(s) => socket2::SockRef::from(s),
            Stream::Unix(s) => socket2::SockRef::from(s),
            Stream::Tls(t) => {
                t.blocking.set(true);
                socket2::SockRef::from(&t.sock)
            }
        };
        sock.set_nonblocking(false)?;
        sock.set_read_timeout(Some(wait))?;
        sock.set_write_timeout(Some(wait))
    }

    /// Reads what has arrived (see [`Read::read`]).
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }

    /// Writes what the socket takes (see [`Write::write`]).
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }
}
