//! A trivial server kind that exists only in tests: it proves that a new
//! kind is this module plus one line in [`KINDS`](super::KINDS). It starts
//! no process; its endpoint `fake://<speed>` tells the fake load kind how
//! fast to "answer". It "holds" whatever dataset the workload declares and
//! reports it, so tests can see what the runner handed it.

use super::{DatasetInfo, Endpoint, Placement, Server, ServerError, Shutdown};
use crate::model::Dataset;

const KIND: &str = "fake";

/// The `fake` server kind.
pub const SERVER_KIND: super::ServerKind = super::ServerKind {
    name: KIND,
    serves: Some(crate::wire::fake::PROTOCOL),
    parallelism: &[],
    requires: &[crate::kinds::Requirement {
        what: "fake server (tests only)",
        package: "fake-server-package",
        paths: &["/"],
    }],
    compile: |t| {
        let settings = FakeSettings::parse(t)?;
        Ok(super::plan::of(settings, |s, _base| {
            Ok(Box::new(FakeServer {
                settings: s.clone(),
                running: false,
                dataset: None,
            }))
        }))
    },
    runs_under_agent: false,
    listens_on_host_address: false,
    dns_lab: None,
    start_estimate: std::time::Duration::ZERO,
    facts: None,
};

#[derive(Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FakeSettings {
    /// Answers per request slot: the fake load multiplies its count by it.
    #[serde(default = "one")]
    speed: u32,
}

fn one() -> u32 {
    1
}

impl FakeSettings {
    fn parse(t: &toml::Table) -> Result<Self, ServerError> {
        let s: FakeSettings =
            crate::kinds::parse_settings(t).map_err(|m| ServerError::settings(KIND, m))?;
        if s.speed == 0 {
            return Err(ServerError::settings(
                KIND,
                "speed must be at least 1".into(),
            ));
        }
        Ok(s)
    }
}

struct FakeServer {
    settings: FakeSettings,
    running: bool,
    dataset: Option<DatasetInfo>,
}

impl Server for FakeServer {
    fn kind(&self) -> &'static str {
        KIND
    }
    fn start(
        &mut self,
        _: &Placement,
        dataset: Option<&Dataset>,
        _: &Shutdown,
    ) -> Result<Endpoint, ServerError> {
        self.running = true;
        // A fake load: its size is its description's length, in bytes.
        self.dataset = dataset.map(|d| DatasetInfo {
            description: d.describe(),
            bytes: d.describe().len() as u64,
        });
        Ok(Endpoint {
            ca_pem: None,
            uri: format!("fake://{}", self.settings.speed),
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
        Some("fake/1".into())
    }
    fn effective_config(&self) -> Option<String> {
        None
    }
    fn dataset(&self) -> Option<DatasetInfo> {
        self.dataset.clone()
    }
}
