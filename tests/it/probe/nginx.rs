//! The probe and placement around a real nginx: master plus two workers,
//! pinned and memory-limited, loaded by wrk.

use super::support::{cgroup_of, unique, wait_descendants, Group};
use scalelab::placement::{affinity, cgroup_name, online_cpu_list, Placement};
use scalelab::probe::{self, Sampler, SamplerConfig};
use scalelab::sys::process::{free_port, tcp_accepts};
use scalelab::units::Bytes;
use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

fn nginx_conf(dir: &std::path::Path, port: u16) -> String {
    let d = dir.display();
    format!(
        "daemon off;\nmaster_process on;\nworker_processes 2;\npid {d}/nginx.pid;\n\
         error_log {d}/error.log;\nevents {{ worker_connections 256; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
         fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
         server {{ listen 127.0.0.1:{port}; location / {{ return 200 \"ok\"; }} }}\n}}\n"
    )
}

/// The total requests from wrk's text report (`112043 requests in 1.00s`).
fn wrk_requests(report: &str) -> u64 {
    report
        .lines()
        .find_map(|l| {
            l.trim()
                .split_once(" requests in ")
                .map(|(n, _)| n.trim().parse().ok())
        })
        .flatten()
        .unwrap_or_else(|| panic!("no request count in wrk output:\n{report}"))
}

#[test]
fn nginx_tree_is_pinned_limited_and_measured() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port().unwrap();
    std::fs::write(dir.path().join("nginx.conf"), nginx_conf(dir.path(), port)).unwrap();
    let cpu = *online_cpu_list().last().unwrap();
    let name = unique("nginx");
    let placement = Placement::create(&name, Some(vec![cpu]), Some(Bytes(256 << 20))).unwrap();
    let mut cmd = Command::new("nginx");
    cmd.arg("-p")
        .arg(dir.path())
        .arg("-c")
        .arg(dir.path().join("nginx.conf"));
    placement.configure(&mut cmd);
    let group = Group::spawn(cmd);
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let end = Instant::now() + Duration::from_secs(20);
    while !tcp_accepts(addr) {
        assert!(Instant::now() < end, "nginx did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let workers = wait_descendants(group.pid(), 2);

    let sampler = Sampler::start(
        SamplerConfig {
            interval: Duration::from_millis(100),
            ..SamplerConfig::default()
        },
        Some(group.pid()),
    )
    .unwrap();
    let mut wrk = Command::new("wrk");
    wrk.args(["-t1", "-c8", "-d1s", &format!("http://127.0.0.1:{port}/")]);
    if let Some(client) = placement.client_cpus() {
        // The load generator stays off the server's CPU.
        let set = client.clone();
        // SAFETY: sched_setaffinity in the child before exec, on a prebuilt set.
        unsafe {
            use std::os::unix::process::CommandExt;
            let cpuset = affinity::cpu_set(&set);
            wrk.pre_exec(move || affinity::set_current_raw(&cpuset));
        }
    }
    let out = wrk.output().unwrap();
    let data = sampler.stop();
    let report = String::from_utf8_lossy(&out.stdout);
    let requests = wrk_requests(&report);
    assert!(requests > 100, "{report}");

    let sum = &data.summary;
    eprintln!(
        "nginx: {requests} requests, server CPU {:.2} s ({:.1} us/request), worker RSS {} KiB",
        sum.server_cpu_s.unwrap_or(0.0),
        probe::server_cpu_per_request(sum, requests).unwrap_or(0.0) * 1e6,
        sum.mem_per_worker_rss_bytes.unwrap_or(0) / 1024,
    );
    assert_eq!(sum.processes, Some(3), "{:?}", sum.server_processes);
    assert_eq!(sum.threads, Some(3));
    // Whole 10 ms ticks: a busy suite once left exactly 5 of them.
    assert!(sum.server_cpu_s.unwrap() >= 0.05, "{:?}", sum.server_cpu_s);
    let per_request = probe::server_cpu_per_request(sum, requests).unwrap();
    assert!(per_request > 0.0 && per_request < 0.01, "{per_request}");
    let worker_rss = sum.mem_per_worker_rss_bytes.unwrap();
    let master = &sum.server_processes[0];
    assert!(worker_rss > 0 && master.rss_bytes > 0);
    assert!(
        sum.server_processes
            .iter()
            .filter(|p| p.comm == "nginx")
            .count()
            >= 3
    );
    assert!(sum.ctx_voluntary.unwrap() + sum.ctx_involuntary.unwrap() > 0);
    let lo = sum.net.iter().find(|n| n.iface == "lo").unwrap();
    assert!(
        lo.rx_packets > requests / 10,
        "lo {lo:?} for {requests} requests"
    );
    // Workers did the serving; they are pinned and inside both cgroups.
    let busy_workers = sum.server_processes[1..]
        .iter()
        .filter(|p| p.cpu_s > 0.0)
        .count();
    assert!(busy_workers >= 1);
    for pid in workers {
        assert_eq!(affinity::allowed_cpus(pid).unwrap(), vec![cpu]);
        assert!(cgroup_of(pid, "memory").ends_with(&cgroup_name(&name)));
    }
    drop(group);
}
