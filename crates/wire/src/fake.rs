//! The protocol of the lab's test-only `fake` kinds, which send nothing:
//! the load kind "completes" what the server's endpoint tells it.

use crate::model::Protocol;

/// What the `fake` load kind speaks and the `fake` server serves.
pub const PROTOCOL: Protocol = Protocol::new("fake", "the fake protocol");
