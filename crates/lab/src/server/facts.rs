//! What a server kind records about itself with every trial beyond its
//! version, config and dataset ([`Server::describe`](super::Server::describe)):
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_router_reads_typed_and_another_shape_is_kept_as_it_was() {
        let router = r#"{"mtu":1500,"namespaces":["a","r","b"],"queues":1,"rps_cpus":[1],"settings":{"firewall":"none","firewall_rules":null,"gro":null,"gso":null,"host_rps_cpus":null,"link_gbit":10.0,"mtu":null,"queues":null,"rps_cpus":null,"sysctls":{},"xps_cpus":null}}"#;
        let facts: ServerFacts = serde_json::from_str(router).unwrap();
        assert!(matches!(facts, ServerFacts::Router(_)));
        assert_eq!(facts.link_gbit(), Some(10.0));
        let stored: serde_json::Value = serde_json::from_str(router).unwrap();
        assert_eq!(serde_json::to_value(&facts).unwrap(), stored);
        let other = r#"{"settings":{"link_gbit":10.0,"retired_setting":true}}"#;
        let facts: ServerFacts = serde_json::from_str(other).unwrap();
        assert!(matches!(facts, ServerFacts::Unread(_)));
        assert_eq!(
            facts.link_gbit(),
            None,
            "nothing is read from a shape not understood"
        );
        let stored: serde_json::Value = serde_json::from_str(other).unwrap();
        assert_eq!(serde_json::to_value(&facts).unwrap(), stored);
    }
}
