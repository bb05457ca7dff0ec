//! The router lab and the forwarding generator against the kernel's own
//! counters, with real namespaces, veths and nftables: reconciliation,
//! clean-up after every way a run can end, and the errors for bad input.

use crate::support::{scalelab, stderr, stdout};
use scalelab::load::forward::trial::{self, TrialPlan};
use scalelab::load::forward::tx::Generator;
use scalelab::load::forward::{frame::FrameSize, ForwardDriver, ForwardSettings};
use scalelab::load::{LoadSpec, Pacing};
use scalelab::model::topology::Topology;
use scalelab::placement::Placement;
use scalelab::server::router::{lab, Router};
use scalelab::server::Server;
use scalelab::shutdown::Shutdown;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn router(settings: &str) -> Router {
    Router::new(&settings.parse::<toml::Table>().unwrap()).unwrap()
}

fn started(r: &mut Router) -> Topology {
    let endpoint = r
        .start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap();
    Topology::parse(&endpoint.uri).unwrap()
}

fn plan(t: &Topology, rate: Option<f64>, bidirectional: bool) -> TrialPlan {
    plan_with(t, rate, bidirectional, Generator::default())
}

fn plan_with(t: &Topology, rate: Option<f64>, bidirectional: bool, g: Generator) -> TrialPlan {
    TrialPlan {
        topology: t.clone(),
        frame: FrameSize(64),
        bidirectional,
        rate,
        duration: Duration::from_millis(400),
        cpus: None,
        generator: g,
    }
}

fn ns_exists(name: &str) -> bool {
    Path::new("/run/netns").join(name).exists()
}

/// Lab namespaces owned by `pid`.
fn labs_of(pid: u32) -> Vec<String> {
    std::fs::read_dir("/run/netns")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| lab::owner_pid(n) == Some(pid))
                .collect()
        })
        .unwrap_or_default()
}

fn nft(ns: &str, rule: &str) {
    let ok = Command::new("ip")
        .args(["netns", "exec", ns, "nft"])
        .args(rule.split(' '))
        .status()
        .unwrap()
        .success();
    assert!(ok, "nft {rule}");
}

/// Packets counted by R's `numgen ... counter drop` rule.
fn nft_drops(ns: &str) -> u64 {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "list", "ruleset"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text.lines().find(|l| l.contains("numgen")).unwrap();
    let after = line.split("packets ").nth(1).unwrap();
    after.split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn lab_exists_while_started_and_is_gone_after_stop() {
    let mut r = router("");
    let t = started(&mut r);
    assert!(r.is_running());
    for ns in t.namespaces() {
        assert!(ns_exists(ns), "{ns} exists while the router runs");
    }
    r.stop().unwrap();
    assert!(!r.is_running());
    for ns in t.namespaces() {
        assert!(!ns_exists(ns), "{ns} is removed by stop");
    }
    r.stop().unwrap();
}

#[test]
fn dropping_the_router_removes_the_lab() {
    let t = {
        let mut r = router("firewall = \"small\"");
        started(&mut r)
    };
    for ns in t.namespaces() {
        assert!(!ns_exists(ns), "{ns} removed on drop");
    }
}

#[test]
fn bidirectional_trial_agrees_with_every_kernel_counter() {
    let mut r = router("");
    let t = started(&mut r);
    for g in Generator::ALL {
        bidirectional_trial_reconciles(&t, g);
    }
}

fn bidirectional_trial_reconciles(t: &Topology, g: Generator) {
    let rep = trial::run(&plan_with(t, Some(10_000.0), true, g), &Shutdown::new()).unwrap();
    assert_eq!(rep.directions.len(), 2, "{g:?}");
    // A busy machine may drop frames even at this rate; whatever it drops,
    // the generator's figures must be the kernel's.
    for d in &rep.directions {
        assert!(d.sent > 1_500, "{g:?} {} sent {}", d.name, d.sent);
        assert_eq!(
            d.sent, d.sent_kernel,
            "{g:?} {}: generator vs sending interface",
            d.name
        );
        assert_eq!(
            d.received_socket, d.received_kernel,
            "{}: socket vs interface",
            d.name
        );
        assert_eq!(d.lost, d.lost_kernel, "{}", d.name);
        assert_eq!(d.lost, d.sent - d.received_kernel, "{}", d.name);
        assert_eq!((d.duplicates, d.reordered), (0, 0), "{g:?} {}", d.name);
    }
    let k = &rep.kernel;
    let link = |c: &scalelab::probe::netns::NsCounters, i: &str| c.link(i).unwrap().clone();
    let (a0, b0, r0, r1) = (
        link(&k.a, "a0"),
        link(&k.b, "b0"),
        link(&k.r, "r0"),
        link(&k.r, "r1"),
    );
    assert_eq!(k.r.ip.in_discards, 0);
    assert_eq!(
        rep.forwarded,
        r0.rx_packets + r1.rx_packets,
        "R forwarded all it took in"
    );
    assert_eq!(r0.rx_packets, a0.tx_packets);
    assert_eq!(r1.rx_packets, b0.tx_packets);
    let to_b = &rep.directions[0];
    assert_eq!(
        k.b.udp.in_datagrams + k.b.udp.rcvbuf_errors,
        to_b.received_kernel
    );
    assert!(rep.reconciled);
    assert_eq!(rep.latency.as_ref().unwrap().len(), rep.received);
}

#[test]
fn loss_reported_is_the_loss_the_kernel_saw() {
    let mut r = router("firewall = \"small\"");
    let t = started(&mut r);
    // R drops every 10th forwarded packet in its firewall.
    nft(
        &t.r.netns,
        "insert rule inet scalelab forward numgen inc mod 10 0 counter drop",
    );
    let rep = trial::run(&plan(&t, Some(20_000.0), false), &Shutdown::new()).unwrap();
    let d = &rep.directions[0];
    assert!(d.sent > 3_000);
    assert_eq!(d.sent, d.sent_kernel);
    assert_eq!(d.lost, d.lost_kernel);
    let k = &rep.kernel;
    let queue_drops = k.a.link("a0").unwrap().tx_dropped + k.r.link("r1").unwrap().tx_dropped;
    let dropped = nft_drops(&t.r.netns);
    assert_eq!(
        d.lost,
        dropped + queue_drops,
        "lost = R's firewall drops + queue drops"
    );
    // Where: R's firewall and its input queue (A's veth drops) are the
    // router's; B's input queue (R's veth drops toward B) the receiver's.
    let (a0, r1) = (k.a.link("a0").unwrap(), k.r.link("r1").unwrap());
    assert_eq!(d.lost_in_router, dropped + a0.tx_dropped);
    assert_eq!(d.lost_at_receiver, r1.tx_dropped);
    assert_eq!(d.lost_in_router + d.lost_at_receiver, d.lost);
    assert_eq!(
        rep.loss_site(),
        Some(scalelab::load::forward::trial::LossSite::Router)
    );
    assert!(
        dropped.abs_diff(rep.forwarded / 10) <= 1,
        "{dropped} of {}",
        rep.forwarded
    );
    assert!(rep.reconciled);
}

#[test]
fn unpaced_trial_reconciles_whatever_it_loses() {
    let mut r = router("");
    let t = started(&mut r);
    for g in Generator::ALL {
        unpaced_trial_reconciles(&t, g);
    }
}

fn unpaced_trial_reconciles(t: &Topology, g: Generator) {
    let rep = trial::run(&plan_with(t, None, false, g), &Shutdown::new()).unwrap();
    let d = &rep.directions[0];
    // ~40k-90k frames in 400ms alone; a loaded CI machine gets far fewer.
    assert!(d.sent > 2_000, "{g:?} sent {}", d.sent);
    assert_eq!(d.duplicates, 0, "{g:?}: no frame counted twice");
    let a0 = rep.kernel.a.link("a0").unwrap();
    assert_eq!(d.sent, a0.tx_packets + a0.tx_dropped);
    let r0 = rep.kernel.r.link("r0").unwrap();
    let r1 = rep.kernel.r.link("r1").unwrap();
    let b0 = rep.kernel.b.link("b0").unwrap();
    assert_eq!(r0.rx_packets, rep.forwarded, "R forwards all it takes in");
    assert_eq!(r1.tx_packets + r1.tx_dropped, rep.forwarded);
    assert_eq!(b0.rx_packets, d.received_kernel);
    assert_eq!(d.lost_kernel, a0.tx_dropped + r1.tx_dropped);
    assert_eq!(d.lost, d.lost_kernel);
    assert_eq!(d.router_out, r1.tx_packets + r1.tx_dropped);
    assert_eq!(
        (d.lost_in_router, d.lost_at_receiver),
        (a0.tx_dropped, r1.tx_dropped),
        "{g:?}: A's veth drops are R's input queue, R's toward B are B's"
    );
    assert!(rep.reconciled);
}

#[test]
fn search_result_is_a_passing_step_with_its_counters() {
    let mut r = router("");
    let endpoint = r
        .start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap();
    let driver = ForwardDriver::new(ForwardSettings::default(), &endpoint.uri).unwrap();
    let spec = LoadSpec {
        pacing: Pacing::Closed,
        ..LoadSpec::closed(1, 1, Duration::from_millis(200))
    };
    let rep = driver.forward(&spec, &Shutdown::new()).unwrap();
    assert!(!rep.search.steps.is_empty() && rep.search.steps.len() <= 12);
    assert!(rep.search.steps[0].offered_pps.is_none());
    let best = rep.search.best_step().expect("some rate passes");
    assert!(best.passed);
    assert_eq!(best.trial.lost, 0);
    assert!(best.trial.reconciled);
    assert!(rep.pps > 0.0);
    assert!((rep.gbit_s - rep.pps * 64.0 * 8.0 / 1e9).abs() < 1e-9);
    for s in &rep.search.steps {
        assert!(s.trial.reconciled, "every step reconciles");
        if s.passed {
            assert!(s.rate_pps <= rep.pps, "no passing step above the result");
        }
    }
}

#[test]
fn cli_json_has_the_result_steps_and_counters_and_leaves_nothing() {
    let out = scalelab()
        .args([
            "load",
            "forward",
            "-d",
            "200ms",
            "--bidirectional",
            "--json",
            // The JSON's shape and counters are checked here, not the
            // zero-loss rate: on a suite that loads the machine, R lost 2
            // of 4002 frames at the lowest rate, and the search found none.
            "--loss",
            "0.5",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let j: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(j["pps"].as_f64().unwrap() > 0.0);
    assert_eq!(j["frame_size"], 64);
    assert_eq!(j["loss"], 0.5);
    assert!(j["gbit_s"].as_f64().is_some());
    assert!(!j["steps"].as_array().unwrap().is_empty());
    assert!(j["kernel"]["r"]["ip"]["forw_datagrams"].as_u64().unwrap() > 0);
    assert_eq!(j["best"]["directions"].as_array().unwrap().len(), 2);
    for d in j["best"]["directions"].as_array().unwrap() {
        let n = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("{k}: {d}"));
        assert_eq!(
            n("lost_in_router") + n("lost_at_receiver"),
            n("lost"),
            "{d}"
        );
    }
    crate::support::assert_latency_fields(&j, false);
    assert_nothing_left(out_pid(&j));
    // The text's table says each column's unit: rates, then counts.
    let out = scalelab()
        .args(["load", "forward", "-d", "200ms", "-R", "20000"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let units = text.lines().nth(2).unwrap_or_default();
    assert_eq!(
        units.split_whitespace().collect::<Vec<_>>(),
        [
            "(frames/s)",
            "(frames/s)",
            "(frames/s)",
            "(frames)",
            "(frames)",
            "(frames)"
        ],
        "{text}"
    );
    assert!(
        text.contains("nominal") && text.contains("lost in R"),
        "{text}"
    );
}

/// The owner PID recorded in the run's namespace names.
fn out_pid(j: &serde_json::Value) -> u32 {
    let ns = j["router"]["namespaces"][0].as_str().unwrap_or("");
    lab::owner_pid(ns).unwrap_or(0)
}

fn cli_error(args: &[&str], path: Option<&str>) -> String {
    let mut cmd = scalelab();
    cmd.args(["load", "forward"]).args(args);
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?} must fail");
    stderr(&out)
}

#[test]
fn bad_input_gets_a_clear_error() {
    assert!(cli_error(&["--frame-size", "63"], None).contains("minimum of 64"));
    assert!(cli_error(&["--frame-size", "1519", "-d", "100ms"], None).contains("MTU of 1500"));
    assert!(cli_error(&["-R", "0"], None).contains("rate"));
    let empty = tempfile::tempdir().unwrap();
    let e = cli_error(&[], Some(empty.path().to_str().unwrap()));
    assert!(e.contains("`ip`") && e.contains("iproute2"), "{e}");
    // Only `ip` on PATH: a firewall needs nft.
    std::os::unix::fs::symlink("/usr/sbin/ip", empty.path().join("ip")).unwrap();
    let e = cli_error(
        &["--firewall-rules", "10"],
        Some(empty.path().to_str().unwrap()),
    );
    assert!(e.contains("`nft`") && e.contains("nftables"), "{e}");
    let e = cli_error(&["--sysctl", "net.ipv4.no_such_knob=1"], None);
    assert!(e.contains("unknown sysctl `net.ipv4.no_such_knob`"), "{e}");
    assert!(cli_error(&["--sysctl", "net.ipv4.ip_forward"], None).contains("KEY=VALUE"));
}

#[test]
fn a_search_where_no_rate_passes_exits_4_and_leaves_nothing() {
    // R forwards nothing: every frame is lost, so no rate passes.
    let out = scalelab()
        .args(["load", "forward", "-R", "2000", "-d", "200ms"])
        .args(["--sysctl", "net.ipv4.ip_forward=0", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing was measured"),
        "{}",
        stderr(&out)
    );
    let j: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(j["pps"], 0.0);
    let step = &j["steps"][0]["trial"];
    assert!(step["sent"].as_u64().unwrap() > 0, "{step}");
    assert_eq!(step["received"], 0);
    // R, not B, lost them, and the message says so from the counters.
    let d = &step["directions"][0];
    assert_eq!(d["lost_in_router"], d["sent_kernel"], "{d}");
    assert_eq!(d["lost_at_receiver"], 0, "{d}");
    let err = stderr(&out);
    assert!(err.contains("no rate got through R"), "{err}");
    assert!(
        err.contains("of them in the router R and 0 entering"),
        "{err}"
    );
    assert_nothing_left(out_pid(&j));
}

/// `scalelab run` of a router experiment with `sysctls`: its exit code and
/// output, and the PID the lab's namespaces would carry.
fn run_with_sysctl(key: &str) -> (Option<i32>, String, u32) {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("exp.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"t\"\n[server]\nkind = \"router\"\n\
             sysctls = {{ \"{key}\" = 5000 }}\n\
             [load]\nkind = \"forward\"\n\
             [trials]\nduration = \"100ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n"
        ),
    )
    .unwrap();
    let store = dir.path().join("s.sqlite");
    let child = scalelab()
        .args(["--store", store.to_str().unwrap(), "run"])
        .arg(&exp)
        // The report goes into the working directory, and private
        // directories under the workdir: both the test's own.
        .current_dir(dir.path())
        .env("SCALELAB_WORKDIR", dir.path().join("work"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    (out.status.code(), text, pid)
}

#[test]
fn unknown_sysctl_is_named_and_the_partial_lab_removed() {
    // Unknown to the kernel: refused before anything is built.
    let (code, text, _) = run_with_sysctl("net.ipv4.no_such_knob");
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("unknown sysctl `net.ipv4.no_such_knob`"),
        "{text}"
    );
    // Known, but global: found while R is configured; the partial lab goes.
    let (code, text, pid) = run_with_sysctl("net.core.netdev_max_backlog");
    assert_eq!(code, Some(4), "every trial failed: {text}");
    assert!(text.contains("global, not per namespace"), "{text}");
    assert_nothing_left(pid);
}

/// Starts `load forward` with long trials and waits until its lab exists.
fn spawn_long_run() -> (std::process::Child, u32) {
    let child = scalelab()
        .args(["load", "forward", "-d", "10s", "--firewall-rules", "5"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(10);
    while labs_of(pid).len() < 3 {
        assert!(Instant::now() < deadline, "the lab never appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, pid)
}

#[test]
fn ctrl_c_removes_the_lab() {
    let (mut child, pid) = spawn_long_run();
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling the child we spawned.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "interrupted");
    assert_nothing_left(pid);
}

#[test]
fn kill_9_leaves_no_lab() {
    let (mut child, pid) = spawn_long_run();
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !labs_of(pid).is_empty() {
        assert!(Instant::now() < deadline, "SIGKILL left {:?}", labs_of(pid));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_nothing_left(pid);
}

/// Lab interface names; none may ever show in the root namespace.
const LAB_IFACES: [&str; 4] = ["a0", "r0", "r1", "b0"];

/// No namespace of `pid`'s labs, and no lab veth or nftables table outside
/// them: in the namespace the tests run in, only what was there before.
fn assert_nothing_left(pid: u32) {
    assert!(labs_of(pid).is_empty(), "namespaces {:?}", labs_of(pid));
    let links = Command::new("ip").args(["-o", "link"]).output().unwrap();
    let links = String::from_utf8_lossy(&links.stdout).into_owned();
    for line in links.lines() {
        let name = line.split(": ").nth(1).unwrap_or("");
        let name = name.split('@').next().unwrap_or("");
        assert!(!LAB_IFACES.contains(&name), "a lab veth is left: {line}");
    }
    let tables = Command::new("nft")
        .args(["list", "tables"])
        .output()
        .unwrap();
    let tables = String::from_utf8_lossy(&tables.stdout).into_owned();
    assert!(
        !tables.contains("scalelab"),
        "an nftables table is left: {tables}"
    );
}

#[test]
fn a_dead_runs_leftovers_are_removed_by_the_next_lab() {
    // A namespace named as a lab of a PID that no longer runs (the guard
    // died too): the next lab removes it, and nothing else.
    let mut dead = Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let leftover = format!("slr-{dead_pid}-0-r");
    let stranger = format!("slrx-{dead_pid}-0-r");
    for ns in [&leftover, &stranger] {
        assert!(Command::new("ip")
            .args(["netns", "add", ns])
            .status()
            .unwrap()
            .success());
    }
    let mut r = router("");
    started(&mut r);
    let left = (ns_exists(&leftover), ns_exists(&stranger));
    Command::new("ip")
        .args(["netns", "del", &stranger])
        .status()
        .unwrap();
    assert_eq!(left, (false, true), "only the exact lab name is reclaimed");
    r.stop().unwrap();
}
