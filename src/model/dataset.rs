//! The dataset seam: what data a workload needs on the server
//! ([`Dataset`]), and the setup session ([`SetupSession`]) through which a
//! server target checks readiness, loads that data and reads its settings.
//!
//! The load side implements the session (it owns the wire clients) and
//! [`crate::kinds::setup`] registers one per [`SetupProtocol`]; a target
//! opens one there, so no target imports a driver's modules.

use std::time::Duration;

/// The data a workload runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dataset {
    /// pgbench's four tables at `scale` (100,000 accounts per unit).
    Pgbench {
        /// pgbench's scale factor.
        scale: u32,
    },
    /// sysbench's `sbtest1..tables`, `table_size` rows each.
    Sysbench {
        /// How many tables.
        tables: u32,
        /// Rows per table.
        table_size: u32,
    },
    /// The DNS lab's zones ([`super::dns_names`]) holding `hosts` hosts.
    DnsZones {
        /// Hosts in the forward zone (and PTRs in the reverse zones).
        hosts: u32,
    },
}

impl Dataset {
    /// What it is, for people (recorded with every trial).
    pub fn describe(&self) -> String {
        match self {
            Dataset::Pgbench { scale } => format!("pgbench scale {scale}"),
            Dataset::Sysbench { tables, table_size } => {
                format!("sysbench {tables} tables x {table_size} rows")
            }
            Dataset::DnsZones { hosts } => format!("DNS zones with {hosts} hosts"),
        }
    }
}

/// The wire protocols a target opens a setup session in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetupProtocol {
    /// PostgreSQL's frontend/backend protocol.
    Postgres,
    /// The MySQL/MariaDB client protocol.
    Mysql,
    /// DNS over UDP.
    Dns,
}

/// Where a setup session goes.
#[derive(Clone, Copy, Debug)]
pub struct SetupAddr<'a> {
    /// The endpoint in the form the protocol's driver takes (a libpq
    /// connection string, a `mysql://` URL, `ADDR:PORT` for DNS).
    pub uri: &'a str,
    /// The network namespace the server lives in, if any.
    pub netns: Option<&'a str>,
    /// How long connecting (or one question) may take.
    pub timeout: Duration,
}

/// A short-lived session a target uses to set its server up. Errors are the
/// driver's own messages; the target wraps them in its error type.
pub trait SetupSession {
    /// Checks that the server answers (`select 1`, a DNS question, ...).
    fn ready(&mut self) -> Result<(), String>;
    /// The version the server reported on connecting, if the protocol says.
    fn server_version(&self) -> Option<String> {
        None
    }
    /// Builds `dataset` on the server (dropping an older copy).
    fn load(&mut self, dataset: &Dataset) -> Result<(), String>;
    /// Bytes the loaded data takes on the server.
    fn size(&mut self) -> Result<u64, String>;
    /// The server's effective settings as `# name = value` comment lines;
    /// `names` restricts them where the protocol cannot tell the
    /// non-default ones itself.
    fn settings_dump(&mut self, names: &[String]) -> Result<String, String>;
}

/// The error of a session asked for a dataset its protocol cannot hold.
pub fn unsupported(protocol: SetupProtocol, dataset: &Dataset) -> String {
    format!("a {protocol:?} server cannot hold {}", dataset.describe())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_the_ones_trials_recorded() {
        assert_eq!(Dataset::Pgbench { scale: 4 }.describe(), "pgbench scale 4");
        let s = Dataset::Sysbench {
            tables: 2,
            table_size: 100,
        };
        assert_eq!(s.describe(), "sysbench 2 tables x 100 rows");
        let e = unsupported(SetupProtocol::Dns, &s);
        assert_eq!(e, "a Dns server cannot hold sysbench 2 tables x 100 rows");
    }
}
