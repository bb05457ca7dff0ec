//! Per-request failures by kind: the counts every driver keeps and the
//! one list of kinds every report, CSV column and JSON export iterates.

use serde::{Deserialize, Serialize};

/// Failure counts by kind. Per-request failures never abort a run; they are
/// counted here (wrk's "Socket errors: connect, read, write, timeout" plus
/// non-2xx statuses; pgbench's failures by SQLSTATE class).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(deny_unknown_fields)]
pub struct ErrorCounts {
    /// Connections that could not be opened (refused, unreachable, or no free local port).
    pub connect: u64,
    /// Failed reads: the connection was reset or closed before a whole response arrived.
    pub read: u64,
    /// Failed writes of a request.
    pub write: u64,
    /// Requests that got no complete response within the timeout.
    pub timeout: u64,
    /// Responses with a non-2xx HTTP status (they still count as requests).
    pub status: u64,
    /// Malformed responses or protocol violations.
    pub protocol: u64,
    /// SQL serialization failures (SQLSTATE 40001), after retries ran out.
    pub serialization: u64,
    /// SQL deadlocks (SQLSTATE 40P01), after retries ran out.
    pub deadlock: u64,
    /// Any other server-reported error.
    pub other: u64,
}

/// One kind of per-request failure: the one list every report, CSV column
/// and JSON export iterates ([`ErrorKind::ALL`]); each load kind declares
/// the subset its driver counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A connection could not be opened ([`ErrorCounts::connect`]).
    Connect,
    /// A read failed ([`ErrorCounts::read`]).
    Read,
    /// A write failed ([`ErrorCounts::write`]).
    Write,
    /// No response in time ([`ErrorCounts::timeout`]).
    Timeout,
    /// A non-2xx HTTP status ([`ErrorCounts::status`]).
    Status,
    /// A malformed response ([`ErrorCounts::protocol`]).
    Protocol,
    /// SQLSTATE 40001 after retries ([`ErrorCounts::serialization`]).
    Serialization,
    /// SQLSTATE 40P01 after retries ([`ErrorCounts::deadlock`]).
    Deadlock,
    /// Any other server-reported error ([`ErrorCounts::other`]).
    Other,
}

impl ErrorKind {
    /// Every kind, in report and CSV column order.
    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::Connect,
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::Timeout,
        ErrorKind::Status,
        ErrorKind::Protocol,
        ErrorKind::Serialization,
        ErrorKind::Deadlock,
        ErrorKind::Other,
    ];

    /// Failures of the socket or the protocol on it (everything the server
    /// did not report itself): what `socket errors` lines count.
    pub const SOCKET: [ErrorKind; 5] = [
        ErrorKind::Connect,
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::Timeout,
        ErrorKind::Protocol,
    ];

    /// What a request/reply protocol counts (HTTP, DNS): the socket's
    /// failures and replies with an error status.
    pub const REQUEST_REPLY: &'static [ErrorKind] = &[
        ErrorKind::Connect,
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::Timeout,
        ErrorKind::Status,
        ErrorKind::Protocol,
    ];

    /// What a serializable SQL server's transactions count (PostgreSQL):
    /// the socket's failures, serialization failures, deadlocks and other
    /// SQL errors.
    pub const SQL_SERIALIZABLE: &'static [ErrorKind] = &[
        ErrorKind::Connect,
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::Timeout,
        ErrorKind::Protocol,
        ErrorKind::Serialization,
        ErrorKind::Deadlock,
        ErrorKind::Other,
    ];

    /// What a locking SQL server's transactions count (MySQL/MariaDB):
    /// as [`ErrorKind::SQL_SERIALIZABLE`] without serialization failures.
    pub const SQL_LOCKING: &'static [ErrorKind] = &[
        ErrorKind::Connect,
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::Timeout,
        ErrorKind::Protocol,
        ErrorKind::Deadlock,
        ErrorKind::Other,
    ];

    /// After a count in prose: `12 timeouts`, `3 connect`.
    pub fn counted(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeouts",
            ErrorKind::Connect
            | ErrorKind::Read
            | ErrorKind::Write
            | ErrorKind::Status
            | ErrorKind::Protocol
            | ErrorKind::Serialization
            | ErrorKind::Deadlock
            | ErrorKind::Other => self.name(),
        }
    }

    /// The name in reports, CSV columns (`errors_<name>`) and JSON keys.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Read => "read",
            ErrorKind::Write => "write",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Status => "status",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Serialization => "serialization",
            ErrorKind::Deadlock => "deadlock",
            ErrorKind::Other => "other",
        }
    }
}

impl ErrorCounts {
    fn slot(&mut self, kind: ErrorKind) -> &mut u64 {
        match kind {
            ErrorKind::Connect => &mut self.connect,
            ErrorKind::Read => &mut self.read,
            ErrorKind::Write => &mut self.write,
            ErrorKind::Timeout => &mut self.timeout,
            ErrorKind::Status => &mut self.status,
            ErrorKind::Protocol => &mut self.protocol,
            ErrorKind::Serialization => &mut self.serialization,
            ErrorKind::Deadlock => &mut self.deadlock,
            ErrorKind::Other => &mut self.other,
        }
    }

    /// The count of one kind.
    pub fn get(&self, kind: ErrorKind) -> u64 {
        let mut copy = *self;
        *copy.slot(kind)
    }

    /// Counts one failure.
    pub fn add(&mut self, kind: ErrorKind) {
        *self.slot(kind) += 1;
    }

    /// Adds another worker's counts.
    pub fn merge(&mut self, o: &ErrorCounts) {
        for k in ErrorKind::ALL {
            *self.slot(k) += o.get(k);
        }
    }

    /// `(kind, count)` for every kind with failures, in [`ErrorKind::ALL`]
    /// order.
    pub fn nonzero(&self) -> impl Iterator<Item = (ErrorKind, u64)> + '_ {
        ErrorKind::ALL
            .into_iter()
            .map(|k| (k, self.get(k)))
            .filter(|(_, n)| *n > 0)
    }

    /// Socket-level and protocol failures ([`ErrorKind::SOCKET`]).
    pub fn socket_errors(&self) -> u64 {
        ErrorKind::SOCKET.into_iter().map(|k| self.get(k)).sum()
    }

    /// The counts of `kinds`, in their order: `connect 0, read 2, timeout 1`.
    pub fn listed(&self, kinds: &[ErrorKind]) -> String {
        kinds
            .iter()
            .map(|&k| format!("{} {}", k.name(), self.get(k)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Every failure, of every kind.
    pub fn total(&self) -> u64 {
        self.socket_errors() + self.status + self.serialization + self.deadlock + self.other
    }

    /// The non-zero kinds, largest first (ties in [`ErrorKind::ALL`]
    /// order): `31042 timeouts, 1906 connect`.
    pub fn kinds(&self) -> String {
        let mut kinds: Vec<(ErrorKind, u64)> = self.nonzero().collect();
        kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
        kinds
            .iter()
            .map(|(k, n)| format!("{n} {}", k.counted()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The errors of a table cell: `0`, `12 timeouts` (one kind), or
    /// `32948: 31042 timeouts, 1906 connect` (the total, then each kind).
    pub fn describe(&self) -> String {
        match self.nonzero().count() {
            0 => "0".into(),
            1 => self.kinds(),
            _ => format!("{}: {}", self.total(), self.kinds()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_lines_list_the_named_sets_in_order() {
        let mut e = ErrorCounts::default();
        e.add(ErrorKind::Timeout);
        e.add(ErrorKind::Timeout);
        e.add(ErrorKind::Connect);
        e.add(ErrorKind::Deadlock);
        assert_eq!(
            e.listed(&ErrorKind::SOCKET),
            "connect 1, read 0, write 0, timeout 2, protocol 0"
        );
        assert_eq!(e.socket_errors(), 3);
        assert_eq!(
            e.listed(ErrorKind::SQL_LOCKING),
            "connect 1, read 0, write 0, timeout 2, protocol 0, deadlock 1, other 0"
        );
        // Each set is in report order, and the SQL sets differ only by
        // serialization failures.
        for set in [
            ErrorKind::REQUEST_REPLY,
            ErrorKind::SQL_SERIALIZABLE,
            ErrorKind::SQL_LOCKING,
        ] {
            let order: Vec<usize> = set
                .iter()
                .map(|k| ErrorKind::ALL.iter().position(|a| a == k).unwrap())
                .collect();
            assert!(order.windows(2).all(|w| w[0] < w[1]), "{set:?}");
        }
        let without: Vec<_> = ErrorKind::SQL_SERIALIZABLE
            .iter()
            .filter(|k| **k != ErrorKind::Serialization)
            .copied()
            .collect();
        assert_eq!(without, ErrorKind::SQL_LOCKING);
    }

    #[test]
    fn errors_are_described_by_kind_largest_first() {
        let mut e = ErrorCounts::default();
        assert_eq!(e.describe(), "0");
        for _ in 0..3 {
            e.add(ErrorKind::Timeout);
        }
        assert_eq!(e.describe(), "3 timeouts");
        for _ in 0..5 {
            e.add(ErrorKind::Status);
        }
        e.add(ErrorKind::Connect);
        assert_eq!(e.describe(), "9: 5 status, 3 timeouts, 1 connect");
    }
}
