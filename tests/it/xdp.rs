//! The DNS generator over AF_XDP against the real Unbound (NSD behind
//! it): a client namespace joined to the lab's by a veth, the answers
//! counted equal to Unbound's own count, and no XDP program left on the
//! interface after a run, nor after `kill -9` of one. The lab's own veth
//! path, which a workload asking for xdp gets, from the API and from a
//! recipe; and `load forward --sink` into a sink namespace, counted by
//! the interface.

use crate::dns::unbound_queries;
use crate::support::run::wait_for;
use crate::support::scalelab;
use scalelab::load::dns::{DnsDriver, DnsSettings, Generator, QuerySource};
use scalelab::load::{Driver, LoadSpec, Pacing};
use scalelab::model::Dataset;
use scalelab::placement::Placement;
use scalelab::server::dns::{bind, nsd, unbound, DnsLab};
use scalelab::server::Server;
use scalelab::shutdown::Shutdown;
use scalelab::sys::netns::Netns;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The lab's side of the veth.
const SERVER: &str = "198.18.42.2";

fn ip(args: &[&str]) -> String {
    let out = Command::new("ip").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A lab and the client namespace joined to it.
struct Rig {
    lab: DnsLab,
    client: Netns,
    /// The client's side of the veth.
    ifname: String,
}

/// Unbound's lab, also listening at [`SERVER`] (bound before the address
/// exists, `ip-transparent`), and a client namespace joined to it by a
/// veth.
fn rig(base: &Path) -> Rig {
    let extra = format!(
        "extra = \"interface: {SERVER}@53\\n  ip-transparent: yes\\n  \
         access-control: 198.18.42.0/24 allow\""
    );
    let mut lab = unbound::target(&extra.parse::<toml::Table>().unwrap(), base).unwrap();
    let zones = Dataset::DnsZones {
        hosts: 100,
        veth: false,
    };
    lab.start(&Placement::unconstrained(), Some(&zones), &Shutdown::new())
        .unwrap();
    let ns = lab.netns().unwrap().name().to_string();
    let client = Netns::create("xdpc").unwrap();
    let pid = std::process::id();
    let (ifname, peer) = (format!("xc{pid}"), format!("xl{pid}"));
    let c = client.name();
    ip(&[
        "link", "add", &ifname, "netns", c, "type", "veth", "peer", "name", &peer, "netns", &ns,
    ]);
    ip(&["-n", c, "addr", "add", "198.18.42.1/24", "dev", &ifname]);
    ip(&[
        "-n",
        &ns,
        "addr",
        "add",
        &format!("{SERVER}/24"),
        "dev",
        &peer,
    ]);
    ip(&["-n", c, "link", "set", &ifname, "up"]);
    ip(&["-n", &ns, "link", "set", &peer, "up"]);
    Rig {
        lab,
        client,
        ifname,
    }
}

impl Rig {
    /// Whether the client's interface has an XDP program attached.
    fn has_xdp(&self) -> bool {
        let j = ip(&["-n", self.client.name(), "-j", "link", "show", &self.ifname]);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        v[0].get("xdp").is_some()
    }
}

fn query_file(dir: &Path) -> PathBuf {
    let p = dir.join("queries.txt");
    let text: String = (0..100).map(|i| format!("h{i}.bench.test A\n")).collect();
    std::fs::write(&p, text).unwrap();
    p
}

/// The run's datagram counts, after checking it went out over XDP.
fn sent_by_xdp(r: &scalelab::load::LoadResult) -> scalelab::load::dns::facts::Datagrams {
    assert!(
        r.notes.iter().any(|n| n.starts_with("generator xdp:")),
        "{:?}",
        r.notes
    );
    r.extras
        .get::<scalelab::load::dns::facts::Datagrams>()
        .cloned()
        .unwrap()
}

#[test]
fn xdp_answers_agree_with_unbound_and_no_program_is_left_attached() {
    let base = tempfile::tempdir().unwrap();
    let rig = rig(base.path());
    let settings = DnsSettings {
        queries: QuerySource::File(query_file(base.path())),
        names: None,
        max_outstanding: 100,
        max_rate: None,
        generator: Generator::Xdp,
        transport: Default::default(),
        ca_file: None,
        ca_pem: None,
        tls_verify: None,
        doh_method: Default::default(),
        doh_path: None,
    };
    let uri = format!("dns://{SERVER}:53?netns={}", rig.client.name());
    let driver = DnsDriver::new(settings, &uri).unwrap();
    let spec = LoadSpec {
        pacing: Pacing::Open { rate: 2000.0 },
        max_requests: Some(4000),
        ..LoadSpec::closed(2, 1, Duration::from_secs(4))
    };
    let before = unbound_queries(&rig.lab);
    let r = driver.run(&spec, &Shutdown::new()).unwrap();
    let d = sent_by_xdp(&r);
    assert_eq!(
        (d.sent, r.requests, d.lost, d.mismatched),
        (4000, 4000, 0, 0)
    );
    assert_eq!(
        unbound_queries(&rig.lab) - before,
        r.requests,
        "unbound counted what we sent"
    );
    let l = r.latency_summary();
    assert!(
        l.p50.0 > 0 && l.p99 >= l.p50,
        "latency percentiles as over sockets: {l:?}"
    );
    assert!(
        !rig.has_xdp(),
        "the run left an XDP program on {}",
        rig.ifname
    );
}

#[test]
fn kill_9_of_an_xdp_run_leaves_no_program_attached() {
    let base = tempfile::tempdir().unwrap();
    let rig = rig(base.path());
    let q = query_file(base.path());
    // `ip netns exec` execs scalelab: the child's PID is scalelab's.
    let mut child = Command::new("ip")
        .args(["netns", "exec", rig.client.name()])
        .arg(scalelab().get_program())
        .args(["load", "dns", &format!("{SERVER}:53"), "--generator", "xdp"])
        .args(["-Q", "1000", "-d", "60s", "--queries"])
        .arg(&q)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for(10, || rig.has_xdp()),
        "the run never attached its program"
    );
    scalelab::sys::process::signal(child.id(), libc::SIGKILL);
    let _ = child.wait();
    assert!(
        wait_for(5, || !rig.has_xdp()),
        "kill -9 left an XDP program on {}",
        rig.ifname
    );
}

#[test]
fn auto_takes_sockets_on_the_labs_loopback_and_xdp_through_the_veth() {
    let base = tempfile::tempdir().unwrap();
    let rig = rig(base.path());
    let q = query_file(base.path());
    let run = |uri: &str| {
        let settings = DnsSettings {
            queries: QuerySource::File(q.clone()),
            names: None,
            max_outstanding: 20,
            max_rate: None,
            generator: Generator::Auto,
            transport: Default::default(),
            ca_file: None,
            ca_pem: None,
            tls_verify: None,
            doh_method: Default::default(),
            doh_path: None,
        };
        let spec = LoadSpec {
            max_requests: Some(500),
            ..LoadSpec::closed(1, 1, Duration::from_secs(10))
        };
        let r = DnsDriver::new(settings, uri)
            .unwrap()
            .run(&spec, &Shutdown::new())
            .unwrap();
        assert_eq!(r.requests, 500, "{uri}");
        r.notes
    };
    let lab_ns = rig.lab.netns().unwrap().name().to_string();
    let on_lo = run(&format!("dns://127.0.0.1:53?netns={lab_ns}"));
    assert!(on_lo.iter().all(|n| !n.contains("generator")), "{on_lo:?}");
    let through_veth = run(&format!("dns://{SERVER}:53?netns={}", rig.client.name()));
    assert!(
        through_veth.iter().any(|n| n.starts_with("generator xdp:")),
        "{through_veth:?}"
    );
}

/// Whether interface `ifname` in namespace `ns` has an XDP program.
fn has_xdp_in(ns: &str, ifname: &str) -> bool {
    let j = ip(&["-n", ns, "-j", "link", "show", ifname]);
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    v[0].get("xdp").is_some()
}

#[test]
fn a_workload_asking_for_xdp_gets_the_labs_veth_path_and_unbound_counts_every_answer() {
    let base = tempfile::tempdir().unwrap();
    let q = query_file(base.path());
    let settings = |generator: &str| {
        let t: toml::Table = format!(
            "queries = \"{}\"\nnames = 100\ngenerator = \"{generator}\"",
            q.display()
        )
        .parse()
        .unwrap();
        DnsSettings::parse(&t).unwrap()
    };
    let xdp = settings("xdp");
    let mut lab = unbound::target(&toml::Table::new(), base.path()).unwrap();
    let ep = lab
        .start(
            &Placement::unconstrained(),
            Some(&xdp.dataset()),
            &Shutdown::new(),
        )
        .unwrap();
    let client = lab.client_netns().expect("a veth path").name().to_string();
    assert!(ep.uri.contains("&veth="), "{}", ep.uri);
    let spec = LoadSpec {
        pacing: Pacing::Open { rate: 2000.0 },
        max_requests: Some(4000),
        ..LoadSpec::closed(2, 1, Duration::from_secs(4))
    };
    let before = unbound_queries(&lab);
    let r = DnsDriver::new(xdp, &ep.uri)
        .unwrap()
        .run(&spec, &Shutdown::new())
        .unwrap();
    let d = sent_by_xdp(&r);
    assert_eq!((d.sent, r.requests, d.lost), (4000, 4000, 0));
    assert_eq!(unbound_queries(&lab) - before, r.requests);
    assert!(!has_xdp_in(&client, "cli0"), "the run left its program");
    // The same lab still serves loopback runs as before.
    let spec = LoadSpec {
        max_requests: Some(500),
        ..LoadSpec::closed(1, 1, Duration::from_secs(10))
    };
    let r = DnsDriver::new(settings("socket"), &ep.uri)
        .unwrap()
        .run(&spec, &Shutdown::new())
        .unwrap();
    assert_eq!(r.requests, 500);
    assert!(
        r.notes.iter().all(|n| !n.contains("generator")),
        "{:?}",
        r.notes
    );
    lab.stop().unwrap();
    assert!(
        !scalelab::sys::netns::exists(&client),
        "stopping the lab left its client namespace {client}"
    );
}

#[test]
fn nsd_and_bind_labs_answer_over_their_veth_path_too() {
    let base = tempfile::tempdir().unwrap();
    let q = query_file(base.path());
    let t = toml::Table::new();
    let labs = [
        nsd::target(&t, base.path()).unwrap(),
        bind::target(&t, base.path()).unwrap(),
    ];
    for mut lab in labs {
        let zones = Dataset::DnsZones {
            hosts: 100,
            veth: true,
        };
        let ep = lab
            .start(&Placement::unconstrained(), Some(&zones), &Shutdown::new())
            .unwrap();
        let settings = DnsSettings {
            queries: QuerySource::File(q.clone()),
            names: None,
            max_outstanding: 20,
            max_rate: None,
            generator: Generator::Xdp,
            transport: Default::default(),
            ca_file: None,
            ca_pem: None,
            tls_verify: None,
            doh_method: Default::default(),
            doh_path: None,
        };
        let spec = LoadSpec {
            max_requests: Some(500),
            ..LoadSpec::closed(1, 1, Duration::from_secs(10))
        };
        let r = DnsDriver::new(settings, &ep.uri)
            .unwrap()
            .run(&spec, &Shutdown::new())
            .unwrap();
        let d = sent_by_xdp(&r);
        assert_eq!((d.sent, r.requests, d.lost), (500, 500, 0), "{}", ep.uri);
    }
}

#[test]
fn a_recipe_with_generator_xdp_runs_its_trials_through_the_veth() {
    use scalelab::store::TrialStatus;
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = crate::support::run::run_recipe(
        dir.path(),
        "name = \"dns-xdp\"\n[server]\nkind = \"nsd\"\n\
         [load]\nkind = \"dns\"\ngenerator = \"xdp\"\nqueries = { names = 200, count = 2000 }\n\
         rate = 2000\ntimeout = \"500ms\"\n\
         [sweep]\nconnections = [4]\n\
         [trials]\nduration = \"2s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
        &[],
        None,
    );
    assert_eq!(data.trials.len(), 1);
    let t = &data.trials[0];
    assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
    let text = format!("{t:?}");
    assert!(text.contains("generator xdp:"), "no xdp note in {text}");
    assert!(
        text.contains("reached over a veth"),
        "no veth dataset in {text}"
    );
}

/// A sink: namespace G joined by a veth to S, whose end has no address
/// (S drops every frame), G's neighbour entry for it permanent and IPv6
/// off in G, so the kernel sends nothing of its own on G's end.
struct Sink {
    g: Netns,
    _s: Netns,
}

fn sink() -> Sink {
    let (g, s) = (
        Netns::create("sinkg").unwrap(),
        Netns::create("sinks").unwrap(),
    );
    let (gn, sn) = (g.name(), s.name());
    ip(&[
        "-n", gn, "link", "add", "g0", "type", "veth", "peer", "name", "s0", "netns", sn,
    ]);
    ip(&["-n", gn, "addr", "add", "198.18.47.1/24", "dev", "g0"]);
    ip(&["-n", gn, "link", "set", "g0", "addrgenmode", "none"]);
    ip(&["-n", gn, "link", "set", "g0", "up"]);
    ip(&["-n", sn, "link", "set", "s0", "up"]);
    let j = ip(&["-n", sn, "-j", "link", "show", "s0"]);
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    let mac = v[0]["address"].as_str().unwrap().to_string();
    ip(&[
        "-n",
        gn,
        "neigh",
        "replace",
        "198.18.47.2",
        "lladdr",
        &mac,
        "dev",
        "g0",
        "nud",
        "permanent",
    ]);
    Sink { g, _s: s }
}

#[test]
fn forward_into_a_sink_sends_what_the_interface_counts() {
    let s = sink();
    for generator in ["xdp", "packet_ring"] {
        let out = Command::new("ip")
            .args(["netns", "exec", s.g.name()])
            .arg(scalelab().get_program())
            .args([
                "load",
                "forward",
                "--sink",
                "198.18.47.2",
                "--generator",
                generator,
            ])
            .args(["-R", "20000", "-d", "500ms", "--json"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            crate::support::stderr(&out)
        );
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(j["interface"], "g0");
        assert_eq!(j["sent"], 10000, "{generator}: {j}");
        assert_eq!(
            j["tx_packets"].as_u64().unwrap() + j["tx_dropped"].as_u64().unwrap(),
            10000,
            "{generator}: the interface counted every frame: {j}"
        );
        assert_eq!(j["reconciled"], true, "{j}");
        assert!(!has_xdp_in(s.g.name(), "g0"));
    }
}

#[test]
fn forward_into_a_sink_only_from_a_private_namespace_and_the_benchmark_range() {
    let out = scalelab()
        .args(["load", "forward", "--sink", "198.18.47.2", "-d", "500ms"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = crate::support::stderr(&out);
    assert!(e.contains("private network namespace"), "{e}");
    let s = sink();
    let out = Command::new("ip")
        .args(["netns", "exec", s.g.name()])
        .arg(scalelab().get_program())
        .args(["load", "forward", "--sink", "10.1.2.3", "-d", "500ms"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = crate::support::stderr(&out);
    assert!(e.contains("198.18.0.0/15"), "{e}");
}

/// Issue 46 item 4.2: kxdpgun leaves its XDP program on the interface, and
/// the xdp generator then failed with "Device or resource busy (os error
/// 16)", said three times. Now the error names the program (as `ip`
/// reports it) and the command that detaches it, once; after that command
/// the generator attaches again.
#[test]
fn an_xdp_program_left_attached_is_named_with_the_command_that_detaches_it() {
    let s = sink();
    let dir = tempfile::tempdir().unwrap();
    let kq = dir.path().join("kxdpgun.txt");
    std::fs::write(&kq, "h1.bench.test A\n").unwrap();
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            s.g.name(),
            "kxdpgun",
            "-t",
            "1",
            "-Q",
            "100",
        ])
        .arg("-i")
        .arg(&kq)
        .arg("198.18.47.2")
        .output()
        .unwrap();
    assert!(out.status.success(), "kxdpgun: {out:?}");
    let j = ip(&["-n", s.g.name(), "-d", "-j", "link", "show", "g0"]);
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    let queries = query_file(dir.path());
    let run = || {
        Command::new("ip")
            .args(["netns", "exec", s.g.name()])
            .arg(scalelab().get_program())
            .args(["load", "dns", "198.18.47.2:53", "--generator", "xdp"])
            .arg("--queries")
            .arg(&queries)
            .args(["-Q", "1000", "-d", "300ms", "--timeout", "300ms"])
            .output()
            .unwrap()
    };
    // kxdpgun 3.2.6 left its program on the kernels this test was written
    // on; on this project's VM of 2026-12-06 (Linux 6.18.44) it detached
    // it on exit. Where it is left, the generator names it once.
    if let Some(id) = v[0]["xdp"]["prog"]["id"].as_u64() {
        let name = v[0]["xdp"]["prog"]["name"].as_str().unwrap().to_string();
        let out = run();
        let e = crate::support::stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{e}");
        assert!(
            e.contains(&format!("XDP program `{name}` (id {id}) attached")),
            "{e}"
        );
        assert!(e.contains("`ip link set dev g0 xdp off`"), "{e}");
        assert_eq!(e.matches("already has").count(), 1, "said once: {e}");
        assert!(!e.contains("os error 16"), "{e}");
        ip(&["-n", s.g.name(), "link", "set", "dev", "g0", "xdp", "off"]);
    } else {
        eprintln!("kxdpgun detached its program on this kernel: only the clean attach is checked");
    }
    let out = run();
    let e = crate::support::stderr(&out);
    // The sink never answers: nothing measured, but the program attached.
    assert_eq!(out.status.code(), Some(4), "{e}");
    assert!(e.contains("answered none of"), "{e}");
    assert!(!has_xdp_in(s.g.name(), "g0"), "ours went with the run");
}

/// Issue 46 item 4.3: a paced DNS run whose query IDs all wait for
/// answers that never come can ask no more, and fell behind without a
/// word (8 clients' IDs for 1 s capped -Q 3000000 at 523,776 qps). Into a
/// sink that never answers, both generators now say so, with the fix, in
/// the text and in --json; a rate the IDs allow says nothing of them.
#[test]
fn a_rate_capped_by_query_ids_in_flight_says_so_with_the_fix() {
    let s = sink();
    let dir = tempfile::tempdir().unwrap();
    let queries = query_file(dir.path());
    let run = |generator: &str, rate: &str| {
        let out = Command::new("ip")
            .args(["netns", "exec", s.g.name()])
            .arg(scalelab().get_program())
            .args(["load", "dns", "198.18.47.2:53", "--generator", generator])
            .arg("--queries")
            .arg(&queries)
            .args([
                "-c",
                "1",
                "--timeout",
                "1s",
                "-Q",
                rate,
                "-d",
                "2s",
                "--json",
            ])
            .output()
            .unwrap();
        let e = crate::support::stderr(&out);
        assert_eq!(out.status.code(), Some(4), "nothing answers: {e}");
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (j, e)
    };
    for generator in ["xdp", "socket"] {
        let (j, e) = run(generator, "200000");
        let ids = &j["ids_ran_out"];
        assert_eq!(ids["ids"], 65472, "{generator}: {j}");
        assert_eq!(ids["clients"], 1, "{j}");
        assert_eq!(ids["max_rate"], 65472.0, "{j}");
        assert!(ids["fix"].as_str().unwrap().contains("add clients"), "{j}");
        // Each ID is reused at most once a timeout: two rounds in 2 s, and
        // at most the first IDs of a third where a loaded generator reads
        // the window's end a few ms late, when they are due again (131008
        // sent, 64 of a third round, once in a full suite).
        let sent = j["sent"].as_u64().unwrap();
        assert!(
            (65472..=2 * 65472 + 65472 / 100).contains(&sent),
            "{generator}: sent {sent}"
        );
        assert!(
            e.contains("all 65472 query IDs of its 1 client(s) were in flight"),
            "{generator}: {e}"
        );
        assert!(e.contains("add clients (-c"), "{e}");
        assert!(e.contains("shorten the timeout (--timeout)"), "{e}");
        assert!(
            j["fell_behind"].as_str().unwrap().contains("query IDs"),
            "{j}"
        );
    }
    let (j, e) = run("socket", "2000");
    assert!(j["ids_ran_out"].is_null(), "{j}");
    assert!(!e.contains("query IDs"), "{e}");
}
