//! Server lifecycles end to end with the real binary, for every managed
//! kind: `kill -9` of scalelab mid-trial leaves no server process, watchdog,
//! cgroup or lab namespace behind; a Ctrl-C at the terminal does not reach
//! the servers; a stranger listening on the server's port fails the trial.

use crate::support::{scalelab, stderr};
use scalelab::store::{Store, TrialStatus};
use scalelab::sys::process::{children_of, is_alive};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// For each managed server kind: its name, the command name of its
/// processes, how many run once it serves, and the server and load sections
/// of a short experiment (at a low open-loop rate, to leave the shared
/// machine's CPUs to the other tests). A new kind adds its row here.
const KINDS: &[(&str, &str, usize, &str)] = &[
    (
        "nginx",
        "nginx",
        3,
        "[server]\nkind = \"nginx\"\nworker_processes = 2\n[load]\nkind = \"http\"\npath = \"/\"\nrate = 200\n",
    ),
    (
        "postgres",
        "postgres",
        4,
        "[server]\nkind = \"postgres\"\n[load]\nkind = \"pg\"\nscale = 1\nscript = \"select-only\"\nrate = 200\n",
    ),
    (
        "nsd",
        "nsd: server 1", // NSD renames its processes
        1,
        "[server]\nkind = \"nsd\"\n[load]\nkind = \"dns\"\nqueries = { names = 100, count = 1000 }\n",
    ),
    (
        "unbound",
        "unbound",
        1,
        "[server]\nkind = \"unbound\"\n[load]\nkind = \"dns\"\nqueries = { names = 100, count = 1000 }\n",
    ),
    (
        "bind",
        "named",
        1,
        "[server]\nkind = \"bind\"\n[load]\nkind = \"dns\"\nqueries = { names = 100, count = 1000 }\n",
    ),
    (
        "resolver",
        "unbound",
        1,
        "[server]\nkind = \"resolver\"\nsoftware = \"unbound\"\n[load]\nkind = \"dns\"\nqueries = { names = 100, count = 1000 }\n",
    ),
    (
        "mariadb",
        "mariadbd",
        1,
        "[server]\nkind = \"mariadb\"\n\
         [load]\nkind = \"mysql\"\ntables = 1\ntable_size = 100\nscript = \"oltp_point_select\"\n",
    ),
];

fn experiment(dir: &Path, sections: &str, rest: &str) -> PathBuf {
    let path = dir.join("exp.toml");
    std::fs::write(&path, format!("name = \"lifecycle\"\n{sections}{rest}")).unwrap();
    path
}

fn run_cmd(dir: &Path, exp: &Path) -> Command {
    let mut cmd = scalelab();
    cmd.args([
        "--store",
        dir.join("s.sqlite").to_str().unwrap(),
        "run",
        exp.to_str().unwrap(),
    ])
    .env("SCALELAB_WORKDIR", dir.join("work"))
    .current_dir(dir)
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    cmd
}

/// Every descendant of `pid`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for c in children_of(p) {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Waits until scalelab runs `server` with at least `min` processes, then
/// returns all of scalelab's descendants.
fn wait_for_server(child: &Child, server: &str, min: usize) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let all = descendants(child.id());
        if all.iter().filter(|&&p| comm(p) == server).count() >= min {
            return all;
        }
        assert!(Instant::now() < deadline, "{server} never started: {all:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Processes whose command line names `dir` (a server started for a test
/// runs on a private directory under it), found wherever they were
/// re-parented: a daemonized postmaster is no descendant of scalelab.
fn processes_naming(dir: &Path) -> Vec<(u32, String)> {
    let needle = dir.to_str().unwrap().as_bytes().to_vec();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| is_alive(p))
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.windows(needle.len()).any(|w| w == needle))
        })
        .map(|p| (p, comm(p)))
        .collect()
}

/// Cgroups named after scalelab process `pid` in any hierarchy.
fn cgroups_of(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("scalelab-{pid}-");
    scalelab::placement::hierarchy::locate_tracking_here()
        .into_iter()
        .flat_map(|h| std::fs::read_dir(h.parent).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .collect()
}

/// The private paths a run made that must not outlive it: every entry of
/// its work directory but the kept PostgreSQL clusters (`postgres/`), the
/// running postmaster's socket directory (named in its `postmaster.pid`),
/// and whatever in the temp directory carries the owner's PID
/// (`scalelab-<what>-<pid>-*`).
fn owned_paths(work: &Path, pid: u32) -> Vec<PathBuf> {
    let entries = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect()
    };
    let mut paths: Vec<PathBuf> = entries(work)
        .into_iter()
        .filter(|p| !p.ends_with("postgres"))
        .collect();
    for cluster in entries(&work.join("postgres")) {
        let pidfile = std::fs::read_to_string(cluster.join("data/postmaster.pid"));
        // Line 5 of postmaster.pid: the first socket directory.
        let socket_dir = pidfile
            .ok()
            .and_then(|t| t.lines().nth(4).map(PathBuf::from));
        paths.extend(socket_dir.filter(|d| !d.as_os_str().is_empty()));
    }
    let infix = format!("-{pid}-");
    paths.extend(entries(&std::env::temp_dir()).into_iter().filter(|p| {
        p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
            n.starts_with("scalelab-") && (n.contains(&infix) || n.ends_with(&format!("-{pid}")))
        })
    }));
    paths
}

#[test]
fn kill_9_of_scalelab_leaves_no_server_watchdog_or_cgroup_for_any_kind() {
    for kind in scalelab::server::KINDS
        .iter()
        // `external` has no lifecycle; `router` runs no server process (its
        // lab's namespaces have their own kill -9 test in router.rs).
        .filter(|k| !matches!(k.name, "external" | "router"))
        .filter(|k| crate::support::users_kind(k.name))
    {
        let (_, server, min, sections) = KINDS
            .iter()
            .find(|row| row.0 == kind.name)
            .unwrap_or_else(|| panic!("add server kind `{}` to this test's KINDS", kind.name));
        let kind = kind.name;
        let dir = tempfile::tempdir().unwrap();
        let exp = experiment(
            dir.path(),
            sections,
            "[sweep]\nconnections = [2]\nserver_cpus = [1]\n\
             [trials]\nduration = \"20s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
        );
        let mut child = run_cmd(dir.path(), &exp).spawn().unwrap();
        let pid = child.id();
        wait_for_server(&child, server, *min);
        std::thread::sleep(Duration::from_millis(800)); // mid-trial
        let before = descendants(pid);
        let cgroups = cgroups_of(pid);
        assert!(!cgroups.is_empty(), "{kind}: no cgroup was made");
        let paths = owned_paths(&dir.path().join("work"), pid);
        assert!(!paths.is_empty(), "{kind}: no private directory was made");
        if sections.contains("kind = \"dns\"") {
            assert!(
                !crate::support::namespaces_of(pid).is_empty(),
                "{kind}: no lab namespace"
            );
        }
        child.kill().unwrap(); // SIGKILL: no chance to clean up
        child.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let alive: Vec<(u32, String)> = before
                .iter()
                .filter(|&&p| is_alive(p))
                .map(|&p| (p, comm(p)))
                .collect();
            let left = cgroups_of(pid);
            let strays = processes_naming(dir.path());
            let namespaces = crate::support::namespaces_of(pid);
            let files: Vec<&PathBuf> = paths.iter().filter(|p| p.exists()).collect();
            if alive.is_empty()
                && left.is_empty()
                && strays.is_empty()
                && namespaces.is_empty()
                && files.is_empty()
            {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{kind}: 5 s after kill -9 of scalelab, still alive {alive:?} {strays:?}, \
                 cgroups {left:?}, namespaces {namespaces:?}, paths {files:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn ctrl_c_at_the_terminal_does_not_reach_the_servers() {
    let dir = tempfile::tempdir().unwrap();
    let exp = experiment(
        dir.path(),
        KINDS[0].3,
        "[trials]\nduration = \"4s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    );
    // scalelab leads its own process group, as a shell's foreground job.
    let mut cmd = run_cmd(dir.path(), &exp);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = cmd.spawn().unwrap();
    let servers = wait_for_server(&child, "nginx", 3);
    std::thread::sleep(Duration::from_millis(800));
    // What the terminal does on Ctrl-C: SIGINT to the foreground group.
    // SAFETY: kill(2) on the process group we just created.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(err.contains("interrupted"), "{err}");
    let data = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    for t in &data.trials {
        let e = t.error.as_deref().unwrap_or("");
        assert!(
            !e.contains("server died"),
            "the interrupt reached the server: {e}"
        );
    }
    let left: Vec<u32> = servers.into_iter().filter(|&p| is_alive(p)).collect();
    assert!(left.is_empty(), "left running after Ctrl-C: {left:?}");
    let strays = processes_naming(dir.path());
    assert!(strays.is_empty(), "left running after Ctrl-C: {strays:?}");
}

#[test]
fn a_stranger_on_the_port_fails_the_trial_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let port = scalelab::sys::process::free_port().unwrap();
    let exp = experiment(
        dir.path(),
        &KINDS[0].3.replace(
            "worker_processes = 2\n",
            &format!("worker_processes = 2\nport = {port}\n"),
        ),
        "[trials]\nduration = \"1s\"\nwarmup = \"0s\"\nmin = 3\nmax = 3\nrestart = \"never\"\n",
    );
    let child = run_cmd(dir.path(), &exp).spawn().unwrap();
    wait_for_server(&child, "nginx", 3);
    // A second listener on the port, as a leftover worker would hold.
    let stranger =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    stranger.set_reuse_port(true).unwrap();
    stranger
        .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], port)).into())
        .unwrap();
    stranger.listen(16).unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stranger);
    let data = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert_eq!(data.trials.len(), 3, "{}", stderr(&out));
    let me = format!("pid {}", std::process::id());
    for t in &data.trials[1..] {
        assert_eq!(t.status, TrialStatus::Failed, "trial {}", t.trial);
        let e = t.error.as_deref().unwrap_or("");
        assert!(
            e.contains(&format!("port {port} is also listened on")) && e.contains(&me),
            "{e}"
        );
        assert!(t.measurement.is_none(), "nothing measured with a stranger");
    }
}

/// The router's `[server]` and `[load]` at a low fixed rate (it runs no
/// server process, only its lab of namespaces).
const ROUTER: &str =
    "[server]\nkind = \"router\"\n[load]\nkind = \"forward\"\nrate = 2000\nloss = 50\n";

#[test]
fn kill_9_of_a_router_run_leaves_no_placement_cgroup() {
    let dir = tempfile::tempdir().unwrap();
    let exp = experiment(
        dir.path(),
        ROUTER,
        "[sweep]\nconnections = [1]\nserver_cpus = [1]\n\
         [trials]\nduration = \"20s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    );
    let mut child = run_cmd(dir.path(), &exp).spawn().unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    // The placement's cpuset cgroup, and the lab's router namespace
    // (`slr-<pid>-<n>-r`).
    let lab = |pid: u32| Path::new(&format!("/run/netns/slr-{pid}-0-r")).exists();
    while cgroups_of(pid).is_empty() || !lab(pid) {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            panic!("scalelab ended ({status}): {}", stderr(&out));
        }
        assert!(Instant::now() < deadline, "the router never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    let cgroups = cgroups_of(pid);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !cgroups_of(pid).is_empty() {
        assert!(
            Instant::now() < deadline,
            "5 s after kill -9 of scalelab, cgroups {:?} (of {cgroups:?}) are left",
            cgroups_of(pid)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_run_reclaims_what_dead_owners_left_of_every_kind() {
    // What a scalelab killed with its reaper left behind: a placement
    // cgroup, a PostgreSQL socket directory, a perf directory, an nginx run
    // directory and an ssh control directory, each named after the dead
    // PID; and the same of a live owner (this test), which must stay.
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let me = std::process::id();
    let cpuset = scalelab::placement::hierarchy::locate_here(
        scalelab::placement::hierarchy::Controller::Cpuset,
    )
    .unwrap()
    .parent;
    let tmp = std::env::temp_dir();
    let paths = |pid: u32| {
        [
            cpuset.join(format!("scalelab-{pid}-0")),
            tmp.join(format!("scalelab-pg-{pid}-reclaim")),
            tmp.join(format!("scalelab-ssh-{pid}-reclaim")),
            work.join(format!("perf-{pid}-reclaim")),
            work.join(format!("nginx-{pid}-reclaim")),
        ]
    };
    for p in paths(dead).iter().chain(&paths(me)) {
        std::fs::create_dir(p).unwrap();
    }
    std::fs::write(paths(dead)[3].join("perf.data"), "x").unwrap();
    let exp = experiment(
        dir.path(),
        KINDS[0].3,
        "[trials]\nduration = \"200ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    );
    let out = run_cmd(dir.path(), &exp).output().unwrap();
    let left: Vec<PathBuf> = paths(dead).into_iter().filter(|p| p.exists()).collect();
    let kept: Vec<bool> = paths(me).iter().map(|p| p.exists()).collect();
    for p in paths(me).iter().chain(&paths(dead)) {
        let _ = if p.starts_with(&cpuset) {
            std::fs::remove_dir(p)
        } else {
            std::fs::remove_dir_all(p)
        };
    }
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        left.is_empty(),
        "a dead owner's leftovers were kept: {left:?}"
    );
    assert!(
        kept.iter().all(|&k| k),
        "a live owner's entry was removed: {kept:?}"
    );
}

#[test]
fn a_dead_owners_cgroup_is_emptied_and_removed_not_kept_with_its_processes() {
    // Issue 36: killing an agent together with its server's watchdog left
    // orphan nginx workers in their cgroup; the next reclaim kept a cgroup
    // that still held processes, and the processes with it.
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let cpuset = scalelab::placement::hierarchy::locate_here(
        scalelab::placement::hierarchy::Controller::Cpuset,
    )
    .unwrap()
    .parent;
    let cg = cpuset.join(format!("scalelab-{dead}-orphans"));
    std::fs::create_dir(&cg).unwrap();
    for f in ["cpuset.cpus", "cpuset.mems"] {
        // cgroup v1 cpuset: a task needs CPUs and memory nodes (v2 has
        // neither file to fill here).
        if let Ok(v) = std::fs::read_to_string(cpuset.join(f)) {
            let _ = std::fs::write(cg.join(f), v.trim());
        }
    }
    let mut orphan = Command::new("sleep").arg("600").spawn().unwrap();
    std::fs::write(cg.join("cgroup.procs"), orphan.id().to_string()).unwrap();
    let removed = scalelab::placement::reclaim_stale();
    let alive = orphan.try_wait().unwrap().is_none();
    if alive {
        let _ = orphan.kill(); // leave nothing
    }
    let _ = orphan.wait();
    let kept = cg.exists();
    if kept {
        let _ = std::fs::remove_dir(&cg);
    }
    assert!(!alive, "the dead owner's process was left running");
    // Removed here, or by the reclaim of a run another test started at the
    // same moment (every run reclaims; the fresh-clone suite at 96235ff
    // met that race): either way, gone with its process.
    assert!(!kept, "the dead owner's cgroup was kept: {removed:?}");
}
