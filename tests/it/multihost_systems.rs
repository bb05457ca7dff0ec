//! A system per server host, in one run (issue 26): systems on their own
//! server hosts of the netns lab (`scripts/netns-lab.sh`), of different
//! server kinds, driven from one client host, their trials interleaved.

use crate::multihost::{run, spawn_run, Lab};
use crate::support::{stderr, stdout};
use scalelab::store::{FailureCause, RunData, Store, TrialStatus};
use std::path::Path;

/// An nginx that the test starts itself on a lab host, as an `external`
/// server is: its own config, with `workers` worker processes and `body`
/// as every reply, logging every request.
fn external_nginx(dir: &Path, addr: &str, workers: u32, body: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let d = dir.display();
    let conf = format!(
        "worker_processes {workers};\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
         user root;\nevents {{ worker_connections 1024; }}\nhttp {{\n\
         access_log {d}/access.log;\nkeepalive_requests 1000000;\n\
         client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;\n\
         fastcgi_temp_path {d}/fastcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n\
         server {{ listen {addr}:8080; location / {{ return 200 \"{body}\"; }} }}\n}}\n"
    );
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    let pid = format!("{d}/nginx.pid");
    format!(
        "kind = \"external\"\nurl = \"http://{addr}:8080/\"\n\
         start = 'nginx -p {d} -c {d}/nginx.conf'\n\
         stop = 'kill -QUIT $(cat {pid}); for i in $(seq 100); do kill -0 $(cat {pid}) 2>/dev/null || break; sleep 0.1; done'\n\
         pid_command = 'cat {pid}'\n"
    )
}

/// Lines of an nginx access log that came from `addr`.
pub(crate) fn lines_from(log: &Path, addr: &str) -> u64 {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with(&format!("{addr} ")))
        .count() as u64
}

fn load(dir: &Path) -> RunData {
    Store::open(&dir.join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap()
}

/// Requests the ok trials of `system` measured.
pub(crate) fn measured(data: &RunData, system: &str) -> u64 {
    data.trials
        .iter()
        .filter(|t| t.system == system && t.status == TrialStatus::Ok)
        .map(|t| t.measurement.as_ref().unwrap().requests)
        .sum()
}

#[test]
fn three_systems_on_three_server_hosts_run_interleaved_and_agree_with_their_logs() {
    // h0 coordinates; h1, h2, h3 are the server hosts; h4 drives the load.
    let lab = Lab::up(4);
    let dir = tempfile::tempdir().unwrap();
    let (ext_a, ext_b) = (dir.path().join("ext-a"), dir.path().join("ext-b"));
    let managed_log = dir.path().join("managed.log");
    let a = external_nginx(&ext_a, "198.18.0.11", 1, "a");
    let b = external_nginx(&ext_b, "198.18.0.12", 2, &"b".repeat(2000));
    let text = format!(
        "name = \"three hosts\"\n[hosts]\nclients = [\"root@198.18.0.14\"]\n\
         [server]\nkind = \"nginx\"\nworker_processes = 1\naccess_log_path = \"{log}\"\n\
         [load]\nkind = \"http\"\npath = \"/\"\n[sweep]\nconnections = [2]\n\
         [trials]\nduration = \"1s\"\nwarmup = \"0s\"\nmin = 2\nmax = 2\n\
         [[system]]\nlabel = \"ext-a\"\nhost = \"root@198.18.0.11\"\n[system.server]\n{a}\
         [[system]]\nlabel = \"ext-b\"\nhost = \"root@198.18.0.12\"\n[system.server]\n{b}\
         [[system]]\nlabel = \"managed\"\nhost = \"root@198.18.0.13\"\n",
        log = managed_log.display()
    );
    let exp = dir.path().join("exp.toml");
    std::fs::write(&exp, text).unwrap();
    let out = run(&lab, dir.path(), &exp);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let data = load(dir.path());
    assert_eq!(data.trials.len(), 6);
    for t in &data.trials {
        assert_eq!(t.status, TrialStatus::Ok, "{}: {:?}", t.system, t.error);
    }
    // Round k runs trial k of every system (interleaved), each round in
    // its own seeded random order (issue 47): rounds in sequence, and
    // each a permutation of the three systems.
    let mut order: Vec<&scalelab::store::Trial> = data.trials.iter().collect();
    order.sort_by_key(|t| (t.started_at, t.id));
    let seen: Vec<(&str, u32)> = order.iter().map(|t| (t.system.as_str(), t.trial)).collect();
    for (round, trials) in seen.chunks(3).enumerate() {
        let mut systems: Vec<&str> = trials.iter().map(|(s, _)| *s).collect();
        systems.sort_unstable();
        assert_eq!(systems, ["ext-a", "ext-b", "managed"], "{seen:?}");
        assert!(
            trials.iter().all(|(_, t)| *t == round as u32 + 1),
            "{seen:?}"
        );
    }
    // Each server host's own log agrees with its system's count, up to the
    // requests in flight at each window's end (one per connection).
    let logs = [
        ("ext-a", ext_a.join("access.log")),
        ("ext-b", ext_b.join("access.log")),
        ("managed", managed_log.clone()),
    ];
    for (system, log) in &logs {
        let (m, l) = (measured(&data, system), lines_from(log, "198.18.0.14"));
        assert!(m > 0, "{system} measured nothing");
        assert!(
            m <= l && l <= m + 2 * 2,
            "{system}: scalelab {m} vs its log {l}"
        );
    }
    // Each system's server ran on its own host, and the trials say which.
    for (system, host) in [
        ("ext-a", "root@198.18.0.11"),
        ("ext-b", "root@198.18.0.12"),
        ("managed", "root@198.18.0.13"),
    ] {
        for t in data.trials.iter().filter(|t| t.system == system) {
            assert_eq!(t.context.server_host.as_deref(), Some(host));
        }
    }
    // The two external nginx differ as configured: their reply sizes.
    let body_of = |system: &str| {
        let t = data.trials.iter().find(|t| t.system == system).unwrap();
        let m = t.measurement.as_ref().unwrap();
        m.bytes / m.requests.max(1)
    };
    assert!(body_of("ext-b") > body_of("ext-a") + 1500);
    // Every server host's fingerprint is stored: the external ones' from
    // uname, the managed one's from its agent.
    let facts = data.run.environment_facts();
    let hosts = &facts["hosts"];
    assert!(hosts["root@198.18.0.11"]["uname"].is_string(), "{hosts}");
    assert!(hosts["root@198.18.0.12"]["uname"].is_string(), "{hosts}");
    assert!(hosts["root@198.18.0.13"]["kernel_release"].is_string());
    assert!(hosts["root@198.18.0.14"]["kernel_release"].is_string());
    // Nothing is left on the server hosts.
    for h in 1..=3 {
        assert!(lab.processes(h, "nginx").is_empty(), "nginx left on h{h}");
    }
}

#[test]
fn a_server_host_that_drops_out_fails_its_own_systems_trials_and_the_others_go_on() {
    // h1 and h2 are server hosts; h3 drives the load.
    let lab = Lab::up(3);
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"drop out\"\n[hosts]\nclients = [\"root@198.18.0.13\"]\n\
         [server]\nkind = \"nginx\"\nworker_processes = 1\n\
         [load]\nkind = \"http\"\npath = \"/\"\n[sweep]\nconnections = [2]\n\
         [trials]\nduration = \"2s\"\nwarmup = \"0s\"\nmin = 3\nmax = 3\n\
         [[system]]\nlabel = \"gone\"\nhost = \"root@198.18.0.11\"\n\
         [[system]]\nlabel = \"stays\"\nhost = \"root@198.18.0.12\"\n";
    let exp = dir.path().join("exp.toml");
    std::fs::write(&exp, text).unwrap();
    let child = spawn_run(&lab, dir.path(), &exp);
    lab.agent_in_a_trial(1);
    // h1 drops out: its sshd and every session through it end (the agent
    // with them), and no new connection is accepted.
    for pid in lab.processes(1, "sshd") {
        // SAFETY: kill(2) on a PID of the lab's own namespace.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    let data = load(dir.path());
    let of = |s: &str| -> Vec<&scalelab::store::Trial> {
        data.trials.iter().filter(|t| t.system == s).collect()
    };
    assert_eq!(of("stays").len(), 3, "{err}");
    for t in of("stays") {
        assert_eq!(t.status, TrialStatus::Ok, "{:?}\n{err}", t.error);
    }
    let gone = of("gone");
    assert_eq!(gone.len(), 3, "{err}");
    let failed: Vec<_> = gone
        .iter()
        .filter(|t| t.status == TrialStatus::Failed)
        .collect();
    assert!(failed.len() >= 2, "{gone:?}\n{err}");
    for t in failed {
        let reason = t.error.as_deref().unwrap_or("");
        assert!(reason.starts_with("lost host root@198.18.0.11"), "{reason}");
        assert_eq!(t.failure_cause, Some(FailureCause::LostHost));
    }
    assert!(err.contains("the trials of gone fail from now on"), "{err}");
    assert!(lab.processes(1, "nginx").is_empty());
    assert!(lab.processes(2, "nginx").is_empty());
}
