//! The protocol of the lab's test-only `fake-rule` kinds (a load kind and
//! a server kind that exist to show a kind with its own protocol, dataset,
//! rule, chart and server facts is its own files and its registry lines),
//! and the name of their own dataset, which both of them know.

use crate::model::Protocol;

/// What the `fake-rule` load kind speaks and the `fake-rule` server
/// serves, and nothing else.
pub const PROTOCOL: Protocol = Protocol::new("fake-rule", "the fake-rule protocol");

/// The name of their own dataset (`model::Dataset::Own`): `keys` keys,
/// which the load kind declares and the server kind holds.
pub const DATASET: &str = "fake-rule-keys";

/// The name of the link speed its server gives the charts (a server
/// figure), Gbit/s.
pub const LINK_GBIT: &str = "fake-rule.link_gbit";
