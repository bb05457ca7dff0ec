//! The work counts (`probe::work`) against independent counts of the same
//! real nginx under wrk: `perf stat -e raw_syscalls:sys_enter` on the
//! server's cgroup, and the context switches of `/proc/PID/task/*/status`
//! read here.

use super::support::descendants;
use scalelab::placement::Placement;
use scalelab::probe::work::SyscallMode;
use scalelab::probe::{Sampler, SamplerConfig};
use scalelab::server;
use scalelab::shutdown::Shutdown;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Σ voluntary + involuntary context switches over every thread of the
/// processes `pids`.
fn proc_context_switches(pids: &[u32]) -> u64 {
    let mut total = 0;
    for pid in pids {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            for l in status.lines() {
                let n = l
                    .strip_prefix("voluntary_ctxt_switches:")
                    .or_else(|| l.strip_prefix("nonvoluntary_ctxt_switches:"));
                total += n.map_or(0, |v| v.trim().parse::<u64>().unwrap());
            }
        }
    }
    total
}

/// The server's v2 cgroup as `/proc/PID/cgroup` names it.
fn v2_cgroup(pid: u32) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .expect("a v2 cgroup line")
        .to_string()
}

/// `perf stat -x,`'s count of `event` (`45173,,raw_syscalls:sys_enter,...`).
fn perf_count(csv: &str, event: &str) -> u64 {
    csv.lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.get(2) == Some(&event))
                .then(|| f[0].parse().ok())
                .flatten()
        })
        .unwrap_or_else(|| panic!("no {event} in perf stat's output:\n{csv}"))
}

fn within(a: u64, b: u64, share: f64) -> bool {
    (a as f64 - b as f64).abs() <= share * b as f64
}

#[test]
fn system_calls_and_context_switches_agree_with_perf_stat_and_proc() {
    let base = tempfile::tempdir().unwrap();
    let settings: toml::Table = toml::from_str("worker_processes = 2").unwrap();
    let mut nginx = server::compile(&server::nginx::SERVER_KIND, &settings)
        .unwrap()
        .build(base.path())
        .unwrap();
    let ep = nginx
        .start(&Placement::unconstrained(), None, &Shutdown::new())
        .unwrap();
    let root = nginx.root_pid().unwrap();
    let cgroup = v2_cgroup(root);
    let perf_out = base.path().join("perf.csv");
    let relative = cgroup.trim_start_matches('/');
    // perf counts around the whole window: the load starts after it and
    // ends (its connections closed) before it, and an idle nginx makes no
    // calls, so both count the same calls.
    let mut perf = Command::new("perf")
        .args([
            "stat",
            "-x,",
            "-a",
            "-e",
            "raw_syscalls:sys_enter,context-switches",
        ])
        .arg("-G")
        .arg(format!("{relative},{relative}"))
        .arg("-o")
        .arg(&perf_out)
        .args(["--", "sleep", "5"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let mut tree = vec![root];
    tree.extend(descendants(root));
    let ctx_before = proc_context_switches(&tree);
    let sampler = Sampler::start(
        SamplerConfig {
            interval: Duration::from_millis(200),
            syscalls: SyscallMode::Exact,
            ..SamplerConfig::default()
        },
        Some(root),
    )
    .unwrap();
    let wrk = Command::new("wrk")
        .args(["-t1", "-c8", "-d1s", &format!("{}/", ep.uri)])
        .output()
        .unwrap();
    assert!(wrk.status.success(), "{wrk:?}");
    std::thread::sleep(Duration::from_millis(300));
    let data = sampler.stop();
    let ctx_after = proc_context_switches(&tree);
    assert!(perf.wait().unwrap().success());
    nginx.stop().unwrap();

    let work = data.summary.work.expect("nginx's cgroup was counted");
    let csv = std::fs::read_to_string(&perf_out).unwrap();
    let perf_calls = perf_count(&csv, "raw_syscalls:sys_enter");
    let calls = work.syscalls.unwrap();
    assert!(calls > 10_000, "wrk's second made {calls} calls: {work:?}");
    assert!(
        within(calls, perf_calls, 0.02),
        "scalelab counted {calls} system calls, perf stat {perf_calls}"
    );
    let proc_ctx = ctx_after - ctx_before;
    let ctx = work.context_switches.unwrap();
    assert!(
        within(ctx, proc_ctx, 0.02),
        "scalelab counted {ctx} context switches, /proc {proc_ctx} (perf stat {})",
        perf_count(&csv, "context-switches")
    );
    eprintln!(
        "system calls: scalelab {calls}, perf stat {perf_calls}; context switches: scalelab {ctx}, /proc {proc_ctx}"
    );
    // The task I/O accounting's read- and write-family calls, counted in
    // every trial, against the same window's tracepoint counts of those
    // calls.
    let io = work
        .io_calls
        .expect("nginx's processes were the same at both ends");
    let traced = |names: &[&str]| -> u64 { names.iter().filter_map(|n| work.syscall(n)).sum() };
    let writes = traced(&["write", "writev", "pwrite64", "sendfile64"]);
    let reads = traced(&["read", "readv", "pread64", "sendfile64"]);
    assert!(
        io.writes > 1_000,
        "one write-family call per response: {io:?}"
    );
    assert!(
        within(io.writes, writes, 0.02) && within(io.reads, reads, 0.02),
        "syscw {} and syscr {} against the tracepoints' {writes} and {reads}",
        io.writes,
        io.reads
    );
    eprintln!(
        "write-family calls: syscw {}, tracepoints {writes}; read-family: syscr {}, tracepoints {reads}",
        io.writes, io.reads
    );
    let named: u64 = work.top_syscalls.iter().map(|c| c.count).sum();
    assert!(
        named as f64 > 0.9 * calls as f64,
        "nginx's calls are on the named list: {work:?}"
    );
    match &work.hardware {
        Some(h) => assert!(h.cycles.unwrap_or(0) > 0, "{h:?}"),
        None => assert!(
            work.unavailable.iter().any(|u| u.contains("no PMU")),
            "{:?}",
            work.unavailable
        ),
    }
}
