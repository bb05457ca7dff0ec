//! The stopping rule: does a sweep point need more trials?
//!
//! The runner interleaves the trials of the compared systems (A B A B) and
//! asks after each round; the rule decides for all systems of the point
//! together and keeps going while any system's median is too uncertain.
//!
//! In order:
//! 1. every system has had `max_trials` trials -> stop (`max_trials`);
//! 2. the time budget is spent -> stop (`budget_exhausted`), even below
//!    `min_trials`: the budget is a hard limit;
//! 3. fewer than `min_trials` trials -> continue;
//! 4. every system's 95% CI of the median (order statistics, see
//!    [`super::summary::median_ci`]) has a relative half-width
//!    `(hi - lo) / 2 / median` at most `target` -> stop (`ci_target_met`);
//! 5. otherwise continue.
//!
//! With fewer than 6 successful trials there is no distribution-free 95% CI
//! of the median, so the target cannot be met and the rule keeps going
//! until the CI exists or `max_trials` is reached. With `min = max = 3` it
//! therefore stops at 3 with `max_trials`, never claiming a CI it does not
//! have. Failed trials (no value) count towards `max_trials` but give no
//! sample, so a failing system runs to `max_trials`.
use super::summary::{median_ci, median_of_sorted};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoppingRule {
    pub min_trials: u32,
    pub max_trials: u32,
    /// Target relative half-width of the 95% CI of the median (0.05 = 5%).
    pub target_half_width: f64,
    /// Time allowed for the point (or whatever the runner budgets).
    pub budget: Option<Duration>,
}

impl Default for StoppingRule {
    fn default() -> Self {
        StoppingRule {
            min_trials: 3,
            max_trials: 10,
            target_half_width: 0.05,
            budget: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    CiTargetMet,
    MaxTrials,
    BudgetExhausted,
}

impl StopReason {
    /// `ci_target_met`, `max_trials` or `budget_exhausted`, for the store.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::CiTargetMet => "ci_target_met",
            StopReason::MaxTrials => "max_trials",
            StopReason::BudgetExhausted => "budget_exhausted",
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "decision", content = "reason")]
pub enum Decision {
    Continue,
    Stop(StopReason),
}

/// Decides for one point. `systems` holds, per system, one entry per trial
/// so far: its throughput, or `None` for a failed trial.
pub fn decide(systems: &[&[Option<f64>]], rule: &StoppingRule, elapsed: Duration) -> Decision {
    let fewest = systems.iter().map(|s| s.len()).min().unwrap_or(0);
    if !systems.is_empty() && fewest >= rule.max_trials as usize {
        return Decision::Stop(StopReason::MaxTrials);
    }
    if rule.budget.is_some_and(|b| elapsed >= b) {
        return Decision::Stop(StopReason::BudgetExhausted);
    }
    if systems.is_empty() || fewest < rule.min_trials as usize {
        return Decision::Continue;
    }
    let all_met = systems
        .iter()
        .all(|trials| relative_half_width(trials).is_some_and(|w| w <= rule.target_half_width));
    if all_met {
        Decision::Stop(StopReason::CiTargetMet)
    } else {
        Decision::Continue
    }
}

/// `(hi - lo) / 2 / median` of the 95% CI of the median of the successful
/// trials; `None` without a CI (fewer than 6 values) or a positive median.
pub fn relative_half_width(trials: &[Option<f64>]) -> Option<f64> {
    let mut values: Vec<f64> = trials
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    values.sort_by(f64::total_cmp);
    let (lo, hi) = median_ci(&values)?;
    let median = median_of_sorted(&values);
    (median > 0.0).then(|| (hi - lo) / 2.0 / median)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(min: u32, max: u32) -> StoppingRule {
        StoppingRule {
            min_trials: min,
            max_trials: max,
            target_half_width: 0.05,
            budget: None,
        }
    }

    fn ok(values: &[f64]) -> Vec<Option<f64>> {
        values.iter().map(|&v| Some(v)).collect()
    }

    const T0: Duration = Duration::ZERO;

    #[test]
    fn min_equals_max_three_stops_at_three() {
        let a = ok(&[100.0, 140.0]);
        assert_eq!(decide(&[&a, &a], &rule(3, 3), T0), Decision::Continue);
        let a = ok(&[100.0, 140.0, 90.0]);
        assert_eq!(
            decide(&[&a, &a], &rule(3, 3), T0),
            Decision::Stop(StopReason::MaxTrials)
        );
    }

    #[test]
    fn keeps_going_until_a_ci_exists() {
        // Five identical values: tight, but no 95% CI exists below n = 6.
        let five = ok(&[100.0; 5]);
        assert_eq!(decide(&[&five], &rule(3, 10), T0), Decision::Continue);
        let six = ok(&[100.0, 101.0, 99.0, 100.0, 100.5, 99.5]);
        assert_eq!(
            decide(&[&six], &rule(3, 10), T0),
            Decision::Stop(StopReason::CiTargetMet)
        );
    }

    #[test]
    fn continues_while_any_system_is_too_wide() {
        let tight = ok(&[100.0, 101.0, 99.0, 100.0, 100.5, 99.5]);
        // n = 6: CI = [min, max] = [60, 140], half-width 40 / 100 = 40%.
        let wide = ok(&[100.0, 60.0, 140.0, 100.0, 95.0, 105.0]);
        assert_eq!(relative_half_width(&wide), Some(0.4));
        assert_eq!(
            decide(&[&tight, &wide], &rule(3, 10), T0),
            Decision::Continue
        );
        assert_eq!(
            decide(&[&tight, &tight], &rule(3, 10), T0),
            Decision::Stop(StopReason::CiTargetMet)
        );
    }

    #[test]
    fn min_trials_is_a_floor() {
        let six = ok(&[100.0; 6]);
        assert_eq!(decide(&[&six], &rule(8, 10), T0), Decision::Continue);
    }

    #[test]
    fn budget_stops_even_below_min() {
        let mut r = rule(5, 10);
        r.budget = Some(Duration::from_secs(60));
        let two = ok(&[1.0, 2.0]);
        assert_eq!(
            decide(&[&two], &r, Duration::from_secs(59)),
            Decision::Continue
        );
        assert_eq!(
            decide(&[&two], &r, Duration::from_secs(60)),
            Decision::Stop(StopReason::BudgetExhausted)
        );
    }

    #[test]
    fn failed_trials_count_towards_max_but_give_no_sample() {
        let failing = vec![None; 6];
        assert_eq!(relative_half_width(&failing), None);
        assert_eq!(decide(&[&failing], &rule(3, 10), T0), Decision::Continue);
        let ten = vec![None; 10];
        assert_eq!(
            decide(&[&ten], &rule(3, 10), T0),
            Decision::Stop(StopReason::MaxTrials)
        );
    }

    #[test]
    fn zero_median_never_meets_the_target() {
        assert_eq!(relative_half_width(&ok(&[0.0; 8])), None);
    }

    #[test]
    fn reasons_read_as_stored_strings() {
        assert_eq!(StopReason::CiTargetMet.as_str(), "ci_target_met");
        assert_eq!(StopReason::MaxTrials.to_string(), "max_trials");
        assert_eq!(
            serde_json::to_string(&StopReason::BudgetExhausted).unwrap(),
            "\"budget_exhausted\""
        );
    }
}
