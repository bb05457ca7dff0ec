//! `scalelab load mysql`: one sysbench-style OLTP run, or `--init` to build
//! sysbench's dataset (`sysbench oltp_* prepare`).

use super::load_args::{
    print_notes, print_schedule_lag, with_latency, CoalesceArg, LoadDefaults, LoadShape,
};
use scalelab::load::limits;
use scalelab::load::mysql::{self, MysqlDriver, MysqlSettings, Options, ScriptKind};
use scalelab::load::{Driver, LoadResult, LoadSpec};
use scalelab::shutdown::Shutdown;
use scalelab::units::Bytes;

#[derive(clap::Args, Debug)]
pub struct LoadMysqlArgs {
    /// mysql://USER:PASS@127.0.0.1:PORT/DB (loopback only).
    pub url: String,
    #[command(flatten)]
    pub shape: LoadShape<Sysbench>,
    /// oltp_read_only, oltp_read_write, oltp_point_select, oltp_write_only
    /// or oltp_update_index.
    #[arg(long, default_value = "oltp_read_write", value_parser = parse_script)]
    pub script: ScriptKind,
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

fn parse_script(s: &str) -> Result<ScriptKind, String> {
    s.parse()
}

pub fn run(a: &LoadMysqlArgs, shutdown: &Shutdown) -> anyhow::Result<i32> {
    if a.init {
        return init(a);
    }
    let settings = MysqlSettings {
        script: a.script,
        tables: a.tables,
        table_size: a.table_size,
        ..MysqlSettings::default()
    };
    let driver = MysqlDriver::new(settings, &a.url)?;
    let spec = spec(a);
    spec.validate()?;
    let opts = driver.options(&mut driver.connect()?)?;
    let result = driver.run(&spec, shutdown)?;
    a.shape.finish(
        &result,
        shutdown,
        || json(a, &opts, &spec, &result),
        || print_summary(a, &opts, &spec, &result),
    )
}

fn spec(a: &LoadMysqlArgs) -> LoadSpec {
    let mut spec = a.shape.spec(a.shape.threads_per_cpu());
    spec.coalesce = a.coalesce.coalesce;
    spec
}

fn init(a: &LoadMysqlArgs) -> anyhow::Result<i32> {
    let tables = a.tables.unwrap_or(1);
    let size = a.table_size.unwrap_or(10_000);
    if !a.shape.json {
        eprintln!("creating {tables} sysbench table(s) of {size} rows...");
    }
    let made = mysql::init_dataset(&a.url, tables, size)?;
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

fn print_summary(a: &LoadMysqlArgs, opts: &Options, spec: &LoadSpec, r: &LoadResult) {
    let mix = a.script.mix(opts);
    let txns = r.requests;
    let (reads, writes, other) = (mix.reads * txns, mix.writes * txns, mix.other * txns);
    let queries = reads + writes + other;
    let ms = |us: f64| format!("{:.2}", us / 1000.0);
    let lat = r.latency_fields();
    outln!(
        "scalelab load mysql: {} ({})",
        a.script.name(),
        a.url_describe()
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
        ("p75", lat.p75),
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

impl LoadMysqlArgs {
    fn url_describe(&self) -> String {
        scalelab::wire::mysql::MysqlUrl::parse(&self.url)
            .map(|u| u.describe())
            .unwrap_or_default()
    }
}

fn json(a: &LoadMysqlArgs, opts: &Options, spec: &LoadSpec, r: &LoadResult) -> serde_json::Value {
    let queries = a.script.statements_per_transaction(opts) * r.requests;
    let v = serde_json::json!({
        "script": a.script.name(),
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
