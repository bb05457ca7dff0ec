//! The DNS lab against the real NSD, Unbound and BIND: each starts inside a
//! private namespace holding only `lo`, answers for the lab's zones,
//! refuses or fails everything else, and leaves nothing behind; the
//! generator's counts agree with Unbound's own statistics.

use hickory_proto::op::ResponseCode;
use hickory_proto::rr::RecordType;
use scalelab::load::dns::{DnsDriver, DnsSettings, QuerySource};
use scalelab::load::{Driver, LoadSpec};
use scalelab::netns;
use scalelab::placement::Placement;
use scalelab::shutdown::Shutdown;
use scalelab::target::dns::{ask::ask, bind, nsd, unbound, DnsLab};
use scalelab::target::process::is_alive;
use scalelab::target::Target;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

fn table(text: &str) -> toml::Table {
    toml::from_str(text).unwrap()
}

fn start(mut lab: DnsLab) -> (DnsLab, String) {
    let ep = lab
        .start(&Placement::unconstrained(), &Shutdown::new())
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
        max_outstanding: 20,
        max_rate: None,
    };
    DnsDriver::new(settings, uri).unwrap()
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
    let names: Vec<&str> = ifs.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, vec!["lo"], "the lab holds only lo");
    assert!(ifs[0].tx_packets > 0, "the lab's traffic went over lo");
}

#[test]
fn nsd_serves_the_lab_zones_and_nothing_leaves() {
    let base = tempfile::tempdir().unwrap();
    let (mut lab, uri) = start(nsd::target(&table("names = 500"), base.path()).unwrap());
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
    let d = r.datagrams.clone().unwrap();
    assert_eq!((d.sent, r.requests, d.lost), (3000, 3000, 0));
    assert_eq!(d.codes["NOERROR"], 2000);
    assert_eq!(d.codes["NXDOMAIN"], 1000);
    assert_only_lo(&lab);
    assert!(lab.version().unwrap().contains("NSD"));
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
fn unbound_queries(lab: &DnsLab) -> u64 {
    let conf = lab.run_dir().unwrap().join("unbound.conf");
    let out = std::process::Command::new("unbound-control")
        .arg("-c")
        .arg(conf)
        .arg("stats_noreset")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("total.num.queries="))
        .unwrap_or_else(|| panic!("no total.num.queries in {text}"))
        .parse()
        .unwrap()
}

#[test]
fn unbound_resolves_the_lab_refuses_the_world_and_counts_agree() {
    let base = tempfile::tempdir().unwrap();
    let (lab, uri) =
        start(unbound::target(&table("names = 300\nthreads = 2"), base.path()).unwrap());
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
    let text: String = (0..300).map(|i| format!("h{i}.bench.test A\n")).collect();
    let q = query_file(base.path(), &text);
    let r = driver(&uri, &q)
        .run(&exact(2500), &Shutdown::new())
        .unwrap();
    let d = r.datagrams.clone().unwrap();
    assert_eq!((d.sent, r.requests, d.lost), (2500, 2500, 0));
    assert_eq!(
        unbound_queries(&lab) - before,
        r.requests,
        "unbound counted what we sent"
    );
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
    let (lab, _uri) = start(bind::target(&table("names = 100\nthreads = 2"), base.path()).unwrap());
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
        .start(&Placement::unconstrained(), &Shutdown::new())
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
