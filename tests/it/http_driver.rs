//! The HTTP load driver against servers whose behaviour the tests control:
//! exact counts, connection reuse, every error kind, coordinated omission,
//! and real nginx with keep-alive, short and thousands of connections.

#[path = "support/http_test_server.rs"]
mod http_test_server;

use http_test_server::{Behaviour, TestServer};
use scalelab::load::http::{HttpDriver, HttpSettings};
use scalelab::load::{Driver, LoadResult, LoadSpec, Pacing};
use scalelab::placement::Placement;
use scalelab::server::{self, Server};
use scalelab::shutdown::Shutdown;
use std::sync::atomic::Ordering::SeqCst;
use std::time::{Duration, Instant};

fn run_with(url: &str, settings: HttpSettings, spec: &LoadSpec) -> LoadResult {
    let driver = HttpDriver::new(settings, url).expect("driver builds");
    driver
        .run(spec, &Shutdown::new())
        .expect("load run completes")
}

fn run(url: &str, spec: &LoadSpec) -> LoadResult {
    run_with(url, HttpSettings::default(), spec)
}

fn spec(connections: u32, threads: u32, duration_ms: u64) -> LoadSpec {
    LoadSpec::closed(connections, threads, Duration::from_millis(duration_ms))
}

#[test]
fn max_requests_is_exact_on_both_sides() {
    let server = TestServer::start(Behaviour::Ok);
    let mut s = spec(7, 3, 30_000);
    s.max_requests = Some(1000);
    let r = run(&server.url(), &s);
    let seen = server.finish();
    assert_eq!(r.requests, 1000);
    assert_eq!(seen.requests.load(SeqCst), 1000);
    assert_eq!(r.latency.len(), 1000);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.connections_opened, 7);
    assert_eq!(r.timeline.iter().sum::<u64>(), 1000);
    assert!(r.bytes.0 >= 1000 * 40, "headers and bodies are counted");
}

#[test]
fn connreqs_replaces_connections_and_closes_the_last_request() {
    let server = TestServer::start(Behaviour::Ok);
    let mut s = spec(4, 2, 30_000);
    s.max_requests = Some(400);
    s.requests_per_connection = Some(5);
    let r = run(&server.url(), &s);
    let seen = server.finish();
    assert_eq!(r.requests, 400);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    let per_conn = seen.per_connection.lock().unwrap().clone();
    assert_eq!(per_conn.iter().sum::<u64>(), 400);
    assert!(per_conn.iter().all(|&n| n <= 5), "{per_conn:?}");
    // Only connections cut short by the end of the run carry fewer.
    let short = per_conn.iter().filter(|&&n| n < 5).count();
    assert!(short <= 4, "{short} short connections: {per_conn:?}");
    let full = per_conn.iter().filter(|&&n| n == 5).count() as u64;
    assert_eq!(
        seen.close_requests.load(SeqCst),
        full,
        "the 5th request says close"
    );
    assert_eq!(seen.connections.load(SeqCst), r.connections_opened);
    assert!(r.connections_opened >= 80);
}

#[test]
fn refused_connections_are_connect_errors_with_backoff() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let started = Instant::now();
    let r = run(&format!("http://127.0.0.1:{port}/"), &spec(2, 1, 600));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(r.requests, 0);
    assert!(r.errors.connect >= 2, "{:?}", r.errors);
    // Backing off 10-100 ms: a few dozen tries at most, not a busy loop.
    assert!(r.errors.connect <= 60, "{:?}", r.errors);
    assert!(
        r.notes.iter().any(|n| n.contains("is the server running")),
        "{:?}",
        r.notes
    );
}

#[test]
fn close_mid_response_is_a_read_error() {
    let server = TestServer::start(Behaviour::CloseMidResponse);
    let r = run(&server.url(), &spec(2, 1, 500));
    assert_eq!(r.requests, 0);
    assert!(r.errors.read >= 1, "{:?}", r.errors);
    assert_eq!(
        r.errors.protocol + r.errors.connect + r.errors.timeout,
        0,
        "{:?}",
        r.errors
    );
}

#[test]
fn status_500_is_counted_and_still_a_request() {
    let server = TestServer::start(Behaviour::Status500);
    let mut s = spec(3, 1, 30_000);
    s.max_requests = Some(50);
    let r = run(&server.url(), &s);
    assert_eq!(r.requests, 50);
    assert_eq!(r.errors.status, 50);
    assert_eq!(r.errors.socket_errors(), 0, "{:?}", r.errors);
}

#[test]
fn silent_server_times_out_and_connections_are_replaced() {
    let server = TestServer::start(Behaviour::Silent);
    let mut s = spec(2, 1, 1_000);
    s.timeout = Duration::from_millis(200);
    let r = run(&server.url(), &s);
    assert_eq!(r.requests, 0);
    assert!(r.errors.timeout >= 2, "{:?}", r.errors);
    assert!(
        r.connections_opened >= 3,
        "timed-out connections are replaced"
    );
    let seen = server.finish();
    assert_eq!(seen.connections.load(SeqCst), r.connections_opened);
}

#[test]
fn garbage_is_a_protocol_error() {
    let server = TestServer::start(Behaviour::Garbage);
    let r = run(&server.url(), &spec(2, 1, 500));
    assert_eq!(r.requests, 0);
    assert!(r.errors.protocol >= 1, "{:?}", r.errors);
}

#[test]
fn source_addrs_spreads_connections() {
    let server = TestServer::start(Behaviour::Ok);
    let mut s = spec(6, 2, 30_000);
    s.max_requests = Some(60);
    let settings = HttpSettings {
        source_addrs: Some(3),
        ..HttpSettings::default()
    };
    let r = run_with(&server.url(), settings, &s);
    assert_eq!(r.requests, 60);
    let seen = server.finish();
    let mut peers: Vec<String> = seen
        .peers
        .lock()
        .unwrap()
        .iter()
        .map(|p| p.to_string())
        .collect();
    peers.sort();
    peers.dedup();
    assert_eq!(peers, vec!["127.0.0.1", "127.0.0.2", "127.0.0.3"]);
}

#[test]
fn pinned_threads_run_and_missing_cpus_are_refused() {
    let server = TestServer::start(Behaviour::Ok);
    let mut s = spec(4, 2, 30_000);
    s.max_requests = Some(200);
    s.client_cpus = Some(vec![0]);
    assert_eq!(run(&server.url(), &s).requests, 200);
    s.client_cpus = Some(vec![4096]);
    let driver = HttpDriver::new(HttpSettings::default(), &server.url()).unwrap();
    let err = driver.run(&s, &Shutdown::new()).unwrap_err().to_string();
    assert!(err.contains("4096"), "{err}");
}

#[test]
fn shutdown_ends_a_long_run_early() {
    let server = TestServer::start(Behaviour::Ok);
    let driver = HttpDriver::new(HttpSettings::default(), &server.url()).unwrap();
    let shutdown = Shutdown::new();
    let trigger = shutdown.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        trigger.trigger();
    });
    let started = Instant::now();
    let r = driver.run(&spec(4, 2, 60_000), &shutdown).unwrap();
    t.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(r.requests > 0);
}

/// A 1 s stall in the middle of a constant-rate run must show in the
/// percentiles (latency counts from each request's scheduled time), while
/// a closed loop over the same stall hides it in its max.
#[test]
fn open_loop_shows_a_stall_that_closed_loop_hides() {
    let stall = Behaviour::Stall {
        after: Duration::from_secs(1),
        length: Duration::from_secs(1),
    };
    let server = TestServer::start(stall);
    let mut open = spec(4, 1, 3_000);
    open.pacing = Pacing::Open { rate: 200.0 };
    let r = run(&server.url(), &open);
    let p99 = r.latency.value_at_quantile(0.99);
    assert!(
        p99 >= 800_000,
        "open-loop p99 {p99} us should show the 1 s stall"
    );
    assert_eq!(r.target_rate, Some(200.0));
    assert!(r.requests >= 300, "{} requests", r.requests);

    let server = TestServer::start(stall);
    let r = run(&server.url(), &spec(4, 1, 3_000));
    let closed_p99 = r.latency.value_at_quantile(0.99);
    assert!(r.latency.max() >= 800_000, "the stalled requests are there");
    assert!(
        closed_p99 < p99 / 2,
        "closed loop hides the stall: p99 {closed_p99} us over {} requests",
        r.requests
    );
}

/// The real nginx target in a private directory, serving `{}` at `/`.
/// Fields drop in order: the target stops nginx (its whole process group and cgroup), then the
/// directory goes.
struct Nginx {
    _target: Box<dyn Server>,
    url: String,
    base: tempfile::TempDir,
}

impl Nginx {
    /// Starts nginx able to hold `connections` client connections.
    fn start(connections: u32) -> Nginx {
        Nginx::start_with(connections, "")
    }

    /// The same with more `[server]` settings (TOML lines).
    fn start_with(connections: u32, extra: &str) -> Nginx {
        // nginx closes idle keep-alive connections ("reusing connections")
        // once fewer than 1/16 of worker_connections are free, so leave
        // plenty.
        let settings: toml::Table = toml::from_str(&format!(
            "worker_processes = 1\nworker_connections = {}\nkeepalive_requests = 1000000\n{extra}",
            2 * connections + 256
        ))
        .expect("nginx settings parse");
        let base = tempfile::tempdir().expect("temp dir");
        let mut target = server::compile(&server::nginx::SERVER_KIND, &settings)
            .and_then(|plan| plan.build(base.path()))
            .expect("nginx target");
        let mut last_error = None;
        // A free port can be taken by someone else before nginx binds it.
        for _ in 0..3 {
            match target.start(&Placement::unconstrained(), None, &Shutdown::new()) {
                Ok(ep) => {
                    return Nginx {
                        _target: target,
                        url: format!("{}/", ep.uri),
                        base,
                    }
                }
                Err(e) => last_error = Some(e),
            }
        }
        panic!("nginx did not start: {last_error:?}");
    }

    /// nginx's error log, for failure messages.
    fn error_log(&self) -> String {
        let runs = std::fs::read_dir(self.base.path()).into_iter().flatten();
        runs.flatten()
            .map(|run| std::fs::read_to_string(run.path().join("error.log")).unwrap_or_default())
            .collect()
    }
}

#[test]
fn nginx_keepalive_and_one_request_per_connection() {
    let nginx = Nginx::start(100);
    let r = run(&nginx.url, &spec(20, 2, 1_000));
    assert!(r.requests > 100, "{} requests", r.requests);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.connections_opened, 20, "keep-alive reuses connections");

    let mut short = spec(20, 2, 60_000);
    short.requests_per_connection = Some(1);
    short.max_requests = Some(2000);
    let r = run(&nginx.url, &short);
    assert_eq!(r.requests, 2000);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.connections_opened, 2000);
}

/// The opt-in coalescing (`--coalesce`, load::gather): a worker with many
/// requests in flight waits for half of their responses at once. Its count
/// still agrees exactly with nginx's access log, and its note shows that
/// the waits gathered several responses each. With a new connection per
/// request it does not coalesce, and says so.
#[test]
fn coalesced_runs_agree_with_nginx_s_access_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    // A server slower than the client (limit_req delays each reply to a
    // steady 2000/s; `return` would run before it), so that the client
    // finds nothing to read and waits. Against a fast server a quiet
    // machine may never wait at all, and there is nothing to gather.
    let nginx = Nginx::start_with(
        64,
        &format!(
            "access_log_path = {:?}\nextra_http = {:?}",
            log,
            "limit_req_zone $binary_remote_addr zone=slow:1m rate=2000r/s; \
             limit_req zone=slow burst=100000;"
        ),
    );
    let url = format!("{}1k.bin", nginx.url);
    let logged = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count() as u64
    };
    // nginx writes a log line after its response: the count of lines once
    // it reached `n`, or after 5 s.
    let logged_once = |n: u64| {
        let deadline = Instant::now() + Duration::from_secs(5);
        while logged() < n && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        logged()
    };
    // The start's readiness check (one GET).
    logged_once(1);
    for connreqs in [None, Some(1)] {
        let before = logged();
        let mut s = spec(32, 1, 60_000);
        s.coalesce = true;
        s.requests_per_connection = connreqs;
        s.max_requests = Some(3000);
        let r = run(&url, &s);
        assert_eq!(r.requests, 3000, "connreqs {connreqs:?}: {:?}", r.errors);
        assert_eq!(r.errors.total(), 0, "connreqs {connreqs:?}: {:?}", r.errors);
        assert_eq!(
            logged_once(before + 3000) - before,
            3000,
            "connreqs {connreqs:?}"
        );
        match connreqs {
            None => {
                let (waits, replies) = crate::gathered(&r.notes);
                assert!(waits > 0 && replies > waits, "{:?}", r.notes);
                assert_eq!(r.connections_opened, 32);
            }
            Some(_) => {
                assert!(
                    r.notes.iter().any(|n| n.contains("did not coalesce")),
                    "{:?}",
                    r.notes
                );
                assert_eq!(r.connections_opened, 3000);
            }
        }
    }
    // Four connections on a thread are too few to wait for half of their
    // replies: the run counts as usual and says it did not coalesce.
    let before = logged();
    let mut few = spec(4, 1, 60_000);
    few.coalesce = true;
    few.max_requests = Some(500);
    let r = run(&nginx.url, &few);
    assert_eq!(r.requests, 500, "{:?}", r.errors);
    assert_eq!(logged_once(before + 500) - before, 500);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("fewer than 8 connections")),
        "{:?}",
        r.notes
    );
    assert!(
        !r.notes.iter().any(|n| n.starts_with("coalesced: ")),
        "{:?}",
        r.notes
    );
}

#[test]
fn nginx_holds_4000_concurrent_connections() {
    let nginx = Nginx::start(4000);
    let mut s = spec(4000, 2, 3_000);
    s.timeout = Duration::from_secs(10);
    let r = run(&nginx.url, &s);
    assert_eq!(
        r.errors.total(),
        0,
        "{:?} {:?}\n{}",
        r.errors,
        r.notes,
        nginx.error_log()
    );
    assert_eq!(r.connections_opened, 4000);
    assert!(r.requests >= 4000, "{} requests", r.requests);
}

fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_scalelab"))
        .args(["load", "http"])
        .args(args)
        .output()
        .expect("the scalelab binary runs")
}

#[test]
fn cli_json_reports_the_run() {
    let server = TestServer::start(Behaviour::Status500);
    let out = cli(&[&server.url(), "-c", "3", "-t", "1", "-n", "40", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(j["requests"], 40);
    assert_eq!(j["errors"]["status"], 40);
    assert_eq!(j["errors"]["connect"], 0);
    assert!(j["rps"].as_f64().unwrap() > 0.0);
    assert!(j["bytes"].as_u64().unwrap() > 40 * 40);
    crate::support::assert_latency_fields(&j, false);
    // Rate mode reports the generator's schedule lag beside the latency,
    // with the same fields.
    let out = cli(&[
        &server.url(),
        "-c",
        "2",
        "-t",
        "1",
        "-R",
        "200",
        "-d",
        "1s",
        "--json",
    ]);
    let rated: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    crate::support::assert_latency_fields(&rated, true);
    let out = cli(&[&server.url(), "-c", "2", "-t", "1", "-R", "200", "-d", "1s"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for field in ["p75 ", "p99.9 ", "stdev ", "Schedule lag (rate mode): p50 "] {
        assert!(text.contains(field), "{field}: {text}");
    }
    for key in [
        "duration_s",
        "client_cpu_s",
        "achieved_rate",
        "connections_opened",
    ] {
        assert!(j[key].is_number(), "{key}");
    }
    assert!(j["target_rate"].is_null() && j["notes"].is_array());
}

#[test]
fn cli_text_looks_like_wrk_and_reports_errors() {
    let server = TestServer::start(Behaviour::Status500);
    let out = cli(&[
        &server.url(),
        "-c",
        "2",
        "-t",
        "1",
        "-d",
        "1s",
        "--latency",
        "-R",
        "100",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "Running 1s test @ http://127.0.0.1:",
        "1 threads and 2 connections",
        "Latency Distribution",
        "99%",
        "requests in",
        "Non-2xx responses:",
        "Requests/sec:",
        "Target rate: 100.00 req/s, achieved:",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
}

#[test]
fn cli_rejects_bad_input_clearly() {
    for (args, needle) in [
        (
            vec!["http://127.0.0.1:9/", "-c", "0"],
            "`connections` must be 1 to 1000000",
        ),
        (vec!["https://127.0.0.1/"], "--cacert FILE"),
        (vec!["127.0.0.1:80"], "expected a URL"),
        (vec!["http://192.0.2.1/"], "not a loopback address"),
        (vec!["http://127.0.0.1:9/", "-d", "10x"], "unknown unit"),
        (vec!["http://127.0.0.1:9/", "-H", "NoColon"], "Name: value"),
        (
            vec!["http://127.0.0.1:9/", "-R", "0"],
            "rate must be a number per second from 0.001",
        ),
    ] {
        let out = cli(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(
            err.contains(needle),
            "{args:?}: expected `{needle}` in:\n{err}"
        );
        assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
    }
}

/// A private network namespace (its own loopback and its own
/// `ip_local_port_range`), deleted on drop.
struct Netns(String);

impl Netns {
    fn new(ports: &str) -> Netns {
        let ns = Netns(format!("scalelab-http-{}", std::process::id()));
        let ip = |args: &[&str]| {
            let st = std::process::Command::new("ip").args(args).status();
            assert!(st.is_ok_and(|s| s.success()), "ip {args:?} failed");
        };
        ip(&["netns", "add", &ns.0]);
        ip(&["-n", &ns.0, "link", "set", "lo", "up"]);
        let range = format!("net.ipv4.ip_local_port_range={ports}");
        ip(&["netns", "exec", &ns.0, "sysctl", "-q", "-w", &range]);
        ns
    }

    fn command(&self, program: &str) -> std::process::Command {
        let mut c = std::process::Command::new("ip");
        c.args(["netns", "exec", &self.0, program]);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &self.0])
            .status();
    }
}

/// Ten ephemeral ports for twenty connections: the run must say in words
/// that ports ran out, and `--source-addrs` must cure it.
#[test]
fn ephemeral_port_exhaustion_is_reported_and_source_addrs_cures_it() {
    use std::io::BufRead;
    let ns = Netns::new("40000 40009");
    // Listeners that accept nothing: connects complete in their backlogs.
    // One port per run, so the first run's closing sockets do not hold
    // ports the second needs.
    let script = "import socket,time\nls=[socket.socket() for _ in range(2)]\n\
        for i,s in enumerate(ls): s.bind(('127.0.0.1',8080+i)); s.listen(128)\n\
        print('ready',flush=True)\ntime.sleep(30)";
    let mut listener = ns
        .command("python3")
        .args(["-c", script])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut line = String::new();
    let stdout = listener.stdout.take().unwrap();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    let load = |url: &str, extra: &[&str]| -> serde_json::Value {
        let out = ns
            .command(env!("CARGO_BIN_EXE_scalelab"))
            .args(["load", "http", url, "-c", "20", "-t", "1"])
            .args(["-d", "1s", "--timeout", "10s", "--json"])
            .args(extra)
            .output()
            .unwrap();
        // 4: no request completed (the listener never accepts); the JSON
        // with the error counts is printed either way.
        assert!(
            matches!(out.status.code(), Some(0 | 4)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let short = load("http://127.0.0.1:8080/", &[]);
    let spread = load("http://127.0.0.1:8081/", &["--source-addrs", "3"]);
    let _ = listener.kill();
    let _ = listener.wait();
    let notes = short["notes"].to_string();
    assert!(
        short["errors"]["connect"].as_u64().unwrap() >= 10,
        "{short}"
    );
    assert!(notes.contains("ephemeral ports exhausted"), "{notes}");
    assert!(notes.contains("40000 40009"), "{notes}");
    assert!(!notes.contains("is the server running"), "{notes}");
    assert_eq!(short["connections_opened"], 10);
    assert_eq!(spread["errors"]["connect"], 0, "{spread}");
    assert_eq!(spread["connections_opened"], 20, "{spread}");
    assert_eq!(
        spread["notes"].as_array().map(Vec::len),
        Some(0),
        "{spread}"
    );
}
