//! The facts stored with each trial beside its measurement: where the
//! server ran, what it was loaded with, the load's shape, the multi-host
//! split, and whether the client bounded the result. Stored as the
//! `trials.context` JSON column; every field is optional, so contexts
//! written by older versions (and failed trials, which record less) read
//! back as they were.

use crate::placement::PlacementFacts;
use crate::record::catalog::Catalog;
use crate::record::facts::TrialExtras;
use crate::record::server::{DatasetInfo, ServerFacts};
use serde::{Deserialize, Serialize};

/// Everything recorded about one trial beyond its measurement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrialContext {
    /// The server host (`user@address`) the trial's system ran on, in a
    /// run with server hosts; absent: this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_host: Option<String>,
    /// The server's CPUs and cgroups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementFacts>,
    /// The data the server was loaded with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset: Option<DatasetInfo>,
    /// The server's version string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// What the server kind records about itself beyond its version (the
    /// router's lab), typed by kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_settings: Option<ServerFacts>,
    /// The shape of the load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadShape>,
    /// Each client host's share, in a multi-host run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<ClientShare>,
    /// How evenly the client hosts started, in a multi-host run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordination: Option<Coordination>,
    /// What the load kind recorded beyond the measurement (DNS's
    /// datagram counts, a forwarding search), under the kind's own key
    /// (`load::facts`); owned and judged by the kind.
    #[serde(flatten)]
    pub extras: TrialExtras,
    /// Whether the result describes the client rather than the server
    /// (absent for a failed trial).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_bound: Option<bool>,
    /// Why, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_bound_reason: Option<String>,
    /// What limited the trial, with the figures behind the verdict (`probe::limiter`);
    /// absent for a failed trial and in runs stored before it was judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limiter: Option<crate::record::probe::limiter::Limiter>,
}

impl TrialContext {
    /// Reads a stored context, its kinds' facts through the `catalog`'s
    /// readers (the load kind's and the server kind's). A field this version
    /// cannot read (written by an older or newer scalelab in another shape)
    /// is left out rather than failing the whole trial; anything but a JSON
    /// object reads as empty.
    pub fn from_stored(text: &str, catalog: &Catalog) -> TrialContext {
        let read = |c: TrialContext| -> Result<TrialContext, serde_json::Error> {
            let extras = c.extras.resolved(&catalog.facts)?;
            let server_settings = (c.server_settings).map(|s| s.resolved(&catalog.servers));
            Ok(TrialContext {
                extras,
                server_settings,
                ..c
            })
        };
        if let Ok(c) = serde_json::from_str(text).and_then(read) {
            return c;
        }
        let Ok(serde_json::Value::Object(mut fields)) = serde_json::from_str(text) else {
            return TrialContext::default();
        };
        let readable = |k: &String, v: &serde_json::Value| {
            let one = serde_json::Map::from_iter([(k.clone(), v.clone())]);
            serde_json::from_value::<TrialContext>(one.into())
                .and_then(read)
                .is_ok()
        };
        fields.retain(|k, v| readable(k, v));
        (serde_json::from_value(fields.into()).and_then(read)).unwrap_or_default()
    }

    /// Why the trial was client-bound, if it was.
    pub fn client_bound_why(&self) -> Option<String> {
        self.client_bound.filter(|b| *b).map(|_| {
            self.client_bound_reason
                .clone()
                .unwrap_or_else(|| "no reason recorded".into())
        })
    }

    /// Marks the trial client-bound for `reason`, or records that it was not.
    pub fn set_client_bound(&mut self, reason: Option<String>) {
        self.client_bound = Some(reason.is_some());
        self.client_bound_reason = reason;
    }
}

/// The load's shape in one trial.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadShape {
    /// Concurrent connections (over all client hosts).
    pub connections: u32,
    /// Load generator threads.
    pub threads: u32,
    /// The open-loop rate per second; `None`: closed loop.
    pub rate: Option<f64>,
    /// Requests per connection; `None`: unlimited.
    pub connreqs: Option<u32>,
    /// The CPUs the load generator may use; `None`: all.
    pub client_cpus: Option<Vec<usize>>,
}

/// What one client host did in a coordinated trial.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientShare {
    /// The host's name as the experiment gives it.
    pub host: String,
    /// Requests it completed.
    pub requests: u64,
    /// Its completed requests per second.
    pub rps: f64,
    /// Connections it held.
    pub connections: u64,
    /// CPU seconds its load generator used.
    pub client_cpu_s: f64,
    /// Its start, relative to the earliest client's, in microseconds.
    pub start_offset_us: f64,
    /// Why this client's numbers describe the client, if they do.
    pub client_bound: Option<String>,
}

/// How the client hosts of a multi-host trial were coordinated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Coordination {
    /// Latest minus earliest client start, in microseconds.
    pub start_skew_us: f64,
    /// The wall time coordination added, in microseconds.
    pub overhead_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_1_context_reads_and_writes_back_the_same() {
        let stored = r#"{"client_bound":false,"load":{"client_cpus":null,"connections":4,"connreqs":null,"rate":null,"threads":2},"placement":{"affinity":null,"cgroups":[],"cpus":null,"memory_bytes":null},"server_version":"nginx/1.22.1"}"#;
        let c: TrialContext = serde_json::from_str(stored).unwrap();
        assert_eq!(c.load.as_ref().unwrap().connections, 4);
        assert_eq!(c.client_bound_why(), None);
        let back: serde_json::Value = serde_json::to_value(&c).unwrap();
        let want: serde_json::Value = serde_json::from_str(stored).unwrap();
        assert_eq!(back, want);
    }

    #[test]
    fn a_field_of_another_shape_is_left_out_not_fatal() {
        let stored = r#"{"server_version":"nginx/1.22.1","datagrams":{"sent":"many"},"client_bound":true,"client_bound_reason":"client CPU 99%"}"#;
        let c = TrialContext::from_stored(stored, scalelab_lab::catalog());
        assert_eq!(c.server_version.as_deref(), Some("nginx/1.22.1"));
        assert!(c.extras.is_none());
        assert_eq!(c.client_bound_why().as_deref(), Some("client CPU 99%"));
        assert_eq!(
            TrialContext::from_stored("[1]", &Catalog::default()),
            TrialContext::default()
        );
    }

    #[test]
    fn client_bound_reads_its_reason() {
        let mut c = TrialContext::default();
        assert_eq!(c.client_bound_why(), None);
        c.set_client_bound(Some("client CPU 99%".into()));
        assert_eq!(c.client_bound_why().as_deref(), Some("client CPU 99%"));
        c.client_bound_reason = None;
        assert_eq!(c.client_bound_why().as_deref(), Some("no reason recorded"));
        let multi = r#"{"clients":[{"host":"c1","requests":10,"rps":5.0,"connections":2,"client_cpu_s":0.1,"start_offset_us":3.0,"client_bound":null}],"coordination":{"start_skew_us":12.0,"overhead_us":40.0}}"#;
        let c: TrialContext = serde_json::from_str(multi).unwrap();
        assert_eq!(c.clients[0].host, "c1");
        assert_eq!(c.coordination.unwrap().start_skew_us, 12.0);
    }
}
