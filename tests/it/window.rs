//! A window is what it says (issue 24): a scalelab stopped mid-window
//! (Ctrl-Z, then `fg`) stores no number for that window. The trial is a run
//! event naming the stop, the sweep goes on, the run ends resumable and
//! `--resume` measures the trial again. Real binary, real nginx.

use crate::support::run::{count_trials, signal, spawn_quiet, wait_for, Lab};
use crate::support::stderr;
use scalelab::store::{RunEventKind, Store, TrialStatus};
use std::time::Duration;

/// The longest a stored 3 s window may run: the duration, the default 2 s
/// timeout's drain and the runner's 500 ms slack.
const LONGEST_WINDOW_S: f64 = 3.0 + 2.0 + 0.5;

#[test]
fn a_stopped_scalelab_stores_no_number_and_resume_measures_the_trial_again() {
    let lab = Lab::new(
        "[sweep]\nconnections = [2, 4, 8]\n[trials]\nduration = \"3s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\nrestart = \"never\"\n# The test stops the second point it runs: the points in their written\n# order, so that is point 1.\norder = \"sweep\"\n",
    );
    let mut cmd = lab.run();
    // A process group of its own, whose parent (this test) is in another
    // group of the same session, as a shell's job is: the kernel ignores
    // SIGTSTP sent to an orphaned group (the test's own may be one, under
    // CI or `cmd &`), and then nothing would be stopped.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = spawn_quiet(cmd);
    assert!(
        wait_for(60, || count_trials(&lab.store) == 1),
        "first trial"
    );
    std::thread::sleep(Duration::from_millis(600)); // into trial 2's window
    signal(&child, libc::SIGTSTP); // Ctrl-Z: no handler, the default stops it
    std::thread::sleep(Duration::from_millis(4500));
    signal(&child, libc::SIGCONT); // fg
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "not a silent success: {err}");
    assert!(
        err.lines()
            .any(|l| l.trim_start().starts_with("! ") && l.contains("was stopped for")),
        "a `!` line names the stop: {err}"
    );
    assert!(err.contains("--resume"), "the hint to resume: {err}");

    let s = Store::open(&lab.store, scalelab::catalog()).unwrap();
    let before = s.load_run("latest").unwrap();
    assert_eq!(before.run.status.as_str(), "interrupted");
    let points: Vec<u32> = before.trials.iter().map(|t| t.point.index).collect();
    assert_eq!(points, [0, 2], "trial 2 is not stored, the sweep went on");
    let events = s.run_events(before.run.id).unwrap();
    let ev = events
        .iter()
        .find(|e| e.kind == RunEventKind::TrialInterrupted)
        .expect("the stop is a run event");
    assert_eq!((ev.point_index, ev.trial), (Some(1), Some(1)));
    assert!(
        ev.detail.starts_with("scalelab was stopped for"),
        "{}",
        ev.detail
    );

    let out = lab.resume(before.run.id).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let after = Store::open(&lab.store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    let mut points: Vec<u32> = after.trials.iter().map(|t| t.point.index).collect();
    points.sort();
    assert_eq!(points, [0, 1, 2], "every trial exactly once");
    for t in &after.trials {
        assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
        let secs = t.measurement.as_ref().unwrap().duration_s.0;
        assert!(
            (2.9..=LONGEST_WINDOW_S).contains(&secs),
            "point {}: a {secs:.2} s window stored for 3 s",
            t.point.index
        );
    }
}
