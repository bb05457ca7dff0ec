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
    /// `https://`: what the TLS connections share.
    pub tls: Option<super::conn::TlsPlan>,
    /// HTTP/2: the request's frames and the streams per connection.
    pub h2: Option<H2Plan>,
}

impl Plan {
    /// Client `client`'s connection, started (plain, or TLS begun over
    /// it) and registered with `poll` under `token` for both readiness
    /// kinds; `nodelay` as the caller's protocol needs.
    pub fn connect(
        &self,
        poll: &mio::Poll,
        token: usize,
        client: u32,
        nodelay: bool,
    ) -> std::io::Result<super::conn::Conn> {
        use mio::{Interest, Token};
        let sock = super::sys::connect(self.addr, self.source_for(client), nodelay)?;
        let mut conn = super::conn::Conn::new(sock, self.tls.as_ref())?;
        poll.registry().register(
            conn.socket(),
            Token(token),
            Interest::READABLE | Interest::WRITABLE,
        )?;
        Ok(conn)
    }

    pub fn source_for(&self, client: u32) -> Option<Ipv4Addr> {
        (self.source_addrs > 0)
            .then(|| Ipv4Addr::new(127, 0, 0, (1 + client % self.source_addrs) as u8))
    }
}

/// What an HTTP/2 run's workers share.
#[derive(Debug)]
pub struct H2Plan {
    /// The request's header block ([`super::h2frame::request_block`]).
    pub block: Vec<u8>,
    /// Streams per connection.
    pub streams: u32,
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
#[derive(Clone, Debug, Default)]
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
    /// TLS: the handshakes made and failed.
    pub tls: TlsTally,
    /// HTTP/2: the server's concurrent-stream limit, where it was below
    /// the streams asked for.
    pub h2_server_limit: Option<u32>,
}

/// A worker's TLS handshakes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TlsTally {
    /// Full handshakes finished.
    pub full: u64,
    /// Resumed sessions.
    pub resumed: u64,
    /// Handshakes that failed, and why the first did.
    pub failed: u64,
    pub first_failure: Option<String>,
    /// What the first finished handshake settled.
    pub negotiated: Option<crate::tls::client::Negotiated>,
}

impl TlsTally {
    /// Counts a finished handshake.
    pub fn count(
        &mut self,
        how: super::conn::Handshake,
        negotiated: impl FnOnce() -> Option<crate::tls::client::Negotiated>,
    ) {
        match how {
            super::conn::Handshake::Resumed => self.resumed += 1,
            _ => self.full += 1,
        }
        if self.negotiated.is_none() {
            self.negotiated = negotiated();
        }
    }

    /// Counts a handshake that finished but cannot be used, and why.
    pub fn refused(&mut self, why: &str) {
        self.failed += 1;
        if self.first_failure.is_none() {
            self.first_failure = Some(why.to_string());
        }
    }

    /// Counts a failed one.
    pub fn failed(&mut self, e: &std::io::Error) {
        self.failed += 1;
        if self.first_failure.is_none() {
            let tls = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
            self.first_failure = Some(match tls {
                Some(t) => crate::tls::client::describe(t, "the server"),
                None if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    "the server closed the connection during the TLS handshake".into()
                }
                None => format!("TLS handshake failed: {e}"),
            });
        }
    }

    /// Two workers' tallies together.
    pub fn merge(self, b: TlsTally) -> TlsTally {
        TlsTally {
            full: self.full + b.full,
            resumed: self.resumed + b.resumed,
            failed: self.failed + b.failed,
            first_failure: self.first_failure.or(b.first_failure),
            negotiated: self.negotiated.or(b.negotiated),
        }
    }
}
