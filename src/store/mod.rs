//! SQLite store. See docs/store-schema.md.
pub mod model;
pub use model::*;
