//! A worker's connection: a plain TCP socket, or TLS over one.
//!
//! TLS is rustls's connection as a state machine: `read_tls` takes the
//! socket's bytes, `process_new_packets` decrypts them, `write_tls` sends
//! what it has to. The worker's loop stays the same, with two differences:
//! a TLS read drains the socket to `WouldBlock` (a short read of plaintext
//! does not prove the socket empty, and the sockets are edge-triggered),
//! and the handshake runs in its own phase before the first request, so
//! that a request's latency starts at its first byte as it does without
//! TLS (wrk measures the same way).

use mio::net::TcpStream;
use rustls::pki_types::ServerName;
use rustls::ClientConnection;
use std::io::{self, Read, Write};
use std::sync::Arc;

/// What the TLS connections of a run share.
#[derive(Debug)]
pub struct TlsPlan {
    /// The configuration, with its session cache.
    pub config: Arc<rustls::ClientConfig>,
    /// The name the certificate is checked against.
    pub name: ServerName<'static>,
}

/// One connection.
pub enum Conn {
    /// Cleartext.
    Plain(TcpStream),
    /// TLS over the socket.
    Tls(Box<TlsConn>),
}

/// TLS over a socket.
pub struct TlsConn {
    sock: TcpStream,
    tls: ClientConnection,
}

/// How a finished handshake went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handshake {
    /// Still going.
    Pending,
    /// A full handshake.
    Full,
    /// A resumed session.
    Resumed,
}

fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl Conn {
    /// `sock`, with TLS begun when `tls` is given (nothing is sent yet).
    pub fn new(sock: TcpStream, tls: Option<&TlsPlan>) -> io::Result<Conn> {
        Ok(match tls {
            None => Conn::Plain(sock),
            Some(p) => Conn::Tls(Box::new(TlsConn {
                sock,
                tls: ClientConnection::new(p.config.clone(), p.name.clone()).map_err(tls_error)?,
            })),
        })
    }

    /// The socket, for the poll's registry.
    pub fn socket(&mut self) -> &mut TcpStream {
        match self {
            Conn::Plain(s) => s,
            Conn::Tls(t) => &mut t.sock,
        }
    }

    /// Whether a short read proves the socket's receive queue empty.
    pub fn short_read_drains(&self) -> bool {
        matches!(self, Conn::Plain(_))
    }

    /// Whether TLS still has records to send.
    pub fn wants_write(&self) -> bool {
        matches!(self, Conn::Tls(t) if t.tls.wants_write())
    }

    /// Sends what TLS has to send, until the socket would block.
    pub fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Plain(_) => Ok(()),
            Conn::Tls(t) => t.flush_records(),
        }
    }

    /// Moves the handshake on with what the socket holds; `Pending` until
    /// it is done. A plain connection has none to make.
    pub fn handshake(&mut self) -> io::Result<Handshake> {
        let Conn::Tls(t) = self else {
            return Ok(Handshake::Full);
        };
        t.flush_records()?;
        while t.tls.is_handshaking() {
            match t.tls.read_tls(&mut t.sock) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(_) => {
                    t.tls.process_new_packets().map_err(tls_error)?;
                    t.flush_records()?;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Handshake::Pending),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(match t.tls.handshake_kind() {
            Some(rustls::HandshakeKind::Resumed) => Handshake::Resumed,
            _ => Handshake::Full,
        })
    }

    /// What the handshake settled (TLS only).
    pub fn negotiated(&self) -> Option<crate::tls::client::Negotiated> {
        match self {
            Conn::Plain(_) => None,
            Conn::Tls(t) => Some(crate::tls::client::Negotiated::of(&t.tls)),
        }
    }
}

impl TlsConn {
    fn flush_records(&mut self) -> io::Result<()> {
        while self.tls.wants_write() {
            match self.tls.write_tls(&mut self.sock) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Plaintext into `buf`, reading the socket for more until it would
    /// block; `Ok(0)` at the end of the stream.
    fn read_plain(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed without close_notify: the end, as for TCP.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            match self.tls.read_tls(&mut self.sock)? {
                0 => return Ok(0),
                _ => {
                    self.tls.process_new_packets().map_err(tls_error)?;
                    // Key updates and alerts may need an answer.
                    self.flush_records()?;
                }
            }
        }
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.read(buf),
            Conn::Tls(t) => t.read_plain(buf),
        }
    }
}

impl Write for Conn {
    /// Plain: the socket's write. TLS: the whole of `data` is taken into
    /// records and as many as the socket takes are sent; the rest goes
    /// when it is writable again ([`Conn::flush`]).
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(s) => s.write(data),
            Conn::Tls(t) => {
                let n = t.tls.writer().write(data)?;
                t.flush_records()?;
                Ok(n)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Conn::flush(self)
    }
}

impl std::os::fd::AsRawFd for Conn {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            Conn::Plain(s) => s.as_raw_fd(),
            Conn::Tls(t) => t.sock.as_raw_fd(),
        }
    }
}
