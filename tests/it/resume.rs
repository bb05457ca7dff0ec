//! Interruptions, leases and resume (issue 9, defects 1, 5 and 6), with the
//! real binary and a real nginx.

use crate::support::run::{count_trials, experiment, nginx_pid, run_cmd, signal, wait_for};
use crate::support::{run as scalelab_run, stderr, stdout};
use scalelab::store::{RunEventKind, Store, TrialStatus};
use std::process::Stdio;
use std::time::Duration;

fn quiet(mut cmd: std::process::Command) -> std::process::Child {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The `list` line of run `id`.
fn list_line(store: &std::path::Path, id: i64) -> String {
    let out = scalelab_run(&["--store", store.to_str().unwrap(), "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&id.to_string()))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn sigint_in_the_measured_window_stores_no_trial_and_resume_reruns_it() {
    let dir = tempfile::tempdir().unwrap();
    let exp = experiment(
        dir.path(),
        "[sweep]\nconnections = [2, 4]\n[trials]\nduration = \"2s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\nrestart = \"never\"\n",
    );
    let store = dir.path().join("s.sqlite");
    let child = quiet(run_cmd(dir.path(), &store, &exp));
    assert!(wait_for(60, || count_trials(&store) == 1), "first trial");
    std::thread::sleep(Duration::from_millis(600)); // into trial 2's window
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let hint = format!("scalelab --store {} run", store.display());
    assert!(
        stderr(&out).contains(&hint),
        "the hint names the store: {}",
        stderr(&out)
    );

    let s = Store::open(&store).unwrap();
    let before = s.load_run("latest").unwrap();
    assert_eq!(
        before.trials.len(),
        1,
        "the interrupted trial is not a trial"
    );
    assert_eq!(before.run.status, "interrupted");
    let events = s.run_events(before.run.id).unwrap();
    let ev = events
        .iter()
        .find(|e| e.kind == RunEventKind::TrialInterrupted)
        .expect("the interruption is a run event");
    assert_eq!((ev.point_index, ev.trial), (Some(1), Some(1)));
    assert!(ev.detail.contains("measured window"), "{}", ev.detail);
    assert!(list_line(&store, before.run.id).contains("interrupted (resumable)"));

    let out = run_cmd(dir.path(), &store, &exp)
        .args(["--resume", &before.run.id.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let after = Store::open(&store).unwrap().load_run("latest").unwrap();
    assert_eq!(after.trials.len(), 2, "resume ran the interrupted trial");
    for t in &after.trials {
        assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
        let secs = t.measurement.as_ref().unwrap().duration_s;
        assert!(secs > 1.9, "a full 2 s window, not {secs}");
    }
}

#[test]
fn sigterm_in_warmup_stores_no_failed_trial() {
    let dir = tempfile::tempdir().unwrap();
    let exp = experiment(
        dir.path(),
        "[sweep]\nconnections = [2]\n[trials]\nduration = \"300ms\"\nwarmup = \"4s\"\nmin = 1\nmax = 1\n",
    );
    let store = dir.path().join("s.sqlite");
    let child = quiet(run_cmd(dir.path(), &store, &exp));
    let work = dir.path().join("work");
    assert!(wait_for(30, || nginx_pid(&work).is_some()), "nginx started");
    std::thread::sleep(Duration::from_millis(1000)); // inside the 4 s warmup
    signal(&child, libc::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let s = Store::open(&store).unwrap();
    let data = s.load_run("latest").unwrap();
    assert!(data.trials.is_empty(), "stored: {:?}", data.trials);
    let events = s.run_events(data.run.id).unwrap();
    assert!(
        events.iter().any(|e| e.detail.contains("warmup")),
        "{events:?}"
    );
}

#[test]
fn a_killed_run_is_listed_resumable_and_a_second_live_resume_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let exp = experiment(
        dir.path(),
        "[sweep]\nconnections = [1, 2, 3, 4]\n[trials]\nduration = \"500ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\nrestart = \"never\"\n",
    );
    let store = dir.path().join("s.sqlite");
    let mut first = quiet(run_cmd(dir.path(), &store, &exp));
    assert!(wait_for(60, || count_trials(&store) >= 1));
    let id = Store::open(&store).unwrap().resolve_run("latest").unwrap();
    assert!(
        list_line(&store, id).contains(" running "),
        "live: {}",
        list_line(&store, id)
    );
    first.kill().unwrap(); // SIGKILL: the lease stays behind, its owner is gone
    first.wait().unwrap();
    assert!(
        list_line(&store, id).contains("interrupted (resumable)"),
        "{}",
        list_line(&store, id)
    );

    let resume = || {
        let mut cmd = run_cmd(dir.path(), &store, &exp);
        cmd.args(["--resume", &id.to_string()]);
        cmd
    };
    let a = quiet(resume());
    assert!(wait_for(30, || list_line(&store, id).contains(" running ")));
    let b = resume().output().unwrap();
    assert_eq!(b.status.code(), Some(2), "{}", stderr(&b));
    let msg = stderr(&b);
    assert!(
        msg.contains(&format!(
            "run {id} is being run right now by scalelab PID {}",
            a.id()
        )),
        "{msg}"
    );
    assert!(!msg.contains("UNIQUE"), "{msg}");
    let out = a.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let data = Store::open(&store).unwrap().load_run("latest").unwrap();
    assert_eq!(data.trials.len(), 4, "each trial exactly once");
    assert!(list_line(&store, id).contains("finished"));
}

#[test]
fn resume_refuses_a_recipe_that_changes_the_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let body = "[sweep]\nconnections = [2]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n\
                [quick]\ntrials = { duration = \"150ms\" }\n";
    let exp = experiment(dir.path(), body);
    let store = dir.path().join("s.sqlite");
    let out = run_cmd(dir.path(), &store, &exp).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let id = Store::open(&store)
        .unwrap()
        .resolve_run("latest")
        .unwrap()
        .to_string();

    std::fs::write(
        &exp,
        std::fs::read_to_string(&exp)
            .unwrap()
            .replace("\"300ms\"", "\"500ms\""),
    )
    .unwrap();
    let out = run_cmd(dir.path(), &store, &exp)
        .args(["--resume", &id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("trials.duration: the run has 300ms, this file gives 500ms"),
        "{}",
        stderr(&out)
    );

    std::fs::write(
        &exp,
        std::fs::read_to_string(&exp)
            .unwrap()
            .replace("\"500ms\"", "\"300ms\""),
    )
    .unwrap();
    let out = run_cmd(dir.path(), &store, &exp)
        .args(["--resume", &id, "--quick"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--quick: the run has no --quick"),
        "{}",
        stderr(&out)
    );

    let out = run_cmd(dir.path(), &store, &exp)
        .args(["--resume", &id])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "an unchanged recipe resumes: {}",
        stderr(&out)
    );
    assert_eq!(count_trials(&store), 1);
}
