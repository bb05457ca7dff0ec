//! The `fake-rule` server kind, which exists only in tests: the server
//! side of the `fake-rule` load kind (`load/fake_rule.rs`), speaking their
//! own protocol (`wire::fake_rule`), with facts of its own about itself
//! ([`RuleServerFacts`]: a link speed the report reads through
//! `ServerDescription`, never by name), holding their own dataset
//! (`model::Dataset::Own`, named `wire::fake_rule::DATASET`) and refusing
//! any other. It starts no process. With its load kind it proves that a
//! kind with its own protocol, dataset, rule, chart and server facts is
//! its own files and its registry lines.

use super::{DatasetInfo, Endpoint, Placement, Server, ServerDescription, ServerError};
use super::{ServerFacts, Shutdown};
use crate::model::Dataset;

const KIND: &str = "fake-rule";

/// The `fake-rule` server kind.
pub const SERVER_KIND: super::ServerKind = super::ServerKind {
    name: KIND,
    serves: Some(crate::wire::fake_rule::PROTOCOL),
    parallelism: &[],
    requires: &[],
    compile: |t| {
        let settings: RuleServerFacts =
            crate::kinds::parse_settings(t).map_err(|m| ServerError::settings(KIND, m))?;
        Ok(super::plan::of(settings, |s, _base| {
            Ok(Box::new(RuleServer {
                facts: s.clone(),
                running: false,
                dataset: None,
            }))
        }))
    },
    runs_under_agent: false,
    listens_on_host_address: false,
    dns_lab: None,
    start_estimate: std::time::Duration::ZERO,
    facts: Some(super::ServerFactsReader::of::<RuleServerFacts>()),
};

/// Its settings, recorded whole with every trial as its facts.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleServerFacts {
    /// The link it "forwards" over, Gbit/s.
    link_gbit: f64,
}

impl ServerDescription for RuleServerFacts {
    fn to_json(&self) -> serde_json::Value {
        // Plain data: serialising it to a JSON value cannot fail.
        serde_json::to_value(self).unwrap_or_default()
    }
    fn clone_box(&self) -> Box<dyn ServerDescription> {
        Box::new(self.clone())
    }
    fn chart_figures(&self) -> Vec<super::ServerFigure> {
        vec![super::ServerFigure {
            name: crate::wire::fake_rule::LINK_GBIT,
            value: self.link_gbit,
        }]
    }
}

struct RuleServer {
    facts: RuleServerFacts,
    running: bool,
    /// The dataset it holds: its own kind's, and no other.
    dataset: Option<DatasetInfo>,
}

impl Server for RuleServer {
    fn kind(&self) -> &'static str {
        KIND
    }
    fn start(
        &mut self,
        _: &Placement,
        dataset: Option<&Dataset>,
        _: &Shutdown,
    ) -> Result<Endpoint, ServerError> {
        self.dataset = match dataset {
            None => None,
            Some(Dataset::Own(own)) if own.name == crate::wire::fake_rule::DATASET => {
                // Eight bytes a key, as it "holds" them.
                let keys = own.settings.get("keys").copied().unwrap_or(0);
                Some(DatasetInfo {
                    description: own.description.clone(),
                    bytes: keys * 8,
                })
            }
            Some(other) => {
                return Err(super::wrong_dataset(KIND, "its own keys", other));
            }
        };
        self.running = true;
        Ok(Endpoint {
            ca_pem: None,
            uri: "fake://1".into(),
        })
    }
    fn stop(&mut self) -> Result<(), ServerError> {
        self.running = false;
        Ok(())
    }
    fn is_running(&self) -> bool {
        self.running
    }
    fn version(&self) -> Option<String> {
        Some("fake-rule/1".into())
    }
    fn effective_config(&self) -> Option<String> {
        None
    }
    fn dataset(&self) -> Option<DatasetInfo> {
        self.dataset.clone()
    }
    fn describe(&self) -> Option<ServerFacts> {
        Some(ServerFacts::new(self.facts.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_kinds_dataset_is_refused_with_what_it_holds() {
        let mut server = RuleServer {
            facts: RuleServerFacts { link_gbit: 1.0 },
            running: false,
            dataset: None,
        };
        let pgbench = Dataset::Pgbench { scale: 1 };
        let e = server
            .start(&Placement::default(), Some(&pgbench), &Shutdown::new())
            .unwrap_err();
        assert!(e.to_string().contains("holds its own keys"), "{e}");
        assert!(!server.is_running());
    }
}
