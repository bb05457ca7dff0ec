//! A load kind that exists only in tests, with trial facts of its own: it
//! proves that a kind whose points are judged by its own comparability
//! rule and whose chart carries its own mark is still this module plus one
//! line in [`KINDS`](super::KINDS), and that no other file names it.
//!
//! Its driver "completes" `frames` requests per connection and second;
//! past `limit` connections the fake server "refuses" a tenth of them. Its
//! rule: a cell whose trials refused more than 5% of what they completed
//! is not comparable, whatever the shared error rate says; its mark: the
//! `limit` on the throughput chart.

use super::facts::{ChartInputs, ChartMark, FactsReader, KindRule, StoredFacts};
use super::facts::{TrialExtras, TrialFacts};
use super::{Driver, ErrorCounts, LoadError, LoadKind, LoadResult, LoadSpec};
use crate::shutdown::Shutdown;
use crate::units::{Micros, RateUnit};

/// The `fake-rule` load kind.
pub const LOAD_KIND: LoadKind = LoadKind {
    name: "fake-rule",
    protocol: crate::model::Protocol::Fake,
    unit: RateUnit::Requests,
    error_kinds: &[super::ErrorKind::Timeout],
    requires: &[],
    compile: |t| {
        let s: RuleSettings = crate::kinds::parse_settings(t).map_err(LoadError::Spec)?;
        Ok(super::kind::plan(
            s,
            |s, _| Ok(Box::new(RuleDriver(s.clone()))),
            super::kind::no_dataset,
        ))
    },
    facts: Some(FactsReader::of::<RuleFacts>()),
};

#[derive(Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSettings {
    /// Requests each connection "completes" per second.
    frames: u64,
    /// Connections past which a tenth of them are refused.
    limit: u32,
}

struct RuleDriver(RuleSettings);

impl Driver for RuleDriver {
    fn name(&self) -> &'static str {
        "fake-rule"
    }
    fn run(&self, spec: &LoadSpec, _: &Shutdown) -> Result<LoadResult, LoadError> {
        let mut r = LoadResult::new();
        let n = self.0.frames * spec.duration.as_secs() * u64::from(spec.connections);
        for _ in 0..n {
            r.record(Micros(100), std::time::Duration::ZERO);
        }
        r.elapsed = spec.duration;
        let refused = if spec.connections > self.0.limit {
            n / 10
        } else {
            0
        };
        r.extras = TrialExtras::new(RuleFacts {
            limit: self.0.limit,
            refused,
            completed: n,
        });
        Ok(r)
    }
}

/// What the fake server refused.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct RuleFacts {
    limit: u32,
    refused: u64,
    completed: u64,
}

impl StoredFacts for RuleFacts {
    const KEY: &'static str = "fake_rule";
}

impl TrialFacts for RuleFacts {
    fn not_comparable(&self, cell: &[&TrialExtras], _: &ErrorCounts, _: u64) -> KindRule {
        let facts = cell.iter().filter_map(|e| e.get::<RuleFacts>());
        let (refused, completed) = facts.fold((0, 0), |(r, c), f| (r + f.refused, c + f.completed));
        KindRule::Decided(
            (refused * 20 > completed)
                .then(|| format!("{refused} refused, over 5% of {completed} completed")),
        )
    }

    fn chart_marks(&self, _: &ChartInputs) -> Vec<ChartMark> {
        vec![ChartMark::At {
            x: f64::from(self.limit),
            label: "refusing past here".into(),
            caption: "Grey dashed vertical: where the fake server starts refusing.".into(),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::{fake_analyse, run_data};
    use crate::store::TrialContext;
    use std::time::Duration;

    #[test]
    fn its_rule_decides_its_points_and_its_mark_is_drawn() {
        let table: toml::Table = toml::from_str("frames = 10\nlimit = 100").unwrap();
        // Found by name in the registry, as a recipe's `kind` is.
        let kind = super::super::kind("fake-rule").unwrap();
        let plan = super::super::compile(kind, &table).unwrap();
        let driver = plan.driver("fake://1").unwrap();
        let mut data = run_data(&["a"]);
        for t in &mut data.trials {
            let connections = t.point.coords[0].value.as_integer().unwrap() as u32;
            let spec = LoadSpec::closed(connections, 1, Duration::from_secs(1));
            let r = driver.run(&spec, &Shutdown::new()).unwrap();
            // Through the store's text, as a report reads it.
            let stored = TrialContext {
                extras: r.extras,
                ..TrialContext::default()
            };
            t.context = TrialContext::from_stored(&serde_json::to_string(&stored).unwrap());
            assert_eq!(t.context, stored);
            if connections == 10 {
                // Errors the shared rule would judge not comparable.
                let m = t.measurement.as_mut().unwrap();
                m.errors.timeout = m.requests;
            }
        }
        let mut agg = crate::report::rows::collect(&data);
        let judged = |n: f64| {
            let cell = agg.cells.iter().find(|c| c.x == Some(n)).unwrap();
            cell.not_comparable.clone()
        };
        assert_eq!(judged(10.0), None, "its rule, not the error rate, decides");
        assert_eq!(judged(100.0), None);
        let why = judged(1000.0).unwrap();
        assert!(
            why.ends_with("refused, over 5% of 30000 completed"),
            "{why}"
        );
        fake_analyse(&mut agg);
        let charts = crate::report::charts::charts(&agg);
        let throughput = charts
            .iter()
            .find(|c| c.kind == crate::report::charts::ChartKind::Throughput)
            .unwrap();
        assert!(throughput.svg.0.contains("refusing past here"));
        assert!(throughput
            .caption
            .contains("where the fake server starts refusing"));
    }

    #[test]
    fn no_file_outside_its_module_names_it() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let here = src.join("load").join("fake_rule.rs");
        let registry = src.join("load").join("mod.rs");
        let mut naming = Vec::new();
        let crates = src.with_file_name("crates");
        let files = [&src, &crates].map(|r| crate::load::facts::rust_files(r));
        for path in files.into_iter().flatten() {
            let text = std::fs::read_to_string(&path).unwrap();
            let names = ["fake_rule", "fake-rule", "RuleFacts", "RuleDriver"];
            let lines = text.lines().filter(|l| names.iter().any(|n| l.contains(n)));
            let count = lines.count();
            match () {
                () if path == here => assert!(count > 0),
                // `mod fake_rule;` and its line in `KINDS`.
                () if path == registry => assert_eq!(count, 2, "{}", path.display()),
                () if count > 0 => naming.push(path.display().to_string()),
                () => {}
            }
        }
        assert!(naming.is_empty(), "named outside its module: {naming:?}");
    }
}
