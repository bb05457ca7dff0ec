//! The shape of a throughput curve. (API fixed; bodies filled in by the stats work.)
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum PastPeak {
    /// The peak is the last point: no evidence past it.
    StillRising,
    /// Within the noise of the peak.
    Plateau { drop: f64 },
    /// A drop, but well above single-client levels (seed 004: "an 8% drop").
    MildDecline { drop: f64 },
    /// Falls towards single-client levels (seed 004: Linux "asymptotes to
    /// essentially single-threaded levels").
    Collapse { drop: f64 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurveShape {
    pub peak_n: f64,
    pub peak_x: f64,
    /// (N, (X(N)/N) / (X(base)/base)): throughput per unit of concurrency
    /// normalised to the baseline N (seed 000's green curve).
    pub efficiency: Vec<(f64, f64)>,
    pub past_peak: PastPeak,
}

/// `points` are (N, X) sorted by N; `baseline_n` picks the efficiency base
/// (the nearest N present is used).
pub fn shape(_points: &[(f64, f64)], _baseline_n: f64) -> Option<CurveShape> {
    unimplemented!("stats work")
}
