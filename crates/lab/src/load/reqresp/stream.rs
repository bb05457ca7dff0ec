//! A non-blocking TCP or Unix-socket stream registered with `mio`: the
//! socket a request/response connection ([`super::Conn`]) owns.

use mio::event::Source;
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// A connection's socket: TCP (with `TCP_NODELAY`) or a Unix socket.
pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    /// The socket's descriptor.
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
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
        }
    }

    /// Switches to blocking I/O where each read or write waits at most
    /// `wait` (then fails with WouldBlock). Still registered with the poll.
    pub fn set_blocking(&self, wait: Duration) -> io::Result<()> {
        let sock = match self {
            Stream::Tcp(s) => socket2::SockRef::from(s),
            Stream::Unix(s) => socket2::SockRef::from(s),
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
        }
    }

    /// Writes what the socket takes (see [`Write::write`]).
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }
}
