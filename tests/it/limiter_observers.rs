//! The limiter checked by observers that do not share its code (issue 37):
//! `pidstat -t -u` (sysstat) on the quickstart's two systems, each nginx
//! worker's CPU time from `/proc/PID/stat` (ticks, not schedstat) on two
//! workers behind `reuseport`, and PostgreSQL's own `pg_stat_activity`
//! beside tpcb-like on one branch row.

use scalelab::probe::limiter::{Limiter, LimiterKind};
use scalelab::store::{Trial, TrialStatus};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

fn limiter(t: &Trial) -> &Limiter {
    assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
    t.context.limiter.as_ref().expect("a limiter")
}

/// A child killed (by its PID, and its own process group when it leads
/// one) when the test is done with it, or fails.
struct Observer(Child, bool);

impl Drop for Observer {
    fn drop(&mut self) {
        if self.1 {
            // SAFETY: kill(2) on the process group this test's child leads
            // (it was spawned with `process_group(0)`): a plain system call.
            unsafe { libc::kill(-(self.0.id() as i32), libc::SIGTERM) };
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One `pidstat -t -u -h` thread row: seconds of the day, TID, %wait, %CPU.
#[derive(Clone, Copy, Debug)]
struct PidstatRow {
    /// The end of the row's second, in seconds of the (UTC) day.
    t: i64,
    tid: u32,
    wait: f64,
    cpu: f64,
}

/// Parses `pidstat -t -u -h` output (`# Time UID TGID TID %usr %system
/// %guest %wait %CPU CPU Command`): the thread rows (TGID `-`).
fn pidstat_rows(text: &str) -> Vec<PidstatRow> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("Linux"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_ascii_whitespace().collect();
            if f.len() < 11 || f[2] != "-" {
                return None;
            }
            let hms: Vec<i64> = f[0].split(':').filter_map(|x| x.parse().ok()).collect();
            Some(PidstatRow {
                t: *hms.first()? * 3600 + *hms.get(1)? * 60 + *hms.get(2)?,
                tid: f[3].parse().ok()?,
                wait: f[7].parse().ok()?,
                cpu: f[8].parse().ok()?,
            })
        })
        .collect()
}

/// A thread's mean %CPU and %wait over the pidstat seconds that lie
/// wholly inside the trial's 5 s window: the rows stamped 3 and 4 s after
/// the trial's start (a row ends at its stamp, at pidstat's own fraction of
/// a second; the server's restart and the 300 ms warmup come before the
/// window, which ends at least 5.3 s after the start). pidstat writes no
/// row for a second a thread did nothing, so a missing second counts 0.
/// Rows from outside the window are another load: on a suite whose other
/// tests loaded the machine, they once moved %wait by 20 points.
fn steady(rows: &[PidstatRow], tid: u32, started_at: i64) -> (f64, f64) {
    let day = started_at.rem_euclid(86_400);
    let seconds = [day + 3, day + 4];
    let mine: Vec<&PidstatRow> = rows
        .iter()
        .filter(|r| r.tid == tid && seconds.contains(&r.t))
        .collect();
    let n = seconds.len() as f64;
    (
        mine.iter().map(|r| r.cpu).sum::<f64>() / n / 100.0,
        mine.iter().map(|r| r.wait).sum::<f64>() / n / 100.0,
    )
}

/// How far a worker's run-queue wait (share of the time seen) may be from
/// pidstat's %wait. pidstat's two whole seconds are the window's middle,
/// the limiter's figure the whole 5 s window; where the worker is not
/// saturated (4 connections) its wait moves between them: the limiter's
/// 0.15, 0.11 and 0.16 against pidstat's 0.04, 0.005 and 0.28 in three
/// runs on a quiet machine, each with on-CPU shares within 0.02.
const WAIT_TOLERANCE: f64 = 0.15;

#[test]
fn the_quickstarts_per_thread_figures_and_verdicts_agree_with_pidstat() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pidstat.txt");
    let pidstat = Observer(
        Command::new("pidstat")
            .args(["-t", "-u", "-h", "-C", "nginx", "1"])
            .env("LC_ALL", "C")
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .expect("pidstat (sysstat; scripts/setup.sh installs it)"),
        false,
    );
    // The quickstart's two systems at 3 points, with windows long enough
    // for pidstat's 1 s rows to have a steady middle.
    let (data, _) = crate::support::run::run_recipe(
        dir.path(),
        "name = \"lim\"\n[server]\nkind = \"nginx\"\naccess_log = false\nreuseport = true\n\
         [load]\nkind = \"http\"\npath = \"/\"\ntimeout = \"2s\"\n\
         [sweep]\nconnections = [4, 64, 256]\n\
         [trials]\nduration = \"5s\"\nwarmup = \"300ms\"\nmin = 1\nmax = 1\nrestart = \"per_point\"\n\
         [[system]]\nlabel = \"1 worker\"\nserver = { worker_processes = 1 }\n\
         [[system]]\nlabel = \"2 workers\"\nserver = { worker_processes = 2 }\n",
        &[],
        None,
    );
    std::thread::sleep(std::time::Duration::from_millis(1500));
    drop(pidstat);
    let rows = pidstat_rows(&std::fs::read_to_string(&out).unwrap());
    assert!(!rows.is_empty(), "pidstat wrote no thread rows");
    let (mut compared, mut waits_compared) = (0, 0);
    for t in &data.trials {
        let l = limiter(t);
        let figures = t.probe.as_ref().and_then(|p| p.limiter.as_ref()).unwrap();
        let at = format!("{} at {:?}: {}", t.system, t.point.coords, l.verdict);
        let workers: Vec<_> = figures
            .busiest_threads
            .iter()
            .filter(|w| w.worker)
            .collect();
        assert!(!workers.is_empty(), "{at}");
        let disturbed = l.figures.background_share.unwrap_or(0.0)
            >= scalelab::probe::background::BACKGROUND_SHARE;
        let mut busiest_seen = 0.0f64;
        // The busiest worker's runnable share as pidstat sees it: on a CPU
        // plus waiting for one (the verdict's second form: runnable 90%).
        let mut busiest_runnable = 0.0f64;
        for w in &workers {
            let (cpu, wait) = steady(&rows, w.tid, t.started_at);
            let ours = w.oncpu_s / w.seen_s;
            let queued = w.runq_wait_s / w.seen_s;
            eprintln!(
                "{at}\n  thread {}: on a CPU {:.0}% (pidstat {:.0}%), waiting {:.0}% (pidstat %wait {:.0}%)",
                w.tid,
                ours * 100.0,
                cpu * 100.0,
                queued * 100.0,
                wait * 100.0
            );
            // On a machine the test has to itself, within 10 points. With
            // other processes taking 10% of the CPUs or more, a starved
            // thread's share moves from second to second as its wait does
            // (below), so pidstat's steady middle seconds and the whole
            // window differ more: 33% against pidstat's 22%, with 61% of
            // the CPUs taken by the suite's other tests, in a fresh-clone
            // suite. There the wait's tolerance holds.
            let cpu_tolerance = if disturbed { WAIT_TOLERANCE } else { 0.10 };
            assert!(
                (ours - cpu).abs() <= cpu_tolerance,
                "thread {}: {ours} against pidstat {cpu}; {at}",
                w.tid
            );
            // The run-queue wait is compared where the machine was the
            // test's own: with other processes taking 10% of the CPUs or
            // more (the suite's other tests; 33% and 54% in two fresh-clone
            // suites), the wait moves from second to second, and pidstat's
            // whole seconds and the window differ by a fraction at each end.
            if !disturbed {
                assert!(
                    (queued - wait).abs() <= WAIT_TOLERANCE,
                    "thread {}: {queued} against pidstat {wait}; {at}",
                    w.tid
                );
                waits_compared += 1;
            }
            busiest_seen = busiest_seen.max(cpu);
            busiest_runnable = busiest_runnable.max(cpu + wait);
            compared += 1;
        }
        // Each verdict as pidstat sees it.
        match l.kind {
            LimiterKind::ServerCpu => assert!(
                busiest_seen >= 0.80
                    || busiest_runnable >= 0.85
                    || l.figures.server_cpu_share.unwrap_or(0.0) >= 0.85,
                "{at}: pidstat's busiest worker {busiest_seen} on a CPU, {busiest_runnable} runnable"
            ),
            LimiterKind::CpusShared | LimiterKind::BackgroundLoad => {
                // pidstat's %wait is of the elapsed time, the verdict's
                // run-queue share of the runnable time (on a CPU plus
                // waiting): compare in the verdict's unit, with the
                // threshold's 25% less a sampling tolerance.
                let waits: Vec<f64> = workers
                    .iter()
                    .map(|w| steady(&rows, w.tid, t.started_at))
                    .filter(|s| s.0 + s.1 > 0.0)
                    .map(|s| s.1 / (s.0 + s.1))
                    .collect();
                let mean = waits.iter().sum::<f64>() / waits.len() as f64;
                assert!(
                    mean >= 0.18,
                    "{at}: pidstat's %wait of runnable time {mean}"
                );
                assert!(
                    busiest_seen < 0.95,
                    "{at}: a worker on a CPU {busiest_seen}"
                );
            }
            _ => {}
        }
        // At 64 connections and more, a limiter is named, where the
        // machine was mostly the test's own: with other processes taking a
        // quarter of the CPUs or more (50% in one fresh clone's suite), the
        // load generator is starved too and the server rightly has none.
        let starved = l.figures.background_share.unwrap_or(0.0) >= 0.25;
        if t.point.index > 0 && !starved {
            assert_ne!(l.kind, LimiterKind::None, "{at}");
        }
    }
    assert!(compared >= 6, "{compared} threads compared");
    eprintln!("{waits_compared} of {compared} threads' run-queue waits compared with pidstat");
}

#[test]
fn two_workers_behind_reuseport_name_the_worker_that_did_the_work_by_its_cpu_time() {
    // One connection reaches one worker; two reach one or both, as the
    // kernel's reuseport hash falls.
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = crate::support::run::run_recipe(
        dir.path(),
        "name = \"lim\"\n[server]\nkind = \"nginx\"\naccess_log = false\nreuseport = true\nworker_processes = 2\n\
         [load]\nkind = \"http\"\npath = \"/\"\n\
         [sweep]\nconnections = [1, 2]\n\
         [trials]\nduration = \"3s\"\nwarmup = \"300ms\"\nmin = 2\nmax = 2\nrestart = \"per_trial\"\n\
         [[system]]\nlabel = \"2 workers\"\n",
        &[],
        None,
    );
    let mut imbalanced = 0;
    for t in &data.trials {
        let l = limiter(t);
        let probe = t.probe.as_ref().unwrap();
        // Each worker's CPU time by /proc/PID/stat: the root's children.
        let root = probe.server_pid.unwrap();
        let mut by_proc: Vec<f64> = probe
            .server_processes
            .iter()
            .filter(|p| p.ppid == root)
            .map(|p| p.cpu_s)
            .collect();
        by_proc.sort_by(|a, b| b.total_cmp(a));
        assert_eq!(by_proc.len(), 2, "{:?}", probe.server_processes);
        let proc_share = by_proc[0] / (by_proc[0] + by_proc[1]);
        let at = format!("{:?} trial {}: {}", t.point.coords, t.trial, l.verdict);
        let ours = l
            .figures
            .busiest_worker_share
            .unwrap_or_else(|| panic!("{at}"));
        eprintln!(
            "{at}\n  busiest worker: {:.0}% of the workers' CPU time (/proc: {:.0}%)",
            ours * 100.0,
            proc_share * 100.0
        );
        assert_eq!(l.figures.workers, Some(2), "{at}");
        assert!(
            (ours - proc_share).abs() <= 0.05,
            "{ours} against /proc {proc_share}; {at}"
        );
        if proc_share >= 0.9 {
            imbalanced += 1;
            assert!(l.crossed.contains(&LimiterKind::WorkerImbalance), "{at}");
            // Named first, unless the load generator was the limit.
            if l.kind != LimiterKind::ClientBound {
                assert_eq!(l.kind, LimiterKind::WorkerImbalance, "{at}");
                assert!(l.verdict.contains("one of 2 workers did"), "{at}");
            }
        } else if proc_share <= 0.7 {
            assert!(!l.crossed.contains(&LimiterKind::WorkerImbalance), "{at}");
        }
    }
    assert!(imbalanced >= 2, "one connection always lands on one worker");
}

/// Samples `pg_stat_activity` every 100 ms through one `psql` session:
/// one block of `(wait_event_type, state)` rows per sample, ended by `END`.
fn sample_pg_stat_activity(port: u16) -> Observer {
    let query = "select coalesce(wait_event_type, 'CPU'), state from pg_stat_activity \
                 where backend_type = 'client backend' and pid <> pg_backend_pid();";
    let script = format!(
        "until psql -h 127.0.0.1 -p {port} -U postgres -d postgres -Atc 'select 1' >/dev/null 2>&1; do sleep 0.1; done\n\
         while :; do echo \"{query}\"; echo \"select 'END';\"; sleep 0.1; done | \
         psql -h 127.0.0.1 -p {port} -U postgres -d postgres -At -F '|'"
    );
    Observer(
        Command::new("bash")
            .args(["-c", &script])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap(),
        true,
    )
}

use std::os::unix::process::CommandExt;

#[test]
fn tpcb_likes_lock_share_agrees_with_pg_stat_activity_within_5_points() {
    let dir = tempfile::tempdir().unwrap();
    let port = crate::support::free_port();
    let mut sampler = sample_pg_stat_activity(port);
    let stdout = sampler.0.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut blocks: Vec<Vec<(String, String)>> = Vec::new();
        let mut cur = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line == "END" {
                blocks.push(std::mem::take(&mut cur));
            } else if let Some((w, s)) = line.split_once('|') {
                cur.push((w.to_string(), s.to_string()));
            }
        }
        blocks
    });
    let (data, _) = crate::support::run::run_recipe(
        dir.path(),
        &format!(
            "name = \"lim\"\n[server]\nkind = \"postgres\"\nport = {port}\n\
             [load]\nkind = \"pg\"\nscale = 1\nscript = \"tpcb-like\"\n\
             [sweep]\nconnections = [16]\n\
             [trials]\nduration = \"20s\"\nwarmup = \"1s\"\nmin = 1\nmax = 1\n[[system]]\nlabel = \"pg\"\n"
        ),
        &[],
        None,
    );
    // Ends the shell and its psql (their own process group).
    drop(sampler);
    let blocks = reader.join().unwrap();
    // The load's 16 connections open: the warmup's second left out, as the
    // window leaves it out.
    let full: Vec<&Vec<(String, String)>> =
        blocks.iter().filter(|b| b.len() >= 16).skip(10).collect();
    assert!(
        full.len() >= 40,
        "{} samples with the load's connections",
        full.len()
    );
    let mut kinds: HashMap<&str, usize> = HashMap::new();
    for b in &full {
        for (w, _) in b.iter() {
            *kinds.entry(w.as_str()).or_default() += 1;
        }
    }
    let total: usize = kinds.values().sum();
    let pg =
        (kinds.get("Lock").unwrap_or(&0) + kinds.get("LWLock").unwrap_or(&0)) as f64 / total as f64;
    let l = limiter(&data.trials[0]);
    let ours = l.figures.lock_wait_share.unwrap();
    eprintln!(
        "lock share: limiter {:.1}% (of it runnable, not past the lock {:.1}%), pg_stat_activity {:.1}% (Lock + LWLock of {total} samples: {kinds:?}); run queue {:.1}%; {}",
        ours * 100.0,
        l.figures.lock_woken_share.unwrap_or(0.0) * 100.0,
        pg * 100.0,
        l.figures.runqueue_share.unwrap_or(0.0) * 100.0,
        l.verdict
    );
    assert_eq!(l.kind, LimiterKind::LockWaits, "{}", l.verdict);
    // A backend woken from a lock still shows Lock in pg_stat_activity
    // until it has run past it; the limiter counts such time as the lock
    // too (`probe::limiter::woken`), so the two shares agree.
    assert!(
        (ours - pg).abs() <= 0.05,
        "limiter {ours} (of it not past the lock {:?}), PostgreSQL {pg}",
        l.figures.lock_woken_share
    );
}

/// The mysql-threads recipe's read-write point at 16 clients, both thread
/// handlings, with `server` lines for both: each trial and its verdict
/// (printed).
fn mariadb_read_write_verdicts(server: &str) -> Vec<(Trial, Limiter)> {
    let dir = tempfile::tempdir().unwrap();
    let recipe = format!(
        "name = \"lim\"\n[server]\nkind = \"mariadb\"\ninnodb_buffer_pool_size = \"256M\"\n\
         innodb_flush_log_at_trx_commit = 2\n{server}\
         [load]\nkind = \"mysql\"\nscript = \"oltp_read_write\"\ntimeout = \"10s\"\ntables = 4\ntable_size = 10000\n\
         [sweep]\nconnections = [16]\n\
         [trials]\nduration = \"6s\"\nwarmup = \"2s\"\nmin = 1\nmax = 1\nrestart = \"never\"\n\
         [[system]]\nlabel = \"per-connection\"\nserver = {{ thread_handling = \"one-thread-per-connection\" }}\n\
         [[system]]\nlabel = \"pool\"\nserver = {{ thread_handling = \"pool-of-threads\" }}\n"
    );
    let (data, _) = crate::support::run::run_recipe(dir.path(), &recipe, &[], None);
    data.trials
        .into_iter()
        .map(|t| {
            let l = limiter(&t).clone();
            eprintln!("{}: {}", t.system, l.verdict);
            (t, l)
        })
        .collect()
}

#[test]
fn mariadbs_pool_of_threads_is_not_named_blocked_on_row_locks_its_innodb_did_not_count() {
    // The mysql-threads recipe's read-write point at 16 clients, both
    // thread handlings: the verdict carries InnoDB's own row-lock count,
    // and a lock verdict stands only where InnoDB counted the time.
    for (t, l) in &mariadb_read_write_verdicts("") {
        let f = &l.figures;
        let waits = f.row_lock_waits.expect("InnoDB's row-lock waits read");
        let share = f.row_lock_wait_share.expect("and their time");
        assert!(
            waits > 0,
            "read-write at 16 clients waits on some row: {}",
            l.verdict
        );
        let pooled = f.pool_threads.is_some_and(|p| p > 0);
        assert_eq!(pooled, t.system == "pool", "{f:?}");
        match l.kind {
            LimiterKind::LockWaits => assert!(share >= 0.30 || !pooled, "{}", l.verdict),
            LimiterKind::PoolWaits => {
                assert!(pooled && share < 0.30, "{}", l.verdict);
                assert!(l.verdict.contains("Innodb_row_lock_waits"), "{}", l.verdict);
            }
            _ => {}
        }
    }
}

#[test]
fn performance_schema_names_the_pools_own_waits_where_it_is_on() {
    // The same read-write point with performance_schema on and its
    // synchronisation instruments enabled: the verdict carries what the
    // threads waited in, by the server's own timers.
    let verdicts = mariadb_read_write_verdicts(
        "extra = [\"performance_schema = ON\", \"performance_schema_instrument = 'wait/synch/%=ON'\"]\n",
    );
    for (t, l) in &verdicts {
        let f = &l.figures;
        let pool = f.schema_pool_waiting.expect("performance_schema read");
        let synch = f.schema_synch_waiting.expect("and its mutexes");
        assert!(synch >= 0.0 && f.schema_lock_waiting.is_some(), "{f:?}");
        if t.system == "pool" {
            // Threads waiting on the pool's conditions, on average: some,
            // and never more than the pool has (its timer thread beside).
            let threads = f.pool_threads.expect("the pool's threads") as f64;
            assert!(
                pool > 0.5 && pool <= threads + 1.0,
                "{pool} of {threads}: {f:?}"
            );
        } else {
            assert!(pool < 0.05, "no pool, yet {pool} threads waited in one");
        }
        if matches!(l.kind, LimiterKind::LockWaits | LimiterKind::PoolWaits) {
            assert!(
                l.verdict.contains("performance_schema: on average"),
                "{}",
                l.verdict
            );
        }
        if l.kind == LimiterKind::PoolWaits {
            assert!(pool > synch, "{}", l.verdict);
        }
    }
}
