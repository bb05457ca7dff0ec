//! Other hosts, over OpenSSH: the server under test on its own machine, and
//! load from several client machines.
//!
//! scalelab builds no cluster protocol of its own. The coordinator reaches
//! each host with the system `ssh` client (the user's `~/.ssh/config`, keys
//! and agent; `SCALELAB_SSH_COMMAND` overrides the command as
//! `GIT_SSH_COMMAND` does), one multiplexed connection per host
//! (ControlMaster). Over it, it copies its own binary when the host lacks
//! this exact build (`deploy`) and starts `scalelab agent`, which speaks
//! line-delimited JSON on stdin and stdout (`protocol`) and runs the same
//! targets, drivers and probes that run locally ([`agent`]).
//!
//! - `ssh`: the ssh command line, connection reuse, bounded remote commands;
//! - `deploy`: the agent binary on a host, identified by its content hash;
//! - `protocol`: the messages, with a protocol version checked at hello;
//! - `wire`: a [`crate::load::LoadResult`] losslessly as JSON (the HDR
//!   histogram in its V2 encoding), so client results merge exactly;
//! - `clock`: each host's clock offset from the coordinator's, measured
//!   over the ssh round trip, for a common start instant;
//! - `conn`: the coordinator's side of one agent;
//! - [`agent`]: the agent's side.
//!
//! The agent's lifetime is its ssh session's: when the coordinator dies or
//! the connection drops, the agent's stdin closes, and it stops its server
//! and exits (its servers also carry the parent-death signal).

pub mod agent;
pub(crate) mod bare;
pub(crate) mod clock;
pub(crate) mod cluster;
pub(crate) mod conn;
pub(crate) mod deploy;
pub(crate) mod portable;
pub(crate) mod protocol;
pub(crate) mod server;
pub(crate) mod split;
pub(crate) mod ssh;
pub(crate) mod wire;

pub(crate) use crate::model::Host;

/// Locks an agent (or any shared state) even after a thread panicked while
/// holding it: the data is a connection, still usable or detectably lost.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Why talking to a remote host failed. Every variant names the host.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The ssh command could not be built, started or finished in time, or
    /// a remote command it ran failed (copying the agent, for one).
    #[error("host {host}: ssh failed: {message}")]
    Ssh {
        /// The host, as named in the experiment; `(all)` when the ssh
        /// command itself (`SCALELAB_SSH_COMMAND`) is unusable.
        host: String,
        /// What failed, with ssh's own stderr where there is one.
        message: String,
    },
    /// The agent answered with an error (its server or load failed), or
    /// with a reply that does not fit the request.
    #[error("host {host}: {message}")]
    Agent {
        /// The host, as named in the experiment.
        host: String,
        /// The agent's message, or what was unexpected.
        message: String,
    },
    /// The agent did not answer a request within its time limit.
    #[error("host {host}: no answer from the agent within {waited_s:.0}s ({what})")]
    Timeout {
        /// The host, as named in the experiment.
        host: String,
        /// Seconds waited.
        waited_s: f64,
        /// The request that got no answer.
        what: String,
    },
    /// The agent's protocol version is not this build's: some other
    /// scalelab binary answered.
    #[error("host {host}: the agent speaks protocol {theirs}, this scalelab speaks {ours}; the coordinator copies its own build to the host, so another binary is in the way at {path}")]
    Version {
        /// The host, as named in the experiment.
        host: String,
        /// This build's protocol version.
        ours: u32,
        /// The agent's.
        theirs: u32,
        /// The agent binary's path on the host, which answered.
        path: String,
    },
    /// The agent's stdin or stdout closed: the agent or the ssh connection
    /// died.
    #[error("host {host}: the connection to the agent was lost{detail}")]
    Lost {
        /// The host, as named in the experiment.
        host: String,
        /// `: ` and the cause when known, else empty.
        detail: String,
    },
    /// The agent was lost and every reconnection attempt failed: the host
    /// stays gone, and the run stops rather than fail its trials one by one.
    #[error("host {host} is gone: its agent was lost and {attempts} reconnection attempts over {waited_s:.0}s failed; the last: {last}")]
    Gone {
        /// The host, as named in the experiment.
        host: String,
        /// Attempts made.
        attempts: u32,
        /// Seconds from the first attempt to the last failure.
        waited_s: f64,
        /// The last attempt's error.
        last: Box<RemoteError>,
    },
}

impl RemoteError {
    /// Whether the host's agent or its connection was lost (as opposed to
    /// the agent answering with an error): the trial's environment failed.
    pub fn is_lost_host(&self) -> bool {
        match self {
            RemoteError::Lost { .. } | RemoteError::Gone { .. } => true,
            RemoteError::Ssh { .. }
            | RemoteError::Agent { .. }
            | RemoteError::Timeout { .. }
            | RemoteError::Version { .. } => false,
        }
    }
}
