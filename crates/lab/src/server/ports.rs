//! Who listens on a server's port. With `SO_REUSEPORT`, several sockets can
//! listen on one port and the kernel spreads connections over them, so a
//! stranger on the port (a leftover nginx worker, another run) silently
//! serves part of the load. Before a trial, every socket listening on the
//! port must belong to a process of the server under test.
//!
//! Listening sockets come from `/proc/<pid>/net/{tcp,tcp6,udp,udp6}` (the
//! network namespace of the server, or of scalelab), and are matched to
//! processes by socket inode through `/proc/<pid>/fd`, both read by
//! [`crate::procfs::sockets`].

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

pub use crate::procfs::sockets::{listeners, parse_listeners, socket_inodes};

/// "pid 123 (nginx), pid 456 (python3)" for the processes holding
/// `inodes`, found by scanning every process's fds (only done on error).
pub fn describe_owners(inodes: &[u64]) -> String {
    let owners: Vec<String> = crate::procfs::sockets::holders(inodes)
        .into_iter()
        .map(|pid| {
            let comm = crate::procfs::pid::stat(pid)
                .map(|s| s.comm)
                .unwrap_or_default();
            format!("pid {pid} ({comm})")
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
