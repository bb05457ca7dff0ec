//! The runner end to end with the real binary and a real nginx: stored
//! trials, a run killed and resumed, a server killed mid-trial.

use crate::support::run::{count_trials, nginx_pid, Lab};
use crate::support::stderr;
use scalelab::store::{Store, TrialStatus};
use std::time::{Duration, Instant};

#[test]
fn a_run_stores_every_trial_and_reports() {
    let lab = Lab::new(
        "[sweep]\nconnections = [2, 8]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 2\nmax = 2\n\
         [[system]]\nlabel = \"one\"\nserver = { worker_processes = 1 }\n\
         [[system]]\nlabel = \"two\"\nserver = { worker_processes = 2 }\n",
    );
    let html = lab.dir.path().join("r.html");
    let out = lab
        .run()
        .args(["-o", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let data = Store::open(&lab.store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert_eq!(data.trials.len(), 2 * 2 * 2);
    assert!(
        data.trials.iter().all(|t| t.status == TrialStatus::Ok),
        "{:?}",
        data.trials
    );
    // Interleaved: each round runs both systems (in the round's random
    // order), round after round at one point.
    for round in data.trials.chunks(2) {
        let mut systems: Vec<&str> = round.iter().map(|t| t.system.as_str()).collect();
        systems.sort_unstable();
        assert_eq!(systems, ["one", "two"], "{:?}", data.trials);
        assert_eq!(round[0].point.index, round[1].point.index);
        assert_eq!(round[0].trial, round[1].trial);
    }
    assert_eq!(data.run.status.as_str(), "finished");
    assert!(data
        .run
        .server_version
        .as_deref()
        .unwrap_or("")
        .starts_with("nginx/"));
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
    // Watchable: the run's length up front, each trial out of its budget;
    // and, with no terminal attached, plain lines with no escape codes.
    let (text, log) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    // The estimate is the library's, trial overhead and server starts in.
    let exp = scalelab::recipe::Experiment::load(&lab.exp, false).unwrap();
    let sentence = scalelab::runner::estimate::Estimate::of(&exp).sentence();
    assert!(
        sentence.contains(": 2 points x 2 systems x 2 trials of 900ms, server starts "),
        "{sentence}"
    );
    assert!(log.contains(&sentence), "{log}");
    assert_eq!(log.matches(" #1/2 ").count(), 4, "{log}");
    assert_eq!(log.matches(" #2/2 ").count(), 4, "{log}");
    assert!(
        !log.contains('\x1b') && !text.contains('\x1b'),
        "{log}{text}"
    );
    assert!(!log.contains('\r'), "no bar redraws in a log: {log}");
    // Its JSON export follows the documented schema.
    let store = lab.store.to_string_lossy();
    let export = crate::support::run(&["--store", &store, "export", "latest", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&export.stdout).expect("JSON");
    let bad = crate::support::json_schema::violations(&crate::support::export_schema(), &doc);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn a_killed_run_loses_nothing_and_resumes() {
    let lab = Lab::new(
        "[sweep]\nconnections = [1, 2, 3, 4]\n[trials]\nduration = \"400ms\"\nwarmup = \"0s\"\nmin = 2\nmax = 2\nrestart = \"never\"\n",
    );
    let mut child = lab
        .run()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while count_trials(&lab.store) < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL: no chance to clean up or flush
    child.wait().unwrap();
    let before = Store::open(&lab.store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert!(
        before.trials.len() >= 3 && before.trials.len() < 8,
        "killed mid-run: {}",
        before.trials.len()
    );
    assert_eq!(before.run.status.as_str(), "running");

    let out = lab.resume(before.run.id).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let after = Store::open(&lab.store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert_eq!(after.run.id, before.run.id);
    assert_eq!(after.trials.len(), 8, "every point and trial exactly once");
    for t in &before.trials {
        assert!(after.trials.contains(t), "trial {} kept as it was", t.id);
    }
    assert_eq!(after.run.status.as_str(), "finished");
}

#[test]
fn a_server_killed_mid_trial_fails_that_trial_and_the_sweep_goes_on() {
    let lab = Lab::new(
        "[sweep]\nconnections = [4, 8]\n[trials]\nduration = \"2s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\nrestart = \"per_trial\"\n",
    );
    let child = lab
        .run()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The first nginx master, found by the pid file in its private run directory.
    let deadline = Instant::now() + Duration::from_secs(30);
    let master = loop {
        if let Some(pid) = nginx_pid(&lab.work()) {
            break pid;
        }
        assert!(Instant::now() < deadline, "nginx never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(700));
    let workers = scalelab::sys::process::children_of(master);
    for pid in std::iter::once(master).chain(workers) {
        scalelab::sys::process::signal(pid, libc::SIGKILL);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "some trials failed: {}",
        stderr(&out)
    );
    let data = Store::open(&lab.store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert_eq!(data.trials.len(), 2, "the sweep went on");
    let first = &data.trials[0];
    assert_eq!(first.status, TrialStatus::Failed);
    assert!(
        first.error.as_deref().unwrap_or("").contains("server died"),
        "{:?}",
        first.error
    );
    assert!(
        first.measurement.is_some(),
        "what was measured before the death is kept"
    );
    assert_eq!(
        data.trials[1].status,
        TrialStatus::Ok,
        "{:?}",
        data.trials[1].error
    );
}

/// A real nginx with too few `worker_connections` for the load drops
/// connections: its point is "not comparable" in the terminal, the report
/// and `compare`, and the ranking leaves it out. It was the run's only
/// comparison, so nothing is comparable and the run exits 5.
#[test]
fn errors_above_the_threshold_make_a_point_not_comparable() {
    let lab = Lab::new(
        "[sweep]\nconnections = [48]\n[trials]\nduration = \"400ms\"\nwarmup = \"0s\"\nmin = 2\nmax = 2\n\
         [[system]]\nlabel = \"roomy\"\nbaseline = true\nserver = { worker_connections = 1024 }\n\
         [[system]]\nlabel = \"cramped\"\nserver = { worker_connections = 16 }\n",
    );
    let html = lab.dir.path().join("r.html");
    let out = lab
        .run()
        .args(["-o", html.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(5), "{}{text}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing is comparable: 1 of 1 comparisons against the baseline"),
        "{}",
        stderr(&out)
    );
    let data = Store::open(&lab.store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    let cramped_errors: u64 = data
        .trials
        .iter()
        .filter(|t| t.system == "cramped")
        .filter_map(|t| t.measurement.as_ref())
        .map(|m| m.errors.total())
        .sum();
    assert!(
        cramped_errors > 0,
        "nginx with 16 worker_connections dropped nothing"
    );
    let row = text
        .lines()
        .find(|l| l.contains("cramped"))
        .unwrap_or_else(|| panic!("no cramped row:\n{text}"));
    assert!(
        row.contains(&format!("✗ not comparable: {cramped_errors} errors (")),
        "{text}"
    );
    // The errors column names the kinds, and each trial's errors were
    // said, one line each, as they happened.
    let kinds = data
        .trials
        .iter()
        .filter(|t| t.system == "cramped")
        .filter_map(|t| t.measurement.as_ref())
        .fold(
            scalelab::load::result::ErrorCounts::default(),
            |mut sum, m| {
                sum.merge(&m.errors);
                sum
            },
        );
    assert!(row.contains(&kinds.describe()), "{row}");
    let log = stderr(&out);
    let said: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("  ! cramped") && l.contains(" attempts): "))
        .collect();
    assert!(!said.is_empty(), "{log}");
    assert!(
        text.contains("1 point left out as not comparable: errors above 0.1% of requests"),
        "{text}"
    );
    let report = std::fs::read_to_string(&html).unwrap();
    assert!(report.contains(r#"excluded""#), "no red row in the report");
    assert!(report.contains("not comparable: "));
    // A run named twice is refused: it would be compared with itself.
    let store = lab.store.to_str().unwrap();
    let cmp = crate::support::run(&["--store", store, "compare", "latest", "latest"]);
    assert_eq!(cmp.status.code(), Some(2), "{}", stderr(&cmp));
    assert!(
        stderr(&cmp).contains("are the same run"),
        "{}",
        stderr(&cmp)
    );
}
