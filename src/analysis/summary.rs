//! Per-point summaries. (API fixed; bodies filled in by the stats work.)
use serde::{Deserialize, Serialize};

/// Which statistic a point's headline number is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Headline {
    #[default]
    Median,
    /// Best of N, as seed 003 does ("three runs, keep the highest").
    Best,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    pub stdev: f64,
    pub min: f64,
    pub max: f64,
    /// Distribution-free 95% CI of the median from order statistics; `None`
    /// when n is too small for any pair of order statistics to reach 95%.
    pub median_ci: Option<(f64, f64)>,
    /// Indices (into the input) flagged by the MAD modified z-score > 3.5.
    pub outliers: Vec<usize>,
    /// The headline value (median or best).
    pub headline: f64,
    /// Plain-words caveats ("1 trial: no spread", ...).
    pub notes: Vec<String>,
}

/// Summarises finite values; `None` for an empty slice.
pub fn summarize(_values: &[f64], _headline: Headline) -> Option<Summary> {
    unimplemented!("stats work")
}
