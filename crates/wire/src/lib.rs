//! The wire protocols both sides speak: the PostgreSQL, MySQL/MariaDB and
//! DNS codecs (sans-IO), their blocking clients, connection strings and
//! authentication, and the setup sessions ([`crate::model::SetupSession`])
//! a server target loads its dataset through. The load drivers
//! (`scalelab::load`) build their event-loop sessions on these codecs; the
//! server targets (`scalelab::server`) open setup sessions here directly.
//!
//! - [`policy`]: where any packet may go (loopback, or a host the
//!   experiment names), asked before every socket is opened;
//! - [`pg`], [`mysql`], [`dns`]: one module per protocol.
//!
//! The crate `scalelab-wire` sits above `scalelab-core` ([`crate::sys`]'s
//! namespaces and routes, [`crate::model`]) and below the top crate's
//! `load` and `server`, which reach it as `scalelab::wire`.

use scalelab_core::{model, procfs, sys};

pub mod dns;
#[cfg(feature = "test-support")]
pub mod fake;
#[cfg(feature = "test-support")]
pub mod fake_rule;
pub mod mysql;
pub mod pg;
pub mod policy;
