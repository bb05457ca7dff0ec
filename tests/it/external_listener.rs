//! An `external` server given no `pid` (issue 46, 3.1): a real nginx that
//! the test starts itself, in its temporary directory on a free loopback
//! port, is found by the process that listens on the URL's port; its
//! master and workers are the server, so their CPU is the server's, not
//! background load; and a real 50% slowdown of it (`limit_req` at 2000 r/s,
//! then 1000 r/s) is a regression to `check`, not "rerun it on a quiet
//! machine".

use crate::support::run::run_cmd;
use crate::support::{scalelab, stderr, stdout};
use scalelab::store::{RunData, Store, TrialStatus};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An nginx started by the test (not by the recipe), stopped by its PID.
struct Nginx {
    dir: PathBuf,
    port: u16,
    master: u32,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Nginx {
    /// `workers` workers serving `dir/www/index.html`, with `http` in the
    /// http block and `location` in its location.
    fn start(dir: &Path, port: u16, workers: u32, http: &str, location: &str) -> Nginx {
        let www = dir.join("www");
        std::fs::create_dir_all(&www).unwrap();
        std::fs::write(www.join("index.html"), "ok\n").unwrap();
        let d = dir.display();
        let conf = format!(
            "user root;\nworker_processes {workers};\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{ access_log off; {http}\n\
             client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n\
             server {{ listen 127.0.0.1:{port}; location / {{ root {d}/www; {location} }} }} }}\n"
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let master = crate::support::run::start_nginx(dir);
        Nginx {
            dir: dir.to_path_buf(),
            port,
            master,
        }
    }

    /// The master and its workers.
    fn processes(&self) -> Vec<u32> {
        let mut out = vec![self.master];
        out.extend(scalelab::sys::process::children_of(self.master));
        out
    }

    /// User + system seconds the master and its workers have used.
    fn cpu_s(&self) -> f64 {
        let ticks: u64 = self
            .processes()
            .iter()
            .filter_map(|&p| scalelab::procfs::pid::stat(p))
            .map(|s| s.own_ticks())
            .sum();
        ticks as f64 / 100.0
    }

    /// The recipe of this nginx as an `external` server without `pid`,
    /// `pid_command`, `start` or `stop`: one point, `trials` trials of 1 s.
    fn recipe(&self, name: &str, trials: u32) -> PathBuf {
        let text = format!(
            "name = \"{name}\"\n[server]\nkind = \"external\"\nurl = \"http://127.0.0.1:{port}/\"\n\
             [load]\nkind = \"http\"\n[sweep]\nconnections = [4]\n\
             [trials]\nduration = \"1s\"\nwarmup = \"200ms\"\nmin = {trials}\nmax = {trials}\n",
            port = self.port
        );
        let path = self.dir.join(format!("{name}.toml"));
        std::fs::write(&path, text).unwrap();
        path
    }

    /// SIGQUIT to the master (SIGKILL after 10 s), then waits until its
    /// workers are gone too.
    fn stop(&self) {
        use scalelab::sys::process::{stop_pid, wait_gone};
        let workers = scalelab::sys::process::children_of(self.master);
        stop_pid(self.master, libc::SIGQUIT, Duration::from_secs(10));
        for w in workers {
            // A worker its master left behind (the master killed after
            // its grace) is killed by PID, so no test leaves an nginx.
            if !wait_gone(w, Duration::from_secs(5)) {
                scalelab::sys::process::signal(w, libc::SIGKILL);
                wait_gone(w, Duration::from_secs(1));
            }
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.stop();
    }
}

fn latest(store: &Path) -> RunData {
    Store::open(store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap()
}

fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

#[test]
fn an_external_nginx_without_pid_is_found_by_its_port_and_its_cpu_is_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let nginx = Nginx::start(
        dir.path(),
        free_port(),
        2,
        "keepalive_requests 1000000;",
        "",
    );
    let store = dir.path().join("s.sqlite");
    let before = nginx.cpu_s();
    let before_load = load_average();
    let quiet = before_load < 1.0;
    let out = run_cmd(dir.path(), &store, &nginx.recipe("nopid", 2))
        .output()
        .unwrap();
    let used = nginx.cpu_s() - before;
    assert!(matches!(out.status.code(), Some(0 | 5)), "{}", stderr(&out));
    let data = latest(&store);
    let ok: Vec<_> = data
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Ok)
        .collect();
    assert!(!ok.is_empty(), "{:?}", data.trials);
    let mut attributed = 0.0;
    for t in &ok {
        let p = t.probe.as_ref().expect("a probe summary");
        // Found by its listener: the master, whose tree holds both workers.
        assert_eq!(p.server_pid, Some(nginx.master), "{:?}", p.warnings);
        assert_eq!(p.processes, Some(3), "master and 2 workers");
        let b = p.background.expect("a background");
        assert!(!b.server_unknown, "{b:?}");
        let server = p.server_cpu_s.expect("the server's CPU");
        assert!(
            server > 0.05,
            "nginx served {} requests on {server} CPU-s",
            t.measurement.as_ref().unwrap().requests
        );
        attributed += server;
        if quiet {
            assert!(!b.noisy, "a quiet machine, yet noisy: {}", b.describe());
        }
    }
    eprintln!(
        "{} ok trials: probe gave the server {attributed:.2} CPU-s; nginx's own ticks {used:.2} \
         over the whole run; load average before {:.2}",
        ok.len(),
        before_load
    );
    // What the probe gave the server is what nginx's own ticks say it
    // used in the windows: no more than the whole run (warmups and gaps
    // included, plus a tick of rounding per process and sample).
    assert!(
        attributed <= used + 0.2,
        "probe {attributed:.2} CPU-s, nginx {used:.2}"
    );
    assert!(
        attributed >= 0.3 * used,
        "probe {attributed:.2} CPU-s, nginx {used:.2}"
    );
}

/// `limit_req` delays, never refuses: a steady `rate` per second on the
/// static file (servers.md).
fn limited(rate: u32) -> (String, String) {
    (
        format!("limit_req_zone $binary_remote_addr zone=z:1m rate={rate}r/s;"),
        "limit_req zone=z burst=100000;".to_string(),
    )
}

#[test]
fn check_of_a_real_halving_of_an_external_nginx_without_pid_is_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let run_three = |store: &Path, rate: u32| {
        let (http, location) = limited(rate);
        let nginx = Nginx::start(dir.path(), port, 1, &http, &location);
        let out = run_cmd(dir.path(), store, &nginx.recipe("halved", 3))
            .args(["--repeat", "3"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    let base = dir.path().join("base.sqlite");
    let cand = dir.path().join("s.sqlite");
    run_three(&base, 2000);
    run_three(&cand, 1000);
    let load = load_average();
    let out = scalelab()
        .args(["--store", cand.to_str().unwrap(), "check"])
        .arg(&base)
        .arg("latest")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let said = format!("{}{}", stdout(&out), stderr(&out));
    eprintln!(
        "check exited {:?} at load average {load}: {said}",
        out.status.code()
    );
    // Every trial of the six runs: the server found, its background known.
    let trials: Vec<_> = [&base, &cand].iter().flat_map(|s| all_trials(s)).collect();
    for p in trials.iter().filter_map(|t| t.probe.as_ref()) {
        assert!(
            p.server_pid.is_some(),
            "the server was found: {:?}",
            p.warnings
        );
        assert!(!p.background.unwrap().server_unknown);
    }
    let noisy = trials
        .iter()
        .filter_map(|t| t.probe.as_ref()?.background)
        .filter(|b| b.noisy)
        .count();
    eprintln!(
        "{noisy} of {} trials ran beside background load",
        trials.len()
    );
    match out.status.code() {
        Some(1) => {}
        // The machine is shared by other testers: only where their CPU,
        // the server's taken out, disturbed some trial may the gate say it
        // cannot tell (a rerun, or a baseline drifting too much). On a
        // quiet machine the halving is a regression.
        Some(125) => assert!(noisy > 0, "125 with no noisy trial: {said}"),
        code => panic!("check exited {code:?}: {said}"),
    }
}

/// Every trial of every run in `store`.
fn all_trials(store: &Path) -> Vec<scalelab::store::Trial> {
    let s = Store::open(store, scalelab::catalog()).unwrap();
    s.list_runs()
        .unwrap()
        .iter()
        .flat_map(|r| s.load_run(&r.run.id.to_string()).unwrap().trials)
        .collect()
}
