//! Where the store lives (issue 24, item 6): a store on a read-only mount is
//! read by `list`, `export`, `report` and `compare`, and `run` says the
//! location is read-only; `--store` in a missing directory creates none.
//! The read-only mount is real: each command runs in a private mount
//! namespace where the store's directory is bound read-only onto itself
//! (root ignores file modes, a read-only mount it cannot).

use crate::support::run::run_cmd;
use crate::support::{fixture, scalelab, stderr, stdout};
use scalelab::store::Store;
use std::path::Path;
use std::process::Output;

/// A one-trial experiment body, should a refused run start after all.
const SHORT: &str = "[sweep]\nconnections = [2]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n";

/// `scalelab --store STORE ARGS` with `ro` mounted read-only for it alone.
fn scalelab_with_read_only(ro: &Path, store: &Path, args: &[&str]) -> Output {
    let mut cmd = std::process::Command::new("unshare");
    cmd.args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(
            "mount --bind \"$0\" \"$0\" && mount -o remount,ro,bind \"$0\" && \
             touch \"$0/probe\" 2>/dev/null && exit 99; exec \"$@\"",
        )
        .arg(ro)
        .arg(scalelab().get_program())
        .arg("--store")
        .arg(store)
        .args(args)
        .current_dir(ro.parent().unwrap());
    cmd.output().expect("unshare runs")
}

/// A current-schema store with one run, in `dir/ro/s.sqlite`.
fn store_in(dir: &Path) -> std::path::PathBuf {
    let ro = dir.join("ro");
    std::fs::create_dir(&ro).unwrap();
    let path = ro.join("s.sqlite");
    std::fs::copy(fixture("stores/quickstart-v1.sqlite"), &path).unwrap();
    // Upgrade it to this scalelab's schema; closing checkpoints the WAL.
    drop(Store::open(&path, scalelab::catalog()).unwrap());
    path
}

#[test]
fn a_store_on_a_read_only_mount_is_read_and_a_run_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path());
    let ro = store.parent().unwrap();
    let html = dir.path().join("r.html");
    for args in [
        vec!["list"],
        vec!["export", "1", "--format", "csv"],
        vec!["report", "1", "-o", html.to_str().unwrap()],
        vec!["history", "quickstart"],
    ] {
        let out = scalelab_with_read_only(ro, &store, &args);
        assert_ne!(out.status.code(), Some(99), "the mount was not read-only");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(!stdout(&out).is_empty(), "{args:?} printed nothing");
    }
    assert!(html.exists(), "report wrote its page outside the mount");

    let exp = crate::support::run::experiment(dir.path(), SHORT);
    let out = scalelab_with_read_only(ro, &store, &["run", exp.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let expected = format!("the store {} is in a read-only location", store.display());
    assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("writable --store"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn store_in_a_missing_directory_is_refused_and_no_directory_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nonexistent/dir");
    let store = missing.join("s.sqlite");
    let exp = crate::support::run::experiment(dir.path(), SHORT);
    let out = run_cmd(dir.path(), &store, &exp).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let expected = format!(
        "the directory {} of the store {} does not exist; create it (mkdir -p {})",
        missing.display(),
        store.display(),
        missing.display()
    );
    assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
    assert!(
        !dir.path().join("nonexistent").exists(),
        "a directory was made"
    );
}

#[test]
fn an_old_store_on_a_read_only_mount_says_to_copy_it_for_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let store = ro.join("old.sqlite");
    std::fs::copy(fixture("stores/quickstart-v1.sqlite"), &store).unwrap();
    let out = scalelab_with_read_only(&ro, &store, &["list"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is read-only and has schema version 1")
            && stderr(&out).contains("copy it to a writable place"),
        "{}",
        stderr(&out)
    );
}
