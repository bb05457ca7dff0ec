//! The order-effect check after a run (issue 47): do the trials that ran
//! first in their round differ from the rest, and does a system's
//! throughput at a point trend with its start time?
//!
//! - First against the rest: each trial's throughput is divided by its
//!   cell's median (one system at one point of one run), so cells of any
//!   size pool (a cell whose every trial ran first, as with one system,
//!   is left out); the trials with round position 0 are then compared with
//!   the others by the one verdict engine ([`crate::analysis::compare`]),
//!   with the run's noise floor, so the claim follows the same rule as
//!   every verdict.
//! - The trend: per cell, the least-squares slope of throughput on the
//!   trial's place in the run's start order ([`crate::analysis::trend`]),
//!   as a change over the cell's span, claimed when its whole interval
//!   lies beyond the floor. Each cell's interval is at 1 − 0.05/m for m
//!   cells (Bonferroni), so a run of many cells makes no claim by chance
//!   more often than one cell would.
//!
//! Runs stored before orders were (no round positions) get no check.

use crate::analysis::compare::{compare, Comparison, Verdict};
use crate::analysis::summary::median;
use crate::analysis::trend::drift;
use crate::store::{RunData, Trial};
use serde::Serialize;

/// What the check found.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct OrderEffect {
    /// The trials that ran first in their round (normalised by their
    /// cell's median) against the rest, by the verdict engine; null when
    /// no cell has both (one system: every trial runs first).
    pub first_trial: Option<Comparison>,
    /// Trials first in their round, and the rest, that were compared.
    pub first_trials: usize,
    /// See `first_trials`.
    pub other_trials: usize,
    /// Each cell's trend of throughput against start order, for cells with
    /// 3 or more successful trials.
    pub trends: Vec<CellTrend>,
    /// What the run says: one line per effect beyond the floor, else one
    /// line that none was found (or why there is no check).
    pub lines: Vec<String>,
}

/// One cell's trend against start order.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct CellTrend {
    /// The system.
    pub system: String,
    /// The sweep point's index.
    pub point_index: u32,
    /// The point as `axis=value`.
    pub point: String,
    /// Fitted change from its first trial to its last, as a fraction of
    /// its mean (-0.06: 6% lower at the end).
    pub change: f64,
    /// The change's interval (Bonferroni-adjusted, see the module doc).
    pub ci: (f64, f64),
    /// The whole interval lies beyond the noise floor.
    pub beyond_floor: bool,
}

/// The check on `data`'s trials (of one run, or of runs merged: cells are
/// per run); `None` when no trial has a stored place (an older run).
pub fn of(data: &RunData, noise: f64) -> Option<OrderEffect> {
    let placed: Vec<&Trial> = (data.trials.iter())
        .filter(|t| t.place.is_some() && t.throughput().is_some())
        .collect();
    if placed.is_empty() {
        return None;
    }
    let cells = cells(&placed);
    let (mut first, mut rest) = (Vec::new(), Vec::new());
    for cell in &cells {
        let values: Vec<f64> = cell.iter().filter_map(|t| t.throughput()).collect();
        let Some(m) = median(&values).filter(|m| *m > 0.0) else {
            continue;
        };
        // A cell whose every trial ran first (one system) says nothing
        // about the order; a cell that never ran first still gives the
        // rest its trials, each against its own cell's median.
        if cell.iter().all(|t| position(t) == 0) {
            continue;
        }
        for t in cell {
            let v = t.throughput().unwrap_or(0.0) / m;
            if position(t) == 0 {
                first.push(v);
            } else {
                rest.push(v);
            }
        }
    }
    let first_trial =
        (!first.is_empty() && !rest.is_empty()).then(|| compare(&rest, &first, noise));
    let trends = trends(&cells, noise);
    let lines = lines(first_trial.as_ref(), &trends, noise);
    Some(OrderEffect {
        first_trial,
        first_trials: first.len(),
        other_trials: rest.len(),
        trends,
        lines,
    })
}

fn position(t: &Trial) -> u32 {
    t.place.map_or(0, |p| p.round_position)
}

/// The trials grouped by (run, system, point), in first-seen order.
fn cells<'a>(placed: &[&'a Trial]) -> Vec<Vec<&'a Trial>> {
    let mut out: Vec<Vec<&Trial>> = Vec::new();
    for t in placed {
        let same = |c: &&mut Vec<&Trial>| {
            let h = c[0];
            (h.run_id, &h.system, h.point.index) == (t.run_id, &t.system, t.point.index)
        };
        match out.iter_mut().find(|c| same(c)) {
            Some(c) => c.push(t),
            None => out.push(vec![t]),
        }
    }
    out
}

fn trends(cells: &[Vec<&Trial>], noise: f64) -> Vec<CellTrend> {
    let fitted: Vec<&Vec<&Trial>> = cells.iter().filter(|c| c.len() >= 3).collect();
    let level = 1.0 - 0.05 / fitted.len().max(1) as f64;
    fitted
        .into_iter()
        .filter_map(|cell| {
            let x: Vec<f64> = (cell.iter())
                .map(|t| f64::from(t.place.map_or(0, |p| p.start_seq)))
                .collect();
            let y: Vec<f64> = cell.iter().filter_map(|t| t.throughput()).collect();
            let d = drift(&x, &y, level, noise)?;
            Some(CellTrend {
                system: cell[0].system.clone(),
                point_index: cell[0].point.index,
                point: cell[0].point.label(),
                change: d.change,
                ci: d.ci,
                beyond_floor: d.beyond_floor,
            })
        })
        .collect()
}

/// `-4.1..-1.2%`.
fn range(lo: f64, hi: f64) -> String {
    format!("{:.1}..{:.1}%", lo * 100.0, hi * 100.0)
}

fn lines(first: Option<&Comparison>, trends: &[CellTrend], noise: f64) -> Vec<String> {
    let floor = super::format::percent_fine(noise);
    let mut out = Vec::new();
    let ci = |c: &Comparison| {
        c.ratio_ci
            .map(|(lo, hi)| format!(" (95% CI {})", range(lo - 1.0, hi - 1.0)))
            .unwrap_or_default()
    };
    match first {
        Some(c) if c.verdict == Verdict::Slower => out.push(format!(
            "order effect: the first trial of each round is {:.1}% slower than the rest{}: is \
             the warm-up too short, or does a round's start cost something (a cooldown, a \
             cache emptied)?",
            (1.0 - c.ratio) * 100.0,
            ci(c)
        )),
        Some(c) if c.verdict == Verdict::Faster => out.push(format!(
            "order effect: the first trial of each round is {:.1}% faster than the rest{}: do \
             the later trials of a round pay for the earlier ones (heat, a queue, a cache \
             filled)?",
            (c.ratio - 1.0) * 100.0,
            ci(c)
        )),
        _ => {}
    }
    for t in trends.iter().filter(|t| t.beyond_floor) {
        out.push(format!(
            "order effect: {} at {} {} {:.1}% across its trials in start order (CI {}): a \
             trend in time (a table that grows, a cache that fills, a machine that heats up)",
            t.system,
            t.point,
            if t.change < 0.0 { "falls" } else { "rises" },
            t.change.abs() * 100.0,
            range(t.ci.0, t.ci.1)
        ));
    }
    if out.is_empty() {
        let first = match first {
            Some(c) => format!(
                "the first trial of each round against the rest: {:+.1}%{}",
                (c.ratio - 1.0) * 100.0,
                ci(c)
            ),
            None => "no round had a first trial and others to compare (one system)".into(),
        };
        out.push(format!(
            "order effect: none beyond the {floor} floor ({first}; no trend in start order \
             in {} cell(s))",
            trends.len()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::TrialPlace;
    use crate::units::PerSecond;

    /// Two systems, 8 rounds, one point; `first_factor` scales the trial
    /// that ran first in each round; positions alternate between systems.
    fn run(first_factor: f64, trend: f64) -> RunData {
        let mut data = crate::judging::test_support::run_data(&["a", "b"]);
        let template = data.trials[0].clone();
        data.trials.clear();
        let mut seq = 0;
        for round in 1..=8u32 {
            for position in 0..2u32 {
                let system = if (round + position) % 2 == 0 {
                    "a"
                } else {
                    "b"
                };
                let mut t = template.clone();
                t.system = system.into();
                t.trial = round;
                t.place = Some(TrialPlace {
                    round_position: position,
                    start_seq: seq,
                });
                let wobble = [1.0, 0.996, 1.004, 0.998][(seq % 4) as usize];
                let mut rps = 10_000.0 * wobble * (1.0 + trend * f64::from(seq) / 15.0);
                if position == 0 {
                    rps *= first_factor;
                }
                t.measurement.as_mut().unwrap().rps = PerSecond(rps);
                seq += 1;
                data.trials.push(t);
            }
        }
        data
    }

    #[test]
    fn a_first_trial_penalty_beyond_the_floor_is_named() {
        let e = of(&run(0.90, 0.0), 0.02).unwrap();
        let c = e.first_trial.as_ref().unwrap();
        assert_eq!(c.verdict, Verdict::Slower, "{e:?}");
        assert_eq!((e.first_trials, e.other_trials), (8, 8));
        assert!(
            e.lines[0].contains("first trial of each round is"),
            "{:?}",
            e.lines
        );
        assert!(e.lines[0].contains("slower"), "{:?}", e.lines);
    }

    #[test]
    fn no_effect_is_claimed_without_one() {
        let e = of(&run(1.0, 0.0), 0.02).unwrap();
        assert_ne!(e.first_trial.as_ref().unwrap().verdict, Verdict::Slower);
        assert!(e.trends.iter().all(|t| !t.beyond_floor), "{:?}", e.trends);
        assert_eq!(e.lines.len(), 1);
        assert!(
            e.lines[0].starts_with("order effect: none beyond the 2% floor"),
            "{:?}",
            e.lines
        );
    }

    #[test]
    fn a_trend_in_start_order_is_named() {
        let e = of(&run(1.0, -0.15), 0.02).unwrap();
        let falling: Vec<&CellTrend> = e.trends.iter().filter(|t| t.beyond_floor).collect();
        assert_eq!(falling.len(), 2, "{:?}", e.trends);
        assert!(falling.iter().all(|t| t.change < -0.1));
        assert!(e.lines.iter().any(|l| l.contains("falls")), "{:?}", e.lines);
    }

    #[test]
    fn an_older_run_gets_no_check() {
        let mut data = run(1.0, 0.0);
        for t in &mut data.trials {
            t.place = None;
        }
        assert!(of(&data, 0.02).is_none());
    }
}
