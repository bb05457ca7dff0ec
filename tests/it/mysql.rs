//! The MySQL workload against a real MariaDB: the managed target, sysbench's
//! dataset, counts checked against SHOW GLOBAL STATUS, oltp_read_write's
//! effect on the data, clear errors, and a server killed mid-trial. Each
//! test runs its own server in its own directory on its own port.

use crate::support::{run, scalelab, stderr, stdout};
use scalelab::load::mysql::{MysqlDriver, MysqlSettings, ScriptKind};
use scalelab::load::{Driver, LoadResult, LoadSpec, Pacing};
use scalelab::model::Dataset;
use scalelab::placement::Placement;
use scalelab::server::mariadb::Mariadb;
use scalelab::server::Server as _;
use scalelab::shutdown::Shutdown;
use scalelab::store::{Store, TrialStatus};
use scalelab::wire::mysql::client::Client;
use scalelab::wire::mysql::MysqlUrl;
use std::io::Write;
use std::time::{Duration, Instant};

struct Server {
    db: Mariadb,
    url: String,
    /// The CA of a server with `tls = true`.
    ca_pem: Option<String>,
    _base: tempfile::TempDir,
}

/// A server holding sysbench's `tables` tables of `table_size` rows (none
/// at 0 tables), as a `mysql` workload with `tables` declares them.
fn server(tables: u32, table_size: u32, settings: &str) -> Server {
    let base = tempfile::tempdir().unwrap();
    let table: toml::Table = settings.parse().unwrap();
    // A workdir with `#`: every path in my.cnf is quoted (issue 24).
    let mut db = Mariadb::new(&table, &base.path().join("work#dir")).unwrap();
    let dataset = (tables > 0).then_some(Dataset::Sysbench { tables, table_size });
    let endpoint = db
        .start(
            &Placement::unconstrained(),
            dataset.as_ref(),
            &Shutdown::new(),
        )
        .unwrap();
    Server {
        db,
        url: endpoint.uri,
        ca_pem: endpoint.ca_pem,
        _base: base,
    }
}

impl Server {
    fn client(&self) -> Client {
        Client::connect(
            &MysqlUrl::parse(&self.url).unwrap(),
            Duration::from_secs(10),
        )
        .unwrap()
    }

    fn status(&self, name: &str) -> u64 {
        self.client().global_status(name).unwrap()
    }

    /// Runs oltp_point_select for `spec`'s duration and checks that it ran,
    /// without errors, one server-side execute per transaction counted.
    fn point_selects_agree(&self, spec: &LoadSpec) -> LoadResult {
        let executes = self.status("Com_stmt_execute");
        let r = self.run(ScriptKind::OltpPointSelect, spec);
        assert!(r.requests > 100, "{}", r.requests);
        assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
        assert_eq!(self.status("Com_stmt_execute") - executes, r.requests);
        r
    }

    fn run(&self, script: ScriptKind, spec: &LoadSpec) -> LoadResult {
        let settings = MysqlSettings {
            script,
            ..MysqlSettings::default()
        };
        let driver = MysqlDriver::new(settings, &self.url).unwrap();
        driver.run(spec, &Shutdown::new()).unwrap()
    }
}

fn exact(connections: u32, threads: u32, transactions: u64) -> LoadSpec {
    let mut s = LoadSpec::closed(connections, threads, Duration::ZERO);
    s.max_requests = Some(transactions);
    s.timeout = Duration::from_secs(10);
    s
}

#[test]
fn mariadb_records_version_settings_and_sysbench_dataset() {
    let mut s = server(
        2,
        500,
        "thread_handling = \"pool-of-threads\"\n\
         thread_pool_size = 3\ninnodb_flush_log_at_trx_commit = 2\nextra = [\"table_open_cache = 321\"]",
    );
    assert!(
        s.db.version().unwrap().contains("MariaDB"),
        "{:?}",
        s.db.version()
    );
    let eff = s.db.effective_config().unwrap();
    for line in [
        "# thread_handling = pool-of-threads",
        "# thread_pool_size = 3",
        "# innodb_flush_log_at_trx_commit = 2",
        "# table_open_cache = 321",
    ] {
        assert!(eff.contains(line), "{line} not in\n{eff}");
    }
    let mut c = s.client();
    for t in [1, 2] {
        let count = c
            .query_i64(&format!("SELECT COUNT(*) FROM sbtest{t}"))
            .unwrap();
        assert_eq!(count, 500);
        let rows = c
            .query(&format!("SELECT MIN(id), MAX(id), MIN(k), MAX(k), MIN(LENGTH(c)), MAX(LENGTH(pad)) FROM sbtest{t}"))
            .unwrap();
        let v: Vec<i64> = rows[0]
            .iter()
            .map(|x| x.clone().unwrap().parse().unwrap())
            .collect();
        assert_eq!((v[0], v[1]), (1, 500), "ids 1..N as auto-increment gives");
        assert!(v[2] >= 1 && v[3] <= 500, "k within [1, table_size]: {v:?}");
        assert_eq!((v[4], v[5]), (119, 59), "sysbench's templates");
        let idx = c
            .query(&format!(
                "SHOW INDEX FROM sbtest{t} WHERE Key_name = 'k_{t}'"
            ))
            .unwrap();
        assert_eq!(idx.len(), 1, "secondary index k_{t}");
    }
    assert!(s.db.dataset().unwrap().bytes > 0);
    let pid = s.db.root_pid().unwrap();
    s.db.stop().unwrap();
    assert!(!scalelab::sys::process::is_alive(pid));
}

#[test]
fn mariadb_counts_agree_with_show_global_status() {
    let s = server(2, 1000, "");
    let (commits, executes) = (s.status("Com_commit"), s.status("Com_stmt_execute"));
    let r = s.run(ScriptKind::OltpReadOnly, &exact(4, 2, 300));
    assert_eq!(r.requests, 300, "{:?}", r.errors);
    assert_eq!(s.status("Com_commit") - commits, 300);
    assert_eq!(s.status("Com_stmt_execute") - executes, 300 * 16);
    // MariaDB skips the column definitions it already sent, as for
    // libmariadb; the replies are still read to their end.
    assert!(
        r.notes.iter().any(|n| n.contains("CACHE_METADATA")),
        "{:?}",
        r.notes
    );

    let r = s.point_selects_agree(&LoadSpec::closed(3, 1, Duration::from_secs(1)));
    assert!(r.latency.len() == r.requests);

    // One connection per thread: each blocks in read, as sysbench's do.
    let received = s.status("Bytes_received");
    let r = s.point_selects_agree(&LoadSpec::closed(2, 2, Duration::from_secs(1)));
    // A point select's execute is 24 bytes once its parameter type went
    // with the first one (26 with it); the rest is handshakes, prepares and
    // these status queries.
    let received = s.status("Bytes_received") - received;
    assert!(
        received >= 24 * r.requests && received < 24 * r.requests + 8192,
        "{received} bytes for {} executes",
        r.requests
    );

    // Sixteen connections on one thread with the opt-in coalescing (one
    // wakeup for half the replies in flight, load::gather): still one
    // execute per transaction counted, and nothing lost at the end.
    let mut many = LoadSpec::closed(16, 1, Duration::from_secs(1));
    many.coalesce = true;
    let r = s.point_selects_agree(&many);
    let (waits, replies) = crate::gathered(&r.notes);
    assert!(waits > 0 && replies > waits, "{:?}", r.notes);
}

#[test]
fn mariadb_read_write_keeps_the_data_consistent() {
    let s = server(2, 200, "innodb_flush_log_at_trx_commit = 2");
    let (commits, rollbacks) = (s.status("Com_commit"), s.status("Com_rollback"));
    // A small, hot table and 8 connections: conflicts happen.
    let r = s.run(ScriptKind::OltpReadWrite, &exact(8, 2, 800));
    assert_eq!(r.requests, 800, "{:?} {:?}", r.errors, r.notes);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(s.status("Com_commit") - commits, 800);
    assert_eq!(
        s.status("Com_rollback") - rollbacks,
        r.retries,
        "one ROLLBACK per retry"
    );
    let mut c = s.client();
    for t in [1, 2] {
        // Every delete is followed by an insert of the same id.
        let rows = c
            .query(&format!(
                "SELECT COUNT(*), COUNT(DISTINCT id), MIN(id), MAX(id) FROM sbtest{t}"
            ))
            .unwrap();
        let v: Vec<i64> = rows[0]
            .iter()
            .map(|x| x.clone().unwrap().parse().unwrap())
            .collect();
        assert_eq!(v, vec![200, 200, 1, 200], "sbtest{t}");
    }
    let r = s.run(ScriptKind::OltpWriteOnly, &exact(2, 1, 100));
    assert_eq!(r.requests, 100, "{:?}", r.errors);
    let updates = s.status("Com_update");
    let r = s.run(ScriptKind::OltpUpdateIndex, &exact(2, 1, 100));
    assert_eq!(r.requests, 100, "{:?}", r.errors);
    assert_eq!(s.status("Com_update") - updates, 100 + r.retries);
}

#[test]
fn mariadb_open_loop_holds_the_rate() {
    let s = server(1, 1000, "");
    let mut open = LoadSpec::closed(2, 1, Duration::from_secs(2));
    open.pacing = Pacing::Open { rate: 200.0 };
    let r = s.run(ScriptKind::OltpPointSelect, &open);
    assert!(r.requests <= 402 && r.requests >= 300, "{}", r.requests);
    assert_eq!(r.target_rate, Some(200.0));
    let lag = r
        .schedule_lag()
        .expect("rate mode records the schedule lag");
    assert!(r.schedule_lag.len() >= r.requests, "{lag:?}");
}

/// Issue 27: sysbench's `--threads=N` is N client connections and
/// `--time=SECONDS` the duration. The server counts the connections: four
/// threads open exactly three more than one thread does (the setup
/// connections being the same), and it executed what was counted.
#[test]
fn mariadb_cli_takes_sysbench_threads_as_connections() {
    let s = server(1, 200, "");
    let run_with = |threads: &str| {
        let (connections, executes) = (s.status("Connections"), s.status("Com_stmt_execute"));
        let threads = format!("--threads={threads}");
        let out = run(&[
            "load",
            "mysql",
            &s.url,
            "--script",
            "oltp_point_select",
            &threads,
            "--time=1",
            "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let executed = s.status("Com_stmt_execute") - executes;
        assert_eq!(v["transactions"].as_u64(), Some(executed), "{v}");
        assert!(v["duration_s"].as_f64().unwrap() >= 1.0, "{v}");
        (s.status("Connections") - connections, v)
    };
    let (one, v1) = run_with("1");
    let (four, v4) = run_with("4");
    assert_eq!(
        (v1["connections"].as_u64(), v4["connections"].as_u64()),
        (Some(1), Some(4))
    );
    assert_eq!(v4["connections_opened"].as_u64(), Some(4), "{v4}");
    assert_eq!(four - one, 3, "server-side connections: {one} then {four}");
}

#[test]
fn mariadb_cli_initializes_runs_and_explains_bad_input() {
    let s = server(0, 0, "");
    let url = &s.url;
    let out = run(&[
        "load",
        "mysql",
        url,
        "--init",
        "--tables",
        "2",
        "--table-size",
        "300",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["tables"], 2);
    let out = run(&[
        "load",
        "mysql",
        url,
        "--script",
        "oltp_read_only",
        "-c",
        "2",
        "-d",
        "1s",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    for key in [
        "tps",
        "qps",
        "transactions",
        "queries",
        "duration_s",
        "retries",
        "client_cpu_s",
        "connections_opened",
    ] {
        assert!(v.get(key).is_some(), "{key} missing: {v}");
    }
    crate::support::assert_latency_fields(&v, false);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    assert_eq!(v["threads"].as_u64(), Some(cpus.min(2)), "default -j: {v}");
    assert_eq!(
        v["queries"].as_u64(),
        v["transactions"].as_u64().map(|t| t * 16)
    );
    let out = run(&[
        "load",
        "mysql",
        url,
        "--script",
        "oltp_point_select",
        "-d",
        "500ms",
    ]);
    assert!(stdout(&out).contains("transactions:"), "{}", stdout(&out));
    // Rate mode: the same latency fields, and the schedule lag beside them.
    let rated = |json: &[&str]| {
        let mut args = vec!["load", "mysql", url, "--script", "oltp_point_select"];
        args.extend(["--rate", "100", "-d", "1s"]);
        args.extend(json);
        let out = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let v: serde_json::Value = serde_json::from_str(&rated(&["--json"])).unwrap();
    crate::support::assert_latency_fields(&v, true);
    let text = rated(&[]);
    for field in [
        "stddev:",
        "p75:",
        "p99.9:",
        "schedule lag (rate mode): p50 ",
    ] {
        assert!(text.contains(field), "{field}: {text}");
    }

    let bad = |args: &[&str], needle: &str| {
        let out = run(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        let e = stderr(&out);
        assert!(e.contains(needle), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    };
    bad(
        &["load", "mysql", url, "--script", "oltp_insert"],
        "oltp_read_only",
    );
    let port = MysqlUrl::parse(url).unwrap().addr.port();
    let wrong = format!("mysql://sbtest:nope@127.0.0.1:{port}/sbtest");
    bad(
        &["load", "mysql", &wrong, "-d", "1s"],
        "wrong user or password",
    );
    let nodb = format!("mysql://sbtest:sbtest@127.0.0.1:{port}/nosuchdb");
    bad(&["load", "mysql", &nodb, "-d", "1s"], "does not exist");
    bad(
        &["load", "mysql", url, "--tables", "5", "-d", "1s"],
        "more than the schema has",
    );
    // Something on the port that is not MySQL.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let other = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let _ = conn.write_all(b"SSH-2.0-OpenSSH_9.2\r\n");
        }
    });
    let not_mysql = format!("mysql://sbtest:sbtest@127.0.0.1:{other}/sbtest");
    bad(
        &["load", "mysql", &not_mysql, "-d", "1s"],
        "does not speak the MySQL protocol",
    );
}

#[test]
fn mariadb_killed_mid_trial_fails_that_trial_and_the_sweep_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("exp.toml");
    std::fs::write(
        &exp,
        "name = \"it\"\n[server]\nkind = \"mariadb\"\n\
         [load]\nkind = \"mysql\"\ntables = 1\ntable_size = 1000\nscript = \"oltp_point_select\"\ntimeout = \"2s\"\n\
         [sweep]\nconnections = [2, 4]\n[trials]\nduration = \"6s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n\
         restart = \"per_trial\"\n",
    )
    .unwrap();
    let store = dir.path().join("s.sqlite");
    let work = dir.path().join("work");
    let child = scalelab()
        .args([
            "--store",
            store.to_str().unwrap(),
            "run",
            exp.to_str().unwrap(),
        ])
        .env("SCALELAB_WORKDIR", &work)
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = server_under_load(&work);
    scalelab::sys::process::signal(pid, libc::SIGKILL);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "some trials failed: {}",
        stderr(&out)
    );
    let data = Store::open(&store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert_eq!(data.trials.len(), 2, "the sweep went on");
    assert_eq!(
        data.trials[0].status,
        TrialStatus::Failed,
        "{:?}",
        data.trials
    );
    assert!(
        data.trials[0]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("server died"),
        "{:?}",
        data.trials[0].error
    );
    assert_eq!(
        data.trials[1].status,
        TrialStatus::Ok,
        "{:?}",
        data.trials[1].error
    );
    assert!(mariadbd_pid(&work).is_none(), "no server left behind");
}

/// Waits until a managed mariadbd under `work` is executing statements;
/// returns its PID.
fn server_under_load(work: &std::path::Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        assert!(Instant::now() < deadline, "no mariadbd under load");
        std::thread::sleep(Duration::from_millis(50));
        let (Some(pid), Some(port)) = (mariadbd_pid(work), mariadbd_port(work)) else {
            continue;
        };
        let url = format!("mysql://sbtest:sbtest@127.0.0.1:{port}/sbtest");
        let executed = Client::connect(&MysqlUrl::parse(&url).unwrap(), Duration::from_secs(1))
            .and_then(|mut c| c.global_status("Com_stmt_execute"));
        if executed.is_ok_and(|n| n > 0) {
            return pid;
        }
    }
}

fn mariadbd_port(work: &std::path::Path) -> Option<u16> {
    std::fs::read_dir(work).ok()?.flatten().find_map(|e| {
        let cnf = std::fs::read_to_string(e.path().join("my.cnf")).ok()?;
        cnf.lines()
            .find_map(|l| l.strip_prefix("port = "))
            .and_then(|p| p.trim().parse().ok())
    })
}

/// The PID in the first `mariadb-*/mysqld.pid` under `work`, if alive.
fn mariadbd_pid(work: &std::path::Path) -> Option<u32> {
    std::fs::read_dir(work).ok()?.flatten().find_map(|e| {
        let text = std::fs::read_to_string(e.path().join("mysqld.pid")).ok()?;
        let pid: u32 = text.trim().parse().ok()?;
        scalelab::sys::process::is_alive(pid).then_some(pid)
    })
}

/// mariadb-install-db splits paths at spaces: a workdir with one is refused
/// before anything starts, naming SCALELAB_WORKDIR.
#[test]
fn mariadb_refuses_a_workdir_with_a_space_naming_the_fix() {
    let base = tempfile::tempdir().unwrap();
    let mut db = Mariadb::new(&toml::Table::new(), &base.path().join("work dir")).unwrap();
    let err = db
        .start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("SCALELAB_WORKDIR"), "{err}");
    assert!(!base.path().join("work dir").exists(), "nothing was made");
}

/// Issue 41: sysbench as its users type it, against a real server: the
/// test name, the --mysql-* flags, --threads, --time, --report-interval and
/// `run`.
#[test]
fn mariadb_cli_takes_sysbench_as_typed() {
    let s = server(1, 200, "");
    let url = MysqlUrl::parse(&s.url).unwrap();
    let flag = |name: &str, value: String| format!("--mysql-{name}={value}");
    let executes = s.status("Com_stmt_execute");
    let out = run(&[
        "load",
        "mysql",
        "oltp_point_select",
        &flag("host", url.addr.ip().to_string()),
        &flag("port", url.addr.port().to_string()),
        &flag("user", url.user.clone()),
        &flag("password", url.password.clone()),
        &flag("db", url.database.clone()),
        "--threads=2",
        "--time=2",
        "--report-interval=1",
        "run",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let head = format!(
        "scalelab load mysql: oltp_point_select ({})",
        url.describe()
    );
    assert!(text.starts_with(&head), "{text}");
    assert!(text.contains("Number of connections: 2"), "{text}");
    let txns: u64 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("transactions:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(txns, s.status("Com_stmt_execute") - executes);
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.starts_with("[ 1s ] thds: 2 tps: "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains(" lat (ms,avg): ") && line.ends_with("reconn/s: 0.00"),
        "{line}"
    );
}

/// TLS to MariaDB (`tls = true`; the load's `ssl_mode`, sysbench's
/// `--mysql-ssl`): every connection the workers open, and the opening
/// before the run, is a TLS handshake MariaDB itself counts
/// (`Ssl_accepts`), on the event loop and with a new connection per
/// transaction; each point select is one server-side execute
/// (`Com_stmt_execute`); the notes say what was negotiated.
#[test]
fn mariadb_over_tls_counts_every_handshake_the_load_made() {
    let s = server(1, 1000, "tls = true");
    let ca = s.ca_pem.clone().expect("a TLS server hands out its CA");
    let settings = MysqlSettings {
        script: ScriptKind::OltpPointSelect,
        ca_pem: Some(ca),
        ..MysqlSettings::default()
    };
    for per_connection in [None, Some(1)] {
        let (accepts, executes) = (s.status("Ssl_accepts"), s.status("Com_stmt_execute"));
        let mut spec = exact(2, 1, 400);
        spec.requests_per_connection = per_connection;
        let r = MysqlDriver::new(settings.clone(), &s.url)
            .unwrap()
            .run(&spec, &Shutdown::new())
            .unwrap();
        assert_eq!((r.requests, r.errors.total()), (400, 0), "{:?}", r.notes);
        assert_eq!(s.status("Com_stmt_execute") - executes, 400);
        assert_eq!(
            s.status("Ssl_accepts") - accepts,
            r.connections_opened + 1,
            "{per_connection:?} per connection"
        );
        assert!(
            r.notes
                .iter()
                .any(|n| n
                    .starts_with("TLS (ssl_mode VERIFY_IDENTITY, certificate checked): TLSv1_3")),
            "{:?}",
            r.notes
        );
    }
    let plain = server(0, 0, "");
    let required = MysqlSettings {
        ssl_mode: Some("required".into()),
        ..MysqlSettings::default()
    };
    let e = MysqlDriver::new(required, &plain.url)
        .unwrap()
        .run(&exact(1, 1, 1), &Shutdown::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("does not serve TLS") && e.contains("tls = true"),
        "{e}"
    );
}
