//! What an `https://` trial records beside the shared measurement: what
//! the handshakes settled and how many there were, full and resumed.

use crate::load::facts::{StoredFacts, TrialFacts};

/// An HTTPS trial's TLS.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TlsFacts {
    /// The protocol version the first handshake settled (`TLSv1_3`).
    pub version: String,
    /// Its cipher suite (`TLS13_AES_256_GCM_SHA384`).
    pub cipher: String,
    /// Its key exchange group (`X25519`).
    #[serde(default)]
    pub group: Option<String>,
    /// The ALPN protocol the server chose, if any.
    pub alpn: Option<String>,
    /// Whether the server's certificate was checked.
    pub verified: bool,
    /// Whether sessions were offered for resumption.
    pub resume: bool,
    /// Full handshakes finished in the window.
    pub handshakes_full: u64,
    /// Resumed sessions in the window.
    pub handshakes_resumed: u64,
    /// Handshakes that failed.
    pub handshakes_failed: u64,
    /// The client's TLS library ([`crate::tls::client::LIBRARY`]).
    pub client_library: String,
}

impl TlsFacts {
    /// Every finished handshake.
    pub fn handshakes(&self) -> u64 {
        self.handshakes_full + self.handshakes_resumed
    }
}

impl StoredFacts for TlsFacts {
    const KEY: &'static str = "tls";
}

impl TrialFacts for TlsFacts {
    fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.verified {
            out.push(
                "the server's TLS certificate was not checked (-k/--insecure, tls_verify = false)"
                    .into(),
            );
        }
        out
    }
}
