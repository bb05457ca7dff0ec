//! What an nginx serving TLS records with every trial: the TLS library
//! it was built with (`nginx -V`), its certificate's key, and whether
//! kernel TLS took its sessions over (`ktls = true`: `ssl_conf_command
//! Options KTLS`, read back from `/proc/net/tls_stat`, or unavailable).

/// An HTTPS nginx's facts, stored as the trial's `server_settings`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NginxTlsFacts {
    /// `OpenSSL 3.0.22 25 Aug 2026 (running with OpenSSL 3.0.19 27 Jan
    /// 2026)`, as `nginx -V` says.
    pub tls_library: String,
    /// `ecdsa-p256` or `rsa-2048`.
    pub key: String,
    /// `ssl_protocols`.
    pub protocols: String,
    /// Whether kernel TLS was asked for (`ktls = true`).
    pub ktls_asked: bool,
    /// What kernel TLS did: `unavailable: no kernel TLS (...)`, or the
    /// sessions it took over since the server started.
    pub ktls: String,
}

impl super::ServerDescription for NginxTlsFacts {
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
    fn clone_box(&self) -> Box<dyn super::ServerDescription> {
        Box::new(self.clone())
    }
}

/// The TLS library of `nginx -V`'s `built with ...` line, with the one
/// it runs with where they differ.
pub fn library(nginx_v: &str) -> Option<String> {
    let line = nginx_v
        .lines()
        .find_map(|l| l.strip_prefix("built with "))?;
    Some(line.trim().to_string())
}

/// Kernel TLS's sessions now, or why there are none to read.
pub fn ktls_now() -> Result<crate::procfs::system::KtlsSessions, String> {
    let text = crate::procfs::system::tls_stat().ok_or_else(|| {
        "unavailable: no kernel TLS (no /proc/net/tls_stat: the `tls` module is not loaded \
         or not built)"
            .to_string()
    })?;
    crate::procfs::system::parse_tls_stat(&text)
        .ok_or_else(|| "unavailable: /proc/net/tls_stat has no TlsTxSw or TlsRxSw".to_string())
}

/// What kernel TLS did between `at_start` and now, in words.
pub fn ktls_since(at_start: &Result<crate::procfs::system::KtlsSessions, String>) -> String {
    match (at_start, &ktls_now()) {
        (Err(why), _) | (_, Err(why)) => why.clone(),
        (Ok(a), Ok(b)) => format!(
            "{} transmit and {} receive sessions taken over by the kernel since the server \
             started (TlsTxSw+TlsTxDevice, TlsRxSw+TlsRxDevice; the whole host's)",
            b.tx.saturating_sub(a.tx),
            b.rx.saturating_sub(a.rx)
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_library_is_what_nginx_was_built_with() {
        let v = "nginx version: nginx/1.22.1\nbuilt with OpenSSL 3.0.17 1 Jul 2025 (running with OpenSSL 3.0.18 30 Sep 2025)\nTLS SNI support enabled\n";
        assert_eq!(
            super::library(v).as_deref(),
            Some("OpenSSL 3.0.17 1 Jul 2025 (running with OpenSSL 3.0.18 30 Sep 2025)")
        );
        assert_eq!(super::library("nginx version: nginx/1.22.1\n"), None);
    }
}
