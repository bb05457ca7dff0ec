//! What the driver hands each worker: the shared, read-only [`Plan`], the
//! worker's own [`Assignment`], and the [`Extra`] facts it hands back.

use std::net::{Ipv4Addr, SocketAddr};

/// What every worker shares, read-only.
#[derive(Debug)]
pub struct Plan {
    pub addr: SocketAddr,
    /// The request, and the same with `Connection: close` for the last
    /// request on a connection.
    pub request: Vec<u8>,
    pub last_request: Vec<u8>,
    pub head_request: bool,
    /// Spread connections over 127.0.0.1..=127.0.0.N (0: let the kernel pick).
    pub source_addrs: u32,
    pub nodelay: bool,
    pub requests_per_connection: Option<u32>,
    pub timeout_ns: u64,
    /// Closed loop with keep-alive only: wait for several responses at
    /// once ([`crate::load::gather`]).
    pub coalesce: bool,
}

impl Plan {
    pub fn source_for(&self, client: u32) -> Option<Ipv4Addr> {
        (self.source_addrs > 0)
            .then(|| Ipv4Addr::new(127, 0, 0, (1 + client % self.source_addrs) as u8))
    }
}

/// This worker's part of the run.
#[derive(Clone, Debug)]
pub struct Assignment {
    pub connections: u32,
    /// Global index of this worker's first connection.
    pub first_client: u32,
    /// Requests this worker completes before stopping.
    pub quota: Option<u64>,
    pub start_ns: u64,
    /// When to stop (`u64::MAX`: run until quota, shutdown or a stall).
    pub deadline_ns: u64,
    /// Open loop: each connection's spacing between sends, and the offset
    /// between consecutive connections' first sends.
    pub open: Option<OpenLoop>,
    pub cpus: Option<Vec<usize>>,
}

#[derive(Clone, Copy, Debug)]
pub struct OpenLoop {
    pub interval_ns: u64,
    pub stagger_ns: f64,
}

/// Facts the merged result turns into notes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Extra {
    pub addr_not_avail: u64,
    pub fd_exhausted: u64,
    pub stalled: bool,
    /// Connections retired after the server's FIN had arrived (server-side
    /// TIME_WAIT), and those the client had to close first.
    pub server_closed_first: u64,
    pub client_closed_first: u64,
    /// Coalescing: what the waits gathered.
    pub gathered: Option<crate::load::gather::Gathered>,
}
