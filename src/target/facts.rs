//! What a server kind records about itself with every trial beyond its
//! version, config and dataset ([`Target::describe`](super::Target::describe)):
//! typed per kind, asked through methods, never read back by key.
//! Stored as the context's `server_settings`, in the shape the kinds
//! always wrote (untagged), so old stores read back the same.

use serde::{Deserialize, Serialize};

/// One server kind's facts about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ServerFacts {
    /// The router lab's settings, CPUs and namespaces (`router`).
    Router(Box<super::router::RouterFacts>),
    /// A description this version does not read as any kind's (written by
    /// another version of scalelab): kept and shown as it was, asked
    /// nothing.
    Unread(serde_json::Value),
}

impl ServerFacts {
    /// The link speed the server forwards over, in Gbit/s, which a
    /// forwarding rate is drawn against; `None`: the kind has no link or
    /// its settings give no speed (veth has none).
    pub fn link_gbit(&self) -> Option<f64> {
        match self {
            ServerFacts::Router(r) => r.settings.link_gbit,
            ServerFacts::Unread(_) => None,
        }
    }
}
