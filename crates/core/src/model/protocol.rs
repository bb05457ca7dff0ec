//! What a server speaks and a load generator sends: the wire protocol
//! that pairs a server kind with the load kinds that can drive it, so
//! systems of different server kinds in one run can be checked to serve
//! the run's load kind.
//!
//! A protocol is a value, not a closed list: the ones scalelab's kinds
//! speak are the constants here, and a kind with a protocol of its own
//! declares its own constant in its own module (`Protocol::new`), which
//! its load kind's `protocol` and its server kind's `serves` both name.

/// A protocol between load generator and server; two are the same when
/// their ids are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Protocol {
    /// Its id (`http`), unique among the kinds' protocols.
    id: &'static str,
    /// Its name, for messages (`HTTP`).
    name: &'static str,
}

impl Protocol {
    /// HTTP/1.1.
    pub const HTTP: Protocol = Protocol::new("http", "HTTP");
    /// The PostgreSQL frontend/backend protocol.
    pub const POSTGRES: Protocol = Protocol::new("postgres", "the PostgreSQL protocol");
    /// The MySQL client/server protocol.
    pub const MYSQL: Protocol = Protocol::new("mysql", "the MySQL protocol");
    /// DNS over UDP.
    pub const DNS: Protocol = Protocol::new("dns", "DNS");
    /// Raw frames forwarded through a router.
    pub const FRAMES: Protocol = Protocol::new("frames", "forwarded frames");

    /// A protocol of id `id`, named `name` in messages.
    pub const fn new(id: &'static str, name: &'static str) -> Protocol {
        Protocol { id, name }
    }

    /// Its id.
    pub fn id(self) -> &'static str {
        self.id
    }

    /// Its name, for messages.
    pub fn name(self) -> &'static str {
        self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_protocol_is_its_id() {
        const OWN: Protocol = Protocol::new("http", "HTTP, declared again");
        assert_eq!(OWN, Protocol::new("http", "HTTP, declared again"));
        assert_ne!(Protocol::HTTP, Protocol::DNS);
        assert_eq!(Protocol::POSTGRES.name(), "the PostgreSQL protocol");
        assert_eq!(Protocol::FRAMES.id(), "frames");
    }
}
