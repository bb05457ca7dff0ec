//! `scalelab load pg`: one pgbench-style run, or `--init` to build the
//! dataset (pgbench -i).

use super::load_args::{
    print_notes, print_schedule_lag, with_latency, CoalesceArg, LoadDefaults, LoadShape,
};
use anyhow::Context;
use scalelab::load::limits;
use scalelab::load::pg::{
    self, PgDriver, PgSettings, QueryMode, Script, ScriptKind, StatementLatency,
};
use scalelab::load::result::{LatencyFields, Measurement};
use scalelab::load::{ErrorKind, LoadResult, LoadSpec};
use scalelab::shutdown::Shutdown;
use scalelab::units::{Bytes, Micros};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Debug)]
#[command(
    disable_help_flag = true,
    after_help = "pgbench's own flags work too: -h HOST, -p PORT, -U USER, DBNAME, -T SEC, \
-R TPS, -S, -N, -b NAME, -f FILE, -r, -M prepared|extended|simple, -P SEC, -c, -j, -C, -n, \
-i, -s. As in pgbench, -h is the host: help is --help."
)]
pub struct LoadPgArgs {
    /// The database name (pgbench's DBNAME), or a whole libpq connection
    /// string (`host=127.0.0.1 port=5432 user=postgres`) or URI
    /// (`postgresql://postgres@127.0.0.1:5432/postgres`); left out, PG*
    /// variables and libpq's defaults apply.
    #[arg(value_name = "DBNAME|CONNINFO")]
    pub conninfo: Option<String>,
    /// The server's host (pgbench -h): a loopback address, `localhost`, or
    /// a Unix-socket directory.
    #[arg(short = 'h', long, value_name = "HOST")]
    pub host: Option<String>,
    /// The server's port (pgbench -p).
    #[arg(short = 'p', long, value_name = "PORT")]
    pub port: Option<u16>,
    /// The user to connect as (pgbench -U).
    #[arg(short = 'U', long = "username", value_name = "USER")]
    pub user: Option<String>,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    #[command(flatten)]
    pub shape: LoadShape<Pgbench>,
    /// Built-in script: select-only, simple-update or tpcb-like (pgbench
    /// `-b NAME`; `-S` and `-N` are select-only and simple-update).
    #[arg(long, short = 'b', default_value = "tpcb-like", value_parser = parse_script)]
    pub script: ScriptKind,
    /// pgbench -S: the select-only script.
    #[arg(short = 'S', conflicts_with_all = ["script", "simple_update", "file"])]
    pub select_only: bool,
    /// pgbench -N: the simple-update script.
    #[arg(short = 'N', conflicts_with_all = ["script", "file"])]
    pub simple_update: bool,
    /// A custom script (pgbench -f): SQL statements separated by
    /// semicolons, run as one transaction each time; `--` comments;
    /// `\set NAME random(LO, HI)` (integers or `N * :scale`) used as
    /// `:NAME`. Other meta-commands are refused, naming the line. No scale
    /// detection (-s, else 1) or pre-run vacuum.
    #[arg(short = 'f', long, value_name = "FILE", conflicts_with = "script")]
    pub file: Option<std::path::PathBuf>,
    /// Report each statement's latency after the run (pgbench -r): count
    /// and average, with every latency field in --json.
    #[arg(short = 'r', long = "report-per-command")]
    pub per_statement: bool,
    /// How statements are sent (pgbench -M): prepared (parsed once per
    /// connection), extended (parsed every time), simple (Query protocol,
    /// values in the text).
    #[arg(short = 'M', long = "protocol", default_value = "prepared", value_parser = parse_mode)]
    pub protocol: QueryMode,
    #[command(flatten)]
    pub coalesce: CoalesceArg,
    /// Print the throughput of the last SEC seconds to stderr (pgbench
    /// -P).
    #[arg(short = 'P', long, value_name = "SEC", value_parser = clap::value_parser!(u32).range(1..))]
    pub progress: Option<u32>,
    /// Tries per transaction on serialization failure or deadlock.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tries: u32,
    /// Open a new connection for every transaction (pgbench -C).
    #[arg(short = 'C', long = "connect")]
    pub connect: bool,
    /// Skip pgbench's pre-run vacuum of tellers/branches and history
    /// truncation.
    #[arg(short = 'n', long)]
    pub no_vacuum: bool,
    /// Build the pgbench dataset (drops existing pgbench tables) and exit.
    #[arg(short = 'i', long)]
    pub init: bool,
    /// Scale for --init (default 1); for a run, overrides detection.
    #[arg(short = 's', long, value_parser = limits::PG_SCALE.parser())]
    pub scale: Option<u32>,
}

/// pgbench's flags: `-j`, `-T`, `-R`; one client.
#[derive(Clone, Debug)]
pub struct Pgbench;

impl LoadDefaults for Pgbench {
    const CONNECTIONS: &'static str = "1";
    const THREADS: Option<&'static str> = None;
    const THREADS_SHORT: char = 'j';
    const DURATION_SHORT_ALIASES: &'static [char] = &['T'];
    const RATE_SHORT: Option<char> = Some('R');
    const TIMEOUT: &'static str = "10s";
}

fn parse_script(s: &str) -> Result<ScriptKind, String> {
    s.parse()
}

fn parse_mode(s: &str) -> Result<QueryMode, String> {
    s.parse()
}

impl LoadPgArgs {
    /// The built-in script, with pgbench's -S and -N.
    fn builtin(&self) -> ScriptKind {
        if self.select_only {
            ScriptKind::SelectOnly
        } else if self.simple_update {
            ScriptKind::SimpleUpdate
        } else {
            self.script
        }
    }

    /// The connection string: the positional argument (a database name,
    /// a connection string or a URI) with `-h`, `-p` and `-U` on top, as
    /// pgbench combines them.
    pub fn conninfo(&self) -> anyhow::Result<String> {
        let given = self.conninfo.as_deref().unwrap_or("").trim();
        let flags: Vec<(&str, String)> = [
            ("host", self.host.clone()),
            ("port", self.port.map(|p| p.to_string())),
            ("user", self.user.clone()),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect();
        let is_uri = given.starts_with("postgresql://") || given.starts_with("postgres://");
        if is_uri {
            if let Some((key, _)) = flags.first() {
                anyhow::bail!(
                    "the {key} is given twice, by a flag and in the URI `{given}`: give -h, -p \
                     and -U with a database name or a key=value string, or put them all in the URI"
                );
            }
            return Ok(given.to_string());
        }
        let mut out = if given.is_empty() || given.contains('=') {
            given.to_string()
        } else {
            format!("dbname={}", conninfo_value(given))
        };
        // In a connection string the last value of a key wins, as in libpq.
        for (key, value) in flags {
            out.push_str(&format!(" {key}={}", conninfo_value(&value)));
        }
        Ok(out.trim().to_string())
    }

    /// -j, else one thread per usable CPU; never more than the clients.
    fn threads(&self) -> u32 {
        let clients = self.shape.connections.max(1);
        self.shape.threads_per_cpu().min(clients)
    }
}

pub fn run(a: &LoadPgArgs, shutdown: &Shutdown) -> anyhow::Result<i32> {
    if a.init {
        return init(a);
    }
    let settings = PgSettings {
        script: a.builtin(),
        max_tries: a.max_tries,
        scale: a.scale,
        vacuum: !a.no_vacuum,
        protocol: a.protocol,
    };
    let mut driver = PgDriver::new(settings, &a.conninfo()?).context("bad connection string")?;
    if let Some(file) = &a.file {
        driver.use_script(pg::custom::read(file)?);
    }
    let spec = spec(a);
    spec.validate()?;
    let scale = driver.scale()?;
    let run = |driver: &PgDriver| driver.run_timed(&spec, shutdown, a.per_statement);
    let (result, statements) = match a.progress {
        Some(every) => {
            let counter = Arc::new(AtomicU64::new(0));
            driver.count_into(counter.clone());
            report_progress_while(counter, Duration::from_secs(every.into()), || run(&driver))?
        }
        None => run(&driver)?,
    };
    let ran = Ran {
        script: driver.script(),
        scale,
        statements,
    };
    a.shape.finish(
        &result,
        shutdown,
        || json(a, &ran, &result),
        || print_summary(a, &ran, &result),
    )
}

/// What a run executed, for its report.
struct Ran {
    script: Script,
    scale: u32,
    /// Each statement's latency with -r; empty without.
    statements: Vec<StatementLatency>,
}

/// A value in a libpq connection string, quoted when it must be.
fn conninfo_value(v: &str) -> String {
    if !v.is_empty() && !v.contains([' ', '\'', '\\']) {
        return v.to_string();
    }
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Runs `work`, printing pgbench's `progress: 5.0 s, 12345.6 tps` line to
/// stderr every `every` from the transactions counted into `counter`.
fn report_progress_while<T>(
    counter: Arc<AtomicU64>,
    every: Duration,
    work: impl FnOnce() -> T,
) -> T {
    let done = Arc::new(AtomicBool::new(false));
    let reporter = {
        let done = done.clone();
        std::thread::spawn(move || {
            // Lines at nominal times (1.0 s, 2.0 s, ...), as pgbench prints
            // them; the rate is over the interval actually elapsed.
            let start = std::time::Instant::now();
            let (mut last_at, mut last_n, mut k) = (start, 0, 1u32);
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
                if start.elapsed() < every * k {
                    continue;
                }
                let (now, n) = (std::time::Instant::now(), counter.load(Ordering::Relaxed));
                let tps = (n - last_n) as f64 / (now - last_at).as_secs_f64();
                eprintln!("progress: {:.1} s, {tps:.1} tps", (every * k).as_secs_f64());
                (last_at, last_n, k) = (now, n, k + 1);
            }
        })
    };
    let out = work();
    done.store(true, Ordering::Relaxed);
    let _ = reporter.join();
    out
}

/// The load shape the arguments ask for (checked by `LoadSpec::validate`).
pub fn spec(a: &LoadPgArgs) -> LoadSpec {
    let mut spec = a.shape.spec(a.threads());
    spec.coalesce = a.coalesce.coalesce;
    if a.connect {
        spec.requests_per_connection = Some(1);
    }
    spec
}

fn init(a: &LoadPgArgs) -> anyhow::Result<i32> {
    let scale = a.scale.unwrap_or(1);
    if !a.shape.json {
        eprintln!("creating the pgbench dataset at scale {scale}...");
    }
    let made = pg::init_dataset(&a.conninfo()?, scale)?;
    if a.shape.json {
        let v = serde_json::json!({
            "scale": made.scale,
            "bytes": made.bytes,
            "elapsed_s": made.elapsed.as_secs_f64(),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "done in {:.2} s: scale {}, database size {}",
            made.elapsed.as_secs_f64(),
            made.scale,
            Bytes(made.bytes)
        );
    }
    Ok(0)
}

fn ms(us: f64) -> String {
    format!("{:.3} ms", us / 1000.0)
}

fn print_summary(a: &LoadPgArgs, ran: &Ran, r: &LoadResult) {
    let failed = r.errors.serialization + r.errors.deadlock + r.errors.other;
    let attempted = r.requests + failed;
    let pct = if attempted > 0 {
        100.0 * failed as f64 / attempted as f64
    } else {
        0.0
    };
    let lat = r.latency_fields();
    outln!("transaction type: {}", ran.script.title);
    outln!("scaling factor: {}", ran.scale);
    outln!("query mode: {}", a.protocol.name());
    outln!("number of clients: {}", a.shape.connections);
    outln!("number of threads: {}", a.threads());
    outln!("maximum number of tries: {}", a.max_tries);
    outln!("duration: {} s", a.shape.duration.as_secs_f64());
    if let Some(rate) = a.shape.rate {
        outln!("rate limit: {rate} tps");
    }
    outln!("number of transactions actually processed: {}", r.requests);
    outln!("number of failed transactions: {failed} ({pct:.3}%)");
    if r.errors.serialization + r.errors.deadlock > 0 {
        outln!(
            "number of serialization failures: {}",
            r.errors.serialization
        );
        outln!("number of deadlock failures: {}", r.errors.deadlock);
    }
    if a.max_tries > 1 {
        outln!("number of transactions retried: {}", r.retries);
    }
    if r.errors.socket_errors() > 0 {
        outln!("connection errors: {}", r.errors.listed(&ErrorKind::SOCKET));
    }
    outln!("latency average = {}", ms(lat.mean));
    outln!("latency stddev = {}", ms(lat.stdev));
    outln!(
        "latency p50 = {}, p75 = {}, p90 = {}, p99 = {}, p99.9 = {}, max = {}",
        lat.p50,
        lat.p75,
        lat.p90,
        lat.p99,
        lat.p999,
        lat.max
    );
    print_schedule_lag("rate limit schedule lag:", r);
    outln!("tps = {:.6} (without initial connection time)", r.rps());
    let per_txn = if r.requests > 0 {
        Micros((r.client_cpu.0 / r.requests as f64 * 1e6) as u64).to_string()
    } else {
        "-".into()
    };
    outln!(
        "client CPU = {:.3} s ({per_txn} per transaction)",
        r.client_cpu.0
    );
    if !ran.statements.is_empty() {
        outln!("statement latencies in milliseconds (count, average):");
        for s in &ran.statements {
            let first_line = s.sql.lines().next().unwrap_or_default();
            outln!(
                "  {:>10}  {:>10.3}  {first_line}",
                s.latency.len(),
                s.latency.mean() / 1000.0
            );
        }
    }
    print_notes("note:", r);
}

fn json(a: &LoadPgArgs, ran: &Ran, r: &LoadResult) -> serde_json::Value {
    let m = Measurement::from(r);
    let v = serde_json::json!({
        "script": ran.script.name,
        "protocol": a.protocol.name(),
        "scale": ran.scale,
        "clients": a.shape.connections,
        "threads": a.threads(),
        "transactions": m.requests,
        "tps": m.rps,
        "failures": m.errors,
        "retries": m.retries,
        "client_cpu_s": m.client_cpu_s,
        "duration_s": m.duration_s,
        "connections_opened": m.connections_opened,
        "target_rate": m.target_rate,
        "notes": r.notes,
        "statements": a.per_statement.then(|| statements_json(&ran.statements)),
    });
    with_latency(v, r)
}

/// -r's statements: each one's SQL, count and latency fields.
fn statements_json(statements: &[StatementLatency]) -> serde_json::Value {
    statements
        .iter()
        .map(|s| {
            serde_json::json!({
                "sql": s.sql,
                "count": s.latency.len(),
                "latency_us": LatencyFields::of(&s.latency),
            })
        })
        .collect()
}
