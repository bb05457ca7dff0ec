//! Facts the seed charts need from the trial context
//! ([`TrialContext`]): the dataset's size, the server's memory limit, the
//! server's line speed and the load kind's own facts (for its chart marks
//! and its own charts); a missing one is absent.

use crate::record::facts::TrialExtras;
use crate::record::server::ServerFigure;
use crate::store::Trial;
use crate::store::TrialContext;

/// One cell's context facts, from its successful trials.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContextFacts {
    /// The loaded dataset (`context.dataset.bytes`), median over trials.
    pub dataset_bytes: Option<f64>,
    /// The server's cgroup memory limit (`context.placement.memory_bytes`).
    pub memory_limit_bytes: Option<f64>,
    /// The first trial's server figures for the load kind's chart marks
    /// (`ServerFacts::chart_figures`: a router's link speed), carried by
    /// name and read by none of the shared layers; empty when none gave any.
    pub server_figures: Vec<ServerFigure>,
    /// The first trial's load-kind facts, which draw the kind's chart
    /// marks (`TrialExtras::chart_marks`) and its own charts
    /// (`TrialExtras::charts`); empty when none recorded any.
    pub extras: TrialExtras,
}

impl ContextFacts {
    /// The facts of a cell's successful trials.
    pub fn of(ok: &[&Trial]) -> ContextFacts {
        let num = |read: fn(&TrialContext) -> Option<f64>| {
            let mut v: Vec<f64> = ok
                .iter()
                .filter_map(|t| read(&t.context))
                .filter(|x| x.is_finite() && *x > 0.0)
                .collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied()
        };
        ContextFacts {
            dataset_bytes: num(|c| Some(c.dataset.as_ref()?.bytes as f64)),
            memory_limit_bytes: num(|c| Some(c.placement.as_ref()?.memory_bytes? as f64)),
            server_figures: ok
                .iter()
                .filter_map(|t| t.context.server_settings.as_ref())
                .map(|s| s.chart_figures())
                .find(|f| !f.is_empty())
                .unwrap_or_default(),
            extras: ok
                .iter()
                .map(|t| &t.context.extras)
                .find(|e| !e.is_none())
                .cloned()
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_read_from_the_context_and_absent_otherwise() {
        let mut data = crate::judging::test_support::run_data(&["a"]);
        let mut t = data.trials.remove(0);
        t.context = TrialContext {
            dataset: Some(crate::record::server::DatasetInfo {
                description: "pgbench scale 16".into(),
                bytes: 260_000_000,
            }),
            placement: Some(crate::placement::PlacementFacts {
                memory_bytes: Some(268_435_456),
                ..Default::default()
            }),
            extras: crate::load::dns::facts::ramp_extras([(100, 99)], &["stopped early"]),
            ..Default::default()
        };
        let f = ContextFacts::of(&[&t]);
        assert_eq!(f.dataset_bytes, Some(260e6));
        assert_eq!(f.memory_limit_bytes, Some(268_435_456.0));
        assert_eq!(f.server_figures, []);
        // The kind's facts whole, its notes among them.
        assert_eq!(f.extras, t.context.extras);
        assert_eq!(f.extras.notes(), ["stopped early"]);
        // The router's facts as it stores them.
        let router = r#"{"mtu":1500,"namespaces":null,"queues":1,"rps_cpus":null,"settings":{"link_gbit":10.0}}"#;
        let stored: crate::record::server::ServerFacts = serde_json::from_str(router).unwrap();
        t.context.server_settings = Some(stored.resolved(&scalelab_lab::catalog().servers));
        let link = ServerFigure {
            name: crate::model::topology::LINK_GBIT,
            value: 10.0,
        };
        assert_eq!(ContextFacts::of(&[&t]).server_figures, [link]);
        t.context = TrialContext::default();
        assert_eq!(ContextFacts::of(&[&t]), ContextFacts::default());
    }
}
