//! The wire protocols both sides speak: the PostgreSQL, MySQL/MariaDB and
//! DNS codecs (sans-IO), their blocking clients, connection strings and
//! authentication, and the setup sessions ([`crate::model::SetupSession`])
//! a server target loads its dataset through. The load drivers
//! ([`crate::load`]) build their event-loop sessions on these codecs; the
//! server targets ([`crate::server`]) open setup sessions here directly.
//!
//! - [`policy`]: where any packet may go (loopback, or a host the
//!   experiment names), asked before every socket is opened;
//! - [`pg`], [`mysql`], [`dns`]: one module per protocol.
//!
//! It sits above [`crate::sys`] (namespaces) and [`crate::model`], and
//! below both `load` and `server`.

pub mod dns;
pub mod mysql;
pub mod pg;
pub mod policy;
