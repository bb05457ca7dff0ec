//! Who listens on a server's port. With `SO_REUSEPORT`, several sockets can
//! listen on one port and the kernel spreads connections over them, so a
//! stranger on the port (a leftover nginx worker, another run) silently
//! serves part of the load. Before a trial, every socket listening on the
//! port must belong to a process of the server under test.
//!
//! Listening sockets come from `/proc/<pid>/net/{tcp,tcp6,udp,udp6}` (the
//! network namespace of the server, or of scalelab), and are matched to
//! processes by socket inode through `/proc/<pid>/fd`.

use std::collections::HashSet;

/// Why a server's port is not its own.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum PortError {
    /// Before the server starts: something already listens on the fixed
    /// port.
    #[error(
        "port {port} is already in use by {owners}; stop it or choose another port \
         (leave `port` unset to get a free one)"
    )]
    Busy {
        /// The port.
        port: u16,
        /// The processes listening on it (`pid 123 (nginx)`), or a note that
        /// scalelab cannot see them.
        owners: String,
    },
    /// Before a trial: a process outside the server also listens on its
    /// port (possible with `SO_REUSEPORT`).
    #[error(
        "port {port} is also listened on by {owners}, which is not the server under test; \
         it would silently serve part of the load, so the trial is not run. Stop it, or \
         use another port"
    )]
    Stranger {
        /// The port.
        port: u16,
        /// The processes that are not the server.
        owners: String,
    },
}

/// Inodes of the sockets listening on `port` in one `/proc/net/{tcp,udp}`
/// table: TCP in state LISTEN (0A), UDP bound to the port (07).
pub fn parse_listeners(table: &str, port: u16) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = f.get(1)?.rsplit_once(':')?.1;
            let listening = matches!(*f.get(3)?, "0A" | "07");
            (listening && u16::from_str_radix(local_port, 16).ok()? == port)
                .then(|| f.get(9)?.parse().ok())
                .flatten()
        })
        .filter(|&inode| inode != 0)
        .collect()
}

/// Listening socket inodes on `port` in the network namespace of `pid`
/// (scalelab's own when `None`).
pub fn listeners(port: u16, pid: Option<u32>) -> Vec<u64> {
    let base = pid.map_or("/proc/self/net".to_string(), |p| format!("/proc/{p}/net"));
    let mut out = Vec::new();
    for table in ["tcp", "tcp6", "udp", "udp6"] {
        let text = std::fs::read_to_string(format!("{base}/{table}")).unwrap_or_default();
        out.extend(parse_listeners(&text, port));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Socket inodes held open by `pids`.
pub fn socket_inodes(pids: &[u32]) -> HashSet<u64> {
    let mut out = HashSet::new();
    for pid in pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(link) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let inode = link
                .to_str()
                .and_then(|l| l.strip_prefix("socket:["))
                .and_then(|l| l.strip_suffix(']'))
                .and_then(|n| n.parse::<u64>().ok());
            out.extend(inode);
        }
    }
    out
}

/// "pid 123 (nginx), pid 456 (python3)" for the processes holding
/// `inodes`, found by scanning every process's fds (only done on error).
pub fn describe_owners(inodes: &[u64]) -> String {
    let all: Vec<u32> = std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let owners: Vec<String> = all
        .into_iter()
        .filter(|&pid| socket_inodes(&[pid]).iter().any(|i| inodes.contains(i)))
        .map(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            format!("pid {pid} ({})", comm.trim())
        })
        .collect();
    if owners.is_empty() {
        "a process scalelab cannot see (another namespace or user?)".into()
    } else {
        owners.join(", ")
    }
}

/// Checks that nothing listens on `port` yet: call it once, before a sweep
/// that uses a fixed port, so a busy port is one clear error up front.
pub fn ensure_free(port: u16) -> Result<(), PortError> {
    let found = listeners(port, None);
    if found.is_empty() {
        return Ok(());
    }
    Err(PortError::Busy {
        port,
        owners: describe_owners(&found),
    })
}

/// Checks that every socket listening on `port` (in the namespace of
/// `server[0]`) belongs to one of the `server` processes.
pub fn ensure_exclusive(port: u16, server: &[u32]) -> Result<(), PortError> {
    let ours = socket_inodes(server);
    let strangers: Vec<u64> = listeners(port, server.first().copied())
        .into_iter()
        .filter(|i| !ours.contains(i))
        .collect();
    if strangers.is_empty() {
        return Ok(());
    }
    Err(PortError::Stranger {
        port,
        owners: describe_owners(&strangers),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0
";

    #[test]
    fn only_listening_sockets_on_the_port_count() {
        assert_eq!(parse_listeners(TCP, 8080), vec![4242]);
        assert_eq!(parse_listeners(TCP, 8081), vec![4444]);
        assert!(parse_listeners(TCP, 80).is_empty());
        assert!(parse_listeners("garbage\nmore garbage", 8080).is_empty());
    }

    #[test]
    fn a_reuseport_stranger_is_named() {
        use socket2::{Domain, Socket, Type};
        let listen = |port: u16| {
            let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
            s.set_reuse_port(true).unwrap();
            s.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], port)).into())
                .unwrap();
            s.listen(8).unwrap();
            s
        };
        let first = listen(0);
        let port = first.local_addr().unwrap().as_socket().unwrap().port();
        let me = std::process::id();
        assert!(ensure_exclusive(port, &[me]).is_ok(), "our own socket");
        assert!(matches!(ensure_free(port), Err(PortError::Busy { .. })));
        // A stranger: a child process holding a second reuseport listener.
        let second = listen(port);
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .stdin(std::process::Stdio::from(std::os::fd::OwnedFd::from(
                second,
            )))
            .spawn()
            .unwrap();
        let err = ensure_exclusive(port, &[me]).unwrap_err().to_string();
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            err.contains(&format!("pid {} (sleep)", child.id())),
            "{err}"
        );
        assert!(err.contains(&port.to_string()), "{err}");
    }
}
