//! The data every layer shares: what a sweep point is. It sits below
//! [`crate::spec`], [`crate::runner`], [`crate::store`] and
//! [`crate::report`], so none of them depends on another for it.

pub mod point;

pub use point::{display_value, AxisTarget, Coord, Point};
