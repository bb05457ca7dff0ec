//! The MySQL/MariaDB wire protocol, shared by the `mysql` load driver and
//! the `mariadb` server target.
//!
//! - `codec`: the wire protocol, sans-IO, on top of `mysql_common`.
//! - [`url`]: `mysql://USER:PASS@HOST:PORT/DB` endpoints (loopback only).
//! - [`dataset`]: `sysbench oltp_* prepare`'s tables; `values`: sysbench's
//!   random values, which the driver's scripts draw too.
//! - [`client`]: a blocking client for setup and checks; `setup` offers
//!   it to server targets as a [`crate::model::SetupSession`].

pub mod client;
pub mod codec;
pub mod dataset;
pub mod setup;
pub mod url;
pub mod values;

pub use url::MysqlUrl;
