//! The limiter at every point and the off-CPU profiles (issue 28), against
//! real servers: PostgreSQL's tpcb-like on one branch row is blocked on
//! locks and its off-CPU graph shows the lock-wait stack; select-only on a
//! server pinned to one CPU is CPU-saturated; nginx with a listen backlog
//! of 8 under one request per connection overflows its listen queue (the
//! count agrees with the kernel's own counter); a resolver driven past its
//! capacity names UDP receive errors or its CPU, whichever the counters
//! show; a dataset beyond the memory limit reads from storage where a
//! smaller one does not; and a perf without tracepoints leaves the run
//! going with one line.

use scalelab::probe::limiter::{Limiter, LimiterKind};
use scalelab::store::{RunData, Trial, TrialStatus};
use std::path::Path;

/// Runs `body` as an experiment in `dir` (with `--profile` when asked,
/// `extra_path` first on PATH); returns the stored run and stderr.
fn run(dir: &Path, body: &str, profile: bool, extra_path: Option<&Path>) -> (RunData, String) {
    let args: &[&str] = if profile { &["--profile"] } else { &[] };
    crate::support::run::run_recipe(dir, body, args, extra_path)
}

fn limiter(t: &Trial) -> &Limiter {
    assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
    t.context
        .limiter
        .as_ref()
        .unwrap_or_else(|| panic!("trial {} has no limiter", t.trial))
}

fn at(data: &RunData, point: u32) -> &Trial {
    data.trials
        .iter()
        .find(|t| t.point.index == point)
        .unwrap_or_else(|| panic!("no trial at point {point}"))
}

/// Weight of the folded lines that pass through any of `frames`.
fn weight_through(folded: &str, frames: &[&str]) -> u64 {
    folded
        .lines()
        .filter(|l| frames.iter().any(|f| l.contains(f)))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum()
}

const PG: &str = "name = \"lim\"\n[server]\nkind = \"postgres\"\n";

#[test]
fn tpcb_like_on_one_branch_is_blocked_on_locks_and_the_off_cpu_graph_shows_the_lock_wait() {
    let dir = tempfile::tempdir().unwrap();
    let (data, err) = run(
        dir.path(),
        &format!(
            "{PG}[load]\nkind = \"pg\"\nscale = 1\nscript = \"tpcb-like\"\n\
             [sweep]\nconnections = [16]\n\
             [trials]\nduration = \"3s\"\nwarmup = \"1s\"\nmin = 1\nmax = 1\n[[system]]\nlabel = \"pg\"\n"
        ),
        true,
        None,
    );
    let l = limiter(at(&data, 0));
    assert!(l.crossed.contains(&LimiterKind::LockWaits), "{}", l.verdict);
    assert_eq!(l.kind, LimiterKind::LockWaits, "{}", l.verdict);
    let lock = l.figures.lock_wait_share.unwrap();
    assert!(lock >= 0.30, "{}", l.verdict);
    // The off-CPU profile of the extra trial: most blocked time is in
    // PostgreSQL's lock waits (heavyweight: ProcSleep on its latch;
    // lightweight: LWLockAcquire on a semaphore).
    let p = data.profiles.first().expect("a profile");
    let off = p
        .offcpu
        .as_deref()
        .unwrap_or_else(|| panic!("no off-CPU profile: {:?} / {err}", p.offcpu_error));
    assert!(off.lines().all(|l| l.starts_with("postgres;")), "{off}");
    let total = weight_through(off, &[";"]);
    let locks = weight_through(off, &["ProcSleep", "LWLockAcquire", "futex", "semop"]);
    assert!(locks > 0, "no lock-wait stack in {off}");
    assert!(
        locks * 4 >= total,
        "lock waits {locks} ns of {total} ns blocked"
    );
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(html.contains("pg at connections=16 (peak): off-CPU"));
    // The measured trial was not traced: its profile came from extra trials.
    assert_eq!(data.trials.len(), 1);
}

#[test]
fn select_only_on_a_server_pinned_to_one_cpu_is_cpu_saturated() {
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = run(
        dir.path(),
        &format!(
            "{PG}server_cpus = 1\n[load]\nkind = \"pg\"\nscale = 1\nscript = \"select-only\"\n\
             [sweep]\nconnections = [16]\n\
             [trials]\nduration = \"3s\"\nwarmup = \"1s\"\nmin = 1\nmax = 1\n[[system]]\nlabel = \"pg\"\n"
        ),
        false,
        None,
    );
    let l = limiter(at(&data, 0));
    assert_eq!(l.figures.server_cpus, 1);
    if l.kind == LimiterKind::ClientBound {
        // A busy suite starved the load generator on its own CPU (seen in
        // a fresh-clone run): the trial measured the client, and the
        // verdict names the load generator, not the server.
        assert!(l.verdict.contains("load generator"), "{}", l.verdict);
        return;
    }
    let cpu = l.figures.server_cpu_share.unwrap();
    let runq = l.figures.runq_wait_share.unwrap();
    assert!(cpu >= 0.85 || runq >= 0.5, "{}", l.verdict);
    // Its one CPU is saturated: by the server itself, or, on a machine
    // whose other tenants take that CPU, by them, and then it says so.
    if cpu >= 0.85 || l.figures.background_share.unwrap_or(0.0) < 0.10 {
        assert_eq!(l.kind, LimiterKind::ServerCpu, "{}", l.verdict);
        assert!(
            l.verdict.starts_with("server CPU saturated: "),
            "{}",
            l.verdict
        );
    } else {
        assert_eq!(l.kind, LimiterKind::BackgroundLoad, "{}", l.verdict);
        assert!(l.verdict.contains("(background load: "), "{}", l.verdict);
    }
}

/// `TcpExt: ListenOverflows`, `ListenDrops` and `TCPBacklogDrop` of this
/// namespace, from the file nstat reads.
fn listen_counters() -> [u64; 3] {
    let text = std::fs::read_to_string("/proc/net/netstat").unwrap();
    ["ListenOverflows", "ListenDrops", "TCPBacklogDrop"]
        .map(|name| scalelab::procfs::net::table_value(&text, "TcpExt", name).unwrap())
}

#[test]
fn nginx_with_a_backlog_of_8_overflows_its_listen_queue_by_the_kernels_count() {
    let dir = tempfile::tempdir().unwrap();
    let before = listen_counters();
    let (data, _) = run(
        dir.path(),
        "name = \"lim\"\n[server]\nkind = \"nginx\"\naccess_log = false\nbacklog = 8\nreuseport = false\n\
         worker_processes = 1\n[load]\nkind = \"http\"\npath = \"/\"\nconnreqs = 1\ntimeout = \"3s\"\n\
         [sweep]\nconnections = [512]\n\
         [trials]\nduration = \"2s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n[[system]]\nlabel = \"nginx\"\n",
        false,
        None,
    );
    let after = listen_counters();
    let d: Vec<u64> = after.iter().zip(before).map(|(a, b)| a - b).collect();
    let kernel = d[0].max(d[1]) + d[2];
    let t = &data.trials[0];
    let l = t.context.limiter.as_ref().expect("a limiter");
    assert_eq!(l.kind, LimiterKind::ListenOverflow, "{}", l.verdict);
    let counted = l.figures.listen_drops.unwrap();
    assert!(counted >= 1);
    // The trial's window is inside the run: the kernel's own count over the
    // whole run holds the trial's (other tenants of the namespace can only
    // add to it).
    assert!(counted <= kernel, "trial {counted}, kernel {kernel}");
    assert!(l
        .verdict
        .contains(&format!("{counted} connections dropped")));
}

/// One trial of an Unbound resolver of `threads` threads, the load
/// offering `(rate, connections, queries)` for `duration` from the
/// window's start.
fn unbound_run(
    dir: &Path,
    threads: u32,
    (rate, conns, count): (u32, u32, u32),
    duration: &str,
) -> RunData {
    let recipe = format!(
        "name = \"lim\"\n[server]\nkind = \"resolver\"\nsoftware = \"unbound\"\nthreads = {threads}\n\
         [load]\nkind = \"dns\"\nrate = {rate}\nconnections = {conns}\nthreads = 1\ntimeout = \"1s\"\n\
         queries = {{ names = 2000, count = {count} }}\n\
         [sweep]\n\"server.threads\" = [{threads}]\n\
         [trials]\nduration = \"{duration}\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n[[system]]\nlabel = \"unbound\"\n"
    );
    run(dir, &recipe, false, None).0
}

#[test]
fn a_resolver_past_its_capacity_names_receive_errors_or_cpu_as_its_counters_show() {
    // Offered 150k queries/s from the window's start, past one Unbound
    // thread's capacity all along (a ramp to it left the resolver under
    // capacity for most of the window: "server busy 22%", named nothing,
    // in 1 run of 3 before).
    let dir = tempfile::tempdir().unwrap();
    let data = unbound_run(dir.path(), 1, (150_000, 4, 400_000), "4s");
    let t = &data.trials[0];
    let l = t.context.limiter.as_ref().expect("a limiter");
    let f = &l.figures;
    // Read in the resolver's own network namespace.
    assert!(f.udp_rcvbuf_errors.is_some(), "{l:?}");
    let drops = f.udp_rcvbuf_error_share.unwrap_or(0.0) >= 0.001;
    let cpu = f.server_cpu_share.unwrap_or(0.0) >= 0.85 || f.runq_wait_share.unwrap_or(0.0) >= 0.5;
    eprintln!("{}", l.verdict);
    match l.kind {
        LimiterKind::UdpReceiveErrors => assert!(drops, "{l:?}"),
        LimiterKind::ServerCpu | LimiterKind::BackgroundLoad => assert!(cpu && !drops, "{l:?}"),
        other => panic!(
            "a resolver past its capacity named {other:?}: {}",
            l.verdict
        ),
    }
}

#[test]
fn an_unbound_of_two_threads_counts_each_threads_queries_in_the_figures() {
    // Under capacity (20k queries/s against two threads), so every query
    // the load sent reached a thread.
    let dir = tempfile::tempdir().unwrap();
    let data = unbound_run(dir.path(), 2, (20_000, 8, 100_000), "2s");
    let t = &data.trials[0];
    let l = limiter(t);
    let counts = l
        .figures
        .worker_requests
        .clone()
        .expect("each thread's queries");
    let m = t.measurement.as_ref().unwrap();
    let sent = m.requests + m.errors.timeout;
    let server: u64 = counts.iter().sum();
    let dropped = l.figures.udp_rcvbuf_errors.unwrap_or(0);
    eprintln!(
        "threads' queries {counts:?} = {server}; the load sent {sent} ({} answered, errors {:?}), {dropped} dropped; {}",
        m.requests, m.errors, l.verdict
    );
    assert_eq!(counts.len(), 2, "{counts:?}");
    // Each query the load sent in the window reached a thread, or was
    // dropped at the socket before one read it.
    assert!(
        server <= sent && server + dropped >= sent,
        "{server} of {sent}"
    );
}

#[test]
fn a_dataset_beyond_the_memory_limit_reads_from_storage_where_a_small_one_does_not() {
    // pg-readonly-dbsize scaled down: 160 MB instead of 256 MB, scale 1
    // (~16 MB) against scale 20 (~320 MB, twice the limit), 3 s trials.
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = run(
        dir.path(),
        &format!(
            "{PG}shared_buffers = \"16MB\"\nserver_memory = \"160M\"\nserver_cpus = 1\n\
             [load]\nkind = \"pg\"\nscript = \"select-only\"\ntimeout = \"10s\"\n\
             [sweep]\nconnections = [8]\n\"load.scale\" = [1, 20]\n\
             [trials]\nduration = \"3s\"\nwarmup = \"2s\"\nmin = 1\nmax = 1\nrestart = \"per_point\"\n\
             [[system]]\nlabel = \"160M\"\n"
        ),
        false,
        None,
    );
    let small = &limiter(at(&data, 0)).figures;
    let large = &limiter(at(&data, 1)).figures;
    // Both points' reads were measured: the warmup's backends exiting as
    // the window begins must not leave them unreadable (they once did,
    // showing as 0 B/s at both points under a parallel suite).
    eprintln!(
        "storage reads: scale 1 {:?} B/s, scale 20 {:?} B/s",
        small.read_bytes_per_s, large.read_bytes_per_s
    );
    assert!(small.read_bytes_per_s.is_some(), "{small:?}");
    assert!(large.read_bytes_per_s.is_some(), "{large:?}");
    let read = |f: &scalelab::probe::limiter::LimiterNumbers| f.read_bytes_per_s.unwrap_or(0.0);
    let faults = |f: &scalelab::probe::limiter::LimiterNumbers| f.major_faults_per_s.unwrap_or(0.0);
    assert!(
        read(large) > 4.0 * read(small).max(1e5) || faults(large) > 4.0 * faults(small).max(1.0),
        "storage reads {} B/s against {} B/s, major faults {}/s against {}/s; datasets {:?} / {:?}; {} / {}",
        read(large),
        read(small),
        faults(large),
        faults(small),
        at(&data, 1).context.dataset,
        at(&data, 0).context.dataset,
        limiter(at(&data, 1)).verdict,
        limiter(at(&data, 0)).verdict,
    );
}

/// Reads every file under `dir` into the page cache, from this process
/// (outside any cgroup of scalelab's).
fn cache_files(dir: &Path) -> u64 {
    let mut bytes = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            bytes += cache_files(&entry.path());
        } else if kind.is_file() {
            bytes += std::fs::read(entry.path()).unwrap().len() as u64;
        }
    }
    bytes
}

#[test]
fn a_reused_dataset_cached_before_the_server_started_is_read_from_storage_under_the_limit() {
    // The cluster of a first run is reused by a second. In between, its
    // files are cached by another process (as an earlier run's server,
    // whose cgroup is gone, leaves them): pages no limit bounds. The
    // second server must still read its dataset, twice its limit, from
    // storage.
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "{PG}shared_buffers = \"16MB\"\nserver_memory = \"160M\"\nserver_cpus = 1\n\
         [load]\nkind = \"pg\"\nscript = \"select-only\"\ntimeout = \"10s\"\nscale = 20\n\
         [sweep]\nconnections = [8]\n\
         [trials]\nduration = \"3s\"\nwarmup = \"2s\"\nmin = 1\nmax = 1\n\
         [[system]]\nlabel = \"160M\"\n"
    );
    run(dir.path(), &body, false, None);
    let cached = cache_files(&dir.path().join("work").join("postgres"));
    assert!(cached > 300 << 20, "{cached} bytes");
    let (data, _) = run(dir.path(), &body, false, None);
    let f = &limiter(at(&data, 0)).figures;
    eprintln!(
        "storage reads of the reused scale 20: {:?} B/s",
        f.read_bytes_per_s
    );
    let read = f.read_bytes_per_s.expect("reads measured");
    let faults = f.major_faults_per_s.unwrap_or(0.0);
    assert!(
        read > 1e6 || faults > 10.0,
        "storage reads {read} B/s, major faults {faults}/s: the dataset was served from a page cache outside the limit; {}",
        limiter(at(&data, 0)).verdict
    );
}

#[test]
fn a_perf_without_tracepoints_keeps_the_on_cpu_profile_and_says_so_once() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v perf"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    // perf as it answers where tracefs may not be read; everything else is
    // the real perf.
    std::fs::write(
        bin.join("perf"),
        format!(
            "#!/bin/sh\ncase \"$*\" in *sched:sched_switch*)\n\
             echo \"event syntax error: 'sched:sched_switch'\" >&2\n\
             echo '                     \\___ cannot access trace events' >&2\nexit 129;;\nesac\n\
             exec {} \"$@\"\n",
            real.trim()
        ),
    )
    .unwrap();
    std::fs::set_permissions(bin.join("perf"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (data, err) = run(
        dir.path(),
        "name = \"lim\"\n[server]\nkind = \"nginx\"\naccess_log = false\n[load]\nkind = \"http\"\npath = \"/\"\n\
         [sweep]\nconnections = [2, 16]\n[trials]\nduration = \"500ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n\
         [[system]]\nlabel = \"a\"\n[[system]]\nlabel = \"b\"\n",
        true,
        Some(&bin),
    );
    assert!(data.trials.iter().all(|t| t.status == TrialStatus::Ok));
    let errors: Vec<_> = data.profiles.iter().map(|p| &p.error).collect();
    assert!(
        data.profiles.iter().any(|p| p.folded.is_some()),
        "on-CPU kept: {errors:?}"
    );
    assert!(data.profiles.iter().all(|p| p.offcpu.is_none()));
    let line = "no off-CPU profile: tracepoints (sched:sched_switch) are not permitted here";
    assert_eq!(err.matches(line).count(), 1, "{err}");
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(html.contains(line));
}
