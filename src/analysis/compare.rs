//! Comparisons against a baseline. (API fixed; bodies filled in by the stats work.)
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum Verdict {
    Faster,
    Slower,
    /// Not significant, or significant but under the noise threshold.
    NoDifference,
    /// Too few trials for the test to ever reach significance.
    NeedsMoreTrials {
        at_least: usize,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// median(candidate) / median(baseline)
    pub ratio: f64,
    /// 95% percentile-bootstrap CI of the ratio of medians.
    pub ratio_ci: Option<(f64, f64)>,
    /// Two-sided Mann-Whitney U p-value.
    pub p_value: Option<f64>,
    pub verdict: Verdict,
    /// "B is 12% faster (95% CI 9..15%)" / "no significant difference".
    pub sentence: String,
}

/// Compares candidate samples against baseline samples (higher is better).
/// `noise` is the relative difference below which no difference is claimed
/// (0.02 = 2%).
pub fn compare(_baseline: &[f64], _candidate: &[f64], _noise: f64) -> Comparison {
    unimplemented!("stats work")
}
