//! Multi-host runs in a lab of network-namespace hosts with real sshd
//! (`scripts/netns-lab.sh`): the coordinator in one namespace, the server
//! and the clients in others, all over the system ssh client.

use crate::support::{fixture, stderr, stdout};
use scalelab::store::{RunData, Store, TrialStatus};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A lab that is up for one test and down when dropped.
pub(crate) struct Lab {
    dir: PathBuf,
    prefix: String,
    ssh_command: String,
}

impl Lab {
    pub(crate) fn up(hosts: u32) -> Lab {
        static N: AtomicU32 = AtomicU32::new(0);
        let prefix = format!(
            "s{}-{}",
            std::process::id() % 100_000,
            N.fetch_add(1, Ordering::SeqCst)
        );
        let dir = std::env::temp_dir().join(format!("scalelab-{prefix}"));
        let out = Command::new(fixture("../../scripts/netns-lab.sh"))
            .args(["up", &hosts.to_string()])
            .env("SCALELAB_LAB_DIR", &dir)
            .env("SCALELAB_LAB_PREFIX", &prefix)
            .output()
            .unwrap();
        let text = stdout(&out);
        assert!(out.status.success(), "lab up: {}", stderr(&out));
        let ssh_command = text
            .lines()
            .find_map(|l| l.strip_prefix("export SCALELAB_SSH_COMMAND="))
            .unwrap()
            .trim_matches('\'')
            .to_string();
        Lab {
            dir,
            prefix,
            ssh_command,
        }
    }

    /// The namespace of the lab's bridge (its ports `pN` lead to host N).
    pub(crate) fn bridge_ns(&self) -> String {
        format!("{}-br", self.prefix)
    }

    fn ns(&self, host: u32) -> String {
        format!("{}-h{host}", self.prefix)
    }

    /// `scalelab ARGS` on the coordinator host (h0).
    fn scalelab(&self, workdir: &Path) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns(0), env!("CARGO_BIN_EXE_scalelab")])
            .env("SCALELAB_SSH_COMMAND", &self.ssh_command)
            // The hosts share this machine's file system: the agents go
            // into the lab's own directory, removed with the lab, not
            // into the hosts' default /var/tmp/scalelab-agent.
            .env("SCALELAB_AGENT_DIR", self.dir.join("agents"))
            .env("SCALELAB_WORKDIR", workdir)
            .current_dir(workdir);
        c
    }

    /// PIDs of the processes in a host's namespace.
    fn pids(&self, host: u32) -> Vec<u32> {
        let out = Command::new("ip")
            .args(["netns", "pids", &self.ns(host)])
            .output()
            .unwrap();
        stdout(&out)
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    }

    /// The host's processes whose command line contains `needle`.
    pub(crate) fn processes(&self, host: u32, needle: &str) -> Vec<u32> {
        self.pids(host)
            .into_iter()
            .filter(|p| {
                std::fs::read(format!("/proc/{p}/cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).contains(needle))
                    .unwrap_or(false)
            })
            .collect()
    }
}

impl Lab {
    /// `ARGS` run in `host`'s namespace (`ip netns exec`).
    pub(crate) fn exec(&self, host: u32, args: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", &self.ns(host)])
            .args(args)
            .output()
            .unwrap()
    }

    /// The PID of the agent on `host`, once it has been up for 1.5 s (so,
    /// in a run whose trials start at once, inside the first trial).
    pub(crate) fn agent_in_a_trial(&self, host: u32) -> u32 {
        // Into a window: a client host's agent runs its load threads (the
        // trials have no warmup). Waiting a fixed 1.5 s after the agent
        // appeared was not enough on a loaded machine: the server had not
        // yet started, the kill came before the first trial, and the
        // reconnect absorbed it.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let loading = (2..=3).any(|h| {
                let agents = self.processes(h, "agent\0--workdir");
                agents.iter().any(|&p| runs_thread(p, "scalelab-http"))
            });
            let agents = self.processes(host, "agent\0--workdir");
            if let (true, Some(p)) = (loading, agents.first()) {
                std::thread::sleep(Duration::from_millis(500));
                return *p;
            }
            assert!(
                Instant::now() < deadline,
                "no trial on host {host}'s lab in 60 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = Command::new(fixture("../../scripts/netns-lab.sh"))
            .arg("down")
            .env("SCALELAB_LAB_DIR", &self.dir)
            .env("SCALELAB_LAB_PREFIX", &self.prefix)
            .output();
    }
}

fn write_experiment(dir: &Path, hosts: &str, body: &str) -> PathBuf {
    let path = dir.join("exp.toml");
    let text = format!(
        "name = \"multihost\"\n[hosts]\n{hosts}\n[load]\nkind = \"http\"\npath = \"/\"\n{body}"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `scalelab --store s.sqlite run EXP -o r.html` on the coordinator host.
pub(crate) fn run_cmd(lab: &Lab, dir: &Path, exp: &Path) -> Command {
    let mut c = lab.scalelab(dir);
    c.args(["--store", "s.sqlite", "run"])
        .arg(exp)
        .args(["-o", "r.html"]);
    c
}

pub(crate) fn run(lab: &Lab, dir: &Path, exp: &Path) -> Output {
    run_cmd(lab, dir, exp).output().unwrap()
}

#[test]
fn two_client_hosts_carry_their_share_and_agree_with_the_servers_log() {
    let lab = Lab::up(3);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let exp = write_experiment(
        dir.path(),
        "server = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\", \"root@198.18.0.13\"]",
        &format!(
            "[server]\nkind = \"nginx\"\nworker_processes = 1\naccess_log_path = \"{}\"\n\
             [sweep]\nconnections = [4]\n[trials]\nduration = \"1s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n\
             [probe]\nsyscalls = \"exact\"\n",
            log.display()
        ),
    );
    let out = run(&lab, dir.path(), &exp);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let data = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert_eq!(data.trials.len(), 1);
    let t = &data.trials[0];
    assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
    let m = t.measurement.as_ref().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    // The server ran on the server host (only it has 198.18.0.11): its own
    // readiness checks come from that address, every measured request from a
    // client host, and none from the coordinator.
    let from = |addr: &str| text.lines().filter(|l| l.starts_with(addr)).count() as u64;
    let (a, b) = (from("198.18.0.12 "), from("198.18.0.13 "));
    // The measured window ends at its deadline, as wrk's does: a request in
    // flight then (at most one per connection) reaches nginx's log but is
    // not counted. Everything else agrees exactly.
    assert!(
        m.requests <= a + b && a + b <= m.requests + 4,
        "scalelab's count {} vs nginx's log {}",
        m.requests,
        a + b
    );
    assert!(a > 0 && b > 0, "each client carries a share: {a} and {b}");
    assert_eq!(
        text.lines().count() as u64,
        a + b + from("198.18.0.11 "),
        "no request from anywhere else"
    );
    // The server host's agent counted the server's system calls, as the
    // recipe asked: nginx reads and writes each request at least once.
    let work = (t.probe.as_ref())
        .and_then(|p| p.work.as_ref())
        .expect("the agent counted the server's work");
    let calls = work.syscalls.unwrap_or_else(|| {
        panic!(
            "[probe] syscalls = \"exact\" reached the agent: {:?}",
            work.unavailable
        )
    });
    assert!(
        calls >= 2 * m.requests,
        "{calls} calls for {} requests",
        m.requests
    );
    let clients = &t.context.clients;
    assert_eq!(clients.len(), 2);
    let sum: u64 = clients.iter().map(|c| c.requests).sum();
    assert_eq!(sum, m.requests);
    let coordination = t.context.coordination.expect("coordination recorded");
    assert!(coordination.start_skew_us >= 0.0);
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(
        html.contains(r#"<section id="hosts">"#),
        "the report shows the client split"
    );
    assert!(html.contains("split evenly over 2 client hosts"));
    let facts = data.run.environment_facts();
    let env = &facts["hosts"];
    for host in ["root@198.18.0.11", "root@198.18.0.12", "root@198.18.0.13"] {
        assert!(
            env[host]["kernel_release"].is_string(),
            "no fingerprint of {host}"
        );
    }
    // Nothing is left running on the server host but its sshd.
    assert!(lab.processes(1, "nginx").is_empty());
}

#[test]
fn an_unreachable_host_fails_within_seconds_and_is_named() {
    let lab = Lab::up(1);
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(
        dir.path(),
        "server = \"root@198.18.0.99\"",
        "[server]\nkind = \"nginx\"\n[sweep]\nconnections = [1]\n[trials]\nduration = \"300ms\"\nmin = 1\nmax = 1\n",
    );
    let started = Instant::now();
    let out = run(&lab, dir.path(), &exp);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("198.18.0.99"), "{err}");
    // Inside the lab, a benchmark-range host is ssh'd to (issue 46 4.5).
    assert!(!err.contains("no lab is up"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn load_to_an_address_not_in_hosts_is_refused() {
    let lab = Lab::up(1);
    let dir = tempfile::tempdir().unwrap();
    let out = lab
        .scalelab(dir.path())
        .args(["load", "http", "http://198.18.0.11:22/", "-d", "1s"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("[hosts]"), "{}", stderr(&out));
}

#[test]
fn a_client_killed_mid_trial_fails_that_trial_naming_the_host() {
    let lab = Lab::up(3);
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(
        dir.path(),
        "server = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\", \"root@198.18.0.13\"]",
        "[server]\nkind = \"nginx\"\n[sweep]\nconnections = [2, 4]\n\
         [trials]\nduration = \"3s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    );
    // Kill the client agent on h3 while it runs a trial.
    let (data, err) = run_killing_agent(&lab, dir.path(), &exp, 3);
    let failed: Vec<_> = data
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Failed)
        .collect();
    assert!(!failed.is_empty(), "{err}");
    let reason = failed[0].error.as_deref().unwrap_or("");
    assert!(reason.contains("198.18.0.13"), "{reason}");
    // The sweep went on to the second point, and nothing is left behind.
    assert_eq!(data.trials.len(), 2, "{:?}", data.trials);
    assert!(lab.processes(1, "nginx").is_empty());
    assert!(lab.processes(2, "agent\0--workdir").is_empty());
}

#[test]
fn an_agent_of_another_protocol_version_is_refused_clearly() {
    use std::io::Write;
    let mut agent = Command::new(env!("CARGO_BIN_EXE_scalelab"))
        .arg("agent")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    agent
        .stdin
        .as_mut()
        .unwrap()
        .write_all(b"{\"v\":99,\"op\":\"hello\"}\n")
        .unwrap();
    let out = agent.wait_with_output().unwrap();
    let reply = stdout(&out);
    assert!(
        reply.contains("mismatch") && reply.contains("99"),
        "{reply}"
    );
}

/// An experiment whose `external` server is a Python HTTP server on host
/// 198.18.0.11, started and stopped over ssh by its own commands (no
/// agent), driven from 198.18.0.12; `extra` is appended to it.
fn python_server_experiment(dir: &Path, extra: &str) -> PathBuf {
    python_server(dir, extra, true)
}

/// [`python_server_experiment`], with its `pid_command` (or without).
fn python_server(dir: &Path, extra: &str, with_pid_command: bool) -> PathBuf {
    let pidfile = dir.join("server.pid");
    let start = format!(
        "cd {d}; setsid python3 -m http.server 8080 --bind 198.18.0.11 </dev/null >/dev/null 2>&1 & echo $! > {p}",
        d = dir.display(),
        p = pidfile.display()
    );
    let stop = format!("kill $(cat {p}) && rm -f {p}", p = pidfile.display());
    write_experiment(
        dir,
        "server = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\"]",
        &format!(
            "[server]\nkind = \"external\"\nurl = \"http://198.18.0.11:8080/\"\n\
             start = '{start}'\nstop = '{stop}'\n{pid_command}\
             [sweep]\nconnections = [2]\n[trials]\nduration = \"1s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n{extra}",
            pid_command = if with_pid_command {
                format!("pid_command = 'cat {}'\n", pidfile.display())
            } else {
                String::new()
            },
        ),
    )
}

#[test]
fn an_external_server_over_ssh_without_pid_is_found_by_ss_on_its_host() {
    // Issue 46, 3.1: no `pid_command`: the process listening on the URL's
    // port on the host (`ss -ltunp` there, over ssh) is the server.
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = python_server(dir.path(), "", false);
    let out = run(&lab, dir.path(), &exp);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let data = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    let t = &data.trials[0];
    assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
    let probe = t.probe.as_ref().expect("a probe summary");
    let started = std::fs::read_to_string(dir.path().join("server.pid"));
    // The stop command removed the file; the probe kept the PID it found.
    assert!(started.is_err(), "stopped");
    assert!(probe.server_pid.is_some(), "{:?}", probe.warnings);
    assert_eq!(probe.processes, Some(1), "the server's one process");
    assert!(probe.server_cpu_s.is_some(), "no server CPU");
    let b = probe.background.expect("a background");
    assert!(!b.server_unknown, "{b:?}");
    assert!(lab.processes(1, "http.server").is_empty());
}

#[test]
fn an_external_server_without_an_agent_is_started_stopped_and_probed_over_ssh() {
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = python_server_experiment(dir.path(), "");
    let out = run(&lab, dir.path(), &exp);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let data = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    let t = &data.trials[0];
    assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
    let probe = t.probe.as_ref().expect("a probe summary");
    // The interval probe of the host's sh reads the tree's CPU ticks; an
    // idle second may show 0: the figure exists, the tree was found.
    assert!(probe.server_cpu_s.is_some(), "no server CPU");
    assert_eq!(probe.processes, Some(1), "the server's one process");
    assert!(probe.cpu.busy > 0.0);
    let warnings = probe.warnings.join("; ");
    assert!(warnings.contains("without an agent (Linux)"), "{warnings}");
    assert!(data.run.environment_facts()["hosts"]["root@198.18.0.11"]["uname"].is_string());
    // The stop command ran: the server is gone from its host.
    assert!(!dir.path().join("server.pid").exists());
    assert!(lab.processes(1, "http.server").is_empty());
}

/// The agent files under a test's agent directory (`SCALELAB_AGENT_DIR`).
fn agent_files(agents: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(agents)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default()
}

fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    stdout(&out).split_whitespace().next().unwrap().to_string()
}

#[test]
fn a_truncated_agent_at_the_final_name_is_replaced_and_the_run_succeeds() {
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let agents = dir.path().join("agents");
    let exp = write_experiment(
        dir.path(),
        "server = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\"]",
        "[server]\nkind = \"nginx\"\nworker_processes = 1\n[sweep]\nconnections = [2]\n\
         [trials]\nduration = \"500ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    );
    let run_with_agents = || {
        run_cmd(&lab, dir.path(), &exp)
            .env("SCALELAB_AGENT_DIR", &agents)
            .output()
            .unwrap()
    };
    let out = run_with_agents();
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let files = agent_files(&agents);
    assert_eq!(files.len(), 1, "{files:?}");
    let agent = &files[0];
    let whole = std::fs::read(agent).unwrap();
    // A copy cut short by a killed coordinator, under the final name.
    std::fs::write(agent, &whole[..whole.len() / 2]).unwrap();
    let out = run_with_agents();
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(
        sha256(agent),
        sha256(Path::new(env!("CARGO_BIN_EXE_scalelab"))),
        "the bad copy was replaced by this build"
    );
    assert_eq!(agent_files(&agents).len(), 1, "no temporary copy left");
    let data = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert_eq!(data.trials[0].status, TrialStatus::Ok);
}

/// `scalelab run` of `exp` started in the background (its stderr piped).
pub(crate) fn spawn_run(lab: &Lab, dir: &Path, exp: &Path) -> std::process::Child {
    run_cmd(lab, dir, exp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `exp`, kills the agent on lab host `host` with SIGKILL inside the
/// first trial, and returns the stored run and scalelab's stderr.
fn run_killing_agent(lab: &Lab, dir: &Path, exp: &Path, host: u32) -> (RunData, String) {
    let child = spawn_run(lab, dir, exp);
    let victim = lab.agent_in_a_trial(host);
    // SAFETY: kill(2) on a PID we just read from the lab host's namespace.
    unsafe { libc::kill(victim as i32, libc::SIGKILL) };
    let out = child.wait_with_output().unwrap();
    let data = Store::open(&dir.join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    (data, stderr(&out))
}

const TWO_CLIENTS: &str =
    "server = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\", \"root@198.18.0.13\"]";

#[test]
fn a_lost_client_agent_fails_only_its_trial_is_reconnected_and_resume_retries_it() {
    let lab = Lab::up(3);
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(
        dir.path(),
        TWO_CLIENTS,
        "[server]\nkind = \"nginx\"\nworker_processes = 1\n[sweep]\nconnections = [2, 4, 6]\n\
         [trials]\nduration = \"3s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    );
    let (data, err) = run_killing_agent(&lab, dir.path(), &exp, 3);
    let store = dir.path().join("s.sqlite");
    assert_eq!(data.trials.len(), 3, "{err}");
    let first = &data.trials[0];
    assert_eq!(first.status, TrialStatus::Failed, "{err}");
    let reason = first.error.as_deref().unwrap_or("");
    assert!(
        reason.contains("lost host") && reason.contains("198.18.0.13"),
        "{reason}"
    );
    // The agent came back: every later trial measured.
    for t in &data.trials[1..] {
        assert_eq!(t.status, TrialStatus::Ok, "{:?}\n{err}", t.error);
    }
    assert!(
        err.contains("root@198.18.0.13: its agent was lost; reconnected"),
        "{err}"
    );
    // --resume runs the lost host's trial again, and says so.
    let run_id = data.run.id.to_string();
    let out = run_cmd(&lab, dir.path(), &exp)
        .args(["--resume", &run_id])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(
            "retrying 1 trial(s) that failed for environmental reasons \
             (lost host: 1, server start: 0, disk full: 0)"
        ),
        "{err}"
    );
    let s = Store::open(&store, scalelab::catalog()).unwrap();
    let data = s.load_run(&run_id).unwrap();
    assert_eq!(data.trials.len(), 3, "each trial stored once");
    assert!(data.trials.iter().all(|t| t.status == TrialStatus::Ok));
    let events = s.run_events(data.run.id).unwrap();
    let retried: Vec<_> = events
        .iter()
        .filter(|e| e.kind == scalelab::store::RunEventKind::TrialRetried)
        .collect();
    assert_eq!(retried.len(), 1, "{events:?}");
    assert!(retried[0].detail.contains("lost host"));
    assert!(lab.processes(1, "nginx").is_empty());
}

#[test]
fn a_client_host_that_stays_gone_stops_the_run_early_naming_it() {
    let lab = Lab::up(3);
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(
        dir.path(),
        TWO_CLIENTS,
        "[server]\nkind = \"nginx\"\nworker_processes = 1\n\
         [sweep]\nconnections = [2, 4, 6, 8, 10, 12]\n\
         [trials]\nduration = \"3s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    );
    let child = spawn_run(&lab, dir.path(), &exp);
    lab.agent_in_a_trial(3);
    // The host leaves the network: its sshd is killed and its address
    // removed, so neither the running session nor a new one gets through.
    let sshd: i32 = std::fs::read_to_string(lab.dir.join("sshd-3.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill(2) on the PID of the lab's own sshd, from its PID file.
    unsafe { libc::kill(sshd, libc::SIGKILL) };
    let del = Command::new("ip")
        .args([
            "-n",
            &lab.ns(3),
            "addr",
            "del",
            "198.18.0.13/24",
            "dev",
            "eth0",
        ])
        .output()
        .unwrap();
    assert!(del.status.success(), "{}", stderr(&del));
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("root@198.18.0.13 is gone") && err.contains("--resume"),
        "{err}"
    );
    let data = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    // Stopped at the first trial after the loss, not failing the other five.
    assert!(data.trials.len() <= 2, "{:?}", data.trials);
    assert_eq!(data.run.status.as_str(), "interrupted");
    assert!(lab.processes(1, "nginx").is_empty());
}

/// Three 3 s trials of nginx on h1 (one worker), loaded from h2.
fn nginx_on_h1(dir: &Path) -> PathBuf {
    write_experiment(
        dir,
        "server = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\"]",
        "[server]\nkind = \"nginx\"\nworker_processes = 1\n[sweep]\nconnections = [2, 4, 6]\n\
         [trials]\nduration = \"3s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    )
}

#[test]
fn a_lost_server_agent_fails_its_trial_as_a_lost_host_and_the_server_comes_back() {
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = nginx_on_h1(dir.path());
    let (data, err) = run_killing_agent(&lab, dir.path(), &exp, 1);
    assert_eq!(data.trials.len(), 3, "{err}");
    let reason = data.trials[0].error.as_deref().unwrap_or("");
    assert!(
        reason.starts_with("lost host root@198.18.0.11"),
        "{reason}\n{err}"
    );
    for t in &data.trials[1..] {
        assert_eq!(t.status, TrialStatus::Ok, "{:?}\n{err}", t.error);
    }
    assert!(lab.processes(1, "nginx").is_empty());
}

/// Spawns a run of two 3 s trials (no warmup) of nginx on h1, loaded from
/// h2 and h3, keeping stderr for the assertions.
fn spawn_two_client_run(lab: &Lab, dir: &Path) -> std::process::Child {
    let exp = write_experiment(
        dir,
        "server = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\", \"root@198.18.0.13\"]",
        "[server]\nkind = \"nginx\"\n[sweep]\nconnections = [2, 4]\n\
         [trials]\nduration = \"3s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    );
    spawn_run(lab, dir, &exp)
}

/// Issue 24: a client host's agent stopped mid-window (SIGSTOP, then
/// SIGCONT) stores no number for that window: the trial is a run event
/// naming the host, and the run ends resumable.
#[test]
fn a_client_agent_stopped_mid_window_stores_no_number() {
    let lab = Lab::up(3);
    let dir = tempfile::tempdir().unwrap();
    let child = spawn_two_client_run(&lab, dir.path());
    // Into the window: the agent on h3 runs its load threads (no warmup).
    let deadline = Instant::now() + Duration::from_secs(60);
    let victim = loop {
        let agents = lab.processes(3, "agent\0--workdir");
        if let Some(&p) = agents.iter().find(|&&p| runs_thread(p, "scalelab-http")) {
            std::thread::sleep(Duration::from_millis(500));
            break p as i32;
        }
        assert!(Instant::now() < deadline, "no load on the client host");
        std::thread::sleep(Duration::from_millis(50));
    };
    // SAFETY: kill(2) on a PID we just read from the lab host's namespace.
    unsafe { libc::kill(victim, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(4000));
    // SAFETY: as above.
    unsafe { libc::kill(victim, libc::SIGCONT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let store = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog()).unwrap();
    let data = store.load_run("latest").unwrap();
    let events = store.run_events(data.run.id).unwrap();
    let ev = events
        .iter()
        .find(|e| e.detail.contains("was stopped for"))
        .unwrap_or_else(|| panic!("no stop event: {events:?}\n{}", stderr(&out)));
    assert!(
        ev.detail
            .starts_with("the agent on client host root@198.18.0.13"),
        "{}",
        ev.detail
    );
    for t in &data.trials {
        let secs = t.measurement.as_ref().map_or(0.0, |m| m.duration_s.0);
        assert!(secs <= 3.0 + 2.0 + 0.5, "a {secs:.2} s window stored");
    }
    assert!(lab.processes(2, "agent\0--workdir").is_empty());
}

/// Whether process `pid` has a thread named `name`.
fn runs_thread(pid: u32, name: &str) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks.flatten().any(|t| {
                std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name)
            })
        })
        .unwrap_or(false)
}

#[test]
fn kill_9_of_the_coordinator_stops_its_ssh_masters_and_removes_their_directory() {
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(
        dir.path(),
        "server = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\"]",
        "[server]\nkind = \"nginx\"\n[sweep]\nconnections = [2]\n\
         [trials]\nduration = \"20s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    );
    let mut child = lab
        .scalelab(dir.path())
        .args(["--store", "s.sqlite", "run"])
        .arg(&exp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id(); // `ip netns exec` execs scalelab
    let deadline = Instant::now() + Duration::from_secs(60);
    while lab.processes(2, "agent\0--workdir").is_empty() {
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        assert!(Instant::now() < deadline, "no agent on the client host");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(1000)); // mid-trial
    let control_dirs: Vec<PathBuf> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name == format!("scalelab-ssh-{pid}")
                || name.starts_with(&format!("scalelab-ssh-{pid}-"))
        })
        .collect();
    assert_eq!(control_dirs.len(), 1, "{control_dirs:?}");
    let control = control_dirs[0].to_str().unwrap().to_string();
    // The masters (`ssh: <control dir>/<hash> [mux]`) and the sshd
    // sessions they hold on the hosts.
    let masters = || lab.processes(0, &control);
    let sessions = || [1, 2].map(|h| lab.processes(h, "@notty").len());
    assert!(!masters().is_empty(), "no ssh master");
    assert!(sessions().iter().all(|&n| n > 0), "{:?}", sessions());
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    // ControlPersist would keep them 30 s; `ssh -O exit` ends them at once.
    let deadline = Instant::now() + Duration::from_secs(10);
    while control_dirs[0].exists() || !masters().is_empty() || sessions() != [0, 0] {
        assert!(
            Instant::now() < deadline,
            "10 s after kill -9 of the coordinator: control dir left {}, masters {:?}, \
             sshd sessions per host {:?}",
            control_dirs[0].exists(),
            masters(),
            sessions()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_next_run_stops_a_dead_coordinators_ssh_master_and_removes_its_directory() {
    // What a coordinator killed together with its reaper leaves: a control
    // directory named after its (now dead) PID, with a live master in it.
    let lab = Lab::up(1);
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    // In a temporary directory of this test's own, which only this test's
    // scalelab takes for its TMPDIR: every other test's scalelab reclaims
    // a dead owner's directories in the shared one, and one did so between
    // this directory's creation and the master's (`no master`, once in a
    // full suite).
    let tmp = tempfile::tempdir().unwrap();
    let control = tmp.path().join(format!("scalelab-ssh-{dead}-left"));
    std::fs::create_dir(&control).unwrap();
    let socket = control.join("master");
    let ssh: Vec<&str> = lab.ssh_command.split_whitespace().collect();
    let status = Command::new("ip")
        .args(["netns", "exec", &lab.ns(0)])
        .args(&ssh)
        .args(["-o", "ControlMaster=yes", "-o", "ControlPersist=60", "-o"])
        .arg(format!("ControlPath={}", socket.display()))
        .args(["-f", "-N", "root@198.18.0.11"])
        .status()
        .unwrap();
    assert!(status.success() && socket.exists(), "no master");
    let needle = control.to_str().unwrap().to_string();
    assert!(!lab.processes(0, &needle).is_empty(), "no master process");
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(
        dir.path(),
        "server = \"root@198.18.0.11\"",
        "[server]\nkind = \"nginx\"\n[sweep]\nconnections = [2]\n\
         [trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    );
    let out = run_cmd(&lab, dir.path(), &exp)
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let left = (control.exists(), lab.processes(0, &needle));
    let _ = std::fs::remove_dir_all(&control);
    for p in &left.1 {
        // SAFETY: kill(2) on the master this test started.
        unsafe { libc::kill(*p as i32, libc::SIGKILL) };
    }
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(left, (false, vec![]), "the dead owner's directory, masters");
}

// ---- energy (issue 30): the server host's own meter, through its agent
// or over plain ssh. The command prints watts only where 198.18.0.11 is,
// so a figure proves it ran on the server host.

/// A power command that answers only on the server host (h1).
const SERVER_HOST_METER: &str =
    "ip -o addr show | grep -q 198.18.0.11 && echo 'Instantaneous power reading: 71 Watts'";

#[test]
fn a_server_hosts_agent_reads_its_own_power_meter() {
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = write_experiment(
        dir.path(),
        "server = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\"]",
        &format!(
            "[server]\nkind = \"nginx\"\nworker_processes = 1\n[sweep]\nconnections = [2]\n\
             [trials]\nduration = \"1s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\nsample_interval = \"250ms\"\n\
             [probe]\nenergy = \"command\"\nenergy_command = \"{SERVER_HOST_METER}\"\n"
        ),
    );
    let out = run(&lab, dir.path(), &exp);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let data = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    let t = &data.trials[0];
    assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
    let p = t.probe.as_ref().unwrap();
    let watts = p
        .watts
        .unwrap_or_else(|| panic!("no watts: {:?}", p.warnings));
    assert!((watts - 71.0).abs() < 1e-9, "{watts}");
    let e = p.energy.as_ref().unwrap();
    assert!(!e.client_shares_meter, "the client ran on another host");
    let rps = t.throughput().unwrap();
    assert!((p.ops_per_joule.unwrap() - rps / 71.0).abs() < 1e-9 * rps);
}

#[test]
fn an_external_servers_host_runs_the_power_command_over_ssh() {
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = python_server_experiment(
        dir.path(),
        &format!("[probe]\nenergy_command = \"{SERVER_HOST_METER}\"\n"),
    );
    let out = run(&lab, dir.path(), &exp);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let data = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    let t = &data.trials[0];
    assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
    let p = t.probe.as_ref().unwrap();
    assert_eq!(p.watts, Some(71.0), "{:?}", p.warnings);
    let e = p.energy.as_ref().unwrap();
    // The domain is the command itself, read at the window's ends over
    // ssh; only h1 has 198.18.0.11, so 71 W says it ran there.
    assert!(
        e.domains[0].starts_with(SERVER_HOST_METER) && e.domains[0].ends_with("(start and end)"),
        "{:?}",
        e.domains
    );
    assert!(!e.client_shares_meter);
}

#[test]
fn kill_9_of_the_coordinator_stops_the_external_server_on_its_host_and_resume_completes() {
    // Issue 36: an `external` server started over ssh by the recipe's
    // `start` outlived kill -9 of the coordinator; every later trial and
    // every --resume failed with "Address already in use".
    external_killed_then_resumed(false);
}

#[test]
fn when_the_reaper_dies_too_resume_stops_the_external_server_first() {
    // The coordinator and its reaper both killed: the stop command kept in
    // the work directory is run by the next run's reclaim, before its
    // first trial.
    external_killed_then_resumed(true);
}

/// A run of an external python server on h1, killed mid-trial (with its
/// reaper when `with_reaper`), then resumed: the server is stopped (by the
/// reaper, or by the resume) and the resume completes every trial.
fn external_killed_then_resumed(with_reaper: bool) {
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = python_server_experiment(dir.path(), "");
    let text = std::fs::read_to_string(&exp)
        .unwrap()
        .replace("connections = [2]", "connections = [1, 2, 3]");
    std::fs::write(&exp, text).unwrap();
    let mut child = run_cmd(&lab, dir.path(), &exp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while lab.processes(1, "http.server").is_empty() {
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        assert!(Instant::now() < deadline, "the server never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500)); // mid-trial
    if with_reaper {
        // The reaper is the coordinator's forked child of the same name.
        for c in scalelab::sys::process::children_of(child.id()) {
            let comm = std::fs::read_to_string(format!("/proc/{c}/comm")).unwrap_or_default();
            if comm.trim() == "scalelab" {
                scalelab::sys::process::signal(c, libc::SIGKILL);
            }
        }
    }
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(if with_reaper { 3 } else { 15 });
    while !lab.processes(1, "http.server").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left = lab.processes(1, "http.server");
    let killed_runs = left.clone();
    if with_reaper {
        assert!(
            !left.is_empty(),
            "the server stopped although no reaper ran"
        );
    } else {
        for p in &left {
            scalelab::sys::process::signal(*p, libc::SIGKILL); // leave nothing
        }
        assert!(
            left.is_empty(),
            "the external server {left:?} outlived kill -9"
        );
    }
    let id = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .resolve_run("latest")
        .unwrap();
    let out = run_cmd(&lab, dir.path(), &exp)
        .args(["--resume", &id.to_string()])
        .output()
        .unwrap();
    let old_still_running: Vec<u32> = killed_runs
        .iter()
        .copied()
        .filter(|p| scalelab::sys::process::is_alive(*p))
        .collect();
    for p in lab.processes(1, "http.server") {
        scalelab::sys::process::signal(p, libc::SIGKILL); // leave nothing
    }
    // The killed run's server was stopped (not merely shadowed: a second
    // python server cannot bind, and the old one answered for it).
    assert!(
        old_still_running.is_empty(),
        "the killed run's server {old_still_running:?} outlived the resume"
    );
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let data = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert_eq!(data.trials.len(), 3);
    assert!(
        data.trials.iter().all(|t| t.status == TrialStatus::Ok),
        "{:?}",
        data.trials.iter().map(|t| &t.error).collect::<Vec<_>>()
    );
}

#[test]
fn a_healed_partition_leaves_no_stale_agent_or_server_on_the_host() {
    // Issue 36: a server host cut off and reconnected kept its old agent,
    // watchdog and nginx running after the run: its sshd never saw the
    // session end, so the old agent never read the end of its stdin.
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = nginx_on_h1(dir.path());
    let child = run_cmd(&lab, dir.path(), &exp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The coordinator's host answers nothing of the old session once it is
    // gone (as a stateful firewall or NAT that forgot the flow drops, not
    // resets): h1's sshd then never learns that the session ended.
    let nft = |rule: &str| {
        let out = Command::new("ip")
            .args(["netns", "exec", &lab.ns(0), "nft"])
            .args(rule.split(' '))
            .output()
            .unwrap();
        assert!(out.status.success(), "nft {rule}: {}", stderr(&out));
    };
    nft("add table inet partition");
    nft("add chain inet partition out { type filter hook output priority 0 ; }");
    nft("add rule inet partition out tcp flags & rst == rst drop");
    let old_agent = lab.agent_in_a_trial(1);
    let link = |state: &str| {
        let out = Command::new("ip")
            .args([
                "-n",
                &format!("{}-br", lab.prefix),
                "link",
                "set",
                "p1",
                state,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    link("down");
    // Longer than ssh's ServerAlive (3 x 2 s): the coordinator loses the
    // session; h1 sees nothing at all.
    std::thread::sleep(Duration::from_secs(9));
    link("up");
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    let left_agents = lab.processes(1, "agent\0--workdir");
    let left_nginx = lab.processes(1, "nginx");
    for p in left_agents.iter().chain(&left_nginx) {
        scalelab::sys::process::signal(*p, libc::SIGKILL); // leave nothing
    }
    assert!(
        left_agents.is_empty() && left_nginx.is_empty(),
        "after the run, h1 still runs agents {left_agents:?} (the old one was {old_agent}) \
         and nginx {left_nginx:?}\n{err}"
    );
    assert!(err.contains("had outlived its session; stopped"), "{err}");
}

/// Issue 41: `netns-lab.sh up` in another login session (another person,
/// another terminal) refuses to replace a lab it did not make, names whose
/// it is and the fix, and leaves it running; the session that made it may
/// replace it.
#[test]
fn netns_lab_up_refuses_to_replace_a_lab_it_did_not_make() {
    let lab = Lab::up(1);
    let up_again = |other_session: bool| {
        let script = fixture("../../scripts/netns-lab.sh");
        let mut cmd = if other_session {
            let mut c = Command::new("setsid");
            c.arg("-w").arg(&script);
            c
        } else {
            Command::new(&script)
        };
        cmd.args(["up", "1"])
            .env("SCALELAB_LAB_DIR", &lab.dir)
            .env("SCALELAB_LAB_PREFIX", &lab.prefix)
            .output()
            .unwrap()
    };
    let sshd_pid = || std::fs::read_to_string(lab.dir.join("sshd-1.pid")).unwrap();
    let before = sshd_pid();
    let out = up_again(true);
    assert!(!out.status.success(), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("a lab is already up") && err.contains("made by user="),
        "{err}"
    );
    assert!(
        err.contains("SCALELAB_LAB_DIR") && err.contains("down"),
        "{err}"
    );
    assert_eq!(sshd_pid(), before, "the lab is left alone");
    let pid: u32 = before.trim().parse().unwrap();
    assert!(
        Path::new(&format!("/proc/{pid}")).exists(),
        "its sshd still runs"
    );
    let namespaces = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(stdout(&namespaces).contains(&format!("{}-h1", lab.prefix)));
    // The session that made it replaces it, as before.
    let out = up_again(false);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_ne!(sshd_pid(), before, "a new lab");
}

/// On a failed assertion, kills the `netns-lab.sh up` the test started if
/// it was not yet reaped (so its PID is still its own), then takes its lab
/// down (`Lab`'s drop).
struct UpKilledThenDown {
    pid: i32,
    reaped: bool,
    _lab: Lab,
}

impl Drop for UpKilledThenDown {
    fn drop(&mut self) {
        if std::thread::panicking() && !self.reaped {
            // SAFETY: kill(2) on the PID of the test's child, not yet reaped.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
    }
}

/// Issue 46 (left undone there): a SIGTERM or Ctrl-C in the middle of
/// `netns-lab.sh up` left 7 namespaces and 4 sshd behind. `up` now takes
/// down what it had made: no namespace of its prefix, no sshd of its
/// config and no lab directory are left, and it exits non-zero.
#[test]
fn a_signal_during_netns_lab_up_leaves_no_namespace_or_sshd() {
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("lab");
        let prefix = format!("k{}-{signal}", std::process::id() % 100_000);
        let mut command = Command::new(fixture("../../scripts/netns-lab.sh"));
        command
            .args(["up", "8"])
            .env("SCALELAB_LAB_DIR", &dir)
            .env("SCALELAB_LAB_PREFIX", &prefix)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        // The script must be able to trap the signal: a shell started with
        // SIGINT ignored (a suite run as a background job of a shell
        // without job control) cannot trap it, and `up` then ran to its
        // end (exit 0). So the child gets the default disposition.
        // SAFETY: signal(2) only, between fork and exec.
        let mut child = unsafe {
            command.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
                Ok(())
            })
        }
        .spawn()
        .unwrap();
        // Should an assertion below fail, the lab is still taken down: the
        // script is killed, then `down` runs (`Lab`'s drop).
        let mut down = UpKilledThenDown {
            pid: child.id() as i32,
            reaped: false,
            _lab: Lab {
                dir: dir.clone(),
                prefix: prefix.clone(),
                ssh_command: String::new(),
            },
        };
        // Wait until it is halfway: the bridge and at least two hosts made.
        let listed = dir.join("namespaces");
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::fs::read_to_string(&listed).map_or(0, |t| t.lines().count()) < 3 {
            assert!(Instant::now() < deadline, "up made no hosts in 60 s");
            assert!(child.try_wait().unwrap().is_none(), "up ended early");
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: kill(2) on the PID of a child this test spawned and has
        // not yet waited for, so the PID is still its own.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let out = child.wait_with_output().unwrap();
        down.reaped = true;
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        let namespaces = Command::new("ip").args(["netns", "list"]).output().unwrap();
        let left: Vec<&str> = std::str::from_utf8(&namespaces.stdout)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with(&format!("{prefix}-")))
            .collect();
        assert!(
            left.is_empty(),
            "namespaces left after signal {signal}: {left:?}"
        );
        assert!(!dir.exists(), "the lab directory is removed");
        let config = format!("{}/sshd-", dir.display());
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            assert!(
                !(cmdline.contains("sshd") && cmdline.contains(&config)),
                "an sshd of the lab is left: {cmdline}"
            );
        }
    }
}

/// Issue 46 item 4.5: `recipes/seed003-three-os.toml` run without the lab
/// sent ssh to 198.18.0.11-14 over the default route. A host in
/// 198.18.0.0/15 is benchmark-only: from this machine's own namespace
/// (no lab's veth to it) the run is refused before any ssh starts, naming
/// the route it would take and `scripts/netns-lab.sh up`.
#[test]
fn a_benchmark_range_host_without_the_lab_is_refused_before_any_ssh() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ssh-ran");
    let ssh = dir.path().join("ssh");
    std::fs::write(
        &ssh,
        format!("#!/bin/sh\ntouch '{}'\nexit 255\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = crate::support::scalelab()
        .current_dir(dir.path())
        .env("SCALELAB_SSH_COMMAND", &ssh)
        .args(["--store", "s.sqlite", "run"])
        .arg(fixture("../../recipes/seed003-three-os.toml"))
        .args(["--quick", "-o", "r.html"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("198.18.0.0/15, the benchmark range"), "{err}");
    assert!(err.contains("scripts/netns-lab.sh up"), "{err}");
    assert!(err.contains("no lab is up"), "{err}");
    assert!(!marker.exists(), "ssh was started: {err}");
}
