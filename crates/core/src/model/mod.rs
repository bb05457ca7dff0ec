//! The data every layer shares: what a sweep point is, what dataset a
//! workload needs, how a remote host is named, and the router lab's
//! topology. It sits below
//! `scalelab::recipe`, `scalelab::runner`, `scalelab::store`, `scalelab::report`,
//! `scalelab::server`, `scalelab::load` and `scalelab::remote`, so none of
//! them depends on another for it.

#![forbid(unsafe_code)]

pub mod dataset;
pub mod dns_names;
pub mod host;
pub mod point;
pub mod protocol;
pub mod topology;

pub use dataset::{Dataset, SetupAddr, SetupSession};
pub use host::Host;
pub use point::{display_value, AxisTarget, Coord, Point};
pub use protocol::Protocol;
