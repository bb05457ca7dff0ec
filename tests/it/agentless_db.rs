//! Databases on a host without an agent (issue 39): the host's own
//! PostgreSQL, made by its `initdb` and run as `postgres` by a plain `sh`
//! over ssh, in the netns lab; its transactions checked against
//! PostgreSQL's own statement log, its interval probe read, and nothing
//! left after a `kill -9` of the coordinator.

use crate::agentless::{entries_starting, eventually, timeline};
use crate::multihost::{run, spawn_run, Lab};
use crate::multihost_systems::measured;
use crate::support::{stderr, stdout};
use scalelab::store::{Store, TrialStatus};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

/// PostgreSQL with pgbench's tpcb-like load.
const PG: &str = "[server]\nkind = \"postgres\"\nfsync = false\n";
const PG_LOAD: &str = "[load]\nkind = \"pg\"\nscale = 1\nscript = \"tpcb-like\"\n";
/// MariaDB with sysbench's oltp_read_write load.
const MARIADB: &str = "[server]\nkind = \"mariadb\"\ninnodb_flush_log_at_trx_commit = 0\n";
const MYSQL_LOAD: &str =
    "[load]\nkind = \"mysql\"\ntables = 1\ntable_size = 1000\nscript = \"oltp_read_write\"\n";

/// The recipe: `server` (its `[server]` table, `extra` appended) on h1
/// without an agent, `load` from h2; `trials` is `[trials]`.
fn recipe(dir: &Path, server: &str, extra: &str, load: &str, trials: &str) -> std::path::PathBuf {
    let text = format!(
        "name = \"bare\"\n[hosts]\nserver = \"root@198.18.0.11\"\n\
         clients = [\"root@198.18.0.12\"]\nagent = false\n\
         {server}{extra}{load}[sweep]\nconnections = [2]\n[trials]\n{trials}"
    );
    let exp = dir.join("exp.toml");
    std::fs::write(&exp, text).unwrap();
    exp
}

/// The statements PostgreSQL's own log recorded that insert into
/// `pgbench_history`: one per tpcb-like transaction.
fn history_inserts(log_dir: &Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(log_dir).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        n += text
            .lines()
            .filter(|l| {
                l.to_ascii_lowercase()
                    .contains("insert into pgbench_history")
            })
            .count() as u64;
    }
    n
}

/// `dir/name`, made writable by every user (the server's own account
/// writes its log there).
fn open_dir(dir: &Path, name: &str) -> std::path::PathBuf {
    let d = dir.join(name);
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

/// Runs `exp` in the lab, which must succeed, and reads its stored run.
fn run_ok(lab: &Lab, dir: &Path, exp: &Path) -> scalelab::store::RunData {
    let out = run(lab, dir, exp);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    Store::open(&dir.join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap()
}

#[test]
fn postgres_on_a_host_without_an_agent_commits_what_its_own_log_counts() {
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    // PostgreSQL's statement log goes where the test can read it after
    // the server's private directory is gone (the server runs as
    // `postgres`: the directory is open to it).
    let log_dir = open_dir(dir.path(), "pglog");
    let extra = format!(
        "settings = {{ logging_collector = true, log_directory = \"{}\", log_statement = \"mod\" }}\n",
        log_dir.display()
    );
    let trials =
        "duration = \"3s\"\nwarmup = \"0s\"\nmin = 2\nmax = 2\nsample_interval = \"500ms\"\n";
    let exp = recipe(dir.path(), PG, &extra, PG_LOAD, trials);
    let data = run_ok(&lab, dir.path(), &exp);
    assert_eq!(data.trials.len(), 2);
    for t in &data.trials {
        assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
    }
    let system = data.trials[0].system.clone();
    // Every committed transaction inserted one history row, as the
    // server's own log says; up to one per connection per trial was in
    // flight when a window ended.
    let (m, logged) = (measured(&data, &system), history_inserts(&log_dir));
    eprintln!("transactions: scalelab {m}, PostgreSQL's log {logged}");
    assert!(
        m > 0 && m <= logged && logged <= m + 2 * 2,
        "scalelab {m} v PostgreSQL's log {logged}"
    );
    // The host's own PostgreSQL, with pgbench's tables loaded by the
    // coordinator (their size recorded).
    let t = &data.trials[0];
    let version = t.context.server_version.clone().unwrap_or_default();
    assert!(version.contains("PostgreSQL"), "{version}");
    let dataset = t.context.dataset.as_ref().expect("the dataset's size");
    assert!(dataset.bytes > 1_000_000, "{dataset:?}");
    // The interval probe gave the server tree's CPU and RSS per interval.
    for t in &data.trials {
        let intervals = timeline(dir.path(), t.id);
        assert!(intervals.len() >= 5, "{} intervals", intervals.len());
        for i in &intervals {
            assert!(i["server"]["cpu_s"].is_number(), "{i}");
            assert!(i["server"]["rss_bytes"].as_u64().unwrap() > 0, "{i}");
        }
        let p = t.probe.as_ref().unwrap();
        assert!(p.server_cpu_s.unwrap() > 0.0, "{p:?}");
        // postmaster, its helpers, two backends (and su above them).
        assert!(p.processes.unwrap() >= 4, "{p:?}");
    }
    assert!(lab.processes(1, "postgres").is_empty());
    assert!(lab.processes(1, "scalelab-bare-").is_empty());
}

#[test]
fn kill_9_of_the_coordinator_leaves_no_postgres_shell_or_directory() {
    kill_9_leaves_nothing(PG, PG_LOAD, "postgres");
}

#[test]
fn kill_9_of_the_coordinator_leaves_no_mariadbd_shell_or_directory() {
    kill_9_leaves_nothing(MARIADB, MYSQL_LOAD, "mariadbd");
}

/// `server` runs on h1 without an agent under `load` from h2 until the
/// coordinator is killed (-9): then no `process`, no shell and no private
/// directory is left.
fn kill_9_leaves_nothing(server: &str, load: &str, process: &str) {
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let trials = "duration = \"30s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n";
    let exp = recipe(dir.path(), server, "", load, trials);
    let mut child = spawn_run(&lab, dir.path(), &exp);
    assert!(
        eventually(Duration::from_secs(60), || !lab
            .processes(1, "scalelab-probe-")
            .is_empty()),
        "no probe shell on h1"
    );
    assert!(!lab.processes(1, process).is_empty());
    child.kill().unwrap();
    child.wait().unwrap();
    let gone = || {
        lab.processes(1, process).is_empty()
            && lab.processes(1, "scalelab-bare-").is_empty()
            && lab.processes(1, "scalelab-probe-").is_empty()
    };
    assert!(
        eventually(Duration::from_secs(30), gone),
        "left on h1: {:?}",
        lab.processes(1, process)
    );
    let left = entries_starting(dir.path(), "scalelab-bare-");
    assert!(left.is_empty(), "{left:?}");
}

/// The `COMMIT`s MariaDB's own general query log recorded (prepared:
/// `Execute`, a tab, `COMMIT`): one per oltp_read_write transaction.
fn logged_commits(log: &Path) -> u64 {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter(|l| l.trim_end().ends_with("\tCOMMIT"))
        .count() as u64
}

#[test]
fn mariadb_on_a_host_without_an_agent_commits_what_its_own_log_counts() {
    mariadb_commits_what_its_own_log_counts(false);
}

/// The same MariaDB settings under an agent on the server host: it
/// listens on that host's address as PostgreSQL and nginx do.
#[test]
fn mariadb_on_a_host_with_an_agent_commits_what_its_own_log_counts() {
    mariadb_commits_what_its_own_log_counts(true);
}

fn mariadb_commits_what_its_own_log_counts(agent: bool) {
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    // The general log goes where the test reads it after the server's
    // private directory is gone (the server runs as `mysql`).
    let log = open_dir(dir.path(), "mylog").join("general.log");
    let extra = format!(
        "extra = [\"general_log = 1\", \"general_log_file = {}\"]\n",
        log.display()
    );
    let trials =
        "duration = \"3s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\nsample_interval = \"500ms\"\n";
    let mut exp_text =
        std::fs::read_to_string(recipe(dir.path(), MARIADB, &extra, MYSQL_LOAD, trials)).unwrap();
    if agent {
        exp_text = exp_text.replace("agent = false\n", "");
    }
    let exp = dir.path().join("exp.toml");
    std::fs::write(&exp, exp_text).unwrap();
    let data = run_ok(&lab, dir.path(), &exp);
    let t = &data.trials[0];
    assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
    // Every committed transaction is one COMMIT in MariaDB's own log; one
    // per connection may have been in flight when the window ended.
    let (m, logged) = (measured(&data, &t.system), logged_commits(&log));
    eprintln!("transactions (agent {agent}): scalelab {m}, MariaDB's general log {logged} COMMITs");
    assert!(
        m > 0 && m <= logged && logged <= m + 2,
        "scalelab {m} v MariaDB's log {logged}"
    );
    let version = t.context.server_version.clone().unwrap_or_default();
    assert!(version.contains("MariaDB"), "{version}");
    assert!(t.context.dataset.as_ref().is_some_and(|d| d.bytes > 0));
    for i in &timeline(dir.path(), t.id) {
        assert!(i["server"]["cpu_s"].is_number(), "{i}");
        assert!(i["server"]["rss_bytes"].as_u64().unwrap() > 0, "{i}");
    }
    assert!(lab.processes(1, "mariadbd").is_empty());
    assert!(entries_starting(dir.path(), "scalelab-bare-").is_empty());
}
