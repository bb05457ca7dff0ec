//! Steady windows (issue 47) against real servers:
//!
//! - an nginx whose speed changes inside every window: its worker serves
//!   at its `limit_req` rate (2,000 requests/s) for 400 ms, then is stopped
//!   (SIGSTOP, by PID) for 300 ms, over and over while the run goes on, so
//!   every 2 s window holds changes of level. `limit_req` delays and never
//!   refuses, so the rate is the server's own, whatever the machine runs,
//!   and a stopped worker refuses nothing either: no request fails. (A
//!   config reload switching between two rates, as this test once did,
//!   closed idle keep-alive connections under the client's next request:
//!   0.14% read errors on a loaded machine, and the cell was judged for its
//!   errors instead.) Every trial is marked unsteady, and with
//!   `unsteady = "exclude"` the verdict leaves them out and says how many;
//! - an nginx whose speed does not change (`limit_req` at 2,000/s, never
//!   reloaded), shown by its own `stub_status` counter read every 100 ms:
//!   at least 90% of its trials are steady;
//! - `warmup = "auto"` on PostgreSQL's tpcb-like load after a fresh start
//!   chooses, reports and stores a warm-up within its cap.

use crate::support::run::run_cmd;
use crate::support::stderr;
use scalelab::analysis::steady::Steadiness;
use scalelab::store::{RunData, Store, TrialStatus};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A real nginx serving its file at a `limit_req` rate of 2,000/s.
/// `/status` is its `stub_status`.
struct Nginx {
    dir: PathBuf,
    port: u16,
    master: u32,
}

impl Nginx {
    fn conf(&self) {
        let d = self.dir.display();
        let conf = format!(
            "user root;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 1024; }}\n\
             http {{ access_log off;\n\
             client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n\
             limit_req_zone $binary_remote_addr zone=fast:1m rate=2000r/s;\n\
             server {{ listen 127.0.0.1:{port};\n\
               location / {{ root {d}/www; limit_req zone=fast burst=100000; }}\n\
               location = /status {{ stub_status; }} }} }}\n",
            port = self.port
        );
        std::fs::write(self.dir.join("nginx.conf"), conf).unwrap();
    }

    fn start(dir: &Path) -> Nginx {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::create_dir_all(dir.join("www")).unwrap();
        std::fs::write(dir.join("www/index.html"), "ok\n").unwrap();
        let mut n = Nginx {
            dir: dir.to_path_buf(),
            port,
            master: 0,
        };
        n.conf();
        n.master = crate::support::run::start_nginx(dir);
        n
    }

    /// Stops (SIGSTOP) or resumes (SIGCONT) the workers, by PID.
    fn pause(&self, stopped: bool) {
        let signal = if stopped {
            libc::SIGSTOP
        } else {
            libc::SIGCONT
        };
        for w in scalelab::sys::process::children_of(self.master) {
            // SAFETY: kill(2) on a worker of the master this test started.
            unsafe { libc::kill(w as i32, signal) };
        }
    }

    /// Requests nginx has handled (`stub_status`'s third number).
    fn handled(&self) -> Option<u64> {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.write_all(b"GET /status HTTP/1.0\r\nHost: x\r\n\r\n")
            .ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        let line = text.lines().skip_while(|l| !l.contains("handled")).nth(1)?;
        line.split_whitespace().nth(2)?.parse().ok()
    }

    fn recipe(&self, name: &str, systems: &[&str], trials: u32, extra: &str) -> PathBuf {
        let mut text = format!(
            "name = \"{name}\"\n[server]\nkind = \"external\"\nurl = \"http://127.0.0.1:{port}/\"\n\
             [load]\nkind = \"http\"\n[sweep]\nconnections = [64]\n\
             [trials]\nduration = \"2s\"\nwarmup = \"200ms\"\nmin = {trials}\nmax = {trials}\n{extra}",
            port = self.port
        );
        for (i, s) in systems.iter().enumerate() {
            text += &format!("[[system]]\nlabel = \"{s}\"\nbaseline = {}\n", i == 0);
        }
        let path = self.dir.join(format!("{name}.toml"));
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        use scalelab::sys::process::{stop_pid, wait_gone};
        self.pause(false);
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

fn latest(store: &Path) -> RunData {
    Store::open(store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default()
}

/// Runs `recipe` while a thread stops the server's workers for 300 ms
/// after every 400 ms of serving.
fn run_switching(
    nginx: &Arc<Nginx>,
    dir: &Path,
    store: &Path,
    recipe: &Path,
) -> (Option<i32>, String) {
    let stop = Arc::new(AtomicBool::new(false));
    let switcher = {
        let (n, stop) = (Arc::clone(nginx), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(400));
                n.pause(true);
                std::thread::sleep(Duration::from_millis(300));
                n.pause(false);
            }
        })
    };
    let out = run_cmd(dir, store, recipe).output().unwrap();
    stop.store(true, Ordering::Relaxed);
    switcher.join().unwrap();
    (out.status.code(), stderr(&out))
}

fn ok_trials(data: &RunData) -> Vec<&scalelab::store::Trial> {
    data.trials
        .iter()
        .filter(|t| t.status == TrialStatus::Ok)
        .collect()
}

#[test]
fn a_server_whose_speed_changes_in_every_window_is_marked_and_excluded_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let nginx = Arc::new(Nginx::start(&dir.path().join("nginx")));
    let store = dir.path().join("s.sqlite");
    let recipe = nginx.recipe("mark", &["A"], 4, "");
    let (code, err) = run_switching(&nginx, dir.path(), &store, &recipe);
    assert_eq!(code, Some(0), "{err}");
    let data = latest(&store);
    let ok = ok_trials(&data);
    assert!(ok.len() >= 3, "{err}");
    for t in &ok {
        let w = &t.window;
        assert!(
            w.unsteady(),
            "trial {} was {:?}, buckets {:?}: {err}",
            t.trial,
            w.steadiness_detail,
            t.timeline
        );
        assert!(!w.left_out, "marked, not left out by default");
        assert_eq!(w.bucket_ms, 100);
        let requests = t.measurement.as_ref().unwrap().requests;
        assert_eq!(
            t.timeline.iter().sum::<u64>(),
            requests,
            "buckets sum to the trial"
        );
    }
    assert!(
        err.contains("unsteady window ("),
        "said on the trial's lines: {err}"
    );

    let excl = "unsteady = \"exclude\"\n";
    let recipe = nginx.recipe("exclude", &["A", "B"], 3, excl);
    let (code, err) = run_switching(&nginx, dir.path(), &store, &recipe);
    let data = latest(&store);
    let ok = ok_trials(&data);
    assert!(ok.len() >= 4, "{err}");
    assert!(
        ok.iter().all(|t| t.window.unsteady() && t.window.left_out),
        "buckets {:?}: {err}",
        ok.iter().map(|t| &t.timeline).collect::<Vec<_>>()
    );
    assert!(err.contains("left out of verdicts"), "{err}");
    // Every trial of B left out, the run has no verdict, and says why.
    assert_ne!(code, Some(0), "{err}");
    // (A trial can be client-bound too: it is counted as that.)
    assert!(
        err.contains("left out at 3 of 3 trials (") && err.contains("unsteady) in B"),
        "{err}"
    );
    eprintln!("load average {}", load_average());
}

/// nginx's own rates (requests/s) between reads of its counter 100 ms
/// apart, while `f` runs.
fn counted_while(nginx: &Arc<Nginx>, f: impl FnOnce()) -> Vec<f64> {
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (n, stop) = (Arc::clone(nginx), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                if let Some(c) = n.handled() {
                    seen.push((Instant::now(), c));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            seen
        })
    };
    f();
    stop.store(true, Ordering::Relaxed);
    let seen = reader.join().unwrap();
    seen.windows(2)
        .map(|w| (w[1].1 - w[0].1) as f64 / (w[1].0 - w[0].0).as_secs_f64())
        .collect()
}

#[test]
fn a_server_at_a_fixed_rate_has_at_least_nine_in_ten_steady_trials() {
    let dir = tempfile::tempdir().unwrap();
    let nginx = Arc::new(Nginx::start(&dir.path().join("nginx")));
    let store = dir.path().join("s.sqlite");
    // One trial a run, without a warm-up, so that the server's own counter
    // over each run is over that one window.
    let recipe = nginx.recipe("fixed", &["A"], 1, "").with_extension("toml");
    let text = std::fs::read_to_string(&recipe)
        .unwrap()
        .replace("warmup = \"200ms\"", "warmup = \"0s\"");
    std::fs::write(&recipe, text).unwrap();
    let (mut steady, mut unchanged, mut classes) = (0, 0, Vec::new());
    // Ten windows the server's own counter shows at its limit, from at
    // most 30 runs (a busy machine holds some back).
    for _ in 0..30 {
        if unchanged == 10 {
            break;
        }
        let mut out = None;
        let rates = counted_while(&nginx, || {
            out = Some(run_cmd(dir.path(), &store, &recipe).output().unwrap());
        });
        let out = out.unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        // The reads while it was busy, the two at the window's edges left
        // out: the server's speed did not change when all are at its
        // limit (a busy machine can hold nginx's timers back).
        let busy: Vec<f64> = rates.into_iter().filter(|r| *r > 500.0).collect();
        assert!(busy.len() >= 10, "nginx was read while busy: {busy:?}");
        let inner = &busy[1..busy.len() - 1];
        let at_limit = inner.iter().all(|r| (1800.0..=2200.0).contains(r));
        let data = latest(&store);
        let t = &ok_trials(&data)[0];
        assert!(
            t.timeline.len() >= 20,
            "2 s of 100 ms buckets: {:?}",
            t.timeline
        );
        if at_limit {
            unchanged += 1;
            steady += usize::from(t.window.steadiness == Some(Steadiness::Steady));
            classes.push(t.window.steadiness_detail.clone());
        }
    }
    eprintln!(
        "{steady} of {unchanged} trials steady whose server's own counter stayed at its \
         limit; load average {}; {classes:?}",
        load_average()
    );
    assert!(
        unchanged >= 3,
        "{unchanged} windows of 30 at the server's limit"
    );
    assert!(steady * 10 >= unchanged * 9, "{classes:?}");
}

#[test]
fn an_automatic_warm_up_after_a_postgres_start_is_chosen_reported_and_stored() {
    let dir = tempfile::tempdir().unwrap();
    let recipe = dir.path().join("auto.toml");
    std::fs::write(
        &recipe,
        "name = \"auto\"\n[server]\nkind = \"postgres\"\nfsync = false\n\
         [load]\nkind = \"pg\"\nscale = 1\nscript = \"tpcb-like\"\n\
         [sweep]\nconnections = [4]\n\
         [trials]\nduration = \"1s\"\nwarmup = \"auto\"\nwarmup_max = \"12s\"\nmin = 2\nmax = 2\n\
         restart = \"per_trial\"\n",
    )
    .unwrap();
    let store = dir.path().join("s.sqlite");
    let out = run_cmd(dir.path(), &store, &recipe).output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let data = latest(&store);
    for t in ok_trials(&data) {
        let w = t.window.warmup_s.expect("the warm-up used is stored");
        // Whole steps of 2 s (the window, at least 2 s), within the cap.
        assert!((2.0..=12.0).contains(&w), "{w}");
        assert!((w / 2.0 - (w / 2.0).round()).abs() < 1e-9, "{w}");
        let said = format!("(warm-up {w:.0}s)");
        assert!(err.contains(&said), "the line reports {said}: {err}");
    }
    assert_eq!(ok_trials(&data).len(), 2, "{err}");
    eprintln!("{err}\nload average {}", load_average());
}
