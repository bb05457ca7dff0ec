//! `scalelab load mysql`: one sysbench-style OLTP run, or `--init` to build
//! sysbench's dataset (`sysbench oltp_* prepare`).

use super::habits::Habit;
use super::load_args::{
    print_notes, print_schedule_lag, report_progress_while, with_latency, CoalesceArg,
    LoadDefaults, LoadShape,
};
use scalelab::load::limits;
use scalelab::load::live::{Interval, Live};
use scalelab::load::mysql::{self, MysqlDriver, MysqlSettings, Options, ScriptKind};
use scalelab::load::{Driver, LoadResult, LoadSpec};
use scalelab::shutdown::Shutdown;
use scalelab::units::Bytes;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Debug)]
#[command(after_help = "sysbench's own way works too: \
`scalelab load mysql oltp_read_only --mysql-host=127.0.0.1 --mysql-port=3306 \
--mysql-user=sbtest --mysql-password=PW --mysql-db=sbtest --threads=8 --time=10 \
--report-interval=1 run` (`prepare` is --init).")]
pub struct LoadMysqlArgs {
    /// mysql://USER:PASS@127.0.0.1:PORT/DB (loopback only), or sysbench's
    /// --mysql-* flags; sysbench's test name (oltp_read_only, also as a
    /// path to its .lua) and command (`run`, or `prepare` for --init) may
    /// stand before or after the flags.
    #[arg(value_name = "URL|TESTNAME|run", num_args = 0..=3)]
    pub words: Vec<String>,
    #[command(flatten)]
    pub shape: LoadShape<Sysbench>,
    /// oltp_read_only, oltp_read_write, oltp_point_select, oltp_write_only
    /// or oltp_update_index (default oltp_read_write).
    #[arg(long, value_parser = parse_script)]
    pub script: Option<ScriptKind>,
    #[command(flatten)]
    pub mysql: SysbenchConnection,
    /// Print the throughput and mean latency of the last SEC seconds to
    /// stderr (sysbench --report-interval).
    #[arg(long, alias = "progress", value_name = "SEC", value_parser = clap::value_parser!(u32).range(1..))]
    pub report_interval: Option<u32>,
    /// sysbench's --db-driver: only `mysql` (MariaDB included).
    #[arg(long, hide = true, value_parser = ["mysql"])]
    pub db_driver: Option<String>,
    /// Tables to use (sysbench --tables); default: all in the schema.
    /// With --init: tables to create (default 1).
    #[arg(long, value_parser = limits::MYSQL_TABLES.parser())]
    pub tables: Option<u32>,
    /// Rows per table (sysbench --table-size); default: as in the schema.
    /// With --init: rows to create (default 10000).
    #[arg(long, value_parser = limits::MYSQL_TABLE_SIZE.parser())]
    pub table_size: Option<u32>,
    #[command(flatten)]
    pub coalesce: CoalesceArg,
    /// TLS: sysbench's on/off, or the MySQL client's --ssl-mode values
    /// (disabled, required, verify_ca, verify_identity); default off.
    #[arg(long, value_name = "on|off|MODE", num_args = 0..=1, default_missing_value = "on")]
    pub mysql_ssl: Option<String>,
    /// With --mysql-ssl verify_identity: the CA (PEM) that verifies the
    /// server's certificate (sysbench --mysql-ssl-ca).
    #[arg(long, value_name = "FILE")]
    pub mysql_ssl_ca: Option<std::path::PathBuf>,
    /// Build sysbench's dataset (drops sbtest1..N first) and exit.
    #[arg(long)]
    pub init: bool,
}

/// sysbench's shape: its `--threads` is the number of client connections
/// (our `--connections`) and `--time` the duration; our worker threads are
/// `-j`/`--worker-threads`; one connection.
#[derive(Clone, Debug)]
pub struct Sysbench;

impl LoadDefaults for Sysbench {
    const CONNECTIONS: &'static str = "1";
    const THREADS: Option<&'static str> = None;
    const THREADS_SHORT: char = 'j';
    const DURATION_SHORT_ALIASES: &'static [char] = &[];
    const RATE_SHORT: Option<char> = None;
    const TIMEOUT: &'static str = "10s";
    const CONNECTIONS_ALIASES: &'static [&'static str] = &["clients", "sockets", "threads"];
    const THREADS_LONG: &'static str = "worker-threads";
    const DURATION_ALIASES: &'static [&'static str] = &["time"];
}

/// sysbench's connection flags; with none of them, the URL says it all.
#[derive(clap::Args, Debug, Default)]
pub struct SysbenchConnection {
    /// The server's host (sysbench --mysql-host; default localhost).
    #[arg(long, value_name = "HOST")]
    pub mysql_host: Option<String>,
    /// The server's port (sysbench --mysql-port; default 3306).
    #[arg(long, value_name = "PORT")]
    pub mysql_port: Option<u16>,
    /// The user (sysbench --mysql-user; default sbtest).
    #[arg(long, value_name = "USER")]
    pub mysql_user: Option<String>,
    /// The password (sysbench --mysql-password; default empty).
    #[arg(long, value_name = "PASSWORD")]
    pub mysql_password: Option<String>,
    /// The database (sysbench --mysql-db; default sbtest).
    #[arg(long, value_name = "DB")]
    pub mysql_db: Option<String>,
}

impl SysbenchConnection {
    fn any(&self) -> bool {
        self.mysql_host.is_some()
            || self.mysql_port.is_some()
            || self.mysql_user.is_some()
            || self.mysql_password.is_some()
            || self.mysql_db.is_some()
    }

    /// The URL these flags name, with sysbench's defaults.
    fn url(&self) -> String {
        let host = self.mysql_host.as_deref().unwrap_or("localhost");
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        let user = percent_encode(self.mysql_user.as_deref().unwrap_or("sbtest"));
        let password = match self.mysql_password.as_deref() {
            Some(p) if !p.is_empty() => format!(":{}", percent_encode(p)),
            _ => String::new(),
        };
        format!(
            "mysql://{user}{password}@{host}:{}/{}",
            self.mysql_port.unwrap_or(3306),
            percent_encode(self.mysql_db.as_deref().unwrap_or("sbtest"))
        )
    }
}

/// `s` with every byte outside RFC 3986's unreserved set percent-encoded.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// sysbench's flags that `load mysql` cannot take.
pub const HABITS: &[Habit] = &[
    Habit {
        flags: &["--mysql-socket"],
        tool: "sysbench",
        instead: "scalelab connects over TCP to loopback: give --mysql-host 127.0.0.1 \
                  --mysql-port PORT (or a mysql:// URL)",
    },
    Habit {
        flags: &["--events"],
        tool: "sysbench",
        instead: "a number of events is not supported; give the run's length with \
                  --time SEC",
    },
];

/// What the command line asks for, once sysbench's words are read.
#[derive(Debug, PartialEq)]
pub struct Call {
    /// The server, as a mysql:// URL.
    pub url: String,
    /// The test.
    pub script: ScriptKind,
    /// `prepare` or --init: build the dataset and exit.
    pub init: bool,
}

impl LoadMysqlArgs {
    /// The URL, the test and the command, from the positional words (a
    /// URL, sysbench's test name, `run` or `prepare`), the flags and
    /// sysbench's defaults.
    pub fn call(&self) -> anyhow::Result<Call> {
        let (mut url, mut script, mut init) = (None, None, self.init);
        for word in &self.words {
            if word.starts_with("mysql://") {
                once(&mut url, word.clone(), "URL")?;
            } else if word == "run" {
            } else if word == "prepare" {
                init = true;
            } else if let Ok(test) = sysbench_test(word) {
                once(&mut script, test, "test name")?;
            } else {
                anyhow::bail!(
                    "`{word}` is neither a mysql:// URL, a sysbench test (oltp_read_only, \
                     oltp_read_write, oltp_point_select, oltp_write_only, oltp_update_index) \
                     nor a command (run; prepare is --init; cleanup is not supported: --init \
                     drops the tables it rebuilds)"
                );
            }
        }
        let url = match (url, self.mysql.any()) {
            (Some(_), true) => anyhow::bail!(
                "the server is given twice, by a mysql:// URL and by --mysql-* flags: give one"
            ),
            (Some(url), false) => url,
            (None, _) => self.mysql.url(),
        };
        let script = match (script, self.script) {
            (Some(a), Some(b)) if a != b => anyhow::bail!(
                "two tests: `{}` and --script {}; give one",
                a.name(),
                b.name()
            ),
            (a, b) => a.or(b).unwrap_or(ScriptKind::OltpReadWrite),
        };
        Ok(Call { url, script, init })
    }
}

/// Sets `slot` once; a second value is an error naming `what`.
fn once<T>(slot: &mut Option<T>, value: T, what: &str) -> anyhow::Result<()> {
    if slot.replace(value).is_some() {
        anyhow::bail!("the {what} is given twice; give one");
    }
    Ok(())
}

/// A sysbench test as sysbench takes it: `oltp_read_only`, or a path to
/// its script (`/usr/share/sysbench/oltp_read_only.lua`).
fn sysbench_test(word: &str) -> Result<ScriptKind, String> {
    let base = word.rsplit('/').next().unwrap_or(word);
    base.strip_suffix(".lua").unwrap_or(base).parse()
}

fn parse_script(s: &str) -> Result<ScriptKind, String> {
    s.parse()
}

pub fn run(a: &LoadMysqlArgs, shutdown: &Shutdown) -> anyhow::Result<i32> {
    let call = a.call()?;
    if call.init {
        return init(a, &call);
    }
    let settings = MysqlSettings {
        script: call.script,
        tables: a.tables,
        table_size: a.table_size,
        ssl_mode: a.mysql_ssl.clone(),
        ca_file: a.mysql_ssl_ca.clone(),
        ..MysqlSettings::default()
    };
    let mut driver = MysqlDriver::new(settings, &call.url)?;
    let spec = spec(a);
    spec.validate()?;
    let opts = driver.options(&mut driver.connect()?)?;
    let result = match a.report_interval {
        Some(every) => {
            let live = Arc::new(Live::default());
            driver.count_into(live.clone());
            let every = Duration::from_secs(every.into());
            let line = |at, i, secs| progress_line(a, &call, &opts, at, i, secs);
            report_progress_while(live, every, line, || driver.run(&spec, shutdown))?
        }
        None => driver.run(&spec, shutdown)?,
    };
    a.shape.finish(
        &result,
        shutdown,
        || json(&call, a, &opts, &spec, &result),
        || print_summary(&call, a, &opts, &spec, &result),
    )
}

/// sysbench --report-interval's line: `[ 2s ] thds: 8 tps: 1234.50 qps:
/// 24690.00 (r/w/o: 17283.00/4938.00/2469.00) lat (ms,avg): 6.48 err/s:
/// 0.00 reconn/s: 0.00` (the mean latency, where sysbench prints its 95th
/// percentile by default).
fn progress_line(
    a: &LoadMysqlArgs,
    call: &Call,
    opts: &Options,
    at: Duration,
    i: Interval,
    secs: f64,
) -> String {
    let mix = call.script.mix(opts);
    let per_s = |n: u64| n as f64 / secs.max(1e-9);
    let (r, w, o) = (
        per_s(mix.reads * i.done),
        per_s(mix.writes * i.done),
        per_s(mix.other * i.done),
    );
    format!(
        "[ {}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {r:.2}/{w:.2}/{o:.2}) lat (ms,avg): \
         {:.2} err/s: {:.2} reconn/s: 0.00",
        at.as_secs(),
        a.shape.connections,
        per_s(i.done),
        r + w + o,
        i.mean_us / 1000.0,
        per_s(i.failed)
    )
}

fn spec(a: &LoadMysqlArgs) -> LoadSpec {
    let mut spec = a.shape.spec(a.shape.threads_per_cpu());
    spec.coalesce = a.coalesce.coalesce;
    spec
}

fn init(a: &LoadMysqlArgs, call: &Call) -> anyhow::Result<i32> {
    let tables = a.tables.unwrap_or(1);
    let size = a.table_size.unwrap_or(10_000);
    if !a.shape.json {
        eprintln!("creating {tables} sysbench table(s) of {size} rows...");
    }
    let made = mysql::init_dataset(&call.url, tables, size)?;
    if a.shape.json {
        let v = serde_json::json!({
            "tables": made.tables,
            "table_size": made.table_size,
            "bytes": made.bytes,
            "elapsed_s": made.elapsed.as_secs_f64(),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "done in {:.2} s: {} table(s) of {} rows, {} of data and indexes",
            made.elapsed.as_secs_f64(),
            made.tables,
            made.table_size,
            Bytes(made.bytes)
        );
    }
    Ok(0)
}

fn per_sec(n: u64, r: &LoadResult) -> f64 {
    n as f64 / r.elapsed.as_secs_f64().max(1e-9)
}

fn print_summary(call: &Call, a: &LoadMysqlArgs, opts: &Options, spec: &LoadSpec, r: &LoadResult) {
    let mix = call.script.mix(opts);
    let txns = r.requests;
    let (reads, writes, other) = (mix.reads * txns, mix.writes * txns, mix.other * txns);
    let queries = reads + writes + other;
    let ms = |us: f64| format!("{:.2}", us / 1000.0);
    let lat = r.latency_summary();
    outln!(
        "scalelab load mysql: {} ({})",
        call.script.name(),
        url_describe(&call.url)
    );
    outln!(
        "Number of connections: {}, threads: {}, tables: {} x {} rows",
        a.shape.connections,
        spec.effective_threads(),
        opts.tables,
        opts.table_size
    );
    if let Some(rate) = a.shape.rate {
        outln!("Target rate: {rate} transactions/s (open loop)");
    }
    outln!();
    outln!("SQL statistics:");
    outln!("    queries performed:");
    outln!("        read:                            {reads}");
    outln!("        write:                           {writes}");
    outln!("        other:                           {other}");
    outln!("        total:                           {queries}");
    outln!(
        "    transactions:                        {txns:<8} ({:.2} per sec.)",
        r.rps()
    );
    outln!(
        "    queries:                             {queries:<8} ({:.2} per sec.)",
        per_sec(queries, r)
    );
    outln!(
        "    ignored errors:                      {:<8} ({:.2} per sec.)",
        r.retries,
        per_sec(r.retries, r)
    );
    let e = &r.errors;
    if e.total() > 0 {
        outln!("    errors: {}", e.listed(mysql::LOAD_KIND.error_kinds));
    }
    outln!();
    outln!("General statistics:");
    outln!(
        "    total time:                          {:.4}s",
        r.elapsed.as_secs_f64()
    );
    outln!("    total number of events:              {txns}");
    outln!();
    outln!("Latency (ms):");
    outln!("         avg:                            {}", ms(lat.mean));
    outln!("         stddev:                         {}", ms(lat.stdev));
    for (name, v) in [
        ("p50", lat.p50),
        ("p75", lat.p75.unwrap_or_default()),
        ("p90", lat.p90),
        ("p99", lat.p99),
        ("p99.9", lat.p999),
        ("max", lat.max),
    ] {
        outln!("         {:<32}{}", format!("{name}:"), ms(v.0 as f64));
    }
    print_schedule_lag("    schedule lag (rate mode):", r);
    outln!();
    let per_txn = if txns > 0 {
        format!("{:.1} us", r.client_cpu.0 / txns as f64 * 1e6)
    } else {
        "-".into()
    };
    outln!(
        "Client CPU: {:.3} s ({per_txn} per transaction), connections opened: {}",
        r.client_cpu.0,
        r.connections_opened
    );
    print_notes("note:", r);
}

fn url_describe(url: &str) -> String {
    scalelab::wire::mysql::MysqlUrl::parse(url)
        .map(|u| u.describe())
        .unwrap_or_default()
}

fn json(
    call: &Call,
    a: &LoadMysqlArgs,
    opts: &Options,
    spec: &LoadSpec,
    r: &LoadResult,
) -> serde_json::Value {
    let queries = call.script.statements_per_transaction(opts) * r.requests;
    let v = serde_json::json!({
        "script": call.script.name(),
        "tables": opts.tables,
        "table_size": opts.table_size,
        "connections": a.shape.connections,
        "threads": spec.effective_threads(),
        "transactions": r.requests,
        "queries": queries,
        "tps": r.rps(),
        "qps": per_sec(queries, r),
        "duration_s": r.elapsed.as_secs_f64(),
        "errors": r.errors,
        "retries": r.retries,
        "client_cpu_s": r.client_cpu.0,
        "connections_opened": r.connections_opened,
        "target_rate": r.target_rate,
        "notes": r.notes,
    });
    with_latency(v, r)
}
