//! What a server speaks and a load generator sends: the wire protocol
//! that pairs a server kind with the load kinds that can drive it, so
//! systems of different server kinds in one run can be checked to serve
//! the run's load kind.

/// A protocol between load generator and server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.1.
    Http,
    /// The PostgreSQL frontend/backend protocol.
    Postgres,
    /// The MySQL client/server protocol.
    Mysql,
    /// DNS over UDP.
    Dns,
    /// Raw frames forwarded through a router.
    Frames,
    /// The test-only fake kinds.
    Fake,
}

impl Protocol {
    /// Its name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http => "HTTP",
            Protocol::Postgres => "the PostgreSQL protocol",
            Protocol::Mysql => "the MySQL protocol",
            Protocol::Dns => "DNS",
            Protocol::Frames => "forwarded frames",
            Protocol::Fake => "the fake protocol",
        }
    }
}
