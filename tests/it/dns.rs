//! The DNS lab against the real NSD, Unbound and BIND: each starts inside a
//! private namespace holding only `lo`, answers for the lab's zones,
//! refuses or fails everything else, and leaves nothing behind; the
//! generator's counts agree with Unbound's own statistics.

use hickory_proto::op::ResponseCode;
use hickory_proto::rr::RecordType;
use scalelab::load::dns::facts::Datagrams;
use scalelab::load::dns::{DnsDriver, DnsSettings, Generator, QuerySource};
use scalelab::load::{Driver, LoadSpec};
use scalelab::model::Dataset;
use scalelab::placement::Placement;
use scalelab::server::dns::{bind, nsd, unbound, DnsLab};
use scalelab::server::Server;
use scalelab::shutdown::Shutdown;
use scalelab::sys::netns;
use scalelab::sys::process::is_alive;
use scalelab::wire::dns::ask::ask;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

fn table(text: &str) -> toml::Table {
    toml::from_str(text).unwrap()
}

/// Starts `lab` with zones of `hosts` hosts, the dataset a dns workload
/// drawing from that many names declares.
fn start(mut lab: DnsLab, hosts: u32) -> (DnsLab, String) {
    let zones = Dataset::DnsZones { hosts, veth: false };
    let ep = lab
        .start(&Placement::unconstrained(), Some(&zones), &Shutdown::new())
        .unwrap();
    (lab, ep.uri)
}

fn ns_of(lab: &DnsLab) -> String {
    lab.netns().unwrap().name().to_string()
}

fn rcode(lab: &DnsLab, addr: &str, name: &str, t: RecordType) -> ResponseCode {
    let server: SocketAddr = format!("{addr}:53").parse().unwrap();
    ask(Some(&ns_of(lab)), server, name, t, Duration::from_secs(3)).unwrap()
}

/// A query file of the lab's names.
fn query_file(dir: &Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("queries.txt");
    std::fs::write(&p, text).unwrap();
    p
}

fn driver(uri: &str, file: &Path) -> DnsDriver {
    let settings = DnsSettings {
        queries: QuerySource::File(file.to_path_buf()),
        names: None,
        max_outstanding: 20,
        max_rate: None,
        generator: Generator::Socket,
        transport: Default::default(),
        ca_file: None,
        ca_pem: None,
        tls_verify: None,
        doh_method: Default::default(),
        doh_path: None,
    };
    DnsDriver::new(settings, uri).unwrap()
}

/// NSD in a fresh lab with 100 hosts, and a driver that ramps two of
/// them to `max_rate` qps; the lab lives as long as the returned guard.
/// Also returns the query file and the lab's URI.
fn nsd_ramp(base: &Path, max_rate: f64) -> (DnsLab, DnsDriver, std::path::PathBuf, String) {
    let (lab, uri) = start(nsd::target(&toml::Table::new(), base).unwrap(), 100);
    let q = query_file(base, "h1.bench.test A\nh2.bench.test A\n");
    let settings = DnsSettings {
        queries: QuerySource::File(q.clone()),
        names: None,
        max_outstanding: 100,
        max_rate: Some(max_rate),
        generator: Generator::Socket,
        transport: Default::default(),
        ca_file: None,
        ca_pem: None,
        tls_verify: None,
        doh_method: Default::default(),
        doh_path: None,
    };
    let driver = DnsDriver::new(settings, &uri).unwrap();
    (lab, driver, q, uri)
}

fn exact(n: u64) -> LoadSpec {
    LoadSpec {
        max_requests: Some(n),
        timeout: Duration::from_secs(2),
        ..LoadSpec::closed(2, 2, Duration::from_secs(30))
    }
}

/// Only `lo` exists in the lab, so nothing can have left it; and the
/// namespace's counters show the lab's own traffic stayed on `lo`.
fn assert_only_lo(lab: &DnsLab) {
    let ifs = lab.netns().unwrap().interfaces();
    let names: Vec<&str> = ifs.iter().map(|i| i.iface.as_str()).collect();
    assert_eq!(names, vec!["lo"], "the lab holds only lo");
    assert!(ifs[0].tx_packets > 0, "the lab's traffic went over lo");
}

#[test]
fn nsd_serves_the_lab_zones_and_nothing_leaves() {
    let base = tempfile::tempdir().unwrap();
    let (mut lab, uri) = start(nsd::target(&toml::Table::new(), base.path()).unwrap(), 500);
    let ns = ns_of(&lab);
    assert!(
        uri.starts_with("dns://127.0.0.2:53?netns=scalelab-dns-"),
        "{uri}"
    );
    assert_eq!(
        rcode(&lab, "127.0.0.2", "h499.bench.test.", RecordType::A),
        ResponseCode::NoError
    );
    assert_eq!(
        rcode(
            &lab,
            "127.0.0.2",
            "9.1.18.198.in-addr.arpa.",
            RecordType::PTR
        ),
        ResponseCode::NoError
    );
    assert_eq!(
        rcode(&lab, "127.0.0.2", "h500.bench.test.", RecordType::A),
        ResponseCode::NXDomain
    );
    assert_eq!(
        rcode(&lab, "127.0.0.2", "example.com.", RecordType::A),
        ResponseCode::Refused
    );
    let q = query_file(
        base.path(),
        "h1.bench.test A\nh2.bench.test A\nh999.bench.test A\n",
    );
    let r = driver(&uri, &q)
        .run(&exact(3000), &Shutdown::new())
        .unwrap();
    let d = r.extras.get::<Datagrams>().cloned().unwrap();
    assert_eq!((d.sent, r.requests, d.lost), (3000, 3000, 0));
    assert_eq!(d.codes["NOERROR"], 2000);
    assert_eq!(d.codes["NXDOMAIN"], 1000);
    assert_only_lo(&lab);
    assert!(lab.version().unwrap().contains("NSD"));
    let zones = lab
        .dataset()
        .expect("the zones are recorded as the dataset");
    assert_eq!(zones.description, "DNS zones with 500 hosts");
    let zone_dir = lab.run_dir().unwrap().join("zones");
    let on_disk: u64 = std::fs::read_dir(&zone_dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert_eq!(zones.bytes, on_disk);
    let pid = lab.root_pid().unwrap();
    lab.stop().unwrap();
    assert!(!is_alive(pid), "NSD stopped");
    assert!(!netns::exists(&ns), "namespace removed");
    assert_eq!(
        std::fs::read_dir(base.path()).unwrap().count(),
        1,
        "only our query file is left"
    );
}

/// `unbound-control stats_noreset`'s `total.num.queries`.
pub fn unbound_queries(lab: &DnsLab) -> u64 {
    unbound_stat(lab, "total.num.queries").unwrap_or_else(|| panic!("no total.num.queries"))
}

/// One counter of `unbound-control stats_noreset` (`num.query.tcp`);
/// `None` when Unbound does not print it.
pub fn unbound_stat(lab: &DnsLab, name: &str) -> Option<u64> {
    let conf = lab.run_dir().unwrap().join("unbound.conf");
    let out = std::process::Command::new("unbound-control")
        .arg("-c")
        .arg(conf)
        .arg("stats_noreset")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .map(|v| v.parse().unwrap())
}

#[test]
fn unbound_resolves_the_lab_refuses_the_world_and_counts_agree() {
    let base = tempfile::tempdir().unwrap();
    let (lab, uri) = start(
        unbound::target(&table("threads = 2"), base.path()).unwrap(),
        300,
    );
    let outside = rcode(&lab, "127.0.0.1", "example.com.", RecordType::A);
    assert!(
        matches!(outside, ResponseCode::Refused | ResponseCode::ServFail),
        "{outside:?}"
    );
    assert_eq!(
        rcode(&lab, "127.0.0.1", "h7.bench.test.", RecordType::A),
        ResponseCode::NoError
    );
    assert_eq!(
        rcode(
            &lab,
            "127.0.0.1",
            "7.0.18.198.in-addr.arpa.",
            RecordType::PTR
        ),
        ResponseCode::NoError
    );
    let before = unbound_queries(&lab);
    let threads_before = lab.worker_requests().expect("each thread's queries");
    let text: String = (0..300).map(|i| format!("h{i}.bench.test A\n")).collect();
    let q = query_file(base.path(), &text);
    let r = driver(&uri, &q)
        .run(&exact(2500), &Shutdown::new())
        .unwrap();
    let d = r.extras.get::<Datagrams>().cloned().unwrap();
    assert_eq!((d.sent, r.requests, d.lost), (2500, 2500, 0));
    assert_eq!(
        unbound_queries(&lab) - before,
        r.requests,
        "unbound counted what we sent"
    );
    let threads_after = lab.worker_requests().unwrap();
    let grown =
        scalelab::probe::limiter::balance::worker_requests_between(&threads_before, &threads_after)
            .unwrap();
    eprintln!("each thread's queries: {grown:?}");
    assert_eq!(grown.len(), 2, "{grown:?}");
    assert_eq!(grown.iter().sum::<u64>(), r.requests, "the threads' sum");
    assert_only_lo(&lab);
    assert!(
        lab.version().unwrap().starts_with("unbound 1."),
        "{:?}",
        lab.version()
    );
    assert!(lab.effective_config().unwrap().contains("num-threads: 2"));
}

#[test]
fn bind_resolves_the_lab_and_fails_the_world() {
    let base = tempfile::tempdir().unwrap();
    let (lab, _uri) = start(
        bind::target(&table("threads = 2"), base.path()).unwrap(),
        100,
    );
    assert_eq!(
        rcode(&lab, "127.0.0.1", "h42.bench.test.", RecordType::A),
        ResponseCode::NoError
    );
    let outside = rcode(&lab, "127.0.0.1", "example.com.", RecordType::A);
    assert!(
        matches!(outside, ResponseCode::Refused | ResponseCode::ServFail),
        "{outside:?}"
    );
    assert_only_lo(&lab);
    assert!(
        lab.version().unwrap().starts_with("BIND 9"),
        "{:?}",
        lab.version()
    );
}

#[test]
fn a_resolver_config_that_fails_shows_its_log() {
    let base = tempfile::tempdir().unwrap();
    let mut lab = unbound::target(&table("extra = \"no-such-option: 1\""), base.path()).unwrap();
    let e = lab
        .start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("unbound exited during startup"), "{e}");
    assert!(
        e.contains("no-such-option"),
        "the log tail names the bad line: {e}"
    );
    lab.stop().unwrap();
}

#[test]
fn a_dead_runs_namespace_is_reclaimed() {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let name = format!("scalelab-dns-{dead}-0");
    let ok = std::process::Command::new("ip")
        .args(["netns", "add", &name])
        .status()
        .unwrap();
    assert!(ok.success());
    // Another test's lab may reclaim it first; either way it must go.
    netns::reclaim_stale();
    assert!(!netns::exists(&name), "{name} left behind");
}

#[test]
fn ramp_and_fixed_rate_keep_their_schedule() {
    let base = tempfile::tempdir().unwrap();
    let (_lab, ramp, q, uri) = nsd_ramp(base.path(), 4000.0);
    let spec = LoadSpec {
        timeout: Duration::from_secs(1),
        ..LoadSpec::closed(2, 1, Duration::from_secs(3))
    };
    let r = ramp.run(&spec, &Shutdown::new()).unwrap();
    let d = r.extras.get::<Datagrams>().cloned().unwrap();
    // 0 to 4000 qps over 3 s: 6000 queries, rising second by second.
    assert!((5900..=6000).contains(&d.sent), "{}", d.sent);
    let ramp = d.ramp.unwrap();
    let offered: Vec<u64> = ramp.seconds.iter().map(|s| s.offered).collect();
    assert!(
        offered[0] < offered[1] && offered[1] < offered[2],
        "{offered:?}"
    );
    assert!(ramp.max_throughput >= 2500.0, "{}", ramp.max_throughput);
    assert_eq!(ramp.loss_at_max, 0.0);
    assert!(ramp.at_half_max.is_some());
    assert!(d.fell_behind.is_none());
    assert_eq!(r.throughput(), ramp.max_throughput);

    let fixed = driver(&uri, &q);
    let spec = LoadSpec {
        pacing: scalelab::load::Pacing::Open { rate: 2000.0 },
        ..spec
    };
    let r = fixed.run(&spec, &Shutdown::new()).unwrap();
    let d = r.extras.get::<Datagrams>().cloned().unwrap();
    assert!((5900..=6000).contains(&d.sent), "{}", d.sent);
    assert_eq!(r.requests, d.sent);
}

#[test]
fn a_ramp_the_generator_cannot_keep_stops_a_second_behind_and_says_whose_maximum_it_is() {
    // 0 to 50M qps over 6 s: no client reaches that. The ramp must stop
    // where it is a second behind (not catch up in one burst until the
    // duration ends), say whose maximum it measured, and never count an
    // answer the kernel dropped at its own sockets without saying so.
    let base = tempfile::tempdir().unwrap();
    let (_lab, ramp, _, _) = nsd_ramp(base.path(), 50e6);
    let spec = LoadSpec {
        timeout: Duration::from_millis(500),
        ..LoadSpec::closed(4, 1, Duration::from_secs(6))
    };
    let started = std::time::Instant::now();
    let r = ramp.run(&spec, &Shutdown::new()).unwrap();
    let took = started.elapsed();
    let d = r.extras.get::<Datagrams>().cloned().unwrap();
    let ramp = d.ramp.clone().unwrap();
    assert!(
        ramp.notes
            .iter()
            .any(|n| n.contains("a second behind its schedule")),
        "{:?}",
        ramp.notes
    );
    // Whose maximum it is follows from what was really sent: the server's
    // only if some second really offered it 5% more than it ever answered.
    let saturated = ramp
        .seconds
        .iter()
        .any(|s| s.offered as f64 > 1.05 * ramp.max_throughput);
    match &d.fell_behind {
        Some(reason) => {
            assert!(!saturated, "{ramp:?}");
            // Behind its schedule, or out of query IDs on a loaded machine
            // whose server answers late: either way the client's, and said.
            assert!(
                reason.contains("fell behind its schedule")
                    || reason.contains("query IDs of its 4 client(s) were in flight"),
                "{reason}"
            );
        }
        None => {
            assert!(saturated, "{ramp:?}");
            assert!(ramp.notes.iter().any(|n| n.contains("the maximum stands")));
        }
    }
    assert!(took < Duration::from_secs(5), "it stopped early: {took:?}");
    // Every query sent is answered or lost, and the kernel's drops at the
    // client's sockets are among the lost.
    assert_eq!(r.requests + d.lost, d.sent, "{d:?}");
    assert!(d.dropped_at_client <= d.lost, "{d:?}");
}

fn cli(args: &[&str]) -> (bool, String) {
    let out = crate::support::run(args);
    (out.status.success(), crate::support::stderr(&out))
}

/// Runs `scalelab` with `args`, which must be refused as bad input (exit
/// 2); returns its stderr.
fn refused(args: &[&str]) -> String {
    let out = crate::support::run(args);
    let err = crate::support::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    err
}

#[test]
fn bad_input_gets_errors_that_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "h1.bench.test A\nh2.bench.test\n").unwrap();
    let load = |file: &Path, more: &[&str]| {
        let mut args = vec!["load", "dns", "127.0.0.1:53", "--queries"];
        args.push(file.to_str().unwrap());
        args.extend(more);
        refused(&args)
    };
    let err = load(&bad, &[]);
    assert!(err.contains("bad.txt:2: expected two fields"), "{err}");
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "; nothing\n").unwrap();
    let err = load(&empty, &[]);
    assert!(err.contains("empty.txt holds no queries"), "{err}");
    let good = query_file(dir.path(), "h1.bench.test A\n");
    let err = load(&good, &["--rate", "0"]);
    assert!(err.contains("--rate must be a positive number"), "{err}");
    // The zones' size is the lab's dataset, not a server setting.
    let err = refused(&["dns", "lab", "nsd", "--settings", "names = 5", "--", "true"]);
    assert!(
        err.contains("give the zones' hosts with --names N"),
        "{err}"
    );
    let err = load(&good, &["--ramp", "2s", "--max-rate", "0"]);
    assert!(err.contains("max_rate must be a positive number"), "{err}");
    let good = good.to_str().unwrap();
    let err = refused(&["load", "dns", "192.0.2.1:53", "--queries", good]);
    assert!(err.contains("only to loopback"), "{err}");
    // Nothing listens on this port: the ICMP refusals and timeouts are named.
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = format!("127.0.0.1:{port}");
    let out = crate::support::run(&[
        "load",
        "dns",
        &server,
        "--queries",
        good,
        "-d",
        "300ms",
        "--timeout",
        "300ms",
    ]);
    let err = crate::support::stderr(&out);
    assert_eq!(out.status.code(), Some(4), "nothing measured: {err}");
    assert!(err.contains("answered none of"), "{err}");
    assert!(err.contains("is a DNS server listening there?"), "{err}");
}

#[test]
fn the_query_command_writes_a_deterministic_dnsperf_file() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, seed: &str| {
        let p = dir.path().join(name);
        let args = [
            "dns",
            "queries",
            "--names",
            "500",
            "--zipf",
            "1.1",
            "--reverse-share",
            "0.3",
            "--count",
            "2000",
            "--seed",
            seed,
            "-o",
            p.to_str().unwrap(),
        ];
        let (ok, err) = cli(&args);
        assert!(ok, "{err}");
        std::fs::read_to_string(p).unwrap()
    };
    let a = write("a.txt", "3");
    assert_eq!(a, write("b.txt", "3"));
    assert_ne!(a, write("c.txt", "4"));
    let q = scalelab::load::dns::queries::parse(&a, "a.txt").unwrap();
    assert_eq!(q.len(), 2000);
    let (ok, err) = cli(&["dns", "queries", "--names", "0", "-o", "/dev/null"]);
    assert!(!ok && err.contains("names must be"), "{err}");
}

/// scalelab's descendants whose command name is `comm`.
fn descendant_named(root: u32, comm: &str) -> Option<u32> {
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for c in scalelab::sys::process::children_of(p) {
            let name = std::fs::read_to_string(format!("/proc/{c}/comm")).unwrap_or_default();
            if name.trim() == comm {
                return Some(c);
            }
            todo.push(c);
        }
    }
    None
}

#[test]
fn a_resolver_killed_mid_trial_fails_that_trial_and_the_sweep_goes_on() {
    use scalelab::store::{Store, TrialStatus};
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("exp.toml");
    std::fs::write(
        &exp,
        "name = \"dns-death\"\n[server]\nkind = \"unbound\"\n\
         [load]\nkind = \"dns\"\nqueries = { names = 200, count = 2000 }\ntimeout = \"500ms\"\n\
         [sweep]\nconnections = [1, 2]\n\
         [trials]\nduration = \"2s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\nrestart = \"per_trial\"\n",
    )
    .unwrap();
    let store = dir.path().join("s.sqlite");
    let child = crate::support::scalelab()
        .args([
            "--store",
            store.to_str().unwrap(),
            "run",
            exp.to_str().unwrap(),
        ])
        .env("SCALELAB_WORKDIR", dir.path().join("work"))
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let unbound = loop {
        if let Some(p) = descendant_named(child.id(), "unbound") {
            break p;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "unbound never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(800));
    scalelab::sys::process::signal(unbound, libc::SIGKILL);
    let out = child.wait_with_output().unwrap();
    // Exit 3: the run finished, but some trials failed.
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        crate::support::stderr(&out)
    );
    let data = Store::open(&store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert_eq!(data.trials.len(), 2, "the sweep went on");
    assert_eq!(data.trials[0].status, TrialStatus::Failed);
    let why = data.trials[0].error.clone().unwrap_or_default();
    assert!(why.contains("server died"), "{why}");
    assert_eq!(
        data.trials[1].status,
        TrialStatus::Ok,
        "{:?}",
        data.trials[1].error
    );
}

#[test]
fn kill_9_of_a_lab_command_leaves_no_namespace_and_nothing_inside() {
    let dir = tempfile::tempdir().unwrap();
    let inner_pid = dir.path().join("inner.pid");
    // The command's own child, left behind when the command dies: only the
    // namespace's watchdog, which kills whatever runs inside, ends it.
    let mut child = crate::support::scalelab()
        .args(["dns", "lab", "nsd", "--", "sh", "-c"])
        .arg(format!(
            "sleep 300 & echo $! > {}; wait",
            inner_pid.display()
        ))
        .env("SCALELAB_WORKDIR", dir.path().join("work"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let inner: u32 = loop {
        let text = std::fs::read_to_string(&inner_pid).unwrap_or_default();
        if let Ok(p) = text.trim().parse() {
            break p;
        }
        assert!(std::time::Instant::now() < deadline, "the lab never ran");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(is_alive(inner));
    assert!(
        !crate::support::namespaces_of(pid).is_empty(),
        "the lab has its namespace"
    );
    child.kill().unwrap(); // SIGKILL: scalelab cleans nothing up itself
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while is_alive(inner) || !crate::support::namespaces_of(pid).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "5 s after kill -9: inner process alive {}, namespaces {:?}",
            is_alive(inner),
            crate::support::namespaces_of(pid)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Issue 24, item 6: Unbound's control socket lives under
/// `SCALELAB_WORKDIR`; a workdir too long for a unix socket path is refused
/// before Unbound starts, naming the variable and the limit.
#[test]
fn a_workdir_too_long_for_unbounds_socket_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("w".repeat(100));
    let out = crate::support::scalelab()
        .args(["dns", "lab", "unbound", "--", "true"])
        .env("SCALELAB_WORKDIR", &work)
        .output()
        .unwrap();
    let err = crate::support::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("SCALELAB_WORKDIR") && err.contains("more than the 107"),
        "{err}"
    );
}

/// Issue 27: `load dns` reports the latency fields every load kind does,
/// and in rate mode the generator's schedule lag beside them (run against
/// a real NSD in its lab).
#[test]
fn the_cli_reports_every_latency_field_and_the_schedule_lag() {
    let dir = tempfile::tempdir().unwrap();
    let queries = query_file(dir.path(), "h1.bench.test A\nh2.bench.test A\n");
    let run = |rate: &[&str], json: &[&str]| {
        let mut load = format!(
            "exec {} load dns \"$SCALELAB_DNS_SERVER\" --queries {} -d 1s",
            env!("CARGO_BIN_EXE_scalelab"),
            queries.display()
        );
        for a in rate.iter().chain(json) {
            load.push(' ');
            load.push_str(a);
        }
        let out = crate::support::scalelab()
            .args([
                "dns", "lab", "nsd", "--names", "10", "--", "sh", "-c", &load,
            ])
            .env("SCALELAB_WORKDIR", dir.path().join("work"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", crate::support::stderr(&out));
        crate::support::stdout(&out)
    };
    let closed: serde_json::Value = serde_json::from_str(&run(&[], &["--json"])).unwrap();
    crate::support::assert_latency_fields(&closed, false);
    let rated: serde_json::Value =
        serde_json::from_str(&run(&["--rate", "500"], &["--json"])).unwrap();
    crate::support::assert_latency_fields(&rated, true);
    let text = run(&["--rate", "500"], &[]);
    for field in ["p75 ", "p99.9 ", "stdev ", "Schedule lag:         p50 "] {
        assert!(text.contains(field), "{field}: {text}");
    }
}

/// A `timeout N taskset -c 1 sh` spinner, stopped by its PID when dropped:
/// SIGTERM to `timeout`, which passes it on to the spinner (SIGKILL would
/// leave the spinner running); `timeout` bounds it if the test dies.
struct Busy(std::process::Child);

impl Drop for Busy {
    fn drop(&mut self) {
        scalelab::sys::process::signal(self.0.id(), libc::SIGTERM);
        let _ = self.0.wait();
    }
}

/// Seed 002 in small (issue 27): BIND against Unbound, each ramp with a
/// cold cache and a timeout so short that queries are lost before the
/// maximum as well as after it, while another process keeps CPU 1 busy.
/// Lost queries are the ramp's measurement, never errors: the points stay
/// comparable, the ranking is over them, and the run exits 0 (before, every
/// point was "not comparable" and the mean was over 0 points).
#[test]
fn a_resolver_ramp_with_lost_queries_still_ranks_bind_against_unbound() {
    use scalelab::store::Store;
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("exp.toml");
    std::fs::write(
        &exp,
        "name = \"bind-threads-small\"\n[server]\nkind = \"resolver\"\nsoftware = \"bind\"\n\
         [load]\nkind = \"dns\"\nmax_rate = 2000\nconnections = 2\ntimeout = \"1ms\"\n\
         queries = { names = 2000, zipf = 1.0, seed = 1, count = 20000 }\n\
         [sweep]\n\"server.threads\" = [2]\n\
         [trials]\nduration = \"3s\"\nwarmup = \"0s\"\nmin = 3\nmax = 3\nrestart = \"per_trial\"\n\
         [[system]]\nlabel = \"BIND 9\"\nserver = { software = \"bind\" }\n\
         [[system]]\nlabel = \"Unbound\"\nserver = { software = \"unbound\" }\n",
    )
    .unwrap();
    // Bounded by `timeout` as well as killed by PID when the test ends.
    let _busy = Busy(
        std::process::Command::new("timeout")
            .args([
                "120",
                "taskset",
                "-c",
                "1",
                "sh",
                "-c",
                "while :; do :; done",
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    // The case needs every ramp to lose queries. A fast Unbound can answer
    // all of a ramp within the 1 ms timeout (a full suite run saw it once; such a
    // ramp measured no maximum, so its point is rightly not comparable):
    // the run is made again, at most 3 times, until every ramp lost some.
    let mut attempt = 0;
    let (out, text, data) = loop {
        attempt += 1;
        let store = dir.path().join(format!("s{attempt}.sqlite"));
        let out = crate::support::scalelab()
            .args([
                "--store",
                store.to_str().unwrap(),
                "run",
                exp.to_str().unwrap(),
            ])
            .args(["-o", dir.path().join("r.html").to_str().unwrap()])
            .env("SCALELAB_WORKDIR", dir.path().join("work"))
            .current_dir(dir.path())
            .output()
            .unwrap();
        let text = crate::support::stdout(&out);
        let data = Store::open(&store, scalelab::catalog())
            .unwrap()
            .load_run("latest")
            .unwrap();
        let every_ramp_lost = data
            .trials
            .iter()
            .filter_map(|t| t.context.extras.get::<Datagrams>())
            .all(|d| d.lost > 0);
        if every_ramp_lost || attempt == 3 {
            break (out, text, data);
        }
    };
    let ramps: Vec<_> = data
        .trials
        .iter()
        .filter_map(|t| t.context.extras.get::<Datagrams>())
        .collect();
    assert!(
        ramps.iter().all(|d| d.lost > 0),
        "the case needs every ramp to lose queries ({attempt} runs): {text}"
    );
    // A ramp rises over its window by design: its window is not judged
    // for steadiness (issue 47), never called drifting.
    for t in &data.trials {
        assert_eq!(
            t.window.steadiness,
            Some(scalelab::analysis::steady::Steadiness::Ramped),
            "{text}"
        );
    }
    assert_eq!(ramps.len(), 6, "{text}");
    let lost_before_max: u64 = ramps
        .iter()
        .map(|d| d.lost - d.ramp.as_ref().unwrap().lost_past_max)
        .sum();
    assert!(
        lost_before_max > 0,
        "the case needs losses before the maximum: {text}"
    );
    for t in &data.trials {
        assert_eq!(
            t.measurement.as_ref().unwrap().errors.timeout,
            0,
            "lost is not an error"
        );
    }
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{text}",
        crate::support::stderr(&out)
    );
    let ranking = text
        .lines()
        .find(|l| l.starts_with("Ranking:"))
        .unwrap_or_default();
    assert!(!ranking.contains("not comparable"), "{text}");
    // Three ramps a side: a verdict (Welch's t on all trials), never "?",
    // and the header names the test.
    assert!(!ranking.contains('?'), "{text}");
    assert!(
        text.contains("(Welch's t on all trials, 3 a side, 2% noise floor)"),
        "{text}"
    );
    let agg = scalelab::judging::analyse::aggregate(&data);
    let unbound = agg.cells.iter().find(|c| c.system == "Unbound").unwrap();
    let verdict = &unbound.comparison.as_ref().unwrap().verdict;
    assert!(
        matches!(
            verdict,
            scalelab::analysis::compare::Verdict::Faster
                | scalelab::analysis::compare::Verdict::Slower
                | scalelab::analysis::compare::Verdict::NoDifference
        ),
        "{verdict:?}\n{text}"
    );
    assert!(text.contains("(geometric mean over 1 point"), "{text}");
}

/// Issue 41: dnsperf as its users type it (`-s ADDR -p PORT -l SEC`) and a
/// resperf-style ramp (`-r`, `-m`) that loses nothing, against a real NSD:
/// the ramp never reached the server's limit, so it prints no maximum but
/// a floor (`≥ N qps`, `max_throughput_at_least` in --json) and says to
/// raise --max-rate.
#[test]
fn dnsperf_flags_as_typed_and_a_ramp_below_the_limit_prints_no_maximum() {
    let dir = tempfile::tempdir().unwrap();
    let queries = query_file(dir.path(), "h1.bench.test A\nh2.bench.test A\n");
    let exe = env!("CARGO_BIN_EXE_scalelab");
    let q = queries.display();
    let script = format!(
        "s=$SCALELAB_DNS_SERVER; \
         {exe} load dns -s ${{s%:*}} -p ${{s##*:}} -d {q} -l 1 2>&1; echo \"exit $?\"; \
         {exe} load dns -s ${{s%:*}} -p ${{s##*:}} --queries {q} -l 1 -Q 300 --json; \
         {exe} load dns -s ${{s%:*}} -p ${{s##*:}} --queries {q} -r 2 -m 400; \
         echo '--- json'; \
         {exe} load dns -s ${{s%:*}} -p ${{s##*:}} --queries {q} -r 2 -m 400 --json"
    );
    let out = crate::support::scalelab()
        .args([
            "dns", "lab", "nsd", "--names", "10", "--", "sh", "-c", &script,
        ])
        .env("SCALELAB_WORKDIR", dir.path().join("work"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    let text = crate::support::stdout(&out);
    // dnsperf's -d FILE is named in the error.
    let (refusal, rest) = text
        .split_once("exit 2\n")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        refusal.contains("dnsperf's -d FILE is --queries FILE"),
        "{refusal}"
    );
    // -s, -p and -l: a second at 300 qps.
    let json_end = rest.find("\n}\n").unwrap_or_else(|| panic!("{rest}")) + 3;
    let v: serde_json::Value = serde_json::from_str(&rest[..json_end]).unwrap();
    // -l 1 at -Q 300: a second's schedule was sent (the run's wall time
    // also waits for the last answers).
    let sent = v["sent"].as_u64().unwrap();
    assert!((250..=320).contains(&sent), "{v}");
    assert!(v["responses"].as_u64().unwrap() * 10 >= sent * 9, "{v}");
    // The ramp to 400 qps loses nothing: no maximum, a floor, and why
    // (issue 46 item 2.6: `≥`, in the terminal and in --json).
    let (ramp, json) = rest[json_end..].split_once("--- json\n").unwrap();
    assert!(ramp.contains("Queries lost:         0"), "{ramp}");
    assert!(ramp.contains("Maximum throughput: ≥ "), "{ramp}");
    assert!(
        ramp.contains(" qps: the ramp ended before the server fell behind; raise --max-rate"),
        "{ramp}"
    );
    assert!(!ramp.contains(" qps\nLost at that point"), "{ramp}");
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert!(
        v["max_throughput"].is_null(),
        "never stored as a maximum: {v}"
    );
    // The floor is the ramp's highest answer rate in any second, by its
    // own per-second counts. Its second second is scheduled at 200..400
    // qps (300 on average); a generator slowed by a loaded machine sends
    // some of it a second later, so the floor may fall a little below 300
    // (CI saw this) but never below the first second's rate nor above the
    // ramp's end.
    let floor = v["max_throughput_at_least"].as_f64().unwrap_or(0.0);
    let best = v["ramp"]["seconds"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .filter_map(|s| s["answered"].as_u64())
        .max()
        .unwrap_or(0);
    assert_eq!(floor, best as f64, "{v}");
    assert!((150.0..=420.0).contains(&floor), "{v}");
    assert!(v["ramp"]["below_limit"].as_bool().unwrap_or(false), "{v}");
}

/// Runs `settings` against `uri` for `spec`'s exact count of queries and
/// checks each was sent and answered, none lost; the run's datagrams.
fn every_query_answered(settings: DnsSettings, uri: &str, spec: &LoadSpec) -> Datagrams {
    let r = DnsDriver::new(settings, uri)
        .unwrap()
        .run(spec, &Shutdown::new())
        .unwrap();
    let d = r.extras.get::<Datagrams>().cloned().unwrap();
    let n = spec.max_requests.unwrap();
    assert_eq!((d.sent, r.requests, d.lost), (n, n, 0), "{:?}", r.notes);
    d
}

/// DNS over TCP (`transport = "tcp"`, dnsperf's `-m tcp`): every query
/// answered, and Unbound's own counters agree: its queries grew by what
/// scalelab sent, every one of them over TCP (`num.query.tcp`, one of
/// Unbound's extended statistics).
#[test]
fn dns_over_tcp_is_counted_by_unbound_as_tcp() {
    let base = tempfile::tempdir().unwrap();
    let settings = table("threads = 2\nextra = \"extended-statistics: yes\"");
    let (lab, uri) = start(unbound::target(&settings, base.path()).unwrap(), 300);
    let stat = |name: &str| unbound_stat(&lab, name).unwrap_or(0);
    let (queries, tcp) = (stat("total.num.queries"), stat("num.query.tcp"));
    let text: String = (0..300).map(|i| format!("h{i}.bench.test A\n")).collect();
    let q = query_file(base.path(), &text);
    let settings = DnsSettings {
        queries: QuerySource::File(q),
        names: None,
        max_outstanding: 20,
        max_rate: None,
        generator: Generator::Socket,
        transport: scalelab::load::dns::DnsTransport::Tcp,
        ca_file: None,
        ca_pem: None,
        tls_verify: None,
        doh_method: Default::default(),
        doh_path: None,
    };
    every_query_answered(settings, &uri, &exact(2500));
    assert_eq!(stat("total.num.queries") - queries, 2500);
    assert_eq!(
        stat("num.query.tcp") - tcp,
        2500,
        "every query came over TCP"
    );
}

/// The Unbound lab with `tls = true` and extended statistics, its
/// endpoint (which names the TLS port, `dot=`) and the CA it hands out.
fn start_dot(base: &Path) -> (DnsLab, String, String) {
    let settings = table("threads = 2\ntls = true\nextra = \"extended-statistics: yes\"");
    start_tls(unbound::target(&settings, base).unwrap())
}

/// Starts a lab whose resolver serves TLS, with 300 hosts; its endpoint
/// and the CA it hands out.
fn start_tls(mut lab: DnsLab) -> (DnsLab, String, String) {
    let zones = Dataset::DnsZones {
        hosts: 300,
        veth: false,
    };
    let ep = lab
        .start(&Placement::unconstrained(), Some(&zones), &Shutdown::new())
        .unwrap();
    let ca = ep.ca_pem.expect("a TLS lab hands out its CA");
    (lab, ep.uri, ca)
}

fn dot_settings(q: std::path::PathBuf, ca_pem: Option<String>) -> DnsSettings {
    DnsSettings {
        queries: QuerySource::File(q),
        names: None,
        max_outstanding: 20,
        max_rate: None,
        generator: Generator::Socket,
        transport: scalelab::load::dns::DnsTransport::Dot,
        ca_file: None,
        ca_pem,
        tls_verify: None,
        doh_method: Default::default(),
        doh_path: None,
    }
}

/// DNS over TLS (`transport = "dot"`, dnsperf's `-m dot`) against the
/// managed Unbound serving port 853 with its start's own certificate:
/// every query answered, Unbound's own counters agree that each came over
/// TLS (`num.query.tls`), and the handshake is in the trial's facts. The
/// key stays in the lab's directory and goes with it.
#[test]
fn dns_over_tls_is_counted_by_unbound_as_tls() {
    let base = tempfile::tempdir().unwrap();
    let (mut lab, uri, ca) = start_dot(base.path());
    assert!(uri.contains("&dot=127.0.0.1:853"), "{uri}");
    let key = lab.run_dir().unwrap().join("tls/server.key");
    assert!(key.exists(), "{}", key.display());
    let stat = |name: &str| unbound_stat(&lab, name).unwrap_or(0);
    let (queries, tls, tcp) = (
        stat("total.num.queries"),
        stat("num.query.tls"),
        stat("num.query.tcp"),
    );
    let text: String = (0..300).map(|i| format!("h{i}.bench.test A\n")).collect();
    let q = query_file(base.path(), &text);
    let spec = LoadSpec {
        connections: 3,
        ..exact(2500)
    };
    let d = every_query_answered(dot_settings(q, Some(ca)), &uri, &spec);
    assert_eq!(stat("total.num.queries") - queries, 2500);
    assert_eq!(
        stat("num.query.tls") - tls,
        2500,
        "every query came over TLS"
    );
    // Unbound counts TLS queries among its TCP ones too.
    assert_eq!(stat("num.query.tcp") - tcp, 2500);
    let t = d.tls.expect("a DoT run keeps its handshake");
    assert!(t.verified);
    assert!(t.negotiated.version.starts_with("TLSv1_"), "{t:?}");
    assert_eq!(d.transport, Some(scalelab::load::dns::DnsTransport::Dot));
    lab.stop().unwrap();
    assert!(!key.exists(), "the key went with the lab's directory");
}

/// A certificate that does not verify (another CA's) is an error before
/// any load, naming the server and the fix; no CA at all names the
/// settings to give.
#[test]
fn a_dot_certificate_that_does_not_verify_is_named_with_the_fix() {
    let base = tempfile::tempdir().unwrap();
    let (lab, uri, _ca) = start_dot(base.path());
    let other = scalelab::tls::cert::make(
        &base.path().join("other"),
        Default::default(),
        &["localhost"],
        &["127.0.0.1".parse().unwrap()],
    )
    .unwrap()
    .ca_pem;
    let q = query_file(base.path(), "h1.bench.test A\n");
    let err = DnsDriver::new(dot_settings(q.clone(), Some(other)), &uri)
        .unwrap()
        .run(&exact(10), &Shutdown::new())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("127.0.0.1:853")
            && err.contains("does not verify")
            && err.contains("--cacert"),
        "{err}"
    );
    let err = DnsDriver::new(dot_settings(q, None), &uri)
        .err()
        .expect("no CA is refused")
        .to_string();
    assert!(err.contains("tls_verify = false"), "{err}");
    drop(lab);
}

/// DNS over HTTPS (`transport = "doh"`, dnsperf's `-m doh`) against the
/// managed Unbound serving HTTP/2 on port 443: by POST and by GET, every
/// query answered, and Unbound's own counter of queries over HTTPS
/// (`num.query.https`) grew by exactly what scalelab sent.
#[test]
fn dns_over_https_is_counted_by_unbound_as_https_by_post_and_get() {
    use scalelab::load::dns::{DnsTransport, DohMethod};
    let base = tempfile::tempdir().unwrap();
    let (lab, uri, ca) = start_dot(base.path());
    assert!(uri.contains("&doh=127.0.0.1:443"), "{uri}");
    let stat = |name: &str| unbound_stat(&lab, name).unwrap_or(0);
    let text: String = (0..300).map(|i| format!("h{i}.bench.test A\n")).collect();
    let q = query_file(base.path(), &text);
    let spec = LoadSpec {
        connections: 3,
        ..exact(2500)
    };
    for method in [DohMethod::Post, DohMethod::Get] {
        let (queries, https) = (stat("total.num.queries"), stat("num.query.https"));
        let settings = DnsSettings {
            transport: DnsTransport::Doh,
            doh_method: method,
            max_outstanding: 200,
            ..dot_settings(q.clone(), Some(ca.clone()))
        };
        let d = every_query_answered(settings, &uri, &spec);
        assert_eq!(stat("total.num.queries") - queries, 2500, "{method:?}");
        assert_eq!(
            stat("num.query.https") - https,
            2500,
            "{method:?}: all over HTTPS"
        );
        assert_eq!(d.transport, Some(DnsTransport::Doh));
        let t = d.tls.expect("a DoH run keeps its handshake");
        assert_eq!(t.negotiated.alpn.as_deref(), Some("h2"), "{t:?}");
    }
    drop(lab);
}

/// A DoH path the server does not serve answers with a status other than
/// 200: no query is an answer, and the run's note says why.
#[test]
fn a_doh_path_the_server_does_not_serve_is_named_in_the_note() {
    let base = tempfile::tempdir().unwrap();
    let (lab, uri, ca) = start_dot(base.path());
    let q = query_file(base.path(), "h1.bench.test A\n");
    let settings = DnsSettings {
        transport: scalelab::load::dns::DnsTransport::Doh,
        doh_path: Some("/not-dns".into()),
        ..dot_settings(q, Some(ca))
    };
    let spec = LoadSpec {
        timeout: Duration::from_millis(500),
        ..exact(20)
    };
    let r = DnsDriver::new(settings, &uri)
        .unwrap()
        .run(&spec, &Shutdown::new())
        .unwrap();
    assert_eq!(r.requests, 0);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("20 responses had a status other than 200")),
        "{:?}",
        r.notes
    );
    drop(lab);
}

/// resperf's ramp over each stream transport (TCP, DoT, DoH) against one
/// Unbound: the offered rate rises second by second, nothing is lost at
/// these rates, and Unbound's counter for the transport grew by exactly
/// the queries the ramp sent.
#[test]
fn a_ramp_runs_over_tcp_dot_and_doh_and_unbound_counts_each() {
    use scalelab::load::dns::DnsTransport;
    let base = tempfile::tempdir().unwrap();
    let (lab, uri, ca) = start_dot(base.path());
    let stat = |name: &str| unbound_stat(&lab, name).unwrap_or(0);
    let text: String = (0..300).map(|i| format!("h{i}.bench.test A\n")).collect();
    let q = query_file(base.path(), &text);
    let spec = LoadSpec {
        timeout: Duration::from_secs(1),
        ..LoadSpec::closed(2, 1, Duration::from_secs(3))
    };
    for (transport, counter) in [
        (DnsTransport::Tcp, "num.query.tcp"),
        (DnsTransport::Dot, "num.query.tls"),
        (DnsTransport::Doh, "num.query.https"),
    ] {
        let before = stat(counter);
        let settings = DnsSettings {
            transport,
            max_rate: Some(3000.0),
            max_outstanding: 200,
            ca_pem: transport.is_tls().then(|| ca.clone()),
            ..dot_settings(q.clone(), None)
        };
        let r = DnsDriver::new(settings, &uri)
            .unwrap()
            .run(&spec, &Shutdown::new())
            .unwrap();
        let d = r.extras.get::<Datagrams>().cloned().unwrap();
        assert!((4400..=4500).contains(&d.sent), "{transport:?}: {}", d.sent);
        assert_eq!(
            (r.requests, d.lost),
            (d.sent, 0),
            "{transport:?}: {:?}",
            r.notes
        );
        let ramp = d.ramp.expect("a ramp's seconds");
        let offered: Vec<u64> = ramp.seconds.iter().map(|s| s.offered).collect();
        assert!(
            offered[0] < offered[1] && offered[1] < offered[2],
            "{offered:?}"
        );
        assert_eq!(stat(counter) - before, d.sent, "{transport:?}: {counter}");
    }
    drop(lab);
}

/// One of NSD's counters, from `nsd-control stats_noreset` on the lab's
/// control socket.
fn nsd_stat(lab: &DnsLab, name: &str) -> Option<u64> {
    let conf = lab.run_dir().unwrap().join("nsd.conf");
    let out = std::process::Command::new("nsd-control")
        .arg("-c")
        .arg(conf)
        .arg("stats_noreset")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .map(|v| v.parse().unwrap())
}

/// NSD with `tls = true` serves DNS over TLS on port 853 of its address,
/// with its start's own certificate: every query answered, and NSD's own
/// `num.tls` grew by exactly what scalelab sent, none of it over UDP.
#[test]
fn nsd_serves_dns_over_tls_and_counts_every_query_as_tls() {
    let base = tempfile::tempdir().unwrap();
    let mut lab = nsd::target(&table("tls = true"), base.path()).unwrap();
    let zones = Dataset::DnsZones {
        hosts: 300,
        veth: false,
    };
    let ep = lab
        .start(&Placement::unconstrained(), Some(&zones), &Shutdown::new())
        .unwrap();
    assert!(ep.uri.contains("&dot=127.0.0.2:853"), "{}", ep.uri);
    let stat = |name: &str| nsd_stat(&lab, name).expect(name);
    let (tls, udp) = (stat("num.tls"), stat("num.udp"));
    let text: String = (0..300).map(|i| format!("h{i}.bench.test A\n")).collect();
    let q = query_file(base.path(), &text);
    let spec = LoadSpec {
        connections: 3,
        ..exact(2000)
    };
    let d = every_query_answered(dot_settings(q, ep.ca_pem), &ep.uri, &spec);
    assert_eq!(stat("num.tls") - tls, 2000, "every query came over TLS");
    assert_eq!(stat("num.udp"), udp, "none over UDP");
    assert!(d.tls.expect("a DoT run keeps its handshake").verified);
    lab.stop().unwrap();
}

/// BIND's counters: `GET /json/v1/server` on its statistics channel,
/// inside the lab's namespace.
fn bind_stats(lab: &DnsLab) -> serde_json::Value {
    use std::io::{Read, Write};
    let text = scalelab::procfs::netns::in_netns(&ns_of(lab), || {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", bind::STATS_PORT)).unwrap();
        s.write_all(b"GET /json/v1/server HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        Ok(text)
    })
    .unwrap();
    let body = text.split_once("\r\n\r\n").expect("an HTTP response").1;
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// The growth of each of BIND's server and socket counters from `before`.
fn bind_growth(before: &serde_json::Value, after: &serde_json::Value) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for table in ["nsstats", "sockstats"] {
        let Some(now) = after[table].as_object() else {
            continue;
        };
        for (name, v) in now {
            let was = before[table][name].as_u64().unwrap_or(0);
            let grew = v.as_u64().unwrap_or(0).saturating_sub(was);
            if grew > 0 {
                out.push((format!("{table}.{name}"), grew));
            }
        }
    }
    out
}

/// BIND with `tls = true` serves DNS over TLS on port 853 and DNS over
/// HTTPS on 443 with its start's own certificate (BIND 9.18's `tls` and
/// `http` statements): every query is answered, and BIND's own counters
/// on its statistics channel agree with the number sent. BIND 9.18
/// counts DoT and DoH queries as TCP requests (`ReqTCP`), with no counter
/// of their own, so which listener answered is the handshake's: TLS for
/// both, and ALPN `h2` for DoH.
#[test]
fn bind_serves_dns_over_tls_and_https_and_counts_each() {
    use scalelab::load::dns::DnsTransport;
    let base = tempfile::tempdir().unwrap();
    let (lab, uri, ca) =
        start_tls(bind::target(&table("threads = 2\ntls = true"), base.path()).unwrap());
    assert!(
        uri.contains("&dot=127.0.0.1:853") && uri.contains("&doh=127.0.0.1:443"),
        "{uri}"
    );
    let text: String = (0..300).map(|i| format!("h{i}.bench.test A\n")).collect();
    let q = query_file(base.path(), &text);
    let spec = LoadSpec {
        connections: 3,
        ..exact(2000)
    };
    for transport in [DnsTransport::Tcp, DnsTransport::Dot, DnsTransport::Doh] {
        let before = bind_stats(&lab);
        let settings = DnsSettings {
            transport,
            max_outstanding: 100,
            ..dot_settings(q.clone(), Some(ca.clone()))
        };
        let d = every_query_answered(settings, &uri, &spec);
        let grew = bind_growth(&before, &bind_stats(&lab));
        let count = |name: &str| grew.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v);
        assert_eq!(count("nsstats.Requestv4"), 2000, "{transport:?}: {grew:?}");
        assert_eq!(count("nsstats.ReqTCP"), 2000, "{transport:?}: all over TCP");
        assert_eq!(count("nsstats.Response"), 2000, "{transport:?}: {grew:?}");
        assert_eq!(d.transport, Some(transport));
        match transport {
            DnsTransport::Tcp => assert!(d.tls.is_none()),
            DnsTransport::Dot => assert!(d.tls.is_some(), "a DoT run keeps its handshake"),
            _ => {
                let t = d.tls.expect("a DoH run keeps its handshake");
                assert_eq!(t.negotiated.alpn.as_deref(), Some("h2"), "{t:?}");
            }
        }
    }
    drop(lab);
}
