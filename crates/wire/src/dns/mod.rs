//! DNS over UDP, shared by the `dns` load generator and the DNS server
//! targets.
//!
//! - `codec`: the question ([`Query`]), query templates and response
//!   matching, sans IO (hickory-proto);
//! - [`ask`]: one question asked from inside a namespace (readiness checks);
//! - `setup`: the [`crate::model::SetupSession`] the DNS lab's readiness
//!   check uses (the names themselves are [`crate::model::dns_names`]).

pub mod ask;
pub mod codec;
pub mod setup;

pub use codec::Query;
