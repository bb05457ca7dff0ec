//! A load kind that exists only in tests, with trial facts of its own: it
//! proves that a kind whose points are judged by its own comparability
//! rule and whose chart carries its own mark is still this module plus one
//! line in [`KINDS`](super::KINDS), and that no other file names it but
//! its test through the report, in the top crate.
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
    #[test]
    fn no_file_outside_its_module_names_it() {
        let repo = std::path::Path::new(crate::REPO);
        let load = repo.join("crates/lab/src/load");
        let here = load.join("fake_rule.rs");
        let registry = load.join("mod.rs");
        // Its test through the report, in the top crate.
        let through_the_report = repo.join("crates/results/src/report/fake_kind_tests.rs");
        let mut naming = Vec::new();
        let files = ["src", "crates"].map(|r| crate::load::facts::rust_files(&repo.join(r)));
        for path in files.into_iter().flatten() {
            let text = std::fs::read_to_string(&path).unwrap();
            let names = ["fake_rule", "fake-rule", "RuleFacts", "RuleDriver"];
            let lines = text.lines().filter(|l| names.iter().any(|n| l.contains(n)));
            let count = lines.count();
            match () {
                () if path == here || path == through_the_report => assert!(count > 0),
                // `mod fake_rule;` and its line in `KINDS`.
                () if path == registry => assert_eq!(count, 2, "{}", path.display()),
                () if count > 0 => naming.push(path.display().to_string()),
                () => {}
            }
        }
        assert!(naming.is_empty(), "named outside its module: {naming:?}");
    }
}
