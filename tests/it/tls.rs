//! HTTPS against real nginx (`tls = true`, its own CA per start): the
//! requests, handshakes and resumed sessions scalelab counts agree with
//! nginx's access log (`$connection`, `$ssl_protocol`,
//! `$ssl_session_reused`); a certificate that does not verify, a cleartext
//! server and one that closes mid-handshake are errors in words.

use scalelab::load::http::facts::TlsFacts;
use scalelab::load::http::{HttpDriver, HttpSettings};
use scalelab::load::{Driver, LoadResult, LoadSpec};
use scalelab::placement::Placement;
use scalelab::server::{self, Server};
use scalelab::shutdown::Shutdown;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct TlsNginx {
    _server: Box<dyn Server>,
    url: String,
    ca_pem: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl TlsNginx {
    fn start(extra: &str) -> TlsNginx {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("access.log");
        let settings: toml::Table = toml::from_str(&format!(
            "worker_processes = 1\nworker_connections = 4096\ntls = true\n\
             access_log_path = {log:?}\n{extra}"
        ))
        .unwrap();
        let mut server = server::compile(&server::nginx::SERVER_KIND, &settings)
            .and_then(|plan| plan.build(dir.path()))
            .unwrap();
        let mut last = None;
        for _ in 0..3 {
            match server.start(&Placement::unconstrained(), None, &Shutdown::new()) {
                Ok(ep) => {
                    assert!(ep.uri.starts_with("https://"), "{}", ep.uri);
                    return TlsNginx {
                        _server: server,
                        url: format!("{}/", ep.uri),
                        ca_pem: ep.ca_pem.expect("a TLS server hands out its CA"),
                        log,
                        _dir: dir,
                    };
                }
                Err(e) => last = Some(e),
            }
        }
        panic!("nginx did not start: {last:?}");
    }

    fn settings(&self) -> HttpSettings {
        HttpSettings {
            ca_pem: Some(self.ca_pem.clone()),
            ..HttpSettings::default()
        }
    }

    /// The access log's lines, once it has `n` of them (or after 5 s).
    fn lines_once(&self, n: usize) -> Vec<String> {
        let read = || -> Vec<String> {
            std::fs::read_to_string(&self.log)
                .unwrap_or_default()
                .lines()
                .map(str::to_string)
                .collect()
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while read().len() < n && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        read()
    }
}

/// What nginx logged of a run: requests, connections (distinct
/// `$connection`), the first request of each connection with a reused
/// session, and the protocols seen.
#[derive(Debug, Default)]
struct Logged {
    requests: u64,
    connections: BTreeSet<u64>,
    reused: u64,
    protocols: BTreeSet<String>,
}

fn logged(lines: &[String]) -> Logged {
    let mut l = Logged::default();
    for line in lines {
        // addr conn conn_requests "GET / HTTP/1.1" status ssl_protocol reused server_protocol
        let f: Vec<&str> = line.split_whitespace().collect();
        let n = f.len();
        assert!(n >= 9, "{line}");
        l.requests += 1;
        l.connections.insert(f[1].parse().unwrap());
        if f[2] == "1" && f[n - 2] == "r" {
            l.reused += 1;
        }
        l.protocols.insert(f[n - 3].to_string());
    }
    l
}

fn run(url: &str, settings: HttpSettings, connreqs: Option<u32>, n: u64) -> LoadResult {
    let mut spec = LoadSpec::closed(8, 2, Duration::from_secs(60));
    spec.max_requests = Some(n);
    spec.requests_per_connection = connreqs;
    HttpDriver::new(settings, url)
        .unwrap()
        .run(&spec, &Shutdown::new())
        .unwrap()
}

fn facts(r: &LoadResult) -> &TlsFacts {
    r.extras
        .get::<TlsFacts>()
        .expect("an https run records its TLS")
}

#[test]
fn requests_handshakes_and_resumed_sessions_agree_with_nginx_s_access_log() {
    let nginx = TlsNginx::start("");
    // The start's readiness check is the log's first line.
    let mut seen = nginx.lines_once(1).len();
    let mut check = |name: &str, settings: HttpSettings, connreqs: Option<u32>, n: u64| {
        let r = run(&nginx.url, settings, connreqs, n);
        assert_eq!(r.requests, n, "{name}: {:?} {:?}", r.errors, r.notes);
        assert_eq!(r.errors.total(), 0, "{name}: {:?}", r.errors);
        let lines = nginx.lines_once(seen + n as usize);
        let log = logged(&lines[seen..]);
        seen = lines.len();
        let t = facts(&r).clone();
        eprintln!(
            "{name}: {t:?}; nginx: {} connections, {} reused",
            log.connections.len(),
            log.reused
        );
        assert_eq!(log.requests, n, "{name}");
        assert_eq!(log.connections.len() as u64, t.handshakes(), "{name}");
        assert_eq!(r.connections_opened, t.handshakes(), "{name}");
        assert_eq!(log.reused, t.handshakes_resumed, "{name}");
        assert!(t.verified);
        (t, log)
    };
    let (t, log) = check("keep-alive", nginx.settings(), None, 3000);
    assert_eq!((t.handshakes_full, t.handshakes_resumed), (8, 0));
    assert_eq!(t.version, "TLSv1_3");
    assert_eq!(log.protocols, BTreeSet::from(["TLSv1.3".to_string()]));
    let (t, _) = check(
        "a new connection per request",
        nginx.settings(),
        Some(1),
        2000,
    );
    assert_eq!(t.handshakes(), 2000);
    assert!(t.handshakes_resumed > 1000, "tickets are used: {t:?}");
    let (t, _) = check(
        "no resumption",
        HttpSettings {
            tls_resume: Some(false),
            ..nginx.settings()
        },
        Some(1),
        500,
    );
    assert_eq!((t.handshakes_full, t.handshakes_resumed), (500, 0));
    let (t, log) = check(
        "TLS 1.2",
        HttpSettings {
            tls_version: Some("1.2".into()),
            ..nginx.settings()
        },
        Some(1),
        500,
    );
    assert_eq!(t.version, "TLSv1_2");
    assert_eq!(log.protocols, BTreeSet::from(["TLSv1.2".to_string()]));
    assert!(
        t.handshakes_resumed > 250,
        "TLS 1.2 tickets are used: {t:?}"
    );
}

fn run_err(url: &str, settings: HttpSettings) -> String {
    let spec = LoadSpec::closed(2, 1, Duration::from_millis(300));
    HttpDriver::new(settings, url)
        .unwrap()
        .run(&spec, &Shutdown::new())
        .unwrap_err()
        .to_string()
}

/// Another start's CA (a CA of its own, made in this test's directory).
fn other_ca(dir: &Path) -> String {
    let ip = "127.0.0.1".parse().unwrap();
    scalelab::tls::cert::make(dir, Default::default(), &["localhost"], &[ip])
        .unwrap()
        .ca_pem
}

#[test]
fn a_certificate_that_does_not_verify_is_an_error_naming_the_host_and_the_fix() {
    let nginx = TlsNginx::start("");
    let dir = tempfile::tempdir().unwrap();
    let wrong = HttpSettings {
        ca_pem: Some(other_ca(dir.path())),
        ..HttpSettings::default()
    };
    let err = run_err(&nginx.url, wrong);
    let host = nginx
        .url
        .trim_start_matches("https://")
        .trim_end_matches('/');
    assert!(
        err.contains(&format!("the TLS certificate of {host} does not verify")),
        "{err}"
    );
    assert!(
        err.contains("--cacert FILE") && err.contains("-k/--insecure"),
        "{err}"
    );
    // Not checked: the run goes on, and says so.
    let insecure = HttpSettings {
        tls_verify: Some(false),
        ..HttpSettings::default()
    };
    let r = run(&nginx.url, insecure, None, 200);
    assert_eq!(r.requests, 200);
    assert!(!facts(&r).verified);
    use scalelab::load::facts::TrialFacts;
    assert!(
        facts(&r).notes()[0].contains("not checked"),
        "{:?}",
        facts(&r).notes()
    );
}

#[test]
fn a_cleartext_server_and_one_that_closes_mid_handshake_are_errors_in_words() {
    // nginx without TLS answers the ClientHello with an HTTP 400.
    let dir = tempfile::tempdir().unwrap();
    let settings: toml::Table = toml::from_str("worker_processes = 1").unwrap();
    let mut plain = server::compile(&server::nginx::SERVER_KIND, &settings)
        .and_then(|plan| plan.build(dir.path()))
        .unwrap();
    let ep = plain
        .start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap();
    let url = ep.uri.replace("http://", "https://");
    let insecure = || HttpSettings {
        tls_verify: Some(false),
        ..HttpSettings::default()
    };
    let err = run_err(&url, insecure());
    assert!(err.contains("TLS handshake with 127.0.0.1:"), "{err}");
    // A server that reads the ClientHello and closes.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let closer = std::thread::spawn(move || {
        use std::io::Read;
        if let Ok((mut s, _)) = listener.accept() {
            let mut buf = [0u8; 512];
            let _ = s.read(&mut buf);
        }
    });
    let err = run_err(&format!("https://127.0.0.1:{port}/"), insecure());
    closer.join().unwrap();
    assert!(
        err.contains("closed the connection during the TLS handshake"),
        "{err}"
    );
}

/// `tls_key = "rsa-2048"`: nginx serves an RSA certificate (its key made
/// by `openssl genpkey`), and TLS 1.2 then settles an ECDHE-RSA suite.
#[test]
fn an_rsa_certificate_is_served_and_named_in_the_cipher_suite() {
    let nginx = TlsNginx::start("tls_key = \"rsa-2048\"");
    let r = run(
        &nginx.url,
        HttpSettings {
            tls_version: Some("1.2".into()),
            ..nginx.settings()
        },
        None,
        100,
    );
    assert_eq!(r.requests, 100, "{:?}", r.errors);
    let t = facts(&r);
    assert!(t.cipher.starts_with("TLS_ECDHE_RSA_"), "{t:?}");
    assert_eq!(t.group.as_deref(), Some("X25519"), "{t:?}");
}

/// `ktls = true`: nginx starts with `ssl_conf_command Options KTLS`, and
/// each trial's server facts say what kernel TLS did, read from
/// `/proc/net/tls_stat`, or that it is unavailable where the file is
/// missing (this VM: no `tls` module); and nginx -V's library is named.
#[test]
fn kernel_tls_is_asked_and_its_sessions_or_absence_are_stored() {
    use scalelab::server::nginx_tls::NginxTlsFacts;
    let nginx = TlsNginx::start("ktls = true");
    let r = run(&nginx.url, nginx.settings(), Some(1), 200);
    assert_eq!(r.requests, 200, "{:?}", r.errors);
    let facts = nginx
        ._server
        .describe()
        .expect("an HTTPS nginx describes itself");
    let f = facts.get::<NginxTlsFacts>().unwrap();
    assert!(f.ktls_asked);
    assert!(f.tls_library.starts_with("OpenSSL 3"), "{f:?}");
    if std::path::Path::new("/proc/net/tls_stat").exists() {
        assert!(
            f.ktls.contains("sessions taken over by the kernel"),
            "{f:?}"
        );
    } else {
        assert!(f.ktls.starts_with("unavailable: no kernel TLS"), "{f:?}");
    }
    let err = server::compile(
        &server::nginx::SERVER_KIND,
        &toml::from_str("ktls = true").unwrap(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("need `tls = true`"), "{err}");
}

/// HTTP/2 over TLS (ALPN `h2`) with 10 streams per connection: the
/// requests equal nginx's access log, every one `HTTP/2.0` on the 8
/// connections the run opened; and a server without HTTP/2 is named.
#[test]
fn http2_streams_agree_with_nginx_s_access_log_and_a_server_without_h2_is_named() {
    let nginx = TlsNginx::start("http2 = true");
    let seen = nginx.lines_once(1).len();
    let h2 = || HttpSettings {
        http: Some("2".into()),
        streams: Some(10),
        ..nginx.settings()
    };
    let r = run(&nginx.url, h2(), None, 3000);
    assert_eq!(r.requests, 3000, "{:?} {:?}", r.errors, r.notes);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.connections_opened, 8);
    assert_eq!(facts(&r).alpn.as_deref(), Some("h2"));
    let lines = nginx.lines_once(seen + 3000);
    let log = logged(&lines[seen..]);
    assert_eq!(log.requests, 3000);
    assert_eq!(log.connections.len(), 8);
    assert!(
        lines[seen..].iter().all(|l| l.ends_with(" HTTP/2.0")),
        "{:?}",
        &lines[seen]
    );
    let plain = TlsNginx::start("");
    let err = run_err(
        &plain.url,
        HttpSettings {
            http: Some("2".into()),
            ..plain.settings()
        },
    );
    assert!(
        err.contains("serves none of the ALPN protocols asked for") && err.contains("http2 = true"),
        "{err}"
    );
}

/// Cleartext HTTP/2 with prior knowledge (`h2c`): nginx `http2 = true`
/// without TLS serves it; its access log counts the requests.
#[test]
fn h2c_with_prior_knowledge_agrees_with_nginx_s_access_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let settings: toml::Table =
        toml::from_str(&format!("http2 = true\naccess_log_path = {log:?}")).unwrap();
    let mut nginx = server::compile(&server::nginx::SERVER_KIND, &settings)
        .and_then(|plan| plan.build(dir.path()))
        .unwrap();
    let ep = nginx
        .start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap();
    let count = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let before = count();
    let settings = HttpSettings {
        http: Some("2".into()),
        streams: Some(4),
        ..HttpSettings::default()
    };
    let r = run(&format!("{}/", ep.uri), settings, None, 1000);
    assert_eq!(r.requests, 1000, "{:?} {:?}", r.errors, r.notes);
    assert_eq!(r.errors.total(), 0);
    let deadline = Instant::now() + Duration::from_secs(5);
    while count() < before + 1000 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(count() - before, 1000);
}

/// `--coalesce` over https: TLS may hold decrypted responses the socket no
/// longer shows, so the run does not coalesce, and says why; its count is
/// the usual one.
#[test]
fn coalescing_is_not_done_over_tls_and_the_run_says_why() {
    let nginx = TlsNginx::start("");
    let mut spec = LoadSpec::closed(8, 1, Duration::from_secs(60));
    spec.max_requests = Some(500);
    spec.coalesce = true;
    let r = HttpDriver::new(nginx.settings(), &nginx.url)
        .unwrap()
        .run(&spec, &Shutdown::new())
        .unwrap();
    assert_eq!(r.requests, 500, "{:?}", r.errors);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("over https this run did not coalesce")),
        "{:?}",
        r.notes
    );
}
