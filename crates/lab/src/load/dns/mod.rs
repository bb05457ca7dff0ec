//! DNS over UDP: a dnsperf/resperf-class generator.
//!
//! - `queries`: dnsperf-format query files, and Zipf-drawn query sets;
//! - the wire side (the question, templates and response matching, `ask`,
//!   the setup session) is [`crate::wire::dns`];
//! - `schedule`: when queries are due (flat with an outstanding cap, fixed
//!   rate, resperf's linear ramp);
//! - `worker`: the loop (match answers by ID, expire, send what is due);
//!   `transport`: how it moves datagrams, chosen by [`Generator`]: `sys`,
//!   UDP sockets with `sendmmsg`/`recvmmsg` batching, or `xdp`, an AF_XDP
//!   socket (see [`crate::load::xdp`]) on the interface towards the server;
//! - `tally`/`ramp`: per-thread counts, merged, and the ramp summary;
//!   `chart`: the ramp's chart (answered against offered rate), as data
//!   the report draws.
//!
//! The endpoint is `dns://ADDR:PORT`, optionally `?netns=NAME`: worker
//! threads then `setns()` into that namespace before opening sockets. Without
//! one, only loopback addresses are accepted, unless scalelab itself already
//! runs inside a private namespace (`ip netns exec`).

mod chart;
mod client_limit;
pub mod facts;
pub mod queries;
pub use doh::DohMethod;
pub(crate) mod ramp;
pub use ramp::{at_least as ramp_at_least, Ramp, RampSecond};
mod doh;
pub(crate) mod schedule;
mod sys;
pub(crate) mod tally;
mod tcp;
mod transport;
mod worker;
mod xdp;

use super::{Driver, ErrorKind, LoadError, LoadResult, LoadSpec, Pacing};
use crate::shutdown::Shutdown;
use crate::wire::dns::codec::{self, Template};
use facts::Datagrams;
use queries::QuerySetSpec;
use schedule::{Mode, Schedule};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tally::Tally;

/// The `dns` entry of the load-kind registry.
pub const LOAD_KIND: crate::load::LoadKind = crate::load::LoadKind {
    name: "dns",
    protocol: crate::model::Protocol::DNS,
    unit: crate::units::RateUnit::Queries,
    error_kinds: ErrorKind::REQUEST_REPLY,
    requires: &[crate::kinds::Requirement {
        what: "ip (the DNS lab's network namespaces)",
        package: "iproute2",
        paths: &["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"],
    }],
    compile: |t| {
        let settings = DnsSettings::parse(t)?;
        Ok(Box::new(DnsPlan(settings)))
    },
    facts: Some(crate::load::facts::FactsReader::of::<facts::Datagrams>()),
};

/// The `dns` kind's compiled settings.
struct DnsPlan(DnsSettings);

impl crate::load::kind::LoadPlan for DnsPlan {
    fn driver(&self, endpoint: &str) -> Result<Box<dyn Driver>, LoadError> {
        Ok(Box::new(DnsDriver::new(self.0.clone(), endpoint)?))
    }

    fn dataset(&self) -> Option<crate::model::Dataset> {
        Some(self.0.dataset())
    }

    fn threads_at_most(&self) -> Option<crate::load::kind::ThreadLimit> {
        (self.0.generator == Generator::Xdp).then_some(crate::load::kind::ThreadLimit {
            threads: 1,
            why: XDP_ONE_THREAD,
        })
    }
}

/// Why the xdp generator runs one thread, and what to do instead.
const XDP_ONE_THREAD: &str = "the xdp generator runs one thread (one AF_XDP socket on the \
     interface's queue 0): set threads to 1, or use generator = \"socket\"";

/// Where the queries come from: a dnsperf-format file, or a set drawn
/// from the lab's names.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub enum QuerySource {
    /// A dnsperf-format query file (`queries = "path"`).
    File(PathBuf),
    /// A set generated from the lab's names (`queries = { names = ... }`).
    Generated(QuerySetSpec),
}

/// The `[load]` settings of kind `dns`.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DnsSettings {
    /// The queries asked, in order, each worker starting at its own offset.
    pub queries: QuerySource,
    /// Hosts in the lab's zones: the workload's dataset, which the DNS lab
    /// serves. By default the generated query set's `names`, else 10000.
    pub names: Option<u32>,
    /// Flat mode's cap on queries in flight (dnsperf -q).
    #[serde(default = "default_outstanding")]
    pub max_outstanding: u32,
    /// Ramp mode: the rate rises linearly from 0 to this over the run
    /// (resperf -m, with -r the trial duration).
    pub max_rate: Option<f64>,
    /// How queries leave: `auto` (AF_XDP where the server's address has an
    /// XDP path, UDP sockets on loopback), `xdp` or `socket`.
    #[serde(default)]
    pub generator: Generator,
    /// What carries the queries: `udp` (default), `tcp` (RFC 7766, a
    /// connection per socket with many queries in flight on it; dnsperf's
    /// `-m tcp`), `dot` (the same inside TLS, RFC 7858; `-m dot`) or `doh`
    /// (HTTP/2 inside TLS, a stream per query, RFC 8484; `-m doh`).
    #[serde(default)]
    pub transport: DnsTransport,
    /// `doh`: POST (default) or GET (dnsperf's `-O doh-method=`).
    #[serde(default)]
    pub doh_method: doh::DohMethod,
    /// `doh`: the endpoint's path (default `/dns-query`, dnsperf's and
    /// Unbound's).
    pub doh_path: Option<String>,
    /// `dot` and `doh`: the CA certificates (a PEM file) that verify the server's
    /// certificate, as curl's `--cacert`.
    pub ca_file: Option<PathBuf>,
    /// The same as PEM text. A run sets it to its managed server's own CA.
    pub ca_pem: Option<String>,
    /// `dot`: check the server's certificate (default true; false is
    /// `-k`, and the output says so).
    pub tls_verify: Option<bool>,
}

/// What carries a DNS load's queries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DnsTransport {
    /// Datagrams.
    #[default]
    Udp,
    /// TCP, each message with its two-byte length, pipelined.
    Tcp,
    /// TCP's framing inside TLS (DNS over TLS, RFC 7858), port 853.
    Dot,
    /// HTTP/2 inside TLS, a stream per query (DNS over HTTPS, RFC 8484),
    /// port 443.
    Doh,
}

impl DnsTransport {
    /// The transport called `text`.
    pub fn parse(text: &str) -> Result<DnsTransport, String> {
        match text {
            "udp" => Ok(DnsTransport::Udp),
            "tcp" => Ok(DnsTransport::Tcp),
            "dot" => Ok(DnsTransport::Dot),
            "doh" => Ok(DnsTransport::Doh),
            _ => Err(format!(
                "unknown transport `{text}`; use udp, tcp, dot or doh"
            )),
        }
    }

    /// Whether messages go over a TCP connection (TCP, DoT or DoH).
    pub fn is_stream(self) -> bool {
        !matches!(self, DnsTransport::Udp)
    }

    /// Whether messages go inside TLS (DoT or DoH).
    pub fn is_tls(self) -> bool {
        matches!(self, DnsTransport::Dot | DnsTransport::Doh)
    }
}

impl<'de> serde::Deserialize<'de> for DnsTransport {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        DnsTransport::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// How the DNS generator moves its datagrams.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Generator {
    /// AF_XDP where the server's address is reached through an interface
    /// (not loopback) and the load runs on one thread; else sockets.
    #[default]
    Auto,
    /// AF_XDP: frames built here, on an XDP socket's rings; one thread.
    Xdp,
    /// Connected UDP sockets with `sendmmsg`/`recvmmsg`.
    Socket,
}

impl Generator {
    /// Every generator, as `--generator` and the recipe's `generator` name them.
    pub const ALL: [Generator; 3] = [Generator::Auto, Generator::Xdp, Generator::Socket];

    /// The name a recipe and `--generator` use.
    pub fn name(self) -> &'static str {
        match self {
            Generator::Auto => "auto",
            Generator::Xdp => "xdp",
            Generator::Socket => "socket",
        }
    }

    /// The generator called `text`, or an error listing them.
    pub fn parse(text: &str) -> Result<Generator, String> {
        Generator::ALL
            .into_iter()
            .find(|g| g.name() == text)
            .ok_or_else(|| format!("unknown generator `{text}`; use auto, xdp or socket"))
    }
}

fn default_outstanding() -> u32 {
    100
}

/// Hosts in the lab's zones when neither `names` nor a generated query set
/// says.
pub const DEFAULT_NAMES: u32 = 10_000;
const MAX_HOSTS: u32 = crate::model::dns_names::MAX_HOSTS;

impl DnsSettings {
    /// Reads and checks the `[load]` table of kind `dns`; errors name the
    /// field.
    pub fn parse(t: &toml::Table) -> Result<Self, LoadError> {
        let s: DnsSettings = crate::kinds::parse_settings(t).map_err(LoadError::Spec)?;
        s.validate()?;
        Ok(s)
    }

    fn validate(&self) -> Result<(), LoadError> {
        if self.transport.is_stream() && self.generator == Generator::Xdp {
            return Err(LoadError::Spec(
                "`generator = \"xdp\"` sends UDP only; with `transport = \"tcp\"`, \
                 \"dot\" or \"doh\" leave the generator out (or \"socket\")"
                    .into(),
            ));
        }
        let names_tls = self.ca_file.is_some() || self.tls_verify.is_some();
        if names_tls && !self.transport.is_tls() {
            return Err(LoadError::Spec(
                "`ca_file` and `tls_verify` are for `transport = \"dot\"` or \"doh\"; leave \
                 them out, or ask for DNS over TLS or HTTPS"
                    .into(),
            ));
        }
        let names_doh = self.doh_method != doh::DohMethod::Post || self.doh_path.is_some();
        if names_doh && self.transport != DnsTransport::Doh {
            return Err(LoadError::Spec(
                "`doh_method` and `doh_path` are for `transport = \"doh\"`; leave them out, \
                 or ask for DNS over HTTPS"
                    .into(),
            ));
        }
        if let Some(p) = self.doh_path.as_ref().filter(|p| !p.starts_with('/')) {
            return Err(LoadError::Spec(format!(
                "doh_path `{p}` must start with `/`, as `/dns-query`"
            )));
        }
        if self.max_outstanding == 0 {
            return Err(LoadError::Spec("max_outstanding must be at least 1".into()));
        }
        if let Some(m) = self.max_rate {
            if !(m.is_finite() && m > 0.0) {
                return Err(LoadError::Spec(
                    "max_rate must be a positive number of queries per second".into(),
                ));
            }
        }
        if let QuerySource::Generated(g) = &self.queries {
            g.validate()
                .map_err(|m| LoadError::Spec(format!("queries: {m}")))?;
        }
        if let Some(n) = self.names.filter(|n| !(1..=MAX_HOSTS).contains(n)) {
            return Err(LoadError::Spec(format!(
                "`names` must be 1 to {MAX_HOSTS} hosts in the lab's zones, got {n}"
            )));
        }
        Ok(())
    }

    /// The dataset these settings declare: the lab's zones with `names`
    /// hosts, by default those the query set is drawn from.
    pub fn dataset(&self) -> crate::model::Dataset {
        let drawn_from = match &self.queries {
            QuerySource::Generated(g) => Some(g.names),
            QuerySource::File(_) => None,
        };
        let hosts = self.names.or(drawn_from).unwrap_or(DEFAULT_NAMES);
        crate::model::Dataset::DnsZones {
            hosts,
            veth: self.generator == Generator::Xdp,
        }
    }

    /// The query templates, read or generated, then encoded once.
    fn templates(&self) -> Result<Vec<Template>, LoadError> {
        let parsed = match &self.queries {
            QuerySource::File(p) => queries::read_file(p),
            QuerySource::Generated(g) => queries::parse(&g.render(), "generated query set"),
        }
        .map_err(|e| LoadError::Spec(e.to_string()))?;
        parsed
            .iter()
            .map(Template::new)
            .collect::<Result<_, _>>()
            .map_err(LoadError::Spec)
    }
}

/// The DNS load generator.
pub struct DnsDriver {
    settings: DnsSettings,
    server: SocketAddr,
    netns: Option<String>,
    templates: Arc<Vec<Template>>,
    /// DoT and DoH: the run's TLS, and whether the certificate is checked.
    tls: Option<(tcp::DnsTls, bool)>,
}

/// RFC 8484's and Unbound's path for DNS over HTTPS.
pub const DOH_PATH: &str = "/dns-query";

impl DnsDriver {
    /// A driver from checked settings; encodes every query once, up front.
    pub fn new(settings: DnsSettings, endpoint: &str) -> Result<Self, LoadError> {
        settings.validate()?;
        let ways = parse_ways(endpoint)?;
        // The xdp generator takes the lab's veth path where there is one.
        let (server, netns) = match ways.veth {
            Some((addr, client)) if settings.generator == Generator::Xdp => (addr, Some(client)),
            _ if settings.transport == DnsTransport::Dot => (ways.dot_server(), ways.netns),
            _ if settings.transport == DnsTransport::Doh => (ways.doh_server(), ways.netns),
            _ => (ways.server, ways.netns),
        };
        let tls = match settings.transport {
            DnsTransport::Dot => Some(dns_tls(&settings, server, b"dot")?),
            DnsTransport::Doh => Some(dns_tls(&settings, server, b"h2")?),
            DnsTransport::Udp | DnsTransport::Tcp => None,
        };
        let templates = Arc::new(settings.templates()?);
        Ok(DnsDriver {
            settings,
            server,
            netns,
            templates,
            tls,
        })
    }

    /// The server's address the queries go to.
    pub fn server(&self) -> SocketAddr {
        self.server
    }

    fn mode(&self, spec: &LoadSpec) -> Mode {
        match (self.settings.max_rate, spec.pacing) {
            (Some(max_rate), _) => Mode::Ramp {
                max_rate,
                over: spec.duration,
            },
            (None, Pacing::Open { rate }) => Mode::Fixed { rate },
            (None, Pacing::Closed) => Mode::Flat {
                outstanding: self.settings.max_outstanding,
            },
        }
    }

    fn plans(&self, spec: &LoadSpec) -> Vec<worker::Plan> {
        let threads = spec.effective_threads();
        let mode = self.mode(spec);
        let duration = if spec.duration.is_zero() {
            Duration::from_secs(24 * 3600)
        } else {
            spec.duration
        };
        let n = self.templates.len();
        (0..threads)
            .map(|t| worker::Plan {
                server: self.server,
                netns: self.netns.clone(),
                sockets: spec.connections_for_thread(t),
                schedule: Schedule::new(mode, threads),
                duration,
                timeout: spec.timeout,
                templates: Arc::clone(&self.templates),
                first_query: t as usize * n / threads as usize,
                quota: spec.max_requests.map(|m| {
                    m / u64::from(threads) + u64::from(u64::from(t) < m % u64::from(threads))
                }),
                cpus: spec.client_cpus.clone(),
                per_second_latency: matches!(mode, Mode::Ramp { .. }),
                generator: match self.settings.generator {
                    Generator::Auto if threads > 1 => Generator::Socket,
                    g => g,
                },
                transport: self.settings.transport,
                tls: self.tls.as_ref().map(|(t, _)| t.clone()),
                doh: self.doh_plan(),
            })
            .collect()
    }
}

impl DnsDriver {
    /// DoH: what each connection's requests carry.
    fn doh_plan(&self) -> Option<doh::DohPlan> {
        let (tls, _) = self
            .tls
            .as_ref()
            .filter(|_| self.settings.transport == DnsTransport::Doh)?;
        Some(doh::DohPlan {
            tls: tls.clone(),
            method: self.settings.doh_method,
            authority: self.server.to_string(),
            path: self
                .settings
                .doh_path
                .clone()
                .unwrap_or_else(|| DOH_PATH.into()),
        })
    }
}

/// The TLS of a DoT or DoH load: the CA the settings name (or none
/// checked), TLS 1.3 then 1.2, ALPN `alpn` (`dot`, RFC 7858 §3.2; `h2`,
/// RFC 8484 §5.2), sessions resumed; the server's name is its address.
fn dns_tls(
    settings: &DnsSettings,
    server: SocketAddr,
    alpn: &[u8],
) -> Result<(tcp::DnsTls, bool), LoadError> {
    use crate::tls::client::{ClientTls, Verify, Versions};
    let what = match settings.transport {
        DnsTransport::Doh => "DNS over HTTPS (`transport = \"doh\"`)",
        _ => "DNS over TLS (`transport = \"dot\"`)",
    };
    let verify = Verify::from_settings(
        settings.tls_verify,
        settings.ca_pem.as_deref(),
        settings.ca_file.as_deref(),
        what,
    )
    .map_err(LoadError::Spec)?;
    let verified = verify != Verify::Insecure;
    let config = ClientTls {
        verify,
        versions: Versions::Both,
        resume: true,
        alpn: vec![alpn.to_vec()],
    }
    .config()
    .map_err(LoadError::Spec)?;
    let name = crate::tls::client::server_name(&server.ip().to_string()).map_err(|reason| {
        LoadError::Target {
            target: server.to_string(),
            reason,
        }
    })?;
    Ok((tcp::DnsTls { config, name }, verified))
}

/// The ways into a DNS target that an endpoint names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ways {
    /// The target's address (loopback in a lab).
    pub server: SocketAddr,
    /// The namespace to join to reach `server`; `None`: this one.
    pub netns: Option<String>,
    /// The lab's veth path, when it has one: the target's address on the
    /// veth and the client namespace on the pair's other end.
    pub veth: Option<(SocketAddr, String)>,
    /// Where the target serves DNS over TLS, when the endpoint says
    /// (`dot=ADDR:PORT`).
    pub dot: Option<SocketAddr>,
    /// Where it serves DNS over HTTPS, when the endpoint says
    /// (`doh=ADDR:PORT`).
    pub doh: Option<SocketAddr>,
}

impl Ways {
    /// Where DoT queries go: the endpoint's `dot=` (a managed server's TLS
    /// port), else the address it names.
    pub fn dot_server(&self) -> SocketAddr {
        self.dot.unwrap_or(self.server)
    }

    /// Where DoH queries go: the endpoint's `doh=`, else the address it
    /// names.
    pub fn doh_server(&self) -> SocketAddr {
        self.doh.unwrap_or(self.server)
    }
}

/// RFC 7858's port for DNS over TLS (dnsperf's default for `-m dot`).
pub const DOT_PORT: u16 = 853;

/// HTTPS's port, DNS over HTTPS's (dnsperf's default for `-m doh`).
pub const DOH_PORT: u16 = 443;

/// `dns://ADDR:PORT[?netns=NAME[&veth=ADDR:PORT@CLIENT][&dot=ADDR:PORT][&doh=ADDR:PORT]]`,
/// or plain `ADDR:PORT`.
pub fn parse_ways(endpoint: &str) -> Result<Ways, LoadError> {
    let bad = |reason: &str| LoadError::Target {
        target: endpoint.to_string(),
        reason: reason.to_string(),
    };
    let addr = |text: &str| -> Result<SocketAddr, LoadError> {
        let a: SocketAddr = text
            .parse()
            .map_err(|_| bad("expected ADDRESS:PORT, such as 127.0.0.1:53"))?;
        crate::load::limits::PORT
            .check(a.port().into())
            .map_err(|e| bad(&e))?;
        Ok(a)
    };
    let rest = endpoint.strip_prefix("dns://").unwrap_or(endpoint);
    let (server, query) = rest.split_once('?').unwrap_or((rest, ""));
    let server = addr(server)?;
    let (mut netns, mut veth, mut dot, mut doh) = (None, None, None, None);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("netns", n)) if !n.is_empty() => netns = Some(n.to_string()),
            Some(("netns", _)) => return Err(bad("`netns=` needs a namespace name")),
            Some(("veth", v)) => {
                let (a, ns) = v
                    .split_once('@')
                    .filter(|(_, ns)| !ns.is_empty())
                    .ok_or_else(|| bad("`veth=` needs ADDRESS:PORT@NAMESPACE"))?;
                veth = Some((addr(a)?, ns.to_string()));
            }
            Some(("dot", a)) => dot = Some(addr(a)?),
            Some(("doh", a)) => doh = Some(addr(a)?),
            _ => {
                return Err(bad(&format!(
                    "unknown `{pair}`; use netns=NAME, dot=ADDR:PORT or doh=ADDR:PORT"
                )))
            }
        }
    }
    if netns.is_none() && !server.ip().is_loopback() && !crate::sys::netns::in_private_namespace() {
        return Err(bad(
            "DNS load goes only to loopback addresses, or to any address from inside a \
             private network namespace (run under `ip netns exec NAME`)",
        ));
    }
    Ok(Ways {
        server,
        netns,
        veth,
        dot,
        doh,
    })
}

/// The endpoint's target and namespace ([`parse_ways`] without the veth).
pub fn parse_endpoint(endpoint: &str) -> Result<(SocketAddr, Option<String>), LoadError> {
    let w = parse_ways(endpoint)?;
    Ok((w.server, w.netns))
}

impl Driver for DnsDriver {
    fn name(&self) -> &'static str {
        "dns"
    }

    fn run(&self, spec: &LoadSpec, shutdown: &Shutdown) -> Result<LoadResult, LoadError> {
        spec.validate()?;
        if self.settings.generator == Generator::Xdp && spec.effective_threads() > 1 {
            return Err(LoadError::Spec(format!(
                "{} threads: {XDP_ONE_THREAD}",
                spec.effective_threads()
            )));
        }
        let plans = self.plans(spec);
        let cpu_before = super::process_cpu();
        let started = Instant::now();
        let mut total: Option<Tally> = None;
        for outcome in super::run_threads("dns", &plans, |plan| worker::run(plan, shutdown)) {
            let t = outcome.map_err(said_once)?;
            match &mut total {
                Some(acc) => acc.merge(&t),
                None => total = Some(t),
            }
        }
        let tally = total.ok_or_else(|| LoadError::Setup("no DNS load thread ran".into()))?;
        let carried = Carried {
            transport: self.settings.transport,
            verified: self.tls.as_ref().map(|(_, v)| *v),
        };
        let mut result = finish(tally, &self.mode(spec), carried);
        result.client_cpu = super::process_cpu() - cpu_before;
        if result.elapsed.is_zero() {
            result.elapsed = started.elapsed();
        }
        Ok(result)
    }
}

/// An XDP setup error, which a thread returns inside an `io::Error`, as
/// the setup error it is, said once (not again as each error's source).
fn said_once(e: LoadError) -> LoadError {
    let xdp = match &e {
        LoadError::Io(io) => io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<crate::load::xdp::XdpError>()),
        _ => None,
    };
    match xdp {
        Some(x) => LoadError::Setup(x.to_string()),
        None => e,
    }
}

/// What carried a run's queries: its transport and, for DoT, whether the
/// certificate was checked.
#[derive(Clone, Copy, Default)]
struct Carried {
    transport: DnsTransport,
    verified: Option<bool>,
}

/// Turns the merged tally into the run's result.
fn finish(t: Tally, mode: &Mode, carried: Carried) -> LoadResult {
    let mut result = t.result.clone();
    result.elapsed = Duration::from_nanos(t.elapsed_ns);
    let codes = t
        .rcodes
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(code, &n)| {
            let rc = hickory_proto::op::ResponseCode::from_low(code as u8);
            (codec::rcode_name(rc), n)
        })
        .collect();
    let answered = super::timeline::per_second(&t.result.timeline);
    let mut ramp = match mode {
        Mode::Ramp { .. } => Some(ramp::summarise(&ramp::Series {
            sent: &t.sent_by_sec,
            answered: &answered,
            lost: &t.lost_by_sec,
            latency: t.latency_by_sec.as_deref().unwrap_or(&[]),
        })),
        _ => None,
    };
    let (fell_behind, mut notes) = client_limit::judge(&t, ramp.as_ref());
    notes.extend(t.streams.note(carried.transport));
    if let (Some(r), Mode::Ramp { max_rate, .. }) = (&mut ramp, mode) {
        r.below_limit = ramp::below_limit(&r.seconds);
        if r.below_limit {
            let behind = t.fell_behind.is_some();
            notes.push(ramp::below_limit_note(*max_rate, r.max_throughput, behind));
        }
        r.notes.clone_from(&notes);
    }
    result.notes.extend(notes);
    if ramp.is_some() {
        // A ramp's lost queries are its measurement (resperf's "lost at
        // that point"), before the maximum as after it: they leave the
        // error counts the verdicts judge a point by, and stay in
        // `Datagrams::lost` and the ramp's seconds.
        result.errors.timeout = result.errors.timeout.saturating_sub(t.lost);
    }
    result.target_rate = match mode {
        Mode::Fixed { rate } => Some(*rate),
        Mode::Ramp { max_rate, .. } => Some(*max_rate),
        Mode::Flat { .. } => None,
    };
    if let Some(f) = &fell_behind {
        result.notes.push(f.clone());
    }
    result.extras = crate::load::facts::TrialExtras::new(Datagrams {
        sent: t.sent,
        lost: t.lost,
        mismatched: t.mismatched,
        codes,
        dropped_at_client: t.dropped(),
        fell_behind,
        ramp,
        ids_ran_out: ids_ran_out(&t.ids),
        transport: Some(carried.transport),
        tls: carried
            .verified
            .zip(t.tls.clone())
            .map(|(verified, negotiated)| facts::DnsTlsFacts {
                negotiated,
                verified,
                client_library: crate::tls::client::LIBRARY.into(),
            }),
    });
    if carried.verified == Some(false) {
        let over = match carried.transport {
            DnsTransport::Doh => "HTTPS",
            _ => "TLS",
        };
        result.notes.push(format!(
            "DNS over {over}: the server's certificate was not checked (tls_verify = false)"
        ));
    }
    result
}

/// The run's [`facts::IdsRanOut`], when its query IDs ran out.
fn ids_ran_out(ids: &tally::IdCount) -> Option<facts::IdsRanOut> {
    Some(facts::IdsRanOut {
        at_s: ids.ran_out_at?,
        ids: ids.ids,
        clients: ids.clients,
        timeout_s: ids.timeout.as_secs_f64(),
        max_rate: ids.max_rate(),
        fix: "add clients (-c, or connections) or shorten the timeout (--timeout)".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datagrams(r: &LoadResult) -> Datagrams {
        r.extras.get::<Datagrams>().cloned().unwrap()
    }

    #[test]
    fn a_recipe_picks_the_generator_and_a_wrong_one_is_named() {
        let parse = |g: &str| {
            let t: toml::Table = format!("queries = \"q.txt\"\n{g}").parse().unwrap();
            DnsSettings::parse(&t)
        };
        assert_eq!(parse("").unwrap().generator, Generator::Auto);
        assert_eq!(
            parse("generator = \"xdp\"").unwrap().generator,
            Generator::Xdp
        );
        assert_eq!(
            parse("generator = \"socket\"").unwrap().generator,
            Generator::Socket
        );
        let e = parse("generator = \"dpdk\"").unwrap_err().to_string();
        assert!(e.contains("dpdk") && e.contains("xdp"), "{e}");
        for g in Generator::ALL {
            assert_eq!(Generator::parse(g.name()), Ok(g));
        }
    }

    #[test]
    fn endpoints_parse_and_stay_on_loopback() {
        let (a, ns) = parse_endpoint("dns://127.0.0.1:53?netns=scalelab-dns-1-0").unwrap();
        assert_eq!(a.port(), 53);
        assert_eq!(ns.as_deref(), Some("scalelab-dns-1-0"));
        assert!(parse_endpoint("127.0.0.2:5353").is_ok());
        assert!(parse_endpoint("dns://10.0.0.1:53?netns=x").is_ok());
        if !crate::sys::netns::in_private_namespace() {
            let e = parse_endpoint("8.8.8.8:53").unwrap_err().to_string();
            assert!(e.contains("only to loopback"), "{e}");
        }
        assert!(parse_endpoint("localhost").is_err());
    }

    /// A DoT lab's endpoint names its TLS port (`dot=`); without one the
    /// address given is the DoT server's (and `doh=` the DoH server's).
    /// TLS settings without DoT or DoH, DoH's without DoH, and DoT with the
    /// xdp generator, are refused by name.
    #[test]
    fn dot_and_doh_take_the_endpoints_tls_ports_and_their_settings_are_checked() {
        let w = parse_ways("dns://127.0.0.1:53?netns=n&dot=127.0.0.1:853").unwrap();
        assert_eq!(w.dot_server().port(), 853);
        assert_eq!(
            parse_ways("127.0.0.1:8853").unwrap().dot_server().port(),
            8853
        );
        assert!(parse_ways("127.0.0.1:53?dot=x").is_err());
        let parse = |extra: &str| {
            let t: toml::Table = format!("queries = \"q.txt\"\n{extra}").parse().unwrap();
            DnsSettings::parse(&t)
        };
        let e = parse("tls_verify = false").unwrap_err().to_string();
        assert!(e.contains("transport = \"dot\""), "{e}");
        assert!(parse("transport = \"dot\"\ntls_verify = false").is_ok());
        let e = parse("transport = \"dot\"\ngenerator = \"xdp\"").unwrap_err();
        assert!(e.to_string().contains("UDP only"), "{e}");
        let w = parse_ways("dns://127.0.0.1:53?doh=127.0.0.1:8443").unwrap();
        assert_eq!(w.doh_server().port(), 8443);
        assert!(parse("transport = \"doh\"\ndoh_method = \"get\"").is_ok());
        let e = parse("doh_method = \"get\"").unwrap_err().to_string();
        assert!(e.contains("transport = \"doh\""), "{e}");
        let e = parse("transport = \"doh\"\ndoh_path = \"dns-query\"").unwrap_err();
        assert!(e.to_string().contains("must start with `/`"), "{e}");
        let e = parse("transport = \"quic\"").unwrap_err().to_string();
        assert!(e.contains("udp, tcp, dot or doh"), "{e}");
        // A run's managed server hands every load its CA; UDP ignores it.
        assert!(parse("ca_pem = \"x\"").is_ok());
    }

    /// A ramp whose server answers 100 in second 0 (`lost_early` more
    /// queries lost) and 150 of the 300 offered in second 1.
    fn saturated_ramp(lost_early: u64) -> LoadResult {
        let mut t = tally::Tally::new(true);
        let ok = hickory_proto::op::ResponseCode::NoError;
        t.sent_at(0, 100 + lost_early);
        for _ in 0..100 {
            t.answered(ok, crate::units::Micros(100), 0, 500_000_000);
        }
        for _ in 0..lost_early {
            t.lost_at(0);
        }
        t.sent_at(1, 300);
        for _ in 0..150 {
            t.answered(ok, crate::units::Micros(100), 1, 1_500_000_000);
        }
        for _ in 0..150 {
            t.lost_at(1);
        }
        t.elapsed_ns = 2_000_000_000;
        let mode = Mode::Ramp {
            max_rate: 300.0,
            over: Duration::from_secs(2),
        };
        finish(t, &mode, Carried::default())
    }

    #[test]
    fn a_ramps_lost_queries_are_never_errors() {
        use crate::analysis::compare::too_many_errors;
        let r = saturated_ramp(0);
        let d = datagrams(&r);
        let ramp = d.ramp.unwrap();
        assert_eq!(ramp.max_throughput, 150.0);
        assert_eq!(d.lost, 150, "every lost query is still counted as lost");
        assert_eq!(ramp.lost_past_max, 150, "second 1 offered 300 > 150");
        assert_eq!(r.errors.total(), 0);
        assert!(too_many_errors(d.lost, r.requests), "counted, they would");
        // A loss at 101 qps, under the 150 the server answered, is lost at
        // that point too (resperf's view), not an error.
        let r = saturated_ramp(1);
        let d = datagrams(&r);
        assert_eq!((d.lost, d.ramp.unwrap().lost_past_max), (151, 150));
        assert_eq!(r.errors.total(), 0);
    }

    #[test]
    fn a_ramp_that_falls_behind_keeps_its_maximum_only_if_the_server_was_really_saturated() {
        let mode = Mode::Ramp {
            max_rate: 300.0,
            over: Duration::from_secs(2),
        };
        // Second 0: 150 answered; second 1: `sent` really sent, 150 answered.
        let behind_after_sending = |sent: u64| {
            let mut t = tally::Tally::new(true);
            let ok = hickory_proto::op::ResponseCode::NoError;
            t.sent_at(0, 150);
            t.sent_at(1, sent);
            for sec in 0..2 {
                for _ in 0..150 {
                    t.answered(
                        ok,
                        crate::units::Micros(100),
                        sec,
                        u64::from(sec) * 1_000_000_000,
                    );
                }
            }
            for _ in 150..sent {
                t.lost_at(1);
            }
            // Scheduled 250 qps when it fell behind, far past 150: only
            // what was really sent counts.
            t.fell_behind = Some((1.5, 40, 250.0));
            t.elapsed_ns = 2_000_000_000;
            finish(t, &mode, Carried::default())
        };
        // Really sent 200 in a second, past the 150 the server answered.
        let r = behind_after_sending(200);
        assert!(datagrams(&r).fell_behind.is_none());
        assert!(r.notes.iter().any(|n| n.contains("the maximum stands")));
        // Sent 155: within 5% of the maximum, answers that came a second
        // late look the same; the generator may have set the maximum.
        let r = behind_after_sending(155);
        assert!(datagrams(&r).fell_behind.is_some());
        // Never sent more than the server answered: the client's maximum.
        let r = behind_after_sending(150);
        assert!(datagrams(&r).fell_behind.is_some());
    }

    #[test]
    fn settings_name_bad_fields() {
        let t: toml::Table = toml::from_str("queries = \"q.txt\"\nmax_rate = 0").unwrap();
        let e = DnsSettings::parse(&t).unwrap_err().to_string();
        assert!(e.contains("max_rate"), "{e}");
        let t: toml::Table = toml::from_str("queries = { names = 0 }").unwrap();
        let e = DnsSettings::parse(&t).unwrap_err().to_string();
        assert!(e.contains("names must be"), "{e}");
        let t: toml::Table = toml::from_str("queries = { names = 10, zipf = 1.2 }").unwrap();
        assert!(DnsSettings::parse(&t).is_ok());
        let t: toml::Table = toml::from_str("queries = \"q.txt\"\nnames = 0").unwrap();
        let e = DnsSettings::parse(&t).unwrap_err().to_string();
        assert!(e.contains("`names` must be 1 to 131072"), "{e}");
    }

    #[test]
    fn the_zones_hold_the_names_the_queries_are_drawn_from() {
        use crate::model::Dataset;
        let zones = |text: &str| {
            let t: toml::Table = toml::from_str(text).unwrap();
            DnsSettings::parse(&t).unwrap().dataset()
        };
        let hosts = |hosts| Dataset::DnsZones { hosts, veth: false };
        assert_eq!(zones("queries = { names = 300 }"), hosts(300));
        assert_eq!(zones("queries = { names = 300 }\nnames = 500"), hosts(500));
        assert_eq!(zones("queries = \"q.txt\""), hosts(DEFAULT_NAMES));
        assert_eq!(zones("queries = \"q.txt\"\nnames = 7"), hosts(7));
        assert_eq!(
            zones("queries = \"q.txt\"\nnames = 7\ngenerator = \"xdp\""),
            Dataset::DnsZones {
                hosts: 7,
                veth: true
            },
            "the xdp generator asks the lab for a veth path"
        );
    }
}
