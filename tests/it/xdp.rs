//! The DNS generator over AF_XDP against the real Unbound (NSD behind
//! it): a client namespace joined to the lab's by a veth, the answers
//! counted equal to Unbound's own count, and no XDP program left on the
//! interface after a run, nor after `kill -9` of one.

use crate::dns::unbound_queries;
use crate::support::run::wait_for;
use crate::support::scalelab;
use scalelab::load::dns::{DnsDriver, DnsSettings, Generator, QuerySource};
use scalelab::load::{Driver, LoadSpec, Pacing};
use scalelab::model::Dataset;
use scalelab::placement::Placement;
use scalelab::server::dns::{unbound, DnsLab};
use scalelab::server::Target;
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
    let zones = Dataset::DnsZones { hosts: 100 };
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
    let d = r
        .extras
        .get::<scalelab::load::dns::facts::Datagrams>()
        .cloned()
        .unwrap();
    assert!(
        r.notes.iter().any(|n| n.starts_with("generator xdp:")),
        "{:?}",
        r.notes
    );
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
