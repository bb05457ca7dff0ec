//! TLS to MySQL and MariaDB, as the MySQL client's `--ssl-mode` and
//! sysbench's `--mysql-ssl` ask: each connection reads the server's
//! greeting and sends the SSLRequest ([`ssl_request`]) on a blocking
//! socket, finishes a TLS handshake (TLS 1.3 then 1.2), then runs
//! non-blocking in the event loop, the greeting handed to the protocol
//! first (`reqresp::Stream::tls`), whose response is then
//! packet 2. The opening blocks its worker for a round trip and a
//! handshake, as libmysqlclient's connect blocks sysbench's thread.

use crate::load::reqresp::Stream;
use crate::tls::client::{ClientTls, Negotiated, Verify, Versions};
use crate::wire::mysql::codec::ssl_request;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How a connection uses TLS: the MySQL client's `--ssl-mode`, less
/// `PREFERRED` (which would fall back to cleartext unsaid).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SslMode {
    /// Cleartext (the default without a managed server's CA; sysbench's
    /// `--mysql-ssl=off`).
    #[default]
    Disabled,
    /// TLS, the certificate not checked (`--mysql-ssl=on`).
    Required,
    /// TLS, the certificate checked against the CA and the address
    /// (`VERIFY_IDENTITY`; `VERIFY_CA` is as strict here: rustls checks
    /// the name with the chain).
    VerifyIdentity,
}

impl SslMode {
    /// The mode `text` names: MySQL's `--ssl-mode` values in any case, or
    /// sysbench's `on` / `off`.
    pub fn parse(text: &str) -> Result<SslMode, String> {
        match text.to_ascii_lowercase().replace('-', "_").as_str() {
            "disabled" | "off" => Ok(SslMode::Disabled),
            "required" | "on" => Ok(SslMode::Required),
            "verify_ca" | "verify_identity" => Ok(SslMode::VerifyIdentity),
            "preferred" => Err("ssl_mode `preferred` would fall back to cleartext without \
                                saying; use \"required\" or \"disabled\""
                .into()),
            _ => Err(format!(
                "ssl_mode `{text}`: use \"disabled\", \"required\", \"verify_ca\" or \
                 \"verify_identity\" (or sysbench's on/off)"
            )),
        }
    }

    /// MySQL's name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disabled => "DISABLED",
            SslMode::Required => "REQUIRED",
            SslMode::VerifyIdentity => "VERIFY_IDENTITY",
        }
    }
}

/// What a run's TLS connections share.
#[derive(Clone)]
pub(crate) struct MysqlTls {
    /// The mode asked.
    pub mode: SslMode,
    config: Arc<rustls::ClientConfig>,
    name: rustls::pki_types::ServerName<'static>,
    wait: Duration,
}

impl MysqlTls {
    /// The TLS a run needs for `mode` against `addr`, the certificate
    /// checked against `ca_pem` (the managed server's) or `ca_file`;
    /// `None` for `disabled`.
    pub(crate) fn new(
        mode: SslMode,
        addr: SocketAddr,
        ca_pem: Option<&str>,
        ca_file: Option<&std::path::Path>,
        wait: Duration,
    ) -> Result<Option<MysqlTls>, String> {
        let verify = match mode {
            SslMode::Disabled => return Ok(None),
            SslMode::Required => Verify::Insecure,
            SslMode::VerifyIdentity => {
                Verify::from_settings(None, ca_pem, ca_file, "ssl_mode = \"verify_identity\"")?
            }
        };
        let config = ClientTls {
            verify,
            versions: Versions::Both,
            resume: true,
            alpn: Vec::new(),
        }
        .config()?;
        let name = crate::tls::client::server_name(&addr.ip().to_string())?;
        Ok(Some(MysqlTls {
            mode,
            config,
            name,
            wait,
        }))
    }

    /// Opens a connection to `addr`: the greeting, the SSLRequest, TLS;
    /// the stream hands the greeting over first.
    pub(crate) fn open(&self, addr: SocketAddr) -> io::Result<(Stream, Negotiated)> {
        let mut sock = std::net::TcpStream::connect_timeout(&addr, self.wait)?;
        sock.set_nodelay(true)?;
        sock.set_read_timeout(Some(self.wait))?;
        sock.set_write_timeout(Some(self.wait))?;
        let mut header = [0u8; 4];
        sock.read_exact(&mut header)?;
        let len =
            usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
        let mut greeting = vec![0u8; len];
        sock.read_exact(&mut greeting)?;
        let request =
            ssl_request(&greeting).map_err(|e| io::Error::other(format!("{addr}: {e}")))?;
        sock.write_all(&request)?;
        let replay = [&header[..], &greeting].concat();
        Stream::tls(sock, &self.config, &self.name, self.wait, replay)
    }
}
