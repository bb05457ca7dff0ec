//! Interruptions, leases and resume (issue 9, defects 1, 5 and 6), with the
//! real binary and a real nginx.

use crate::support::run::{count_trials, nginx_pid, signal, spawn_quiet, wait_for, Lab};
use crate::support::{run as scalelab_run, stderr, stdout};
use scalelab::store::{RunEventKind, Store, TrialStatus};
use std::time::Duration;

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
    let lab = Lab::new(
        "[sweep]\nconnections = [2, 4]\n[trials]\nduration = \"2s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\nrestart = \"never\"\n",
    );
    let child = spawn_quiet(lab.run());
    assert!(
        wait_for(60, || count_trials(&lab.store) == 1),
        "first trial"
    );
    std::thread::sleep(Duration::from_millis(600)); // into trial 2's window
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let hint = format!("scalelab --store {} run", lab.store.display());
    assert!(
        stderr(&out).contains(&hint),
        "the hint names the store: {}",
        stderr(&out)
    );

    let s = Store::open(&lab.store, scalelab::catalog()).unwrap();
    let before = s.load_run("latest").unwrap();
    assert_eq!(
        before.trials.len(),
        1,
        "the interrupted trial is not a trial"
    );
    assert_eq!(before.run.status.as_str(), "interrupted");
    let events = s.run_events(before.run.id).unwrap();
    let ev = events
        .iter()
        .find(|e| e.kind == RunEventKind::TrialInterrupted)
        .expect("the interruption is a run event");
    // The interrupted trial is at the point the stored one is not (the
    // points run in a random order).
    let other = 1 - before.trials[0].point.index;
    assert_eq!((ev.point_index, ev.trial), (Some(other), Some(1)));
    assert!(ev.detail.contains("measured window"), "{}", ev.detail);
    assert!(list_line(&lab.store, before.run.id).contains("interrupted (resumable)"));

    let out = lab.resume(before.run.id).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let after = Store::open(&lab.store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert_eq!(after.trials.len(), 2, "resume ran the interrupted trial");
    for t in &after.trials {
        assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
        let secs = t.measurement.as_ref().unwrap().duration_s.0;
        assert!(secs > 1.9, "a full 2 s window, not {secs}");
    }
}

#[test]
fn sigterm_in_warmup_stores_no_failed_trial() {
    let lab = Lab::new(
        "[sweep]\nconnections = [2]\n[trials]\nduration = \"300ms\"\nwarmup = \"4s\"\nmin = 1\nmax = 1\n",
    );
    let child = spawn_quiet(lab.run());
    let work = lab.work();
    assert!(wait_for(30, || nginx_pid(&work).is_some()), "nginx started");
    std::thread::sleep(Duration::from_millis(1000)); // inside the 4 s warmup
    signal(&child, libc::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let s = Store::open(&lab.store, scalelab::catalog()).unwrap();
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
    let lab = Lab::new(
        "[sweep]\nconnections = [1, 2, 3, 4]\n[trials]\nduration = \"500ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\nrestart = \"never\"\n",
    );
    let mut first = spawn_quiet(lab.run());
    assert!(wait_for(60, || count_trials(&lab.store) >= 1));
    let id = lab.latest();
    assert!(
        list_line(&lab.store, id).contains(" running "),
        "live: {}",
        list_line(&lab.store, id)
    );
    first.kill().unwrap(); // SIGKILL: the lease stays behind, its owner is gone
    first.wait().unwrap();
    assert!(
        list_line(&lab.store, id).contains("interrupted (resumable)"),
        "{}",
        list_line(&lab.store, id)
    );

    let resume = || lab.resume(id);
    let a = spawn_quiet(resume());
    assert!(wait_for(30, || list_line(&lab.store, id).contains(" running ")));
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
    let data = Store::open(&lab.store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert_eq!(data.trials.len(), 4, "each trial exactly once");
    assert!(list_line(&lab.store, id).contains("finished"));
}

#[test]
fn resume_refuses_a_recipe_that_changes_the_measurement() {
    let body = "[sweep]\nconnections = [2]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n\
                [quick]\ntrials = { duration = \"150ms\" }\n";
    let lab = Lab::new(body);
    let out = lab.run().output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let id = lab.latest();

    std::fs::write(
        &lab.exp,
        std::fs::read_to_string(&lab.exp)
            .unwrap()
            .replace("\"300ms\"", "\"500ms\""),
    )
    .unwrap();
    let out = lab.resume(id).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("trials.duration: the run has 300ms, this file gives 500ms"),
        "{}",
        stderr(&out)
    );

    std::fs::write(
        &lab.exp,
        std::fs::read_to_string(&lab.exp)
            .unwrap()
            .replace("\"500ms\"", "\"300ms\""),
    )
    .unwrap();
    let out = lab.resume(id).arg("--quick").output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--quick: the run has no --quick"),
        "{}",
        stderr(&out)
    );

    let out = lab.resume(id).output().unwrap();
    assert!(
        out.status.success(),
        "an unchanged recipe resumes: {}",
        stderr(&out)
    );
    assert_eq!(count_trials(&lab.store), 1);
}

#[test]
fn resume_accepts_a_new_name() {
    let body = "[sweep]\nconnections = [2]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n";
    let lab = Lab::new(body);
    let out = lab.run().output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let id = lab.latest();
    let text = std::fs::read_to_string(&lab.exp).unwrap();
    assert!(text.contains("name = \"it\""));
    std::fs::write(
        &lab.exp,
        text.replace("name = \"it\"", "name = \"renamed\""),
    )
    .unwrap();
    let out = lab.resume(id).output().unwrap();
    assert!(
        out.status.success(),
        "docs/experiment-format.md: the name may change on resume: {}",
        stderr(&out)
    );
}

/// Issue 46 item 4.1: a `[trials] runs = 3` recipe killed in its second
/// repeat could not be resumed (`--resume` was refused, and its advice,
/// `runs = 1`, was then refused as a changed recipe). Now `--resume` of the
/// killed run finishes it and starts the third, with the group's label,
/// and prints the drift over all three.
#[test]
fn resume_of_a_killed_repeat_finishes_its_group_of_three() {
    let lab = Lab::new(
        "[sweep]\nconnections = [2, 3]\n[trials]\nduration = \"400ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\nruns = 3\nrestart = \"never\"\n",
    );
    let mut first = spawn_quiet(lab.run());
    // The second run's row is inserted before its group is written (a
    // second statement): wait for both, or a kill between them finds no
    // group (a fresh clone's suite saw it once).
    let grouped = || {
        Store::open(&lab.store, scalelab::catalog()).is_ok_and(|s| {
            s.list_runs().unwrap_or_default().len() == 2
                && s.repeat_group(lab.latest()).is_ok_and(|g| g.is_some())
        })
    };
    assert!(wait_for(120, grouped), "the second repeat started");
    let second = lab.latest();
    first.kill().unwrap(); // SIGKILL, in repeat 2 of 3
    first.wait().unwrap();
    let s = Store::open(&lab.store, scalelab::catalog()).unwrap();
    let group = s.repeat_group(second).unwrap().expect("stored as a group");
    assert_eq!((group.repeats, group.members.len()), (3, 2));
    assert_eq!(group.unfinished(), vec![second]);
    let label = s.run(group.first).unwrap().label;

    let out = lab.resume(second).output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("runs = 1"), "{err}");
    assert!(
        err.contains("continuing 1 unfinished and starting 1 more"),
        "{err}"
    );
    assert!(stdout(&out).contains("3 repeats of"), "{}", stdout(&out));
    let s = Store::open(&lab.store, scalelab::catalog()).unwrap();
    let group = s.repeat_group(second).unwrap().unwrap();
    assert_eq!(group.members.len(), 3, "{group:?}");
    assert!(group.unfinished().is_empty(), "{group:?}");
    for (id, _) in &group.members {
        let data = s.load_run(&id.to_string()).unwrap();
        assert_eq!(data.run.label, label, "one label for the group");
        assert_eq!(data.trials.len(), 2, "run {id}: each point once");
        assert!(data.trials.iter().all(|t| t.status == TrialStatus::Ok));
    }
    // Resuming a finished group runs nothing more.
    let out = lab.resume(second).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(s.list_runs().unwrap().len(), 3);
}
