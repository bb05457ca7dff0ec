//! Hosts without an agent (`agent = false`, or an OS scalelab cannot run
//! on: FreeBSD, DragonFly, NetBSD): managed servers and the interval probe
//! over plain ssh, with the host's own `/bin/sh` and tools, as PTS and
//! PerfKit Benchmarker reach hosts they cannot install on.
//!
//! - [`session`]: one long-lived shell on the host, its stdin held open by
//!   the coordinator: when that closes, the shell cleans up and exits;
//! - [`script`]: the POSIX `sh` that runs one managed server there;
//! - [`server`]: the [`crate::server::Server`] that drives it;
//! - [`probe_script`], [`parse`], [`summarize`], [`interval`]: the interval
//!   probe: one table of commands per OS, pure parsers, the agent's
//!   timeline and summary from them, and the thread that asks.

#[cfg(test)]
mod db_shell_tests;
pub(crate) mod interval;
pub(crate) mod parse;
pub(crate) mod probe_script;
pub(crate) mod script;
pub(crate) mod server;
pub(crate) mod session;
pub(crate) mod summarize;
