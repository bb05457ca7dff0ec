//! No packet before the policy (issue 24, item 5): a target named by a host
//! name that is neither `localhost` nor in `[hosts]` is refused before any
//! resolver is asked. The proof is a real resolver path: `scalelab` runs in
//! its own mount namespace whose `/etc/resolv.conf` names a UDP listener
//! of this test on a private loopback address, which counts the queries.

use crate::support::{scalelab, stderr, stdout};
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

/// A "resolver" that only counts the datagrams sent to it (never answers).
struct CountingResolver {
    socket: UdpSocket,
    address: String,
}

impl CountingResolver {
    /// Binds port 53 on a loopback address of this process's own (`index`
    /// tells this test's apart from the other tests').
    fn start(index: u32) -> CountingResolver {
        let pid = std::process::id();
        let address = format!("127.{}.{}.{}", 53 + index, (pid >> 8) & 0xff, pid & 0xff);
        let socket = UdpSocket::bind((address.as_str(), 53)).expect("bind the counting resolver");
        socket
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        CountingResolver { socket, address }
    }

    /// Datagrams received so far (drains what arrived).
    fn queries(&self) -> usize {
        let mut buf = [0u8; 1500];
        let mut n = 0;
        while self.socket.recv_from(&mut buf).is_ok() {
            n += 1;
        }
        n
    }

    /// `program args` in a private mount namespace where `/etc/resolv.conf`
    /// names only this resolver (one try, one second).
    fn run(&self, dir: &Path, program: &Path, args: &[&str]) -> Output {
        let conf = dir.join("resolv.conf");
        std::fs::write(
            &conf,
            format!(
                "nameserver {}\noptions timeout:1 attempts:1\n",
                self.address
            ),
        )
        .unwrap();
        Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c"])
            .arg("mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"")
            .arg(&conf)
            .arg(program)
            .args(args)
            .output()
            .expect("unshare runs")
    }

    /// `scalelab load http URL -d 300ms` under [`Self::run`].
    fn load_http(&self, dir: &Path, url: &str) -> Output {
        let scalelab = Path::new(scalelab().get_program()).to_path_buf();
        self.run(dir, &scalelab, &["load", "http", url, "-d", "300ms"])
    }
}

#[test]
fn a_host_name_target_is_refused_before_any_dns_query() {
    let dir = tempfile::tempdir().unwrap();
    let resolver = CountingResolver::start(0);
    // The control: the same setup does reach the counting resolver.
    let control = resolver.run(
        dir.path(),
        Path::new("getent"),
        &["hosts", "scalelab-control.invalid"],
    );
    assert!(!control.status.success());
    assert!(
        resolver.queries() >= 1,
        "the control lookup reached the counting resolver"
    );

    for (url, named) in [
        ("http://8.8.8.8.nip.io/", "`8.8.8.8.nip.io`"),
        ("http://example.invalid:8080/", "`example.invalid`"),
    ] {
        let out = resolver.load_http(dir.path(), url);
        let err = stderr(&out);
        assert_eq!(
            resolver.queries(),
            0,
            "{url}: no DNS query may be sent: {err}"
        );
        assert_eq!(out.status.code(), Some(2), "{url}: {err}");
        assert!(
            err.contains(named) && err.contains("[hosts]"),
            "{url}: {err}"
        );
    }
}

#[test]
fn localhost_with_a_final_dot_is_this_machine_without_a_resolver() {
    let dir = tempfile::tempdir().unwrap();
    let resolver = CountingResolver::start(1);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!("http://localhost.:{port}/");
    let out = resolver.load_http(dir.path(), &url);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(resolver.queries(), 0, "localhost. asks no resolver: {said}");
    assert!(
        said.contains(&format!("connects to 127.0.0.1:{port} failed")),
        "the load went to 127.0.0.1 (where nothing listens): {said}"
    );
}
