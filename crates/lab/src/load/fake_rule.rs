//! A load kind that exists only in tests, with trial facts of its own: it
//! proves that a kind with its own protocol (`wire::fake_rule`), its own
//! server kind with facts of its own (`server/fake_rule.rs`), its own
//! comparability rule, its own mark on the throughput chart and a chart of
//! its own is still its files plus its registry lines (`mod fake_rule;`
//! and one line in [`KINDS`](super::KINDS), the same two in the server's
//! registry, and `pub mod fake_rule;` in the wire crate), and that no
//! other file names it but its test through the report
//! (`crates/report/src/fake_kind_tests.rs`).
//!
//! Its driver "completes" `frames` requests per connection and second;
//! past `limit` connections the fake server "refuses" a tenth of them. Its
//! rule: a cell whose trials refused more than 5% of what they completed
//! is not comparable, whatever the shared error rate says; its mark: the
//! `limit` on the throughput chart; its chart: the share refused against
//! connections, with the rule's 5% as a guide.

use super::facts::{ChartInputs, ChartMark, FactsReader, KindRule, StoredFacts};
use super::facts::{KindChart, KindChartCell, KindCurve, KindGuide, KindPoint, KindSection};
use super::facts::{TrialExtras, TrialFacts};
use super::{Driver, ErrorCounts, LoadError, LoadKind, LoadResult, LoadSpec};
use crate::shutdown::Shutdown;
use crate::units::{Micros, RateUnit};

/// The `fake-rule` load kind.
pub const LOAD_KIND: LoadKind = LoadKind {
    name: "fake-rule",
    protocol: crate::wire::fake_rule::PROTOCOL,
    unit: RateUnit::Requests,
    error_kinds: &[super::ErrorKind::Timeout],
    requires: &[],
    compile: |t| {
        let s: RuleSettings = crate::kinds::parse_settings(t).map_err(LoadError::Spec)?;
        Ok(super::kind::plan(
            s,
            |s, _| Ok(Box::new(RuleDriver(s.clone()))),
            own_dataset,
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
    /// Keys of its own dataset the server is to hold (none: no dataset).
    #[serde(default)]
    keys: Option<u64>,
}

/// Its own dataset: `keys` keys, named and described here, held by its
/// own server kind and by no other.
fn own_dataset(s: &RuleSettings) -> Option<crate::model::Dataset> {
    let keys = s.keys?;
    Some(crate::model::Dataset::Own(
        crate::model::dataset::OwnDataset {
            name: crate::wire::fake_rule::DATASET.into(),
            settings: [("keys".to_string(), keys)].into(),
            description: format!("fake-rule {keys} keys"),
            build_estimate_ms: 0,
        },
    ))
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
            connections: spec.connections,
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
    connections: u32,
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

    fn charts(&self, system: &str, cells: &[KindChartCell]) -> Vec<KindChart> {
        let points: Vec<KindPoint> = (cells.iter())
            .filter_map(|c| c.extras.get::<RuleFacts>().map(|f| (c, f)))
            .map(|(c, f)| KindPoint {
                x: f64::from(f.connections),
                y: f.refused as f64 / f.completed.max(1) as f64 * 100.0,
                tip: format!(
                    "{system} {}: {} refused of {}",
                    c.point, f.refused, f.completed
                ),
            })
            .collect();
        let Some(last) = points.last().map(|p| p.x) else {
            return Vec::new();
        };
        vec![KindChart {
            name: "refused",
            section: KindSection {
                id: "refusals",
                title: "Refusals",
            },
            title: "share refused against connections".into(),
            x_label: "connections".into(),
            y_label: "refused (% of completed)".into(),
            curves: vec![KindCurve {
                label: "refused".into(),
                points,
            }],
            guides: vec![KindGuide {
                points: vec![(0.0, 5.0), (last, 5.0)],
                label: "the rule's 5%".into(),
            }],
            caption: "The share the fake server refused at each point; above the dotted 5% line \
                      a point is not comparable."
                .into(),
        }]
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
    /// The kinds' own files, each of which names them, and the registry
    /// files with how many lines there may (its `mod` line and its entry).
    fn own_files_and_registry_lines(
        repo: &std::path::Path,
    ) -> (Vec<std::path::PathBuf>, Vec<(std::path::PathBuf, usize)>) {
        let own = [
            "crates/lab/src/load/fake_rule.rs",
            "crates/lab/src/server/fake_rule.rs",
            "crates/wire/src/fake_rule.rs",
            // Its test through the store's text and the report.
            "crates/report/src/fake_kind_tests.rs",
        ];
        let registries = [
            ("crates/lab/src/load/mod.rs", 2),
            ("crates/lab/src/server/mod.rs", 2),
            // `pub mod fake_rule;`
            ("crates/wire/src/lib.rs", 1),
        ];
        (
            own.iter().map(|f| repo.join(f)).collect(),
            registries.iter().map(|(f, n)| (repo.join(f), *n)).collect(),
        )
    }

    /// A kind with its own protocol, server facts, rule, mark and chart
    /// is its own files plus its registry lines: no other file of the
    /// workspace names it (its kind name, module, or types).
    #[test]
    fn no_file_outside_its_module_names_it() {
        let repo = std::path::Path::new(crate::REPO).canonicalize().unwrap();
        let (own, registries) = own_files_and_registry_lines(&repo);
        let mut naming = Vec::new();
        let files = ["src", "crates"].map(|r| crate::load::facts::rust_files(&repo.join(r)));
        for path in files.into_iter().flatten() {
            let text = std::fs::read_to_string(&path).unwrap();
            let names = [
                "fake_rule",
                "fake-rule",
                "RuleFacts",
                "RuleDriver",
                "RuleServer",
            ];
            let lines = text.lines().filter(|l| names.iter().any(|n| l.contains(n)));
            let count = lines.count();
            let path = path.canonicalize().unwrap();
            if own.contains(&path) {
                assert!(count > 0, "{} does not name the kind", path.display());
            } else if let Some((_, n)) = registries.iter().find(|(r, _)| *r == path) {
                assert_eq!(count, *n, "{}", path.display());
            } else if count > 0 {
                naming.push(path.display().to_string());
            }
        }
        assert!(naming.is_empty(), "named outside its module: {naming:?}");
    }
}
