//! One (system, point)'s energy gathered from its trials, before any
//! statistics: the watts and operations per joule of each successful
//! trial, and what measured them. [`super::energy`] adds the summaries and
//! verdicts and renders them.

use super::probe_view;
use crate::analysis::compare::Comparison;
use crate::analysis::summary::Summary;
use crate::record::probe::energy::EnergySource;
use crate::store::Trial;
use serde::Serialize;

/// One cell's energy over its successful trials.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CellEnergy {
    /// Mean watts of each successful trial that has an energy figure.
    pub watts: Vec<f64>,
    /// Operations per joule of those trials (throughput / watts).
    pub ops_per_joule: Vec<f64>,
    /// The median of `watts`.
    pub watts_median: Option<f64>,
    /// Summary of `ops_per_joule`, with the run's headline statistic.
    pub summary: Option<Summary>,
    /// ops/J against the baseline's at the same point (higher is better;
    /// the sentence says "more/less efficient").
    pub comparison: Option<Comparison>,
    /// `+12.0% (p=0.002)`, as the throughput verdicts are written.
    pub verdict_text: Option<String>,
    /// What measured it (rapl, hwmon, command, command_over_ssh).
    #[schemars(with = "String")]
    pub source: EnergySource,
    /// The domains summed, as the probe named them (`package-0`,
    /// `package-0/dram`, `hwmon:<name>/<sensor>`, the command).
    pub domains: Vec<String>,
    /// The load generator ran on the measured hardware in some trial
    /// (a local run), so the watts include the client's.
    pub client_shares_meter: bool,
}

/// The energy of `ok` trials; `None` when none has a figure.
pub fn of_trials(ok: &[&Trial]) -> Option<CellEnergy> {
    let with: Vec<_> = ok
        .iter()
        .filter_map(|t| {
            let p = t.probe.as_ref()?;
            Some((
                p.energy.as_ref()?,
                probe_view::number(Some(p), |p| p.watts)?,
                p,
            ))
        })
        .collect();
    let (first, _, _) = with.first()?;
    let mut domains: Vec<String> = Vec::new();
    for d in with.iter().flat_map(|(e, _, _)| &e.domains) {
        if !domains.contains(d) {
            domains.push(d.clone());
        }
    }
    let watts: Vec<f64> = with.iter().map(|(_, w, _)| *w).collect();
    Some(CellEnergy {
        watts_median: crate::analysis::summary::median(&watts),
        watts,
        ops_per_joule: with
            .iter()
            .filter_map(|(_, _, p)| probe_view::number(Some(p), |p| p.ops_per_joule))
            .collect(),
        summary: None,
        comparison: None,
        verdict_text: None,
        source: first.source,
        domains,
        client_shares_meter: with.iter().any(|(e, _, _)| e.client_shares_meter),
    })
}
