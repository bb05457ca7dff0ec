//! The PostgreSQL wire protocol, shared by the `pg` load driver and the
//! `postgres` server target.
//!
//! - `codec` and `auth`: the wire protocol, sans-IO.
//! - [`conninfo`]: libpq connection strings and URIs.
//! - [`client`]: a blocking client for setup (scale detection, vacuum,
//!   [`dataset`] loading) and checks; `setup` offers it to server
//!   targets as a [`crate::model::SetupSession`].

pub mod auth;
pub mod client;
pub mod codec;
pub mod conninfo;
pub mod dataset;
pub mod setup;

pub use codec::PgError;
pub use conninfo::ConnConfig;
