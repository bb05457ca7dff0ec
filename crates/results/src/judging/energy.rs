//! Energy in the reports: per (system, point) the trials' watts and
//! operations per joule, summarised and compared against the baseline as
//! throughput is (higher ops/J is better), and the words every format uses
//! to say what was measured. Nothing here, and no column or chart, appears
//! for a run whose trials have no energy figure.

use super::rows::{Aggregate, Cell};
use super::verdict;

use crate::analysis::compare::compare_by;
use crate::analysis::summary::summarize;
use crate::record::probe::energy::EnergySource;

/// Summaries of every cell's ops/J and comparisons with the baseline's.
pub fn analyse(agg: &mut Aggregate) {
    let (headline, noise) = (agg.headline, agg.noise);
    for e in agg.cells.iter_mut().filter_map(|c| c.energy.as_mut()) {
        e.summary = summarize(&e.ops_per_joule, headline);
    }
    let Some(base) = agg.baseline.clone() else {
        return;
    };
    let base_values: Vec<(u32, Vec<f64>)> = agg
        .cells
        .iter()
        .filter(|c| c.system == base)
        .filter_map(|c| Some((c.point.index, c.energy.as_ref()?.ops_per_joule.clone())))
        .collect();
    for c in agg.cells.iter_mut().filter(|c| c.system != base) {
        let Some(b) = base_values.iter().find(|(i, _)| *i == c.point.index) else {
            continue;
        };
        let not_comparable = c.comparison.as_ref().and_then(|t| match &t.verdict {
            crate::analysis::compare::Verdict::NotComparable { reason } => Some(reason.clone()),
            _ => None,
        });
        let Some(e) = c.energy.as_mut().filter(|e| !e.ops_per_joule.is_empty()) else {
            continue;
        };
        if b.1.is_empty() {
            continue;
        }
        let mut cmp = compare_by(&b.1, &e.ops_per_joule, noise, headline);
        cmp.sentence = cmp
            .sentence
            .replace(" faster", " more efficient (ops/J)")
            .replace(" slower", " less efficient (ops/J)");
        if let Some(reason) = not_comparable {
            cmp = cmp.not_comparable(reason);
        }
        e.verdict_text = Some(verdict::short(&cmp).0);
        e.comparison = Some(cmp);
    }
}

/// Whether any cell of the run has an energy figure.
pub fn measured(agg: &Aggregate) -> bool {
    agg.cells.iter().any(|c| c.energy.is_some())
}

/// `rapl: package-0, package-0/dram`: every source and domain in the run.
pub fn domains_line(agg: &Aggregate) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in agg.cells.iter().filter_map(|c| c.energy.as_ref()) {
        let line = format!("{}: {}", source_word(e.source), e.domains.join(", "));
        if !seen.contains(&line) {
            seen.push(line);
        }
    }
    seen.join("; ")
}

/// The sentence on whose energy the figures hold; `None` when no point's
/// client shared the meter.
pub fn shared_note(agg: &Aggregate) -> Option<String> {
    let shared: Vec<&Cell> = agg
        .cells
        .iter()
        .filter(|c| c.energy.as_ref().is_some_and(|e| e.client_shares_meter))
        .collect();
    if shared.is_empty() {
        return None;
    }
    let all = shared.len() == agg.cells.iter().filter(|c| c.energy.is_some()).count();
    Some(format!(
        "{} ({SHARED}) the load generator ran on the measured package, so its watts include \
         the client's, not the server's alone",
        if all {
            "at every point"
        } else {
            "at the marked points"
        }
    ))
}

/// The mark of a point whose client shares the measured package.
pub const SHARED: char = '◆';

/// The word for a source.
pub fn source_word(s: EnergySource) -> &'static str {
    match s {
        EnergySource::Rapl => "rapl",
        EnergySource::Hwmon => "hwmon",
        EnergySource::Command => "command",
        EnergySource::CommandOverSsh => "command over ssh",
    }
}
