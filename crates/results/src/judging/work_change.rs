//! Between two sides, the work per operation at one point: which counts
//! per operation changed, by how much, with the interval, and whether
//! throughput moved while the work did not ("the machine, not the code").
//!
//! Each count per operation is compared by Welch's t interval of the
//! difference of its means (`analysis::welch`). The unit follows the
//! rest of scalelab: with 3 or more runs a side, each run's median; with
//! fewer, the trials, said so on the output. A count per operation varies
//! far less between trials than throughput does (the same code makes the
//! same calls per request), which is what makes one run a side enough to
//! name a change of the work.
//!
//! A count changed when its whole 95% interval lies beyond
//! [`MIN_CHANGE`] per operation and beyond [`MIN_RELATIVE`] of the
//! baseline's value: smaller moves are the counting's own noise (a timer
//! firing, a log rotation).

use super::multi::Merged;
use super::runs::RunComparison;
use super::work::{figures, per_op_values};
use crate::analysis::compare::Verdict;
use crate::analysis::summary::median;
use crate::analysis::welch::welch_t;
use crate::store::{Trial, TrialStatus};
use serde::Serialize;

/// The smallest change per operation a count may claim.
pub const MIN_CHANGE: f64 = 0.05;
/// The smallest change relative to the baseline a count may claim (2%).
pub const MIN_RELATIVE: f64 = 0.02;
/// Runs a side from which the run is the unit.
pub const RUNS_AS_UNIT: usize = 3;
/// The interval's level.
const ALPHA: f64 = 0.05;

/// What the values compared are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Each run's median count per operation.
    Runs,
    /// Each trial's count per operation (fewer than 3 runs a side).
    Trials,
}

/// One count per operation on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CountChange {
    /// What is counted (`write(2)`, `system calls`, `context switches`).
    pub figure: String,
    /// Side A's mean per operation.
    pub a: f64,
    /// Side B's mean per operation.
    pub b: f64,
    /// The 95% interval of `b − a`.
    pub interval: (f64, f64),
    /// Whether the interval clears the floors: the work changed.
    pub changed: bool,
}

/// The work per operation at one point, A against B.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointWork {
    /// The values compared.
    pub unit: Unit,
    /// Values on each side.
    pub n: (usize, usize),
    /// Every count both sides measured, in [`figures`] order.
    pub counts: Vec<CountChange>,
}

impl PointWork {
    /// The counts that changed.
    pub fn changed(&self) -> impl Iterator<Item = &CountChange> {
        self.counts.iter().filter(|c| c.changed)
    }

    /// The sentence beside a point's throughput verdict: names what
    /// changed, or says the work did not, and then what a throughput
    /// change with the same work means.
    pub fn sentence(&self, throughput: Throughput) -> String {
        let changed: Vec<String> = self.changed().map(CountChange::describe).collect();
        if !changed.is_empty() {
            return format!("the work per request changed: {}", changed.join(", "));
        }
        let counted: Vec<&str> = [
            "system calls",
            super::work::WRITE_CALLS,
            "context switches",
            "minor faults",
        ]
        .into_iter()
        .filter(|f| self.counts.iter().any(|c| c.figure == *f))
        .collect();
        let same = format!(
            "the same work per request ({} per request within their noise)",
            counted.join(", ")
        );
        let same = same.as_str();
        match throughput {
            Throughput::Differs => format!(
                "{same}, at a different throughput: the same work cost more or less CPU \
                 time, the machine, not the code"
            ),
            Throughput::Unjudged(ratio) if (ratio - 1.0).abs() > MIN_RELATIVE => format!(
                "{same}, at {:+.1}% throughput (not judged: too few runs a side): if that \
                 holds, it is the machine, not the code",
                (ratio - 1.0) * 100.0
            ),
            Throughput::Same | Throughput::Unjudged(_) => same.into(),
        }
    }
}

/// What the throughput verdict at the point said.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Throughput {
    /// Faster or slower beyond the noise floor.
    Differs,
    /// No difference claimed.
    Same,
    /// No verdict (too few trials or runs); the ratio B / A.
    Unjudged(f64),
}

impl CountChange {
    /// `+1.00 write(2) per request (+0.98 to +1.02)`.
    pub fn describe(&self) -> String {
        let d = self.b - self.a;
        format!(
            "{d:+.2} {} per request ({:+.2} to {:+.2}; {:.2} → {:.2})",
            self.figure, self.interval.0, self.interval.1, self.a, self.b
        )
    }
}

/// The values of one figure per unit: each trial's, or each run's median.
fn unit_values(
    trials: &[&Trial],
    unit: Unit,
    read: &dyn Fn(&crate::record::probe::work::WorkCounts) -> Option<f64>,
) -> Vec<f64> {
    match unit {
        Unit::Trials => per_op_values(trials, read),
        Unit::Runs => run_ids(trials)
            .iter()
            .filter_map(|r| {
                let of_run: Vec<&Trial> =
                    trials.iter().copied().filter(|t| t.run_id == *r).collect();
                median(&per_op_values(&of_run, read))
            })
            .collect(),
    }
}

/// The distinct runs the trials are of.
fn run_ids(trials: &[&Trial]) -> Vec<i64> {
    let mut r: Vec<i64> = trials.iter().map(|t| t.run_id).collect();
    r.sort_unstable();
    r.dedup();
    r
}

fn runs_of(trials: &[&Trial]) -> usize {
    run_ids(trials).len()
}

/// The work at one point from the successful trials of each side;
/// `None` when either side has fewer than 2 counted values.
pub fn compare(a: &[&Trial], b: &[&Trial]) -> Option<PointWork> {
    let unit = if runs_of(a) >= RUNS_AS_UNIT && runs_of(b) >= RUNS_AS_UNIT {
        Unit::Runs
    } else {
        Unit::Trials
    };
    let both: Vec<&Trial> = a.iter().chain(b).copied().collect();
    let mut n = (0, 0);
    let counts: Vec<CountChange> = figures(&both)
        .into_iter()
        .filter_map(|(figure, read)| {
            let (x, y) = (unit_values(a, unit, &read), unit_values(b, unit, &read));
            let w = welch_t(&x, &y)?;
            n = (n.0.max(x.len()), n.1.max(y.len()));
            let interval = w.difference_ci(ALPHA)?;
            Some(CountChange {
                changed: clears(interval, w.mean_x),
                figure,
                a: w.mean_x,
                b: w.mean_y,
                interval,
            })
        })
        .collect();
    (!counts.is_empty()).then_some(PointWork { unit, n, counts })
}

/// Whether the interval of a difference lies wholly beyond the floors.
pub fn clears((lo, hi): (f64, f64), baseline: f64) -> bool {
    let floor = MIN_CHANGE.max(MIN_RELATIVE * baseline.abs());
    lo > floor || hi < -floor
}

/// One point's work between the baseline and one side, as `compare`
/// prints it under the throughput verdicts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointWorkLine {
    /// The system label (side A's).
    pub system: String,
    /// The point's label.
    pub point: String,
    /// The counts compared.
    pub work: PointWork,
    /// What the counts say beside the point's throughput verdict.
    pub sentence: String,
}

/// The successful trials of `runs` (positions in `merged.runs`) of
/// `system` at `point`.
fn trials_at<'a>(merged: &'a Merged, runs: &[usize], system: &str, point: &str) -> Vec<&'a Trial> {
    runs.iter()
        .flat_map(|&r| &merged.runs[r].trials)
        .filter(|t| t.status == TrialStatus::Ok && t.system == system && t.point.label() == point)
        .collect()
}

/// Every matched point of `comparison` (the baseline, side 0, against
/// side `side`) whose trials were counted on both sides.
pub fn of_comparison(
    merged: &Merged,
    side: usize,
    comparison: &RunComparison,
) -> Vec<PointWorkLine> {
    let (a_runs, b_runs) = (&merged.sides[0].runs, &merged.sides[side].runs);
    comparison
        .points
        .iter()
        .filter_map(|p| {
            let a = trials_at(merged, a_runs, &p.system, &p.point);
            let b = trials_at(merged, b_runs, &p.system_b, &p.point);
            let work = compare(&a, &b)?;
            let throughput = match p.comparison.verdict {
                Verdict::Faster | Verdict::Slower => Throughput::Differs,
                Verdict::NoDifference => Throughput::Same,
                _ => Throughput::Unjudged(p.comparison.ratio),
            };
            Some(PointWorkLine {
                system: p.system.clone(),
                point: p.point.clone(),
                sentence: work.sentence(throughput),
                work,
            })
        })
        .collect()
}

/// The work at one point between two runs on either side of a change
/// point of their throughput (`history`): the sentence, or `None` where
/// neither has counted trials there.
pub fn between_runs(
    (before, after): (&crate::store::RunData, &crate::store::RunData),
    (system, point): (&str, &str),
) -> Option<String> {
    fn at<'a>(r: &'a crate::store::RunData, system: &str, point: &str) -> Vec<&'a Trial> {
        (r.trials.iter())
            .filter(|t| {
                t.status == TrialStatus::Ok && t.system == system && t.point.label() == point
            })
            .collect()
    }
    let (a, b) = (at(before, system, point), at(after, system, point));
    Some(compare(&a, &b)?.sentence(Throughput::Differs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_claims_only_beyond_both_floors() {
        assert!(clears((0.98, 1.02), 4.0));
        assert!(clears((-1.2, -0.9), 4.0));
        assert!(!clears((-0.1, 1.0), 4.0), "the interval holds 0");
        assert!(!clears((0.03, 0.04), 1.0), "below 0.05 per request");
        assert!(!clears((0.5, 0.9), 100.0), "below 2% of 100");
    }

    #[test]
    fn the_sentence_names_the_changed_count_or_the_machine() {
        let c = |figure: &str, a: f64, b: f64| CountChange {
            figure: figure.into(),
            a,
            b,
            interval: (b - a - 0.01, b - a + 0.01),
            changed: clears((b - a - 0.01, b - a + 0.01), a),
        };
        let same = PointWork {
            unit: Unit::Trials,
            n: (3, 3),
            counts: vec![c("system calls", 4.0, 4.01), c("write(2)", 1.0, 1.0)],
        };
        assert!(same
            .sentence(Throughput::Differs)
            .contains("the machine, not the code"));
        assert!(!same.sentence(Throughput::Same).contains("machine"));
        let unjudged = same.sentence(Throughput::Unjudged(0.6));
        assert!(
            unjudged.contains("-40.0% throughput (not judged"),
            "{unjudged}"
        );
        assert!(!same
            .sentence(Throughput::Unjudged(1.01))
            .contains("machine"));
        let more = PointWork {
            counts: vec![c("system calls", 4.0, 5.0), c("write(2)", 1.0, 2.0)],
            ..same
        };
        let s = more.sentence(Throughput::Differs);
        assert!(s.contains("+1.00 write(2) per request"), "{s}");
        assert!(s.contains("+1.00 system calls per request"), "{s}");
    }
}
