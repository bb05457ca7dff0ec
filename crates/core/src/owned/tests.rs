//! The owner naming and the reclaim of dead owners' entries, on a temp dir.

use super::*;

/// A PID that was alive a moment ago and is not any more.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn owner_pids_are_read_from_exact_names_only() {
    assert_eq!(owner_of("scalelab-pg-123-Ab9x", "scalelab-pg-"), Some(123));
    assert_eq!(owner_of("scalelab-ssh-77", "scalelab-ssh-"), Some(77));
    assert_eq!(owner_of("scalelab-42-server-0", "scalelab-"), Some(42));
    assert_eq!(owner_of("scalelab-pg-Ab9x12", "scalelab-pg-"), None);
    assert_eq!(owner_of("scalelab-pg-123-x", "scalelab-ssh-"), None);
    assert_eq!(owner_of("scalelab-agent-5", "scalelab-"), None);
    assert_eq!(owner_of("scalelab-", "scalelab-"), None);
    assert_eq!(owner_of("perf-12abc", "perf-"), None);
}

#[test]
fn only_dead_owners_entries_of_the_kind_are_reclaimed() {
    let base = tempfile::tempdir().unwrap();
    let dead = dead_pid();
    let me = std::process::id();
    let dead_dir = base.path().join(format!("perf-{dead}-abc"));
    let live_dir = base.path().join(format!("perf-{me}-abc"));
    let other_kind = base.path().join(format!("dns-{dead}-abc"));
    let no_pid = base.path().join("perf-abcdef");
    let a_file = base.path().join(format!("perf-{dead}-file"));
    for d in [&dead_dir, &live_dir, &other_kind, &no_pid] {
        std::fs::create_dir(d).unwrap();
    }
    std::fs::write(dead_dir.join("perf.data"), "x").unwrap();
    std::fs::write(&a_file, "x").unwrap();
    let removed = reclaim_stale(base.path(), "perf-", remove_tree);
    assert_eq!(removed, vec![dead_dir.clone()]);
    assert!(!dead_dir.exists());
    for kept in [&live_dir, &other_kind, &no_pid, &a_file] {
        assert!(kept.exists(), "{} is kept", kept.display());
    }
}

#[test]
fn a_reused_pid_does_not_keep_a_dead_owners_entry() {
    // Our own process started long before an entry "modified" at the
    // epoch: the PID must belong to someone else now.
    let me_started_later = SystemTime::UNIX_EPOCH;
    let parent = std::os::unix::process::parent_id();
    assert!(!owner_alive(parent, me_started_later));
    assert!(owner_alive(parent, SystemTime::now()));
    assert!(!owner_alive(dead_pid(), SystemTime::now()));
}

#[test]
fn an_owned_dir_carries_our_pid_and_goes_when_dropped() {
    let base = tempfile::tempdir().unwrap();
    let dead = dead_pid();
    let stale = base.path().join(format!("nginx-{dead}-zz"));
    std::fs::create_dir(&stale).unwrap();
    let dir = OwnedDir::create(base.path(), "nginx-").unwrap();
    assert!(!stale.exists(), "a dead owner's directory is reclaimed");
    let name = dir
        .path()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(
        owner_of(&name, "nginx-"),
        Some(std::process::id()),
        "{name}"
    );
    let path = dir.path().to_path_buf();
    drop(dir);
    assert!(!path.exists());
}

/// Set for the owner process [`the_reaper_removes_what_a_dead_owner_registered`]
/// starts: the directory it registers things in.
const OWNER_ENV: &str = "SCALELAB_TEST_REAPER_OWNER";

/// Plays the owner in a process of its own (this test binary, run again
/// with only this test and [`OWNER_ENV`] set); does nothing otherwise.
#[test]
fn reaper_owner() {
    let Some(base) = std::env::var_os(OWNER_ENV).map(PathBuf::from) else {
        return;
    };
    let command_ran = base.join("command-ran");
    register(Removal::Tree, &[base.join("tree").as_os_str()]);
    register(Removal::Tree, &[base.join("forgotten").as_os_str()]);
    forget(Removal::Tree, &[base.join("forgotten").as_os_str()]);
    let touch = ["/usr/bin/touch", command_ran.to_str().unwrap()];
    let words: Vec<&std::ffi::OsStr> = touch.iter().map(std::ffi::OsStr::new).collect();
    register(Removal::Command, &words);
    std::fs::write(base.join("ready"), "").unwrap();
    std::thread::sleep(Duration::from_secs(600));
}

#[test]
fn the_reaper_removes_what_a_dead_owner_registered() {
    let base = tempfile::tempdir().unwrap();
    let tree = base.path().join("tree");
    let forgotten = base.path().join("forgotten");
    let command_ran = base.path().join("command-ran");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("sub/file"), "x").unwrap();
    std::fs::create_dir(&forgotten).unwrap();
    let mut owner = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "owned::tests::reaper_owner", "--nocapture"])
        .env(OWNER_ENV, base.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !base.path().join("ready").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the owner never got ready"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    owner.kill().unwrap(); // SIGKILL
    owner.wait().unwrap();
    while tree.exists() || !command_ran.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "after the owner died: tree left {}, command ran {}",
            tree.exists(),
            command_ran.exists()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(forgotten.exists(), "a forgotten entry is not the reaper's");
}
