//! `check --on syscalls|write_calls|read_calls|context_switches|instructions`:
//! the regression gate on a count per operation instead of throughput. A count per
//! request is a second, low-noise measure: the same code makes the same
//! system calls per request on a busy machine and on a quiet one, so one
//! run a side can gate a commit that throughput would need many runs for.
//!
//! A point regresses when its count per operation rose with the whole
//! 95% interval of the rise beyond the `work_change` floors and beyond
//! `max_regression` of the baseline's count (`work_change::compare`, the
//! run the unit from 3 runs a side). The exit codes are `check`'s.

use super::check::{CANNOT_SAY, GOOD, REGRESSION};
use super::work_change::{compare, CountChange, Unit};
use crate::store::{RunData, Trial, TrialStatus};
use serde::Serialize;

/// The counts `check --on` can gate on, and the figure each compares.
pub const GATES: [(&str, &str); 5] = [
    ("syscalls", "system calls"),
    ("write_calls", super::work::WRITE_CALLS),
    ("read_calls", super::work::READ_CALLS),
    ("context_switches", "context switches"),
    ("instructions", "instructions"),
];

/// One point's count on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointCount {
    /// The system.
    pub system: String,
    /// The point.
    pub point: String,
    /// The count compared.
    pub count: CountChange,
    /// The values compared.
    pub unit: Unit,
    /// Whether it rose beyond the floors and `max_regression`.
    pub regressed: bool,
}

/// The gate's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkCheck {
    /// The count gated on (`syscalls`).
    pub on: String,
    /// Its exit code: 0 good, 1 a regression, 125 cannot say.
    pub exit_code: i32,
    /// The largest rise tolerated (0.05 = 5%).
    pub max_regression: f64,
    /// Every point counted on both sides.
    pub points: Vec<PointCount>,
    /// Why nothing could be said, when nothing was.
    pub cannot_say: Option<String>,
}

/// The figure `on` names, or the error that lists the choices.
pub fn figure_of(on: &str) -> Result<&'static str, String> {
    GATES
        .iter()
        .find(|(name, _)| *name == on)
        .map(|(_, figure)| *figure)
        .ok_or_else(|| {
            let names: Vec<&str> = GATES.iter().map(|(n, _)| *n).collect();
            format!(
                "--on {on}: not a count to gate on; choose one of {}",
                names.join(", ")
            )
        })
}

fn ok_trials<'a>(runs: &'a [RunData], system: &str, point: &str) -> Vec<&'a Trial> {
    (runs.iter().flat_map(|r| &r.trials))
        .filter(|t| t.status == TrialStatus::Ok && t.system == system && t.point.label() == point)
        .collect()
}

/// Checks the candidate's count `on` per operation against the baselines'.
pub fn check(
    baselines: &[RunData],
    candidate: &RunData,
    on: &str,
    max_regression: f64,
) -> WorkCheck {
    let figure = figure_of(on).unwrap_or("system calls");
    let mut keys: Vec<(String, String)> = Vec::new();
    for t in candidate
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Ok)
    {
        let k = (t.system.clone(), t.point.label());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let cand = std::slice::from_ref(candidate);
    let points: Vec<PointCount> = keys
        .into_iter()
        .filter_map(|(system, point)| {
            let work = compare(
                &ok_trials(baselines, &system, &point),
                &ok_trials(cand, &system, &point),
            )?;
            let count = work.counts.iter().find(|c| c.figure == figure)?.clone();
            let regressed = count.changed && count.interval.0 > max_regression * count.a.abs();
            Some(PointCount {
                system,
                point,
                unit: work.unit,
                regressed,
                count,
            })
        })
        .collect();
    let cannot_say = points.is_empty().then(|| {
        format!(
            "no point has {figure} per request counted on both sides (at least 2 counted \
             trials each): runs stored before the work was counted, a server in the root \
             cgroup, or a host without an agent"
        )
    });
    let exit_code = match (&cannot_say, points.iter().any(|p| p.regressed)) {
        (Some(_), _) => CANNOT_SAY,
        (None, true) => REGRESSION,
        (None, false) => GOOD,
    };
    WorkCheck {
        on: on.to_string(),
        exit_code,
        max_regression,
        points,
        cannot_say,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_listed_counts_can_be_gated_on() {
        assert_eq!(figure_of("syscalls"), Ok("system calls"));
        assert_eq!(figure_of("write_calls"), Ok("write-family calls"));
        let e = figure_of("rps").unwrap_err();
        assert!(
            e.contains("syscalls, write_calls, read_calls, context_switches, instructions"),
            "{e}"
        );
    }
}
