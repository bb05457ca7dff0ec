//! `scalelab load http`: one ad-hoc HTTP load run, printed like wrk (or as
//! one JSON object).

use super::habits::Habit;
use super::load_args::{
    print_notes, print_schedule_lag, with_latency, CoalesceArg, LoadDefaults, LoadShape,
};
use anyhow::Context;
use scalelab::load::http::facts::TlsFacts;
use scalelab::load::http::{self, HttpDriver, HttpSettings};
use scalelab::load::limits;
use scalelab::load::result::Measurement;
use scalelab::load::{Driver, ErrorKind, LoadResult, LoadSpec};
use scalelab::shutdown::Shutdown;
use scalelab::units::{Bytes, Micros};

#[derive(clap::Args, Debug)]
pub struct LoadHttpArgs {
    /// Target URL, such as http://127.0.0.1:8080/ or https://127.0.0.1:8443/
    /// (loopback, or a host named in an experiment's [hosts]).
    pub url: String,
    #[command(flatten)]
    pub shape: LoadShape<Wrk>,
    /// Requests per connection before it is closed and replaced (the last
    /// one carries `Connection: close`); default: keep-alive.
    #[arg(long, value_name = "K")]
    pub connreqs: Option<u32>,
    /// Extra request header, repeatable.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Request method.
    #[arg(short = 'm', long, default_value = "GET")]
    pub method: String,
    /// Request body.
    #[arg(long)]
    pub body: Option<String>,
    /// Spread connections over 127.0.0.1..=127.0.0.N as source addresses.
    #[arg(long, value_name = "N")]
    pub source_addrs: Option<u32>,
    /// https: the CA certificates (PEM) that verify the server's
    /// certificate, as curl's --cacert.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<std::path::PathBuf>,
    /// https: do not check the server's certificate (the output says so).
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// https: offer only this TLS version, 1.2 or 1.3 (default: both).
    #[arg(long, value_name = "1.2|1.3")]
    pub tls_version: Option<String>,
    /// https: make every handshake a full one (no session resumption).
    #[arg(long)]
    pub no_tls_resume: bool,
    /// The HTTP version: 1.1, or 2 (over https by ALPN h2; over http://
    /// with prior knowledge, h2c).
    #[arg(long, value_name = "1.1|2", default_value = "1.1")]
    pub http: String,
    /// HTTP/2: requests in flight on each connection (h2load's -m).
    #[arg(long, value_name = "N")]
    pub streams: Option<u32>,
    /// Stop after this many completed requests.
    #[arg(short = 'n', long, value_name = "N", value_parser = limits::request_count_flag)]
    pub requests: Option<u64>,
    #[command(flatten)]
    pub coalesce: CoalesceArg,
    /// Print the latency distribution (p50, p75, p90, p99, p99.9) as wrk
    /// and wrk2's -L (--latency) do.
    #[arg(short = 'L', long)]
    pub latency: bool,
}

/// wrk's flags: `-t`, `-R`; 10 connections on 2 threads.
#[derive(Clone, Debug)]
pub struct Wrk;

impl LoadDefaults for Wrk {
    const CONNECTIONS: &'static str = "10";
    const THREADS: Option<&'static str> = Some("2");
    const THREADS_SHORT: char = 't';
    const DURATION_SHORT_ALIASES: &'static [char] = &[];
    const RATE_SHORT: Option<char> = Some('R');
    const TIMEOUT: &'static str = "2s";
}

/// wrk's flags that `load http` cannot take.
pub const HABITS: &[Habit] = &[
    Habit {
        flags: &["-s", "--script"],
        tool: "wrk",
        instead: "Lua scripts are not supported; use -m METHOD, -H 'NAME: VALUE' (repeatable) \
                  and --body TEXT for the request, --connreqs K to close connections after K \
                  requests, and an experiment file (`scalelab run`) for sweeps",
    },
    Habit {
        flags: &["-U", "--u_latency"],
        tool: "wrk2",
        instead: "there is no uncorrected latency here: with -R the latency counts from each \
                  request's scheduled time, and the schedule lag (how late the generator sent) \
                  is printed beside it; -L (--latency) prints the distribution",
    },
];

/// The load shape the arguments ask for (checked by `LoadSpec::validate`).
pub fn spec(a: &LoadHttpArgs) -> LoadSpec {
    LoadSpec {
        requests_per_connection: a.connreqs,
        max_requests: a.requests,
        coalesce: a.coalesce.coalesce,
        ..a.shape.spec(a.shape.threads_per_cpu())
    }
}

pub fn run(a: &LoadHttpArgs, shutdown: &Shutdown) -> anyhow::Result<i32> {
    let settings = HttpSettings {
        method: Some(a.method.clone()),
        headers: a.headers.clone(),
        body: a.body.clone(),
        source_addrs: a.source_addrs,
        ca_file: a.cacert.clone(),
        tls_verify: a.insecure.then_some(false),
        tls_version: a.tls_version.clone(),
        tls_resume: a.no_tls_resume.then_some(false),
        http: Some(a.http.clone()),
        streams: a.streams,
        ..HttpSettings::default()
    };
    let driver = HttpDriver::new(settings, &a.url)?;
    let spec = spec(a);
    spec.validate()?;
    if !a.shape.json {
        outln!(
            "Running {} test @ {}",
            scalelab::units::format_duration(a.shape.duration),
            driver.url()
        );
        outln!(
            "  {} threads and {} connections",
            spec.effective_threads(),
            spec.connections
        );
    }
    let result = driver
        .run(&spec, shutdown)
        .with_context(|| format!("load run against {} failed", driver.url()))?;
    a.shape.finish(
        &result,
        shutdown,
        || json(&driver, &spec, &result),
        || print_text(&spec, &result, a.latency),
    )
}

fn json(driver: &HttpDriver, spec: &LoadSpec, r: &LoadResult) -> serde_json::Value {
    let m = Measurement::from(r);
    let errors: serde_json::Map<String, serde_json::Value> = http::LOAD_KIND
        .error_kinds
        .iter()
        .map(|k| (k.name().to_string(), m.errors.get(*k).into()))
        .collect();
    let v = serde_json::json!({
        "url": driver.url(),
        "connections": spec.connections,
        "threads": spec.effective_threads(),
        "requests": m.requests,
        "duration_s": m.duration_s,
        "rps": m.rps,
        "bytes": m.bytes,
        "gbit_s": m.gbit_s,
        "errors": errors,
        "client_cpu_s": m.client_cpu_s,
        "target_rate": m.target_rate,
        "achieved_rate": m.rps,
        "connections_opened": m.connections_opened,
        "tls": r.extras.get::<TlsFacts>(),
        "timeline": scalelab::load::timeline::per_second(&r.timeline),
        "timeline_100ms": r.timeline,
        "notes": r.notes,
    });
    with_latency(v, r)
}

fn print_text(spec: &LoadSpec, r: &LoadResult, distribution: bool) {
    let l = r.latency_summary();
    let secs = r.elapsed.as_secs_f64();
    outln!("  Thread Stats   Avg      Stdev     Max   +/- Stdev");
    outln!(
        "    Latency {:>10} {:>9} {:>9} {:>8.2}%",
        Micros(l.mean.round() as u64).to_string(),
        Micros(l.stdev.round() as u64).to_string(),
        l.max.to_string(),
        within_one_stdev(r),
    );
    let per_thread = per_thread_rates(r, spec.effective_threads());
    if let Some((mean, stdev, max, within)) = per_thread {
        outln!(
            "    Req/Sec {:>10} {:>9} {:>9} {:>8.2}%",
            metric(mean),
            metric(stdev),
            metric(max),
            within
        );
    }
    if distribution {
        outln!("  Latency Distribution");
        for q in [0.50, 0.75, 0.90, 0.99, 0.999] {
            let v = Micros(r.latency.value_at_quantile(q));
            outln!("  {:>5}% {:>10}", q * 100.0, v.to_string());
        }
    } else {
        outln!("  Latency: {}", l.describe());
    }
    print_schedule_lag("  Schedule lag (rate mode):", r);
    outln!(
        "  {} requests in {:.2}s, {} read",
        r.requests,
        secs,
        r.bytes
    );
    let e = &r.errors;
    if e.socket_errors() > 0 {
        outln!("  Socket errors: {}", e.listed(&ErrorKind::SOCKET));
    }
    if e.status > 0 {
        outln!("  Non-2xx responses: {}", e.status);
    }
    outln!("Requests/sec: {:>10.2}", r.rps());
    let per_sec = Bytes((r.bytes.0 as f64 / secs.max(1e-9)) as u64);
    outln!("Transfer/sec: {:>10}", per_sec.to_string());
    if let Some(target) = r.target_rate {
        outln!(
            "Target rate: {target:.2} req/s, achieved: {:.2} req/s",
            r.rps()
        );
    }
    if r.requests > 0 {
        outln!(
            "Client CPU: {:.2}s ({:.2}us per request), connections opened: {}",
            r.client_cpu.0,
            r.client_cpu.0 * 1e6 / r.requests as f64,
            r.connections_opened
        );
    }
    if let Some(t) = r.extras.get::<TlsFacts>() {
        print_tls(t, r);
    }
    print_notes("Note:", r);
}

/// `TLS: TLSv1_3 TLS13_AES_256_GCM_SHA384, 9,412 handshakes (9,400
/// resumed), 4705.12/s`.
fn print_tls(t: &TlsFacts, r: &LoadResult) {
    let secs = r.elapsed.as_secs_f64().max(1e-9);
    let n = t.handshakes();
    let mut line = format!(
        "TLS: {} {} {}, {} handshakes ({} resumed), {:.2}/s",
        t.version,
        t.cipher,
        t.group.as_deref().unwrap_or("-"),
        n,
        t.handshakes_resumed,
        n as f64 / secs
    );
    if t.handshakes_failed > 0 {
        line.push_str(&format!(", {} failed", t.handshakes_failed));
    }
    outln!("{line}");
}

/// Share of latencies within one standard deviation of the mean (wrk's
/// "+/- Stdev" column).
fn within_one_stdev(r: &LoadResult) -> f64 {
    let h = &r.latency;
    if h.is_empty() {
        return 0.0;
    }
    let (mean, sd) = (h.mean(), h.stdev());
    let inside: u64 = h
        .iter_recorded()
        .filter(|v| (v.value_iterated_to() as f64 - mean).abs() <= sd)
        .map(|v| v.count_at_value())
        .sum();
    inside as f64 * 100.0 / h.len() as f64
}

/// Mean, stdev, max and share-within-one-stdev of the per-thread request
/// rate over whole seconds (the last, partial second is left out).
fn per_thread_rates(r: &LoadResult, threads: u32) -> Option<(f64, f64, f64, f64)> {
    let seconds = scalelab::load::timeline::per_second(&r.timeline);
    let whole = (r.elapsed.as_secs() as usize).min(seconds.len());
    if whole == 0 {
        return None;
    }
    let rates: Vec<f64> = seconds[..whole]
        .iter()
        .map(|&n| n as f64 / f64::from(threads))
        .collect();
    let n = rates.len() as f64;
    let mean = rates.iter().sum::<f64>() / n;
    let sd = (rates.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    let max = rates.iter().copied().fold(0.0, f64::max);
    let within = rates.iter().filter(|x| (*x - mean).abs() <= sd).count() as f64 * 100.0 / n;
    Some((mean, sd, max, within))
}

/// `42.85k`, like wrk.
fn metric(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2}k", v / 1e3)
    } else {
        format!("{v:.2}")
    }
}
