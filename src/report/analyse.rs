//! The analysis pass over the collected rows: summaries, comparisons
//! against the baseline, per-series fits and the ranking.

use super::fits::{fit_series, rank};
use super::rows::{collect, Aggregate};
use crate::analysis::compare::compare_by;
use crate::analysis::summary::summarize;
use crate::store::RunData;

/// Builds the aggregate: facts, then statistics.
pub fn aggregate(data: &RunData) -> Aggregate {
    let mut agg = collect(data);
    analyse(&mut agg);
    agg
}

/// Adds summaries, comparisons, fits and the ranking.
pub fn analyse(agg: &mut Aggregate) {
    for c in &mut agg.cells {
        c.summary = summarize(&c.throughput, agg.headline);
    }
    if let Some(base) = agg.baseline.clone() {
        let base_values: Vec<(u32, Vec<f64>, Option<String>)> = agg
            .cells
            .iter()
            .filter(|c| c.system == base)
            .map(|c| {
                (
                    c.point.index,
                    c.throughput.clone(),
                    c.not_comparable.clone(),
                )
            })
            .collect();
        for c in agg.cells.iter_mut().filter(|c| c.system != base) {
            let at = base_values.iter().find(|(i, ..)| *i == c.point.index);
            if let Some((_, b, base_errors)) = at.filter(|(_, b, _)| !b.is_empty()) {
                if !c.throughput.is_empty() {
                    let cmp = compare_by(b, &c.throughput, agg.noise, agg.headline);
                    // Errors above the threshold on either side: no verdict.
                    let why = c
                        .not_comparable
                        .as_ref()
                        .map(|r| format!("{r} in {}", c.system))
                        .or_else(|| base_errors.as_ref().map(|r| format!("{r} in {base}")));
                    c.comparison = Some(match why {
                        Some(reason) => cmp.not_comparable(reason),
                        None => cmp,
                    });
                }
            }
        }
    }
    super::energy::analyse(agg);
    agg.fits = fit_series(agg);
    agg.ranking = rank(agg);
}
