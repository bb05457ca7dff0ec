//! Joining a network namespace: the one way scalelab moves a thread into a
//! namespace made with `ip netns add`, and the one error type for
//! everything done with a namespace (making it, joining it, reading its
//! counters inside it).
//!
//! A thread that joins a namespace with `setns(2)` sees that namespace's
//! `/proc/thread-self/net`, and the sockets it creates stay there for their
//! whole life. [`in_netns`] runs a closure on a short-lived thread that
//! joins first, so the calling thread never moves; [`join`] moves the
//! calling thread itself, for threads that stay (a generator's workers).

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

/// Where `ip netns add` puts the namespaces' handles.
pub const NETNS_DIR: &str = "/run/netns";

/// Why a network namespace could not be made, joined or read. Every
/// variant names the namespace (as `ip netns` knows it).
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    /// `ip netns add`, or bringing its `lo` up, failed (it needs root).
    #[error("could not create network namespace `{name}`: {message}")]
    Create {
        /// The namespace.
        name: String,
        /// The `ip` command and what it printed.
        message: String,
    },
    /// Its watchdog could not be forked; the namespace is not made
    /// without one.
    #[error("could not start the watchdog of network namespace `{name}`: {source}")]
    Guard {
        /// The namespace.
        name: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Its handle under [`NETNS_DIR`] is missing or unreadable: the
    /// namespace does not exist (any more).
    #[error("network namespace `{name}` cannot be opened ({path}): {source}")]
    Open {
        /// The namespace.
        name: String,
        /// Its handle's path.
        path: PathBuf,
        /// Why opening failed.
        source: std::io::Error,
    },
    /// `setns(2)` refused (it needs `CAP_SYS_ADMIN`).
    #[error("cannot join network namespace `{name}`: {source}")]
    Join {
        /// The namespace.
        name: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Something could not be read inside it.
    #[error("cannot read {what} inside namespace `{name}`: {source}")]
    Read {
        /// The namespace.
        name: String,
        /// What was read (`snmp`, `dev` of `/proc/thread-self/net`, the
        /// link MTU).
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The closure run inside the namespace panicked; carries the
    /// namespace's name.
    #[error("the thread that joined namespace `{0}` panicked")]
    Thread(String),
}

/// Opens the handle of namespace `name` (for [`join`], or for a child to
/// join before it execs).
pub fn open(name: &str) -> Result<OwnedFd, NetnsError> {
    let path = PathBuf::from(NETNS_DIR).join(name);
    std::fs::File::open(&path)
        .map(OwnedFd::from)
        .map_err(|source| NetnsError::Open {
            name: name.to_string(),
            path,
            source,
        })
}

/// Moves the calling thread into the named network namespace (sockets it
/// opens afterwards live there). Only for threads that stay there;
/// everything else uses [`in_netns`].
pub fn join(name: &str) -> Result<(), NetnsError> {
    let fd = open(name)?;
    // SAFETY: setns on a namespace file we hold open; affects only this thread.
    if unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(NetnsError::Join {
            name: name.to_string(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// Runs `f` on a thread inside namespace `name` and returns its result.
pub fn in_netns<T: Send>(
    name: &str,
    f: impl FnOnce() -> Result<T, NetnsError> + Send,
) -> Result<T, NetnsError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            join(name)?;
            f()
        })
        .join()
        .map_err(|_| NetnsError::Thread(name.to_string()))?
    })
}

/// Reads `/proc/thread-self/net/<what>` inside namespace `name`.
pub fn read_net_file(name: &str, what: &'static str) -> Result<String, NetnsError> {
    in_netns(name, || read_own_net_file(name, what))
}

/// Reads `/proc/thread-self/net/<what>` on a thread already inside
/// namespace `name` (named in the error).
pub fn read_own_net_file(name: &str, what: &'static str) -> Result<String, NetnsError> {
    std::fs::read_to_string(format!("/proc/thread-self/net/{what}")).map_err(|source| {
        NetnsError::Read {
            name: name.to_string(),
            what,
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_namespace_is_named_with_its_handle() {
        let e = join("scalelab-no-such-namespace").unwrap_err();
        assert!(matches!(e, NetnsError::Open { .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("`scalelab-no-such-namespace`")
                && text.contains("/run/netns/scalelab-no-such-namespace"),
            "{text}"
        );
        let e = in_netns("scalelab-no-such-namespace", || Ok(())).unwrap_err();
        assert!(matches!(e, NetnsError::Open { .. }), "{e}");
    }
}
