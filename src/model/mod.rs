//! The data every layer shares: what a sweep point is, and what dataset a
//! workload needs. It sits below [`crate::spec`], [`crate::runner`],
//! [`crate::store`], [`crate::report`], [`crate::target`] and
//! [`crate::load`], so none of them depends on another for it.

pub mod dataset;
pub mod dns_names;
pub mod point;

pub use dataset::{Dataset, SetupAddr, SetupProtocol, SetupSession};
pub use point::{display_value, AxisTarget, Coord, Point};
