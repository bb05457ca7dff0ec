//! Placement on the real cgroup hierarchies of this machine.

use super::support::{
    cgroup_of, last_cpu, python, sh, unique, wait_descendants, Group, BURN_FOREVER,
};
use scalelab::placement::{affinity, cgroup_name, online_cpu_list, Placement};
use scalelab::units::Bytes;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::{Duration, Instant};

const LIMIT: u64 = 64 << 20;

fn last_online_cpu() -> usize {
    *online_cpu_list().last().expect("at least one CPU")
}

fn read(dir: &Path, file: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(file))
        .ok()
        .map(|s| s.trim().to_string())
}

/// The memory limit of a cgroup dir, v1 or v2.
fn memory_limit(dir: &Path) -> Option<u64> {
    read(dir, "memory.limit_in_bytes")
        .or_else(|| read(dir, "memory.max"))
        .and_then(|v| v.parse().ok())
}

#[test]
fn process_tree_starts_inside_its_cgroups_with_the_limit() {
    let cpu = last_online_cpu();
    let name = unique("inside");
    let dirs;
    {
        let placement = Placement::create(&name, Some(vec![cpu]), Some(Bytes(LIMIT))).unwrap();
        dirs = placement.cgroup_dirs();
        assert!(!dirs.is_empty());
        for d in &dirs {
            assert_eq!(
                d.file_name().unwrap().to_str(),
                Some(cgroup_name(&name).as_str())
            );
        }
        let limited: Vec<u64> = dirs.iter().filter_map(|d| memory_limit(d)).collect();
        assert_eq!(limited, vec![LIMIT], "exactly one cgroup carries the limit");

        let mut cmd = sh("sleep 30 & echo started; wait");
        placement.configure(&mut cmd);
        let mut group = Group::spawn(cmd);
        group.expect_lines(&["started"], Duration::from_secs(10));
        let sleeper = wait_descendants(group.pid(), 1)[0];

        for pid in [group.pid(), sleeper] {
            let suffix = format!("/{}", cgroup_name(&name));
            assert!(
                cgroup_of(pid, "memory").ends_with(&suffix),
                "{pid} not in memory cgroup"
            );
            assert!(
                cgroup_of(pid, "cpuset").ends_with(&suffix),
                "{pid} not in cpuset cgroup"
            );
            assert_eq!(affinity::allowed_cpus(pid).unwrap(), vec![cpu]);
            for d in &dirs {
                let procs = read(d, "cgroup.procs").unwrap_or_default();
                assert!(
                    procs.lines().any(|l| l == pid.to_string()),
                    "{pid} missing from {d:?}"
                );
            }
        }
        let cpuset = dirs.iter().find_map(|d| read(d, "cpuset.cpus")).unwrap();
        assert_eq!(cpuset, cpu.to_string());
        drop(group);
    }
    for d in &dirs {
        assert!(!d.exists(), "{d:?} left behind");
    }
}

#[test]
fn exceeding_the_memory_limit_gets_the_process_killed() {
    let placement = Placement::create(&unique("oom"), None, Some(Bytes(LIMIT))).unwrap();
    // Touch 256 MiB, four times the limit, one page at a time.
    let mut cmd = std::process::Command::new(python());
    cmd.arg("-c").arg(
        "b = bytearray(256 << 20)\n\
         for i in range(0, len(b), 4096): b[i] = 1\n\
         print('survived')",
    );
    placement.configure(&mut cmd);
    let mut group = Group::spawn(cmd);
    let status = group.wait_exit(Duration::from_secs(60));
    assert_eq!(
        status.signal(),
        Some(libc::SIGKILL),
        "expected an OOM kill, got {status:?}"
    );
    let dir = &placement.cgroup_dirs()[0];
    if let Some(peak) = read(dir, "memory.max_usage_in_bytes").and_then(|v| v.parse::<u64>().ok()) {
        assert!(peak <= LIMIT, "peak {peak} above the limit");
    }
    // The kernel's own count of OOM kills in this cgroup (v1: oom_control,
    // v2: memory.events).
    let events = read(dir, "memory.oom_control").or_else(|| read(dir, "memory.events"));
    let kills = events.unwrap_or_default().lines().find_map(|l| {
        l.strip_prefix("oom_kill ")
            .and_then(|n| n.parse::<u64>().ok())
    });
    assert_eq!(kills, Some(1), "the cgroup's OOM killer fired once");
}

#[test]
fn a_leftover_process_is_moved_out_so_the_cgroup_is_removed() {
    let name = unique("leftover");
    let mut placement = Placement::create(&name, Some(vec![last_online_cpu()]), None).unwrap();
    let dirs = placement.cgroup_dirs();
    let mut cmd = sh("echo started; exec sleep 30");
    placement.configure(&mut cmd);
    let mut group = Group::spawn(cmd);
    group.expect_lines(&["started"], Duration::from_secs(10));
    placement.remove().unwrap();
    for d in &dirs {
        assert!(!d.exists(), "{d:?} left behind");
    }
    // Still running, now in the parent cgroup.
    assert!(scalelab::sys::process::is_alive(group.pid()));
    assert!(!cgroup_of(group.pid(), "cpuset").contains(&cgroup_name(&name)));
    // Removing again is a no-op.
    placement.remove().unwrap();
}

#[test]
fn pinned_processes_and_their_children_run_only_on_the_chosen_cpu() {
    let cpu = last_online_cpu();
    let placement = Placement::create(&unique("pin"), Some(vec![cpu]), None).unwrap();
    let script = format!("sh -c '{BURN_FOREVER}' & sh -c '{BURN_FOREVER}' & wait");
    let mut cmd = sh(&script);
    placement.configure(&mut cmd);
    let group = Group::spawn(cmd);
    let burners = wait_descendants(group.pid(), 2);
    for &pid in burners.iter().chain([group.pid()].iter()) {
        assert_eq!(affinity::allowed_cpus(pid).unwrap(), vec![cpu], "pid {pid}");
    }
    // Where they actually ran: sample the last-run CPU for a while.
    let end = Instant::now() + Duration::from_millis(500);
    let mut seen = Vec::new();
    while Instant::now() < end {
        seen.extend(burners.iter().filter_map(|&p| last_cpu(p)));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(seen.len() > 10);
    assert!(
        seen.iter().all(|&c| c == cpu),
        "ran on {seen:?}, pinned to {cpu}"
    );
    if online_cpu_list().len() > 1 {
        assert!(!placement.client_cpus().unwrap().contains(&cpu));
    }
}
