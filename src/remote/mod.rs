//! Other hosts, over OpenSSH: the server under test on its own machine, and
//! load from several client machines.
//!
//! scalelab builds no cluster protocol of its own. The coordinator reaches
//! each host with the system `ssh` client (the user's `~/.ssh/config`, keys
//! and agent; `SCALELAB_SSH_COMMAND` overrides the command as
//! `GIT_SSH_COMMAND` does), one multiplexed connection per host
//! (ControlMaster). Over it, it copies its own binary when the host lacks
//! this exact build ([`deploy`]) and starts `scalelab agent`, which speaks
//! line-delimited JSON on stdin and stdout ([`protocol`]) and runs the same
//! targets, drivers and probes that run locally ([`agent`]).
//!
//! - [`ssh`]: the ssh command line, connection reuse, bounded remote commands;
//! - [`deploy`]: the agent binary on a host, identified by its content hash;
//! - [`protocol`]: the messages, with a protocol version checked at hello;
//! - [`wire`]: a [`crate::load::LoadResult`] losslessly as JSON (the HDR
//!   histogram in its V2 encoding), so client results merge exactly;
//! - [`clock`]: each host's clock offset from the coordinator's, measured
//!   over the ssh round trip, for a common start instant;
//! - [`conn`]: the coordinator's side of one agent;
//! - [`agent`]: the agent's side.
//!
//! The agent's lifetime is its ssh session's: when the coordinator dies or
//! the connection drops, the agent's stdin closes, and it stops its server
//! and exits (its servers also carry the parent-death signal).

pub mod agent;
pub(crate) mod clock;
pub(crate) mod cluster;
pub(crate) mod conn;
pub(crate) mod deploy;
pub(crate) mod hosts;
pub(crate) mod portable;
pub(crate) mod protocol;
pub(crate) mod split;
pub(crate) mod ssh;
pub(crate) mod target;
pub(crate) mod wire;

pub use conn::AgentConn;
pub use hosts::Host;

/// Locks an agent (or any shared state) even after a thread panicked while
/// holding it: the data is a connection, still usable or detectably lost.
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Why talking to a remote host failed. Every variant names the host.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("host {host}: ssh failed: {message}")]
    Ssh { host: String, message: String },
    #[error("host {host}: {message}")]
    Agent { host: String, message: String },
    #[error("host {host}: no answer from the agent within {waited_s:.0}s ({what})")]
    Timeout {
        host: String,
        waited_s: f64,
        what: String,
    },
    #[error("host {host}: the agent speaks protocol {theirs}, this scalelab speaks {ours}; the coordinator copies its own build to the host, so another binary is in the way at {path}")]
    Version {
        host: String,
        ours: u32,
        theirs: u32,
        path: String,
    },
    #[error("host {host}: the connection to the agent was lost{detail}")]
    Lost { host: String, detail: String },
}
