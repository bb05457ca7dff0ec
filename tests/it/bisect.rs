//! `scalelab check` under a real `git bisect run` (issue 36): a gate that
//! checked nothing skips every revision, an error that is not about the
//! candidate (a typo in a store's name, a corrupt store, a bad flag) aborts
//! the bisect, and a signal ends `check` with 130/143 and no verdict. In
//! no case may `git bisect` name a first bad commit. The runs are real
//! nginx runs; a copy of their store with every trial marked client-bound
//! stands in for a baseline that kept no usable trial.

use crate::support::run::{signal, Lab};
use crate::support::{stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const TRIALS: &str = "[sweep]\nconnections = [4]\n[trials]\nduration = \"300ms\"\n\
                      warmup = \"100ms\"\nmin = 3\nmax = 3\n";

fn git(repo: &Path, args: &[&str]) -> Output {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(
        out.status.success() || args[0] == "bisect",
        "git {args:?}: {}",
        stderr(&out)
    );
    out
}

/// A repository of six commits.
fn six_commits(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    for i in 1..=6 {
        std::fs::write(repo.join("rev"), format!("{i}\n")).unwrap();
        git(&repo, &["add", "rev"]);
        git(&repo, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    repo
}

/// `git bisect run sh -c SCRIPT` from the first commit (good) to the last
/// (bad); its output, stdout and stderr together.
fn bisect(repo: &Path, script: &str) -> String {
    git(repo, &["bisect", "reset"]);
    let start = git(repo, &["bisect", "start", "HEAD", "HEAD~5"]);
    assert!(start.status.success(), "{}", stderr(&start));
    let out = git(repo, &["bisect", "run", "sh", "-c", script]);
    git(repo, &["bisect", "reset"]);
    format!("{}{}", stdout(&out), stderr(&out))
}

/// Holds `store`'s lock against every reader while the connection lives
/// (SQLite's exclusive locking mode): a `check` of it waits.
fn lock(store: &Path) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(store).unwrap();
    c.pragma_update(None, "locking_mode", "EXCLUSIVE").unwrap();
    c.execute_batch("BEGIN EXCLUSIVE; SELECT count(*) FROM runs;")
        .unwrap();
    c
}

#[test]
fn git_bisect_run_never_names_a_commit_check_did_not_check() {
    let lab = Lab::new(TRIALS);
    for _ in 0..2 {
        let out = lab.run().output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let dir = lab.dir.path();
    let good = lab.store.display().to_string();
    // A baseline whose every trial was client-bound: it keeps nothing.
    let bound = dir.join("bound.sqlite");
    std::fs::copy(&lab.store, &bound).unwrap();
    rusqlite::Connection::open(&bound)
        .unwrap()
        .execute(
            "UPDATE trials SET context = json_set(context, '$.client_bound', json('true'), \
             '$.client_bound_reason', 'the load generator used 100% of its CPUs')",
            [],
        )
        .unwrap();
    let corrupt = dir.join("corrupt.sqlite");
    std::fs::write(&corrupt, "not a database\n").unwrap();
    let repo = six_commits(dir);
    let bin = env!("CARGO_BIN_EXE_scalelab");
    let cases = [
        // (what, script, what git says)
        (
            "nothing checked",
            format!("{bin} check {}:1 {good}:2", bound.display()),
            "only 'skip'ped commits left",
        ),
        (
            "a typo in the baseline store",
            format!(
                "{bin} check {dir}/goood.sqlite:1 {good}:2",
                dir = dir.display()
            ),
            "bisect run failed",
        ),
        (
            "a missing --store",
            format!(
                "{bin} --store {}/missing.sqlite check 1 latest",
                dir.display()
            ),
            "bisect run failed",
        ),
        (
            "a corrupt store",
            format!("{bin} check {}:1 {good}:2", corrupt.display()),
            "bisect run failed",
        ),
        (
            "a bad flag",
            format!("{bin} check --max-regresion 5 {good}:1 {good}:2"),
            "bisect run failed",
        ),
    ];
    for (what, script, says) in &cases {
        let out = bisect(&repo, script);
        assert!(!out.contains("is the first bad commit"), "{what}: {out}");
        assert!(out.contains(says), "{what}: expected `{says}`: {out}");
    }
    // Errors name the argument as given, not only the default store
    // (`check MISSING good:2` said "no store at scalelab.sqlite").
    let err = |args: &[&str]| {
        let out = crate::support::scalelab()
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        (out.status.code(), stderr(&out))
    };
    let (code, msg) = err(&["check", "MISSING", &format!("{good}:2")]);
    assert_eq!(code, Some(128), "{msg}");
    assert!(msg.contains("baseline `MISSING`"), "{msg}");
    let (code, msg) = err(&["report", &good]);
    assert_eq!(code, Some(2), "{msg}");
    assert!(msg.contains(&format!("write `{good}:latest`")), "{msg}");
    // SIGTERM while `check` waits on a locked store: the script dies with
    // 143 and git aborts.
    let held = lock(&lab.store);
    let script = format!("{bin} check {good}:1 {good}:2 & p=$!; sleep 1; kill -TERM $p; wait $p");
    let out = bisect(&repo, &script);
    drop(held);
    assert!(!out.contains("is the first bad commit"), "SIGTERM: {out}");
    assert!(out.contains("bisect run failed"), "SIGTERM: {out}");
}

#[test]
fn a_signal_ends_check_with_130_or_143_and_no_verdict() {
    // Issue 36: SIGTERM during `check` printed "stopping servers…" and
    // then exited 0 with a verdict.
    let lab = Lab::new(TRIALS);
    for _ in 0..2 {
        let out = lab.run().output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let good = lab.store.display().to_string();
    for (sig, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let held = lock(&lab.store);
        let mut child = crate::support::scalelab()
            .args(["check", &format!("{good}:1"), &format!("{good}:2")])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(700));
        signal(&child, sig);
        // The lock goes: a `check` that ignored the signal now gives a verdict.
        drop(held);
        let until = Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "signal {sig}: {}",
            stderr(&out)
        );
        assert_eq!(stdout(&out), "", "a verdict after the signal");
    }
}

/// Issue 46: `check nope.sqlite` named the candidate in scalelab.sqlite,
/// not the missing baseline; `check X.sqlite X.sqlite:1` said X.sqlite held
/// no finished run when it held one, the candidate itself. The store is
/// the v2 fixture (one finished run), copied into the test's directory.
#[test]
fn check_names_the_missing_baseline_and_a_baseline_that_is_the_candidate() {
    let dir = tempfile::tempdir().unwrap();
    let err = |args: &[&str]| {
        let out = crate::support::scalelab()
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        (out.status.code(), stderr(&out))
    };
    let (code, msg) = err(&["check", "nope.sqlite"]);
    assert_eq!(code, Some(128), "{msg}");
    assert!(msg.contains("baseline `nope.sqlite`"), "{msg}");
    assert!(
        !msg.contains("candidate"),
        "the baseline is named first: {msg}"
    );
    let (code, msg) = err(&["check", "nope.sqlite:1", "latest"]);
    assert_eq!(code, Some(128), "{msg}");
    assert!(msg.contains("baseline `nope.sqlite:1`"), "{msg}");
    let x = dir.path().join("x.sqlite");
    std::fs::copy(crate::support::fixture("stores/quickstart-v2.sqlite"), &x).unwrap();
    let (code, msg) = err(&["check", "x.sqlite", "x.sqlite:1"]);
    assert_eq!(code, Some(125), "{msg}");
    assert!(
        msg.contains("the baseline and the candidate are the same run"),
        "{msg}"
    );
    assert!(msg.contains("is the candidate itself (run 1)"), "{msg}");
    assert!(!msg.contains("holds no finished run"), "{msg}");
}
