//! The stopping rule: does a sweep point need more trials?
//!
//! The runner interleaves the trials of the compared systems (A B A B) and
//! asks after each round; the rule decides for all systems of the point
//! together and keeps going while any system's median is too uncertain.
//!
//! In order:
//! 1. `max_trials` rounds are done -> stop (`max_trials`);
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
//! have. Failed trials count as rounds (towards `max_trials`) but give no
//! sample, so a failing system runs to `max_trials`.
use super::summary::{median_ci, median_of_sorted};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// When a sweep point has had enough trials (see the module doc for the order of the tests).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoppingRule {
    /// Rounds always run, unless the budget runs out first.
    pub min_trials: usize,
    /// Rounds after which the point stops whatever its CI.
    pub max_trials: usize,
    /// Target relative half-width of the 95% CI of the median (0.05 = 5%).
    pub target_rel_half_width: f64,
    /// Time allowed for the point (or whatever the runner budgets).
    pub budget: Option<Duration>,
}

impl Default for StoppingRule {
    fn default() -> Self {
        StoppingRule {
            min_trials: 3,
            max_trials: 10,
            target_rel_half_width: 0.05,
            budget: None,
        }
    }
}

/// Why the trials of a point stopped; stored with the point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every system's 95% CI of the median is within the target half-width.
    CiTargetMet,
    /// `max_trials` rounds ran.
    MaxTrials,
    /// The point's time budget ran out (possibly below `min_trials`).
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

/// What [`decide`] tells the runner after a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "decision", content = "reason")]
pub enum Decision {
    /// Run another round of trials.
    Continue,
    /// Stop this point, for the reason given.
    Stop(StopReason),
}

/// Decides for one point after `rounds` complete rounds (one trial per
/// system each, failed ones included). `samples` holds, per system, the
/// throughputs of its successful trials.
pub fn decide(
    rule: &StoppingRule,
    samples: &[Vec<f64>],
    rounds: usize,
    elapsed: Duration,
) -> Decision {
    if rounds >= rule.max_trials {
        return Decision::Stop(StopReason::MaxTrials);
    }
    if rule.budget.is_some_and(|b| elapsed >= b) {
        return Decision::Stop(StopReason::BudgetExhausted);
    }
    if samples.is_empty() || rounds < rule.min_trials {
        return Decision::Continue;
    }
    let all_met = samples
        .iter()
        .all(|values| relative_half_width(values).is_some_and(|w| w <= rule.target_rel_half_width));
    if all_met {
        Decision::Stop(StopReason::CiTargetMet)
    } else {
        Decision::Continue
    }
}

/// `(hi - lo) / 2 / median` of the 95% CI of the median; `None` without a
/// CI (fewer than 6 finite values) or a positive median.
pub fn relative_half_width(values: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let (lo, hi) = median_ci(&sorted)?;
    let median = median_of_sorted(&sorted);
    (median > 0.0).then(|| (hi - lo) / 2.0 / median)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(min: usize, max: usize) -> StoppingRule {
        StoppingRule {
            min_trials: min,
            max_trials: max,
            target_rel_half_width: 0.05,
            budget: None,
        }
    }

    const T0: Duration = Duration::ZERO;

    #[test]
    fn min_equals_max_three_stops_at_three() {
        let a = vec![100.0, 140.0];
        assert_eq!(
            decide(&rule(3, 3), &[a.clone(), a], 2, T0),
            Decision::Continue
        );
        let a = vec![100.0, 140.0, 90.0];
        assert_eq!(
            decide(&rule(3, 3), &[a.clone(), a], 3, T0),
            Decision::Stop(StopReason::MaxTrials)
        );
    }

    #[test]
    fn keeps_going_until_a_ci_exists() {
        // Five identical values: tight, but no 95% CI exists below n = 6.
        let five = vec![100.0; 5];
        assert_eq!(decide(&rule(3, 10), &[five], 5, T0), Decision::Continue);
        let six = vec![100.0, 101.0, 99.0, 100.0, 100.5, 99.5];
        assert_eq!(
            decide(&rule(3, 10), &[six], 6, T0),
            Decision::Stop(StopReason::CiTargetMet)
        );
    }

    #[test]
    fn continues_while_any_system_is_too_wide() {
        let tight = vec![100.0, 101.0, 99.0, 100.0, 100.5, 99.5];
        // n = 6: CI = [min, max] = [60, 140], half-width 40 / 100 = 40%.
        let wide = vec![100.0, 60.0, 140.0, 100.0, 95.0, 105.0];
        assert_eq!(relative_half_width(&wide), Some(0.4));
        assert_eq!(
            decide(&rule(3, 10), &[tight.clone(), wide], 6, T0),
            Decision::Continue
        );
        assert_eq!(
            decide(&rule(3, 10), &[tight.clone(), tight], 6, T0),
            Decision::Stop(StopReason::CiTargetMet)
        );
    }

    #[test]
    fn min_trials_is_a_floor() {
        assert_eq!(
            decide(&rule(8, 10), &[vec![100.0; 6]], 6, T0),
            Decision::Continue
        );
    }

    #[test]
    fn budget_stops_even_below_min() {
        let mut r = rule(5, 10);
        r.budget = Some(Duration::from_secs(60));
        let two = vec![1.0, 2.0];
        assert_eq!(
            decide(&r, std::slice::from_ref(&two), 2, Duration::from_secs(59)),
            Decision::Continue
        );
        assert_eq!(
            decide(&r, &[two], 2, Duration::from_secs(60)),
            Decision::Stop(StopReason::BudgetExhausted)
        );
    }

    #[test]
    fn failed_trials_count_as_rounds_but_give_no_sample() {
        // Six rounds, all failed: no samples, no CI, keep going.
        assert_eq!(relative_half_width(&[]), None);
        assert_eq!(decide(&rule(3, 10), &[vec![]], 6, T0), Decision::Continue);
        assert_eq!(
            decide(&rule(3, 10), &[vec![]], 10, T0),
            Decision::Stop(StopReason::MaxTrials)
        );
    }

    #[test]
    fn zero_median_never_meets_the_target() {
        assert_eq!(relative_half_width(&[0.0; 8]), None);
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
