//! The PostgreSQL workload against a real server: the managed target's
//! lifecycle, pgbench's dataset, each script's effect on the data, failure
//! counting and a server killed mid-run. Each test runs its own server in
//! its own directory on its own port.

use scalelab::load::pg::{PgDriver, PgSettings, QueryMode, ScriptKind};
use scalelab::load::{Driver, LoadResult, LoadSpec, Pacing};
use scalelab::model::Dataset;
use scalelab::placement::Placement;
use scalelab::server::postgres::Postgres;
use scalelab::server::Server as _;
use scalelab::shutdown::Shutdown;
use scalelab::wire::pg::client::Client;
use scalelab::wire::pg::ConnConfig;
use std::path::Path;
use std::time::{Duration, Instant};

/// A managed server in a private base directory, stopped on drop.
struct Server {
    pg: Postgres,
    uri: String,
    /// The CA of a server with `tls = true`.
    ca_pem: Option<String>,
    _base: tempfile::TempDir,
}

/// A server holding pgbench's dataset at `scale`, as a `pg` workload
/// with `scale` declares it.
fn server(scale: u32, settings: &str) -> Server {
    let base = tempfile::tempdir().unwrap();
    server_in(base, Some(pgbench(scale)), settings)
}

fn pgbench(scale: u32) -> Dataset {
    Dataset::Pgbench { scale }
}

fn server_in(base: tempfile::TempDir, dataset: Option<Dataset>, settings: &str) -> Server {
    let table: toml::Table = settings.parse().unwrap();
    let mut pg = Postgres::new(&table, base.path()).unwrap();
    let endpoint = pg
        .start(
            &Placement::unconstrained(),
            dataset.as_ref(),
            &Shutdown::new(),
        )
        .unwrap();
    Server {
        pg,
        uri: endpoint.uri,
        ca_pem: endpoint.ca_pem,
        _base: base,
    }
}

impl Server {
    fn client(&self) -> Client {
        let cfg = ConnConfig::parse_with_env(&self.uri, |_| None).unwrap();
        Client::connect(&cfg, Duration::from_secs(10)).unwrap()
    }

    fn int(&self, sql: &str) -> i64 {
        self.client().query_i64(sql).unwrap()
    }

    fn run(&self, settings: PgSettings, spec: &LoadSpec) -> LoadResult {
        let driver = PgDriver::new(settings, &self.uri).unwrap();
        driver.run(spec, &Shutdown::new()).unwrap()
    }
}

fn script(kind: ScriptKind) -> PgSettings {
    PgSettings {
        script: kind,
        ..PgSettings::default()
    }
}

fn spec(connections: u32, threads: u32, secs: f64) -> LoadSpec {
    let mut s = LoadSpec::closed(connections, threads, Duration::from_secs_f64(secs));
    // Generous: a slow shared machine must not turn waits into timeouts.
    s.timeout = Duration::from_secs(30);
    s
}

/// PostgreSQL processes working in `data` (each one chdirs there).
fn server_processes(data: &Path) -> Vec<u32> {
    let data = data.canonicalize().unwrap_or(data.to_path_buf());
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd"))
                .ok()
                .as_deref()
                == Some(data.as_path())
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    scalelab::sys::process::is_alive(pid)
}

/// The pgbench invariant: every delta lands once in each balance table and
/// once in history.
fn assert_balances_agree(s: &Server, transactions: u64) {
    let sums = [
        s.int("select coalesce(sum(abalance), 0) from pgbench_accounts"),
        s.int("select coalesce(sum(bbalance), 0) from pgbench_branches"),
        s.int("select coalesce(sum(tbalance), 0) from pgbench_tellers"),
        s.int("select coalesce(sum(delta), 0) from pgbench_history"),
    ];
    assert!(sums.iter().all(|&x| x == sums[0]), "sums differ: {sums:?}");
    assert_eq!(
        s.int("select count(*) from pgbench_history") as u64,
        transactions
    );
}

#[test]
fn postgres_starts_stops_and_reuses_its_cluster() {
    let base = tempfile::tempdir().unwrap();
    let base_path = base.path().to_path_buf();
    let mut s = server_in(base, None, "shared_buffers = \"32MB\"");
    let pid = s.pg.root_pid().unwrap();
    assert!(s.pg.is_running() && alive(pid));
    assert!(s.pg.version().unwrap().contains("PostgreSQL"));
    let conf = s.pg.effective_config().unwrap();
    assert!(conf.contains("listen_addresses = '127.0.0.1'"), "{conf}");
    assert!(
        conf.contains("# shared_buffers = 4096"),
        "pg_settings shows it in use:\n{conf}"
    );
    assert!(s.uri.contains("host=127.0.0.1"), "{}", s.uri);
    s.client()
        .execute("create table sentinel(x int); insert into sentinel values (42)")
        .unwrap();
    let data = s.pg.data_dir();
    assert!(!server_processes(&data).is_empty());

    s.pg.stop().unwrap();
    assert!(!alive(pid), "postmaster {pid} survived stop");
    assert!(
        server_processes(&data).is_empty(),
        "server processes left behind"
    );
    assert!(!s.pg.is_running());
    s.pg.stop().unwrap();

    // A restart with a restart-only setting changed keeps the cluster.
    let table: toml::Table = "shared_buffers = \"48MB\"".parse().unwrap();
    let mut again = Postgres::new(&table, &base_path).unwrap();
    let endpoint = again
        .start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap();
    let cfg = ConnConfig::parse_with_env(&endpoint.uri, |_| None).unwrap();
    let mut c = Client::connect(&cfg, Duration::from_secs(10)).unwrap();
    assert_eq!(
        c.query_i64("select x from sentinel").unwrap(),
        42,
        "the cluster was re-initialized"
    );
    assert_eq!(
        c.query("show shared_buffers").unwrap()[0][0].as_deref(),
        Some("48MB")
    );
    drop(c);
    let pid2 = again.root_pid().unwrap();
    drop(again);
    assert!(!alive(pid2), "drop must stop the server");
}

#[test]
fn postgres_with_a_bad_setting_fails_clearly_and_leaves_nothing() {
    let base = tempfile::tempdir().unwrap();
    let table: toml::Table = "shared_buffers = \"lots\"".parse().unwrap();
    let mut pg = Postgres::new(&table, base.path()).unwrap();
    let err = pg
        .start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("shared_buffers") && err.contains("lots"),
        "no log tail in: {err}"
    );
    assert!(!pg.is_running());
    assert!(
        server_processes(&pg.data_dir()).is_empty(),
        "processes left after a failed start"
    );

    let typo: toml::Table = "shared_buffer = \"1GB\"".parse().unwrap();
    let e = Postgres::new(&typo, base.path()).err().unwrap().to_string();
    assert!(e.contains("shared_buffer"), "{e}");
}

/// The dataset comes from the workload, and the target keeps one cluster
/// per scale: a start at another scale uses another directory, and a later
/// start at the first scale finds its cluster (and its data) again.
#[test]
fn postgres_keeps_one_cluster_per_declared_scale() {
    let base = tempfile::tempdir().unwrap();
    let mut pg = Postgres::new(&toml::Table::new(), base.path()).unwrap();
    let none = Placement::unconstrained();
    let ep = pg
        .start(&none, Some(&pgbench(1)), &Shutdown::new())
        .unwrap();
    let scale_1 = pg.data_dir();
    assert!(
        scale_1.to_string_lossy().contains("/postgres/scale-1-"),
        "{scale_1:?}"
    );
    assert_eq!(pg.dataset().unwrap().description, "pgbench scale 1");
    let cfg = ConnConfig::parse_with_env(&ep.uri, |_| None).unwrap();
    let mut c = Client::connect(&cfg, Duration::from_secs(10)).unwrap();
    c.execute("update pgbench_branches set filler = 'kept' where bid = 1")
        .unwrap();
    drop(c);

    pg.start(&none, None, &Shutdown::new()).unwrap();
    assert!(pg
        .data_dir()
        .to_string_lossy()
        .contains("/postgres/scale-0-"));
    assert_eq!(pg.dataset(), None, "no dataset declared, none recorded");

    let ep = pg
        .start(&none, Some(&pgbench(1)), &Shutdown::new())
        .unwrap();
    assert_eq!(pg.data_dir(), scale_1);
    let cfg = ConnConfig::parse_with_env(&ep.uri, |_| None).unwrap();
    let mut c = Client::connect(&cfg, Duration::from_secs(10)).unwrap();
    let kept = c
        .query("select filler from pgbench_branches where bid = 1")
        .unwrap();
    assert_eq!(
        kept[0][0].as_deref().map(str::trim),
        Some("kept"),
        "reused, not rebuilt"
    );
    drop(c);

    let sysbench = Dataset::Sysbench {
        tables: 1,
        table_size: 10,
    };
    let e = pg
        .start(&none, Some(&sysbench), &Shutdown::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("holds pgbench's dataset") && e.contains("sysbench 1 tables"),
        "{e}"
    );
    assert!(!pg.is_running());
}

#[test]
fn postgres_dataset_has_pgbench_rows_per_scale() {
    let s = server(2, "");
    assert_eq!(s.int("select count(*) from pgbench_branches"), 2);
    assert_eq!(s.int("select count(*) from pgbench_tellers"), 20);
    assert_eq!(s.int("select count(*) from pgbench_accounts"), 200_000);
    assert_eq!(s.int("select count(*) from pgbench_history"), 0);
    assert_eq!(s.int("select max(bid) from pgbench_accounts"), 2);
    assert_eq!(s.int("select max(bid) from pgbench_tellers"), 2);
    assert_eq!(
        s.int("select count(*) from pgbench_tellers where filler is null"),
        20
    );
    assert_eq!(
        s.int("select count(*) from pgbench_accounts where octet_length(filler) = 84"),
        200_000
    );
    assert_eq!(
        s.int("select count(*) from pgbench_accounts where abalance <> 0"),
        0
    );
    let pkeys = s.int(
        "select count(*) from pg_constraint where contype = 'p' and conrelid::regclass::text like 'pgbench_%'",
    );
    assert_eq!(pkeys, 3);
    let info = s.pg.dataset().unwrap();
    assert_eq!(info.description, "pgbench scale 2");
    let size = s.int("select pg_database_size(current_database())") as u64;
    assert!(
        info.bytes > 20 << 20 && info.bytes.abs_diff(size) < 1 << 20,
        "{info:?} vs {size}"
    );
}

#[test]
fn postgres_tpcb_like_keeps_balances_consistent() {
    let s = server(1, "");
    let r = s.run(script(ScriptKind::TpcbLike), &spec(4, 2, 2.0));
    assert!(r.requests > 0, "{r:?}");
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.latency.len(), r.requests);
    assert_eq!(r.timeline.iter().sum::<u64>(), r.requests);
    assert!(r.client_cpu.0 > 0.0);
    assert_balances_agree(&s, r.requests);
}

#[test]
fn postgres_select_only_changes_nothing_and_reconnects_per_transaction() {
    let s = server(1, "");
    s.client()
        .execute("insert into pgbench_history values (1, 1, 1, 7, now(), null)")
        .unwrap();
    let keep = PgSettings {
        vacuum: false,
        ..script(ScriptKind::SelectOnly)
    };
    let before =
        s.int("select xact_commit from pg_stat_database where datname = current_database()");
    let r = s.run(keep.clone(), &spec(2, 1, 1.0));
    assert!(r.requests > 0);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.connections_opened, 2);
    assert_eq!(
        s.int("select count(*) from pgbench_accounts where abalance <> 0"),
        0
    );
    assert_eq!(s.int("select count(*) from pgbench_history"), 1);
    std::thread::sleep(Duration::from_millis(1500)); // statistics flush at most every second
    let after =
        s.int("select xact_commit from pg_stat_database where datname = current_database()");
    assert!(
        after - before >= r.requests as i64,
        "server saw {} commits for {} transactions",
        after - before,
        r.requests
    );

    // Like pgbench -C: a new connection for every transaction.
    let mut per_txn = spec(2, 1, 1.0);
    per_txn.requests_per_connection = Some(1);
    let r = s.run(keep, &per_txn);
    assert!(r.requests > 0);
    assert!(
        r.connections_opened >= r.requests,
        "{} connections for {} transactions",
        r.connections_opened,
        r.requests
    );
}

#[test]
fn postgres_simple_update_touches_only_accounts_and_history() {
    let s = server(1, "");
    // One client on one thread: the blocking-read path.
    let r = s.run(script(ScriptKind::SimpleUpdate), &spec(1, 1, 1.5));
    assert!(r.requests > 0);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(
        s.int("select count(*) from pgbench_tellers where tbalance <> 0"),
        0
    );
    assert_eq!(
        s.int("select count(*) from pgbench_branches where bbalance <> 0"),
        0
    );
    assert_eq!(
        s.int("select coalesce(sum(abalance), 0) from pgbench_accounts"),
        s.int("select coalesce(sum(delta), 0) from pgbench_history")
    );
    assert_eq!(
        s.int("select count(*) from pgbench_history") as u64,
        r.requests
    );
}

#[test]
fn postgres_serialization_failures_are_counted_and_retried() {
    let s = server(
        1,
        "settings = { default_transaction_isolation = \"serializable\" }",
    );
    // Every tpcb-like transaction updates the single branch row, so
    // concurrent clients conflict.
    let once = s.run(script(ScriptKind::TpcbLike), &spec(8, 2, 2.0));
    assert!(
        once.errors.serialization > 0,
        "no serialization failures: {:?}",
        once.errors
    );
    assert_eq!(once.retries, 0, "max_tries = 1 never retries");
    assert_eq!(
        once.errors.socket_errors() + once.errors.other,
        0,
        "{:?}",
        once.errors
    );
    assert_balances_agree(&s, once.requests);

    s.client()
        .execute("update pgbench_accounts set abalance = 0 where abalance <> 0; update pgbench_tellers set tbalance = 0; update pgbench_branches set bbalance = 0")
        .unwrap();
    let retrying = PgSettings {
        max_tries: 1000,
        ..script(ScriptKind::TpcbLike)
    };
    let r = s.run(retrying, &spec(8, 2, 2.0));
    assert!(r.retries > 0, "no retries: {r:?}");
    // `retries` counts transactions, each retried once or more.
    let attempted = r.requests + r.errors.serialization + r.errors.deadlock;
    assert!(
        r.retries <= attempted,
        "{} retried of {attempted}",
        r.retries
    );
    assert!(r.requests > 0);
    assert!(
        r.errors.serialization < once.errors.serialization,
        "retries should turn most failures into successes: {:?} vs {:?}",
        r.errors,
        once.errors
    );
    assert_balances_agree(&s, r.requests);
}

/// SIGKILLs the postmaster while `connections` clients over `threads`
/// threads run select-only: the driver must count the failures, back off,
/// and return by its deadline.
fn kill_mid_run(connections: u32, threads: u32) {
    let mut s = server(1, "");
    let pid = s.pg.root_pid().unwrap();
    let uri = s.uri.clone();
    let duration = 4.0;
    let started = Instant::now();
    let runner = std::thread::spawn(move || {
        let mut sp = spec(connections, threads, duration);
        sp.timeout = Duration::from_secs(2);
        let driver = PgDriver::new(script(ScriptKind::SelectOnly), &uri).unwrap();
        driver.run(&sp, &Shutdown::new())
    });
    std::thread::sleep(Duration::from_millis(1200));
    scalelab::sys::process::signal(pid, libc::SIGKILL);
    let r = runner
        .join()
        .expect("the driver panicked")
        .expect("the driver failed");
    let took = started.elapsed().as_secs_f64();
    assert!(took < duration + 2.0 + 3.0, "the driver took {took:.1}s");
    assert!(r.requests > 0, "nothing measured before the kill");
    assert!(
        r.errors.connect > 0,
        "reconnects to a dead server must fail: {:?}",
        r.errors
    );
    // Backoff keeps a dead server from being spun on: at most one attempt
    // per 10 ms per connection.
    let most = u64::from(connections) * 300;
    assert!(r.errors.connect < most, "{:?}", r.errors);
    s.pg.stop().unwrap();
    assert!(!s.pg.is_running());
    assert!(
        server_processes(&s.pg.data_dir()).is_empty(),
        "orphaned backends left"
    );
}

#[test]
fn postgres_killed_mid_run_is_counted_not_hung() {
    kill_mid_run(4, 2);
}

#[test]
fn postgres_killed_under_a_single_blocking_client_is_counted_not_hung() {
    kill_mid_run(1, 1);
}

#[test]
fn postgres_open_loop_and_exact_counts() {
    let s = server(1, "");
    let mut open = spec(2, 1, 2.0);
    open.pacing = Pacing::Open { rate: 200.0 };
    let r = s.run(script(ScriptKind::SelectOnly), &open);
    assert!(
        r.requests <= 2 * 200 + 2,
        "the schedule caps the rate: {}",
        r.requests
    );
    assert!(r.requests >= 100, "{}", r.requests);
    assert_eq!(r.target_rate, Some(200.0));
    // Every transaction started was scheduled, and its lag recorded.
    let lag = r
        .schedule_lag()
        .expect("rate mode records the schedule lag");
    assert!(r.schedule_lag.len() >= r.requests, "{lag:?}");
    let m = scalelab::load::result::Measurement::from(&r);
    assert!(m.notes.iter().any(|n| n.contains("schedule lag")), "{m:?}");

    let mut exact = spec(3, 2, 0.0);
    exact.max_requests = Some(500);
    let r = s.run(script(ScriptKind::TpcbLike), &exact);
    assert_eq!(r.requests, 500, "{:?}", r.errors);
    assert_balances_agree(&s, 500);
}

/// Sixteen connections on one thread, blocking in epoll_wait and then with
/// the opt-in reply coalescing (waiting for half the replies at once,
/// load::gather): the worker counts exactly what the server ran, draining
/// the transactions in flight at the end.
#[test]
fn postgres_many_connections_on_one_thread_count_exactly() {
    let s = server(1, "");
    let mut done = 0;
    // Both ways a polled worker may wait: blocking in epoll_wait, and the
    // opt-in reply coalescing (one wakeup for several replies).
    for coalesce in [false, true] {
        let mut exact = spec(16, 1, 0.0);
        exact.max_requests = Some(1000);
        exact.coalesce = coalesce;
        let settings = PgSettings {
            vacuum: false,
            ..script(ScriptKind::TpcbLike)
        };
        let r = s.run(settings, &exact);
        assert_eq!(r.requests, 1000, "coalesce {coalesce}: {:?}", r.errors);
        assert_eq!(r.errors.total(), 0, "coalesce {coalesce}: {:?}", r.errors);
        assert_eq!(r.latency.len(), 1000);
        if coalesce {
            let (waits, replies) = crate::gathered(&r.notes);
            assert!(waits > 0 && replies > waits, "{:?}", r.notes);
        }
        done += 1000;
        assert_balances_agree(&s, done);
    }
}

/// pgbench's -M extended (Parse every time) and -M simple (Query with the
/// values in the text) run the same transactions: the server's history and
/// balances count exactly what the driver counted.
#[test]
fn postgres_extended_and_simple_protocols_count_exactly() {
    let s = server(1, "");
    let mut done = 0;
    for mode in [QueryMode::Extended, QueryMode::Simple] {
        let mut exact = spec(3, 2, 0.0);
        exact.max_requests = Some(300);
        let settings = PgSettings {
            protocol: mode,
            vacuum: false,
            ..script(ScriptKind::TpcbLike)
        };
        let r = s.run(settings, &exact);
        assert_eq!(r.requests, 300, "{mode:?}: {:?}", r.errors);
        assert_eq!(r.errors.total(), 0, "{mode:?}: {:?}", r.errors);
        done += 300;
        assert_balances_agree(&s, done);
    }
}

#[test]
fn postgres_unreachable_server_is_a_clear_error() {
    let port = scalelab::sys::process::free_port().unwrap();
    let driver = PgDriver::new(
        script(ScriptKind::SelectOnly),
        &format!("host=127.0.0.1 port={port} user=postgres"),
    )
    .unwrap();
    let e = driver
        .run(&spec(1, 1, 1.0), &Shutdown::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cannot connect") && e.contains(&port.to_string()),
        "{e}"
    );
}

#[test]
fn postgres_cli_initializes_and_reports_json() {
    let s = server_in(tempfile::tempdir().unwrap(), None, "");
    let exe = env!("CARGO_BIN_EXE_scalelab");
    let init = std::process::Command::new(exe)
        .args(["load", "pg", &s.uri, "--init", "--scale", "1"])
        .output()
        .unwrap();
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    assert_eq!(s.int("select count(*) from pgbench_accounts"), 100_000);
    // The same server as a URI: the driver reads both spellings.
    let addr = match ConnConfig::parse_with_env(&s.uri, |_| None).unwrap().host {
        scalelab::wire::pg::conninfo::Host::Tcp(addr) => addr,
        other => panic!("expected TCP, got {other:?}"),
    };
    let uri = format!("postgresql://postgres@{addr}/postgres");
    let run = std::process::Command::new(exe)
        .args([
            "load",
            "pg",
            &uri,
            "--script",
            "select-only",
            "-c",
            "2",
            "-d",
            "1s",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(v["transactions"].as_u64().unwrap() > 0, "{v}");
    assert!(v["tps"].as_f64().unwrap() > 0.0);
    crate::support::assert_latency_fields(&v, false);
    assert_eq!(v["failures"]["serialization"], 0);
    assert!(v["client_cpu_s"].as_f64().unwrap() > 0.0);

    // pgbench's own flags: -S -M -T -c -P.
    let pgbench_like = std::process::Command::new(exe)
        .args([
            "load", "pg", &uri, "-S", "-M", "simple", "-T", "2", "-c", "2", "-P", "1", "--json",
        ])
        .output()
        .unwrap();
    assert!(
        pgbench_like.status.success(),
        "{}",
        String::from_utf8_lossy(&pgbench_like.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&pgbench_like.stdout).unwrap();
    assert_eq!(
        (v["script"].as_str(), v["protocol"].as_str()),
        (Some("select-only"), Some("simple"))
    );
    assert!((v["duration_s"].as_f64().unwrap() - 2.0).abs() < 0.5, "{v}");
    assert!(String::from_utf8_lossy(&pgbench_like.stderr).contains("progress: 1.0 s, "));

    // Rate mode: the same latency fields, and the schedule lag beside them.
    let rated = |json: &[&str]| {
        let out = std::process::Command::new(exe)
            .args(["load", "pg", &uri, "-S", "-R", "100", "-T", "1"])
            .args(json)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let v: serde_json::Value = serde_json::from_str(&rated(&["--json"])).unwrap();
    crate::support::assert_latency_fields(&v, true);
    let text = rated(&[]);
    for field in [
        "p75 = ",
        "p99.9 = ",
        "latency stddev = ",
        "rate limit schedule lag: p50 ",
    ] {
        assert!(text.contains(field), "{field}: {text}");
    }

    let bad = std::process::Command::new(exe)
        .args(["load", "pg", "host=10.1.2.3", "-d", "1s"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("loopback"));
}

#[test]
fn postgres_reclaims_a_server_left_by_a_dead_run() {
    let base = tempfile::tempdir().unwrap();
    let left = server_in(tempfile::tempdir_in(base.path()).unwrap(), None, "");
    let orphan = left.pg.root_pid().unwrap();
    let base_path = left._base.path().to_path_buf();
    let socket_dir = std::fs::read_to_string(left.pg.data_dir().join("postmaster.pid"))
        .unwrap()
        .lines()
        .nth(4)
        .unwrap()
        .to_string();
    assert!(Path::new(&socket_dir).is_dir());
    // As if scalelab had been killed: the server is never stopped.
    std::mem::forget(left);
    assert!(alive(orphan));
    let mut pg = Postgres::new(&toml::Table::new(), &base_path).unwrap();
    pg.start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap();
    assert!(
        !alive(orphan),
        "the leftover postmaster {orphan} was not stopped"
    );
    assert!(
        !Path::new(&socket_dir).exists(),
        "its socket directory {socket_dir} was left behind"
    );
    assert!(pg.is_running());
    pg.stop().unwrap();
    assert!(server_processes(&pg.data_dir()).is_empty());
}

#[test]
fn postgres_runs_wholly_inside_its_placement() {
    let base = tempfile::tempdir().unwrap();
    let name = format!("pg-it-{}", std::process::id());
    let cpus = vec![scalelab::placement::online_cpus() - 1];
    let mut placement = Placement::create(
        &name,
        Some(cpus.clone()),
        Some(scalelab::units::Bytes(256 << 20)),
    )
    .unwrap();
    let dirs = placement.cgroup_dirs();
    assert!(!dirs.is_empty());
    let mut pg = Postgres::new(&toml::Table::new(), base.path()).unwrap();
    pg.start(&placement, Some(&pgbench(1)), &Shutdown::new())
        .unwrap();
    let postmaster = pg.root_pid().unwrap();
    let tree = server_processes(&pg.data_dir());
    assert!(tree.len() > 3, "postmaster and its helpers: {tree:?}");
    for dir in &dirs {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap();
        let inside: Vec<u32> = procs.lines().filter_map(|l| l.parse().ok()).collect();
        // A backend of a setup connection may exit between the two reads.
        for pid in tree.iter().filter(|&&p| alive(p)) {
            assert!(
                inside.contains(pid),
                "pid {pid} is outside {}",
                dir.display()
            );
        }
    }
    let affinity = scalelab::placement::affinity::allowed_cpus(postmaster).unwrap();
    assert_eq!(affinity, cpus);
    pg.stop().unwrap();
    placement
        .remove()
        .expect("the cgroups are empty once the server stopped");
}

/// A server killed with its scalelab (kill -9, then the watchdog) leaves
/// `postmaster.pid` behind; its PID may already belong to another process,
/// and PostgreSQL refuses a lock file whose PID is alive. The next start
/// must see that no server works in the data directory and go ahead.
#[test]
fn postgres_starts_over_a_stale_lock_file_whose_pid_is_alive() {
    let base = tempfile::tempdir().unwrap();
    let base_path = base.path().to_path_buf();
    let mut s = server_in(base, None, "");
    let data = s.pg.data_dir();
    let lock = std::fs::read_to_string(data.join("postmaster.pid")).unwrap();
    s.pg.stop().unwrap();
    // The lock file as a killed server leaves it, naming a live process of
    // the postgres user (which PostgreSQL cannot tell from a running server).
    let mut squatter = std::process::Command::new("runuser")
        .args(["-u", "postgres", "--", "sleep", "30"])
        .spawn()
        .unwrap();
    let squatter_pid = wait_for_child_of(squatter.id());
    let mut lines: Vec<String> = lock.lines().map(str::to_string).collect();
    lines[0] = squatter_pid.to_string();
    std::fs::write(data.join("postmaster.pid"), lines.join("\n") + "\n").unwrap();
    let table = toml::Table::new();
    let mut again = Postgres::new(&table, &base_path).unwrap();
    let started = again.start(&Placement::unconstrained(), None, &Shutdown::new());
    let _ = squatter.kill();
    let _ = squatter.wait();
    assert!(started.is_ok(), "{:?}", started.err());
    assert!(again.is_running());
}

/// The `sleep` that `runuser` (PID `parent`) runs as postgres.
fn wait_for_child_of(parent: u32) -> u32 {
    for _ in 0..100 {
        let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        if let Some(pid) = children
            .split_whitespace()
            .next()
            .and_then(|p| p.parse().ok())
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("runuser started no child");
}

/// A tmpfs mounted over `dir`, unmounted on drop.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let out = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=755"),
                "tmpfs",
            ])
            .arg(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(dir.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_disk_that_fills_during_the_dataset_load_is_named_in_the_trial_and_retried_on_resume() {
    use scalelab::store::{FailureCause, Store};
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // The postgres user must reach its data directory under the work dir.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // Room for the cluster (about 40 MB), not for pgbench's scale 10 (160 MB).
    let _fs = Tmpfs::mount(&dir.path().join("work"), "80m");
    let exp = dir.path().join("exp.toml");
    std::fs::write(
        &exp,
        "name = \"disk-full\"\n[server]\nkind = \"postgres\"\nshared_buffers = \"16MB\"\n\
         max_connections = 20\n[load]\nkind = \"pg\"\nscale = 10\nscript = \"select-only\"\n\
         [sweep]\nconnections = [1]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    )
    .unwrap();
    let store = dir.path().join("s.sqlite");
    let out = crate::support::run::run_cmd(dir.path(), &store, &exp)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let s = Store::open(&store, scalelab::catalog()).unwrap();
    let data = s.load_run("latest").unwrap();
    let error = data.trials[0].error.clone().unwrap_or_default();
    assert!(
        error.contains("no space left on device on ")
            && error.contains("/work/postgres/")
            && error.contains("(from server.log)"),
        "{error}"
    );
    let failed = s.environmental_failures(data.run.id).unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].cause, FailureCause::DiskFull);
    drop(s);
    // --resume runs it again (the disk is still full: it fails again) and
    // stores it once.
    let run_id = data.run.id.to_string();
    let out = crate::support::run::run_cmd(dir.path(), &store, &exp)
        .args(["--resume", &run_id])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("retrying 1 trial(s) that failed for environmental reasons (lost host: 0, server start: 0, disk full: 1)"),
        "{err}"
    );
    let data = Store::open(&store, scalelab::catalog())
        .unwrap()
        .load_run(&run_id)
        .unwrap();
    assert_eq!(data.trials.len(), 1);
}

/// Issue 27: pgbench's habits. `-h HOST -p PORT -U USER DBNAME` connect
/// (help stays on `--help`), `-f FILE` runs a custom script as one
/// transaction per run, and `-r` reports each statement's latency. The
/// counts agree with what the server holds: one `log` row and one
/// increment per transaction.
#[test]
fn postgres_cli_takes_pgbench_flags_script_files_and_per_statement_latencies() {
    let s = server_in(tempfile::tempdir().unwrap(), None, "");
    let mut c = s.client();
    c.execute("create table t (id int primary key, n bigint not null)")
        .unwrap();
    c.execute("insert into t values (1, 0), (2, 0), (3, 0)")
        .unwrap();
    c.execute("create table log (v int not null)").unwrap();
    let cfg = ConnConfig::parse_with_env(&s.uri, |_| None).unwrap();
    let scalelab::wire::pg::conninfo::Host::Tcp(addr) = cfg.host else {
        panic!("expected TCP, got {:?}", cfg.host);
    };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bump.sql");
    std::fs::write(
        &script,
        "-- one transaction per run, its id drawn anew\n\\set id random(1, 3)\nBEGIN;\n\
         UPDATE t SET n = n + 1\n  WHERE id = :id;\nINSERT INTO log (v) VALUES (:id);\nEND;\n",
    )
    .unwrap();
    let port = addr.port().to_string();
    let host = addr.ip().to_string();
    let pg = |more: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_scalelab"))
            .args([
                "load",
                "pg",
                "-h",
                &host,
                "-p",
                &port,
                "-U",
                &cfg.user,
                &cfg.dbname,
            ])
            .args(more)
            .env_remove("PGHOST")
            .env_remove("PGPORT")
            .output()
            .unwrap()
    };
    let file = script.to_str().unwrap();
    let out = pg(&["-f", file, "-r", "-c", "2", "-T", "1", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let transactions = v["transactions"].as_u64().unwrap();
    assert!(transactions > 0, "{v}");
    assert_eq!(v["script"].as_str(), Some(file));
    assert_eq!(s.int("select count(*) from log") as u64, transactions);
    assert_eq!(s.int("select sum(n) from t") as u64, transactions);
    // Each transaction used one drawn id in both statements: per id, the
    // increments equal the log rows.
    let mismatched = "select count(*) from t where n <> (select count(*) from log where v = t.id)";
    assert_eq!(s.int(mismatched), 0);
    let ids = s.int("select count(distinct v) from log");
    assert!(ids >= 2 || transactions < 60, "{ids} ids in {transactions}");
    let statements = v["statements"].as_array().expect("-r lists statements");
    let sql: Vec<&str> = statements
        .iter()
        .map(|x| x["sql"].as_str().unwrap())
        .collect();
    assert_eq!(
        sql,
        [
            "BEGIN",
            "UPDATE t SET n = n + 1\n  WHERE id = $1",
            "INSERT INTO log (v) VALUES ($1)",
            "END"
        ]
    );
    // Every statement ran once per transaction, and the statements' times
    // lie inside their transaction's: their averages add up to at most
    // the transaction's (allowing the histograms' 0.1% precision).
    let mut sum = 0.0;
    for st in statements {
        assert_eq!(st["count"].as_u64(), Some(transactions), "{st}");
        sum += st["latency_us"]["mean"].as_f64().unwrap();
    }
    let mean = v["latency_us"]["mean"].as_f64().unwrap();
    assert!(sum > 0.0 && sum <= mean * 1.01 + 5.0, "{sum} > {mean}");
    // The other protocols send the drawn values too (as parameters, or
    // written into the SQL).
    let mut total = transactions;
    for mode in ["extended", "simple"] {
        let out = pg(&["-f", file, "-M", mode, "-T", "1", "--json"]);
        assert!(
            out.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        total += v["transactions"].as_u64().unwrap();
        assert_eq!(s.int("select count(*) from log") as u64, total, "{mode}");
        assert_eq!(s.int(mismatched), 0, "{mode}");
    }

    let out = pg(&["-f", file, "-r", "-T", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("transaction type: {file}")),
        "{text}"
    );
    assert!(
        text.contains("statement latencies in milliseconds"),
        "{text}"
    );
    assert!(text.contains("  INSERT INTO log (v) VALUES ($1)"), "{text}");

    // A meta-command is refused, naming the file and line; nothing ran.
    let before = s.int("select count(*) from log");
    let bad = dir.path().join("bad.sql");
    std::fs::write(&bad, "BEGIN;\n\\sleep 1 ms\nEND;\n").unwrap();
    let out = pg(&["-f", bad.to_str().unwrap(), "-T", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{}:2: the meta-command `\\sleep` is not supported",
            bad.display()
        )),
        "{err}"
    );
    assert_eq!(s.int("select count(*) from log"), before);

    // --store is refused: a load run stores nothing, and says so.
    let store = dir.path().join("runs.sqlite");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scalelab"))
        .args([
            "--store",
            store.to_str().unwrap(),
            "load",
            "pg",
            &s.uri,
            "-T",
            "1",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`scalelab load` stores nothing"), "{err}");
    assert!(!store.exists());
    assert_eq!(s.int("select count(*) from log"), before);
}

/// Issue 41: pgbench's habits as its users type them, against a real
/// server: long names, -S, -P with the latency's stddev, -L, and -l's
/// per-transaction log in pgbench's format, one line per transaction the
/// summary counts; the default protocol is pgbench's, simple.
#[test]
fn postgres_cli_takes_pgbench_habits_and_logs_every_transaction() {
    let s = server(1, "");
    let addr = match ConnConfig::parse_with_env(&s.uri, |_| None).unwrap().host {
        scalelab::wire::pg::conninfo::Host::Tcp(addr) => addr,
        other => panic!("expected TCP, got {other:?}"),
    };
    let cwd = tempfile::tempdir().unwrap();
    let (host, port) = (addr.ip().to_string(), addr.port().to_string());
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_scalelab"))
        .args(["load", "pg", "-h", &host, "-p", &port, "-U", "postgres"])
        .args(["--client=2", "--jobs=2", "--time=2", "--select-only"])
        .args(["-P", "1", "-L", "1000", "-l", "postgres"])
        .current_dir(cwd.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("query mode: simple"), "{stdout}");
    assert!(stdout.contains("number of clients: 2"), "{stdout}");
    let processed: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(processed > 0);
    let limit = format!("above the 1000.0 ms latency limit: 0/{processed} (0.000%)");
    assert!(stdout.contains(&limit), "{stdout}");
    // -P: `progress: 1.0 s, N tps, lat X ms stddev Y, 0 failed`.
    let line = stderr
        .lines()
        .find(|l| l.starts_with("progress: 1.0 s, "))
        .unwrap_or_else(|| panic!("{stderr}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        (words[4], words[5], words[7], words[8], words[11]),
        ("tps,", "lat", "ms", "stddev", "failed"),
        "{line}"
    );
    let (mean, sd): (f64, f64) = (
        words[6].parse().unwrap(),
        words[9].trim_end_matches(',').parse().unwrap(),
    );
    assert!(mean > 0.0 && (0.0..1000.0).contains(&sd), "{line}");
    // -l: one file per thread, pgbench_log.PID and pgbench_log.PID.1.
    let mut lines = Vec::new();
    for name in [format!("pgbench_log.{pid}"), format!("pgbench_log.{pid}.1")] {
        let text = std::fs::read_to_string(cwd.path().join(&name)).unwrap();
        lines.extend(text.lines().map(str::to_string));
    }
    assert_eq!(lines.len() as u64, processed, "one line per transaction");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut next = [0u64; 2];
    for l in &lines {
        let f: Vec<u64> = l.split(' ').map(|w| w.parse().unwrap()).collect();
        assert_eq!(
            f.len(),
            6,
            "client_id transaction_no time script_no epoch us: {l}"
        );
        let client = f[0] as usize;
        assert!(client < 2, "{l}");
        assert_eq!(f[1], next[client], "transactions numbered per client: {l}");
        next[client] += 1;
        assert!(f[2] > 0 && f[2] < 1_000_000, "{l}");
        assert_eq!(f[3], 0, "{l}");
        assert!(f[4] + 60 > now && f[4] <= now, "{l}");
        assert!(f[5] < 1_000_000, "{l}");
    }
}

/// `scalelab load pg URI ARGS...`: its exit checked, its stdout (JSON
/// with `--json`).
fn load_pg(uri: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scalelab"))
        .args(["load", "pg", uri])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Issue 41: pgbench's `-L` with `-R`: a transaction already later than
/// the limit against its schedule is skipped, not sent, and counted as
/// pgbench counts it. One client of 10 ms transactions scheduled at 500/s
/// falls behind at once: most are skipped, and the sent and the skipped
/// together cover the schedule.
#[test]
fn postgres_cli_skips_what_is_already_later_than_the_latency_limit() {
    let s = server_in(tempfile::tempdir().unwrap(), None, "");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("sleep.sql");
    std::fs::write(&script, "SELECT pg_sleep(0.01);\n").unwrap();
    let file = script.to_str().unwrap();
    let rated = ["-f", file, "-c", "1", "-R", "500", "-L", "5"];
    let json = load_pg(&s.uri, &[&rated[..], &["-T", "2", "--json"]].concat());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let (sent, skipped) = (
        v["transactions"].as_u64().unwrap(),
        v["skipped"].as_u64().unwrap(),
    );
    assert!(sent > 0 && sent < 250, "10 ms each, one client: {v}");
    assert!(skipped > 500, "{v}");
    assert!(
        (700..=1100).contains(&(sent + skipped)),
        "2 s at 500/s: {v}"
    );
    let text = load_pg(&s.uri, &[&rated[..], &["-T", "1"]].concat());
    assert!(text.contains("number of transactions skipped: "), "{text}");
}

/// Issue 41: pgbench's mix of weighted scripts, `-b select-only@1 -b
/// simple-update@3`: each transaction runs one of them, and what the run
/// says each script did agrees with the server (simple-update inserts one
/// pgbench_history row per transaction, select-only none).
#[test]
fn postgres_cli_mixes_weighted_builtin_scripts_as_pgbench_does() {
    let s = server(1, "");
    let mix = ["-b", "select-only@1", "-b", "simple-update@3"];
    let json = load_pg(
        &s.uri,
        &[&mix[..], &["-c", "2", "-T", "2", "--json"]].concat(),
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let scripts = v["scripts"].as_array().unwrap();
    assert_eq!(scripts.len(), 2, "{v}");
    assert_eq!(scripts[1]["name"], "simple-update");
    assert_eq!(scripts[1]["weight"], 3);
    let (selects, updates) = (
        scripts[0]["transactions"].as_u64().unwrap(),
        scripts[1]["transactions"].as_u64().unwrap(),
    );
    assert_eq!(
        selects + updates,
        v["transactions"].as_u64().unwrap(),
        "{v}"
    );
    // The pre-run vacuum truncated the history: every row is this run's.
    assert_eq!(
        s.int("select count(*) from pgbench_history") as u64,
        updates
    );
    let share = updates as f64 / (selects + updates) as f64;
    assert!((0.6..0.9).contains(&share), "about 3 in 4: {v}");
    let text = load_pg(&s.uri, &[&mix[..], &["-T", "1"]].concat());
    assert!(
        text.contains("transaction type: multiple scripts"),
        "{text}"
    );
    assert!(
        text.contains("SQL script 2: <builtin: simple update>"),
        "{text}"
    );
    assert!(
        text.contains(" - weight: 3 (targets 75.0% of total)"),
        "{text}"
    );
}

/// The server log's lines of connections authorized over TLS
/// (`log_connections`: "... SSL enabled (protocol=TLSv1.3, ...)").
fn tls_connections_logged(s: &Server) -> usize {
    let log = std::fs::read_to_string(s.pg.server_log().unwrap()).unwrap();
    log.lines()
        .filter(|l| l.contains("connection authorized") && l.contains("SSL enabled"))
        .count()
}

/// TLS to PostgreSQL (`tls = true`; the load's `sslmode`, as libpq's):
/// the endpoint asks for verify-full and hands out the start's CA; every
/// connection the workers open is one the server logs as "SSL enabled"
/// (its own count), on the event loop, on the blocking path and with a new
/// connection per transaction; the run's notes say what was negotiated.
/// The key lives in the start's socket directory and goes with it.
#[test]
fn postgres_over_tls_every_connection_is_one_the_server_logs_as_ssl() {
    let s = server(1, "tls = true\nsettings = { log_connections = true }");
    assert!(s.uri.ends_with(" sslmode=verify-full"), "{}", s.uri);
    let settings = PgSettings {
        vacuum: false,
        ca_pem: s.ca_pem.clone(),
        ..script(ScriptKind::SelectOnly)
    };
    for (connections, threads, per_connection) in [(2, 1, None), (1, 1, None), (2, 1, Some(1))] {
        let before = tls_connections_logged(&s);
        let mut shape = spec(connections, threads, 1.0);
        shape.requests_per_connection = per_connection;
        let r = s.run(settings.clone(), &shape);
        assert!(r.requests > 0);
        assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
        let note = r
            .notes
            .iter()
            .find(|n| n.starts_with("TLS (sslmode=verify-full"));
        assert!(
            note.is_some_and(|n| n.contains("certificate checked") && n.contains("TLSv1_3")),
            "{:?}",
            r.notes
        );
        std::thread::sleep(Duration::from_millis(300)); // the log is written as they connect
                                                        // The workers' connections, less those still opening when the run
                                                        // ended (at most one per client); the opening before the run ends
                                                        // after its handshake, before any startup message, so it is never
                                                        // authorized.
        let logged = tls_connections_logged(&s) - before;
        let opened = r.connections_opened as usize;
        assert!(
            logged <= opened && logged + connections as usize >= opened,
            "{logged} logged for {opened} opened: {connections} connections, \
             {per_connection:?} per connection"
        );
        assert!(
            per_connection.is_none() || logged as u64 >= r.requests,
            "a connection for every transaction: {logged} for {}",
            r.requests
        );
    }
}

/// A certificate that does not verify, sslmode=verify-full without a CA,
/// and sslmode=require against a server that serves no TLS: each an error
/// before any load, naming the server and the fix.
#[test]
fn postgres_tls_that_cannot_hold_is_an_error_with_the_fix() {
    let s = server(1, "tls = true");
    let other = scalelab::tls::cert::make(
        &s._base.path().join("other"),
        Default::default(),
        &["localhost"],
        &["127.0.0.1".parse().unwrap()],
    )
    .unwrap()
    .ca_pem;
    let run = |settings: PgSettings, uri: &str| {
        PgDriver::new(settings, uri)
            .and_then(|d| d.run(&spec(1, 1, 0.5), &Shutdown::new()))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let wrong = PgSettings {
        ca_pem: Some(other),
        ..script(ScriptKind::SelectOnly)
    };
    let e = run(wrong, &s.uri);
    assert!(
        e.contains("does not verify") && e.contains("127.0.0.1"),
        "{e}"
    );
    let e = run(script(ScriptKind::SelectOnly), &s.uri);
    assert!(
        e.contains("sslrootcert=FILE") && e.contains("sslmode=require"),
        "{e}"
    );
    let plain = server(1, "");
    let e = run(
        script(ScriptKind::SelectOnly),
        &format!("{} sslmode=require", plain.uri),
    );
    assert!(
        e.contains("does not serve TLS") && e.contains("sslmode=disable"),
        "{e}"
    );
}
