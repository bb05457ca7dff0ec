//! `scalelab load dns`: one ad-hoc DNS load run over UDP, like dnsperf (as
//! fast as the outstanding cap allows, or `--rate`) or resperf (`--ramp`).
//! Also `scalelab dns queries`, which writes a query set.

use super::habits::Habit;
use super::load_args::{
    duration_arg, print_notes, print_schedule_lag, with_latency, LoadDefaults, LoadShape,
};
use anyhow::{bail, Context};
use scalelab::load::dns::facts::Datagrams;
use scalelab::load::dns::queries::QuerySetSpec;
use scalelab::load::dns::{
    DnsDriver, DnsSettings, DnsTransport, DohMethod, Generator, QuerySource,
};
use scalelab::load::limits;
use scalelab::load::{Driver, LoadResult, LoadSpec};
use scalelab::shutdown::Shutdown;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct LoadDnsArgs {
    /// Server as ADDRESS:PORT, such as 127.0.0.1:53 (loopback only, unless
    /// scalelab runs inside a network namespace with `ip netns exec`); or
    /// give -s ADDRESS and -p PORT, as to dnsperf.
    #[arg(value_name = "ADDRESS:PORT", required_unless_present = "server_addr")]
    pub server: Option<String>,
    /// The server's address (dnsperf -s), with -p its port.
    #[arg(
        short = 's',
        long = "server",
        value_name = "ADDRESS",
        conflicts_with = "server"
    )]
    pub server_addr: Option<std::net::IpAddr>,
    /// The server's port with -s (dnsperf -p; default 53, 853 for
    /// --transport dot and 443 for doh).
    #[arg(short = 'p', long, value_name = "PORT", requires = "server_addr")]
    pub port: Option<u16>,
    /// Query file in dnsperf's format (`NAME TYPE` per line); it is replayed
    /// in a loop for as long as the run lasts. (dnsperf's -d; here -d is
    /// the duration, dnsperf's -l.)
    #[arg(long, value_name = "FILE")]
    pub queries: PathBuf,
    #[command(flatten)]
    pub shape: LoadShape<Dnsperf>,
    /// Queries in flight at most, when neither --rate nor --ramp is given
    /// (dnsperf -q).
    #[arg(short = 'q', long, default_value_t = 100, value_name = "N")]
    pub outstanding: u32,
    /// Ramp the rate linearly from 0 to --max-rate over this long (resperf).
    /// With --ramp, --duration is ignored: the ramp sets the run's length.
    /// (resperf -r).
    #[arg(short = 'r', long, value_parser = duration_arg, requires = "max_rate", conflicts_with = "rate")]
    pub ramp: Option<Duration>,
    /// The ramp's final rate in queries/s (resperf -m).
    #[arg(short = 'm', long, value_name = "QPS", requires = "ramp")]
    pub max_rate: Option<f64>,
    /// How queries leave: auto (AF_XDP where the server is reached through
    /// an interface and one thread runs; UDP sockets on loopback), xdp, or
    /// socket.
    #[arg(long, default_value = "auto", value_parser = Generator::parse, value_name = "METHOD")]
    pub generator: Generator,
    /// What carries the queries: udp, tcp (one connection per socket,
    /// many queries in flight on it; dnsperf's -m tcp), dot (the same
    /// inside TLS; -m dot) or doh (HTTP/2 inside TLS, a stream per query;
    /// -m doh).
    #[arg(long, default_value = "udp", value_parser = DnsTransport::parse, value_name = "udp|tcp|dot|doh")]
    pub transport: DnsTransport,
    /// --transport doh: POST (the query as the body) or GET (in the URL),
    /// dnsperf's -O doh-method=.
    #[arg(long, value_parser = DohMethod::parse, value_name = "post|get")]
    pub doh_method: Option<DohMethod>,
    /// --transport doh: the endpoint's path (default /dns-query).
    #[arg(long, value_name = "PATH")]
    pub doh_path: Option<String>,
    /// --transport dot or doh: the CA certificates (a PEM file) that verify
    /// the server's certificate, as curl's --cacert.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// --transport dot or doh: do not check the server's certificate
    /// (curl's -k); the output says so.
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// Stop after this many queries sent.
    #[arg(short = 'n', long, value_name = "N", value_parser = limits::request_count_flag)]
    pub requests: Option<u64>,
}

/// dnsperf's flags: `-Q`, `-l`; threads are `-t`; one UDP socket on one
/// thread, and a query lost after 5 s.
#[derive(Clone, Debug)]
pub struct Dnsperf;

impl LoadDefaults for Dnsperf {
    const CONNECTIONS: &'static str = "1";
    const THREADS: Option<&'static str> = Some("1");
    const THREADS_SHORT: char = 't';
    const DURATION_SHORT_ALIASES: &'static [char] = &['l'];
    const RATE_SHORT: Option<char> = Some('Q');
    const TIMEOUT: &'static str = "5s";
    const DURATION_HINT: &'static str =
        " (-d is the run's length here, dnsperf's -l; dnsperf's -d FILE is --queries FILE)";
}

/// dnsperf's and resperf's flags that `load dns` spells otherwise.
pub const HABITS: &[Habit] = &[
    Habit {
        flags: &["-T"],
        tool: "dnsperf",
        instead: "its thread count is -t N (--threads N) here",
    },
    Habit {
        flags: &["-S"],
        tool: "dnsperf",
        instead: "interval statistics are not printed; --json carries the run's \
                  per-second timeline",
    },
];

impl LoadDnsArgs {
    /// The server's ADDRESS:PORT: the positional one, or -s with -p
    /// (default 53), as dnsperf takes them.
    pub fn server(&self) -> String {
        match (&self.server, self.server_addr) {
            (Some(s), _) => s.clone(),
            (None, Some(ip)) => {
                let default = match self.transport {
                    DnsTransport::Dot => scalelab::load::dns::DOT_PORT,
                    DnsTransport::Doh => scalelab::load::dns::DOH_PORT,
                    DnsTransport::Udp | DnsTransport::Tcp => 53,
                };
                std::net::SocketAddr::new(ip, self.port.unwrap_or(default)).to_string()
            }
            (None, None) => String::new(),
        }
    }
}

pub fn run(a: &LoadDnsArgs, shutdown: &Shutdown) -> anyhow::Result<i32> {
    if a.shape.rate.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
        bail!("--rate must be a positive number of queries per second, such as --rate 20000");
    }
    let settings = DnsSettings {
        queries: QuerySource::File(a.queries.clone()),
        names: None,
        max_outstanding: a.outstanding,
        max_rate: a.max_rate,
        generator: a.generator,
        transport: a.transport,
        doh_method: a.doh_method.unwrap_or_default(),
        doh_path: a.doh_path.clone(),
        ca_file: a.cacert.clone(),
        ca_pem: None,
        tls_verify: a.insecure.then_some(false),
    };
    let driver = DnsDriver::new(settings, &a.server())?;
    let spec = LoadSpec {
        max_requests: a.requests,
        duration: a.ramp.unwrap_or(a.shape.duration),
        ..a.shape.spec(a.shape.threads_per_cpu())
    };
    spec.validate()?;
    let r = driver
        .run(&spec, shutdown)
        .with_context(|| format!("DNS load against {} failed", driver.server()))?;
    let d = r.extras.get::<Datagrams>().cloned().unwrap_or_default();
    if d.sent > 0 && r.requests == 0 && !shutdown.is_triggered() {
        if a.shape.json {
            outln!(
                "{}",
                serde_json::to_string_pretty(&json(&driver, &spec, &r))?
            );
        }
        eprintln!(
            "error: {} answered none of {} queries within {} (lost {}, ICMP refused {}): \
             is a DNS server listening there?",
            driver.server(),
            d.sent,
            scalelab::units::format_duration(a.shape.timeout),
            d.lost,
            r.errors.connect
        );
        if let Some(why) = &d.fell_behind {
            // Said even so: the rate asked was not the rate sent.
            eprintln!("and {why}");
        }
        // What the transport saw (DoH: the server's statuses and resets).
        for note in r.notes.iter().filter(|n| n.starts_with("DNS over")) {
            eprintln!("  {note}");
        }
        return Ok(super::exit::NOTHING_MEASURED);
    }
    a.shape
        .finish(&r, shutdown, || json(&driver, &spec, &r), || print_text(&r))
}

fn json(driver: &DnsDriver, spec: &LoadSpec, r: &LoadResult) -> serde_json::Value {
    let d = r.extras.get::<Datagrams>().cloned().unwrap_or_default();
    let mut v = serde_json::json!({
        "server": driver.server().to_string(),
        "threads": spec.effective_threads(),
        "sockets": spec.connections,
        "duration_s": r.elapsed.as_secs_f64(),
        "qps": r.rps(),
        "sent": d.sent,
        "responses": r.requests,
        "lost": d.lost,
        "dropped_at_client": d.dropped_at_client,
        "mismatched": d.mismatched,
        "rcodes": d.codes,
        "client_cpu_s": r.client_cpu.0,
        "target_rate": r.target_rate,
        "timeline": scalelab::load::timeline::per_second(&r.timeline),
        "timeline_100ms": r.timeline,
        "fell_behind": d.fell_behind,
        "ids_ran_out": d.ids_ran_out,
        "notes": r.notes,
    });
    if let Some(ramp) = &d.ramp {
        // A ramp below the server's limit has no maximum (its note says
        // why); `ramp.max_throughput` keeps its highest answer rate.
        v["max_throughput"] = (!ramp.below_limit).then_some(ramp.max_throughput).into();
        // Below the limit the highest answer rate is a floor: said as one.
        v["max_throughput_at_least"] = ramp.below_limit.then_some(ramp.max_throughput).into();
        v["loss_at_max"] = ramp.loss_at_max.into();
        v["ramp"] = serde_json::to_value(ramp).unwrap_or_default();
    }
    with_latency(v, r)
}

fn print_text(r: &LoadResult) {
    let d = r.extras.get::<Datagrams>().cloned().unwrap_or_default();
    let secs = r.elapsed.as_secs_f64();
    outln!("Statistics:");
    outln!("  Queries sent:         {}", d.sent);
    outln!("  Queries completed:    {}", r.requests);
    outln!("  Queries lost:         {}", d.lost);
    if d.dropped_at_client > 0 {
        outln!(
            "  (of which {} answers the kernel dropped at this client's own sockets)",
            d.dropped_at_client
        );
    }
    let codes: Vec<String> = d.codes.iter().map(|(k, v)| format!("{k} {v}")).collect();
    outln!("  Response codes:       {}", codes.join(", "));
    outln!("  Run time (s):         {secs:.3}");
    outln!("  Queries per second:   {:.1}", r.rps());
    outln!("  Latency:              {}", r.latency_summary().describe());
    print_schedule_lag("  Schedule lag:        ", r);
    if r.requests > 0 {
        outln!(
            "  Client CPU:           {:.2}s ({:.2}us per answered query)",
            r.client_cpu.0,
            r.client_cpu.0 * 1e6 / r.requests as f64
        );
    }
    if let Some(ramp) = &d.ramp {
        outln!("  Second  offered  answered  lost  p50us");
        for s in &ramp.seconds {
            outln!(
                "  {:>6} {:>8} {:>9} {:>5} {:>6}",
                s.second,
                s.offered,
                s.answered,
                s.lost,
                s.p50_us
            );
        }
        if ramp.below_limit {
            // Nothing was lost: the highest answer rate is a floor.
            let behind = d.fell_behind.is_some();
            outln!(
                "Maximum throughput: {}",
                scalelab::load::dns::ramp_at_least(ramp.max_throughput, behind)
            );
        } else {
            outln!(
                "Maximum throughput: {:.0} qps\nLost at that point: {:.2}%",
                ramp.max_throughput,
                ramp.loss_at_max * 100.0
            );
            outln!(
                "Lost past the maximum: {} (offered above {:.0} qps: the measurement, not errors)",
                ramp.lost_past_max,
                ramp.max_throughput
            );
        }
    }
    print_notes("Note:", r);
}

#[derive(clap::Args, Debug)]
pub struct DnsQueriesArgs {
    /// Hosts in the lab's zones to draw from (h0 .. h<N-1>.bench.test).
    #[arg(long, value_name = "N")]
    pub names: u32,
    /// Zipf exponent of the names' popularity (0 uniform, 1 like a web log).
    #[arg(long, default_value_t = 1.0, value_name = "S")]
    pub zipf: f64,
    /// Share of PTR queries for the hosts' addresses, 0 to 1.
    #[arg(long, default_value_t = 0.0, value_name = "F")]
    pub reverse_share: f64,
    /// Queries to write.
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub count: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output file.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
}

pub fn queries(a: &DnsQueriesArgs) -> anyhow::Result<i32> {
    let spec = QuerySetSpec {
        names: a.names,
        zipf: a.zipf,
        reverse_share: a.reverse_share,
        seed: a.seed,
        count: a.count,
    };
    if let Err(e) = spec.validate() {
        bail!("{}", e.replace('_', "-"));
    }
    std::fs::write(&a.output, spec.render())
        .with_context(|| format!("cannot write {}", a.output.display()))?;
    outln!("wrote {} queries to {}", a.count, a.output.display());
    Ok(0)
}

#[derive(clap::Args, Debug)]
pub struct DnsLabArgs {
    /// Which server the lab is for: a server kind that is a DNS lab of its
    /// own (nsd, unbound or bind).
    pub kind: String,
    /// The server's settings as TOML, such as 'threads = 2'.
    #[arg(long, default_value = "", value_name = "TOML")]
    pub settings: String,
    /// Hosts in the lab's zones (h0 .. h<N-1>.bench.test, and their PTRs).
    #[arg(long, default_value_t = scalelab::load::dns::DEFAULT_NAMES, value_name = "N")]
    pub names: u32,
    /// CPUs for the lab's servers, such as 1 or 1-3.
    #[arg(long, value_name = "CPUS")]
    pub server_cpus: Option<String>,
    /// The command to run inside the lab's namespace (after `--`). It gets
    /// SCALELAB_DNS_SERVER (ADDRESS:PORT), SCALELAB_DNS_NETNS and
    /// SCALELAB_DNS_DIR (the lab's run directory) in its environment; with
    /// `tls = true` (Unbound) also SCALELAB_DNS_DOT and SCALELAB_DNS_DOH
    /// (the DNS over TLS and over HTTPS ADDRESS:PORTs) and SCALELAB_DNS_CA
    /// (the lab's CA, a PEM file).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Starts a DNS lab, runs a command inside its namespace, tears it down.
pub fn lab(a: &DnsLabArgs, shutdown: &Shutdown) -> anyhow::Result<i32> {
    let settings: toml::Table = toml::from_str(&a.settings.replace(", ", "\n"))
        .with_context(|| format!("--settings `{}` is not TOML", a.settings))?;
    if settings.contains_key("names") {
        bail!("--settings: `names` is not a server setting any more; give the zones' hosts with --names N");
    }
    let base = scalelab::runner::default_base_dir();
    let labs: Vec<&'static scalelab::server::ServerKind> = scalelab::server::KINDS
        .iter()
        .copied()
        .filter(|k| k.dns_lab.is_some())
        .collect();
    let lab_kind =
        scalelab::kinds::lookup("DNS lab", &labs, &a.kind).map_err(anyhow::Error::msg)?;
    let build = lab_kind.dns_lab.context("a DNS lab kind builds a lab")?;
    let mut target = build(&settings, &base)?;
    let cpus = match &a.server_cpus {
        Some(c) => Some(
            scalelab::placement::affinity::parse_cpu_list(c)
                .map_err(|e| anyhow::anyhow!("--server-cpus: {e}"))?,
        ),
        None => None,
    };
    let placement = scalelab::placement::Placement::create("dnslab", cpus, None)?;
    let zones = scalelab::model::Dataset::DnsZones {
        hosts: a.names,
        veth: false,
    };
    let ep = scalelab::server::Server::start(&mut target, &placement, Some(&zones), shutdown)?;
    let ways = scalelab::load::dns::parse_ways(&ep.uri)?;
    let (server, ns) = (ways.server, ways.netns.clone().unwrap_or_default());
    let mut cmd = std::process::Command::new("ip");
    // SAFETY: prctl is async-signal-safe; it runs in the child before exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            // The command dies with scalelab, `kill -9` included, rather
            // than live on in a namespace whose name is gone.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let dir = target.run_dir().unwrap_or(&base).to_path_buf();
    if let Some(dot) = ways.dot {
        cmd.env("SCALELAB_DNS_DOT", dot.to_string())
            .env("SCALELAB_DNS_CA", dir.join("tls/ca.pem"));
    }
    if let Some(doh) = ways.doh {
        cmd.env("SCALELAB_DNS_DOH", doh.to_string());
    }
    let status = cmd
        .args(["netns", "exec", &ns])
        .args(&a.command)
        .env("SCALELAB_DNS_SERVER", server.to_string())
        .env("SCALELAB_DNS_NETNS", &ns)
        .env("SCALELAB_DNS_DIR", &dir)
        .status()
        .with_context(|| format!("cannot run {:?} in namespace {ns}", a.command))?;
    drop(target);
    Ok(status.code().unwrap_or(1))
}
