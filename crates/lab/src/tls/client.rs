//! The load generators' side of TLS: one rustls client configuration per
//! run (its session cache shared by the connections, so resumption works
//! across them), the server name a URL's host gives, a blocking probe
//! handshake that fails early and clearly, and what was negotiated.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How the server's certificate is checked.
#[derive(Clone, Debug, PartialEq)]
pub enum Verify {
    /// Against the CA certificates of `pem`; `from` says where they came
    /// from, for errors ("--cacert ca.pem", "the managed server's CA").
    Ca {
        /// PEM text of one or more CA certificates.
        pem: String,
        /// Where it came from.
        from: String,
    },
    /// Not at all (`-k`/`--insecure`, `tls_verify = false`), which the
    /// output says.
    Insecure,
}

impl Verify {
    /// How a load's settings ask the certificate to be checked: not at all
    /// (`tls_verify = false`), against the run's managed server's CA
    /// (`ca_pem`), or against `ca_file`; `needs` says what the settings are
    /// for when none is given ("an https:// URL").
    pub fn from_settings(
        tls_verify: Option<bool>,
        ca_pem: Option<&str>,
        ca_file: Option<&std::path::Path>,
        needs: &str,
    ) -> Result<Verify, String> {
        if tls_verify == Some(false) {
            return Ok(Verify::Insecure);
        }
        if let Some(pem) = ca_pem {
            return Ok(Verify::Ca {
                pem: pem.to_string(),
                from: "the managed server's CA".into(),
            });
        }
        let Some(file) = ca_file else {
            return Err(format!(
                "{needs} needs the CA that signed the server's certificate: --cacert FILE (a \
                 recipe's `ca_file`), or -k/--insecure (`tls_verify = false`) not to check it"
            ));
        };
        let pem = std::fs::read_to_string(file).map_err(|e| {
            format!(
                "`ca_file` {}: {e}; name a PEM file of the CA that signed the server's \
                 certificate",
                file.display()
            )
        })?;
        Ok(Verify::Ca {
            pem,
            from: format!("`ca_file` {}", file.display()),
        })
    }
}

/// The TLS versions a client offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Versions {
    /// TLS 1.3, then 1.2.
    #[default]
    Both,
    /// TLS 1.2 only.
    Tls12,
    /// TLS 1.3 only.
    Tls13,
}

impl Versions {
    /// `"1.2"`, `"1.3"`; anything else is refused with the choices.
    pub fn parse(s: &str) -> Result<Versions, String> {
        match s {
            "1.2" => Ok(Versions::Tls12),
            "1.3" => Ok(Versions::Tls13),
            _ => Err(format!(
                "TLS version `{s}`: use \"1.2\" or \"1.3\" (default: both, 1.3 preferred)"
            )),
        }
    }
}

/// What a client asks of TLS.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientTls {
    /// How the certificate is checked.
    pub verify: Verify,
    /// The versions offered.
    pub versions: Versions,
    /// Whether sessions are resumed (tickets, or TLS 1.2 session IDs).
    pub resume: bool,
    /// ALPN protocols offered, most wanted first (`h2`, `http/1.1`).
    pub alpn: Vec<Vec<u8>>,
}

/// What a handshake settled.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Negotiated {
    /// `TLSv1_3`.
    pub version: String,
    /// `TLS13_AES_128_GCM_SHA256`.
    pub cipher: String,
    /// The key exchange group (`X25519`); none on a resumed TLS 1.2
    /// session.
    #[serde(default)]
    pub group: Option<String>,
    /// The ALPN protocol the server chose, if any.
    pub alpn: Option<String>,
}

impl Negotiated {
    /// What `conn`'s finished handshake settled.
    pub fn of(conn: &rustls::ClientConnection) -> Negotiated {
        Negotiated {
            version: conn
                .protocol_version()
                .map_or("unknown".into(), |v| format!("{v:?}")),
            cipher: conn
                .negotiated_cipher_suite()
                .map_or("unknown".into(), |c| format!("{:?}", c.suite())),
            group: conn
                .negotiated_key_exchange_group()
                .map(|g| format!("{:?}", g.name())),
            alpn: conn
                .alpn_protocol()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
        }
    }
}

/// rustls's version and crypto provider, for the fingerprint.
pub const LIBRARY: &str = "rustls 0.23 (ring)";

/// ring's provider. rustls 0.23.48 deprecates it for having no
/// post-quantum key exchange; the servers scalelab measures here (nginx,
/// Unbound, PostgreSQL and MariaDB on Debian's OpenSSL 3.0) offer none
/// either, and so do the peers (wrk, h2load, dnsperf), so X25519 is what a
/// handshake costs on both sides. aws-lc-rs would need cmake and doubles
/// the TLS stack's build.
///
/// Its key exchange groups are put in OpenSSL's order (X25519, P-256,
/// P-384), the order wrk, h2load, curl and dnsperf offer: rustls 0.23.48
/// offers P-384 first, for which OpenSSL 3.0 has only its generic bignum
/// code, and a new connection per request then cost nginx 8 times the CPU
/// (554 handshakes a second against wrk's 4,446, nginx's one CPU full both
/// times, `bench/http-vs-wrk.sh -T`).
#[allow(deprecated)]
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    use rustls::crypto::ring::kx_group;
    let mut p = rustls::crypto::ring::default_provider();
    p.kx_groups = vec![kx_group::X25519, kx_group::SECP256R1, kx_group::SECP384R1];
    Arc::new(p)
}

impl ClientTls {
    /// The client configuration all of a run's connections share.
    pub fn config(&self) -> Result<Arc<ClientConfig>, String> {
        let versions: &[&'static rustls::SupportedProtocolVersion] = match self.versions {
            Versions::Both => &[&rustls::version::TLS13, &rustls::version::TLS12],
            Versions::Tls12 => &[&rustls::version::TLS12],
            Versions::Tls13 => &[&rustls::version::TLS13],
        };
        let builder = ClientConfig::builder_with_provider(provider())
            .with_protocol_versions(versions)
            .map_err(|e| format!("TLS versions: {e}"))?;
        let mut config = match &self.verify {
            Verify::Ca { pem, from } => builder
                .with_root_certificates(roots(pem, from)?)
                .with_no_client_auth(),
            Verify::Insecure => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider())))
                .with_no_client_auth(),
        };
        config.alpn_protocols = self.alpn.clone();
        if !self.resume {
            config.resumption = rustls::client::Resumption::disabled();
        }
        Ok(Arc::new(config))
    }
}

/// The CA certificates of `pem`; an error names `from` and the fix.
fn roots(pem: &str, from: &str) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
        let cert = cert.map_err(|e| format!("{from}: not a PEM certificate: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("{from}: not a CA certificate rustls can use: {e}"))?;
    }
    if roots.is_empty() {
        return Err(format!(
            "{from}: holds no PEM certificate (-----BEGIN CERTIFICATE-----); give the CA \
             that signed the server's certificate"
        ));
    }
    Ok(roots)
}

/// The name a URL's host gives TLS: an IP address or a DNS name.
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(bare.to_string())
        .map_err(|e| format!("`{bare}` is not a name TLS can check a certificate against: {e}"))
}

/// Why a handshake with `target` failed, in words with the fix.
pub fn describe(e: &rustls::Error, target: &str) -> String {
    match e {
        rustls::Error::InvalidCertificate(_) => format!(
            "the TLS certificate of {target} does not verify ({e}); name the CA that signed it \
             with --cacert FILE (a recipe's `ca_file`), or do not check it with -k/--insecure \
             (`tls_verify = false`)"
        ),
        rustls::Error::NoApplicationProtocol
        | rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol) => {
            format!(
                "{target} serves none of the ALPN protocols asked for ({e}): for HTTP/2 (ALPN \
                 h2) serve it there (nginx: `http2 = true`), or ask for HTTP/1.1 (--http 1.1)"
            )
        }
        _ => format!("TLS handshake with {target} failed: {e}"),
    }
}

/// One blocking handshake with `addr` (within `timeout`), before a run:
/// what it settled, or why it failed, in words.
pub fn probe(
    addr: SocketAddr,
    name: &ServerName<'static>,
    config: &Arc<ClientConfig>,
    timeout: Duration,
) -> Result<Negotiated, String> {
    let target = addr.to_string();
    let mut sock = std::net::TcpStream::connect_timeout(&addr, timeout)
        .map_err(|e| format!("cannot connect to {target}: {e}"))?;
    sock.set_read_timeout(Some(timeout)).ok();
    sock.set_write_timeout(Some(timeout)).ok();
    let mut conn = rustls::ClientConnection::new(config.clone(), name.clone())
        .map_err(|e| describe(&e, &target))?;
    while conn.is_handshaking() {
        match conn.complete_io(&mut sock) {
            Ok(_) => {}
            Err(e) => {
                return Err(
                    match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                        Some(t) => describe(t, &target),
                        None if e.kind() == std::io::ErrorKind::UnexpectedEof => format!(
                        "{target} closed the connection during the TLS handshake; does it speak \
                         TLS on this port? (use an http:// URL for a cleartext server)"
                    ),
                        None => format!("TLS handshake with {target} failed: {e}"),
                    },
                );
            }
        }
    }
    let got = Negotiated::of(&conn);
    conn.send_close_notify();
    let _ = conn.complete_io(&mut sock);
    Ok(got)
}

/// One blocking exchange over TLS with `addr`: sends `request`, and
/// returns what the server answered until it closed, or `limit` bytes.
/// For readiness checks and tests.
pub fn exchange(
    addr: SocketAddr,
    name: &ServerName<'static>,
    config: &Arc<ClientConfig>,
    timeout: Duration,
    request: &[u8],
    limit: usize,
) -> Result<Vec<u8>, String> {
    use std::io::{Read, Write};
    let target = addr.to_string();
    let sock = std::net::TcpStream::connect_timeout(&addr, timeout)
        .map_err(|e| format!("cannot connect to {target}: {e}"))?;
    sock.set_read_timeout(Some(timeout)).ok();
    sock.set_write_timeout(Some(timeout)).ok();
    let conn = rustls::ClientConnection::new(config.clone(), name.clone())
        .map_err(|e| describe(&e, &target))?;
    let mut tls = rustls::StreamOwned::new(conn, sock);
    let io_err =
        |e: std::io::Error| match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
            Some(t) => describe(t, &target),
            None => format!("TLS exchange with {target} failed: {e}"),
        };
    tls.write_all(request).map_err(io_err)?;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while out.len() < limit {
        match tls.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(io_err(e)),
        }
    }
    Ok(out)
}

/// Accepts any certificate, but still checks the handshake's signatures
/// (as curl's `-k` does not check the chain).
#[derive(Debug)]
struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Whether the certificate in `cert_file` verifies for `name` against
/// the CAs of `ca_pem` (tests).
#[cfg(test)]
pub(crate) fn verifies(
    ca_pem: &str,
    cert_file: &std::path::Path,
    name: &str,
) -> Result<(), String> {
    let roots = roots(ca_pem, "test")?;
    let verifier =
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
            .map_err(|e| e.to_string())?;
    let cert = CertificateDer::from_pem_file(cert_file).map_err(|e| e.to_string())?;
    verifier
        .verify_server_cert(&cert, &[], &server_name(name)?, &[], UnixTime::now())
        .map(|_| ())
        .map_err(|e| format!("{e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_empty_ca_is_named_with_the_fix() {
        let tls = |pem: &str| ClientTls {
            verify: Verify::Ca {
                pem: pem.into(),
                from: "--cacert /x/ca.pem".into(),
            },
            versions: Versions::Both,
            resume: true,
            alpn: Vec::new(),
        };
        let err = tls("hello").config().unwrap_err();
        assert!(
            err.starts_with("--cacert /x/ca.pem: holds no PEM certificate"),
            "{err}"
        );
        assert_eq!(Versions::parse("1.3"), Ok(Versions::Tls13));
        assert!(Versions::parse("1.1")
            .unwrap_err()
            .contains("\"1.2\" or \"1.3\""));
        assert!(server_name("127.0.0.1").is_ok());
        assert!(server_name("[::1]").is_ok());
        assert!(server_name("bad name").unwrap_err().contains("bad name"));
    }
}
