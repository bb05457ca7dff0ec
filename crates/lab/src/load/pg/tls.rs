//! TLS to PostgreSQL, as libpq's `sslmode` asks: each connection sends
//! the SSLRequest on a blocking socket, and on the server's `S` finishes a
//! TLS handshake (TLS 1.3 then 1.2; ALPN `postgresql`, which PostgreSQL 17
//! asks for with direct TLS and earlier servers ignore), then runs
//! non-blocking in the event loop ([`crate::load::reqresp::Stream::tls`]).
//! The opening blocks its worker for one round trip and a handshake, as
//! pgbench's `doConnect` blocks its thread.
//!
//! `require` and `prefer` do not check the certificate; `verify-ca`
//! checks it against the CA (the run's managed server's, `ca_pem`, or
//! `sslrootcert`), and `verify-full` its address too. rustls checks the
//! name with the chain, so `verify-ca` is as strict as `verify-full` here,
//! which the docs say.

use crate::load::reqresp::Stream;
use crate::tls::client::{ClientTls, Negotiated, Verify, Versions};
use crate::wire::pg::codec::SSL_REQUEST;
use crate::wire::pg::conninfo::SslMode;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// What a run's TLS connections share.
#[derive(Clone)]
pub(crate) struct PgTls {
    /// The mode asked.
    pub mode: SslMode,
    /// The client configuration (its session cache shared).
    pub config: Arc<rustls::ClientConfig>,
    /// The server's address, as the certificate names it.
    pub name: rustls::pki_types::ServerName<'static>,
    /// How long the opening may take.
    pub wait: Duration,
}

impl PgTls {
    /// The TLS a run needs for `mode` against `addr`, the certificate
    /// checked against `ca_pem` (the managed server's) or the file
    /// `rootcert`; `None` for `disable`.
    pub(crate) fn new(
        mode: SslMode,
        addr: SocketAddr,
        ca_pem: Option<&str>,
        rootcert: Option<&std::path::Path>,
        wait: Duration,
    ) -> Result<Option<PgTls>, String> {
        if !mode.asks_tls() {
            return Ok(None);
        }
        let verify = match (mode.verifies(), ca_pem.is_some() || rootcert.is_some()) {
            (false, _) => Verify::Insecure,
            (true, true) => Verify::from_settings(None, ca_pem, rootcert, "")?,
            (true, false) => {
                return Err(format!(
                    "sslmode={} needs the CA that signed the server's certificate: \
                     sslrootcert=FILE (PGSSLROOTCERT), or sslmode=require not to check it",
                    mode.name()
                ))
            }
        };
        let config = ClientTls {
            verify,
            versions: Versions::Both,
            resume: true,
            alpn: vec![b"postgresql".to_vec()],
        }
        .config()?;
        let name = crate::tls::client::server_name(&addr.ip().to_string())?;
        Ok(Some(PgTls {
            mode,
            config,
            name,
            wait,
        }))
    }

    /// Opens a connection to `addr`: the SSLRequest, then TLS on `S`, or
    /// cleartext on `N` where the mode allows it. What the handshake
    /// settled comes back with the stream (`None`: cleartext).
    pub(crate) fn open(&self, addr: SocketAddr) -> io::Result<(Stream, Option<Negotiated>)> {
        let mut sock = std::net::TcpStream::connect_timeout(&addr, self.wait)?;
        sock.set_nodelay(true)?;
        sock.set_read_timeout(Some(self.wait))?;
        sock.set_write_timeout(Some(self.wait))?;
        sock.write_all(&SSL_REQUEST)?;
        let mut answer = [0u8; 1];
        sock.read_exact(&mut answer)?;
        match answer[0] {
            b'S' => {
                let (stream, negotiated) =
                    Stream::tls(sock, &self.config, &self.name, self.wait, Vec::new())?;
                Ok((stream, Some(negotiated)))
            }
            b'N' if !self.mode.needs_tls() => {
                sock.set_read_timeout(None)?;
                sock.set_write_timeout(None)?;
                sock.set_nonblocking(true)?;
                Ok((Stream::Tcp(mio::net::TcpStream::from_std(sock)), None))
            }
            b'N' => Err(io::Error::other(format!(
                "{addr} does not serve TLS (it answered the SSLRequest with N), but sslmode={} \
                 needs it: serve TLS (a managed postgres: `tls = true`; else `ssl = on`), or use \
                 sslmode=disable",
                self.mode.name()
            ))),
            other => Err(io::Error::other(format!(
                "{addr} answered the SSLRequest with byte {other:#04x}, not S or N: is it \
                 PostgreSQL?"
            ))),
        }
    }
}
