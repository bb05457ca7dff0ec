use super::cgroup::{locate, parse_cpu_stat, CpuStat};
use super::*;
use crate::procfs::mounts::{parse_mountinfo, parse_proc_cgroup};
use std::path::PathBuf;

/// This VM's mount table: v1 controllers beside the unified mount, no
/// v1 `perf_event` (Debian 12 guest, kernel 6.18, `/proc/self/mountinfo`).
const HYBRID: &str = "\
30 23 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:4 - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:5 - cgroup2 cgroup2 rw
32 30 0:28 / /sys/fs/cgroup/cpu rw,nosuid,nodev,noexec,relatime shared:6 - cgroup cgroup rw,cpu
";

#[test]
fn the_servers_v2_cgroup_is_found_under_the_unified_mount() {
    let mounts = parse_mountinfo(HYBRID);
    let member = parse_proc_cgroup("2:cpu:/\n0::/scalelab-77-server-0\n");
    let c = locate(&mounts, &member).unwrap();
    assert_eq!(c.path, "/scalelab-77-server-0");
    assert_eq!(
        c.dir,
        PathBuf::from("/sys/fs/cgroup/unified/scalelab-77-server-0")
    );
}

#[test]
fn the_root_cgroup_and_a_v1_perf_event_hierarchy_are_not_the_servers_own() {
    let mounts = parse_mountinfo(HYBRID);
    let root = locate(&mounts, &parse_proc_cgroup("0::/\n")).unwrap_err();
    assert!(root.contains("root cgroup"), "{root}");
    let v1 = format!(
        "{HYBRID}33 30 0:29 / /sys/fs/cgroup/perf_event rw,relatime - cgroup cgroup rw,perf_event\n"
    );
    let e = locate(
        &parse_mountinfo(&v1),
        &parse_proc_cgroup("0::/scalelab-1-server-0\n"),
    )
    .unwrap_err();
    assert!(e.contains("/sys/fs/cgroup/perf_event"), "{e}");
    let none = locate(&mounts, &parse_proc_cgroup("2:cpu:/x\n")).unwrap_err();
    assert!(none.contains("unified"), "{none}");
}

#[test]
fn cpu_stat_gives_user_and_system_time() {
    let text = "usage_usec 3500\nuser_usec 2000\nsystem_usec 1500\nnr_periods 0\n";
    let start = parse_cpu_stat(text).unwrap();
    let end = parse_cpu_stat("user_usec 2500000\nsystem_usec 1501500\n").unwrap();
    let d = end.since(start);
    assert_eq!(
        d,
        CpuStat {
            user_usec: 2_498_000,
            system_usec: 1_500_000
        }
    );
    assert_eq!(d.system_s(), 1.5);
    assert_eq!(parse_cpu_stat("usage_usec 1\n"), None);
}

#[test]
fn named_calls_are_sorted_most_first_and_a_missing_count_is_left_out() {
    let totals = [
        (Figure::Syscalls, Some(1000)),
        (Figure::Syscall("read"), Some(200)),
        (Figure::Syscall("write"), Some(500)),
        (Figure::Syscall("close"), None),
        (Figure::ContextSwitches, Some(30)),
    ];
    let w = counts("/x".into(), 2.0, &totals, None, vec![]);
    let names: Vec<&str> = w.top_syscalls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["write", "read"]);
    assert_eq!(w.other_syscalls(), Some(300));
    assert_eq!(w.context_switches, Some(30));
    assert_eq!(w.cpu_migrations, None);
    assert_eq!(w.hardware, None, "no hardware counter ran: none, not zeros");
    assert_eq!(w.user_s, None);
}

#[test]
fn no_pmu_is_said_as_such() {
    let enoent = std::io::Error::from_raw_os_error(libc::ENOENT);
    assert!(unavailable_reason(Figure::Cycles, &enoent)
        .starts_with("hardware counters: unavailable: no PMU"));
    let eacces = std::io::Error::from_raw_os_error(libc::EACCES);
    let r = unavailable_reason(Figure::Syscalls, &eacces);
    assert!(r.starts_with("system calls"), "{r}");
    assert!(!r.contains("PMU"), "{r}");
}

/// Real `perf stat -x,` output of an Intel Kaby Lake with a PMU (Jin Yao,
/// linux-kernel, 2021-03-19; `tests/fixtures/perf-stat/kbl-ppc-perf-stat-x.csv`):
/// its counters' readings, through the probe's scaling and counts, give
/// perf's counts, and the instructions per cycle perf printed.
#[test]
fn a_pmu_machines_counters_give_perfs_counts_and_its_ipc() {
    let windows = perf_stat_fixture::windows("kbl-ppc-perf-stat-x.csv");
    assert_eq!(windows.len(), 2, "the fixture's two windows");
    for window in &windows {
        let perf = |event: &str| {
            window
                .iter()
                .find(|l| l.event == event)
                .unwrap_or_else(|| panic!("no {event}"))
        };
        let w = perf_stat_fixture::work_counts(window);
        let h = w.hardware.as_ref().expect("a PMU's counters are counted");
        assert_eq!(h.cycles, Some(perf("cycles").count));
        assert_eq!(h.instructions, Some(perf("instructions").count));
        assert_eq!(h.branch_misses, Some(perf("branch-misses").count));
        assert_eq!(h.llc_misses, None, "not in the fixture: none, not 0");
        assert_eq!(w.context_switches, Some(perf("context-switches").count));
        assert_eq!(w.cpu_migrations, Some(perf("cpu-migrations").count));
        let ipc = perf("instructions");
        assert_eq!(ipc.metric_unit, "insn per cycle");
        let ours = h.ipc().unwrap();
        assert!(
            (ours - ipc.metric.unwrap()).abs() < 0.005,
            "IPC {ours:.4} against perf's {}",
            ipc.metric.unwrap()
        );
        assert!(
            !w.unavailable.iter().any(|u| u.starts_with("hardware")),
            "{:?}",
            w.unavailable
        );
    }
}

/// Two CPUs' readings of one event are summed, then scaled, as perf stat
/// aggregates them (the sum's enabled over its running time).
#[test]
fn two_cpus_readings_are_summed_then_scaled() {
    let half = perf::Reading {
        value: 5_000,
        enabled_ns: 2_000_000,
        running_ns: 1_000_000,
    };
    let whole = perf::Reading {
        value: 3_000,
        enabled_ns: 2_000_000,
        running_ns: 2_000_000,
    };
    assert_eq!(half.plus(whole).scaled(), Some(10_667));
}

#[test]
fn every_named_call_is_a_tracepoint_of_this_kernel() {
    // Debian's kernels and this VM's (6.18) trace every syscall; a name
    // spelled wrong here would never be counted.
    let missing: Vec<&str> = NAMED_SYSCALLS
        .iter()
        .copied()
        .filter(|n| tracefs::tracepoint_id("syscalls", &format!("sys_enter_{n}")).is_err())
        .collect();
    assert!(missing.is_empty(), "not tracepoints here: {missing:?}");
}

/// A real child in its own tracking cgroup writes to `/dev/null` one
/// byte at a time, 20,000 times (`dd bs=1`), after the counters start.
#[test]
fn a_childs_write_calls_are_counted_one_by_one() {
    use crate::placement::Placement;
    use crate::sys::lifecycle::ServerProcess;
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let script = format!(
        "while [ ! -e {} ]; do sleep 0.01; done; exec dd if=/dev/zero of=/dev/null bs=1 count=20000 2>/dev/null",
        go.display()
    );
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", &script]);
    let mut server = ServerProcess::spawn(cmd, &Placement::unconstrained()).unwrap();
    let cpus: Vec<u32> = (0..online_cpus()).collect();
    let counter = WorkCounter::start(server.pid(), &cpus, SyscallMode::Exact).unwrap();
    std::fs::write(&go, "").unwrap();
    let deadline = Instant::now() + std::time::Duration::from_secs(20);
    while !crate::procfs::pid::has_exited(server.pid()) && Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let w = counter.finish();
    server
        .stop(libc::SIGTERM, std::time::Duration::from_secs(1))
        .unwrap();
    let writes = w.syscall("write").unwrap();
    assert!(
        (20_000..=20_010).contains(&writes),
        "{writes} writes: {w:?}"
    );
    let reads = w.syscall("read").unwrap();
    assert!((20_000..=20_500).contains(&reads), "{reads} reads: {w:?}");
    assert!(w.syscalls.unwrap() >= writes + reads, "{w:?}");
    let top: Vec<&str> = w.top_syscalls[..2]
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        top,
        ["read", "write"],
        "dd's two calls first, ties by name: {w:?}"
    );
    assert!(w.minor_faults.unwrap() > 0, "exec faults pages in: {w:?}");
    assert!(w.user_s.is_some() && w.system_s.unwrap() > 0.0, "{w:?}");
}

fn online_cpus() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    n.max(1) as u32
}

#[test]
fn a_cpu_verdicts_clause_gives_the_work_per_request() {
    let w = WorkCounts {
        syscalls: Some(4000),
        top_syscalls: vec![
            NamedCount {
                name: "writev".into(),
                count: 1000,
            },
            NamedCount {
                name: "recvfrom".into(),
                count: 990,
            },
        ],
        context_switches: Some(500),
        system_s: Some(0.0112),
        ..WorkCounts::default()
    };
    let c = per_request_clause(&w, 1000).unwrap();
    assert_eq!(
        c,
        "per request: 4.00 system calls (writev 1.00, recvfrom 0.99), 0.50 context switches, 11.2 µs in the kernel"
    );
    assert_eq!(per_request_clause(&w, 0), None);
    assert_eq!(per_request_clause(&WorkCounts::default(), 10), None);
}

/// By default the system calls are not counted (their tracepoints would
/// cost every call on the machine), and the output says how to ask; the
/// free counts are taken all the same.
#[test]
fn by_default_the_calls_are_not_counted_and_the_free_counts_are() {
    use crate::placement::Placement;
    use crate::sys::lifecycle::ServerProcess;
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", "sleep 0.3; echo x > /dev/null"]);
    let mut server = ServerProcess::spawn(cmd, &Placement::unconstrained()).unwrap();
    let cpus: Vec<u32> = (0..online_cpus()).collect();
    let counter = WorkCounter::start(server.pid(), &cpus, SyscallMode::default()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    let w = counter.finish();
    server
        .stop(libc::SIGTERM, std::time::Duration::from_secs(1))
        .unwrap();
    assert_eq!(w.syscalls, None, "{w:?}");
    assert!(w.top_syscalls.is_empty(), "{w:?}");
    assert_eq!(w.syscalls_counted_s, None);
    assert!(
        w.unavailable
            .iter()
            .any(|u| u.contains("syscalls = \"exact\"")),
        "{:?}",
        w.unavailable
    );
    assert!(w.context_switches.unwrap() >= 1, "sleep blocks: {w:?}");
    assert!(w.minor_faults.unwrap() > 0, "echo's fork faults: {w:?}");
}
