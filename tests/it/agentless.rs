//! Hosts without an agent (issue 39): managed nginx over plain ssh, the
//! interval probe of a POSIX shell on the host, and the limiter reading
//! it, in the netns lab (`scripts/netns-lab.sh`), each checked against the
//! server's own log, the agent's figures on a twin host, and the kernel's
//! counters as `nstat` prints them.

use crate::multihost::{run, Lab};
use crate::multihost_systems::{lines_from, measured};
use crate::support::{stderr, stdout};
use scalelab::probe::limiter::LimiterKind;
use scalelab::store::{RunData, Store, Trial, TrialStatus};
use std::path::Path;

/// The agentless probe's server CPU per request may differ from the twin
/// agent's by this factor (both read the kernel's tick counts; the
/// requests of one trial differ by up to 1.7x on this VM, and so does the
/// cost of each).
const CPU_PER_REQUEST_FACTOR: f64 = 1.6;
/// ... its resident set from the twin's by this share (the same nginx
/// binary and configuration: their RSS differs only by pages touched).
const RSS_SHARE: f64 = 0.15;
/// ... its context switches per request from the twin's by this factor.
const CTX_PER_REQUEST_FACTOR: f64 = 2.5;

fn load(dir: &Path) -> RunData {
    Store::open(&dir.join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap()
}

fn ok_trials<'a>(data: &'a RunData, system: &str) -> Vec<&'a Trial> {
    data.trials
        .iter()
        .filter(|t| t.system == system && t.status == TrialStatus::Ok)
        .collect()
}

/// A figure of `system`'s trials summed: `f(probe summary)` over requests.
fn per_request(data: &RunData, system: &str, f: fn(&scalelab::probe::ProbeSummary) -> f64) -> f64 {
    let trials = ok_trials(data, system);
    let figure: f64 = trials.iter().map(|t| f(t.probe.as_ref().unwrap())).sum();
    figure / measured(data, system).max(1) as f64
}

/// The stored probe timeline (one JSON object per interval) of a trial.
pub(crate) fn timeline(dir: &Path, trial: i64) -> Vec<serde_json::Value> {
    let c = rusqlite::Connection::open(dir.join("s.sqlite")).unwrap();
    let text: String = c
        .query_row(
            "SELECT probe FROM timelines WHERE trial_id = ?1",
            [trial],
            |r| r.get(0),
        )
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn within_factor(a: f64, b: f64, factor: f64) -> bool {
    a > 0.0 && b > 0.0 && a / b <= factor && b / a <= factor
}

#[test]
fn the_same_nginx_on_three_hosts_one_without_an_agent_agrees_with_its_log_and_its_twin() {
    // h0 coordinates; h1 and h2 run agents, h3 none; h4 drives the load.
    let lab = Lab::up(4);
    let dir = tempfile::tempdir().unwrap();
    let log = |s: &str| dir.path().join(format!("{s}.log"));
    let system = |label: &str, host: u32, agent: &str| {
        format!(
            "[[system]]\nlabel = \"{label}\"\nhost = \"root@198.18.0.1{host}\"\n{agent}\
             [system.server]\naccess_log_path = \"{}\"\n",
            log(label).display()
        )
    };
    let text = format!(
        "name = \"agentless\"\n[hosts]\nclients = [\"root@198.18.0.14\"]\n\
         [server]\nkind = \"nginx\"\nworker_processes = 1\n\
         [load]\nkind = \"http\"\npath = \"/\"\n[sweep]\nconnections = [2]\n\
         [trials]\nduration = \"3s\"\nwarmup = \"0s\"\nmin = 3\nmax = 3\nsample_interval = \"500ms\"\n{}{}{}",
        system("agent-a", 1, ""),
        system("agent-b", 2, ""),
        system("bare", 3, "agent = false\n"),
    );
    let exp = dir.path().join("exp.toml");
    std::fs::write(&exp, text).unwrap();
    let out = run(&lab, dir.path(), &exp);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let data = load(dir.path());
    assert_eq!(data.trials.len(), 9);
    for t in &data.trials {
        assert_eq!(t.status, TrialStatus::Ok, "{}: {:?}", t.system, t.error);
    }
    // Each host's own log agrees with its system's count, up to the
    // requests in flight at each window's end (one per connection).
    for s in ["agent-a", "agent-b", "bare"] {
        let (m, l) = (measured(&data, s), lines_from(&log(s), "198.18.0.14"));
        assert!(
            m > 0 && m <= l && l <= m + 3 * 2,
            "{s}: scalelab {m} v its log {l}"
        );
    }
    // The agentless host had no agent, and ran the host's own nginx: the
    // version the twin's agent reports.
    assert!(lab.processes(3, "agent\0--workdir").is_empty());
    let version = |s: &str| ok_trials(&data, s)[0].context.server_version.clone();
    assert!(
        version("bare").is_some_and(|v| v.starts_with("nginx/")),
        "{:?}",
        version("bare")
    );
    assert_eq!(version("bare"), version("agent-b"));
    // Its fingerprint holds its veth's settings, read over plain sh as
    // the twin's agent reads them with ethtool.
    let facts = data.run.environment_facts();
    let nic = |host: u32| facts["hosts"][format!("root@198.18.0.1{host}")]["nics"]["eth0"].clone();
    assert_eq!(nic(3)["driver"], "veth", "{}", nic(3));
    assert_eq!(nic(3)["offloads"], nic(2)["offloads"], "{}", nic(3));
    assert_eq!(nic(3)["channels"], nic(2)["channels"]);
    assert!(nic(3)["rps_cpus"]["rx-0"].is_string(), "{}", nic(3));
    // The interval probe gave per-interval figures with the server's tree.
    for t in ok_trials(&data, "bare") {
        let intervals = timeline(dir.path(), t.id);
        assert!(intervals.len() >= 5, "{} intervals", intervals.len());
        for i in &intervals {
            assert!(i["server"]["cpu_s"].is_number(), "{i}");
            assert!(i["server"]["rss_bytes"].as_u64().unwrap() > 0, "{i}");
            assert!(i["server"]["ctx_voluntary"].is_number(), "{i}");
        }
        let p = t.probe.as_ref().unwrap();
        assert_eq!(
            p.limiter.as_ref().unwrap().counters.listen_overflows,
            Some(0)
        );
        assert_eq!(p.processes, Some(2));
    }
    // ... which agree with the agent's on the twin host.
    let cpu = |s| per_request(&data, s, |p| p.server_cpu_s.unwrap());
    assert!(
        within_factor(cpu("bare"), cpu("agent-b"), CPU_PER_REQUEST_FACTOR),
        "server CPU per request: agentless {} v agent {}",
        cpu("bare"),
        cpu("agent-b")
    );
    let ctx = |s| {
        per_request(&data, s, |p| {
            (p.ctx_voluntary.unwrap() + p.ctx_involuntary.unwrap()) as f64
        })
    };
    assert!(
        within_factor(ctx("bare"), ctx("agent-b"), CTX_PER_REQUEST_FACTOR),
        "context switches per request: agentless {} v agent {}",
        ctx("bare"),
        ctx("agent-b")
    );
    let rss = |s| {
        ok_trials(&data, s)[0]
            .probe
            .as_ref()
            .unwrap()
            .server_rss_max_bytes
            .unwrap() as f64
    };
    assert!(
        (rss("bare") - rss("agent-b")).abs() <= RSS_SHARE * rss("agent-b"),
        "RSS: agentless {} v agent {}",
        rss("bare"),
        rss("agent-b")
    );
    for t in ok_trials(&data, "agent-b") {
        let l = t.probe.as_ref().unwrap().limiter.as_ref().unwrap();
        assert_eq!(l.counters.listen_overflows, Some(0));
    }
    // Nothing is left on the host without an agent: no nginx, no shell,
    // no private directory.
    assert!(lab.processes(3, "nginx").is_empty());
    let mut shells = lab.processes(3, "scalelab-bare-");
    shells.extend(lab.processes(3, "scalelab-probe-"));
    let cmdlines: Vec<String> = shells
        .iter()
        .map(|p| std::fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default())
        .collect();
    assert!(shells.is_empty(), "{cmdlines:?}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("scalelab-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `TcpExtListenOverflows` and `TcpExtListenDrops` in `host`'s namespace,
/// as `nstat` prints them (absolute, history untouched).
fn nstat(lab: &Lab, host: u32) -> [u64; 2] {
    let out = lab.exec(
        host,
        &[
            "nstat",
            "-asz",
            "TcpExtListenOverflows",
            "TcpExtListenDrops",
        ],
    );
    let text = stdout(&out);
    ["TcpExtListenOverflows", "TcpExtListenDrops"].map(|name| {
        text.lines()
            .find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some(name)).then(|| w.next()?.parse().ok())?
            })
            .unwrap_or_else(|| panic!("nstat said:\n{text}"))
    })
}

#[test]
fn the_limiter_names_a_listen_queue_overflow_on_a_host_without_an_agent_as_nstat_counts_it() {
    // h1 serves without an agent; h2 drives the load.
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"lim\"\n[hosts]\nserver = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\"]\n\
         agent = false\n\
         [server]\nkind = \"nginx\"\nbacklog = 8\nreuseport = false\nworker_processes = 1\n\
         [load]\nkind = \"http\"\npath = \"/\"\nconnreqs = 1\ntimeout = \"3s\"\n\
         [sweep]\nconnections = [512]\n\
         [trials]\nduration = \"2s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n";
    let exp = dir.path().join("exp.toml");
    std::fs::write(&exp, text).unwrap();
    let before = nstat(&lab, 1);
    let out = run(&lab, dir.path(), &exp);
    let after = nstat(&lab, 1);
    assert!(
        out.status.success() || out.status.code() == Some(5),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let data = load(dir.path());
    let t = &data.trials[0];
    let l = t.context.limiter.as_ref().expect("a limiter");
    assert_eq!(l.kind, LimiterKind::ListenOverflow, "{}", l.verdict);
    let counted = l.figures.listen_drops.unwrap();
    let kernel = (after[0] - before[0]).max(after[1] - before[1]);
    // The trial's window is inside the run: the kernel's count over the
    // run holds the trial's, and the window saw most of it.
    assert!(
        counted >= 1 && counted <= kernel,
        "trial {counted}, nstat {kernel}"
    );
    assert!(
        l.verdict
            .contains(&format!("{counted} connections dropped")),
        "{}",
        l.verdict
    );
    assert!(lab.processes(1, "nginx").is_empty());
}

/// The names in `dir` that start with `prefix`.
pub(crate) fn entries_starting(dir: &Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

/// Waits up to `limit` for `done`.
pub(crate) fn eventually(limit: std::time::Duration, done: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    done()
}

#[test]
fn kill_9_of_the_coordinator_leaves_nothing_on_a_host_without_an_agent() {
    // h1 serves without an agent; h2 drives the load.
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"kill\"\n[hosts]\nserver = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\"]\n\
         agent = false\n[server]\nkind = \"nginx\"\nworker_processes = 2\n\
         [load]\nkind = \"http\"\npath = \"/\"\n[sweep]\nconnections = [2]\n\
         [trials]\nduration = \"20s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n";
    let exp = dir.path().join("exp.toml");
    std::fs::write(&exp, text).unwrap();
    let mut child = crate::multihost::spawn_run(&lab, dir.path(), &exp);
    let second = std::time::Duration::from_secs(1);
    assert!(
        eventually(30 * second, || lab.processes(1, "scalelab-probe-").len()
            == 1),
        "no probe shell on h1"
    );
    let nginx = lab.processes(1, "nginx");
    assert_eq!(nginx.len(), 3, "master and 2 workers: {nginx:?}");
    child.kill().unwrap();
    child.wait().unwrap();
    // The shells' stdin closed with the coordinator: they stop the server
    // by PID and remove its directory.
    let gone = || {
        lab.processes(1, "nginx").is_empty()
            && lab.processes(1, "scalelab-bare-").is_empty()
            && lab.processes(1, "scalelab-probe-").is_empty()
    };
    assert!(
        eventually(20 * second, gone),
        "{:?}",
        lab.processes(1, "nginx")
    );
    let left = entries_starting(dir.path(), "scalelab-bare-");
    assert!(left.is_empty(), "{left:?}");
}
