//! `run --profile` with a real `perf record` against real nginx and a real
//! PostgreSQL: folded stacks with the kernel's TCP path are stored, the
//! profiled trials stay out of the statistics, the overhead is recorded,
//! the report embeds the flame graphs; and a perf that may not run leaves
//! the run going with "no profile".

use crate::support::scalelab;
use scalelab::store::{ProfileRecord, RunData, TrialStatus};
use std::path::Path;
use std::time::{Duration, Instant};

fn run(dir: &Path, body: &str, extra_path: Option<&Path>) -> (RunData, String, String) {
    let (data, err) = crate::support::run::run_recipe(dir, body, &["--profile"], extra_path);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    (data, html, err)
}

fn drawn<'a>(data: &'a RunData, system: &str) -> &'a ProfileRecord {
    data.profiles
        .iter()
        .find(|p| p.system == system && p.folded.is_some())
        .unwrap_or_else(|| panic!("no profile of {system}: {:?}", errors(data)))
}

fn errors(data: &RunData) -> Vec<Option<String>> {
    data.profiles.iter().map(|p| p.error.clone()).collect()
}

/// Weight of the folded lines that pass through any of `frames`.
fn weight_through(folded: &str, frames: &[&str]) -> u64 {
    folded
        .lines()
        .filter(|l| frames.iter().any(|f| l.contains(f)))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum()
}

#[test]
fn nginx_flame_graphs_show_the_kernel_tcp_path_and_a_differential() {
    let dir = tempfile::tempdir().unwrap();
    let (data, html, err) = run(
        dir.path(),
        "name = \"prof\"\n[server]\nkind = \"nginx\"\naccess_log = false\n\
         [load]\nkind = \"http\"\npath = \"/\"\n[sweep]\nconnections = [2, 16]\n\
         [trials]\nduration = \"600ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n\
         [[system]]\nlabel = \"one\"\nbaseline = true\nserver = { worker_processes = 1 }\n\
         [[system]]\nlabel = \"two\"\nserver = { worker_processes = 2 }\n",
        None,
    );
    // Profiled trials are extra: the statistics see 2 systems x 2 points.
    assert_eq!(data.trials.len(), 4);
    assert!(data.trials.iter().all(|t| t.status == TrialStatus::Ok));
    for system in ["one", "two"] {
        let p = drawn(&data, system);
        let folded = p.folded.as_deref().unwrap();
        assert!(p.samples > 0);
        assert!(folded.lines().all(|l| l.starts_with("nginx;")), "{folded}");
        let tcp = weight_through(
            folded,
            &["tcp_sendmsg_[k]", "tcp_recvmsg_[k]", "tcp_v4_rcv_[k]"],
        );
        assert!(tcp > 0, "no kernel TCP frames in {system}'s profile");
        assert!(p.plain_rps.unwrap() > 0.0 && p.profiled_rps.unwrap() > 0.0);
        assert!(p.overhead().is_some());
    }
    // Both systems at the same point, so a differential is drawn.
    assert_eq!(drawn(&data, "one").point, drawn(&data, "two").point);
    assert!(
        html.contains("two against one at connections="),
        "no differential"
    );
    assert!(html.matches("<iframe").count() >= 3);
    assert!(html.contains("data:image/svg+xml;base64,"));
    assert!(err.contains("overhead"), "{err}");
}

#[test]
fn postgres_flame_graphs_cover_the_backends() {
    let dir = tempfile::tempdir().unwrap();
    let (data, html, _) = run(
        dir.path(),
        "name = \"prof\"\n[server]\nkind = \"postgres\"\nsynchronous_commit = \"off\"\n\
         [load]\nkind = \"pg\"\nscale = 1\nscript = \"select-only\"\n[sweep]\nconnections = [4]\n\
         [trials]\nduration = \"600ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n\
         [[system]]\nlabel = \"pg\"\n",
        None,
    );
    assert_eq!(data.trials.len(), 1);
    let p = drawn(&data, "pg");
    let folded = p.folded.as_deref().unwrap();
    // The backends are forked for the trial's connections, after perf
    // started: they are found through perf's fork events.
    assert!(
        folded.lines().all(|l| l.starts_with("postgres;")),
        "{folded}"
    );
    assert!(weight_through(folded, &["_[k]"]) > 0, "no kernel frames");
    assert!(
        weight_through(folded, &["recv", "send", "epoll"]) > 0,
        "no socket path"
    );
    assert_eq!(p.role, "peak");
    assert!(html.contains("pg at connections=4 (peak)"));
}

#[test]
fn a_perf_that_may_not_run_leaves_the_run_going_with_no_profile() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let fake = bin.join("perf");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'Error:' >&2\necho 'Access to performance monitoring and observability operations is limited.' >&2\nexit 255\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (data, html, err) = run(
        dir.path(),
        "name = \"prof\"\n[server]\nkind = \"nginx\"\n[load]\nkind = \"http\"\npath = \"/\"\n\
         [sweep]\nconnections = [2]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n\
         [[system]]\nlabel = \"a\"\n[[system]]\nlabel = \"b\"\n",
        Some(&bin),
    );
    assert_eq!(data.trials.len(), 2);
    assert!(data.trials.iter().all(|t| t.status == TrialStatus::Ok));
    // One attempt, one line: perf is not retried at every point.
    assert_eq!(data.profiles.len(), 1, "{:?}", errors(&data));
    let line = "no profile: perf record failed: Access to performance monitoring";
    assert_eq!(err.matches(line).count(), 1, "{err}");
    assert!(html.contains(line), "report does not say no profile");
    assert!(!html.contains("<iframe"));
}

#[test]
fn kill_9_while_perf_records_leaves_no_perf_directory() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("exp.toml");
    std::fs::write(
        &exp,
        "name = \"prof-kill\"\n[server]\nkind = \"nginx\"\n\
         [load]\nkind = \"http\"\npath = \"/\"\nrate = 200\n[sweep]\nconnections = [2]\n\
         [trials]\nduration = \"5s\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    )
    .unwrap();
    let work = dir.path().join("work");
    let mut child = scalelab()
        .args([
            "--store",
            dir.path().join("s.sqlite").to_str().unwrap(),
            "run",
        ])
        .arg(&exp)
        .arg("--profile")
        .env("SCALELAB_WORKDIR", &work)
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let perf_dirs = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&work)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("perf-"))
            })
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(90);
    // The profiled trial comes after the sweep's 5 s one.
    while perf_dirs().is_empty() {
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        assert!(Instant::now() < deadline, "perf never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    let made = perf_dirs();
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while made.iter().any(|d| d.exists()) {
        assert!(
            Instant::now() < deadline,
            "5 s after kill -9 of scalelab, {made:?} is left"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// perf report's share, in percent, of the samples whose leaf is `sym`,
/// summed over the report's lines (`    34.51%  [k] _raw_spin_unlock_irq`,
/// or `    22.44%  fdget_pos  [k] mutex_spin_on_owner` with `--sort
/// parent,sym`) that `keep` keeps.
fn perf_report_sum(report: &str, keep: impl Fn(&str) -> bool) -> f64 {
    report
        .lines()
        .filter_map(|l| {
            let (pct, rest) = l.trim().split_once('%')?;
            let pct: f64 = pct.trim().parse().ok()?;
            keep(rest.trim()).then_some(pct)
        })
        .sum()
}

/// A fixture of `tests/fixtures/kernel-lock/`, built and profiled with
/// THREADS threads as the profile trial profiles (`perf record -e
/// cpu-clock -g`, folded by inferno): the verdict, and `perf report
/// --no-children -g none` of the same data with `sort`'s extra arguments.
struct Storm {
    dir: tempfile::TempDir,
    bin: std::path::PathBuf,
}

impl Storm {
    fn build(fixture: &str) -> Storm {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("storm");
        let cc = std::process::Command::new("gcc")
            .args(["-O2", "-pthread", "-o"])
            .arg(&bin)
            .arg(crate::support::fixture(&format!("kernel-lock/{fixture}")))
            .output()
            .unwrap();
        assert!(cc.status.success(), "{cc:?}");
        Storm { dir, bin }
    }

    fn profile(
        &self,
        threads: &str,
        sort: &[&str],
    ) -> (Option<scalelab::judging::kernel_lock::KernelLock>, String) {
        let data = self.dir.path().join(format!("perf-{threads}.data"));
        let rec = std::process::Command::new("perf")
            .args(["record", "-q", "-N", "-e", "cpu-clock", "-g", "-o"])
            .arg(&data)
            .arg(&self.bin)
            .args([threads, "2"])
            .output()
            .unwrap();
        assert!(rec.status.success(), "{rec:?}");
        let script = std::process::Command::new("perf")
            .args(["script", "-i"])
            .arg(&data)
            .output()
            .unwrap();
        let folded = scalelab::profile::recorder::fold(&script.stdout).unwrap();
        let report = std::process::Command::new("perf")
            .args(["report", "--stdio", "--no-children", "-g", "none"])
            .args(sort)
            .arg("-i")
            .arg(&data)
            .output()
            .unwrap();
        assert!(report.status.success(), "{report:?}");
        (
            scalelab::judging::kernel_lock::find(&folded.text),
            String::from_utf8_lossy(&report.stdout).into_owned(),
        )
    }
}

/// A kernel lock built on purpose (`tests/fixtures/kernel-lock/
/// shared-fd-storm.c`: four threads of one process reading one file
/// descriptor, each read under the open file's `f_pos_lock` mutex, taken
/// in `fdget_pos`): the verdict names `fdget_pos → __mutex_lock…` past the
/// limit, and its share is within 5 points of `perf report`'s count of the
/// samples under `fdget_pos` but outside it (`--sort parent,sym -p
/// ^fdget_pos$`). One thread, with no one to wait for, waits on nothing.
#[test]
fn threads_reading_one_file_descriptor_are_named_as_a_kernel_lock_as_perf_report_counts_it() {
    let storm = Storm::build("shared-fd-storm.c");
    let sort = ["--sort", "parent,sym", "-p", "^fdget_pos$"];
    let (many, report) = storm.profile("4", &sort);
    let many = many.expect("four threads wait on a lock");
    eprintln!("four threads: {}", many.verdict());
    let top = many.top.as_ref().unwrap();
    assert_eq!(top.caller, "fdget_pos", "{many:?}");
    assert!(top.lock.starts_with("__mutex_lock"), "{many:?}");
    let perf = perf_report_sum(&report, |r| {
        r.starts_with("fdget_pos ") && !r.ends_with("[k] fdget_pos")
    });
    eprintln!("perf report, under fdget_pos: {perf:.1}%");
    assert!(
        (top.share * 100.0 - perf).abs() <= 5.0,
        "scalelab {:.1}%, perf report {perf:.1}%",
        top.share * 100.0
    );
    // How much the threads contend depends on both CPUs being theirs (34%
    // alone on this VM, 19% beside another test), so the verdict is held to
    // perf report's count: past the limit with a margin, it is "kernel lock".
    let limit = scalelab::judging::kernel_lock::KERNEL_LOCK_SHARE * 100.0;
    if perf >= limit + 5.0 {
        assert!(many.limits, "{}", many.verdict());
    } else if perf < limit - 5.0 {
        assert!(!many.limits, "{}", many.verdict());
    }
    let (one, _) = storm.profile("1", &sort);
    eprintln!("one thread: {one:?}");
    assert!(one.as_ref().is_none_or(|k| !k.limits), "{one:?}");
}

/// An interrupts-off section (`tests/fixtures/kernel-lock/
/// sigmask-storm.c`: threads of one process changing their signal mask,
/// each change under the process's `siglock`, taken with `spin_lock_irq`)
/// is said as interrupts-off time at `__x64_sys_rt_sigprocmask →
/// _raw_spin_unlock_irq`, with `perf report`'s share of that symbol
/// within 5 points, and is never the verdict, with one thread or four:
/// cpu-clock samples (no PMU here) cannot tell a contended spin from the
/// section's own time (one thread read 27% and four 30% on this VM on
/// 2026-12-06; docs/limiter.md).
#[test]
fn a_signal_mask_storm_is_interrupts_off_time_as_perf_report_counts_it_and_no_verdict() {
    let storm = Storm::build("sigmask-storm.c");
    for threads in ["4", "1"] {
        let (k, report) = storm.profile(threads, &["--sort", "sym"]);
        let k = k.expect("samples end at the unlock");
        eprintln!("{threads} threads: {}", k.verdict());
        assert!(!k.limits, "{}", k.verdict());
        let irq = k.irq_off.as_ref().unwrap();
        assert!(irq.caller.contains("rt_sigprocmask"), "{k:?}");
        assert_eq!(irq.lock, "_raw_spin_unlock_irq", "{k:?}");
        let perf = perf_report_sum(&report, |r| r == "[k] _raw_spin_unlock_irq");
        assert!(
            (irq.share * 100.0 - perf).abs() <= 5.0,
            "scalelab {:.1}%, perf report {perf:.1}%",
            irq.share * 100.0
        );
    }
}

/// The frames of an inferno SVG: name, x and width (percent), depth (y).
fn svg_frames(svg: &str) -> Vec<(String, f64, f64, u32)> {
    svg.split("<g><title>")
        .skip(1)
        .filter_map(|g| {
            let (title, rest) = g.split_once("</title>")?;
            let attr = |name: &str| -> Option<&str> {
                let (_, v) = rest.split_once(&format!("{name}=\""))?;
                Some(v.split_once('"')?.0)
            };
            let name = title.split(" (").next()?.to_string();
            let pct = |v: &str| v.trim_end_matches('%').parse::<f64>().ok();
            Some((
                name,
                pct(attr("x")?)?,
                pct(attr("width")?)?,
                attr("y")?.parse().ok()?,
            ))
        })
        .collect()
}

/// The differential graph between two runs (`report A B`) of nginx with
/// `access_log` off and on: the widest frame of the second run's graph
/// whose function the first run's stacks never name is nginx's access-log
/// write (libc's write and, above it, the file system's write path).
#[test]
fn the_access_log_is_the_widest_new_frame_between_two_runs_profiles() {
    use base64::Engine;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let body = |on: bool| {
        format!(
            "name = \"log\"\n[server]\nkind = \"nginx\"\naccess_log = {on}\nworker_processes = 1\n\
             [load]\nkind = \"http\"\npath = \"/\"\n[sweep]\nconnections = [16]\n\
             [trials]\nduration = \"800ms\"\nwarmup = \"200ms\"\nmin = 1\nmax = 1\n\
             [[system]]\nlabel = \"nginx\"\n"
        )
    };
    for (label, on) in [("off", false), ("on", true)] {
        let exp = dir.path().join(format!("{label}.toml"));
        std::fs::write(&exp, body(on)).unwrap();
        let out = crate::support::run::run_cmd(dir.path(), &store, &exp)
            .args(["--profile", "--label", label, "-o"])
            .arg(dir.path().join(format!("{label}.html")))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", crate::support::stderr(&out));
    }
    let page = dir.path().join("page.html");
    let out = scalelab()
        .arg("--store")
        .arg(&store)
        .args(["report", "1", "2", "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let marker = "title=\"on-CPU: on against off, nginx at connections=16 (peak)\"";
    let (_, rest) = html
        .split_once(marker)
        .expect("no differential between the runs");
    let (_, rest) = rest.split_once("base64,").unwrap();
    let svg = base64::engine::general_purpose::STANDARD
        .decode(rest.split_once('"').unwrap().0)
        .unwrap();
    let svg = String::from_utf8(svg).unwrap();
    let data = scalelab::store::Store::open(&store, scalelab::catalog())
        .unwrap()
        .load_run("1")
        .unwrap();
    let before = data.profiles[0].folded.clone().unwrap();
    assert_the_log_write_is_the_widest_new_frame(&svg, &before);
    // `compare --profile DIR` writes the same graph as a file.
    let graphs = dir.path().join("graphs");
    let out = scalelab()
        .arg("--store")
        .arg(&store)
        .args(["compare", "1", "2", "--profile"])
        .arg(&graphs)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    let file = std::fs::read_dir(&graphs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.to_string_lossy()
                .contains("on-CPU__on_against_off__nginx")
        })
        .unwrap_or_else(|| panic!("no on-CPU graph in {}", graphs.display()));
    let written = std::fs::read_to_string(&file).unwrap();
    assert_the_log_write_is_the_widest_new_frame(&written, &before);
    assert!(
        crate::support::stderr(&out).contains(&file.display().to_string()),
        "compare names the file it wrote"
    );
}

/// The widest frame of the differential `svg` whose function the
/// baseline's stacks (`before`, folded) never name is a write, with the
/// file system's write path above it: nginx's access log.
fn assert_the_log_write_is_the_widest_new_frame(svg: &str, before: &str) {
    // The functions of the baseline (off): a frame of the graph is new
    // when the baseline's stacks never name its function.
    let known: std::collections::HashSet<&str> = before
        .lines()
        .filter_map(|l| l.rsplit_once(' ').map(|(s, _)| s))
        .flat_map(|s| s.split(';').map(|x| x.trim_end_matches("_[k]")))
        .collect();
    let frames = svg_frames(svg);
    let widest_new = frames
        .iter()
        .filter(|f| f.0 != "all" && !known.contains(f.0.as_str()))
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .expect("a frame the baseline lacks");
    let subtree: Vec<&str> = frames
        .iter()
        .filter(|g| {
            g.3 < widest_new.3
                && g.1 >= widest_new.1 - 1e-6
                && g.1 + g.2 <= widest_new.1 + widest_new.2 + 1e-6
        })
        .map(|g| g.0.as_str())
        .collect();
    eprintln!(
        "widest new frame: {} ({:.2}%), above: {subtree:?}",
        widest_new.0, widest_new.2
    );
    assert!(widest_new.0.contains("write"), "{widest_new:?}");
    assert!(
        subtree
            .iter()
            .any(|f| f.contains("generic_perform_write") || f.contains("ext4")),
        "the file system's write path is under {}: {subtree:?}",
        widest_new.0
    );
}
