//! `check --on n_star|peak|peak_x|collapse|sigma|kappa`: the regression gate
//! on a property of each system's scaling curve ([`Property`]) instead of
//! its points, with `check`'s exit codes for `git bisect run`.
//!
//! The baselines are runs, so the run is the unit: each baseline run gives
//! its curve's value, and the candidate is one more run. The interval is
//! the prediction interval for one new run (Student's t on the logs,
//! [`pooled_log_t`] with one candidate run; Kalibera & Jones, the run as
//! the unit between runs), which needs at least [`MIN_RUNS`] baseline runs
//! with the property. A curve regresses when the whole 95% interval of the
//! candidate's ratio to the baselines lies beyond `max_regression` in the
//! worse direction: down for N*, the peak, its x and the collapse (the knee
//! came earlier, the top is lower), up for σ and κ (more contention or
//! crosstalk).

use super::analyse::aggregate;
use super::check::{CANNOT_SAY, GOOD, REGRESSION};
use super::history::shape::Property;
use crate::analysis::between::{pooled_log_t, MIN_RUNS};
use crate::store::RunData;
use serde::Serialize;

/// The interval's level.
const ALPHA: f64 = 0.05;

/// One curve's property on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CurveCheck {
    /// The system.
    pub system: String,
    /// The sweep's axis.
    pub axis: String,
    /// Each baseline run's value, where its curve gave one.
    pub baseline: Vec<f64>,
    /// The candidate's value.
    pub candidate: f64,
    /// The candidate over the baselines' geometric mean.
    pub ratio: f64,
    /// The 95% prediction interval of that ratio.
    pub interval: (f64, f64),
    /// Whether the interval lies wholly beyond `max_regression` on the
    /// worse side.
    pub regressed: bool,
}

/// The gate's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShapeCheck {
    /// The property gated on (`n_star`).
    pub on: String,
    /// 0 good, 1 a regression, 125 cannot say.
    pub exit_code: i32,
    /// The largest move the worse way tolerated (0.05 = 5%).
    pub max_regression: f64,
    /// Every curve checked.
    pub curves: Vec<CurveCheck>,
    /// Why nothing could be said, when nothing was.
    pub cannot_say: Option<String>,
}

/// Each system's value of `property` in one run, with the sweep's axis.
fn values_of(run: &RunData, property: Property) -> Vec<(String, String, f64)> {
    let agg = aggregate(run);
    let axis = agg.layout.x_axis.clone().unwrap_or_default();
    (agg.fits.iter())
        .filter_map(|f| Some((f.system.clone(), axis.clone(), property.of(f)?)))
        .filter(|(_, _, v)| v.is_finite() && *v > 0.0)
        .collect()
}

/// Checks the candidate's curves against the baselines' on `property`.
pub fn check(
    baselines: &[RunData],
    candidate: &RunData,
    property: Property,
    max_regression: f64,
) -> ShapeCheck {
    let base: Vec<Vec<(String, String, f64)>> =
        baselines.iter().map(|b| values_of(b, property)).collect();
    let curves: Vec<CurveCheck> = values_of(candidate, property)
        .into_iter()
        .filter_map(|(system, axis, candidate)| {
            let baseline: Vec<f64> = (base.iter().flatten())
                .filter(|(s, _, _)| *s == system)
                .map(|(_, _, v)| *v)
                .collect();
            if baseline.len() < MIN_RUNS {
                return None;
            }
            let test = pooled_log_t(&baseline, &[candidate])?;
            let interval = test.ratio_ci(ALPHA)?;
            let regressed = match property.higher_is_better() {
                true => interval.1 < 1.0 - max_regression,
                false => interval.0 > 1.0 + max_regression,
            };
            Some(CurveCheck {
                system,
                axis,
                baseline,
                candidate,
                ratio: test.ratio,
                interval,
                regressed,
            })
        })
        .collect();
    let cannot_say = curves.is_empty().then(|| {
        format!(
            "no curve has {} in the candidate and in at least {MIN_RUNS} baseline runs (a \
             USL fit needs 6 levels and R² ≥ 0.9 for N*, σ and κ; a collapse needs one)",
            property.words()
        )
    });
    let exit_code = match (&cannot_say, curves.iter().any(|c| c.regressed)) {
        (Some(_), _) => CANNOT_SAY,
        (None, true) => REGRESSION,
        (None, false) => GOOD,
    };
    ShapeCheck {
        on: property.name().into(),
        exit_code,
        max_regression,
        curves,
        cannot_say,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_few_baseline_runs_cannot_say_and_name_the_rule() {
        let (run, _) = crate::judging::test_support::aggregate(&["nginx"]);
        let c = check(std::slice::from_ref(&run), &run, Property::Peak, 0.05);
        assert_eq!(c.exit_code, CANNOT_SAY);
        assert!(c.cannot_say.unwrap().contains("at least 3 baseline runs"));
    }
}
