//! The nginx target against the real nginx: start, serve, stop, and leave
//! nothing behind.

use scalelab::placement::Placement;
use scalelab::server;
use scalelab::shutdown::Shutdown;
use scalelab::sys::process::{self, is_alive};
use std::io::{Read, Write};

fn get(uri: &str, path: &str) -> String {
    let addr = uri.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn settings(text: &str) -> toml::Table {
    toml::from_str(text).unwrap()
}

/// An nginx target from its settings table, compiled as a recipe's are.
fn nginx(
    settings: &toml::Table,
    base: &std::path::Path,
) -> Result<Box<dyn server::Server>, server::ServerError> {
    server::compile(&server::nginx::SERVER_KIND, settings)?.build(base)
}

#[test]
fn serves_the_seed_files_and_stops_cleanly() {
    let base = tempfile::tempdir().unwrap();
    let mut t = nginx(&settings("worker_processes = 2"), base.path()).unwrap();
    let ep = t
        .start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap();
    let root = t.root_pid().unwrap();
    let workers = process::children_of(root);
    assert_eq!(workers.len(), 2, "two workers asked for");
    assert!(get(&ep.uri, "/").ends_with("{}"));
    let resp = get(&ep.uri, "/8k.bin");
    assert!(resp.contains("Content-Length: 8192"), "{resp}");
    assert!(t.version().unwrap().starts_with("nginx/"));
    t.stop().unwrap();
    assert!(!is_alive(root));
    assert!(
        workers.iter().all(|w| !is_alive(*w)),
        "no worker left behind"
    );
    assert_eq!(
        std::fs::read_dir(base.path()).unwrap().count(),
        0,
        "run directory removed"
    );
}

#[test]
fn a_bad_setting_gives_nginx_own_words() {
    let base = tempfile::tempdir().unwrap();
    let mut t = nginx(
        &settings("extra_http = \"no_such_directive on;\""),
        base.path(),
    )
    .unwrap();
    let err = t
        .start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("no_such_directive"), "{err}");
    assert!(!t.is_running());
}

#[test]
fn drop_stops_the_server() {
    let base = tempfile::tempdir().unwrap();
    let mut t = nginx(&toml::Table::new(), base.path()).unwrap();
    t.start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap();
    let root = t.root_pid().unwrap();
    drop(t);
    assert!(!is_alive(root));
}

#[test]
fn pinned_nginx_runs_only_on_its_cpus() {
    let base = tempfile::tempdir().unwrap();
    let last = scalelab::placement::online_cpus() - 1;
    let placement = Placement::create("it-nginx-pin", Some(vec![last]), None).unwrap();
    let mut t = nginx(&settings("worker_processes = 2"), base.path()).unwrap();
    t.start(&placement, None, &Shutdown::new()).unwrap();
    let root = t.root_pid().unwrap();
    for pid in std::iter::once(root).chain(process::children_of(root)) {
        let status = scalelab::procfs::pid::status(pid).unwrap();
        let allowed = scalelab::procfs::pid::status_value(&status, "Cpus_allowed_list").unwrap();
        assert!(allowed == last.to_string(), "pid {pid}: {allowed}");
    }
}

#[test]
fn workers_that_outlive_a_killed_master_are_stopped_with_it() {
    let base = tempfile::tempdir().unwrap();
    let mut t = nginx(&settings("worker_processes = 2"), base.path()).unwrap();
    t.start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap();
    let master = t.root_pid().unwrap();
    let workers = process::children_of(master);
    assert_eq!(workers.len(), 2);
    process::signal(master, libc::SIGKILL);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while t.is_running() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!t.is_running(), "the master is dead");
    assert!(
        workers.iter().all(|&w| is_alive(w)),
        "workers outlive a SIGKILLed master"
    );
    t.stop().unwrap();
    let left: Vec<u32> = workers.into_iter().filter(|&w| is_alive(w)).collect();
    assert!(left.is_empty(), "workers {left:?} survived the stop");
}

/// Issue 24, item 6: every path in `nginx.conf` is quoted, so a
/// `SCALELAB_WORKDIR` with a space starts nginx and measures.
#[test]
fn a_workdir_with_a_space_runs_nginx() {
    let body = "[sweep]\nconnections = [2]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n";
    let lab = crate::support::run::Lab::new(body);
    let work = lab.dir.path().join("work dir; with space");
    let out = lab.run().env("SCALELAB_WORKDIR", &work).output().unwrap();
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    assert_eq!(crate::support::run::count_trials(&lab.store), 1);
    let conf_seen = std::fs::read_dir(&work).unwrap().count();
    assert_eq!(conf_seen, 0, "the run removed its nginx directory");
}

/// nginx expands `$name` even in quoted paths: a workdir with a `$` is
/// refused, naming SCALELAB_WORKDIR, instead of nginx's unknown variable.
#[test]
fn a_workdir_with_a_dollar_is_refused_naming_the_fix() {
    let body = "[sweep]\nconnections = [2]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n";
    let lab = crate::support::run::Lab::new(body);
    let work = lab.dir.path().join("work$dir");
    let out = lab.run().env("SCALELAB_WORKDIR", &work).output().unwrap();
    let err = crate::support::stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("has a `$`") && err.contains("SCALELAB_WORKDIR"),
        "{err}"
    );
}
