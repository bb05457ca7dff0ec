//! The sampler on real process trees, client saturation, the fingerprint.

use super::support::{sh, sh_py, unique, Group, BURN_FOREVER};
use scalelab::placement::{affinity, online_cpu_list, Placement};
use scalelab::probe::{self, own, ProbeData, Sampler, SamplerConfig};
use std::process::Command;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// Python that touches 100 MiB, says so, and sleeps.
const ALLOC: &str = "import time\n\
b = bytearray(100 << 20)\n\
for i in range(0, len(b), 4096): b[i] = 1\n\
print('allocated', flush=True)\n\
time.sleep(60)";

/// Python that burns exactly $BURN_S seconds of its own CPU time (as the
/// kernel counts it), however loaded the machine is, then exits.
const BURN: &str = "import os, time\n\
t0 = time.process_time()\n\
while time.process_time() - t0 < float(os.environ['BURN_S']): pass\n\
print('burned', flush=True)";

fn sampler(ms: u64, root: Option<u32>) -> Sampler {
    Sampler::start(
        SamplerConfig {
            interval: Duration::from_millis(ms),
            ..SamplerConfig::default()
        },
        root,
    )
    .unwrap()
}

fn known_tree(burn_s: f64) -> Command {
    let mut cmd = sh_py("read go; \"$PY\" -c \"$ALLOC\" & \"$PY\" -c \"$BURN\"; wait");
    cmd.env("ALLOC", ALLOC)
        .env("BURN", BURN)
        .env("BURN_S", burn_s.to_string());
    cmd
}

fn timeline_sum(data: &ProbeData, f: impl Fn(&probe::ProbeSample) -> f64) -> f64 {
    data.timeline.iter().map(f).sum()
}

#[test]
fn sampler_measures_a_known_process_tree() {
    let mut group = Group::spawn(known_tree(1.5));
    let s = sampler(100, Some(group.pid()));
    group.send("go");
    group.expect_lines(&["allocated", "burned"], Duration::from_secs(120));
    std::thread::sleep(Duration::from_millis(300));
    let data = s.stop();
    let sum = &data.summary;

    // The burner's 1.5 CPU-s, python start-up and touching 100 MiB; the
    // burner exited mid-window, so this also checks reaped-child accounting.
    let cpu = sum.server_cpu_s.unwrap();
    assert!((1.45..2.5).contains(&cpu), "server CPU {cpu}");
    assert!((timeline_sum(&data, |x| x.server.as_ref().unwrap().cpu_s) - cpu).abs() < 1e-9);
    let procs = &sum.server_processes;
    let burner = procs
        .iter()
        .find(|p| p.exited && p.comm == "python3")
        .expect("burner seen");
    assert!(burner.cpu_s > 1.2, "burner {burner:?}");
    let alloc = procs
        .iter()
        .find(|p| !p.exited && p.comm == "python3")
        .expect("allocator seen");
    assert!(
        alloc.rss_max_bytes >= 90 * MIB,
        "allocator RSS {}",
        alloc.rss_max_bytes
    );
    assert!(alloc.vsz_bytes >= alloc.rss_bytes);
    assert_eq!(procs[0].pid, group.pid());

    assert!(sum.processes.unwrap() >= 3, "{:?}", sum.processes);
    assert!(sum.threads.unwrap() >= 3);
    assert!(sum.processes_seen.unwrap() >= 3);
    assert!(sum.ctx_voluntary.unwrap() > 0);
    let worker = sum.mem_per_worker_rss_bytes.unwrap();
    assert!(
        worker > 5 * MIB && worker <= alloc.rss_max_bytes,
        "worker RSS {worker}"
    );
    assert!(sum.server_rss_max_bytes.unwrap() >= 90 * MIB);
    assert!(!sum.server_exited);

    // Machine-wide figures are present and sane.
    assert!(data.timeline.len() >= 10, "{} samples", data.timeline.len());
    assert_eq!(sum.samples as usize, data.timeline.len());
    assert_eq!(sum.per_cpu.len(), online_cpu_list().len());
    assert!(sum.cpu_busy > 0.0 && sum.cpu_busy <= 1.0);
    assert!(sum.net.iter().any(|n| n.iface == "lo"));
    assert_ne!(sum.freq_source, "unavailable");
    let lxf = sum.load_x_freq.unwrap();
    assert!(lxf > 0.0 && lxf <= sum.freq_mhz_mean.unwrap() * sum.online_cpus as f64 * 1.001);
    assert!(sum.sampler_cpu_s > 0.0);
    assert!(sum.warnings.is_empty(), "{:?}", sum.warnings);
    // Stored as JSON and read back (floats to within parsing precision).
    let json = serde_json::to_string(&data).unwrap();
    let back: ProbeData = serde_json::from_str(&json).unwrap();
    assert_eq!(back.timeline.len(), data.timeline.len());
    let ids = |d: &ProbeData| -> Vec<(u32, String, bool)> {
        d.summary
            .server_processes
            .iter()
            .map(|p| (p.pid, p.comm.clone(), p.exited))
            .collect()
    };
    assert_eq!(ids(&back), ids(&data));
    assert!((back.summary.server_cpu_s.unwrap() - cpu).abs() < 1e-9);
}

fn uid_gid(user: &str) -> (u32, u32) {
    let name = std::ffi::CString::new(user).unwrap();
    // SAFETY: getpwnam returns a pointer to static storage or null; read at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(
        !pw.is_null(),
        "user {user} missing (PostgreSQL is installed on these machines)"
    );
    // SAFETY: `pw` is non-null (checked above) and nothing has called
    // getpwnam since, so the static record is still this user's.
    unsafe { ((*pw).pw_uid, (*pw).pw_gid) }
}

#[test]
fn another_users_process_tree_is_sampled() {
    use std::os::unix::process::CommandExt;
    let (uid, gid) = uid_gid("postgres");
    let mut cmd = sh_py("read go; \"$PY\" -c \"$BURN\"; sleep 30 & echo started; wait");
    cmd.env("BURN", BURN).env("BURN_S", "0.3").uid(uid).gid(gid);
    let mut group = Group::spawn(cmd);
    let s = sampler(50, Some(group.pid()));
    group.send("go");
    group.expect_lines(&["burned", "started"], Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(200));
    let sum = s.stop().summary;
    assert!(sum.server_cpu_s.unwrap() >= 0.25, "{:?}", sum.server_cpu_s);
    assert_eq!(sum.processes, Some(2));
    let sleeper = sum
        .server_processes
        .iter()
        .find(|p| p.comm == "sleep")
        .unwrap();
    assert!(sleeper.rss_bytes > 0 && sleeper.threads == 1);
    // The shell blocked on `read` and `wait`: voluntary switches, read
    // from a status file owned by another user.
    assert!(sum.ctx_voluntary.unwrap() > 0);
}

#[test]
fn a_server_that_exits_mid_window_is_reported() {
    let mut cmd = sh_py("read go; \"$PY\" -c \"$BURN\"");
    cmd.env("BURN", BURN).env("BURN_S", "0.5");
    let mut group = Group::spawn(cmd);
    let s = sampler(50, Some(group.pid()));
    group.send("go");
    group.expect_lines(&["burned"], Duration::from_secs(60));
    group.wait_exit(Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(200));
    let sum = s.stop().summary;
    assert!(sum.server_exited);
    assert!(sum
        .warnings
        .iter()
        .any(|w| w.contains("exited during the window")));
    // At most one interval of the burner's CPU can be lost.
    assert!(sum.server_cpu_s.unwrap() >= 0.4, "{:?}", sum.server_cpu_s);
}

#[test]
fn a_missing_server_is_a_warning_not_an_error() {
    // PID 0 is never a process in /proc.
    let sum = sampler(20, Some(0)).stop().summary;
    assert!(sum.warnings.iter().any(|w| w.contains("not running")));
    assert_eq!(sum.server_cpu_s, Some(0.0));
    assert!(!sum.server_exited);
    let e = Sampler::start(
        SamplerConfig {
            interval: Duration::from_millis(1),
            ..SamplerConfig::default()
        },
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("at least 10ms"), "{e}");
}

/// Burns this thread on `cpu` for `wall`; returns the thread's CPU seconds.
fn burn_pinned(cpu: usize, wall: Duration) -> f64 {
    std::thread::spawn(move || {
        affinity::pin_current_thread(&[cpu]).unwrap();
        let start_cpu = own::thread_cpu_ns();
        let end = Instant::now() + wall;
        let mut x = 0u64;
        while Instant::now() < end {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        (own::thread_cpu_ns() - start_cpu) as f64 / 1e9
    })
    .join()
    .unwrap()
}

#[test]
fn a_client_starved_by_a_rival_on_its_cpu_is_client_bound() {
    let cpu = *online_cpu_list().last().unwrap();
    let rival_place = Placement::create(&unique("rival"), Some(vec![cpu]), None).unwrap();
    let mut rival_cmd = sh(BURN_FOREVER);
    rival_place.configure(&mut rival_cmd);
    let _rival = Group::spawn(rival_cmd);

    let s = sampler(100, None);
    let wall = Duration::from_millis(1500);
    let client_cpu = burn_pinned(cpu, wall);
    let sum = s.stop().summary;

    // It shared its one CPU with the rival: far from 90% of it by CPU use...
    assert!(
        !probe::client_bound(client_cpu, wall.as_secs_f64(), 1),
        "got {client_cpu} CPU-s"
    );
    // ...but it was runnable all along, which the verdict catches.
    assert!(
        sum.client_cpu_s >= client_cpu - 0.01,
        "{} < {client_cpu}",
        sum.client_cpu_s
    );
    assert!(
        sum.client_runq_wait_s > 0.2,
        "waited {}",
        sum.client_runq_wait_s
    );
    let why = probe::client_verdict(&sum, 1).expect("starved client flagged");
    // Said once by the caller, not in the reason (issue 27); the rival is
    // another process, and the reason names it as background load.
    assert!(!why.contains("client-bound"), "{why}");
    assert!(why.contains("it was starved"), "{why}");
    assert!(
        why.contains("background load: other processes used"),
        "{why}"
    );
}

/// Samples a tree of `children` sleeping processes (plus the shell) at 10 Hz for
/// `secs` and returns the sampler's fraction of one CPU.
fn overhead_with(children: usize, secs: u64) -> f64 {
    let script = match children {
        0 => "echo started; exec sleep 60".to_string(),
        n => format!("for i in $(seq {n}); do sleep 60 & done; echo started; wait"),
    };
    let mut group = Group::spawn(sh(&script));
    group.expect_lines(&["started"], Duration::from_secs(20));
    let s = sampler(100, Some(group.pid()));
    std::thread::sleep(Duration::from_secs(secs));
    let sum = s.stop().summary;
    assert_eq!(sum.processes, Some(children as u32 + 1));
    eprintln!(
        "sampler overhead: {:.3}% of one CPU at 10 Hz, {:.2} ms CPU per sample, {} processes in tree",
        sum.sampler_cpu_util * 100.0,
        sum.sampler_cpu_s / sum.samples as f64 * 1e3,
        children + 1
    );
    sum.sampler_cpu_util
}

#[test]
fn sampler_overhead_is_small() {
    let small = overhead_with(0, 1);
    let large = overhead_with(20, 2);
    // CPU time, not wall time: load on the machine barely moves it. The
    // test binary is a debug build: on the 2-CPU VM of 2026-12 it took 2.3%
    // and 6.4-6.8% here at the commit before issue 46 as after it (a fresh
    // machine failed the old 5% bound on the 21-process tree), so the bound
    // is 10%, twice what it measures; the release build's cost is
    // bench/limiter-cost.sh's figure.
    assert!(small < 0.05 && large < 0.10, "{small} {large}");
}

#[test]
fn fingerprint_of_this_machine() {
    let f = probe::capture();
    let uname = |flag: &str| {
        let out = Command::new("uname").arg(flag).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(f.kernel_release, uname("-r"));
    assert_eq!(f.kernel_version, uname("-v"));
    assert_eq!(f.online_cpus as usize, online_cpu_list().len());
    // SAFETY: sysconf has no preconditions.
    let onln = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    assert_eq!(f.online_cpus as i64, onln as i64);
    assert!(f.mem_total_bytes.unwrap() > 256 * MIB);
    assert_ne!(f.cpu_model, "unavailable");
    let haltpoll = std::path::Path::new("/sys/module/haltpoll/parameters/guest_halt_poll_ns");
    match std::fs::read_to_string(haltpoll) {
        Ok(v) => assert_eq!(
            f.haltpoll.get("guest_halt_poll_ns").map(String::as_str),
            Some(v.trim())
        ),
        Err(_) => assert!(f.haltpoll.is_empty()),
    }
    let somaxconn = std::fs::read_to_string("/proc/sys/net/core/somaxconn").unwrap();
    assert_eq!(f.sysctls["net.core.somaxconn"], somaxconn.trim());
    assert!(f.sysctls["net.ipv4.ip_local_port_range"].contains(' '));
    assert!(f.virtualization.is_vm || !f.virtualization.hypervisor_flag);
    if let Ok(out) = Command::new("systemd-detect-virt").output() {
        assert_eq!(
            f.virtualization.detect_virt,
            String::from_utf8_lossy(&out.stdout).trim()
        );
    }
    assert!(f.rlimit_nofile_soft.parse::<u64>().is_ok() || f.rlimit_nofile_soft == "unlimited");

    // Stable across captures, and a changed setting shows in the diff.
    let a = serde_json::to_value(&f).unwrap();
    assert!(probe::diff(&a, &serde_json::to_value(probe::capture()).unwrap()).is_empty());
    let mut g = f.clone();
    // A value other than this machine's own, whatever that is.
    let other = match f.haltpoll.get("guest_halt_poll_ns").map(String::as_str) {
        Some("200000") => "100000",
        _ => "200000",
    };
    g.haltpoll.insert("guest_halt_poll_ns".into(), other.into());
    let d = probe::diff(&a, &serde_json::to_value(&g).unwrap());
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].0, "haltpoll.guest_halt_poll_ns");
}
