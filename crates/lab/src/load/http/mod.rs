//! The native HTTP/1.1 load driver (closed loop like wrk, constant rate
//! like wrk2 `-R`), over TCP or TLS.
//!
//! - `codec`: sans-IO request serialisation and response parsing.
//! - `conn`: a connection, plain or TLS (rustls as a state machine);
//!   `facts`: what an HTTPS trial records of its handshakes.
//! - `worker`: one mio event loop per thread over its share of connections;
//!   `plan`: what each worker is given; `pacer`: open-loop scheduling.
//! - `sys`: clock, connect from a chosen source address, timerfd, pinning.
//! - `url`: the `http[s]://host:port/path` endpoint.

pub(crate) mod codec;
mod conn;
pub mod facts;
pub(crate) mod h2frame;
mod h2worker;
mod pacer;
mod plan;
pub(crate) mod sys;
pub(crate) mod url;
mod worker;

use crate::load::gather::Gathered;
use crate::load::{
    process_cpu, raise_fd_limit, Driver, ErrorKind, LoadError, LoadResult, LoadSpec, Pacing,
};
use crate::shutdown::Shutdown;
use crate::tls;
use plan::{Assignment, Extra, OpenLoop, Plan};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use url::HttpUrl;

/// The `http` load kind.
pub const LOAD_KIND: crate::load::LoadKind = crate::load::LoadKind {
    name: "http",
    protocol: crate::model::Protocol::HTTP,
    unit: crate::units::RateUnit::Requests,
    error_kinds: ErrorKind::REQUEST_REPLY,
    requires: &[],
    compile: |t| {
        let settings = HttpSettings::parse(t)?;
        Ok(crate::load::kind::plan(
            settings,
            |s, endpoint| Ok(Box::new(HttpDriver::new(s.clone(), endpoint)?)),
            crate::load::kind::no_dataset,
        ))
    },
    facts: Some(crate::load::facts::FactsReader::of::<facts::TlsFacts>()),
};

/// Kind-specific settings of an HTTP load (the experiment's `[load]` table).
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSettings {
    /// Request path (and query); overrides the endpoint URL's path.
    pub path: Option<String>,
    /// Request method; `GET` when absent.
    pub method: Option<String>,
    /// Extra request headers, each `"Name: value"`.
    #[serde(default)]
    pub headers: Vec<String>,
    /// Request body (sent with a `Content-Length`).
    pub body: Option<String>,
    /// Spread connections over the source addresses 127.0.0.1..=127.0.0.N,
    /// so short-connection sweeps do not run out of ephemeral ports.
    pub source_addrs: Option<u32>,
    /// `https://`: the CA certificates (a PEM file) that verify the
    /// server's certificate, as curl's `--cacert`.
    pub ca_file: Option<std::path::PathBuf>,
    /// The same as PEM text. A run sets it to its managed server's own CA.
    pub ca_pem: Option<String>,
    /// `https://`: check the server's certificate (default true; false is
    /// curl's `-k`, and the output says so).
    pub tls_verify: Option<bool>,
    /// `https://`: offer only TLS `"1.2"` or `"1.3"` (default: both, 1.3
    /// preferred).
    pub tls_version: Option<String>,
    /// `https://`: resume sessions across connections (default true).
    pub tls_resume: Option<bool>,
    /// The HTTP version: `"1.1"` (default) or `"2"` (over TLS by ALPN
    /// `h2`, or over cleartext with prior knowledge, `h2c`).
    pub http: Option<String>,
    /// HTTP/2: requests in flight on each connection (h2load's `-m`);
    /// default 1.
    pub streams: Option<u32>,
}

impl HttpSettings {
    /// Reads and checks the `[load]` table of kind `http`; errors name the
    /// field.
    pub fn parse(settings: &toml::Table) -> Result<HttpSettings, LoadError> {
        let s: HttpSettings = crate::kinds::parse_settings(settings).map_err(LoadError::Spec)?;
        s.validate()?;
        Ok(s)
    }

    /// Checks the values serde cannot, naming the field and the fix.
    pub fn validate(&self) -> Result<(), LoadError> {
        let bad = |m: String| Err(LoadError::Spec(m));
        if let Some(p) = &self.path {
            url::check_path(p).map_err(|e| LoadError::Spec(format!("`path`: {e}")))?;
        }
        let method = self.method();
        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
            return bad(format!(
                "`method` = `{method}` is not an HTTP method; use GET, POST, HEAD, ..."
            ));
        }
        for h in &self.headers {
            parse_header(h).map_err(LoadError::Spec)?;
        }
        match self.http.as_deref() {
            None | Some("1.1") | Some("2") => {}
            Some(v) => return bad(format!("`http` = \"{v}\": use \"1.1\" or \"2\"")),
        }
        if let Some(n) = self.streams {
            if !self.http2() {
                return bad("`streams` needs `http = \"2\"`".into());
            }
            if !(1..=1024).contains(&n) {
                return bad(format!("`streams` = {n}: use 1 to 1024"));
            }
        }
        if let Some(v) = &self.tls_version {
            tls::client::Versions::parse(v)
                .map_err(|e| LoadError::Spec(format!("`tls_version`: {e}")))?;
        }
        if let Some(n) = self.source_addrs {
            if !(1..=254).contains(&n) {
                return bad(format!(
                    "`source_addrs` = {n}: use 1 to 254 (127.0.0.1 to 127.0.0.N)"
                ));
            }
        }
        Ok(())
    }

    /// The request method; `GET` when unset.
    pub fn method(&self) -> &str {
        self.method.as_deref().unwrap_or("GET")
    }

    /// Whether HTTP/2 is asked for.
    pub fn http2(&self) -> bool {
        self.http.as_deref() == Some("2")
    }

    /// Whether any TLS setting is given.
    fn names_tls(&self) -> bool {
        self.ca_file.is_some()
            || self.tls_verify.is_some()
            || self.tls_version.is_some()
            || self.tls_resume.is_some()
    }

    /// What TLS the settings ask for: the CA (the run's, then `ca_file`),
    /// or no check; an error says what to give.
    fn client_tls(&self) -> Result<tls::client::ClientTls, LoadError> {
        use tls::client::{ClientTls, Verify, Versions};
        let verify = Verify::from_settings(
            self.tls_verify,
            self.ca_pem.as_deref(),
            self.ca_file.as_deref(),
            "an https:// URL",
        )
        .map_err(LoadError::Spec)?;
        let versions = match &self.tls_version {
            Some(v) => Versions::parse(v).map_err(LoadError::Spec)?,
            None => Versions::Both,
        };
        Ok(ClientTls {
            verify,
            versions,
            resume: self.tls_resume.unwrap_or(true),
            alpn: vec![if self.http2() {
                b"h2".to_vec()
            } else {
                b"http/1.1".to_vec()
            }],
        })
    }
}

/// Splits `"Name: value"`, refusing what would corrupt the request.
pub fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("header `{text}` has no `:`; write it as \"Name: value\""))?;
    let name = name.trim();
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) {
        return Err(format!("header `{text}` has an invalid name `{name}`"));
    }
    if value.contains(['\r', '\n']) {
        return Err(format!("header `{name}` has a line break in its value"));
    }
    Ok((name.to_string(), value.trim().to_string()))
}

/// Drives an HTTP/1.1 server on loopback.
#[derive(Debug)]
pub struct HttpDriver {
    url: HttpUrl,
    addr: SocketAddr,
    settings: HttpSettings,
    /// `https://`: what TLS the connections ask for.
    tls: Option<tls::client::ClientTls>,
}

impl HttpDriver {
    /// Builds the driver from the `[load]` table's HTTP settings, aimed at
    /// `endpoint` (`http://127.0.0.1:8080` or with a path).
    #[cfg(test)]
    pub(crate) fn from_settings(
        settings: &toml::Table,
        endpoint: &str,
    ) -> Result<HttpDriver, LoadError> {
        HttpDriver::new(HttpSettings::parse(settings)?, endpoint)
    }

    /// Builds the driver from already-parsed settings.
    pub fn new(settings: HttpSettings, endpoint: &str) -> Result<HttpDriver, LoadError> {
        settings.validate()?;
        let target_err = |reason: String| LoadError::Target {
            target: endpoint.to_string(),
            reason,
        };
        let mut url = HttpUrl::parse(endpoint).map_err(target_err)?;
        let addr = url.resolve().map_err(target_err)?;
        if settings.source_addrs.is_some() && !(addr.is_ipv4() && addr.ip().is_loopback()) {
            return Err(target_err(
                "`source_addrs` needs an IPv4 loopback target (127.x.x.x)".into(),
            ));
        }
        if let Some(p) = &settings.path {
            url.path = p.clone();
        }
        let tls = if url.tls {
            Some(settings.client_tls()?)
        } else if settings.names_tls() {
            return Err(target_err(
                "TLS settings (`ca_file`, `tls_verify`, `tls_version`, `tls_resume`) need an \
                 https:// URL"
                    .into(),
            ));
        } else {
            None
        };
        Ok(HttpDriver {
            url,
            addr,
            settings,
            tls,
        })
    }

    /// The URL requests go to (with the `path` setting applied).
    pub fn url(&self) -> String {
        format!(
            "{}://{}{}",
            self.url.scheme(),
            self.url.host_header(),
            self.url.path
        )
    }

    fn plan(&self, spec: &LoadSpec) -> Result<Plan, LoadError> {
        let headers = self
            .settings
            .headers
            .iter()
            .map(|h| parse_header(h).map_err(LoadError::Spec))
            .collect::<Result<Vec<_>, _>>()?;
        let body = self.settings.body.as_deref().map(str::as_bytes);
        let method = self.settings.method();
        let host = self.url.host_header();
        let build =
            |close| codec::build_request(method, &self.url.path, &host, &headers, body, close);
        let request = build(false);
        Ok(Plan {
            addr: self.addr,
            // Only a request that may span several segments can be held
            // back by Nagle; one small write per round trip never is. TLS
            // writes twice in a row (the handshake's Finished, then the
            // first request), and Nagle held the second for the server's
            // delayed ACK: 457 new connections a second against 3,578
            // with TCP_NODELAY (bench/http-vs-wrk.sh -T, close mode).
            nodelay: request.len() > 1400 || self.tls.is_some(),
            last_request: build(true),
            request,
            head_request: method.eq_ignore_ascii_case("HEAD"),
            source_addrs: self.settings.source_addrs.unwrap_or(0),
            requests_per_connection: spec.requests_per_connection,
            timeout_ns: duration_ns(spec.timeout).max(1),
            // A new socket per request would re-arm a poll per request.
            // TLS may hold decrypted bytes the socket no longer shows, which
            // a poll of the socket would wait past.
            coalesce: spec.coalesce && spec.requests_per_connection.is_none() && self.tls.is_none(),
            tls: self.tls_plan()?,
            h2: self.h2_plan(&headers)?,
        })
    }

    /// HTTP/2's request block and streams, when it is asked for.
    fn h2_plan(&self, headers: &[(String, String)]) -> Result<Option<plan::H2Plan>, LoadError> {
        if !self.settings.http2() {
            return Ok(None);
        }
        if self.settings.body.is_some() {
            return Err(LoadError::Spec(
                "`body` is not supported with HTTP/2 yet".into(),
            ));
        }
        let block = h2frame::request_block(
            self.settings.method(),
            self.url.scheme(),
            &self.url.host_header(),
            &self.url.path,
            headers,
        )
        .map_err(LoadError::Spec)?;
        Ok(Some(plan::H2Plan {
            block,
            streams: self.settings.streams.unwrap_or(1),
        }))
    }

    /// The TLS connections' shared configuration; a fresh session cache
    /// for each run.
    fn tls_plan(&self) -> Result<Option<conn::TlsPlan>, LoadError> {
        let Some(t) = &self.tls else { return Ok(None) };
        let target_err = |reason: String| LoadError::Target {
            target: self.url(),
            reason,
        };
        Ok(Some(conn::TlsPlan {
            config: t.config().map_err(LoadError::Spec)?,
            name: tls::client::server_name(&self.url.host).map_err(target_err)?,
        }))
    }

    /// One handshake before the run, without resumption (so that the run's
    /// first connections are not resumed from it): a certificate that does
    /// not verify, or a server that does not speak TLS, is an error before
    /// any load, in words.
    fn probe_tls(&self, plan: &Plan, timeout: Duration) -> Result<(), LoadError> {
        let Some(t) = &plan.tls else { return Ok(()) };
        let mut once = (*t.config).clone();
        once.resumption = rustls::client::Resumption::disabled();
        let target_err = |reason: String| LoadError::Target {
            target: self.url(),
            reason,
        };
        let got = tls::client::probe(self.addr, &t.name, &std::sync::Arc::new(once), timeout)
            .map_err(target_err)?;
        if plan.h2.is_some() && got.alpn.as_deref() != Some("h2") {
            return Err(target_err(format!(
                "HTTP/2 was asked for, but the server chose ALPN {}, not h2: it does not serve \
                 HTTP/2 there (nginx: `http2 = true`), or ask for HTTP/1.1 (--http 1.1)",
                got.alpn.as_deref().unwrap_or("none")
            )));
        }
        Ok(())
    }
}

impl Driver for HttpDriver {
    fn name(&self) -> &'static str {
        "http"
    }

    fn run(&self, spec: &LoadSpec, shutdown: &Shutdown) -> Result<LoadResult, LoadError> {
        spec.validate()?;
        if self.settings.http2() {
            refuse_for_h2(spec)?;
        }
        check_cpus(spec.client_cpus.as_deref())?;
        check_fd_budget(spec.connections)?;
        let plan = self.plan(spec)?;
        self.probe_tls(&plan, spec.timeout.max(Duration::from_secs(1)))?;
        let jobs = assignments(spec, sys::now_ns());
        let cpu_before = process_cpu();
        let started = Instant::now();
        let mut result = LoadResult::new();
        let mut extra = Extra::default();
        let one = |job| match &plan.h2 {
            Some(h2) => h2worker::run(&plan, h2, job, shutdown),
            None => worker::run(&plan, job, shutdown),
        };
        for outcome in super::run_threads("http", jobs, one) {
            let (r, e) = outcome?;
            result.merge(&r);
            extra = merge_extra(extra, e);
        }
        result.elapsed = started.elapsed();
        result.client_cpu = process_cpu() - cpu_before;
        if let Pacing::Open { rate } = spec.pacing {
            result.target_rate = Some(rate);
        }
        if let Some(t) = &self.tls {
            let facts = facts::TlsFacts {
                connections: spec.connections,
                window_s: result.elapsed.as_secs_f64(),
                client_cpu_s: result.client_cpu.0,
                ..tls_facts(t, &extra.tls)
            };
            result.extras = crate::load::TrialExtras::new(facts);
        }
        let from_workers = std::mem::take(&mut result.notes);
        result.notes = notes(&result, &extra, self.addr);
        result.notes.extend(from_workers);
        if spec.coalesce && !plan.coalesce {
            result.notes.push(if self.tls.is_some() {
                "--coalesce waits on the sockets, but TLS may hold decrypted responses a \
                 socket no longer shows: over https this run did not coalesce"
                    .into()
            } else {
                "--coalesce needs keep-alive connections (it would re-arm a poll per new \
                 socket): with --connreqs this run did not coalesce"
                    .into()
            });
        }
        Ok(result)
    }
}

/// What HTTP/2 does not do yet, refused by name.
fn refuse_for_h2(spec: &LoadSpec) -> Result<(), LoadError> {
    let no = |what: &str| {
        Err(LoadError::Spec(format!(
            "{what} is not supported with HTTP/2 yet; leave it out, or use HTTP/1.1"
        )))
    };
    if spec.requests_per_connection.is_some() {
        return no("`connreqs`");
    }
    if matches!(spec.pacing, Pacing::Open { .. }) {
        return no("a rate (open loop)");
    }
    if spec.coalesce {
        return no("--coalesce");
    }
    Ok(())
}

/// Refuses client CPUs this machine does not have.
fn check_cpus(cpus: Option<&[usize]>) -> Result<(), LoadError> {
    let online = crate::placement::online_cpus();
    match cpus {
        Some(c) if c.is_empty() || c.iter().any(|&i| i >= online) => Err(LoadError::Spec(format!(
            "client CPUs {c:?} do not exist here: this machine has CPUs 0 to {}",
            online - 1
        ))),
        _ => Ok(()),
    }
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Refuses a connection count the open-files limit cannot hold.
fn check_fd_budget(connections: u32) -> Result<(), LoadError> {
    let limit = raise_fd_limit();
    let need = u64::from(connections) + 64;
    if need > limit {
        return Err(LoadError::Spec(format!(
            "{connections} connections need about {need} file descriptors, but the \
             open-files limit is {limit}; lower the connection count or raise `ulimit -n`"
        )));
    }
    Ok(())
}

/// Splits connections, the request quota and the rate over the threads.
fn assignments(spec: &LoadSpec, start_ns: u64) -> Vec<Assignment> {
    let threads = spec.effective_threads();
    let deadline_ns = if spec.duration.is_zero() {
        u64::MAX
    } else {
        start_ns.saturating_add(duration_ns(spec.duration))
    };
    let open = match spec.pacing {
        Pacing::Closed => None,
        Pacing::Open { rate } => {
            let stagger_ns = 1e9 / rate;
            Some(OpenLoop {
                interval_ns: ((stagger_ns * f64::from(spec.connections)) as u64).max(1),
                stagger_ns,
            })
        }
    };
    let mut first_client = 0;
    (0..threads)
        .map(|t| {
            let connections = spec.connections_for_thread(t);
            let quota = spec
                .max_requests
                .map(|m| m / u64::from(threads) + u64::from(u64::from(t) < m % u64::from(threads)));
            let job = Assignment {
                connections,
                first_client,
                quota,
                start_ns,
                deadline_ns,
                open,
                cpus: spec.client_cpus.clone(),
            };
            first_client += connections;
            job
        })
        .collect()
}

fn merge_extra(a: Extra, b: Extra) -> Extra {
    Extra {
        addr_not_avail: a.addr_not_avail + b.addr_not_avail,
        fd_exhausted: a.fd_exhausted + b.fd_exhausted,
        stalled: a.stalled || b.stalled,
        server_closed_first: a.server_closed_first + b.server_closed_first,
        client_closed_first: a.client_closed_first + b.client_closed_first,
        gathered: Gathered::merge(a.gathered, b.gathered),
        tls: a.tls.merge(b.tls),
        h2_server_limit: a.h2_server_limit.or(b.h2_server_limit),
    }
}

/// What the run's handshakes settled and how many there were.
fn tls_facts(t: &tls::client::ClientTls, tally: &plan::TlsTally) -> facts::TlsFacts {
    let n = tally.negotiated.clone();
    facts::TlsFacts {
        version: n.as_ref().map_or("none".into(), |n| n.version.clone()),
        cipher: n.as_ref().map_or("none".into(), |n| n.cipher.clone()),
        group: n.as_ref().and_then(|n| n.group.clone()),
        alpn: n.and_then(|n| n.alpn),
        verified: t.verify != tls::client::Verify::Insecure,
        resume: t.resume,
        handshakes_full: tally.full,
        handshakes_resumed: tally.resumed,
        handshakes_failed: tally.failed,
        client_library: tls::client::LIBRARY.into(),
        connections: 0,
        window_s: 0.0,
        client_cpu_s: 0.0,
    }
}

/// Plain-words warnings for what the counters alone would hide.
fn notes(r: &LoadResult, extra: &Extra, addr: SocketAddr) -> Vec<String> {
    let mut notes = Vec::new();
    if extra.addr_not_avail > 0 {
        let range =
            sys::local_port_range().map_or("unknown".to_string(), |(lo, hi)| format!("{lo} {hi}"));
        notes.push(format!(
            "ephemeral ports exhausted: {} connects failed with EADDRNOTAVAIL; \
             net.ipv4.ip_local_port_range is {range}; use source_addrs = N or a \
             cooldown between trials",
            extra.addr_not_avail
        ));
    }
    if extra.fd_exhausted > 0 {
        notes.push(format!(
            "open-files limit reached: {} sockets could not be created (EMFILE/ENFILE); \
             lower the connection count",
            extra.fd_exhausted
        ));
    }
    let retired = extra.server_closed_first + extra.client_closed_first;
    if extra.client_closed_first > 1000 && extra.client_closed_first * 10 > retired {
        notes.push(format!(
            "{} of {retired} connections were closed by scalelab before the server's FIN \
             arrived, so their TIME_WAIT holds client ports",
            extra.client_closed_first
        ));
    }
    if let Some(g) = extra.gathered {
        notes.push(g.note());
    }
    if let Some(m) = extra.h2_server_limit {
        notes.push(format!(
            "the server allows {m} concurrent streams per connection (its SETTINGS), fewer than \
             asked: {m} were kept in flight"
        ));
    }
    if let Some(why) = &extra.tls.first_failure {
        notes.push(format!(
            "{} TLS handshakes failed (counted as connect errors); the first: {why}",
            extra.tls.failed
        ));
    }
    if extra.stalled {
        notes.push("stopped early: no request completed for several seconds".into());
    }
    if r.connections_opened == 0 && r.errors.connect > extra.addr_not_avail {
        notes.push(format!(
            "no connection could be made: all {} connects to {addr} failed; is the server running?",
            r.errors.connect
        ));
    }
    if let Some(target) = r.target_rate {
        let achieved = r.rps();
        if achieved < 0.95 * target {
            notes.push(format!(
                "achieved {achieved:.0} req/s, below the target {target:.0} req/s: the server \
                 or the connections could not keep up; latencies include the wait from each \
                 request's scheduled time"
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn settings_parse_and_name_bad_fields() {
        let s = HttpSettings::parse(&table(
            "path = \"/x\"\nmethod = \"POST\"\nheaders = [\"X-A: 1\"]\nbody = \"{}\"\nsource_addrs = 4",
        ))
        .unwrap();
        assert_eq!(s.method(), "POST");
        assert_eq!(s.source_addrs, Some(4));
        for (text, needle) in [
            ("pth = \"/x\"", "pth"),
            ("path = \"x\"", "path"),
            ("method = \"G T\"", "method"),
            ("headers = [\"NoColon\"]", "NoColon"),
            ("source_addrs = 0", "source_addrs"),
            ("source_addrs = 300", "source_addrs"),
        ] {
            let err = HttpSettings::parse(&table(text)).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn driver_refuses_remote_and_bad_urls() {
        let none = toml::Table::new();
        assert!(HttpDriver::from_settings(&none, "http://127.0.0.1:9/").is_ok());
        let err = HttpDriver::from_settings(&none, "http://192.0.2.1:80/").unwrap_err();
        assert!(err.to_string().contains("[hosts]"), "{err}");
        let err = HttpDriver::from_settings(&none, "https://127.0.0.1/").unwrap_err();
        assert!(err.to_string().contains("--cacert FILE"), "{err}");
        assert!(
            HttpDriver::from_settings(&table("tls_verify = false"), "https://127.0.0.1/").is_ok()
        );
        let err = HttpDriver::from_settings(&table("tls_verify = false"), "http://127.0.0.1/")
            .unwrap_err();
        assert!(err.to_string().contains("need an https:// URL"), "{err}");
        let err = HttpDriver::from_settings(
            &table("ca_file = \"/nonexistent/ca.pem\""),
            "https://127.0.0.1/",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("`ca_file` /nonexistent/ca.pem"),
            "{err}"
        );
        let err = HttpSettings::parse(&table("tls_version = \"1.0\"")).unwrap_err();
        assert!(err.to_string().contains("`tls_version`"), "{err}");
        let d = HttpDriver::from_settings(&table("path = \"/p?q\""), "http://127.0.0.1:8080/a")
            .unwrap();
        assert_eq!(d.url(), "http://127.0.0.1:8080/p?q");
    }

    #[test]
    fn port_exhaustion_and_shortfalls_are_told_in_words() {
        let mut r = LoadResult::new();
        r.errors.connect = 1234;
        r.target_rate = Some(1000.0);
        r.elapsed = Duration::from_secs(1);
        r.requests = 500;
        let extra = Extra {
            addr_not_avail: 1234,
            ..Extra::default()
        };
        let notes = notes(&r, &extra, "127.0.0.1:80".parse().unwrap());
        let all = notes.join("\n");
        assert!(all.contains("ephemeral ports exhausted: 1234 connects failed with EADDRNOTAVAIL"));
        assert!(all.contains("ip_local_port_range is "));
        assert!(all.contains("source_addrs"));
        assert!(all.contains("achieved 500 req/s, below the target 1000"));
    }

    #[test]
    fn missing_client_cpus_are_refused() {
        assert!(check_cpus(None).is_ok());
        assert!(check_cpus(Some(&[0])).is_ok());
        let err = check_cpus(Some(&[4096])).unwrap_err().to_string();
        assert!(err.contains("4096") && err.contains("CPUs 0 to"), "{err}");
    }

    #[test]
    fn quota_and_rate_split_exactly() {
        let mut spec = LoadSpec::closed(7, 3, Duration::from_secs(1));
        spec.max_requests = Some(1000);
        spec.pacing = Pacing::Open { rate: 700.0 };
        let jobs = assignments(&spec, 0);
        let quotas: Vec<u64> = jobs.iter().map(|j| j.quota.unwrap()).collect();
        assert_eq!(quotas, vec![334, 333, 333]);
        let firsts: Vec<u32> = jobs.iter().map(|j| j.first_client).collect();
        assert_eq!(firsts, vec![0, 3, 5]);
        let open = jobs[0].open.unwrap();
        // 7 connections at 700/s in total: each sends every 10 ms.
        assert_eq!(open.interval_ns, 10_000_000);
    }
}
