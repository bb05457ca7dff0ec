//! The arguments every `scalelab load` kind shares (one long name per
//! concept: `--connections`, `--threads`, `--duration`, `--rate`,
//! `--timeout`, `--json`), flattened into each kind's own arguments, and the
//! end every run shares (JSON or the tool's text, then the exit code).
//!
//! Each kind keeps the short flags and defaults of the tool it mimics
//! ([`LoadDefaults`]): pgbench's `-j` and `-T`, dnsperf's `-Q`, wrk's `-t`
//! and `-R`. The long names the kinds once had on their own (`--clients`,
//! `--sockets`) still parse, as hidden aliases of `--connections`.

use scalelab::load::live::{Interval, Live};
use scalelab::load::{limits, LoadResult, LoadSpec, Pacing};
use scalelab::shutdown::Shutdown;
use scalelab::units::parse_duration;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The defaults and short flags of one load kind's shared arguments.
pub trait LoadDefaults: std::fmt::Debug + Clone + Send + Sync + 'static {
    /// `--connections` when not given. (Defaults are text: clap's typed
    /// defaults keep one value per field, not one per kind.)
    const CONNECTIONS: &'static str;
    /// `--threads` when not given (`None`: the kind decides, see
    /// [`LoadShape::threads_per_cpu`]).
    const THREADS: Option<&'static str>;
    /// The short flag of `--threads` (wrk `-t`, pgbench `-j`).
    const THREADS_SHORT: char;
    /// Other short flags for `--duration` (pgbench `-T`).
    const DURATION_SHORT_ALIASES: &'static [char];
    /// The short flag of `--rate`, if any (wrk2 and pgbench `-R`, dnsperf
    /// `-Q`).
    const RATE_SHORT: Option<char>;
    /// `--timeout` when not given.
    const TIMEOUT: &'static str;
    /// Other long names of `--connections` (hidden): the names the kinds
    /// once had, and the mimicked tool's (sysbench's `--threads`).
    const CONNECTIONS_ALIASES: &'static [&'static str] = &["clients", "sockets"];
    /// The long name of our worker threads (`--threads`, unless the tool
    /// spends that name on its clients).
    const THREADS_LONG: &'static str = "threads";
    /// Other long names of `--threads` (pgbench's `--jobs`).
    const THREADS_ALIASES: &'static [&'static str] = &[];
    /// Other long names of `--duration` (sysbench's `--time`).
    const DURATION_ALIASES: &'static [&'static str] = &[];
    /// Added to the error of a `--duration` that is not one (dnsperf's
    /// `-d FILE` is its query file).
    const DURATION_HINT: &'static str = "";
}

/// The shape of an ad-hoc load run, as every load kind takes it.
#[derive(clap::Args, Debug, Clone)]
pub struct LoadShape<D: LoadDefaults> {
    /// Concurrent connections: pgbench's clients, sysbench's threads,
    /// dnsperf's UDP sockets (spread over the threads).
    #[arg(
        short = 'c',
        long,
        aliases = D::CONNECTIONS_ALIASES,
        default_value = D::CONNECTIONS,
        value_name = "N",
        value_parser = limits::CONNECTIONS.parser()
    )]
    pub connections: u32,
    /// Worker threads, each an event loop over its share of the
    /// connections; where no default is shown, one per CPU this process may
    /// run on, never more than the connections.
    #[arg(
        short = D::THREADS_SHORT,
        long = D::THREADS_LONG,
        aliases = D::THREADS_ALIASES,
        default_value = D::THREADS,
        value_name = "N",
        value_parser = limits::THREADS.parser()
    )]
    pub threads: Option<u32>,
    /// How long to run: 500ms, 10s, 2m; a bare number is seconds.
    #[arg(
        short = 'd',
        short_aliases = D::DURATION_SHORT_ALIASES.iter().copied(),
        long,
        aliases = D::DURATION_ALIASES,
        default_value = "10s",
        allow_hyphen_values = true,
        value_parser = duration_of::<D>
    )]
    pub duration: Duration,
    /// Open loop: a constant total rate per second (requests, transactions
    /// or queries) over all connections; latency counts from each one's
    /// scheduled time, free of coordinated omission (wrk2 -R, pgbench -R,
    /// dnsperf -Q).
    #[arg(short = D::RATE_SHORT, long, value_name = "PER_S")]
    pub rate: Option<f64>,
    /// A request (transaction, query) unanswered after this long counts as
    /// a timeout.
    #[arg(long, default_value = D::TIMEOUT, value_parser = limits::timeout_flag)]
    pub timeout: Duration,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    #[arg(skip)]
    defaults: PhantomData<D>,
}

impl<D: LoadDefaults> LoadShape<D> {
    /// `--threads`, else one per CPU this process may run on, never more
    /// than the connections ([`LoadSpec::default_threads`]).
    pub fn threads_per_cpu(&self) -> u32 {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        LoadSpec::default_threads(self.threads, cpus, self.connections)
    }

    /// The load shape: closed loop, or open at `--rate`, over `threads`.
    pub fn spec(&self, threads: u32) -> LoadSpec {
        LoadSpec {
            pacing: self
                .rate
                .map_or(Pacing::Closed, |rate| Pacing::Open { rate }),
            timeout: self.timeout,
            ..LoadSpec::closed(self.connections, threads, self.duration)
        }
    }

    /// Prints the run's result (one JSON object with `--json`, else the
    /// kind's text) and returns the exit code of a load run.
    pub fn finish(
        &self,
        result: &LoadResult,
        shutdown: &Shutdown,
        json: impl FnOnce() -> serde_json::Value,
        text: impl FnOnce(),
    ) -> anyhow::Result<i32> {
        if self.json {
            outln!("{}", serde_json::to_string_pretty(&json())?);
        } else {
            text();
        }
        Ok(super::exit::for_load(result.requests, shutdown))
    }
}

/// Runs `work`, printing to stderr, every `every`, the line `line` makes
/// of the interval's counts (pgbench `-P`, sysbench `--report-interval`):
/// `line(nominal time, what happened, seconds actually elapsed)`. Lines
/// come at nominal times (1.0 s, 2.0 s, ...), as the peers print them;
/// rates are over the time actually elapsed.
pub fn report_progress_while<T>(
    live: Arc<Live>,
    every: Duration,
    line: impl Fn(Duration, Interval, f64) -> String + Send,
    work: impl FnOnce() -> T,
) -> T {
    let done = Arc::new(AtomicBool::new(false));
    std::thread::scope(|scope| {
        let done_seen = done.clone();
        let live_seen = live.clone();
        scope.spawn(move || {
            let start = std::time::Instant::now();
            let (mut last_at, mut last, mut k) = (start, live_seen.snapshot(), 1u32);
            while !done_seen.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
                if start.elapsed() < every * k {
                    continue;
                }
                let (now, counts) = (std::time::Instant::now(), live_seen.snapshot());
                let secs = (now - last_at).as_secs_f64();
                eprintln!("{}", line(every * k, counts.since(&last), secs));
                (last_at, last, k) = (now, counts, k + 1);
            }
        });
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    })
}

/// `--coalesce`, for the kinds whose event loops can wait for replies in
/// batches.
#[derive(clap::Args, Debug, Clone)]
pub struct CoalesceArg {
    /// Coalesce replies (closed loop): with 8 or more requests in flight on
    /// a thread, sleep until half of them are answered (at most one round
    /// trip, within 20us..2ms), so the server need not wake the client for
    /// every reply (HTTP: keep-alive only, not with --connreqs). Saves
    /// server and client CPU where the server is saturated; delays replies,
    /// and so lowers throughput, where it is not.
    #[arg(long)]
    pub coalesce: bool,
}

/// A duration flag's value: 500ms, 10s, 2m.
pub fn duration_arg(text: &str) -> Result<Duration, String> {
    if text.trim_start().starts_with('-') {
        return Err(format!(
            "`{text}` is not a duration: it takes a positive duration, such as 500ms, 10s or 2m"
        ));
    }
    parse_duration(text).map_err(|e| e.to_string())
}

/// `--duration`'s value, with the kind's hint when it is not a duration.
fn duration_of<D: LoadDefaults>(text: &str) -> Result<Duration, String> {
    duration_arg(text).map_err(|e| format!("{e}{}", D::DURATION_HINT))
}

/// The latency fields every kind's JSON carries, with the same names:
/// `latency_us` ([`scalelab::load::result::LatencySummary`]) and, in rate
/// mode, `schedule_lag_us` (how late the generator sent against its
/// schedule; `null` in a closed loop).
pub fn latency_json(r: &LoadResult) -> [(&'static str, serde_json::Value); 2] {
    let value = |v| serde_json::to_value(v).unwrap_or_default();
    [
        ("latency_us", value(Some(r.latency_summary()))),
        ("schedule_lag_us", value(r.schedule_lag())),
    ]
}

/// Adds [`latency_json`]'s fields to a kind's JSON object.
pub fn with_latency(mut v: serde_json::Value, r: &LoadResult) -> serde_json::Value {
    for (key, value) in latency_json(r) {
        v[key] = value;
    }
    v
}

/// Rate mode: prints the generator's schedule lag beside the latency
/// (`label` is the kind's wording, `rate limit schedule lag:` for pgbench).
pub fn print_schedule_lag(label: &str, r: &LoadResult) {
    if let Some(lag) = r.schedule_lag() {
        outln!("{label} {}", lag.describe());
    }
}

/// Prints each of the run's notes after `label` (`Note:`, `note:`).
pub fn print_notes(label: &str, r: &LoadResult) {
    for note in &r.notes {
        outln!("{label} {note}");
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Cli, Command, LoadCommand};
    use clap::Parser;
    use std::time::Duration;

    fn parse(args: &[&str]) -> Command {
        let all = ["scalelab", "load"].iter().chain(args);
        Cli::try_parse_from(all).unwrap().command
    }

    const PG: &str = "host=127.0.0.1 port=9";
    const MYSQL: &str = "mysql://u@127.0.0.1:9/d";

    #[test]
    fn one_long_name_per_concept_and_the_old_names_still_parse() {
        for flag in ["-c", "--connections", "--clients", "--sockets"] {
            let Command::Load(LoadCommand::Pg(pg)) = parse(&["pg", PG, flag, "7"]) else {
                panic!("pg");
            };
            assert_eq!(pg.shape.connections, 7, "pg {flag}");
            let Command::Load(LoadCommand::Dns(dns)) =
                parse(&["dns", "127.0.0.1:53", "--queries", "q", flag, "7"])
            else {
                panic!("dns");
            };
            assert_eq!(dns.shape.connections, 7, "dns {flag}");
            let Command::Load(LoadCommand::Http(http)) =
                parse(&["http", "http://127.0.0.1:9/", flag, "7"])
            else {
                panic!("http");
            };
            assert_eq!(http.shape.connections, 7, "http {flag}");
        }
    }

    #[test]
    fn each_kind_keeps_its_tools_short_flags_and_defaults() {
        let Command::Load(LoadCommand::Pg(pg)) =
            parse(&["pg", PG, "-j", "3", "-T", "4", "-R", "50"])
        else {
            panic!("pg");
        };
        let s = &pg.shape;
        assert_eq!(
            (s.threads, s.duration, s.rate),
            (Some(3), Duration::from_secs(4), Some(50.0))
        );
        assert_eq!((s.connections, s.timeout), (1, Duration::from_secs(10)));
        let Command::Load(LoadCommand::Mysql(my)) = parse(&["mysql", MYSQL, "-j", "2"]) else {
            panic!("mysql");
        };
        assert_eq!((my.shape.threads, my.shape.connections), (Some(2), 1));
        let Command::Load(LoadCommand::Dns(dns)) = parse(&[
            "dns",
            "127.0.0.1:53",
            "--queries",
            "q",
            "-t",
            "2",
            "-Q",
            "900",
        ]) else {
            panic!("dns");
        };
        let s = &dns.shape;
        assert_eq!(
            (s.threads, s.rate, s.timeout),
            (Some(2), Some(900.0), Duration::from_secs(5))
        );
        let Command::Load(LoadCommand::Http(http)) = parse(&["http", "http://127.0.0.1:9/"]) else {
            panic!("http");
        };
        let s = &http.shape;
        assert_eq!(
            (s.connections, s.threads, s.timeout),
            (10, Some(2), Duration::from_secs(2))
        );
        // A short flag stays with the tool that has it: pgbench's -t is a
        // transaction count, dnsperf's -T a thread count.
        let args = ["scalelab", "load", "pg", PG, "-t", "2"];
        assert!(Cli::try_parse_from(args).is_err());
        let args = [
            "scalelab",
            "load",
            "dns",
            "127.0.0.1:53",
            "--queries",
            "q",
            "-T",
            "2",
        ];
        assert!(Cli::try_parse_from(args).is_err());
    }

    #[test]
    fn load_pg_takes_pgbench_connection_flags_and_keeps_help_on_long_help() {
        let Command::Load(LoadCommand::Pg(pg)) = parse(&[
            "pg",
            "-h",
            "127.0.0.1",
            "-p",
            "5433",
            "-U",
            "bench",
            "mydb",
            "-r",
            "-f",
            "s.sql",
        ]) else {
            panic!("pg");
        };
        let conninfo = pg.conninfo().unwrap();
        assert_eq!(conninfo, "dbname=mydb host=127.0.0.1 port=5433 user=bench");
        let c = scalelab::wire::pg::ConnConfig::parse(&conninfo).unwrap();
        assert_eq!(
            c.describe(),
            "host=127.0.0.1 port=5433 user=bench dbname=mydb"
        );
        assert!(pg.per_statement);
        assert_eq!(pg.file.as_deref(), Some(std::path::Path::new("s.sql")));
        // A flag overrides the same key of a key=value string, as in libpq.
        let Command::Load(LoadCommand::Pg(pg)) = parse(&["pg", PG, "-p", "7", "-U", "o'k"]) else {
            panic!("pg");
        };
        let c = scalelab::wire::pg::ConnConfig::parse(&pg.conninfo().unwrap()).unwrap();
        assert_eq!(
            c.describe().split(" dbname").next(),
            Some("host=127.0.0.1 port=7 user=o'k")
        );
        // With a URI the flags would say the same thing twice.
        let Command::Load(LoadCommand::Pg(pg)) =
            parse(&["pg", "postgresql://u@127.0.0.1:9/d", "-h", "127.0.0.1"])
        else {
            panic!("pg");
        };
        let e = pg.conninfo().unwrap_err().to_string();
        assert!(e.starts_with("the host is given twice"), "{e}");
        // -h is the host and wants a value; help is --help only.
        let e = Cli::try_parse_from(["scalelab", "load", "pg", "-h"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue, "{e}");
        let e = Cli::try_parse_from(["scalelab", "load", "pg", "--help"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp);
        // -f is a script of its own: not with -b, -S or -N.
        for other in [["-b", "select-only"], ["-S", "-n"], ["-N", "-n"]] {
            let args = ["scalelab", "load", "pg", "-f", "s.sql", other[0], other[1]];
            assert!(Cli::try_parse_from(args).is_err(), "{other:?}");
        }
    }

    #[test]
    fn load_mysql_takes_sysbench_threads_as_connections_and_time_as_duration() {
        let Command::Load(LoadCommand::Mysql(my)) =
            parse(&["mysql", MYSQL, "--threads=4", "--time=3"])
        else {
            panic!("mysql");
        };
        let s = &my.shape;
        assert_eq!((s.connections, s.duration), (4, Duration::from_secs(3)));
        assert_eq!(s.threads, None, "our worker threads stay the default");
        let Command::Load(LoadCommand::Mysql(my)) =
            parse(&["mysql", MYSQL, "--threads", "8", "--worker-threads", "2"])
        else {
            panic!("mysql");
        };
        assert_eq!((my.shape.connections, my.shape.threads), (8, Some(2)));
        // The other kinds keep --threads as their worker threads.
        let Command::Load(LoadCommand::Pg(pg)) = parse(&["pg", PG, "--threads", "2"]) else {
            panic!("pg");
        };
        assert_eq!((pg.shape.connections, pg.shape.threads), (1, Some(2)));
        // --time is pgbench's too (-T).
        let Command::Load(LoadCommand::Pg(pg)) = parse(&["pg", PG, "--time", "3"]) else {
            panic!("pg");
        };
        assert_eq!(pg.shape.duration, Duration::from_secs(3));
    }

    #[test]
    fn store_is_refused_on_load_runs() {
        let cli = Cli::try_parse_from([
            "scalelab",
            "--store",
            "x.sqlite",
            "load",
            "http",
            "http://127.0.0.1:9/",
        ])
        .unwrap();
        let e = super::super::refuse_store_on_load(&cli)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--store x.sqlite: `scalelab load` stores nothing"),
            "{e}"
        );
        assert!(e.contains("scalelab run FILE --store x.sqlite"), "{e}");
        let cli = Cli::try_parse_from(["scalelab", "load", "http", "http://127.0.0.1:9/"]).unwrap();
        assert!(super::super::refuse_store_on_load(&cli).is_ok());
        let cli = Cli::try_parse_from(["scalelab", "--store", "x.sqlite", "list"]).unwrap();
        assert!(super::super::refuse_store_on_load(&cli).is_ok());
        // `load --help` does not offer it; other commands' help does, and
        // a store given to `load` still parses (to be refused by name).
        let help = |path: &[&str]| {
            let args = ["scalelab"].iter().chain(path).chain(&["--help"]);
            let e = Cli::command_for_help()
                .try_get_matches_from(args)
                .unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp, "{path:?}");
            e.to_string()
        };
        for kind in ["http", "pg", "dns", "forward", "mysql"] {
            let h = help(&["load", kind]);
            assert!(!h.contains("--store"), "load {kind} --help: {h}");
            assert!(h.contains("--json"), "load {kind} --help: {h}");
        }
        assert!(!help(&["load"]).contains("--store"));
        assert!(help(&["report"]).contains("--store"));
        let m = Cli::command_for_help()
            .try_get_matches_from([
                "scalelab",
                "load",
                "http",
                "http://127.0.0.1:9/",
                "--store",
                "y",
            ])
            .unwrap();
        let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&m).unwrap();
        assert!(super::super::refuse_store_on_load(&cli).is_err());
    }
}
