//! The TLS limiter: from a profile's folded on-CPU stacks, the share of
//! the server's CPU samples whose leaf frame is the TLS library's own
//! code (OpenSSL's `libcrypto` and `libssl`, named or, unsymbolised, as
//! inferno names their module: `[libcrypto.so.3]`), which a handshake per
//! connection makes the server's limit: key exchanges, signatures and
//! record encryption. The leaf only: a write called from `SSL_write` is
//! the kernel's time, not the library's.

use serde::Serialize;

/// The share of the server's samples in the TLS library from which a
/// CPU-bound point's limiter is "TLS crypto". On this project's VM, nginx
/// under a full handshake per request spent 63% there (perf report: 65%)
/// (`tests/fixtures/flames/nginx-tls-full-handshakes.folded`).
pub const TLS_BOUND_SHARE: f64 = 0.40;

/// Leaf frames of the TLS library: the modules' names, as inferno writes
/// an unsymbolised frame, and the prefixes of OpenSSL's exported and
/// assembly functions.
pub const TLS_FRAMES: [&str; 38] = [
    "[libcrypto",
    "[libssl",
    "BN_",
    "bn_",
    "EVP_",
    "SSL_",
    "ssl3_",
    "ssl_",
    "tls_",
    "tls1_",
    "tls13_",
    "ossl_",
    "OSSL_",
    "OPENSSL_",
    "ecp_nistz256",
    "ec_",
    "ecx_",
    "x25519",
    "X25519",
    "aesni_",
    "aes_",
    "gcm_",
    "sha256_",
    "sha512_",
    "sha1_",
    "SHA",
    "HMAC",
    "CRYPTO_",
    "EC_",
    "ECDSA_",
    "ECDH",
    "RSA_",
    "ERR_",
    "ASN1_",
    "X509",
    "OBJ_",
    "ChaCha20",
    "Poly1305",
];

/// How much of a profile went to the TLS library.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TlsShare {
    /// The share of all the profile's samples.
    pub share: f64,
    /// Whether it reaches [`TLS_BOUND_SHARE`].
    pub limits: bool,
}

impl TlsShare {
    /// `TLS crypto: 60% of server CPU in the TLS library (libcrypto,
    /// libssl)`.
    pub fn verdict(&self) -> String {
        format!(
            "{}: {:.0}% of server CPU in the TLS library (libcrypto, libssl)",
            if self.limits {
                "TLS crypto"
            } else {
                "TLS crypto below the limit"
            },
            self.share * 100.0
        )
    }
}

fn is_tls(frame: &str) -> bool {
    !frame.ends_with("_[k]") && TLS_FRAMES.iter().any(|p| frame.starts_with(p))
}

/// The TLS library's share of `folded`; `None` when no sample's leaf is
/// in it.
pub fn find(folded: &str) -> Option<TlsShare> {
    let (mut all, mut tls) = (0u64, 0u64);
    for line in folded.lines() {
        let Some((stack, weight)) = line.trim().rsplit_once(' ') else {
            continue;
        };
        let Ok(w) = weight.parse::<u64>() else {
            continue;
        };
        all += w;
        if stack.rsplit(';').next().is_some_and(is_tls) {
            tls += w;
        }
    }
    (tls > 0).then(|| {
        let share = tls as f64 / all as f64;
        TlsShare {
            share,
            limits: share >= TLS_BOUND_SHARE,
        }
    })
}

/// Where a profile of a (system, point) spent the limit's share in the
/// TLS library and the point's trials said CPU, the point's limiter
/// becomes "TLS crypto" with the profile's verdict (a kernel lock found
/// first is kept: the locks are the more specific finding).
pub fn apply(agg: &mut super::rows::Aggregate, profiles: &[crate::store::ProfileRecord]) {
    use crate::record::probe::limiter::LimiterKind;
    super::profiled::relimit(agg, profiles, LimiterKind::TlsCrypto, |folded| {
        find(folded).filter(|t| t.limits).map(|t| t.verdict())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real profile: nginx (1 worker) on this project's VM under a full
    /// TLS 1.3 handshake per request (`scalelab load http --connreqs 1
    /// --no-tls-resume`), `perf record -e cpu-clock -g` of the worker,
    /// folded by inferno as the profile trial folds.
    #[test]
    fn full_handshakes_put_nginx_past_the_limit_in_the_tls_library() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/flames/nginx-tls-full-handshakes.folded"
        );
        let folded = std::fs::read_to_string(path).unwrap();
        let t = find(&folded).unwrap();
        // perf report --sort dso of the same perf.data: libcrypto.so.3
        // 58.74% and libssl.so.3 6.05% of the samples' leaves, 64.8%.
        assert!((t.share * 100.0 - 64.8).abs() <= 5.0, "{t:?}");
        assert!(t.limits);
        assert!(t.verdict().starts_with("TLS crypto: "), "{}", t.verdict());
    }

    #[test]
    fn kernel_frames_and_callers_are_not_the_library() {
        let folded = "nginx;SSL_write;__libc_write;ksys_write_[k] 70\nnginx;SSL_do_handshake;[libcrypto.so.3] 20\nnginx;main 10\n";
        let t = find(folded).unwrap();
        assert_eq!(t.share, 0.20, "the write under SSL_write is the kernel's");
        assert!(!t.limits);
        assert_eq!(find("nginx;main 10\n"), None);
    }

    #[test]
    fn a_cpu_bound_point_whose_profile_is_tls_is_limited_by_it() {
        use crate::record::probe::limiter::LimiterKind;
        let (data, index) = crate::judging::test_support::cpu_bound_with_profile(
            "a",
            "peak",
            "n;SSL_do_handshake;[libcrypto.so.3] 55\nn;g 45\n",
        );
        let agg = crate::judging::analyse::aggregate(&data);
        let l = agg
            .cells
            .iter()
            .find(|c| c.point.index == index)
            .and_then(|c| c.limiter.as_ref())
            .unwrap();
        assert_eq!(l.kind, LimiterKind::TlsCrypto);
        assert!(
            l.verdict.starts_with("TLS crypto: 55% of server CPU"),
            "{}",
            l.verdict
        );
        assert!(
            l.verdict.contains("the trials said: server CPU"),
            "{}",
            l.verdict
        );
    }
}
