//! `scalelab load pg`: one pgbench-style run, or `--init` to build the
//! dataset (pgbench -i).

use super::habits::Habit;
use super::load_args::{
    print_notes, print_schedule_lag, report_progress_while, with_latency, CoalesceArg,
    LoadDefaults, LoadShape,
};
use anyhow::Context;
use scalelab::load::limits;
use scalelab::load::live::{Interval, Live};
use scalelab::load::pg::{
    self, PgDriver, PgSettings, QueryMode, Script, ScriptKind, StatementLatency,
};
use scalelab::load::result::{LatencySummary, Measurement};
use scalelab::load::{ErrorKind, LoadResult, LoadSpec};
use scalelab::shutdown::Shutdown;
use scalelab::units::{Bytes, Micros};
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Debug)]
#[command(
    disable_help_flag = true,
    after_help = "pgbench's own flags work too, short and long: -h HOST, -p PORT, -U USER, \
DBNAME, -c/--client, -j/--jobs, -T/--time SEC, -R/--rate TPS, -S/--select-only, \
-N/--skip-some-updates, -b/--builtin NAME[@WEIGHT], -f/--file FILE, -r, \
-M/--protocol simple|extended|prepared (default simple, as pgbench's), -P/--progress SEC, \
-L/--latency-limit MS, -l/--log, -C, -n, -i, -s. As in pgbench, -h is the host: help is --help."
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
    /// `-b NAME`; `-S` and `-N` are select-only and simple-update). A
    /// pgbench's `@WEIGHT` too: given several times, each transaction
    /// runs one of them, drawn by weight, as pgbench mixes scripts.
    #[arg(
        long,
        short = 'b',
        alias = "builtin",
        default_value = "tpcb-like",
        value_name = "NAME[@WEIGHT]",
        value_parser = parse_script,
        action = clap::ArgAction::Append
    )]
    pub script: Vec<Weighted>,
    /// pgbench -S: the select-only script.
    #[arg(short = 'S', long, conflicts_with_all = ["script", "simple_update", "file"])]
    pub select_only: bool,
    /// pgbench -N: the simple-update script.
    #[arg(short = 'N', long = "skip-some-updates", conflicts_with_all = ["script", "file"])]
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
    /// How statements are sent (pgbench -M): simple (Query protocol,
    /// values in the text; pgbench's default), extended (parsed every
    /// time), prepared (parsed once per connection). Recipes keep their own
    /// `protocol` setting (prepared unless they say).
    #[arg(short = 'M', long = "protocol", default_value = "simple", value_parser = parse_mode)]
    pub protocol: QueryMode,
    #[command(flatten)]
    pub coalesce: CoalesceArg,
    /// Print the throughput and latency (mean, stddev) of the last SEC
    /// seconds to stderr (pgbench -P).
    #[arg(short = 'P', long, value_name = "SEC", value_parser = clap::value_parser!(u32).range(1..))]
    pub progress: Option<u32>,
    /// Count the transactions that took longer than MS milliseconds, and
    /// report them as late; with -R, skip (do not send) those already
    /// later than that against their schedule (pgbench -L).
    #[arg(short = 'L', long, value_name = "MS", value_parser = latency_limit)]
    pub latency_limit: Option<Duration>,
    /// Write every transaction to pgbench_log.PID (more threads:
    /// pgbench_log.PID.N) in pgbench -l's format: client_id
    /// transaction_no time script_no time_epoch time_us [schedule_lag].
    #[arg(short = 'l', long)]
    pub log: bool,
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
    #[arg(short = 'i', long, alias = "initialize")]
    pub init: bool,
    /// Scale for --init (default 1); for a run, overrides detection.
    #[arg(short = 's', long, value_parser = limits::PG_SCALE.parser())]
    pub scale: Option<u32>,
}

/// pgbench's flags: `-c`/`--client`, `-j`/`--jobs`, `-T`/`--time`, `-R`;
/// one client.
#[derive(Clone, Debug)]
pub struct Pgbench;

impl LoadDefaults for Pgbench {
    const CONNECTIONS: &'static str = "1";
    const THREADS: Option<&'static str> = None;
    const THREADS_SHORT: char = 'j';
    const DURATION_SHORT_ALIASES: &'static [char] = &['T'];
    const RATE_SHORT: Option<char> = Some('R');
    const TIMEOUT: &'static str = "10s";
    const CONNECTIONS_ALIASES: &'static [&'static str] = &["clients", "sockets", "client"];
    const THREADS_ALIASES: &'static [&'static str] = &["jobs"];
    const DURATION_ALIASES: &'static [&'static str] = &["time"];
}

/// pgbench's flags that `load pg` cannot take, and what to write instead.
pub const HABITS: &[Habit] = &[
    Habit {
        flags: &["-t", "--transactions"],
        tool: "pgbench",
        instead: "a number of transactions per client is not supported; give the run's \
                  length with -T SEC (--time)",
    },
    Habit {
        flags: &["--log-prefix", "--sampling-rate", "--aggregate-interval"],
        tool: "pgbench",
        instead: "-l logs every transaction to pgbench_log.PID; prefixes, sampling and \
                  aggregation are not supported",
    },
    Habit {
        flags: &["-D", "--define"],
        tool: "pgbench",
        instead: "variables are not supported on the command line; use \\set NAME \
                  random(LO, HI) in the -f script",
    },
    Habit {
        flags: &["-I", "--init-steps"],
        tool: "pgbench",
        instead: "-i builds all of pgbench's default steps (dtgvp); init steps are not \
                  supported",
    },
];

/// A built-in script and its weight in a mix (pgbench `-b NAME@WEIGHT`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weighted {
    /// The script.
    pub kind: ScriptKind,
    /// Its weight (1 unless given); with one script it changes nothing.
    pub weight: u32,
}

/// `-b NAME[@WEIGHT]`.
fn parse_script(s: &str) -> Result<Weighted, String> {
    let (name, weight) = s.split_once('@').unwrap_or((s, "1"));
    match weight.parse::<u32>() {
        Ok(weight) => Ok(Weighted {
            kind: name.parse()?,
            weight,
        }),
        Err(_) => Err(format!(
            "weight `{weight}` in `{s}` is not a whole number (pgbench's NAME@WEIGHT)"
        )),
    }
}

/// `-L MS`: milliseconds, as pgbench takes them (fractions allowed).
fn latency_limit(s: &str) -> Result<Duration, String> {
    s.parse::<f64>()
        .ok()
        .filter(|ms| ms.is_finite() && *ms > 0.0 && *ms < 3.6e6)
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .ok_or_else(|| format!("`{s}` is not a latency limit in milliseconds, such as 10 or 2.5"))
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
            self.script.last().map_or(ScriptKind::TpcbLike, |s| s.kind)
        }
    }

    /// pgbench's mix of weighted scripts (`-b A@W -b B@W`), when more than
    /// one is given.
    pub fn mix(&self) -> Option<Vec<(Script, u32)>> {
        (self.script.len() > 1).then(|| {
            self.script
                .iter()
                .map(|s| (s.kind.into(), s.weight))
                .collect()
        })
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
        ..PgSettings::default()
    };
    let mut driver = PgDriver::new(settings, &a.conninfo()?).context("bad connection string")?;
    if let Some(file) = &a.file {
        driver.use_script(pg::custom::read(file)?);
    }
    if let Some(mix) = a.mix() {
        driver.use_mix(mix)?;
    }
    if a.log {
        driver.log_into(format!("pgbench_log.{}", std::process::id()).into());
    }
    if let (Some(limit), Some(_)) = (a.latency_limit, a.shape.rate) {
        driver.skip_later_than(limit);
    }
    let spec = spec(a);
    spec.validate()?;
    let scale = driver.scale()?;
    let run = |driver: &PgDriver| driver.run_timed(&spec, shutdown, a.per_statement);
    let timed = match a.progress {
        Some(every) => {
            let live = Arc::new(Live::default());
            driver.count_into(live.clone());
            let every = Duration::from_secs(every.into());
            report_progress_while(live, every, progress_line, || run(&driver))?
        }
        None => run(&driver)?,
    };
    let result = timed.result;
    let ran = Ran {
        scripts: driver.scripts(),
        by_script: timed.by_script,
        scale,
        statements: timed.statements,
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
    /// The scripts with their weights (one, unless `-b` mixed several).
    scripts: Vec<(Script, u32)>,
    /// Completed transactions per script.
    by_script: Vec<u64>,
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

/// pgbench -P's line: `progress: 5.0 s, 1234.5 tps, lat 0.810 ms stddev
/// 0.183, 0 failed`.
fn progress_line(at: Duration, i: Interval, secs: f64) -> String {
    format!(
        "progress: {:.1} s, {:.1} tps, lat {:.3} ms stddev {:.3}, {} failed",
        at.as_secs_f64(),
        i.done as f64 / secs.max(1e-9),
        i.mean_us / 1000.0,
        i.stddev_us / 1000.0,
        i.failed
    )
}

/// The load shape the arguments ask for (checked by `LoadSpec::validate`).
pub fn spec(a: &LoadPgArgs) -> LoadSpec {
    let mut spec = a.shape.spec(a.shape.threads_per_cpu());
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
    let lat = r.latency_summary();
    match ran.scripts.as_slice() {
        [(one, _)] => outln!("transaction type: {}", one.title),
        _ => outln!("transaction type: multiple scripts"),
    }
    outln!("scaling factor: {}", ran.scale);
    outln!("query mode: {}", a.protocol.name());
    outln!("number of clients: {}", a.shape.connections);
    outln!("number of threads: {}", a.shape.threads_per_cpu());
    outln!("maximum number of tries: {}", a.max_tries);
    outln!("duration: {} s", a.shape.duration.as_secs_f64());
    if let Some(rate) = a.shape.rate {
        outln!("rate limit: {rate} tps");
    }
    outln!("number of transactions actually processed: {}", r.requests);
    outln!("number of failed transactions: {failed} ({pct:.3}%)");
    if let (Some(_), Some(_)) = (a.latency_limit, a.shape.rate) {
        let scheduled = r.requests + failed + r.skipped;
        outln!(
            "number of transactions skipped: {} ({:.3}%)",
            r.skipped,
            100.0 * r.skipped as f64 / scheduled.max(1) as f64
        );
    }
    if let Some(limit) = a.latency_limit {
        let (late, of) = late(r, limit);
        outln!(
            "number of transactions above the {:.1} ms latency limit: {late}/{of} ({:.3}%)",
            limit.as_secs_f64() * 1000.0,
            100.0 * late as f64 / of.max(1) as f64
        );
    }
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
        lat.p75.unwrap_or_default(),
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
    print_mix(ran, r);
    print_notes("note:", r);
}

/// pgbench's per-script lines of a mix: `SQL script 1: <builtin: select
/// only>`, its weight and the share it targets, and what it ran.
fn print_mix(ran: &Ran, r: &LoadResult) {
    if ran.scripts.len() < 2 {
        return;
    }
    let total_weight: u32 = ran.scripts.iter().map(|(_, w)| w).sum();
    let done: u64 = ran.by_script.iter().sum();
    for (i, ((script, weight), n)) in ran.scripts.iter().zip(&ran.by_script).enumerate() {
        outln!("SQL script {}: {}", i + 1, script.title);
        outln!(
            " - weight: {weight} (targets {:.1}% of total)",
            100.0 * f64::from(*weight) / f64::from(total_weight.max(1))
        );
        outln!(
            " - {n} transactions ({:.1}% of total, tps = {:.6})",
            100.0 * *n as f64 / done.max(1) as f64,
            *n as f64 / r.elapsed.as_secs_f64().max(1e-9)
        );
    }
}

/// Completed transactions that took longer than `limit`, and all completed
/// ones (pgbench -L's "late"), from the latency histogram (microseconds).
fn late(r: &LoadResult, limit: Duration) -> (u64, u64) {
    let limit_us = Micros::from_duration(limit).0;
    let within: u64 = r
        .latency
        .iter_recorded()
        .filter(|v| v.value_iterated_to() <= limit_us)
        .map(|v| v.count_at_value())
        .sum();
    let all = r.latency.len();
    (all - within.min(all), all)
}

fn json(a: &LoadPgArgs, ran: &Ran, r: &LoadResult) -> serde_json::Value {
    let m = Measurement::from(r);
    let v = serde_json::json!({
        "script": ran.scripts.first().map(|(s, _)| s.name.clone()),
        "scripts": ran.scripts.iter().zip(&ran.by_script).map(|((s, w), n)| serde_json::json!({
            "name": s.name,
            "weight": w,
            "transactions": n,
        })).collect::<Vec<_>>(),
        "protocol": a.protocol.name(),
        "scale": ran.scale,
        "clients": a.shape.connections,
        "threads": a.shape.threads_per_cpu(),
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
        "latency_limit_ms": a.latency_limit.map(|l| l.as_secs_f64() * 1000.0),
        "late": a.latency_limit.map(|l| late(r, l).0),
        "skipped": r.skipped,
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
                "latency_us": LatencySummary::of(&s.latency),
            })
        })
        .collect()
}
